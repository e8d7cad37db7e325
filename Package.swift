// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DocumentKit",
    products: [
        .library(name: "DocumentKit", targets: ["DocumentKit"]),
        .executable(name: "docbench", targets: ["docbench"]),
        .executable(name: "locus", targets: ["locus"]),
        .executable(name: "symmetry", targets: ["symmetry"]),
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
            dependencies: ["DocumentKit", "SimpleTextEditorDocument"]
        ),
        .testTarget(
            name: "DocumentKitTests",
            dependencies: ["DocumentKit", "CDocumentSystem", "DocumentKitTestChild"]
        ),

        // The seed apps' documents, ported: Examples/README.md says which seed each comes from.
        .target(name: "SimpleTextEditorDocument", dependencies: ["DocumentKit"], path: "Examples/SimpleTextEditor"),
        .target(name: "Locus", dependencies: ["DocumentKit"], path: "Examples/Locus/Locus"),
        .executableTarget(name: "locus", dependencies: ["Locus"], path: "Examples/Locus/locus"),
        .target(name: "Symmetry", dependencies: ["DocumentKit"], path: "Examples/Symmetry/Symmetry"),
        .executableTarget(name: "symmetry", dependencies: ["Symmetry"], path: "Examples/Symmetry/symmetry"),
        .testTarget(
            name: "ExamplesTests",
            dependencies: ["SimpleTextEditorDocument", "Locus", "Symmetry", "DocumentKit", "symmetry", "locus"],
            path: "Examples/Tests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
