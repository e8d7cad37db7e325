import Foundation
import Testing

@testable import DocumentKit

extension UbiquitySettingsTests {
    /// `url.resourceValues(forKeys:)` with Apple's ubiquitous keys and the promised-item calls,
    /// in this process: what Foundation's keys stay, what an item outside every container
    /// answers, and the status the agent publishes (written here as an agent writes it; the
    /// Porting scenario checks them against a real engine's).
    @Suite("Ubiquitous URL resource values and promised items")
    struct UbiquitousResourceValuesTests {
        static let ubiquitousKeys: [URLResourceKey] = [
            .isUbiquitousItemKey, .ubiquitousItemDownloadingStatusKey, .ubiquitousItemIsUploadedKey,
            .ubiquitousItemIsUploadingKey, .ubiquitousItemIsDownloadingKey,
            .ubiquitousItemContainerDisplayNameKey,
            .ubiquitousItemUploadingErrorKey, .ubiquitousItemDownloadRequestedKey,
        ]

        /// A container named "box" at `tree/Box`.
        func addContainer(in tree: TemporaryTree) throws {
            try UbiquityConfiguration.update {
                try $0.add(
                    UbiquityContainer(
                        name: "box", identifier: "iCloud.box", folder: tree.file("Box").path,
                        remote: "file:///srv/box"))
            }
        }

