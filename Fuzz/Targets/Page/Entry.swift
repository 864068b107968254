import Foundation
import FuzzChecks

/// libFuzzer's entry point: one input, checked by `FuzzChecks.page`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    FuzzChecks.page(data)
    return 0
}
