// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Roost",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "RoostCore", targets: ["RoostCore"]),
        .library(name: "RoostServer", targets: ["RoostServer"]),
        .library(name: "Roost", targets: ["Roost"]),
        .executable(name: "roost", targets: ["roost"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD"),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL"),
        // libssl for the SDK's wss:// client only (the server needs libcrypto alone).
        .systemLibrary(name: "CLibSSL", path: "Sources/CLibSSL"),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .systemLibrary(name: "CPCRE2", path: "Sources/CPCRE2"),
        .target(name: "CCurl", path: "Sources/CCurl"),
        // libpq for PostgreSQL storage (issue 21); Debian keeps its header in /usr/include/postgresql.
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "RoostCore", path: "Sources/RoostCore"),
        .target(
            name: "RoostServer",
            dependencies: [
                "RoostCore", "CMicroHTTPD", "COpenSSL", "CSQLite", "CPCRE2", "CCurl", "CLibPQ",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Server/RoostServer"
        ),
        .target(
            name: "Roost",
            dependencies: ["RoostCore", "CLibSSL", .product(name: "GRDB", package: "GRDB.swift")],
            path: "SDK/Roost"
        ),
        .executableTarget(
            name: "roost",
            dependencies: [
                "RoostServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Server/roost"
        ),
        .executableTarget(name: "roost-eventually-bench", dependencies: ["Roost"], path: "bench/EventuallyBench"),
        .executableTarget(
            name: "roost-query-bench",
            dependencies: ["RoostServer", "RoostCore"],
            path: "bench/QueryBench"
        ),
        .executableTarget(
            name: "todo", dependencies: ["Roost", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Todo"),
        .executableTarget(
            name: "sonnets", dependencies: ["Roost", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Sonnets", resources: [.copy("sonnets.txt")]),
        // The README's Swift snippets, compiled: ReadmeTests checks the README shows exactly this file.
        .executableTarget(name: "readme-snippets", dependencies: ["Roost"], path: "Examples/ReadmeSnippets"),
        .executableTarget(name: "eventually-crash-client", dependencies: ["Roost"], path: "Tests/EventuallyCrashClient"),
        .target(name: "RoostTestSupport", path: "Tests/Support"),
        .testTarget(
            name: "RoostTests",
            dependencies: ["Roost", "RoostCore", "RoostTestSupport", "roost", "eventually-crash-client", "todo", "sonnets",
                           "readme-snippets"],
            path: "Tests/RoostTests"
        ),
        .testTarget(name: "RoostCoreTests", dependencies: ["RoostCore"], path: "Tests/RoostCoreTests"),
        .testTarget(
            name: "RoostServerTests",
            dependencies: ["RoostServer", "RoostCore", "RoostTestSupport", "roost", .product(name: "Logging", package: "swift-log")],
            path: "Tests/RoostServerTests"
        ),
    ]
)
