import UnifiedCache

/// A seeded generator (SplitMix64) so every history can be replayed from its seed: the core's, which seeds its
/// policies' random admissions the same way.
public typealias SplitMix64 = PolicyRandom
