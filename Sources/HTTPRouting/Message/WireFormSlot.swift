import Synchronization

/// Holds a server's prepared form of a reusable `Response` (see `Response.reusable()`), so that copies of
/// the response sent on any thread share one prepared form. The first form installed wins; it is released
/// with the slot.
public final class WireFormSlot: Sendable {
    /// The bit pattern of a retained `AnyObject` (the server's type), or 0. An atomic: ThreadSanitizer sees it.
    private let stored = Atomic<UInt>(0)

    init() {}

    deinit {
        if let pointer = UnsafeMutableRawPointer(bitPattern: stored.load(ordering: .acquiring)) {
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
    }

    /// The installed form, if any.
    public var form: AnyObject? {
        UnsafeMutableRawPointer(bitPattern: stored.load(ordering: .acquiring))
            .map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Installs `form` unless another is installed already; returns the one in the slot.
    public func install(_ form: AnyObject) -> AnyObject {
        let pointer = Unmanaged.passRetained(form).toOpaque()
        let (exchanged, current) = stored.compareExchange(
            expected: 0, desired: UInt(bitPattern: pointer),
            successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        guard !exchanged, let existing = UnsafeMutableRawPointer(bitPattern: current) else { return form }
        Unmanaged<AnyObject>.fromOpaque(pointer).release()
        return Unmanaged<AnyObject>.fromOpaque(existing).takeUnretainedValue()
    }
}
