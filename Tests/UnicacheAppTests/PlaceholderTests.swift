import Testing
@testable import UnicacheApp

@Test func moduleLinks() { #expect(Bool(true)) }
