// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DocumentKit",
    products: [
        .library(name: "DocumentKit", targets: ["DocumentKit"]),
        .executable(name: "docbench", targets: ["docbench"]),
    ],
    targets: [
        .target(name: "CDocumentSystem"),
        .target(
            name: "DocumentKit",
            dependencies: ["CDocumentSystem"]
        ),
        .executableTarget(
            name: "docbench",
            dependencies: ["DocumentKit"]
        ),
        // Spawned by the tests as a real child process: crash, rlimit and privilege tests.
        .executableTarget(
            name: "DocumentKitTestChild",
            dependencies: ["DocumentKit"]
        ),
        .testTarget(
            name: "DocumentKitTests",
            dependencies: ["DocumentKit", "CDocumentSystem", "DocumentKitTestChild"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
