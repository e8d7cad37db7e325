// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "DocumentKit",
    products: [
        .library(name: "DocumentKit", targets: ["DocumentKit"]),
        .library(name: "DocumentSync", targets: ["DocumentSync"]),
        .executable(name: "docbench", targets: ["docbench"]),
        .executable(name: "locus", targets: ["locus"]),
        .executable(name: "symmetry", targets: ["symmetry"]),
        .executable(name: "ste", targets: ["ste"]),
        .executable(name: "docs", targets: ["docs"]),
    ],
    // Off by default. With it, Document's `init(fileURL:)` and NSDocument's initializers are
    // `required`: generic code may make a document from a metatype, as with Apple's
    // Objective-C classes, and subclasses write `required` on their overrides of them
    // (docs/Porting.md, "Constructing a document from a metatype").
    traits: [
        .trait(
            name: "RequiredDocumentInitializers",
            description:
                "Document's init(fileURL:) and NSDocument's initializers are required, so that generic code can make a document from a metatype (T(fileURL:)); subclasses then mark their overrides of them required."
        )
    ],
    targets: [
        .target(name: "CDocumentSystem"),
        // OpenSSL's libcrypto: SHA-256 for the version store's chunk names.
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", providers: [.apt(["libssl-dev"])]),
        // Debian's libsqlite3: the version store's identity index, and the sync journal above.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "DocumentKit",
            dependencies: ["CDocumentSystem", "CCrypto", "CSQLite"]
        ),

        // Sync of a container with a remote, above DocumentKit: the journal is SQLite (through
        // DocumentKit's SQLite/), the remotes a local folder, WebDAV, S3 (signed with libcrypto's
        // HMAC) and an in-memory one for the simulation.
        // HTTP for WebDAV and S3: libcurl's easy interface, one blocking transfer a thread.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "DocumentSync", dependencies: ["DocumentKit", "CSQLite", "CCrypto", "CCurl"]),
        .testTarget(name: "DocumentSyncTests", dependencies: ["DocumentSync", "DocumentKit"]),

        .executableTarget(
            name: "docbench",
            dependencies: ["DocumentKit", "DocumentSync"]
        ),
        // docbench's command line, run as a real process.
        .testTarget(name: "DocbenchTests", dependencies: ["docbench"]),
        // Spawned by the tests as a real child process: crash, rlimit and privilege tests.
        .executableTarget(
            name: "DocumentKitTestChild",
            dependencies: ["DocumentKit", "SimpleTextEditorDocument", "CDocumentSystem"]
        ),
        .testTarget(
            name: "DocumentKitTests",
            dependencies: ["DocumentKit", "CDocumentSystem", "DocumentKitTestChild"]
        ),

        // The apps: the Simple Text Editor in the terminal, and the command-line tool over the
        // same container of text documents.
        .systemLibrary(
            name: "CNcursesw", path: "Sources/CNcursesw", providers: [.apt(["libncurses-dev"])]),
        // TextContainer merges conflicts with DocumentSync's three-way merge (`TextMerge`).
        .target(
            name: "TextContainer", dependencies: ["DocumentKit", "DocumentSync", "SimpleTextEditorDocument"]),
        .executableTarget(name: "ste", dependencies: ["TextContainer", "DocumentSync", "CNcursesw"]),
        .executableTarget(name: "docs", dependencies: ["TextContainer", "DocumentSync", "CDocumentSystem"]),
        .testTarget(
            name: "AppsTests", dependencies: ["TextContainer", "DocumentKit", "ste", "docs"],
            path: "Tests/AppsTests"),

        // Model-layer code written as iOS and macOS developers write it, differing from what
        // compiles against Apple's SDKs only in its imports: in Swift 5 mode and Swift 6 mode,
        // as such code exists. PortingTests runs a scenario with each.
        .target(
            name: "PortingSwift5", dependencies: ["DocumentKit"], path: "Tests/Porting/Swift5",
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .target(name: "PortingSwift6", dependencies: ["DocumentKit"], path: "Tests/Porting/Swift6"),
        // The porting corpus: the calls of model-layer files from other public repositories,
        // each in its source's language mode (Tests/PortingCorpus/README.md, docs/Porting.md).
        .target(
            name: "PortingCorpusSwift5", dependencies: ["DocumentKit"], path: "Tests/PortingCorpus/Swift5",
            // The calls of the issue-29 items that have landed, compiled as their sources wrote them.
            swiftSettings: [
                .swiftLanguageMode(.v5), .define("DOCUMENTKIT_GAP_4"), .define("DOCUMENTKIT_GAP_5"),
                .define("DOCUMENTKIT_GAP_6"), .define("DOCUMENTKIT_GAP_4_NONISOLATED"),
            ]),
        .target(
            name: "PortingCorpusSwift6", dependencies: ["DocumentKit"], path: "Tests/PortingCorpus/Swift6"),
        // The README's example, verbatim (PortingTests checks that it is, and runs it).
        .executableTarget(name: "readme-example", dependencies: ["DocumentKit"], path: "Tests/Readme"),
        // An iCloud app's scenario across two devices, in a process of its own (its settings
        // are the process's), run and checked by PortingTests.
        .executableTarget(
            name: "porting-cloud-notes",
            dependencies: ["PortingSwift5", "PortingSwift6", "DocumentKit", "DocumentSync"],
            path: "Tests/PortingCloudNotes"),
        .testTarget(
            name: "PortingTests",
            dependencies: [
                "PortingSwift5", "PortingSwift6", "PortingCorpusSwift5", "PortingCorpusSwift6", "DocumentKit",
                "readme-example", "porting-cloud-notes", "docs",
            ],
            path: "Tests/PortingTests"),

        // The seed apps' documents, ported: Examples/README.md says which seed each comes from.
        .target(
            name: "SimpleTextEditorDocument", dependencies: ["DocumentKit"], path: "Examples/SimpleTextEditor"
        ),
        .target(name: "Locus", dependencies: ["DocumentKit"], path: "Examples/Locus/Locus"),
        .executableTarget(name: "locus", dependencies: ["Locus"], path: "Examples/Locus/locus"),
        .target(name: "Symmetry", dependencies: ["DocumentKit"], path: "Examples/Symmetry/Symmetry"),
        .executableTarget(name: "symmetry", dependencies: ["Symmetry"], path: "Examples/Symmetry/symmetry"),
        .testTarget(
            name: "ExamplesTests",
            dependencies: [
                "SimpleTextEditorDocument", "Locus", "Symmetry", "DocumentKit", "symmetry", "locus",
            ],
            path: "Examples/Tests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
