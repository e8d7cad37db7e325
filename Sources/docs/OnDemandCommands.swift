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

    /// `docs share NAME|PATH [--expires SECONDS] [--json]`: a link anyone may download a copy
    /// of the document from, made by the container's remote (what
    /// `FileManager.url(forPublishingUbiquitousItemAt:expiration:)` asks the agent program
    /// for, with the document's absolute path).
    static func share(
        _ container: TextContainer, name: String, expires: String?, options: RemoteOptions, json: Bool
    ) throws -> ExitStatus {
        var seconds = 7 * 86_400
        if let expires {
            guard let given = Int(expires), given > 0 else {
                throw DocsFailure.usage(
                    "--expires takes a whole number of seconds, not “\(expires)”", command: "share")
            }
            seconds = given
        }
        let url: URL
        if name.hasPrefix("/") {
            url = URL(fileURLWithPath: name)
        } else {
            do {
                url = try container.url(forDocumentNamed: name)
            } catch {
                throw DocsFailure.cannot("share", name, error)
            }
        }
        let relative: String
        do {
            (_, relative) = try FileManager.publishableItem(at: url)
        } catch {
            throw DocsFailure.failure(
                (error as? CocoaError)?.userInfo[NSLocalizedDescriptionKey] as? String
                    ?? "cannot share “\(name)”: \(error.localizedDescription)")
        }
        guard let (address, options) = try SyncCommand.remote(for: container, given: nil, options: options)
        else {
            throw DocsFailure.failure(
                "cannot share “\(name)”: \(container.url.path) has no remote; add one with docs remote add NAME URL"
            )
        }
        let link: PublishedLink
        do {
            let remote = try SyncRemotes.remote(for: address, options: options)
            link = try remote.publishedLink(
                of: RemotePath(components: relative.split(separator: "/").map(String.init)),
                lifetime: .seconds(seconds))
        } catch let error as RemoteError {
            if json, error.kind == .unsupported { try Output.write("{\"unsupported\":true}\n") }
            throw DocsFailure.failure(error.description)
        } catch let error as RemoteSetupError {
            throw DocsFailure.failure(error.message)
        }
        if json {
            var object = JSONWriter(reservingCapacity: 256)
            object.raw("{")
            object.field("url", link.url.absoluteString)
            if let expires = link.expires {
                object.field("expires", Int(expires.timeIntervalSince1970.rounded(.down)))
            }
            object.raw("}\n")
            try Output.write(object.bytes)
        } else {
            try Output.write(link.url.absoluteString + "\n")
            if let expires = link.expires {
                Output.error(
                    "docs: the link works until \(LocalTime.format(seconds: Int64(expires.timeIntervalSince1970)))"
                )
            }
        }
        return .success
    }
}
