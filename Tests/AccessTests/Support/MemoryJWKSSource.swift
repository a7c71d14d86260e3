import Access
import AccessTestSupport
import NIOConcurrencyHelpers

/// A JWKS held in memory, as a file or a URL would serve it, counting reads; `failing` makes reads fail.
final class MemoryJWKSSource: JWKSSource {
    private struct State {
        var document: [UInt8]
        var reads = 0
        var failing = false
    }

    let isRemote: Bool
    private let state: NIOLockedValueBox<State>

    init(_ document: [UInt8], remote: Bool = true) {
        self.isRemote = remote
        self.state = NIOLockedValueBox(State(document: document))
    }

    var reads: Int { state.withLockedValue { $0.reads } }

    func set(_ document: [UInt8]) { state.withLockedValue { $0.document = document } }

    func fail(_ failing: Bool) { state.withLockedValue { $0.failing = failing } }

    func read() async throws(KeySetError) -> [UInt8]? {
        let (document, failing) = state.withLockedValue { state in
            state.reads += 1
            return (state.document, state.failing)
        }
        if failing { throw KeySetError("unreachable (test)") }
        return document
    }
}
