import Synchronization

/// What a server keeps of one reusable response (`Response.reusable()`): the form it prepares of it once (its own
/// type: for libmicrohttpd, a ready MHD response), kept with the response for as long as any copy of the response
/// lives, so that sending the same answer again rebuilds nothing. The form is made at the second send: an answer
/// sent once (one disk hit) is built once, like any other. Set once; then every thread reads it without a lock.
public final class ResponseMemo: Sendable {
    /// Sends before the form was made (only counted until then).
    private let sends = Atomic<Int>(0)
    /// The form's address (0 until made), retained by the memo, set once. An address, not a pointer: a pointer is not
    /// `Sendable`.
    private let form = Atomic<UInt>(0)

    init() {}

    deinit {
        if let form = UnsafeRawPointer(bitPattern: form.load(ordering: .acquiring)) {
            Unmanaged<AnyObject>.fromOpaque(form).release()
        }
    }

    /// The form to send this response with: nil at its first send (the caller builds the answer as usual), else the
    /// one made before or now by `make` (two threads making it at once keep the first one made). One server type per
    /// memo: the form is read back as the `Form` that made it.
    public func form<Form: AnyObject & Sendable>(_ make: () -> Form?) -> Form? {
        if let made = current(as: Form.self) { return made }
        guard sends.wrappingAdd(1, ordering: .relaxed).oldValue > 0, let made = make() else { return nil }
        let retained = Unmanaged.passRetained(made)
        let address = UInt(bitPattern: retained.toOpaque())
        let (stored, winner) = form.compareExchange(expected: 0, desired: address, ordering: .acquiringAndReleasing)
        if stored { return made }
        retained.release()
        return Self.object(at: winner)
    }

    /// The form made so far, if any.
    package func current<Form: AnyObject & Sendable>(as _: Form.Type) -> Form? {
        Self.object(at: form.load(ordering: .acquiring))
    }

    private static func object<Form: AnyObject>(at address: UInt) -> Form? {
        UnsafeRawPointer(bitPattern: address).map { Unmanaged<Form>.fromOpaque($0).takeUnretainedValue() }
    }
}
