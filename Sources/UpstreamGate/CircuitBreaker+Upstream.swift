import Breaker

extension CircuitBreaker.Configuration {
    /// CONTRACT §7.3: five consecutive failures open a domain's circuit; the back-off starts at 1 s and doubles up
    /// to 30 s, stretched by up to a fifth.
    public static let upstream = CircuitBreaker.Configuration(
        threshold: 5, initialBackoff: .seconds(1), maximumBackoff: .seconds(30), jitter: 0.2)
}
