// swift-tools-version:6.2
import PackageDescription

/// Every target of ours: Swift 6 language mode, strict concurrency, no warnings.
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "RecipeVault",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "recipe-storage", targets: ["RecipeStorage"]),
        .executable(name: "recipes", targets: ["RecipesCLI"]),
        .executable(name: "messaging-bench", targets: ["MessagingBenchmark"]),
        .executable(name: "storage-bench", targets: ["StorageBenchmark"]),
        .executable(name: "import-predict", targets: ["ImportScore"]),
        .executable(name: "recipe-worker", targets: ["RecipeWorker"]),
        .executable(name: "import-bench", targets: ["ImportBenchmark"]),
        .executable(name: "sync-bench", targets: ["SyncBenchmark"]),
        .executable(name: "photo-bench", targets: ["PhotoBenchmark"]),
        .executable(name: "migrate-bench", targets: ["MigrateBenchmark"]),
        // What the fuzz targets check (Fuzz/Package.swift builds them with -sanitize=fuzzer).
        .library(name: "FuzzChecks", targets: ["FuzzChecks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // C library → ZeroMQ wrapper → protocol (pure values) → messaging → services → executables.
        .systemLibrary(
            name: "CZeroMQ",
            path: "Shared/CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ"],
            path: "Shared/ZeroMQ",
            swiftSettings: strict
        ),
        .target(
            name: "RecipeModel",
            path: "Shared/RecipeModel",
            swiftSettings: strict
        ),
        .target(
            name: "RecipeProtocol",
            dependencies: ["RecipeModel"],
            path: "Shared/RecipeProtocol",
            swiftSettings: strict
        ),
        .target(
            name: "Messaging",
            dependencies: [
                "ZeroMQ",
                "RecipeModel",
                "RecipeProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Messaging",
            swiftSettings: strict
        ),
        .target(
            // Command-line options both services take (ArgumentParser stays out of the libraries).
            name: "ServiceOptions",
            dependencies: ["RecipeProtocol", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Shared/ServiceOptions",
            swiftSettings: strict
        ),
        .target(
            name: "RecipeStore",
            dependencies: [
                "CFileSync",
                "RecipeModel",
                "RecipeProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/RecipeStore",
            swiftSettings: strict
        ),
        .target(
            name: "StorageService",
            dependencies: [
                "RecipeStore",
                "Messaging",
                "ZeroMQ",
                "RecipeModel",
                "RecipeProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/StorageService",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "RecipeStorage",
            dependencies: [
                "ZeroMQ",
                "StorageService",
                "Messaging",
                "RecipeProtocol",
                "ServiceOptions",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/RecipeStorage",
            swiftSettings: strict
        ),
        .target(
            name: "RecipeImport",
            dependencies: ["RecipeModel", "RecipeProtocol"],
            path: "Services/RecipeImport",
            swiftSettings: strict
        ),
        .target(
            // The worker's one way out to the web: every page, image and redirect goes through it.
            name: "WebFetch",
            dependencies: [
                "RecipeProtocol",
                "RecipeModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Services/WebFetch",
            swiftSettings: strict
        ),
        .systemLibrary(
            // libvips, for the worker's photo intake only (recipe-storage never links it).
            name: "CVips",
            path: "Services/CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        .target(
            // Photos made to fit the photo rules: turned upright, metadata out, scaled and re-encoded.
            name: "PhotoProcessing",
            dependencies: ["CVips", "RecipeModel", "RecipeProtocol", .product(name: "Logging", package: "swift-log")],
            path: "Services/PhotoProcessing",
            swiftSettings: strict
        ),
        .systemLibrary(
            // zlib: the zip and gzip files other recipe apps export.
            name: "CZlib",
            path: "Services/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            // syncfs(2), which Swift's Glibc module does not declare: one flush for a batch of photo files.
            name: "CFileSync",
            path: "Services/CFileSync"
        ),
        .target(
            // Other apps' exports read into recipes (recipes migrate), and RecipeVault's written in their formats (recipes export).
            name: "RecipeMigration",
            dependencies: ["CZlib", "RecipeImport", "RecipeModel", "RecipeProtocol", .product(name: "Crypto", package: "swift-crypto")],
            path: "Services/RecipeMigration",
            swiftSettings: strict
        ),
        .target(
            // Replica sync: moving changes and photo blobs between recipe-storage replicas.
            name: "ReplicaSync",
            dependencies: ["Messaging", "RecipeProtocol", .product(name: "Logging", package: "swift-log")],
            path: "Services/ReplicaSync",
            swiftSettings: strict
        ),
        .target(
            name: "WorkerService",
            dependencies: [
                "ReplicaSync",
                "PhotoProcessing",
                "RecipeMigration",
                "ZeroMQ",
                "WebFetch",
                "RecipeImport",
                "Messaging",
                "RecipeModel",
                "RecipeProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/WorkerService",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "RecipeWorker",
            dependencies: [
                "ZeroMQ",
                "WorkerService",
                "WebFetch",
                "Messaging",
                "PhotoProcessing",
                "RecipeProtocol",
                "ServiceOptions",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/RecipeWorker",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "RecipesCLI",
            dependencies: [
                "ZeroMQ",
                "Messaging",
                "RecipeImport",
                "RecipeMigration",
                "RecipeModel",
                "RecipeProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Services/RecipesCLI",
            swiftSettings: strict
        ),
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                // The baseline talks to libzmq directly, so it carries no wrapper cost.
                "CZeroMQ",
                "ZeroMQ",
                "RecipeProtocol",
                "TestRandom",
            ],
            path: "Benchmarks/BenchmarkSupport",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "MessagingBenchmark",
            dependencies: [
                "BenchmarkSupport",
                "Messaging",
                "RecipeProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/MessagingBenchmark",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "StorageBenchmark",
            dependencies: [
                "BenchmarkSupport",
                "Messaging",
                "RecipeModel",
                "RecipeProtocol",
                "RecipeStore",
                "StorageService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/StorageBenchmark",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "ImportScore",
            dependencies: ["RecipeImport"],
            path: "Benchmarks/ImportScore",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "SyncBenchmark",
            dependencies: [
                "BenchmarkSupport", "ReplicaSync", "RecipeStore", "RecipeProtocol", "Messaging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/SyncBenchmark",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "PhotoBenchmark",
            dependencies: ["BenchmarkSupport", "PhotoProcessing", "TestImages", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Benchmarks/PhotoBenchmark",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "MigrateBenchmark",
            dependencies: ["BenchmarkSupport", "RecipeMigration", "RecipeModel", "RecipeProtocol", "TestImages",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Benchmarks/MigrateBenchmark",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "ImportBenchmark",
            dependencies: ["RecipeImport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Benchmarks/ImportBenchmark",
            swiftSettings: strict
        ),
        .target(
            name: "FuzzChecks",
            dependencies: [
                "Messaging", "PhotoProcessing", "RecipeImport", "RecipeMigration", "RecipeModel", "RecipeProtocol", "RecipeStore", "ReplicaSync",
                "StorageService", "WebFetch", "WorkerService", "ZeroMQ", .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Fuzz/Checks",
            swiftSettings: strict
        ),
        .target(
            // A small HTTP server for tests: saved pages, slow and huge bodies, redirects, bot walls.
            name: "TestHTTPServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/Support/TestHTTPServer",
            swiftSettings: strict
        ),
        .testTarget(
            name: "WebFetchTests",
            dependencies: [
                "WebFetch", "TestHTTPServer", "TestThreads", "RecipeProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        .target(
            // Photos made by libvips for the tests and the photo benchmark: phone-like JPEGs with EXIF, HEIC, bombs.
            name: "TestImages",
            dependencies: ["CVips", "PhotoProcessing"],
            path: "Tests/Support/TestImages",
            swiftSettings: strict
        ),
        .target(
            // Blocking or long synchronous test work on a thread of its own, off the cooperative pool.
            name: "TestThreads",
            dependencies: ["Messaging"],
            path: "Tests/Support/TestThreads",
            swiftSettings: strict
        ),
        .target(
            // Damage done to a stopped storage's files, as a failing disk would do it.
            name: "TestDamage",
            dependencies: ["RecipeProtocol", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/Support/TestDamage",
            swiftSettings: strict
        ),
        .target(
            // Paths in the temporary folder that the test process removes when it exits.
            name: "TestScratch",
            path: "Tests/Support/TestScratch",
            swiftSettings: strict
        ),
        .target(
            // What tests of recipes share: comparing a recipe with what came back from a round trip.
            name: "TestRecipes",
            dependencies: ["RecipeProtocol"],
            path: "Tests/Support/TestRecipes",
            swiftSettings: strict
        ),
        .target(
            // A seeded generator for the tests, so a failing run replays from its seed.
            name: "TestRandom",
            path: "Tests/Support/TestRandom",
            swiftSettings: strict
        ),
        .testTarget(
            name: "PhotoProcessingTests",
            dependencies: ["PhotoProcessing", "TestImages", "TestThreads", "RecipeModel", "RecipeProtocol"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ZeroMQTests",
            dependencies: ["ZeroMQ", "TestRandom", "TestScratch", "TestThreads"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RecipeModelTests",
            dependencies: ["RecipeModel", "TestRandom", "TestThreads"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RecipeStoreTests",
            dependencies: [
                "RecipeStore",
                "RecipeModel",
                "RecipeProtocol",
                "TestRandom",
                "TestScratch",
                "TestThreads",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WorkerServiceTests",
            dependencies: ["WorkerService", "Messaging", "RecipeProtocol", "RecipeStore", "WebFetch", "TestHTTPServer", "TestImages", "TestScratch", "TestThreads"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReplicaSyncTests",
            dependencies: [
                "ReplicaSync",
                "RecipeStore",
                "RecipeModel",
                "RecipeProtocol",
                "TestRandom",
                "TestThreads",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RecipeProtocolTests",
            dependencies: ["RecipeProtocol", "TestRandom", "TestThreads"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MessagingTests",
            dependencies: [
                "Messaging",
                "TestHTTPServer",
                "TestRandom",
                "TestScratch",
                "TestThreads",
                "ZeroMQ",
                "RecipeProtocol",
                "RecipeModel",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "StorageServiceTests",
            dependencies: [
                "StorageService",
                "TestDamage",
                "TestImages",
                "TestRandom",
                "TestScratch",
                "RecipeStore",
                "ReplicaSync",
                "Messaging",
                "TestThreads",
                "ZeroMQ",
                "RecipeModel",
                "RecipeProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RecipeImportTests",
            dependencies: ["RecipeImport", "RecipeModel", "RecipeProtocol", "TestThreads"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RecipeMigrationTests",
            dependencies: ["RecipeMigration", "RecipeModel", "RecipeProtocol", "TestImages", "TestRandom", "TestRecipes", "TestThreads",
                           .product(name: "PropertyBased", package: "swift-property-based")],
            exclude: ["Fixtures", "make-fixtures.py"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RecipesCLITests",
            dependencies: ["RecipesCLI", "RecipeModel", "TestThreads", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FuzzCorpusTests",
            dependencies: ["FuzzChecks", "TestThreads"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["Messaging", "ZeroMQ", "RecipeProtocol", "RecipeModel", "RecipeStore", "ReplicaSync", "RecipeMigration", "TestHTTPServer", "TestImages",
                           "TestDamage", "TestRandom", "TestRecipes", "TestScratch", "TestThreads", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
    ]
)
