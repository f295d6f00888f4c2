// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ObjectGraph",
    products: [
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .library(name: "ObjectGraphTesting", targets: ["ObjectGraphTesting"]),
        .executable(name: "objectgraph-demo", targets: ["ObjectGraphDemo"]),
        .executable(name: "seedbench", targets: ["seedbench"]),
        .executable(name: "appbench", targets: ["appbench"]),
        .executable(name: "microbench", targets: ["microbench"]),
        .executable(name: "objectgraph", targets: ["objectgraph"]),
    ],
    targets: [
        .target(name: "ObjectGraph"),
        .target(name: "ObjectGraphTesting", dependencies: ["ObjectGraph"]),
        .executableTarget(name: "ObjectGraphDemo", dependencies: ["ObjectGraph"]),
        .target(name: "BenchmarkSupport", dependencies: ["ObjectGraph"], path: "Benchmarks/Support"),
        .executableTarget(
            name: "seedbench", dependencies: ["ObjectGraph", "BenchmarkSupport"],
            path: "Benchmarks/seedbench"),
        .executableTarget(
            name: "appbench", dependencies: ["ObjectGraph", "BenchmarkSupport"],
            path: "Benchmarks/appbench"),
        .executableTarget(
            name: "microbench", dependencies: ["ObjectGraph", "BenchmarkSupport"],
            path: "Benchmarks/microbench",
            linkerSettings: [
                // Replace glibc's malloc family with the benchmark's counting one
                // (see Benchmarks/microbench/AllocationCounter.swift).
                .unsafeFlags(
                    ["malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc"]
                        .flatMap {
                            [
                                "-Xlinker", "--defsym=\($0)=objectgraph_counting_\($0)",
                                "-Xlinker", "--export-dynamic-symbol=\($0)",
                            ]
                        }, .when(platforms: [.linux]))
            ]),
        .target(name: "ObjectGraphInspector", dependencies: ["ObjectGraph"]),
        .executableTarget(name: "objectgraph", dependencies: ["ObjectGraphInspector"]),
        .testTarget(name: "ObjectGraphTests", dependencies: ["ObjectGraph", "ObjectGraphTesting"]),
        .testTarget(
            name: "ObjectGraphInspectorTests", dependencies: ["ObjectGraphInspector", "ObjectGraph"]),
    ],
    swiftLanguageModes: [.v6]
)
