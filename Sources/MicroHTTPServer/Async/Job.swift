import HTTPRouting

/// A suspended request and the async work that answers it.
struct Job: Sendable {
    let context: RequestContext
    let work: @Sendable () async -> Response
}
