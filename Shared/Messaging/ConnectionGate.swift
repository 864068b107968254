#if canImport(Glibc)
import Glibc
#endif
import RecipeProtocol

/// Keeps client connections from taking a service's last files. Every connection holds a file, and a process that
/// holds every file it may is not only refusing work: Swift's dispatch library, on which the task pool runs, looks at
/// its threads once a second through a file it opens each time, and ends the process when it cannot (found with
/// recipe-worker flooded with connections up to its limit: SIGILL). ZeroMQ takes every connection that arrives and has
/// no way to pause; stopping its listener (`zmq_unbind`) drops the connections it took too. So the gate works below
/// it: past `pauseAt` open files a socket filter on the listening socket drops the connection requests that arrive
/// (the clients' systems retry them), connections that came meanwhile past the budget are shut, and at `resumeAt`
/// the filter comes off. Clients already connected are served throughout.
///
/// The same holds connections to a count (`maxConnections`, counted as the files opened since the service began to
/// listen): each costs about 22 KB, and an open-file limit may be a million.
struct ConnectionGate {
    let pauseAt: Int
    let resumeAt: Int
    /// What `pauseAt` keeps: the process's last files, or memory (the count of connections it takes).
    let bound: Bound
    let port: UInt16
    private(set) var paused = false
    /// The listening TCP sockets on `port` and the other ports the gate was given (the storage's change-notice
    /// endpoint's), looked up when it was made: a process out of files cannot list its files.
    let listeners: [Int32]
    /// Their ports.
    let listeningPorts: Set<UInt16>

    enum Bound: Equatable {
        case files
        case connections
    }

    /// A gate for the TCP listener on `port`, in a process that may open `limit` files and held `baseline` when it
    /// began to listen: a reserve of an eighth of the limit (at least 32, at most 1,024, never more than a third of
    /// the room above the baseline), and as much again below it before connections are taken again — or, when it
    /// comes first, `maxConnections` files above the baseline, taken again once an eighth of them have closed.
    init(port: UInt16, alsoPorts: [UInt16] = [], limit: UInt64, baseline: Int, maxConnections: Int = .max) {
        let limit = Int(min(limit, UInt64(Int32.max)))
        let room = max(0, limit - baseline)
        let reserve = max(1, min(max(32, min(limit / 8, 1_024)), room / 3))
        self.port = port
        listeningPorts = Set([port] + alsoPorts)
        let ports = listeningPorts
        listeners = Self.listeningSockets().filter { Self.localPort($0).map(ports.contains) ?? false }
        let byCount = baseline + min(max(1, maxConnections), Int(Int32.max))
        if byCount < limit - reserve {
            (pauseAt, bound) = (byCount, .connections)
            resumeAt = max(baseline + 1, pauseAt - max(1, maxConnections / 8))
        } else {
            (pauseAt, bound) = (limit - reserve, .files)
            resumeAt = max(baseline + 1, pauseAt - reserve)
        }
    }

    enum Change: Equatable {
        case pause
        case resume
    }

    /// What to do with `open` files held.
    func change(open: Int) -> Change? {
        if !paused && open >= pauseAt { return .pause }
        if paused && open <= resumeAt { return .resume }
        return nil
    }

    /// How many of the connections just taken to shut, with `open` files held.
    func excess(open: Int) -> Int { max(0, open - pauseAt + 1) }

    /// Drops (or, `paused` false, lets through again) the connection requests that reach the gate's listening sockets.
    mutating func set(paused: Bool) -> Bool {
        // Each still a listening socket (a number closed and given out again is left alone).
        let current = listeners.filter { Self.isListening($0) }
        guard current.contains(where: { Self.localPort($0) == port }) else { return false }
        var done = true
        for listener in current where !Self.filter(listener, drop: paused) && Self.localPort(listener) == port { done = false }
        if done { self.paused = paused }
        return done
    }

    /// Whether `descriptor` is a listening TCP socket.
    static func isListening(_ descriptor: Int32) -> Bool {
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return localPort(descriptor) != nil && getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0 && listening != 0
    }

    /// Puts the drop-everything filter on `listener`, or takes it off.
    private static func filter(_ listener: Int32, drop: Bool) -> Bool {
        let done: Bool
        if drop {
            // One instruction: return 0, which keeps no byte of any packet.
            var program = [SocketFilterInstruction(code: 0x06, jt: 0, jf: 0, k: 0)]
            done = program.withUnsafeMutableBytes { instructions in
                var filter = SocketFilterProgram(length: 1, instructions: instructions.baseAddress)
                return setsockopt(listener, SOL_SOCKET, SO_ATTACH_FILTER, &filter, socklen_t(MemoryLayout<SocketFilterProgram>.size)) == 0
            }
        } else {
            var unused: Int32 = 0
            done = setsockopt(listener, SOL_SOCKET, SO_DETACH_FILTER, &unused, socklen_t(MemoryLayout<Int32>.size)) == 0 || errno == ENOENT
        }
        return done
    }

    /// The process's listening TCP sockets (ZeroMQ's, found among the open files).
    static func listeningSockets() -> [Int32] {
        (OpenFiles.descriptors() ?? []).filter(isListening)
    }

    /// The port of a bound TCP endpoint (`tcp://127.0.0.1:5555`); nil for IPC, inproc or a port not yet chosen.
    static func tcpPort(of endpoint: String) -> UInt16? {
        endpoint.hasPrefix("tcp://") ? endpoint.split(separator: ":").last.flatMap { UInt16($0) } : nil
    }

    /// The local TCP port of `descriptor`, if it is an IPv4 or IPv6 socket.
    static func localPort(_ descriptor: Int32) -> UInt16? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { return nil }
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        case AF_INET6:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
        default:
            return nil
        }
    }

    /// Shuts up to `count` connections to `ports` that arrived without the gate seeing them (the storage's
    /// change-notice endpoint's), highest file numbers first (the newest, as the system gives out the lowest free
    /// number); found by number, as a process out of files cannot list them. Returns how many were shut.
    static func shedUnseen(_ count: Int, ports: Set<UInt16>, below limit: Int) -> Int {
        var shut = 0
        var descriptor = Int32(min(limit, 1 << 16)) - 1
        while descriptor >= 0 && shut < count {
            if let port = localPort(descriptor), ports.contains(port), !isListening(descriptor),
               isConnection(descriptor, toPort: port), shutdown(descriptor, Int32(SHUT_RDWR)) == 0 {
                shut += 1
            }
            descriptor -= 1
        }
        return shut
    }

    /// Whether `descriptor` is a connection (not a listener) whose local end is `port`.
    static func isConnection(_ descriptor: Int32, toPort port: UInt16) -> Bool {
        guard localPort(descriptor) == port else { return false }
        var peer = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        } == 0
    }
}

/// `struct sock_filter` (linux/filter.h): one classic BPF instruction.
private struct SocketFilterInstruction {
    var code: UInt16
    var jt: UInt8
    var jf: UInt8
    var k: UInt32
}

/// `struct sock_fprog` (linux/filter.h).
private struct SocketFilterProgram {
    var length: UInt16
    var instructions: UnsafeMutableRawPointer?
}
