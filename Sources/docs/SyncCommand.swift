import DocumentKit
import DocumentSync
import Foundation
import Synchronization
import TextContainer

#if canImport(Glibc)
    import Glibc
#endif

/// Set by SIGINT or SIGTERM while `docs sync --watch` runs.
let syncStopRequested = Atomic<Bool>(false)

/// `docs sync`: keeps the container in sync with a remote, once or continuously.
@MainActor
enum SyncCommand {
    enum Mode { case once, watch }

    /// The sync engine's settings for the Simple Text Editor's container: its versions in the
    /// shared store (where `docs versions` finds conflicts), documents deleted by the remote in
    /// the Deleted folder (`docs delete` uses the desktop's trash).
    static var configuration: SyncConfiguration {
        var settings = SyncConfiguration(deletedItemsFolder: TextContainer.deletedDocumentsFolder)
        settings.publishesStatus = true
        return settings
    }

    /// The settings for `container`: ``configuration``, and when the container is a ubiquity
    /// container (`docs remote add`), its key-value store synced with it.
    static func configuration(for container: TextContainer) throws -> SyncConfiguration {
        var settings = configuration
        if let ubiquity = try RemoteCommand.configuration().container(at: container.url) {
            settings.keyValueStore = SyncStateFiles.keyValueStore(forContainer: ubiquity.url)
            settings.downloadsOnDemand = !ubiquity.downloadsEagerly
        }
        return settings
    }

    /// How to reach the remote: the credentials' sources and what the options allow.
    static func options(_ invocation: Invocation) -> RemoteOptions {
        var options = RemoteOptions()
        options.credentials.user = invocation.user
        options.credentials.passwordFile = invocation.passwordFile.map { URL(fileURLWithPath: $0) }
        options.allowsUnsafeServer = invocation.unsafeServer
        options.allowsInsecureHTTP = invocation.allowHTTP
        options.caFile = invocation.caFile.map { URL(fileURLWithPath: $0).standardizedFileURL }
        options.vault.encrypted = invocation.encrypt
        // A vault is made only where --encrypt is given now, never for a remembered remote
        // whose vault went missing.
        options.vault.makesVault = invocation.encrypt
        options.vault.keepsKey = invocation.keepKey
        options.vault.passphraseFile = invocation.passphraseFile.map {
            URL(fileURLWithPath: $0).standardizedFileURL
        }
        options.vault.prompt = PassphrasePrompt.ask
        return options
    }

