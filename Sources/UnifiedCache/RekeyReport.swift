/// What a rekey did (CONTRACT §9.3): entries re-sealed under the primary key, entries already under it, and
/// entries that did not open (or did not verify) and were deleted.
public struct RekeyReport: Sendable, Equatable {
    public var rekeyed: Int
    public var current: Int
    public var undecryptable: Int

    public init(rekeyed: Int = 0, current: Int = 0, undecryptable: Int = 0) {
        self.rekeyed = rekeyed
        self.current = current
        self.undecryptable = undecryptable
    }

    public static func + (a: RekeyReport, b: RekeyReport) -> RekeyReport {
        RekeyReport(rekeyed: a.rekeyed + b.rekeyed, current: a.current + b.current, undecryptable: a.undecryptable + b.undecryptable)
    }
}
