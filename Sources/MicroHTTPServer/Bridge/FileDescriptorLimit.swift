#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Raises the open-file soft limit to the hard limit (each connection is a descriptor, and so is each entry file
/// the disk tier keeps open). `MicroHTTPServer.start` raises it; the service does so first, before the disk tier
/// sizes its kept files by it.
public enum FileDescriptorLimit {
    /// Returns the soft limit in effect afterwards, or nil if it could not be read.
    @discardableResult
    public static func raiseToHardLimit() -> UInt64? {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max, limit.rlim_max != rlim_t.max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
}
