import Testing
@testable import MicroHTTPServer

@Test func moduleLinks() { #expect(Bool(true)) }
