import FuzzChecks
import FuzzDriver

/// SwiftPM links an executable's `main` to `<target>_main`: hand the process to libFuzzer with `FuzzChecks.workerJobs`.
@_cdecl("WorkerJobs_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, FuzzChecks.workerJobs)
}
