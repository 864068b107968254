import Foundation

/// What each fuzz target's executable hands libFuzzer: its check, run on every input. Only the
/// fuzz build compiles this (it calls into libFuzzer); the checks themselves live in FuzzChecks.
public enum FuzzDriver {
    /// The target's check; set once, before libFuzzer starts.
    nonisolated(unsafe) private static var check: (Data) -> Void = { _ in }

    /// Runs libFuzzer's driver with the command line, calling `check` with every input.
    public static func run(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                           _ check: @escaping (Data) -> Void) -> CInt {
        Self.check = check
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments, fuzzOneInput)
    }

    static func input(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        check(start.map { Data(bytes: $0, count: count) } ?? Data())
        return 0
    }
}

/// libFuzzer's entry point: one input, checked by the target's check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzDriver.input(start, count)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
