import NIOConcurrencyHelpers

/// Requests of this instance waiting for another instance to fill a key: woken by the fill's message on the
/// invalidation channel, or after a poll interval at the latest (a message can be lost; Redis is then asked).
///
/// A waiter arms its ticket before it looks in Redis and waits on it after: a message that arrives between the
/// look and the wait marks the ticket woken, so that the wait returns at once instead of sleeping a whole poll
/// interval for a fill that already happened.
final class FillWaiters: Sendable {
    /// One waiter's place: armed (looking), woken before it waited, or waiting.
    private enum Slot {
        case armed
        case woken
        case waiting(CheckedContinuation<Void, Never>)
    }

    struct Ticket: Sendable {
        fileprivate let key: String
        fileprivate let id: UInt64
    }

    private struct State {
        var next: UInt64 = 0
        var slots: [String: [UInt64: Slot]] = [:]
    }

    private let state = NIOLockedValueBox(State())
    /// How a wait's bound passes: the clock's sleep (a test can give a clock it advances itself).
    private let sleep: @Sendable (Duration) async throws -> Void

    init<C: Clock>(clock: C) where C.Duration == Duration {
        sleep = { try await clock.sleep(for: $0) }
    }

    /// A ticket that every wake of `key` (or of all) from now on wakes: take it before looking, then `wait`.
    func arm(_ key: String) -> Ticket {
        state.withLockedValue { state in
            state.next &+= 1
            state.slots[key, default: [:]][state.next] = .armed
            return Ticket(key: key, id: state.next)
        }
    }

    /// Returns when the ticket is woken (at once if it already was) or `atMost` has passed; the ticket is used up.
    func wait(_ ticket: Ticket, atMost: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            // The bound: a child task sleeping on the clock, cancelled once the ticket is woken.
            group.addTask { [self] in
                guard (try? await sleep(atMost)) != nil else { return }
                timeOut(ticket)
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLockedValue { state -> Bool in
                    guard case .armed = state.slots[ticket.key]?[ticket.id] else {
                        Self.remove(ticket, from: &state)
                        return false
                    }
                    state.slots[ticket.key]?[ticket.id] = .waiting(continuation)
                    return true
                }
                if !waits { continuation.resume() }
            }
            group.cancelAll()
        }
    }

    /// A ticket not waited on after all (the look found what it wanted).
    func disarm(_ ticket: Ticket) {
        state.withLockedValue { Self.remove(ticket, from: &$0) }
    }

    /// Returns when `key` is announced, everything is woken, or `atMost` has passed.
    func wait(for key: String, atMost: Duration) async {
        await wait(arm(key), atMost: atMost)
    }

    /// Wakes the waiters of `key`.
    func wake(_ key: String) {
        let woken = state.withLockedValue { state in Self.wake(key, in: &state) }
        woken.forEach { $0.resume() }
    }

    /// Wakes every waiter (a prefix, user or full invalidation, or a reset).
    func wakeAll() {
        let woken = state.withLockedValue { state in state.slots.keys.flatMap { Self.wake($0, in: &state) } }
        woken.forEach { $0.resume() }
    }

    /// Marks `key`'s armed tickets woken and takes its waiting ones out, to be resumed outside the lock.
    private static func wake(_ key: String, in state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard let slots = state.slots[key] else { return [] }
        var woken: [CheckedContinuation<Void, Never>] = []
        var armed: [UInt64: Slot] = [:]
        for (id, slot) in slots {
            switch slot {
            case .waiting(let continuation): woken.append(continuation)
            case .armed, .woken: armed[id] = .woken
            }
        }
        state.slots[key] = armed.isEmpty ? nil : armed
        return woken
    }

    /// The bound passed: a waiting ticket returns; one not waiting yet is marked woken, so its wait returns at once.
    private func timeOut(_ ticket: Ticket) {
        let continuation = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            switch state.slots[ticket.key]?[ticket.id] {
            case .waiting(let continuation):
                Self.remove(ticket, from: &state)
                return continuation
            case .armed:
                state.slots[ticket.key]?[ticket.id] = .woken
                return nil
            case .woken, nil:
                return nil
            }
        }
        continuation?.resume()
    }

    private static func remove(_ ticket: Ticket, from state: inout State) {
        state.slots[ticket.key]?[ticket.id] = nil
        if state.slots[ticket.key]?.isEmpty == true { state.slots[ticket.key] = nil }
    }
}
