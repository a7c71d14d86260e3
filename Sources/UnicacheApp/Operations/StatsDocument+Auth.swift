import Access

extension StatsDocument {
    /// `auth.*` (CONTRACT §8.8): the mode, requests let in, denials by reason, and the keys held.
    struct Auth: Encodable {
        var mode: String
        var allowed: Int
        var denied: [String: Int]
        var keys, keyRefreshes, keyErrors: Int

        /// `nil`: no access control was built (in-process tests): protected mode with nothing counted.
        init(_ snapshot: AccessSnapshot?) {
            mode = (snapshot?.mode ?? .protected).rawValue
            allowed = snapshot?.allowed ?? 0
            denied = Dictionary(uniqueKeysWithValues: DenialReason.allCases.map {
                ($0.rawValue, snapshot?.denied[$0] ?? 0)
            })
            keys = snapshot?.keys ?? 0
            keyRefreshes = snapshot?.keyRefreshes ?? 0
            keyErrors = snapshot?.keyErrors ?? 0
        }
    }
}
