import HTTPRouting
import Logging

extension ServerCore {
    /// Answers 504 to every request unanswered at `now` whose deadline has passed (the `DeadlineWatcher`'s step).
    func answerOverdue(at now: Duration) {
        Self.answerOverdue(pending, at: now, logger: logger)
    }

    /// The same for `pending`'s requests, logged to `logger`: the step the watcher runs, which holds no reference to
    /// the core that holds it.
    static func answerOverdue(_ pending: PendingJobs, at now: Duration, logger: Logger) {
        for context in pending.overdue(at: now) where context.complete(ServerProblems.timedOut) {
            logger.debug("request timed out", metadata: context.logMetadata())
        }
    }
}
