import Testing
@testable import DiskTier

@Test func moduleLinks() { #expect(Bool(true)) }
