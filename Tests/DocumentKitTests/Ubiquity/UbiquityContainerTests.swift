import DocumentKit
import Foundation
import Synchronization
import Testing

/// The suites that change the process's ubiquity settings (``UbiquityConfiguration/configurationHome``),
/// one at a time.
@Suite(.serialized) enum UbiquitySettingsTests {}

extension UbiquitySettingsTests {
    /// Points the process's ubiquity settings at a folder of `tree` while `body` runs.
    static func withSettings<Result>(in tree: TemporaryTree, _ body: () throws -> Result) rethrows -> Result {
        let previous = UbiquityConfiguration.configurationHome
        UbiquityConfiguration.configurationHome = tree.file("config")
        defer { UbiquityConfiguration.configurationHome = previous }
        return try body()
    }

    /// Points the process's ubiquity settings at a folder of `tree` while `body` runs.
    static func withSettings<Result>(in tree: TemporaryTree, _ body: () async throws -> Result) async rethrows
        -> Result
    {
        let previous = UbiquityConfiguration.configurationHome
        UbiquityConfiguration.configurationHome = tree.file("config")
        defer { UbiquityConfiguration.configurationHome = previous }
        return try await body()
    }

    /// A presenter that records where it was told its item moved.
    final class MoveRecorder: NSObject, FilePresenter, @unchecked Sendable {
        let moves = Mutex<[URL]>([])
        let url: Mutex<URL>
        let presentedItemOperationQueue = OperationQueue()
        init(_ url: URL) { self.url = Mutex(url) }
        var presentedItemURL: URL? { url.withLock { $0 } }
        func presentedItemDidMove(to newURL: URL) {
            url.withLock { $0 = newURL }
            moves.withLock { $0.append(newURL) }
        }
    }

    @Suite("Ubiquity containers: url(forUbiquityContainerIdentifier:), the identity token, setUbiquitous")
    struct ContainerTests {
        func add(_ name: String, folder: URL, identifier: String? = nil) throws {
            try UbiquityConfiguration.update {
                try $0.add(
                    UbiquityContainer(
                        name: name,
                        identifier: identifier ?? UbiquityContainer.defaultIdentifier(forName: name),
                        folder: folder.path, remote: "file:///srv/\(name)"))
            }
        }

