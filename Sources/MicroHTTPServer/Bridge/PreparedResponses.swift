#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPRouting
import NIOConcurrencyHelpers

/// The server's prepared forms of reusable responses (`Response.reusable()`), keyed by their `ReuseIdentity`: one
/// small table per polling thread, found through a thread-specific key. A connection is served on one polling
/// thread (its answers are queued and its lent copies given back there), so a table is read and changed by its
/// thread alone: the warm answer takes no lock. Each table keeps a form only for a response its thread sends a
/// second time (a response sent once, such as the answer of one disk or shared hit, is built once, with its id, not
/// prepared and copied); a form leaves its table when another response takes its place, and the tables go with the
/// server.
final class PreparedResponses: Sendable {
    /// One key for the process, made once and never changed (a key per server would spend the system's few, 1,024 on
    /// Linux, shared with every library): a polling thread serves one server, and its value is that server's table.
    /// nil when the system has none left (then nothing is kept: every answer is built afresh).
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()

    /// Every thread's table, kept (and released) with the server; the lock is taken once per thread.
    private let tables = NIOLockedValueBox<[PreparedTable]>([])

    /// The calling polling thread's table, made on its first use.
    func table() -> PreparedTable? {
        guard let key = Self.key else { return nil }
        // A polling thread ends with its daemon, before the server's tables go: a value found is this server's.
        if let raw = pthread_getspecific(key) {
            let table = Unmanaged<PreparedTable>.fromOpaque(raw).takeUnretainedValue()
            if table.owner == ObjectIdentifier(self) { return table }
        }
        let table = PreparedTable(owner: ObjectIdentifier(self))
        tables.withLockedValue { $0.append(table) }
        guard pthread_setspecific(key, Unmanaged.passUnretained(table).toOpaque()) == 0 else { return nil }
        return table
    }

    /// The forms every table holds (for tests, once the daemon has stopped and its threads are gone).
    var all: [PreparedResponse] { tables.withLockedValue { $0 }.flatMap(\.forms) }
}

/// One polling thread's prepared responses: a direct-mapped table of the identities it sent, each with its form
/// once the response was sent a second time.
///
/// `@unchecked Sendable`: used only on the polling thread that made it (read by tests after that thread ended).
final class PreparedTable: @unchecked Sendable {
    private struct Slot {
        var identity: ReuseIdentity?
        var form: PreparedResponse?
    }

    private var slots: [Slot]
    private let shift: UInt64
    /// The `PreparedResponses` it belongs to.
    let owner: ObjectIdentifier?

    /// `slots`: a power of two.
    init(slots: Int = 64, owner: ObjectIdentifier? = nil) {
        self.slots = Array(repeating: Slot(), count: slots)
        shift = UInt64(64 - slots.trailingZeroBitCount)
        self.owner = owner
    }

    /// The form of `response` (named `identity`) when this thread sent it before (made then); nil the first time,
    /// when it is remembered as sent, in place of the response the slot held (whose form is released, once no
    /// request holds one of its copies).
    func form(of response: Response, identity: ReuseIdentity) -> PreparedResponse? {
        let index = Int(truncatingIfNeeded: identity.spread >> shift)
        guard slots[index].identity == identity else {
            slots[index] = Slot(identity: identity, form: nil)
            return nil
        }
        if let form = slots[index].form { return form }
        let form = PreparedResponse(response)
        slots[index].form = form
        return form
    }

    var forms: [PreparedResponse] { slots.compactMap(\.form) }
}
