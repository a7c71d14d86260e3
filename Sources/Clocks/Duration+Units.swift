/// The one place a `Duration` becomes a number of seconds, milliseconds or nanoseconds.
extension Duration {
    /// The duration in seconds, as a `Double` (a metric's value, a JWT time's leeway, a TTL).
    public var seconds: Double {
        // Under ~9.2 s (a request, most fetches) from the attoseconds whole: `components` divides them by 10¹⁸ (a call
        // and a 128-bit division), and `Double(Int128)` takes a generic path; together ~400 instructions.
        let attoseconds = attoseconds
        let small = Int64(truncatingIfNeeded: attoseconds)
        if Int128(small) == attoseconds { return Double(small) / 1e18 }
        return Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in milliseconds, as a `Double` (a log line's `durationMs`).
    public var milliseconds: Double {
        seconds * 1000
    }

    /// Whole seconds, rounded toward zero (an uptime).
    public var wholeSeconds: Int64 { components.seconds }

    /// Whole seconds, rounded up (a positive duration stays positive): a `Retry-After`, a timeout in seconds.
    public var wholeSecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        return seconds + (attoseconds > 0 ? 1 : 0)
    }

    /// Whole milliseconds, rounded toward zero; `nil` when they do not fit an `Int64`.
    public var wholeMilliseconds: Int64? {
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? nil : milliseconds + attoseconds / 1_000_000_000_000_000
    }

    /// Whole milliseconds, rounded up (a positive duration stays positive), at least 0.
    public var wholeMillisecondsRoundedUp: UInt64 {
        guard self > .zero else { return 0 }  // a negative part under a second has negative attoseconds
        let (seconds, attoseconds) = components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let fraction = UInt64(attoseconds / perMillisecond) + (attoseconds % perMillisecond > 0 ? 1 : 0)
        return UInt64(seconds).multipliedReportingOverflow(by: 1000).partialValue + fraction
    }

    /// Whole seconds and the microseconds beyond them, both rounded toward zero (a socket's `timeval`).
    public var secondsAndMicroseconds: (seconds: Int64, microseconds: Int64) {
        let (seconds, attoseconds) = components
        return (seconds, attoseconds / 1_000_000_000_000)
    }

    /// Whole nanoseconds, rounded toward zero; `Int64.max` when a duration's seconds do not fit (an HTTP client's
    /// time-out).
    public var wholeNanosecondsSaturating: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : whole &+ attoseconds / 1_000_000_000
    }
}
