import NIOConcurrencyHelpers
import CMicroHTTPD
import CMicroHTTPDShim
import HTTPRouting
import ServiceLifecycle

extension MicroHTTPServer {
    /// Serves until graceful shutdown (or cancellation), then drains and stops the daemon.
    /// Starts the server first if `start()` was not called.
    public func run() async throws {
        try start()
        let shutdownTimeout = core.configuration.shutdownTimeout
        // Until graceful shutdown; throws when the task is cancelled, which drains the same way.
        try? await gracefulShutdown()
        beginDraining()
        // Either every async request finished, or the drain deadline passed.
        await withTaskGroup(of: Void.self) { drain in
            drain.addTask { await self.core.pending.waitUntilEmpty() }
            drain.addTask { try? await self.core.elapsed.sleep(for: shutdownTimeout) }
            _ = await drain.next()
            drain.cancelAll()
        }
        await core.deadlines.stop()
        // Past the deadline: answer what is left 503 (resuming its connection) and cancel its handler; a late
        // answer is dropped, so nothing touches a connection after the daemon stops.
        for context in core.pending.cancelAll() where context.complete(ServerProblems.shuttingDown) {
            core.logger.debug("answered at shutdown", metadata: context.logMetadata())
        }
        // Every suspended connection is resumed now; let MHD send those answers before stopping.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.core.openRequests.waitUntilNoneOpen() }
            group.addTask { try? await self.core.elapsed.sleep(for: .seconds(1)) }
            _ = await group.next()
            group.cancelAll()
        }
        stopDaemon()
    }

    /// Stops accepting connections and admits no new async work (new async requests get 503).
    func beginDraining() {
        guard !core.draining.exchange(true, ordering: .relaxed) else { return }
        phase.withLockedValue { phase in
            if case .listening(let daemon, _) = phase {
                unicache_mhd_stop_accepting(daemon.pointer)
                phase = .draining(daemon)
            }
        }
        core.pending.close()
        core.logger.info("draining: stopped accepting connections", metadata: [
            "pendingRequests": "\(core.pending.count)",
        ])
    }

    private func stopDaemon() {
        phase.withLockedValue { phase in
            switch phase {
            case .listening(let daemon, _), .draining(let daemon):
                unicache_mhd_stop(daemon.pointer)
            case .idle, .stopped:
                break
            }
            phase = .stopped
        }
        core.logger.info("stopped")
    }
}
