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

    /// The container's sync state in words for the status line: nil when the container is
    /// not a ubiquity container.
    var syncSummary: String? {
        guard let ubiquity else { return nil }
        guard let syncStatus else {
            return UbiquityAgent.isRunning(for: ubiquity.url)
                ? "sync: starting" : "sync: not running (F5 starts it)"
        }
        if syncStatus.state == .paused, let pause = syncStatus.pause {
            return "sync paused: \(Self.brief(pause)) — F5 asks"
        }
        return "sync: " + syncStatus.summary
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
