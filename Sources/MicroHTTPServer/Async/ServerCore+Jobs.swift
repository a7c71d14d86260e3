import HTTPRouting

extension ServerCore {
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
                logger.debug("request timed out", metadata: context.logMetadata())
            }
        }
    }
}
