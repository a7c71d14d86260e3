import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif
import HTTPRouting

/// The C callbacks MHD calls on its polling thread. Nonisolated on purpose (a closure in main.swift
/// would be MainActor-isolated and trap). `cls` is the unretained `ServerCore`.
enum MHDCallbacks {
    /// MHD_OPTION_URI_LOG_CALLBACK: creates the request's context with the raw target; MHD stores it as con_cls.
    static func requestStarted(_ cls: UnsafeMutableRawPointer?, _ uri: UnsafePointer<CChar>?, _ connection: OpaquePointer?) -> UnsafeMutableRawPointer? {
        guard let cls, let connection else { return nil }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        core.openRequests.opened()
        let context: RequestContext
        if let uri {
            let length = strlen(uri)
            context = RequestContext(
                target: String(arrivedBytes: UnsafeRawBufferPointer(start: uri, count: length)),
                targetEnd: Int(bitPattern: uri) + length, connection: connection)
        } else {
            context = RequestContext(target: "/", connection: connection)
        }
        return Unmanaged.passRetained(context).toOpaque()
    }

    /// MHD_OPTION_NOTIFY_COMPLETED: gives back the response copy the answer was lent and releases the context
    /// retained in `requestStarted`.
    static func requestCompleted(_ cls: UnsafeMutableRawPointer?, _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let cls, let conCls, let raw = conCls.pointee else { return }
        conCls.pointee = nil
        let context = Unmanaged<RequestContext>.fromOpaque(raw)
        // MHD no longer reads the answer's response (it drops its reference next): its copy may serve the next one.
        context.takeUnretainedValue().returnLentResponse()
        context.release()
        Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().openRequests.closed()
    }

    /// The access handler: called after the headers, per body chunk, at the end, and again after a resume.
    static func access(
        _ cls: UnsafeMutableRawPointer?,
        _ method: UnsafePointer<CChar>?,
        _ version: UnsafePointer<CChar>?,
        _ uploadData: UnsafePointer<CChar>?,
        _ uploadDataSize: UnsafeMutablePointer<Int>?,
        _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> MHD_Result {
        guard let cls, let uploadDataSize, let conCls, let raw = conCls.pointee else { return .NO }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        switch context.phase {
        case .headers:
            return headersArrived(context, version: version, core: core)
        case .body:
            let size = uploadDataSize.pointee
            if size > 0 {
                if let uploadData, !context.bodyTooLarge {
                    if context.body.count + size > core.configuration.maxBodyBytes {
                        context.bodyTooLarge = true
                        context.body = []
                    } else {
                        context.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
                    }
                }
                uploadDataSize.pointee = 0
                return .YES
            }
            return requestComplete(context, method: method, core: core)
        case .suspended:
            guard let response = context.takeResponse() else { return .NO }
            return answer(context, with: response, core: core)
        case .answered:
            return .NO
        }
    }

    /// First call: reject bad framing and oversized bodies before reading the body (queueing here closes).
    private static func headersArrived(
        _ context: RequestContext, version: UnsafePointer<CChar>?, core: ServerCore
    ) -> MHD_Result {
        let arrived = MHDConnection.headers(of: context.connection)
        context.headers = arrived.headers
        context.requestID = core.requestIDs?.id(given: arrived.requestID)
        context.phase = .body
        let isHTTP11 = version.map { strcmp($0, "HTTP/1.1") == 0 } ?? false
        if let problem = RequestFraming.problem(
            for: arrived, isHTTP11: isHTTP11, maxBodyBytes: core.configuration.maxBodyBytes)
            ?? RequestFraming.problem(targetEnd: context.targetEnd, version: version) {
            core.logger.debug(
                "rejected before the body",
                metadata: context.logMetadata(["status": "\(problem.status)", "detail": "\(problem.detail)"]))
            return answer(context, with: problem.response, core: core)
        }
        return .YES
    }

    /// Final call (upload_data_size == 0): the responder's answer, now or later.
    private static func requestComplete(_ context: RequestContext, method: UnsafePointer<CChar>?, core: ServerCore) -> MHD_Result {
        if context.bodyTooLarge {
            return answer(context, with: Problem.contentTooLarge(limit: core.configuration.maxBodyBytes).response, core: core)
        }
        let body = context.body
        context.body = []
        let answer = core.answer(
            method.map(HTTPMethod.init(cString:)) ?? .get, context.target, context.headers, body,
            MHDConnection.clientAddress(of: context.connection), context.requestID)
        switch answer {
        case .now(let response):
            return self.answer(context, with: response, core: core)
        case .later(let later):
            return suspend(context, later, core: core)
        }
    }

    /// Suspends the request and starts `later` (`ServerCore.enqueue`), or answers 503 when the queue is full or
    /// closed.
    private static func suspend(_ context: RequestContext, _ later: Later, core: ServerCore) -> MHD_Result {
        context.answered = later.answered
        let refusal: Response
        switch core.enqueue(context, later) {
        case .admitted:
            return .YES
        case .full:
            core.logger.debug("async queue full", metadata: context.logMetadata())
            refusal = ServerProblems.queueFull
        case .closed:
            refusal = ServerProblems.shuttingDown
        }
        later.answered?(refusal)
        return answer(context, with: refusal, core: core)
    }

    private static func answer(_ context: RequestContext, with response: Response, core: ServerCore) -> MHD_Result {
        context.phase = .answered
        return MHDConnection.queue(response, for: context, close: core.draining.load(ordering: .relaxed))
    }

    /// The shim's messages (refused and closed connections) and MHD's (MHD_OPTION_EXTERNAL_LOGGER, prefixed
    /// "libmicrohttpd: "), formatted by the shim.
    static func log(_ cls: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {
        guard let cls, let message else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        core.logger.debug("\(String(cString: message))")
    }
}
