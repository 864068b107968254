import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// What went wrong between the worker and a site, in words for the person who asked for the page. The libraries'
/// own descriptions are not that: SwiftNIO's name a system call ("read(descriptor:pointer:size:): Connection reset by
/// peer) (errno: 104)"), BoringSSL's carry an error stack and a path inside the build, the decompressor's a zlib
/// number ("inflationError(-3)"). Each kind the fetch can meet is said here; one it cannot name is said by its kind.
enum FetchErrorText {
    static func describe(_ error: any Error) -> String {
        switch error {
        case let io as IOError:
            return connection(errno: io.errnoCode)
        case let connecting as NIOConnectionError:
            if let first = connecting.connectionErrors.first { return describe(first.error) }
            return "the connection could not be made"
        case let channel as ChannelError:
            return describe(channel)
        case let parsing as HTTPParserError:
            return describe(parsing)
        case let tls as NIOSSLError:
            return describe(tls)
        case let extra as NIOSSLExtraError where extra == .failedToValidateHostname || extra == .serverHostnameImpossibleToMatch:
            return "its certificate is for another name than the site's, so the secure connection (TLS) was not trusted"
        case is NIOSSLExtraError:
            return "a secure connection (TLS) could not be made"
        case let inflating as NIOHTTPDecompression.DecompressionError:
            if case .limit = inflating { return "its compressed body unpacks to more than a page may be" }
            return "its body is compressed (Content-Encoding) but damaged, so it could not be unpacked"
        case let client as HTTPClientError:
            return describe(client)
        default:
            // A kind not met so far: its name, never its description (which may dump a library's internals).
            return "the exchange with the site failed (\(String(describing: type(of: error))))"
        }
    }

    /// A system error on the connection, by its number.
    static func connection(errno code: Int32) -> String {
        switch code {
        case ECONNRESET: return "the site reset the connection before its reply was whole"
        case ECONNREFUSED: return "the connection was refused (nothing answers on that port)"
        case ETIMEDOUT: return "the connection timed out"
        case EHOSTUNREACH, ENETUNREACH: return "the site cannot be reached from here (no route to it)"
        case EPIPE: return "the site closed the connection while the request was being sent"
        default: return "the connection failed: \(String(cString: strerror(code)).lowercased())"
        }
    }

    private static func describe(_ channel: ChannelError) -> String {
        switch channel {
        case .connectTimeout: return "the connection timed out"
        case .eof, .inputClosed, .outputClosed, .ioOnClosedChannel, .alreadyClosed: return "the site closed the connection before its reply was whole"
        case .writeHostUnreachable: return "the site cannot be reached from here (no route to it)"
        default: return "the connection failed (\(channel))"
        }
    }

    private static func describe(_ parsing: HTTPParserError) -> String {
        switch parsing {
        case .headerOverflow: return "its reply's headers ran past 80 KB, far more than a web page's"
        case .invalidEOFState: return "the site closed the connection before its reply was whole"
        case .invalidContentLength, .unexpectedContentLength: return "its reply is not the HTTP a web page is sent in (its length is given twice or wrongly)"
        case .invalidChunkSize: return "its reply is not the HTTP a web page is sent in (a piece of a chunked body gives no valid size)"
        default: return "its reply is not the HTTP a web page is sent in (\(parsing.debugDescription))"
        }
    }

    private static func describe(_ tls: NIOSSLError) -> String {
        switch tls {
        case .handshakeFailed(let failure):
            // BoringSSL's reason is only in its text ("…:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at …").
            let reason = "\(failure)"
            if reason.contains("WRONG_VERSION_NUMBER") || reason.contains("HTTP_REQUEST") || reason.contains("PACKET_LENGTH_TOO_LONG") {
                return "a secure connection (TLS) could not be made: the site does not speak TLS on that port (is the address http:// rather than https://?)"
            }
            if reason.contains("CERTIFICATE_VERIFY_FAILED") {
                return "its certificate could not be verified (expired, self-signed or from an authority this system does not trust), so the secure connection (TLS) was not trusted"
            }
            if reason.contains("NO_SHARED_CIPHER") || reason.contains("UNSUPPORTED_PROTOCOL") || reason.contains("HANDSHAKE_FAILURE") {
                return "a secure connection (TLS) could not be made: the site and the worker share no TLS version or cipher"
            }
            return "a secure connection (TLS) could not be made with the site"
        case .uncleanShutdown:
            return "the site ended the secure connection before its reply was whole"
        default:
            return "a secure connection (TLS) could not be made with the site"
        }
    }

    private static func describe(_ client: HTTPClientError) -> String {
        switch client {
        case .remoteConnectionClosed, .uncleanShutdown: return "the site closed the connection before its reply was whole"
        case .bodyLengthMismatch: return "the site sent a body of another length than its reply said"
        case .readTimeout, .connectTimeout, .deadlineExceeded: return "the site did not answer in time"
        default:
            // `HTTPClientError.description` is its code's name ("HTTPClientError.invalidProxyResponse"): kept short.
            let name = "\(client)".split(separator: ".").last.map(String.init) ?? "\(client)"
            return "the exchange with the site failed (\(name))"
        }
    }
}
