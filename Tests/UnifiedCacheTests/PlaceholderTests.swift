import Testing
@testable import UnifiedCache

@Test func moduleLinks() { #expect(Bool(true)) }
