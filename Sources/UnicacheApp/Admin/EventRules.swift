/// Which namespaces an event of a user invalidates (CONTRACT §4).
enum EventRules {
    static let rules: [String: Set<String>] = [
        "question.answered": ["subscription", "progress.history", "progress.streak", "progress.today", "progress.any"],
        "subscription.purchased": ["subscription"],
        "subscription.updated": ["subscription"],
        "trial.started": ["subscription"],
        "activity.created": ["activities"],
        "health.synced": ["health.today", "health.metrics"],
    ]

    static var knownTypes: [String] { rules.keys.sorted() }

    static func namespaces(for type: String) -> Set<String>? { rules[type] }
}
