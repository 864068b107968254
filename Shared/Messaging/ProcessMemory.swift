#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What memory this process holds.
enum ProcessMemory {
    /// The process's resident bytes (`/proc/self/statm`), or nil where it cannot be read.
    static func residentBytes() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .ascii) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
