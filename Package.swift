// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ObjectGraph",
    products: [
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .executable(name: "objectgraph-demo", targets: ["ObjectGraphDemo"]),
        .executable(name: "seedbench", targets: ["seedbench"]),
    ],
    targets: [
        .target(name: "ObjectGraph"),
        .executableTarget(name: "ObjectGraphDemo", dependencies: ["ObjectGraph"]),
        .executableTarget(name: "seedbench", dependencies: ["ObjectGraph"], path: "Benchmarks/seedbench"),
        .testTarget(name: "ObjectGraphTests", dependencies: ["ObjectGraph"]),
    ],
    swiftLanguageModes: [.v6]
)
