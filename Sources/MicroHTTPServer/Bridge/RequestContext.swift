import CMicroHTTPD
import HTTPRouting
import Logging
import Synchronization

/// The state of one request, passed to MHD through `con_cls` (retained from the URI log callback until
/// MHD_OPTION_NOTIFY_COMPLETED releases it).
///
/// `@unchecked Sendable`: the `var`s are touched only on the connection's MHD polling thread (MHD keeps a
/// connection on one thread; `deadline` and `answered` are set there before the context is published under
/// PendingJobs' lock, then only read), but `pendingPlace`, touched only under PendingJobs' lock; `outcome` is
/// guarded by a lock.
final class RequestContext: @unchecked Sendable {
    enum Phase {
        /// First access-handler call (headers only) not seen yet.
        case headers
        /// Headers checked; body chunks or the final call come next.
        case body
        /// Suspended, waiting for async work to store a response and resume.
        case suspended
        /// A response was queued.
        case answered
    }

    private enum Outcome {
        case waiting
        case ready(Response)
        case taken
    }

    let target: String
    /// Where the raw target's text ended in libmicrohttpd's read buffer, as an address (never read through): the
    /// request line's version follows it by one byte unless the target held a NUL byte (`headersArrived`).
    let targetEnd: Int
    /// The MHD connection; valid while the request lives (a suspended connection is never closed).
    let connection: OpaquePointer
    var phase = Phase.headers
    var headers = HTTPHeaders()
    /// Set with the headers when the server gives requests ids; echoed on the answer.
    var requestID: RequestID?
    var body: [UInt8] = []
    var bodyTooLarge = false
    /// When async handling must have answered; set before the job is queued, then only read.
    var deadline: Duration?
    /// Told the response that won (`complete`'s first call); set before the job is queued, then only read.
    var answered: (@Sendable (Response) -> Void)?
    /// The prepared response's copy the answer was queued with, until MHD reports the request complete.
    var lent: LentResponse?
    /// Where `PendingJobs` keeps the request while it holds a slot (read and written under its lock only).
    var pendingPlace: Int?
    private let outcome = Mutex(Outcome.waiting)

    init(target: String, targetEnd: Int = 0, connection: OpaquePointer) {
        self.target = target
        self.targetEnd = targetEnd
        self.connection = connection
    }

    /// Stores the response of a suspended request and resumes it. Only the first call wins.
    @discardableResult
    func complete(_ response: Response) -> Bool {
        let won = outcome.withLock(announcingTo: self) { outcome in
            guard case .waiting = outcome else { return false }
            outcome = .ready(response)
            return true
        }
        if won {
            MHD_resume_connection(connection)
            answered?(response)
        }
        return won
    }

    /// On the MHD thread at completion: gives the lent copy back to its prepared response, once.
    func returnLentResponse() {
        lent?.giveBack()
        lent = nil
    }

    /// No response stored yet.
    var isWaiting: Bool {
        outcome.withLock(announcingTo: self) { outcome in
            if case .waiting = outcome { return true }
            return false
        }
    }

    /// On the MHD thread after resume: the stored response, once.
    func takeResponse() -> Response? {
        outcome.withLock(announcingTo: self) { outcome in
            guard case .ready(let response) = outcome else { return nil }
            outcome = .taken
            return response
        }
    }
}

extension RequestContext {
    /// What the server's own log lines say about this request: its target and, when it has one, its id.
    func logMetadata(_ more: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = more
        metadata["target"] = "\(target)"
        if let requestID { metadata["requestId"] = "\(requestID.value)" }
        return metadata
    }
}
