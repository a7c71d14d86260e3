import Testing
@testable import HTTPRouting

@Test func moduleLinks() { #expect(Bool(true)) }
