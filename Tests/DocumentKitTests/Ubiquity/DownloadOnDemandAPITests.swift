import Foundation
import Testing

@testable import DocumentKit

extension UbiquitySettingsTests {
    /// `evictUbiquitousItem`, `startDownloadingUbiquitousItem`, a query listing a document
    /// kept on the server only, and a Document opening one: the agent's part (its status, its
    /// placeholder replaced by the download) is played here as the agent plays it.
    @Suite("Download on demand: evict, download, placeholders in the query, opening")
    struct DownloadOnDemandAPITests {
        /// A container at `tree/Box` holding `Documents/Plan.txt`.
        func makeContainer(_ tree: TemporaryTree) throws -> (container: URL, plan: URL) {
            try UbiquityConfiguration.update {
                try $0.add(
                    UbiquityContainer(
                        name: "box", identifier: "iCloud.box", folder: tree.file("Box").path,
                        remote: "file:///srv/box"))
            }
            try tree.write("the plan, synced", to: "Box/Documents/Plan.txt")
            let container = try #require(
                FileManager.default.url(forUbiquityContainerIdentifier: "iCloud.box"))
            return (container, container.appendingPathComponent("Documents/Plan.txt"))
        }

        /// Writes the agent's status recording `file` as synced as it is now.
        func recordSynced(_ file: URL, in container: URL) throws {
            var status = UbiquityStatus(state: .upToDate, remote: "file:///srv/box")
            status.synced = [
                "Documents/Plan.txt": UbiquityStatus.record(of: try #require(FileStatus(path: file.path)))
            ]
            try status.write(to: SyncStateFiles.status(forContainer: container))
        }

        func placeholder(of url: URL) -> UbiquityPlaceholder? {
            UbiquityPlaceholder(contentsOf: UbiquityPlaceholder.placeholderURL(for: url))
        }

        @Test func onlyAnUploadedDocumentIsEvictedAndItsPlaceholderKeepsItsSize() throws {
            let tree = try TemporaryTree()
            try UbiquitySettingsTests.withSettings(in: tree) {
                let (container, plan) = try makeContainer(tree)
                // No agent has synced it: refused, nothing changes.
                #expect {
                    try FileManager.default.evictUbiquitousItem(at: plan)
                } throws: { error in
                    (error as? CocoaError)?.code == .ubiquitousFileUnavailable
                        && "\(error.localizedDescription)".contains(plan.path)
                }
                #expect(FileManager.default.fileExists(atPath: plan.path))
                try recordSynced(plan, in: container)
                // Changed since the agent synced it: refused.
                try Data("the plan, changed here".utf8).write(to: plan)
                #expect(throws: CocoaError.self) { try FileManager.default.evictUbiquitousItem(at: plan) }
                #expect(placeholder(of: plan) == nil)
                // Synced as it is: evicted.
                try recordSynced(plan, in: container)
                try FileManager.default.evictUbiquitousItem(at: plan)
                #expect(!FileManager.default.fileExists(atPath: plan.path))
                #expect(
                    placeholder(of: plan)
                        == UbiquityPlaceholder(name: "Plan.txt", size: 22, path: "Documents/Plan.txt"))
                #expect(FileManager.default.isUbiquitousItem(at: plan))
                // Again: nothing to do. Outside any container, or nothing there: Apple's errors.
                try FileManager.default.evictUbiquitousItem(at: plan)
                #expect {
                    try FileManager.default.evictUbiquitousItem(at: tree.file("elsewhere.txt"))
                } throws: { ($0 as? CocoaError)?.code == .ubiquitousFileUnavailable }
                #expect {
                    try FileManager.default.evictUbiquitousItem(
                        at: container.appendingPathComponent("none.txt"))
                } throws: { ($0 as? CocoaError)?.code == .fileNoSuchFile }
            }
        }

        @Test func startDownloadingAsksTheAgentOnceForADocumentOnTheServerOnly() throws {
            let tree = try TemporaryTree()
            try UbiquitySettingsTests.withSettings(in: tree) {
                let (container, plan) = try makeContainer(tree)
                let requests = UbiquityDownloadRequests(forContainer: container)
                // Here already: nothing asked.
                try FileManager.default.startDownloadingUbiquitousItem(at: plan)
                #expect(requests.load().isEmpty)
                try recordSynced(plan, in: container)
                try FileManager.default.evictUbiquitousItem(at: plan)
                try FileManager.default.startDownloadingUbiquitousItem(at: plan)
                try FileManager.default.startDownloadingUbiquitousItem(at: plan)
                #expect(requests.load() == ["Documents/Plan.txt"])
                #expect(
                    FileManager.default.fileExists(atPath: SyncStateFiles.wake(forContainer: container).path))
                #expect {
                    try FileManager.default.startDownloadingUbiquitousItem(
                        at: container.appendingPathComponent("none.txt"))
                } throws: { ($0 as? CocoaError)?.code == .fileNoSuchFile }
            }
        }

        @Test func aQueryListsADocumentOnTheServerOnlyWithItsSizeAndFollowsItsEvictionAndDownload()
            async throws
        {
            let tree = try TemporaryTree()
            try await UbiquitySettingsTests.withSettings(in: tree) {
                let (container, plan) = try makeContainer(tree)
                try recordSynced(plan, in: container)
                let (query, _) = try await MetadataFixture.gatheredQuery(of: [
                    NSMetadataQueryUbiquitousDocumentsScope
                ])
                defer { query.stop() }
                func planItem() -> NSMetadataItem? {
                    (query.results as? [NSMetadataItem])?.first {
                        $0.value(forAttribute: NSMetadataItemFSNameKey) as? String == "Plan.txt"
                    }
                }
                func downloading() -> String? {
                    planItem()?.value(forAttribute: NSMetadataUbiquitousItemDownloadingStatusKey) as? String
                }
                #expect(downloading() == NSMetadataUbiquitousItemDownloadingStatusCurrent)
                try FileManager.default.evictUbiquitousItem(at: plan)
                #expect(
                    await queryEventually {
                        downloading() == NSMetadataUbiquitousItemDownloadingStatusNotDownloaded
                    })
                #expect(query.resultCount == 1)
                #expect(
                    (planItem()?.value(forAttribute: NSMetadataItemFSSizeKey) as? NSNumber)?.int64Value == 16)
                #expect(
                    (planItem()?.value(forAttribute: NSMetadataItemURLKey) as? URL)?.lastPathComponent
                        == "Plan.txt")

                // A gathering that starts now finds it too.
                let (fresh, _) = try await MetadataFixture.gatheredQuery(of: [
                    NSMetadataQueryUbiquitousDocumentsScope
                ])
                #expect(fresh.resultCount == 1)
                fresh.stop()

                // The agent's download arrives and replaces the placeholder.
                try Data("the plan, synced".utf8).write(to: plan)
                try FileManager.default.removeItem(at: UbiquityPlaceholder.placeholderURL(for: plan))
                #expect(
                    await queryEventually {
                        downloading() != NSMetadataUbiquitousItemDownloadingStatusNotDownloaded
                    })
                #expect(query.resultCount == 1)
            }
        }

        @MainActor
        @Test func openingADocumentOnTheServerOnlyDownloadsItFirstWithProgress() async throws {
            let tree = try TemporaryTree()
            // As withSettings does, on the main actor the document needs.
            let previous = UbiquityConfiguration.configurationHome
            UbiquityConfiguration.configurationHome = tree.file("config")
            defer { UbiquityConfiguration.configurationHome = previous }
            do {
                let (container, plan) = try makeContainer(tree)
                try recordSynced(plan, in: container)
                try FileManager.default.evictUbiquitousItem(at: plan)
                let document = PresentedTextDocument(fileURL: plan)
                // The agent: sees the request, then puts the document in place.
                let agent = Task.detached { [container, plan] in
                    let requests = UbiquityDownloadRequests(forContainer: container)
                    while requests.load().isEmpty { try await Task.sleep(for: .milliseconds(10)) }
                    try await Task.sleep(for: .milliseconds(300))
                    try Data("the plan, synced".utf8).write(to: plan)
                    try FileManager.default.removeItem(at: UbiquityPlaceholder.placeholderURL(for: plan))
                }
                let opening = Task { await document.open() }
                #expect(
                    await waitUntil {
                        document.documentState.contains(.progressAvailable) && document.progress != nil
                    })
                #expect(document.progress?.totalUnitCount == 16)
                #expect(await opening.value)
                try await agent.value
                #expect(document.text == "the plan, synced")
                #expect(!document.documentState.contains(.progressAvailable))
                _ = await document.close()

                // Nothing comes (no agent): opening fails in time, naming the document.
                try recordSynced(plan, in: container)
                try FileManager.default.evictUbiquitousItem(at: plan)
                let waiting = PresentedTextDocument(fileURL: plan)
                waiting.downloadTimeout = .milliseconds(300)
                #expect(await waiting.open() == false)
                #expect(waiting.errorCodes == [.timedOut], "\(waiting.errorMessages)")
                #expect(waiting.errorMessages.first?.contains("Plan.txt") == true)
            }
        }
    }
}
