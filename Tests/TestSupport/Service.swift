/// Something a test starts and must stop however the test ends (a live server, a fleet, a redis-server, a group of
/// them); `stop()` may be called more than once, and only the first call does anything.
public protocol StoppableService: Sendable {
    func stop() async
}

/// Runs `body` with `service` and stops the service afterwards, whether `body` returns or throws: a test that
/// throws before its own `stop()` must not leave a server or child process running, nor an `HTTPClient` never shut
/// down (whose deinit kills the whole test process). Write `try await withService(LiveService.start()) { live in … }`.
public func withService<Service: StoppableService, Value>(
    _ service: Service, isolation: isolated (any Actor)? = #isolation, _ body: (Service) async throws -> Value
) async throws -> Value {
    let value: Value
    do {
        value = try await body(service)
    } catch {
        await service.stop()
        throw error
    }
    await service.stop()
    return value
}
