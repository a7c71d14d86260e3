/// A request value outside the contract's patterns or ranges; becomes a 400 problem.
struct InputError: Error, Sendable, Equatable {
    /// The parameter's name as the client wrote it (`user`, `days`, `tz`, …).
    var parameter: String
    /// What is accepted, in words.
    var expected: String

    var detail: String { "\(parameter) must be \(expected)" }
}
