import DocumentKit
import Foundation
import TextContainer

extension Editor {
    /// Reads the sync agent's status again when its file changed; true when it did.
    @discardableResult
    func refreshSyncStatus() -> Bool {
        guard let ubiquity else { return false }
        let file = SyncStateFiles.status(forContainer: ubiquity.url)
        let stamp = FileStatus(path: file.path)?.statusChange
        guard stamp != syncStatusStamp else { return false }
        syncStatusStamp = stamp
        syncStatus = UbiquityStatus.read(file)
        return true
    }

    /// How long an agent ste started may take to run before it is said to have failed.
    static let agentStartTime: Duration = .seconds(5)

    /// Looks, at most once a second, whether the container's agent runs; true when what the
    /// status line says of it changed. An agent asked for that does not run within
    /// ``agentStartTime`` is said to have failed, with the last line of its log.
    @discardableResult
    func followAgent() -> Bool {
        guard let ubiquity else { return false }
        let now = clock.now
        if let lastAgentLook, now - lastAgentLook < .seconds(1) { return false }
        lastAgentLook = now
        let wasStarting = isAgentStarting
        let ran = agentRuns
        agentRuns = UbiquityAgent.isRunning(for: ubiquity.url)
        if agentRuns {
            agentStartAsked = nil
        } else if let asked = agentStartAsked, now - asked >= Self.agentStartTime {
            agentStartAsked = nil
            let log = SyncStateFiles.log(forContainer: ubiquity.url)
            let reason = Self.lastLine(of: log).map { ": \($0)" } ?? " (its log is \(log.path))"
            show("The sync agent did not start\(reason)", isError: true)
        }
        return agentRuns != ran || isAgentStarting != wasStarting
    }

    /// Started and not running yet.
    var isAgentStarting: Bool { !agentRuns && agentStartAsked != nil }

    /// The last line of the agent's log that says something, read from its last 4 KiB.
    static func lastLine(of log: URL) -> String? {
        guard let handle = try? FileHandle(forReadingFrom: log) else { return nil }
        defer { try? handle.close() }
        guard let end = try? handle.seekToEnd() else { return nil }
        try? handle.seek(toOffset: end > 4096 ? end - 4096 : 0)
        let tail = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
        return tail.split(whereSeparator: \.isNewline).last {
            !$0.trimmingCharacters(in: .whitespaces).isEmpty
        }.map(String.init)
    }

    /// The container's sync state in words for the status line: nil when the container is
    /// not a ubiquity container. What the agent last published is said only while it runs.
    var syncSummary: String? {
        guard ubiquity != nil else { return nil }
        guard agentRuns else {
            return isAgentStarting ? "sync: starting" : "sync: stopped (F5 starts it)"
        }
        guard let syncStatus else { return "sync: starting" }
        if syncStatus.state == .paused, let pause = syncStatus.pause {
            return "sync paused: \(Self.brief(pause)) — F5 asks"
        }
        if syncStatus.state == .error, let message = syncStatus.message {
            // The key to the whole text first, then the point: the last of the message's
            // "context: context: reason" parts, before the line can cut it off.
            return "sync failed (F7 says all): " + Self.point(of: message)
        }
        return "sync: " + syncStatus.summary
    }

    /// The reason a message ends with: its last part after ": " that says something (a
    /// dozen characters or more), else the whole message.
    static func point(of message: String) -> String {
        let parts = message.components(separatedBy: ": ")
        return parts.reversed().first { $0.count >= 12 } ?? message
    }

    /// Whether the status line leads with sync: it failed, is paused, or is offline, which
    /// matters more than the document's name.
    var syncLeads: Bool {
        guard agentRuns, let state = syncStatus?.state else { return false }
        return state == .error || state == .paused || state == .offline
    }

