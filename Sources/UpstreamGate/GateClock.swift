/// The upstream gate's time is any monotonic `Clock<Duration>` (the system's `ContinuousClock`, or a clock a test
/// moves by hand), read as `Elapsed` since the gate was made. These two names are what `UnicacheApp` still spells
/// until its split lands; then it says `any Clock<Duration>` and `ContinuousClock()` and they go.
public typealias GateClock = Clock<Duration>
public typealias SystemGateClock = ContinuousClock
