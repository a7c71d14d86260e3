/// Eviction and admission (Caffeine's `evictFromWindow`, `evictFromMain` and `admit`, weighed).
extension TinyLFUPolicy {
    /// A candidate whose frequency reaches this and lost is still admitted, rarely, so that an attacker who raises
    /// the victims' frequencies by hash collisions cannot shut every newcomer out (Caffeine's threshold).
    static var floodingThreshold: Int { 6 }
    /// One in this many such candidates is admitted.
    static var floodingOdds: UInt64 { 128 }

    var isOver: Bool { lists.weight > capacity.weight || lists.count > capacity.count }

    public mutating func evict(keeping: Int?, into victims: inout [Int]) {
        evict(keeping: keeping, into: &victims, frequencies: sketch)
        climb()
    }

    /// `evict`, weighing candidates by `frequencies` (the policy's own sketch, or a shadow's parent's).
    mutating func evict(keeping: Int?, into victims: inout [Int], frequencies: FrequencySketch) {
        var candidate = evictFromWindow(keeping: keeping)
        while isOver {
            if candidate == nil { candidate = takeWindowEldest(keeping: keeping) }
            guard let contender = candidate else {
                // Nothing to weigh: the main region's eldest goes.
                guard let victim = victim(after: nil, before: nil, keeping: keeping) else { break }
                evict(victim, into: &victims)
                continue
            }
            // The candidates moved out of the window are probation's newest entries, in order.
            candidate = lists.newer(than: contender)
            contest(contender, keeping: keeping, into: &victims, frequencies: frequencies)
        }
        // Candidates the budgets had room for entered the main region without a contest.
        while let admitted = candidate {
            counters.admitted += 1
            candidate = lists.newer(than: admitted)
        }
    }

    /// Moves the window's eldest entries to probation's newest end while the window is over its bound (never
    /// `keeping`); returns the first one moved: the candidates, to be weighed against the main region's victims.
    private mutating func evictFromWindow(keeping: Int?) -> Int? {
        var first: Int?
        var moved = 0
        while moved < Self.transferLimit, Self.exceeds(lists.window, windowLimit), lists.window.eldest >= 0 {
            let eldest = Int(lists.window.eldest)
            guard eldest != keeping else { break }
            lists.move(eldest, to: .probation)
            moved += 1
            if first == nil { first = eldest }
        }
        return first
    }

    /// The window's eldest entry as a candidate (moved to probation's newest end) when the budgets are over while
    /// the window is not: after its share grew, or an entry grew heavier.
    private mutating func takeWindowEldest(keeping: Int?) -> Int? {
        guard lists.window.eldest >= 0 else { return nil }
        let eldest = Int(lists.window.eldest)
        guard eldest != keeping else { return nil }
        lists.move(eldest, to: .probation)
        return eldest
    }

    /// Weighs `candidate` against every victim it would push out: the main region's eldest entries until they free
    /// what the budgets lack, up to the candidate's own weight (one entry, when only the entry budget is over). The
    /// candidate stays if the sketch counted it more often than each of them, and they go; else it goes.
    private mutating func contest(
        _ candidate: Int, keeping: Int?, into victims: inout [Int], frequencies: FrequencySketch
    ) {
        let weightNeeded = min(max(0, lists.weight - capacity.weight), lists.weight(of: candidate))
        let countNeeded = lists.count > capacity.count ? 1 : 0
        gathered.removeAll(keepingCapacity: true)
        var freedWeight = 0
        var victimFrequency = 0
        var next = victim(after: nil, before: candidate, keeping: keeping)
        while let victim = next, freedWeight < weightNeeded || gathered.count < countNeeded {
            gathered.append(victim)
            freedWeight += lists.weight(of: victim)
            victimFrequency = max(victimFrequency, frequencies.frequency(lists.hash(of: victim)))
            next = self.victim(after: victim, before: candidate, keeping: keeping)
        }
        guard !gathered.isEmpty else {
            // The main region holds nothing else: the candidate goes, as LRU's eldest would.
            evict(candidate, into: &victims)
            return
        }
        if admit(frequencies.frequency(lists.hash(of: candidate)), over: victimFrequency) {
            for victim in gathered { evict(victim, into: &victims) }
            counters.admitted += 1
        } else {
            evict(candidate, into: &victims)
            counters.rejected += 1
        }
    }

    /// Whether a candidate counted `candidate` times displaces victims counted at most `victim` times; a popular
    /// candidate that lost still wins one time in 128 (against hash flooding).
    mutating func admit(_ candidate: Int, over victim: Int) -> Bool {
        if candidate > victim { return true }
        guard candidate >= Self.floodingThreshold else { return false }
        return random.next() % Self.floodingOdds == 0
    }

    /// The main region's next victim after `previous` (from its eldest when `nil`): probation eldest first, up to the
    /// candidates (from `candidate` on), then protected; never `keeping`.
    private func victim(after previous: Int?, before candidate: Int?, keeping: Int?) -> Int? {
        var region = previous.map { lists.region(of: $0) } ?? .probation
        var next: Int? =
            if let previous { lists.newer(than: previous) } else {
                lists.probation.eldest < 0 ? nil : Int(lists.probation.eldest)
            }
        while true {
            if region == .probation, next == nil || next == candidate {
                region = .protected
                next = lists.protected.eldest < 0 ? nil : Int(lists.protected.eldest)
                continue
            }
            guard let slot = next else { return nil }
            guard slot != keeping else {
                next = lists.newer(than: slot)
                continue
            }
            return slot
        }
    }

    private mutating func evict(_ slot: Int, into victims: inout [Int]) {
        lists.release(slot)
        victims.append(slot)
        counters.evictions += 1
    }
}