    /// F7: everything sync says, in paragraphs (a title is marked): its state, the remote,
    /// the whole message, each document it could not sync and why, the agent's last words,
    /// and what to do.
    var syncDetails: [(text: String, isTitle: Bool)] {
        guard let ubiquity else {
            return [("This container is not synced: add a remote with docs remote add NAME URL", false)]
        }
        var lines: [(String, Bool)] = [
            ("Sync of \(ubiquity.url.path)", true), ("with \(ubiquity.remote)", false),
        ]
        lines.append(("", false))
        if !agentRuns {
            lines.append(("The sync agent is not running. F5 starts it.", false))
        } else if let syncStatus {
            if let message = syncStatus.message {
                lines.append(("State: \(syncStatus.state.rawValue)", false))
                lines.append((message, false))
            } else {
                lines.append(("State: \(syncStatus.summary)", false))
            }
            lines.append(
                ("Last word from the agent: \(timeFormatter.string(from: syncStatus.updated))", false))
            if let reached = syncStatus.reached {
                lines.append(("Last reached the remote: \(timeFormatter.string(from: reached))", false))
            }
            let failed =
                syncStatus.uploadErrors.map { ("not uploaded", $0.key, $0.value) }
                + syncStatus.downloadErrors.map { ("not downloaded", $0.key, $0.value) }
            if !failed.isEmpty {
                lines.append(("", false))
                lines.append(("Documents not synced", true))
                for (what, path, why) in failed.sorted(by: { $0.1 < $1.1 }) {
                    lines.append(("\(path): \(what): \(why)", false))
                }
            }
        }
        let log = SyncStateFiles.log(forContainer: ubiquity.url)
        if let last = Self.lastLine(of: log) {
            lines.append(("", false))
            lines.append(("The agent's log (\(log.path)) ends with", true))
            lines.append((last, false))
        }
        lines.append(("", false))
        lines.append(("What to do", true))
        lines.append(("F5 syncs now (and starts the agent if it is not running).", false))
        lines.append(
            (
                "A password is read from --password-file, DOCS_PASSWORD or ~/.netrc; a running agent reads it again when the file changes.",
                false
            ))
        lines.append(("docs status lists what waits to sync; docs sync --stop stops the agent.", false))
        return lines
    }

    func handleSyncDetails(_ key: Key, scroll: Int) {
        if let scrolled = scrolled(by: key, from: scroll, lines: syncDetailRows(width: terminal.width).count)
        {
            mode = .syncDetails(scrolled)
            return
        }
        mode = .normal
        if key == .function(5) { syncNow() }
    }

    /// ``syncDetails`` wrapped to `width` columns (less the margin), a blank line kept.
    func syncDetailRows(width: Int) -> [(text: String, isTitle: Bool)] {
        syncDetails.flatMap { text, isTitle in
            let wrapped = Self.wrapped(text, width: width - 2)
            return wrapped.isEmpty ? [("", false)] : wrapped.map { ($0, isTitle) }
        }
    }

    func drawSyncDetails(scroll: Int, top: Int, height: Int, width: Int) {
        let rows = syncDetailRows(width: width)
        for row in 0..<height {
            let index = scroll + row
            guard index < rows.count else { break }
            terminal.draw(
                " " + rows[index].text, y: top + row, x: 0, width: width,
                attributes: rows[index].isTitle ? Terminal.bold : 0)
        }
    }

    /// A pause in a few words: "15 of 20 would be deleted on the remote".
    static func brief(_ pause: SyncPause) -> String {
        switch pause.reason {
        case .deletingHere:
            return "\(pause.deletionCountHere) of \(pause.documentCount) would be deleted here"
        case .deletingOnRemote:
            return "\(pause.deletionCountOnRemote) of \(pause.documentCount) would be deleted on the remote"
        case .containerGone: return "the folder of documents is gone"
        case .remoteGone: return "the remote's folder is gone"
        }
    }

    /// Why the documents would be deleted, as far as this device can tell.
    static func cause(of pause: SyncPause) -> String {
        switch pause.reason {
        case .deletingHere:
            return "They are gone from the remote: deleted there, or its listing left them out."
        case .deletingOnRemote:
            return "They are gone from this folder: deleted here, or the folder lost them."
        case .containerGone:
            return "The folder of documents is gone, so every document would go from the remote."
        case .remoteGone: return "The remote's folder was not found, so every document would go from here."
        }
    }

    /// After the agent's status changed: a new pause is announced once, on the status line,
    /// until Esc (the question itself opens with F5 only, so that typing never answers it);
    /// the question closes when the pause was answered elsewhere.
    func followSyncPause() {
        let pause = syncStatus?.state == .paused ? syncStatus?.pause : nil
        if case .syncPause(let screen) = mode, pause?.identifier != screen.pause.identifier {
            if let pause {
                mode = .syncPause(SyncPauseScreen(pause: pause))
            } else {
                mode = .normal
                show("Sync is no longer paused")
            }
        }
        guard let pause, !announcedPauses.contains(pause.identifier) else { return }
        announcedPauses.insert(pause.identifier)
        show("Sync is paused: \(Self.brief(pause)). F5 shows them and asks", isError: true)
    }

