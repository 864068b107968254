import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Thread {
    /// Runs `body` on a new thread named `name`, so the thread shows by that name in `top -H`, `ps -L` and debuggers.
    ///
    /// The name is set by the new thread itself, in `/proc/thread-self/comm`: Foundation on Linux drops a name given
    /// before `start()`, and one given inside races with `start()` (the thread then keeps its creator's name). It is
    /// cut to the 15 bytes Linux keeps (a longer one is refused whole): put what tells threads apart first.
    static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        var kept = Substring(name)
        while kept.utf8.count > 15 { kept = kept.dropLast() }
        let threadName = String(kept)
        Thread {
            #if os(Linux)
            let file = open("/proc/thread-self/comm", O_WRONLY)
            if file >= 0 {
                _ = threadName.withCString { write(file, $0, strlen($0)) }
                close(file)
            }
            #else
            Thread.current.name = threadName
            #endif
            body()
        }.start()
    }

    /// The calling thread's name as the system keeps it (what `start(named:)` set).
    public static var systemName: String {
        #if os(Linux)
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.hasSuffix("\n") ? String(name.dropLast()) : name
        #else
        return Thread.current.name ?? ""
        #endif
    }

    /// A service's name as thread names use it: `recipe-storage` → `storage`.
    static func shortName(ofService service: String) -> String {
        service.hasPrefix("recipe-") ? String(service.dropFirst("recipe-".count)) : service
    }
}
