import NIOCore
import RecipeProtocol
import Testing
@testable import WebFetch
#if canImport(Glibc)
import Glibc
#endif

@Suite("This worker out of files, said as such")
struct OutOfDescriptorTests {
    @Test("SwiftNIO's EMFILE and ENFILE, alone or for every address tried, are this process's want of files; other failures are not")
    func recognised() {
        #expect(GuardedFetcher.isOutOfDescriptors(IOError(errnoCode: EMFILE, reason: "socket(domain:type:protocolSubtype:)")))
        #expect(GuardedFetcher.isOutOfDescriptors(IOError(errnoCode: ENFILE, reason: "socket(domain:type:protocolSubtype:)")))
        #expect(!GuardedFetcher.isOutOfDescriptors(IOError(errnoCode: ECONNREFUSED, reason: "connect")))
        #expect(!GuardedFetcher.isOutOfDescriptors(ServiceError(.fetchFailed, "no")))
    }
}
