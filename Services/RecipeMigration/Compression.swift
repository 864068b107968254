import CZlib
import Foundation

/// Deflate and gzip through zlib, with a hard cap on what inflating may produce
/// (an export is a stranger's file: a few kilobytes must not become gigabytes).
public enum Compression {
    public enum Wrapping: Sendable {
        /// Raw deflate, as inside a zip entry.
        case raw
        /// gzip (`.paprikarecipe`) or zlib, told apart by their headers.
        case gzipOrZlib

        var windowBits: Int32 {
            switch self {
            case .raw: -15
            case .gzipOrZlib: 15 + 32
            }
        }
    }

    public enum Failure: Error, Equatable, Sendable {
        /// The bytes are not what the wrapping says, or they end too soon.
        case damaged(String)
        /// Inflating would give more than the cap.
        case tooLarge(limit: Int)
    }

    /// The inflated bytes, or `Failure` when they are damaged or would pass `limit`.
    public static func inflate(_ input: Data, wrapping: Wrapping, limit: Int) throws(Failure) -> Data {
        var stream = z_stream()
        guard rv_inflate_init(&stream, wrapping.windowBits) == Z_OK else { throw .damaged("zlib could not start") }
        defer { inflateEnd(&stream) }
        var output = Data()
        let chunk = 64 * 1_024
        var buffer = [UInt8](repeating: 0, count: chunk)
        var status: Int32 = Z_OK
        let result = input.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in Result { () throws(Failure) in
            guard let base = raw.bindMemory(to: Bytef.self).baseAddress else { throw .damaged("it is empty") }
            stream.next_in = UnsafeMutablePointer(mutating: base)
            stream.avail_in = uInt(raw.count)
            repeat {
                status = buffer.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(chunk)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk - Int(stream.avail_out)
                guard output.count + produced <= limit else { throw .tooLarge(limit: limit) }
                output.append(contentsOf: buffer[0..<produced])
                switch status {
                case Z_OK, Z_STREAM_END: break
                case Z_BUF_ERROR where produced > 0: status = Z_OK
                case Z_BUF_ERROR: throw .damaged("it ends too soon")
                case Z_NEED_DICT: throw .damaged("it needs a preset dictionary")
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "code \(status)"
                    throw .damaged(message)
                }
                if status == Z_OK && stream.avail_in == 0 && produced < chunk { throw .damaged("it ends too soon") }
            } while status != Z_STREAM_END
        } }
        try result.get()
        return output
    }

    /// `data` deflated: gzip-wrapped when `gzip`, raw otherwise.
    public static func deflate(_ data: Data, gzip: Bool, level: Int32 = 6) -> Data {
        var stream = z_stream()
        guard rv_deflate_init(&stream, level, gzip ? 15 + 16 : -15) == Z_OK else { return Data() }
        defer { deflateEnd(&stream) }
        var output = Data()
        let chunk = 64 * 1_024
        var buffer = [UInt8](repeating: 0, count: chunk)
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            stream.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(raw.count)
            var status: Int32 = Z_OK
            repeat {
                status = buffer.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(chunk)
                    return CZlib.deflate(&stream, Z_FINISH)
                }
                output.append(contentsOf: buffer[0..<(chunk - Int(stream.avail_out))])
            } while status == Z_OK
        }
        return output
    }

    /// The CRC-32 a zip entry carries.
    public static func crc32(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { raw in
            UInt32(CZlib.crc32(0, raw.bindMemory(to: Bytef.self).baseAddress, uInt(raw.count)))
        }
    }

    /// Whether `data` starts like gzip.
    public static func isGzip(_ data: Data) -> Bool {
        data.count >= 2 && data[data.startIndex] == 0x1F && data[data.startIndex + 1] == 0x8B
    }
}
