import DocumentKit
import Foundation
import Testing

extension UbiquitySettingsTests {
    /// NSMetadataQuery's ubiquitous scopes and item attributes, over a container whose agent's
    /// status is written here as an agent writes it.
    @Suite("NSMetadataQuery: ubiquitous scopes and item attributes") struct UbiquitousQueryTests {
        @Test func withNoContainerTheUbiquitousScopesGatherNothing() async throws {
            let tree = try TemporaryTree()
            try await withSettings(in: tree) {
                for scope in [
                    NSMetadataQueryUbiquitousDocumentsScope, NSMetadataQueryUbiquitousDataScope,
                    NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope,
                ] {
                    let (query, _) = try await MetadataFixture.gatheredQuery(of: [scope])
                    #expect(query.resultCount == 0)
                    #expect(query.lastError == nil)
                    #expect(query.isStarted)
                    query.stop()
                }
            }
        }

        /// A container at `tree/Box` with a document and a data file, and one file outside.
        func makeContainer(_ tree: TemporaryTree) throws -> URL {
            try UbiquityConfiguration.update {
                try $0.add(
                    UbiquityContainer(
                        name: "box", identifier: "iCloud.box", folder: tree.file("Box").path,
                        remote: "file:///srv/box"))
            }
            try tree.write("plan", to: "Box/Documents/Plan.txt")
            try tree.write("{}", to: "Box/state.json")
            try tree.write("outside", to: "Outside/Other.txt")
            return try #require(FileManager.default.url(forUbiquityContainerIdentifier: "iCloud.box"))
        }

        func names(_ query: DocumentQuery) -> [String] {
            (query.results as? [NSMetadataItem] ?? []).compactMap {
                $0.value(forAttribute: NSMetadataItemFSNameKey) as? String
            }.sorted()
        }

        @Test func theDocumentsScopeIsTheContainersDocumentsAndTheDataScopeTheRest() async throws {
            let tree = try TemporaryTree()
            try await withSettings(in: tree) {
                _ = try makeContainer(tree)
                let (documents, _) = try await MetadataFixture.gatheredQuery(of: [
                    NSMetadataQueryUbiquitousDocumentsScope
                ])
                #expect(names(documents) == ["Plan.txt"])
                documents.stop()
                let (data, _) = try await MetadataFixture.gatheredQuery(of: [
                    NSMetadataQueryUbiquitousDataScope
                ])
                #expect(names(data) == ["state.json"])
                data.stop()
                let (both, _) = try await MetadataFixture.gatheredQuery(of: [
                    NSMetadataQueryUbiquitousDocumentsScope, NSMetadataQueryUbiquitousDataScope,
                ])
                #expect(names(both) == ["Plan.txt", "state.json"])
                both.stop()
            }
        }

        @Test func itemsCarryTheAgentsStatusUnderApplesKeysAndFollowItLive() async throws {
            let tree = try TemporaryTree()
            try await withSettings(in: tree) {
                let container = try makeContainer(tree)
                let plan = container.appendingPathComponent("Documents/Plan.txt")
                let statusFile = SyncStateFiles.status(forContainer: container)
                #expect(UbiquityStatus.read(forContainer: container) == nil)
                let (query, recorder) = try await MetadataFixture.gatheredQuery(
                    of: [NSMetadataQueryUbiquitousDocumentsScope, tree.file("Outside")])
                defer { query.stop() }
                func item(_ name: String) -> NSMetadataItem? {
                    (query.results as? [NSMetadataItem])?.first {
                        $0.value(forAttribute: NSMetadataItemFSNameKey) as? String == name
                    }
                }
                func flag(_ name: String, _ key: String) -> Bool? {
                    (item(name)?.value(forAttribute: key) as? NSNumber)?.boolValue
                }
                // No agent has run: in iCloud, on this device, not uploaded.
                #expect(flag("Plan.txt", NSMetadataItemIsUbiquitousKey) == true)
                #expect(flag("Other.txt", NSMetadataItemIsUbiquitousKey) == false)
                #expect(
                    item("Other.txt")?.value(forAttribute: NSMetadataUbiquitousItemDownloadingStatusKey)
                        == nil)
                #expect(
                    item("Plan.txt")?.value(forAttribute: NSMetadataUbiquitousItemDownloadingStatusKey)
                        as? String
                        == NSMetadataUbiquitousItemDownloadingStatusCurrent)
                #expect(flag("Plan.txt", NSMetadataUbiquitousItemIsUploadedKey) == false)
                #expect(
                    item("Plan.txt")?.value(forAttribute: NSMetadataUbiquitousItemContainerDisplayNameKey)
                        as? String
                        == "box")

                // The agent uploads it.
                var status = UbiquityStatus(state: .syncing, remote: "file:///srv/box")
                status.uploading = ["Documents/Plan.txt"]
                status.percent = ["Documents/Plan.txt": 40]
                try status.write(to: statusFile)
                #expect(
                    await queryEventually { flag("Plan.txt", NSMetadataUbiquitousItemIsUploadingKey) == true }
                )
                #expect(
                    (item("Plan.txt")?.value(forAttribute: NSMetadataUbiquitousItemPercentUploadedKey)
                        as? NSNumber)?
                        .doubleValue == 40)
                #expect(
                    item("Plan.txt").map {
                        $0.attributes.contains(NSMetadataUbiquitousItemPercentUploadedKey)
                    } == true)

                status.state = .upToDate
                status.uploading = []
                status.percent = [:]
                status.synced = [
                    "Documents/Plan.txt": UbiquityStatus.record(of: try #require(FileStatus(path: plan.path)))
                ]
                try status.write(to: statusFile)
                #expect(
                    await queryEventually { flag("Plan.txt", NSMetadataUbiquitousItemIsUploadedKey) == true })
                #expect(flag("Plan.txt", NSMetadataUbiquitousItemIsUploadingKey) == false)
                #expect(recorder.updates.withLock { !$0.isEmpty })

                // Saved again here: not uploaded, before any agent runs.
                try Data("plan, longer".utf8).write(to: plan)
                #expect(
                    await queryEventually { flag("Plan.txt", NSMetadataUbiquitousItemIsUploadedKey) == false }
                )

                // A newer version on the server, and a failed upload, as Apple reports them.
                status.downloading = ["Documents/Plan.txt"]
                status.state = .syncing
                status.uploadErrors = ["Documents/Plan.txt": "the server refused the write (507)"]
                try status.write(to: statusFile)
                #expect(
                    await queryEventually {
                        item("Plan.txt")?.value(forAttribute: NSMetadataUbiquitousItemDownloadingStatusKey)
                            as? String
                            == NSMetadataUbiquitousItemDownloadingStatusDownloaded
                    })
                #expect(flag("Plan.txt", NSMetadataUbiquitousItemIsDownloadingKey) == true)
                let error =
                    item("Plan.txt")?.value(forAttribute: NSMetadataUbiquitousItemUploadingErrorKey)
                    as? NSError
                #expect(error?.domain == NSCocoaErrorDomain)
                #expect(error?.localizedDescription.contains("507") == true)
                // NSMetadataItem(url:) reads the same.
                let single = try #require(NSMetadataItem(url: plan))
                #expect(
                    (single.value(forAttribute: NSMetadataUbiquitousItemIsDownloadingKey) as? NSNumber)?
                        .boolValue == true)
            }
        }
    }
}
