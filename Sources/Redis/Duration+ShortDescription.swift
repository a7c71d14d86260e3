extension Duration {
    /// "50 ms", "1.5 s": for messages.
    var shortDescription: String {
        let (seconds, attoseconds) = components
        let totalMilliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if totalMilliseconds < 1000 { return "\(totalMilliseconds) ms" }
        if totalMilliseconds % 1000 == 0 { return "\(totalMilliseconds / 1000) s" }
        return "\(Double(totalMilliseconds) / 1000) s"
    }
}
