// swift-tools-version:6.2
// The libFuzzer targets. Built only by Fuzz/run, with -sanitize=fuzzer (libFuzzer supplies main);
// what each target checks lives in the main package's FuzzChecks, which the test suite replays too.
import PackageDescription

let targets = [
    ("fuzz-storage-request", "StorageRequest"),
    ("fuzz-page", "Page"),
    ("fuzz-parsers", "Parsers"),
    ("fuzz-sync-apply", "SyncApply"),
    ("fuzz-photo-intake", "Photos"),
    ("fuzz-migration", "Migration"),
    ("fuzz-snapshot-install", "SnapshotInstall"),
    ("fuzz-storage-socket", "StorageSocket"),
    ("fuzz-worker-socket", "WorkerSocket"),
    ("fuzz-sync-peer", "SyncPeer"),
    ("fuzz-worker-jobs", "WorkerJobs"),
]

let package = Package(
    name: "RecipeVaultFuzz",
    platforms: [.macOS(.v15)],
    products: targets.map { .executable(name: $0.0, targets: [$0.1]) },
    dependencies: [.package(name: "RecipeVault", path: "..")],
    targets: [
        // libFuzzer's entry points, shared by every target.
        .target(name: "FuzzDriver", path: "Driver"),
    ] + targets.map { _, name in
        .executableTarget(
            name: name,
            dependencies: ["FuzzDriver", .product(name: "FuzzChecks", package: "RecipeVault")],
            path: "Targets/\(name)",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    }
)