    /// The question of a paused sync: `k` keeps them, `d` deletes them, Esc asks later.
    func handleSyncPause(_ key: Key, screen: SyncPauseScreen) {
        var screen = screen
        let names = screen.pause.deletionsHere.count + screen.pause.deletionsOnRemote.count
        switch key {
        case .character("k"), .character("K"): return answer(screen.pause, .keep)
        case .character("d"), .character("D"): return answer(screen.pause, .delete)
        case .escape, .function(5):
            mode = .normal
            return show("Sync stays paused; F5 asks again")
        case .up: screen.scroll -= 1
        case .down: screen.scroll += 1
        case .pageUp: screen.scroll -= max(1, bodyHeight - 6)
        case .pageDown: screen.scroll += max(1, bodyHeight - 6)
        default: break
        }
        screen.scroll = min(max(0, screen.scroll), max(0, names - 1))
        mode = .syncPause(screen)
    }

    /// Leaves the answer for the agent (started if none runs), which acts at once and goes on
    /// syncing; only the pause shown is answered.
    private func answer(_ pause: SyncPause, _ decision: SyncPause.Decision) {
        mode = .normal
        guard let container else { return }
        do {
            try UbiquityAgent.resume(
                forContainerAt: container.url, pause: pause.identifier, decision: decision)
            show(
                "\(decision == .keep ? "Keeping them" : "Deleting them"): sync will \(pause.outcome(of: decision))"
            )
        } catch {
            show(error)
        }
    }

    /// The question: why sync paused, what each answer does, and the names, by side.
    func drawSyncPause(_ screen: SyncPauseScreen, top: Int, height: Int, x: Int, width: Int) {
        let pause = screen.pause
        var lines: [(String, Int32)] = [
            (" Sync is paused: \(Self.brief(pause))", Terminal.bold),
            (" " + Self.cause(of: pause), 0),
            (" k  keep them: \(pause.outcome(of: .keep))", 0),
            (" d  delete them: \(pause.outcome(of: .delete))", 0),
            (" Esc  later: sync stays paused", 0),
            ("", 0),
        ]
        var names: [String] = []
        for (side, shown, count) in [
            ("here", pause.deletionsHere, pause.deletionCountHere),
            ("on the remote", pause.deletionsOnRemote, pause.deletionCountOnRemote),
        ] where count > 0 {
            names.append(" Would be deleted \(side), \(count) of \(pause.documentCount):")
            names += shown.map { "   " + $0 }
            if count > shown.count {
                names.append("   and \(count - shown.count) more (docs status lists them all)")
            }
        }
        lines += names.dropFirst(min(screen.scroll, max(0, names.count - 1))).map { ($0, 0) }
        for (row, line) in lines.prefix(max(0, height)).enumerated() {
            terminal.draw(line.0, y: top + row, x: x + 1, width: width - 1, attributes: line.1)
        }
    }

    /// F5: asks the agent to sync now (starting it if none runs) and shows the details.
    func syncNow() {
        guard let container, let ubiquity else {
            return show(
                "This container is not synced: add a remote with docs remote add NAME URL", isError: true)
        }
        if syncStatus?.state == .paused, let pause = syncStatus?.pause {
            commitBurst()
            message = nil
            mode = .syncPause(SyncPauseScreen(pause: pause))
            return
        }
        // Asked for: started even when this process started one a moment ago.
        UbiquityAgent.start(forContainerAt: container.url, isRequestedByUser: true)
        UbiquityAgent.wake(forContainerAt: container.url)
        guard agentRuns else {
            if UbiquityAgent.startsAgents { agentStartAsked = clock.now }
            lastAgentLook = nil
            return show("Starting sync with \(ubiquity.remote)", isError: false)
        }
        var details = "Syncing with \(ubiquity.remote)"
        if let syncStatus {
            details +=
                ": \(syncStatus.summary), \(syncStatus.synced.count) synced, updated \(timeFormatter.string(from: syncStatus.updated))"
            if let selectedURL {
                let path = selectedURL.lastPathComponent
                if let error = syncStatus.uploadErrors[path] ?? syncStatus.downloadErrors[path] {
                    return show("\(details); this document: \(error)", isError: true)
                }
            }
        }
        show(details + "; syncing now", isError: false)
    }
}
