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
            job.context.complete(ServerProblems.shuttingDown)
            pending.release(job.context)
        }
    }

    /// Runs one job. If the deadline watcher answered 504 first, the late response is dropped.
    func execute(_ job: Job) async {
        job.context.complete(await job.work())
        pending.release(job.context)
    }

    /// Answers every request still unanswered at its deadline with 504, until cancelled.
    /// The handler is not cancelled (its result is discarded); shutdown cancels all handlers.
    func watchDeadlines() async {
        let tick = min(Duration.milliseconds(100), configuration.requestTimeout / 4)
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: tick)
            } catch {
                return
            }
            for context in pending.overdue(at: .now) where context.complete(ServerProblems.timedOut) {
                logger.debug("request timed out", metadata: ["target": "\(context.target)"])
            }
        }
    }
}