    static func run(
        _ container: TextContainer, remote remoteURL: String?, options: RemoteOptions, mode: Mode,
        interval: Duration, json: Bool, resume decision: SyncPause.Decision? = nil
    ) throws -> ExitStatus {
        guard let (address, options) = try remote(for: container, given: remoteURL, options: options) else {
            throw DocsFailure.usage(
                "\(container.url.path) has no remote yet; add one with docs remote add NAME URL, or give --remote file:///absolute/path",
                command: "sync")
        }
        // Optional: an agent lets its engine go when it reads its settings again.
        var opened: SyncEngine?
        do {
            opened = try SyncEngine(
                container: container.url, remote: try SyncRemotes.remote(for: address, options: options),
                configuration: try configuration(for: container))
        } catch let error as RemoteSetupError {
            throw DocsFailure.of(error, command: "sync")
        } catch let error as SyncError where error.kind == .unusable {
            throw DocsFailure.usage(error.message, command: "sync")
        } catch let error as SyncError where error.kind == .busy && decision != nil {
            // The agent holds the container: the answer is left for it.
            return try resumeThroughAgent(container, decision: decision!, json: json)
        } catch let error as SyncError where error.kind == .busy && mode == .once {
            // The agent holds the container: it runs the pass; gone meanwhile, this one does.
            if let status = try passThroughAgent(container, json: json) { return status }
            return try run(
                container, remote: remoteURL, options: options, mode: mode, interval: interval, json: json)
        } catch let error as SyncError {
            throw DocsFailure.failure(error.message)
        }
        if let decision, let engine = opened { try resume(engine, container, decision: decision, json: json) }
        if isatty(STDERR_FILENO) == 1 { opened?.progress = ProgressBar.draw }
        switch mode {
        case .once:
            guard let engine = opened else { return .failure }
            do {
                let summary = try engine.sync()
                try report(summary, json: json)
                return summary.failures.isEmpty ? .success : .failure
            } catch let error as SyncError {
                throw DocsFailure.failure(explained(error))
            }
        case .watch:
            let stop: @convention(c) (Int32) -> Void = { _ in
                syncStopRequested.store(true, ordering: .relaxed)
            }
            signal(SIGINT, stop)
            signal(SIGTERM, stop)
            // Heard even when started by a program that blocks them (its children keep the
            // mask): `docs sync --stop` asks with SIGTERM.
            var stopping = sigset_t()
            sigemptyset(&stopping)
            sigaddset(&stopping, SIGINT)
            sigaddset(&stopping, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &stopping, nil)
            Output.error(
                "docs: syncing \(container.url.path) with \(opened?.remote.displayName ?? address.url); stop with Ctrl-C"
            )
            let wasAdded = try RemoteCommand.configuration().container(at: container.url) != nil
            var current = opened
            opened = nil
            var address = address
            // No name holds the engine but `current`: let go, it is gone once its threads are.
            while current != nil {
                let settings = SettingsStamp(
                    [UbiquityConfiguration.fileURL]
                        + SyncRemotes.settingsFiles(for: address, options: options))
                let end: SyncingEnd
                do {
                    end = try current!.keepSyncing(
                        every: interval,
                        until: { syncStopRequested.load(ordering: .relaxed) || settings.changed },
                        report: { result in
                            switch result {
                            case .success(let summary) where summary.didWork || !summary.failures.isEmpty:
                                try? report(summary, json: json)
                            case .success: break
                            case .failure(let error as SyncError): Output.error("docs: \(explained(error))")
                            case .failure(let error): Output.error("docs: \(error)")
                            }
                        })
                } catch let error as DocumentKitError {
                    throw DocsFailure.failure("cannot watch the container: \(DocsFailure.reason(for: error))")
                }
                if end == .containerGone {
                    Output.error(
                        "docs: \(container.url.path) is gone: this sync stops (the container's agent starts again when an app uses it)"
                    )
                }
                guard end == .stopped, !syncStopRequested.load(ordering: .relaxed) else { return .success }
                // The remote's settings or credentials changed (docs remote, ~/.netrc, the
                // password file): read again, with the engine's lock let go first.
                if wasAdded, try RemoteCommand.configuration().container(at: container.url) == nil {
                    Output.error(
                        "docs: \(container.url.path) no longer syncs (docs remote remove): this sync stops")
                    return .success
                }
                guard
                    let (changed, changedOptions) = try remote(
                        for: container, given: remoteURL, options: options)
                else { return .success }
                Output.error(
                    "docs: the settings of \(container.url.path)'s remote changed; syncing with them")
                weak let dropped = current
                current = nil
                current = try reopened(
                    container, address: changed, options: changedOptions, dropping: { dropped })
                address = changed
            }
            return .success
        }
    }

