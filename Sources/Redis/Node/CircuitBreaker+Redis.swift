import Breaker

extension CircuitBreaker.Configuration {
    /// CONTRACT §6.5: three failed commands in a row stop the instance asking Redis for 100 ms, doubling up to 5 s,
    /// so that a dead Redis adds at most a couple of milliseconds to a request.
    public static let redis = CircuitBreaker.Configuration(
        threshold: 3, initialBackoff: .milliseconds(100), maximumBackoff: .seconds(5))
}
