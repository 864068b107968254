import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a file a person pointed at (or one found in a folder they did): only a regular file, and only up to a
/// size the caller names. A name that is a pipe, a device (`/dev/zero`, `/dev/stdin`) or a link to one would
/// otherwise be read until memory ran out, or wait for ever.
public enum LocalFile {
    /// Why a file was not read, in a sentence that names it.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public var message: String
        /// The file is not there (as against there but refused).
        public var missing: Bool
        public var description: String { message }
    }

    /// The bytes of `path`, a regular file of at most `limit` bytes; `what` names it in a refusal ("the photo").
    public static func read(_ path: String, atMost limit: Int, what: String) throws(Refusal) -> Data {
        // Non-blocking, so that opening a pipe nobody writes to does not wait; it is refused just after.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: throw Refusal(message: "\(path) does not exist; check the path", missing: true)
            case EACCES, EPERM: throw Refusal(message: "\(path) may not be read by this user (user id \(getuid())); check its permissions", missing: false)
            default: throw Refusal(message: "cannot open \(path): \(String(cString: strerror(code)))", missing: false)
            }
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw Refusal(message: "cannot read \(path): \(String(cString: strerror(errno)))", missing: false)
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw Refusal(message: "\(path) is a folder; \(what) must be a file", missing: false)
        default: throw Refusal(message: "\(path) is not a regular file (a device, pipe or socket); \(what) must be a file", missing: false)
        }
        let size = Int(status.st_size)
        guard size <= limit else { throw tooLarge(path, size: size, limit: limit, what: what) }
        // Read to the end, never past the limit: a file still growing is cut off and refused, not followed.
        var bytes = Data(count: min(size, limit) + 1)
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress! + total, raw.count - total)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Refusal(message: "cannot read \(path): \(String(cString: strerror(errno)))", missing: false)
            }
            if count == 0 { break }
            total += count
        }
        guard total <= limit else { throw tooLarge(path, size: total, limit: limit, what: what) }
        bytes.count = total
        return bytes
    }

    /// What arrives on standard input (`-` for a file name) until it ends, refused once it passes `limit` bytes
    /// (`cat /dev/zero | recipes add --file -` ends with a refusal, not with memory run out).
    public static func readStandardInput(atMost limit: Int, what: String) throws(Refusal) -> Data {
        var bytes = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Glibc.read(STDIN_FILENO, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw Refusal(message: "cannot read standard input: \(String(cString: strerror(errno)))", missing: false)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit {
                throw Refusal(message: "standard input passed \(megabytes(limit)); \(what) may be at most that", missing: false)
            }
        }
    }

    private static func tooLarge(_ path: String, size: Int, limit: Int, what: String) -> Refusal {
        Refusal(message: "\(path) is \(megabytes(size)); \(what) may be at most \(megabytes(limit))", missing: false)
    }

    static func megabytes(_ bytes: Int) -> String {
        let value = Double(bytes) / 1_048_576
        return value >= 10 || value == value.rounded() ? "\(Int(value.rounded())) MB" : String(format: "%.1f MB", value)
    }
}