        @Test func withNoContainerConfiguredTheAPIAnswersAsSignedOutOfICloud() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                let manager = FileManager.default
                #expect(manager.url(forUbiquityContainerIdentifier: nil) == nil)
                #expect(manager.url(forUbiquityContainerIdentifier: "iCloud.com.example.Notes") == nil)
                #expect(manager.ubiquityIdentityToken == nil)
                let file = try tree.write("hello", to: "note.txt")
                #expect(!manager.isUbiquitousItem(at: file))
                #expect {
                    try manager.setUbiquitous(
                        true, itemAt: file, destinationURL: tree.file("elsewhere/note.txt"))
                } throws: { error in
                    let cocoa = error as? CocoaError
                    return cocoa?.code == .fileWriteUnknown
                        && cocoa?.userInfo[NSLocalizedDescriptionKey].map { "\($0)" }?.contains(
                            "docs remote add") == true
                }
                #expect(try String(contentsOf: file, encoding: .utf8) == "hello")
            }
        }

        @Test func containersAreFoundByIdentifierAndTheFirstByNil() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                try add("notes", folder: tree.file("Notes"))
                let token = try #require(FileManager.default.ubiquityIdentityToken as? NSString)
                try add("work", folder: tree.file("Work"), identifier: "iCloud.com.example.Work")
                let notes = try #require(FileManager.default.url(forUbiquityContainerIdentifier: nil))
                #expect(
                    notes.standardizedFileURL.path
                        == tree.file("Notes").standardizedFileURL.resolvingSymlinksInPath().path)
                // Made when first asked for, as iCloud makes a container's folder.
                var isFolder: ObjCBool = false
                #expect(
                    FileManager.default.fileExists(atPath: notes.path, isDirectory: &isFolder)
                        && isFolder.boolValue)
                #expect(
                    FileManager.default.url(forUbiquityContainerIdentifier: "iCloud.com.example.Work")?
                        .lastPathComponent
                        == "Work")
                #expect(FileManager.default.url(forUbiquityContainerIdentifier: "iCloud.work") == nil)
                // The token stays while any container is configured, and changes after sign-out.
                #expect((FileManager.default.ubiquityIdentityToken as? NSString) == token)
                try UbiquityConfiguration.update { $0.remove(named: "notes") }
                #expect((FileManager.default.ubiquityIdentityToken as? NSString) == token)
                #expect(
                    FileManager.default.url(forUbiquityContainerIdentifier: nil)?.lastPathComponent == "Work")
                try UbiquityConfiguration.update { $0.remove(named: "work") }
                #expect(FileManager.default.ubiquityIdentityToken == nil)
                try add("notes", folder: tree.file("Notes"))
                let again = try #require(FileManager.default.ubiquityIdentityToken as? NSString)
                #expect(again != token)
            }
        }

        @Test func setUbiquitousMovesInAndOutAsACoordinatedMoveThatPresentersFollow() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                try add("notes", folder: tree.file("Notes"))
                let container = try #require(FileManager.default.url(forUbiquityContainerIdentifier: nil))
                let local = try tree.write("draft", to: "Local/Draft.txt")
                let inside = container.appendingPathComponent("Documents/Draft.txt")
                let presenter = MoveRecorder(local)
                FileCoordinator.addFilePresenter(presenter)
                defer { FileCoordinator.removeFilePresenter(presenter) }

                #expect(!FileManager.default.isUbiquitousItem(at: local))
                try FileManager.default.setUbiquitous(true, itemAt: local, destinationURL: inside)
                #expect(try String(contentsOf: inside, encoding: .utf8) == "draft")
                #expect(!FileManager.default.fileExists(atPath: local.path))
                #expect(FileManager.default.isUbiquitousItem(at: inside))
                presenter.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
                #expect(presenter.moves.withLock { $0.map(\.lastPathComponent) } == ["Draft.txt"])
                #expect(
                    presenter.presentedItemURL?.deletingLastPathComponent().lastPathComponent == "Documents")

                // Wrong sides, or something in the way: an error, and nothing moves.
                let taken = try tree.write("other", to: "Local/Taken.txt")
                #expect(throws: CocoaError.self) {
                    try FileManager.default.setUbiquitous(false, itemAt: inside, destinationURL: taken)
                }
                #expect {
                    try FileManager.default.setUbiquitous(false, itemAt: inside, destinationURL: taken)
                } throws: { ($0 as? CocoaError)?.code == .fileWriteFileExists }
                #expect {
                    try FileManager.default.setUbiquitous(
                        true, itemAt: taken, destinationURL: tree.file("Local/Elsewhere.txt"))
                } throws: { ($0 as? CocoaError)?.code == .fileWriteUnknown }
                #expect {
                    try FileManager.default.setUbiquitous(
                        false, itemAt: inside, destinationURL: container.appendingPathComponent("Copy.txt"))
                } throws: { ($0 as? CocoaError)?.code == .fileWriteUnknown }
                #expect {
                    try FileManager.default.setUbiquitous(
                        true, itemAt: tree.file("Local/Missing.txt"),
                        destinationURL: container.appendingPathComponent("M.txt"))
                } throws: { ($0 as? CocoaError)?.code == .fileNoSuchFile }
                #expect(try String(contentsOf: inside, encoding: .utf8) == "draft")
                #expect(try String(contentsOf: taken, encoding: .utf8) == "other")

                // And out again.
                let out = tree.file("Local/Back.txt")
                try FileManager.default.setUbiquitous(false, itemAt: inside, destinationURL: out)
                #expect(try String(contentsOf: out, encoding: .utf8) == "draft")
                #expect(!FileManager.default.isUbiquitousItem(at: out))
                presenter.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
                #expect(presenter.presentedItemURL?.lastPathComponent == "Back.txt")
            }
        }

        @Test func aDocumentKeptOnlyOnTheServerIsStillAUbiquitousItem() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                try add("notes", folder: tree.file("Notes"))
                let container = try #require(FileManager.default.url(forUbiquityContainerIdentifier: nil))
                let document = container.appendingPathComponent("Big.txt")
                #expect(!FileManager.default.isUbiquitousItem(at: document))
                let placeholder = UbiquityPlaceholder(name: "Big.txt", size: 1_234_567)
                try placeholder.encoded().write(to: UbiquityPlaceholder.placeholderURL(for: document))
                #expect(
                    UbiquityPlaceholder.placeholderURL(for: document).lastPathComponent == ".Big.txt.icloud")
                #expect(FileManager.default.isUbiquitousItem(at: document))
                #expect(
                    UbiquityPlaceholder(contentsOf: UbiquityPlaceholder.placeholderURL(for: document))
                        == placeholder)
                #expect(UbiquityPlaceholder.documentName(forPlaceholderName: ".Big.txt.icloud") == "Big.txt")
                for name in [".icloud", "..icloud", "Big.txt.icloud", ".Big.txt", "..hidden.icloud"] {
                    #expect(UbiquityPlaceholder.documentName(forPlaceholderName: name) == nil, "\(name)")
                }
                #expect(UbiquityPlaceholder(decoding: Data("not a plist".utf8)) == nil)
            }
        }

        @Test func overlappingOrDuplicateContainersAreRefusedAndABadFileIsNamed() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                try add("notes", folder: tree.file("Notes"))
                for (name, folder, identifier) in [
                    ("notes", "Other", nil), ("other", "Notes/Inner", nil), ("outer", "", nil),
                    ("work", "Work", "iCloud.notes"),
                ] {
                    #expect(throws: DocumentKitError.self, "\(name)") {
                        try add(
                            name, folder: folder.isEmpty ? tree.url : tree.file(folder),
                            identifier: identifier)
                    }
                }
                #expect(try UbiquityConfiguration.load().containers.map(\.name) == ["notes"])
                try Data("{ not json".utf8).write(to: UbiquityConfiguration.fileURL)
                #expect {
                    try UbiquityConfiguration.load()
                } throws: { error in
                    (error as? DocumentKitError)?.url == UbiquityConfiguration.fileURL
                        && "\(error)".contains("fix or remove it")
                }
                #expect(FileManager.default.url(forUbiquityContainerIdentifier: nil) == nil)
            }
        }

        /// Every setting a remote was added with is kept, and a file an older version wrote,
        /// which has fewer, is read with the ones it lacks off.
        @Test func aContainersRemoteSettingsAreKeptAndAnOlderFileStillReads() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                let added = UbiquityContainer(
                    name: "dav", identifier: "iCloud.dav", folder: tree.file("Notes").path,
                    remote: "https://dav.example.com/notes/", user: "ana", downloadsEagerly: false,
                    pollSeconds: 5, passwordFile: "/home/ana/.config/notes-password",
                    allowsUnsafeServer: true,
                    allowsInsecureHTTP: true)
                try UbiquityConfiguration.update { try $0.add(added) }
                #expect(try UbiquityConfiguration.load().containers == [added])

                try Data(
                    """
                    {"containers": [{"name": "old", "identifier": "iCloud.old", "folder": "/home/ana/Old",
                      "remote": "file:///srv/old", "downloadsEagerly": true}]}
                    """.utf8
                ).write(to: UbiquityConfiguration.fileURL)
                let old = try #require(try UbiquityConfiguration.load().containers.first)
                #expect(old.remote == "file:///srv/old" && old.user == nil && old.passwordFile == nil)
                #expect(!old.allowsUnsafeServer && !old.allowsInsecureHTTP && old.pollSeconds == nil)
            }
        }

        @Test func changesFromManyThreadsAtOnceAreAllKept() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                DispatchQueue.concurrentPerform(iterations: 16) { index in
                    try? add("c\(index)", folder: tree.file("C\(index)"))
                }
                let names = Set(try UbiquityConfiguration.load().containers.map(\.name))
                #expect(names == Set((0..<16).map { "c\($0)" }))
                let mode =
                    try FileManager.default.attributesOfItem(atPath: UbiquityConfiguration.fileURL.path)[
                        .posixPermissions] as? Int
                #expect(mode == 0o600)
            }
        }
    }
}
