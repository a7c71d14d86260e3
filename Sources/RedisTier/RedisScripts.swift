import Redis

/// The Lua scripts of the shared tier: each change, its entry in the fleet's log and its announcement are one
/// atomic step in Redis, so the log holds a change exactly when it is published, under the id the message carries.
enum RedisScripts {
    /// `announce(log, length, channel, head, change)`: appends `HEAD|CHANGE` to the log (a stream trimmed to about
    /// `length` entries), publishes `HEAD|ID|CHANGE` (`SPUBLISH` on a shard's channel of a cluster) and returns the
    /// entry's id. The head (`v2|ORIGIN`) and the change (`KIND|FIELD…`) come encoded from `InvalidationMessage`: the
    /// scripts only join them with the entry's id.
    private static func logAndPublish(_ publish: String) -> String {
        """
        local function announce(log, length, channel, head, change)
          local id = redis.call('XADD', log, 'MAXLEN', '~', length, '*', 'm', head .. '|' .. change)
          redis.call('\(publish)', channel, head .. '|' .. id .. '|' .. change)
          return id
        end

        """
    }

    /// A script that announces its change: `PUBLISH` on one Redis, `SPUBLISH` on a cluster's shard (CONTRACT §13).
    struct Announcing: Sendable {
        let plain: RedisScript
        let sharded: RedisScript

        init(_ body: String) {
            plain = RedisScript(RedisScripts.logAndPublish("PUBLISH") + body)
            sharded = RedisScript(RedisScripts.logAndPublish("SPUBLISH") + body)
        }

        /// The form for a key space: sharded names publish on sharded channels.
        func on(_ keys: RedisKeys) -> RedisScript { keys.shards == 1 ? plain : sharded }
    }

    /// KEYS: entry, user index (or the entry again when the entry has no user), log, the entry's fill lease.
    /// ARGV: value, life in ms, cache key, namespace, has-user ("1"/"0"), channel, the message's head, log length, the
    /// lease's token ('' when the writer holds none): the lease is given back in the same step while it is still the
    /// writer's; the change announced: `key|KEY` (a raw put: loads in flight elsewhere are superseded) or `stored|KEY`
    /// (a fetched value), the key encoded.
    static let store = Announcing("""
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        if ARGV[5] == '1' then
          redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
          if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
        end
        if ARGV[9] ~= '' and redis.call('GET', KEYS[4]) == ARGV[9] then redis.call('DEL', KEYS[4]) end
        return announce(KEYS[3], ARGV[8], ARGV[6], ARGV[7], ARGV[10])
        """)

    /// A local miss's look and fill claim in one round trip (CONTRACT §10.4): the stored value, or else the fill
    /// lease taken when free. KEYS: entry, its fill lease. ARGV: a new token, the lease's life in ms.
    /// Returns {1, value}, {2} (the lease is the caller's) or {3} (another holds it).
    static let lookUp = RedisScript("""
        local value = redis.call('GET', KEYS[1])
        if value then return {1, value} end
        if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {2} end
        return {3}
        """)

    /// KEYS: log, then the entries to delete. ARGV: channel, the message's head, its change, log length.
    /// Returns the number of entries deleted.
    static let delete = Announcing("""
        local n = 0
        for i = 2, #KEYS do n = n + redis.call('DEL', KEYS[i]) end
        announce(KEYS[1], ARGV[4], ARGV[1], ARGV[2], ARGV[3])
        return n
        """)

    /// A user's entries (all, or those of some namespaces) of one shard, named in `KEYS` as the caller read them from
    /// the user's index of that shard (`HGETALL`): on a cluster every key a script touches must be declared, so that
    /// Redis redirects (or asks to retry) the whole script while the shard's slot moves. Each entry is deleted and
    /// taken out of the index; then the index is read again, and a key it gained since the caller read it (a store in
    /// between) is returned for another round, its entry not being in `KEYS`. The change is announced once nothing
    /// is left. KEYS: user index, log, then the entries. ARGV: the entries' prefix (an entry's name is it and the
    /// cache key), channel, the message's head, its change, log length, `all` or `some`, then (with `some`) each
    /// namespace as an argument of its own. Returns {the cache keys deleted, the keys left for another round}.
    static let deleteUser = Announcing("""
        local wanted = nil
        if ARGV[6] ~= 'all' then
          wanted = {}
          for i = 7, #ARGV do wanted[ARGV[i]] = true end
        end
        local removed = {}
        for i = 3, #KEYS do
          local key = string.sub(KEYS[i], #ARGV[1] + 1)
          if redis.call('DEL', KEYS[i]) == 1 then table.insert(removed, key) end
          redis.call('HDEL', KEYS[1], key)
        end
        local fields = redis.call('HGETALL', KEYS[1])
        local left = {}
        for i = 1, #fields, 2 do
          if wanted == nil or wanted[fields[i + 1]] then table.insert(left, fields[i]) end
        end
        if #left == 0 then announce(KEYS[2], ARGV[5], ARGV[2], ARGV[3], ARGV[4]) end
        return {removed, left}
        """)

