import DocumentKit
import Foundation
import Testing

/// The conflict screen for a sync conflict: who made the other side and when, the two sides
/// lined up with their differences highlighted, and the merge key.
@Suite("ste: merging a conflict")
struct SteMergeTests {
    @Test func theScreenNamesTheDeviceHighlightsDifferencesAndMergesAsOneUndoStep() async throws {
        let base = "title\nsame\nend\n"
        let mine = "title here\nsame\nend\n"
        let ste = try SteSession { container in
            try Data(base.utf8).write(to: container.appendingPathComponent("Notes.txt"))
        }
        let url = ste.file("Notes.txt")
        // Saved over the base here, and changed on a laptop: a conflict as sync shares it.
        try ste.store.addOfItem(at: url, withContentsOf: url)
        try Data(mine.utf8).write(to: url)
        let incoming = ste.root.appendingPathComponent("incoming.txt")
        try Data("title there\nsame\nEND\n".utf8).write(to: incoming)
        let made = Date(timeIntervalSince1970: 1_765_000_000)
        try ste.store.addConflictOfItem(
            at: url, withContentsOf: incoming,
            origin: VersionOrigin(computer: "laptop", device: DocsMergeTests.device), modificationDate: made,
            mergeBase: ContentHash(of: Data(base.utf8)).hex)
        ste.start(width: 80, height: 24)

        // At 80 columns: the other device by name and identifier, and when its version was made.
        #expect(await ste.waitForScreen(containing: "Theirs: from laptop (device 1F0C29A3)"), "\(ste.screen)")
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        #expect(ste.screen.contains("saved there \(formatter.string(from: made))"), "\(ste.screen)")
        #expect(ste.screen.contains("Mine: the file here"), "\(ste.screen)")
        #expect(ste.screen.contains("e Merge"), "\(ste.screen)")
        // The lines that differ are in reverse video, the line both have is not.
        let rows = ste.styledScreen.split(separator: "\n").map(String.init)
        let changed = try #require(rows.first { $0.contains("title here") }, "\(rows)")
        #expect(
            changed.contains("\u{1B}[7m") && changed.contains("title there"), "\(changed.debugDescription)")
        let end = try #require(rows.first { $0.contains("END") }, "\(rows)")
        #expect(end.contains("\u{1B}[7m"), "\(end.debugDescription)")
        let same = try #require(rows.first { $0.contains("same") }, "\(rows)")
        #expect(!same.contains("\u{1B}[7m"), "\(same.debugDescription)")

        ste.type("e")
        #expect(await ste.waitForScreen(containing: "1 part both sides changed marked"), "\(ste.screen)")
        // Saved, with the part both changed between markers naming the sides, and resolved.
        let marked =
            "<<<<<<< this device\ntitle here\n=======\ntitle there\n>>>>>>> laptop (device 1F0C29A3), "
        #expect(
            await ste.wait {
                let text = ste.text(of: "Notes.txt") ?? ""
                return text.hasPrefix(marked) && text.hasSuffix("\nsame\nEND\n")
            }, "\(ste.text(of: "Notes.txt") ?? "")")
        #expect(ste.conflictTexts(of: "Notes.txt").isEmpty)
        #expect(ste.screen.contains("<<<<<<< this device"), "\(ste.screen)")

        // One undo step brings the text before the merge back, and it is saved.
        ste.keys("C-z")
        #expect(await ste.wait { !ste.screen.contains("<<<<<<<") && ste.screen.contains("title here") })
        #expect(await ste.wait(timeout: .seconds(20)) { ste.text(of: "Notes.txt") == mine }, "\(ste.screen)")
        // Both sides stay in the history.
        let stored = ste.storedTexts(of: "Notes.txt")
        #expect(stored.contains("title there\nsame\nEND\n") && stored.contains { $0.hasPrefix(marked) })
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }

    /// This device's side of a sync conflict is its saved text, not "unsaved text", and the
    /// file is another device's, not "another program's". Without the base, the merge says so
    /// and marks every difference.
    @Test func thisDevicesSideIsItsSavedTextAndAMergeWithoutABaseMarksEveryDifference() async throws {
        let ste = try SteSession { container in
            try Data("shared\ntheirs\n".utf8).write(to: container.appendingPathComponent("Notes.txt"))
        }
        let url = ste.file("Notes.txt")
        let incoming = ste.root.appendingPathComponent("incoming.txt")
        try Data("shared\nmine\n".utf8).write(to: incoming)
        // As sync keeps this device's edit when the remote's replaces it: its device, no program.
        let thisDevice = DeviceIdentity.kept(inStateFolder: ste.stateHome)
        try ste.store.addConflictOfItem(
            at: url, withContentsOf: incoming, origin: VersionOrigin(thisDevice),
            modificationDate: Date(timeIntervalSinceNow: -60))
        ste.start(width: 120, height: 24)
        #expect(await ste.waitForScreen(containing: "Mine: this device"), "\(ste.screen)")
        #expect(ste.screen.contains("Theirs: another device"), "\(ste.screen)")
        #expect(ste.screen.contains("kept when sync brought theirs"), "\(ste.screen)")
        #expect(!ste.screen.contains("unsaved") && !ste.screen.contains("another program"), "\(ste.screen)")

        ste.type("e")
        #expect(
            await ste.waitForScreen(containing: "No version both sides started from was found"),
            "\(ste.screen)")
        #expect(
            await ste.wait {
                (ste.text(of: "Notes.txt") ?? "").hasPrefix(
                    "shared\n<<<<<<< this device\nmine\n=======\ntheirs\n>>>>>>> another device (through sync)"
                )
            }, "\(ste.text(of: "Notes.txt") ?? "")")
        #expect(ste.conflictTexts(of: "Notes.txt").isEmpty)
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus == 0 })
    }
}
