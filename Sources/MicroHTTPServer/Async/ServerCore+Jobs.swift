import HTTPRouting

extension ServerCore {
    /// Answers 504 to every request unanswered at `now` whose deadline has passed (the `DeadlineWatcher`'s step).
    func answerOverdue(at now: Duration) {
        for context in pending.overdue(at: now) where context.complete(ServerProblems.timedOut) {
            logger.debug("request timed out", metadata: context.logMetadata())
        }
    }
}
