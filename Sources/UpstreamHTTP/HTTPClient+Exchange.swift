import AsyncHTTPClient
import Clocks
import NIOCore

extension HTTPClient {
    /// Sends `request` and reads its answer with `read`, the whole exchange within `timeout`. AsyncHTTPClient's own
    /// deadline ends when the answer's head arrives, and its read timeout is between two reads: an upstream sending
    /// its body a byte at a time held a fetch (and its slot under the cap) for as long as it liked. Past the deadline
    /// the reading is cancelled, which closes the connection, and `HTTPClientError.deadlineExceeded` is thrown.
    func exchange<Result: Sendable>(
        _ request: HTTPClientRequest, within timeout: Duration,
        reading read: @escaping @Sendable (HTTPClientResponse) async throws -> Result
    ) async throws -> Result {
        let deadline = NIODeadline.now() + .nanoseconds(timeout.wholeNanosecondsSaturating)
        let response = try await execute(request, deadline: deadline)
        let loop = eventLoopGroup.any()
        return try await withThrowingTaskGroup(of: Result.self) { group in
            group.addTask { try await read(response) }
            group.addTask {
                let timer = loop.scheduleTask(deadline: deadline) {}
                try await withTaskCancellationHandler {
                    try await timer.futureResult.get()
                } onCancel: {
                    timer.cancel()
                }
                throw HTTPClientError.deadlineExceeded
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw HTTPClientError.deadlineExceeded }
            return first
        }
    }
}
