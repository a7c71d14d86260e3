import Synchronization

/// Holds a server's prepared form of a reusable `Response` (see `Response.reusable()`), so that copies of
/// the response sent on any thread share one prepared form. The first form installed wins; it is released
/// with the slot. A server may prepare a form only for a response it sends a second time (`sentBefore()`).
public final class WireFormSlot: Sendable {
    /// The bit pattern of a retained `AnyObject` (the server's type); `unsent` or `sentOnce` before one is
    /// installed. An atomic: ThreadSanitizer sees it.
    private let stored = Atomic<UInt>(WireFormSlot.unsent)
    private static let unsent: UInt = 0
    private static let sentOnce: UInt = 1

    init() {}

    deinit {
        let value = stored.load(ordering: .acquiring)
        if value > Self.sentOnce, let pointer = UnsafeMutableRawPointer(bitPattern: value) {
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
    }

    /// The installed form, if any.
    public var form: AnyObject? {
        let value = stored.load(ordering: .acquiring)
        guard value > Self.sentOnce else { return nil }
        return UnsafeMutableRawPointer(bitPattern: value).map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Whether the response was sent before; the first call marks it sent. A response sent once (the answer of
    /// one disk or shared hit) is then built once, not prepared and copied.
    public func sentBefore() -> Bool {
        !stored.compareExchange(expected: Self.unsent, desired: Self.sentOnce, ordering: .relaxed).exchanged
    }

    /// Installs `form` unless another is installed already; returns the one in the slot.
    public func install(_ form: AnyObject) -> AnyObject {
        let pointer = Unmanaged.passRetained(form).toOpaque()
        var current = stored.load(ordering: .acquiring)
        while current <= Self.sentOnce {
            let (exchanged, now) = stored.compareExchange(
                expected: current, desired: UInt(bitPattern: pointer),
                successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
            if exchanged { return form }
            current = now
        }
        Unmanaged<AnyObject>.fromOpaque(pointer).release()
        return Unmanaged<AnyObject>.fromOpaque(UnsafeMutableRawPointer(bitPattern: current)!).takeUnretainedValue()
    }
}