    /// An engine on `container` for the settings read again, once the one before (`dropped`)
    /// is gone: its threads let it go a moment after its loop ends.
    private static func reopened(
        _ container: TextContainer, address: RemoteAddress, options: RemoteOptions,
        dropping dropped: () -> SyncEngine?
    ) throws -> SyncEngine {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try SyncEngine(
                    container: container.url, remote: try SyncRemotes.remote(for: address, options: options),
                    configuration: try configuration(for: container))
            } catch let error as SyncError
                where error.kind == .busy && dropped() != nil && ContinuousClock.now < deadline
            {
                Thread.sleep(forTimeInterval: 0.05)
            } catch let error as SyncError {
                throw DocsFailure.failure(error.message)
            } catch let error as RemoteSetupError where error.isTransient {
                // The server out of reach as the settings are read: an agent waits for it.
                Output.error("docs: \(error.message); trying again in 5 seconds")
                for _ in 0..<50 where !syncStopRequested.load(ordering: .relaxed) {
                    Thread.sleep(forTimeInterval: 0.1)
                }
                if syncStopRequested.load(ordering: .relaxed) { throw DocsFailure.failure(error.message) }
            } catch let error as RemoteSetupError {
                throw DocsFailure.failure(error.message)
            }
        }
    }

    /// The remote to sync `container` with, and the options to reach it: `given` (a URL, or
    /// the name of a remote of `docs remote add`), else the remote configured for the
    /// container's folder, else the one it synced with last; nil when there is none.
    ///
    /// The remote is the same one whichever way it is named: the settings given with it on
    /// the command line win, and those it was added or last synced with (its user, password
    /// file, S3 settings in its URL, the allowances) stand for the ones left out.
    static func remote(for container: TextContainer, given: String?, options: RemoteOptions)
        throws -> (address: RemoteAddress, options: RemoteOptions)?
    {
        let ubiquity = try RemoteCommand.configuration()
        let added = ubiquity.container(at: container.url)
        let configured: UbiquityContainer?
        switch given {
        case nil: configured = added
        case let url? where url.contains("://"):
            // The remote of an added container is the one added: another URL would sync it
            // with that one, and its agent back with the added one.
            if let added, url != added.remote {
                throw DocsFailure.usage(
                    "\(container.url.path) syncs with the remote “\(added.name)”, \(added.remote) (docs remote list); give no --remote, or remove that one first with docs remote remove \(added.name)",
                    command: "sync")
            }
            configured = added
        case let name?: configured = ubiquity.container(named: name)
        }
        let remembered: RemoteAddress?
        if let configured {
            remembered = address(of: configured)
        } else {
            if let given, !given.contains("://") {
                throw DocsFailure.usage(
                    "there is no remote named “\(Output.escaped(given))”; give a URL or add it with docs remote add",
                    command: "sync")
            }
            do {
                remembered = try SyncEngine.rememberedRemote(
                    ofContainer: container.url, configuration: configuration)
            } catch let error as SyncError {
                // Given anew, the remote an older version remembered without its settings
                // does not matter.
                guard given != nil else { throw DocsFailure.usage(error.message, command: "sync") }
                remembered = nil
            }
        }
        let url = configured == nil ? given ?? remembered?.url : remembered?.url
        guard let url else { return nil }
        var address = RemoteAddress(url: url, options: options)
        if let remembered { address = address.filled(from: remembered) }
        return (address, options)
    }

    /// The remote of a container of `docs remote add`, with the settings it was added with.
    static func address(of container: UbiquityContainer) -> RemoteAddress {
        RemoteAddress(
            url: container.remote, user: container.user, passwordFile: container.passwordFile,
            allowsUnsafeServer: container.allowsUnsafeServer,
            allowsInsecureHTTP: container.allowsInsecureHTTP,
            caFile: container.caFile, encrypted: container.encrypted, passphraseFile: container.passphraseFile
        )
    }

    /// One line of counts (or a JSON object), then the notes and failures, one a line.
    static func report(_ summary: SyncSummary, json: Bool) throws {
        if json {
            var writer = JSONWriter()
            writer.raw("{")
            writer.field("uploaded", summary.uploaded)
            writer.field("downloaded", summary.downloaded)
            writer.field("merged", summary.merged)
            writer.field("conflicts", summary.conflicts)
            writer.field("deletedLocally", summary.deletedLocally)
            writer.field("deletedRemotely", summary.deletedRemotely)
            writer.field("moved", summary.moved)
            writer.key("notes")
            writer.strings(summary.notes)
            writer.key("failures")
            writer.strings(summary.failures)
            writer.raw("}")
            writer.newline()
            try Output.write(writer.bytes)
        } else {
            var text = "sync: \(summary)\n"
            for note in summary.notes { text += "  \(Output.escaped(note))\n" }
            try Output.write(text)
            for failure in summary.failures { Output.error("docs: \(failure)") }
        }
    }
}

