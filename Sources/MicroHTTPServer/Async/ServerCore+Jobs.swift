import HTTPRouting

extension ServerCore {
    /// Runs every queued job as a child task until the job stream ends (shutdown), then waits for them.
    func serveJobs() async {
        await withDiscardingTaskGroup { group in
            for await job in jobs {
                group.addTask { await self.execute(job) }
            }
        }
    }

    /// Answers queued jobs that never ran (stream finished with jobs buffered, or run() cancelled).
    func failLeftoverJobs() async {
        for await job in jobs {
            job.context.complete(ServerProblems.shuttingDown.response)
            releasePendingSlot()
        }
    }

    /// Runs one job against its deadline; the connection is resumed exactly once, at the deadline at the latest.
    func execute(_ job: Job) async {
        defer { releasePendingSlot() }
        let timeout = configuration.requestTimeout
        await withTaskGroup(of: Response?.self) { group in
            group.addTask { await job.work() }
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                } catch {
                    return nil
                }
                return ServerProblems.timedOut.response
            }
            while let result = await group.next() {
                if let response = result {
                    job.context.complete(response)
                    group.cancelAll()
                    break
                }
            }
        }
        // Both children ended without an answer (cancelled by shutdown).
        job.context.complete(ServerProblems.shuttingDown.response)
    }
}