        @Test func foundationsKeysStayAndAnItemOutsideEveryContainerIsNotUbiquitous() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                try addContainer(in: tree)
                let outside = try tree.write("outside", to: "Other/note.txt")
                let values = try outside.resourceValues(
                    forKeys: [.fileSizeKey, .nameKey] + Self.ubiquitousKeys)
                #expect(values.fileSize == 7)
                #expect(values.name == "note.txt")
                #expect(values.isUbiquitousItem == false)
                #expect(values.ubiquitousItemDownloadingStatus == nil)
                #expect(values.ubiquitousItemIsUploaded == nil)
                // Only the keys asked for have values, as Apple documents.
                #expect(
                    try outside.resourceValues(forKeys: [.fileSizeKey]).allValues.keys.sorted {
                        $0.rawValue < $1.rawValue
                    } == [.fileSizeKey])
                // Foundation's errors pass through.
                #expect(throws: (any Error).self) {
                    try tree.file("Other/missing.txt").resourceValues(forKeys: [
                        .fileSizeKey, .isUbiquitousItemKey,
                    ])
                }
            }
        }

        @Test func anItemOfAContainerFollowsTheAgentsStatus() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                try addContainer(in: tree)
                let plan = try tree.write("plan", to: "Box/Documents/Plan.txt")
                let container = tree.file("Box")
                // No agent has published anything: ubiquitous, current, not uploaded.
                var values = try plan.resourceValues(forKeys: Self.ubiquitousKeys)
                #expect(values.isUbiquitousItem == true)
                #expect(values.ubiquitousItemDownloadingStatus == .current)
                #expect(values.ubiquitousItemIsUploaded == false)
                #expect(values.ubiquitousItemContainerDisplayName == "box")

                var status = UbiquityStatus(state: .syncing, remote: "file:///srv/box")
                status.synced = [
                    "Documents/Plan.txt": UbiquityStatus.record(of: try #require(FileStatus(path: plan.path)))
                ]
                try status.write(to: SyncStateFiles.status(forContainer: container))
                values = try plan.resourceValues(forKeys: Self.ubiquitousKeys)
                #expect(values.ubiquitousItemIsUploaded == true)
                #expect(values.ubiquitousItemIsUploading == false)

                // A newer version on its way: downloaded (stale), downloading, requested.
                status.downloading = ["Documents/Plan.txt"]
                try status.write(to: SyncStateFiles.status(forContainer: container))
                values = try plan.resourceValues(forKeys: Self.ubiquitousKeys)
                #expect(values.ubiquitousItemDownloadingStatus == .downloaded)
                #expect(values.ubiquitousItemIsDownloading == true)
                #expect(values.ubiquitousItemDownloadRequested == true)

                // Saved since: not uploaded at once; the upload's failure is a Cocoa error.
                status.downloading = []
                status.uploadErrors = [
                    "Documents/Plan.txt": "Could not write “Documents/Plan.txt”: no space left"
                ]
                try status.write(to: SyncStateFiles.status(forContainer: container))
                try Data("plan, edited".utf8).write(to: plan)
                values = try plan.resourceValues(forKeys: Self.ubiquitousKeys)
                #expect(values.ubiquitousItemIsUploaded == false)
                let error = try #require(values.ubiquitousItemUploadingError)
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == CocoaError.ubiquitousFileUbiquityServerNotAvailable.rawValue)
                #expect(error.localizedDescription.contains("no space left"))

                // A Set held in a variable reaches Foundation's own method, which answers no
                // ubiquitous key (docs/Porting.md): the array form, and the promised form, do.
                let keys: Set<URLResourceKey> = [.isUbiquitousItemKey]
                #expect(try plan.resourceValues(forKeys: keys).isUbiquitousItem == nil)
                #expect(try plan.resourceValues(forKeys: Array(keys)).isUbiquitousItem == true)
                #expect(try plan.promisedItemResourceValues(forKeys: keys).isUbiquitousItem == true)
            }
        }

        @Test func aPlaceholdersPromisedValuesAreItsDocumentsAndItsOwnValuesFail() throws {
            let tree = try TemporaryTree()
            try withSettings(in: tree) {
                try addContainer(in: tree)
                let plan = tree.file("Box/Documents/Plan.txt")
                try FileManager.default.createDirectory(
                    at: plan.deletingLastPathComponent(), withIntermediateDirectories: true)
                try UbiquityPlaceholder(name: "Plan.txt", size: 1234, path: "Documents/Plan.txt").encoded()
                    .write(to: UbiquityPlaceholder.placeholderURL(for: plan))
                #expect {
                    try plan.resourceValues(forKeys: [.ubiquitousItemDownloadingStatusKey])
                } throws: { ($0 as? CocoaError)?.code == .fileReadNoSuchFile }
                let values = try plan.promisedItemResourceValues(forKeys: [
                    .nameKey, .fileSizeKey, .isRegularFileKey, .fileResourceTypeKey,
                    .contentModificationDateKey,
                    .ubiquitousItemDownloadingStatusKey, .isUbiquitousItemKey,
                ])
                #expect(values.name == "Plan.txt")
                #expect(values.fileSize == 1234)
                #expect(values.isRegularFile == true)
                #expect(values.fileResourceType == .regular)
                #expect(values.contentModificationDate == nil)
                #expect(values.ubiquitousItemDownloadingStatus == .notDownloaded)
                #expect(values.isUbiquitousItem == true)
                // Asked for: requested at once, before any agent took the request.
                #expect(
                    try plan.promisedItemResourceValues(forKeys: [.ubiquitousItemDownloadRequestedKey])
                        .ubiquitousItemDownloadRequested == false)
                try FileManager.default.startDownloadingUbiquitousItem(at: plan)
                #expect(
                    try plan.promisedItemResourceValues(forKeys: [.ubiquitousItemDownloadRequestedKey])
                        .ubiquitousItemDownloadRequested == true)
                var size: AnyObject?
                try (plan as NSURL).getPromisedItemResourceValue(&size, forKey: .fileSizeKey)
                #expect((size as? NSNumber)?.intValue == 1234)
                #expect(try plan.checkPromisedItemIsReachable())
                let nothing = tree.file("Box/Documents/Nothing.txt")
                #expect(throws: CocoaError.self) {
                    try nothing.promisedItemResourceValues(forKeys: [.nameKey])
                }
                #expect(throws: CocoaError.self) { try nothing.checkPromisedItemIsReachable() }
            }
        }
    }
}