    /// A fleet-wide sliding-log budget in Redis's clock, with one user's share of it (CONTRACT §7.1, §15.2) decided in
    /// the same step. KEYS: the domain's log, then the user's log when the request is charged to a user (both under
    /// the domain's hash tag: one slot). ARGV: mode (`take`, `check`, `remaining`), a unique member for a grant, then
    /// per window: limit, allowed (the limit, or less for background work), window in ms, the user's share of it (0:
    /// none). The budget is asked first: when it is spent, the refusal is the budget's, waiting until the user's share
    /// allows a request too. Returns {granted 1/0, wait ms, remaining (fewest over the windows), refused for the
    /// user's share 1/0}.
    static let rate = RedisScript("""
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local longest = 0
        for i = 3, #ARGV, 4 do longest = math.max(longest, tonumber(ARGV[i + 2])) end
        local user = KEYS[2]
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - longest)
        if user then redis.call('ZREMRANGEBYSCORE', user, '-inf', now - longest) end
        -- the grants of `log` in a window ending now, and how long until it holds fewer than `allowed` (-1: it does)
        local function wait(log, window, allowed)
          local held = redis.call('ZCOUNT', log, '(' .. (now - window), '+inf')
          if held < allowed then return -1, held end
          if allowed <= 0 then return window, held end
          local oldest = redis.call('ZRANGEBYSCORE', log, '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', held - allowed, 1)
          return tonumber(oldest[2]) + window - now, held
        end
        local rateWait, userWait, remaining = -1, -1, nil
        for i = 3, #ARGV, 4 do
          local limit, allowed, window, share = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
          local until_, held = wait(KEYS[1], window, allowed)
          remaining = math.min(remaining or (limit - held), limit - held)
          rateWait = math.max(rateWait, until_)
          if user and share > 0 then userWait = math.max(userWait, (wait(user, window, share))) end
        end
        if ARGV[1] == 'remaining' then return {0, 0, math.max(0, remaining), 0} end
        if rateWait >= 0 then return {0, math.max(rateWait, userWait), math.max(0, remaining), 0} end
        if userWait >= 0 then return {0, userWait, math.max(0, remaining), 1} end
        if ARGV[1] == 'take' then
          redis.call('ZADD', KEYS[1], now, ARGV[2])
          redis.call('PEXPIRE', KEYS[1], longest)
          if user then
            redis.call('ZADD', user, now, ARGV[2])
            redis.call('PEXPIRE', user, longest)
          end
          remaining = remaining - 1
        end
        return {1, 0, math.max(0, remaining), 0}
        """)

    /// An instance's announcement; returns how many instances are announced. KEYS: instances. ARGV: id, life ms.
    static let announce = RedisScript("""
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
        redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
        redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
        return redis.call('ZCARD', KEYS[1])
        """)

    /// A follower's look at a fill another instance leads, in one step: the stored value, or whether the lease is still
    /// held. Two commands could see the value missing and then the lease gone, when the store script (which gives the
    /// lease back) ran between them. KEYS: entry, its fill lease. Returns {1, value}, {2} (held) or {3} (neither).
    static let lookForFill = RedisScript("""
        local value = redis.call('GET', KEYS[1])
        if value then return {1, value} end
        if redis.call('EXISTS', KEYS[2]) == 1 then return {2} end
        return {3}
        """)

    /// Deletes a key only while it holds ARGV[1]: releases a fill lease only if it is still this holder's, deletes a
    /// value that did not verify only if no other was written since. KEYS: the key. ARGV: the value expected.
    static let release = RedisScript("""
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """)

    /// Renews a fill lease only while it is still this holder's. KEYS: the lease. ARGV: the token, its life in
    /// milliseconds. Returns 1 when renewed, else 0.
    static let renew = RedisScript("""
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
        return 0
        """)

    /// Replaces a value only while it is still the one read, keeping its expiry (a rekey never overwrites a value
    /// written meanwhile). KEYS: entry. ARGV: the value read, the replacement. Returns 1 when replaced, else 0.
    static let replace = RedisScript("""
        if redis.call('GET', KEYS[1]) == ARGV[1] then
          redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
          return 1
        end
        return 0
        """)

    /// The fleet's epoch and the id of the log's last entry ('' when the log is empty). The epoch is set once per
    /// Redis lifetime, and the log then starts with an entry of its own, so an instance that joins an empty log
    /// still gets a position the log holds. KEYS: epoch, log. ARGV: a new random epoch, log length.
    static let position = RedisScript("""
        if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
          redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'epoch', ARGV[1])
        end
        local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
        local id = ''
        if last[1] then id = last[1][1] end
        return {redis.call('GET', KEYS[1]), id}
        """)
}
