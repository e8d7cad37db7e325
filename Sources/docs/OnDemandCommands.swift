import DocumentKit
import DocumentSync
import Foundation
import TextContainer

/// `docs evict NAME` and `docs download NAME`: documents kept on the server only, in a
/// container of `docs remote add`.
@MainActor
enum OnDemandCommands {
    /// The URL of the document `name`, here or kept on the server only.
    static func documentURL(_ container: TextContainer, name: String, action: String) throws -> URL {
        let url: URL
        do {
            url = try container.url(forDocumentNamed: name)
        } catch {
            throw DocsFailure.cannot(action, name, error)
        }
        let fileManager = FileManager.default
        guard
            fileManager.fileExists(atPath: url.path)
                || fileManager.fileExists(atPath: UbiquityPlaceholder.placeholderURL(for: url).path)
        else {
            throw DocsFailure.failure("cannot \(action) “\(name)”: no such document in \(container.url.path)")
        }
        guard (try RemoteCommand.configuration().container(holding: url)) != nil else {
            throw DocsFailure.failure(
                "cannot \(action) “\(name)”: \(container.url.path) has no remote; add one with docs remote add NAME URL"
            )
        }
        return url
    }

    /// Leaves the document on the server only, with a placeholder `docs list` shows.
    static func evict(_ container: TextContainer, name: String) throws {
        let url = try documentURL(container, name: name, action: "evict")
        do {
            try FileManager.default.evictUbiquitousItem(at: url)
        } catch {
            throw DocsFailure.failure(
                (error as? CocoaError)?.userInfo[NSLocalizedDescriptionKey] as? String
                    ?? "cannot evict “\(name)”: \(error.localizedDescription)")
        }
        try Output.write("“\(Output.escaped(name))” is kept on the server only\n")
    }

    /// Brings the document back: the agent fetches it when one runs; otherwise a pass of sync
    /// here does.
    static func download(_ container: TextContainer, name: String, options: RemoteOptions) throws
        -> ExitStatus
    {
        let url = try documentURL(container, name: name, action: "download")
        if FileManager.default.fileExists(atPath: url.path) {
            try Output.write("“\(Output.escaped(name))” is here already\n")
            return .success
        }
        do {
            try FileManager.default.startDownloadingUbiquitousItem(at: url)
        } catch {
            throw DocsFailure.failure("cannot download “\(name)”: \(error.localizedDescription)")
        }
        if UbiquityAgent.isRunning(for: container.url) {
            // The agent was woken: wait for its download.
            let deadline = ContinuousClock.now + .seconds(120)
            while !FileManager.default.fileExists(atPath: url.path) {
                guard ContinuousClock.now < deadline else {
                    throw DocsFailure.failure(
                        "“\(name)” did not arrive within 2 minutes; the sync agent keeps trying (docs status)"
                    )
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        } else {
            _ = try SyncCommand.run(
                container, remote: nil, options: options, mode: .once, interval: .seconds(30), json: false)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw DocsFailure.failure("cannot download “\(name)”: sync did not bring it (docs status)")
            }
        }
        try Output.write("Downloaded “\(Output.escaped(name))”\n")
        return .success
    }
}
