// swift-tools-version:6.1
// DocumentKit built with its package trait RequiredDocumentInitializers, as a project that makes
// documents from a metatype builds it: scripts/test builds and runs this package's scenario.
import PackageDescription

let package = Package(
    name: "RequiredInitializers",
    dependencies: [
        .package(name: "DocumentKit", path: "../..", traits: ["RequiredDocumentInitializers"])
    ],
    targets: [
        .executableTarget(
            name: "required-initializers",
            dependencies: [.product(name: "DocumentKit", package: "DocumentKit")],
            path: "Sources/required-initializers")
    ]
)
