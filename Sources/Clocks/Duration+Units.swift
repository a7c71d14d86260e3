/// The one place a `Duration` becomes a number of seconds or milliseconds.
extension Duration {
    /// The duration in seconds, as a `Double` (a metric's value, a JWT time's leeway).
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole seconds, rounded up (a positive duration stays positive): a `Retry-After`, a timeout in seconds.
    public var wholeSecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        return seconds + (attoseconds > 0 ? 1 : 0)
    }

    /// Whole milliseconds, rounded up (a positive duration stays positive), at least 0.
    public var wholeMillisecondsRoundedUp: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let fraction = UInt64(attoseconds / perMillisecond) + (attoseconds % perMillisecond > 0 ? 1 : 0)
        return UInt64(seconds).multipliedReportingOverflow(by: 1000).partialValue + fraction
    }
}
