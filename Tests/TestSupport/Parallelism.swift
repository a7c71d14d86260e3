import TestParallelism

/// How many tests Swift Testing runs at once in this process (TestParallelism's constructor sets it before main:
/// four per CPU, unless `SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH` was given). Referenced here so that the
/// constructor is linked into every test bundle that uses the kit.
public var testParallelismWidth: Int { Int(unicache_test_parallelism_width()) }