/// `docs status`: where each document stands with the container's remote, and the syncs
/// running for this user.
@MainActor
enum StatusCommand {
    static func run(_ container: TextContainer, options: RemoteOptions, json: Bool) throws {
        let configuration = SyncCommand.configuration
        let pause = try SyncCommand.pause(of: container)
        var states: [SyncItemStatus] = []
        /// Why the remote could not be listed: the states are then as it was last seen.
        var unreachable: String?
        if let (address, options) = try SyncCommand.remote(for: container, given: nil, options: options) {
            do {
                states = try SyncEngine.status(
                    ofContainer: container.url,
                    remote: try SyncRemotes.remote(for: address, options: options),
                    configuration: configuration)
            } catch let error as RemoteSetupError where !error.isTransient {
                throw DocsFailure.of(error, command: "status")
            } catch  where error is SyncError || error is RemoteSetupError {
                // Offline is when the user most wants to know what waits: the remote as the
                // journal last saw it stands for it.
                unreachable = "\(error)"
                do {
                    states = try SyncEngine.statusAsLastSeen(
                        ofContainer: container.url, configuration: configuration)
                } catch {
                    throw DocsFailure.failure("\(unreachable!); and \(error)")
                }
            }
        } else {
            states = try container.files().map { SyncItemStatus(path: $0.fileName, state: .notSynced) }
        }
        // Every file sync carries, documents and others (a photo): each can fill the disk.
        let documents = states
        func isDocument(_ path: String) -> Bool {
            TextContainer.isDocumentFileName(path) && !path.contains("/")
        }
        let store = VersionStore.shared
        let storeBytes = store.diskUsage()
        let published = UbiquityStatus.read(forContainer: container.url)
        // The syncs running for this user, agents and one-shot, each with its container.
        let running = SyncLockHolder.all()
        if json {
            var writer = JSONWriter()
            writer.raw("{")
            writer.key("paused")
            SyncCommand.write(pause, to: &writer)
            writer.raw(",\"unreachable\":")
            if let unreachable {
                writer.raw("{")
                writer.field("message", unreachable)
                writer.field("lastReached", time: published?.reached)
                writer.raw("}")
            } else {
                writer.raw("null")
            }
            writer.raw(",\"syncs\":[")
            writer.objects(running) { writer, holder in
                writer.field("pid", holder.pid)
                writer.field("container", holder.container)
                writer.field("agent", holder.isAgent)
            }
            writer.raw(",\"documents\":[")
            writer.objects(documents) { writer, status in
                writer.field("name", shownName(ofFileAt: status.path))
                writer.field("file", status.path)
                writer.field("kind", isDocument(status.path) ? "document" : "file")
                writer.field("state", status.state.rawValue)
            }
            writer.raw(",\"versionStore\":{")
            writer.field("path", store.root.path)
            writer.field("bytes", storeBytes)
            writer.raw("}")
            writer.raw("}\n")
            try Output.write(writer.bytes)
        } else {
            var text = ""
            if let unreachable {
                let reached =
                    published?.reached.map { "last reached \(LocalTime.format($0))" } ?? "never reached"
                text +=
                    "remote unreachable: \(Output.escaped(unreachable)); \(reached). As the remote was then:\n"
            }
            text += pause.map(SyncCommand.describe) ?? ""
            for status in documents {
                text += "\(status.state.rawValue)\t\(Output.escaped(shownName(ofFileAt: status.path)))"
                text += isDocument(status.path) ? "\n" : "\tfile\n"
            }
            text += "versions\t\(ByteCount.format(storeBytes))\t\(Output.escaped(store.root.path))\n"
            for holder in running {
                let what = holder.isAgent ? "agent" : "sync"
                let folder = holder.container.isEmpty ? "(container not named yet)" : holder.container
                text += "\(what)\tprocess \(holder.pid)\t\(Output.escaped(folder))\n"
            }
            try Output.write(text)
        }
    }
}

/// A one-line progress bar on standard error, for a terminal: items and bytes, redrawn in
/// place, cleared when the pass is done.
enum ProgressBar {
    static func draw(_ progress: SyncProgress) {
        // A pass with little to do finishes before a bar is worth seeing.
        guard progress.total >= 20 || progress.byteTotal >= 10_000_000 else { return }
        let width = 30
        let share =
            progress.byteTotal > 0
            ? Double(min(progress.bytes, progress.byteTotal)) / Double(progress.byteTotal)
            : Double(progress.done) / Double(max(progress.total, 1))
        let filled = Int(share * Double(width))
        let line =
            progress.done >= progress.total
            ? "\r\u{1B}[K"
            : "\rsync [" + String(repeating: "#", count: filled)
                + String(repeating: " ", count: width - filled)
                + "] \(progress.done)/\(progress.total) items, \(megabytes(progress.bytes)) of \(megabytes(progress.byteTotal)) MB"
        Output.error(line, terminated: false)
    }

    private static func megabytes(_ bytes: Int64) -> String {
        String(format: "%.1f", Double(bytes) / 1_000_000)
    }
}
