import DocumentKit
import DocumentSync
import Foundation
import SimpleTextEditorDocument

/// A conflict merged for a person to finish: both sides' changes combined three ways from the
/// version they started from, and each part both sides changed differently marked in the text
/// as git marks it (`<<<<<<< this device`, `=======`, `>>>>>>> laptop (device 1F0C29A3), …`).
///
/// ``TextContainer/merge(_:of:current:)`` makes one; `ste`'s merge key and `docs resolve
/// NAME --merge` put its text in the document and resolve the conflict.
public struct ConflictMerge: Sendable, Equatable {
    /// The merged text, with the marked parts.
    public var text: String
    /// How many parts are marked; 0 for a clean merge.
    public var markedParts: Int
    /// Whether the version both sides started from was found. Without it every part where the
    /// sides differ is marked, as nothing says which side changed it.
    public var hasBase: Bool
    /// Who made each side, as the markers name them.
    public var labels: ConflictLabels

    /// One sentence for the user on what the merge did.
    public var summary: String {
        let parts = markedParts == 1 ? "1 part" : "\(markedParts) parts"
        if !hasBase {
            return markedParts == 0
                ? "Merged: the two sides hold the same lines"
                : "No version both sides started from was found: \(parts) where they differ marked <<<<<<< ======= >>>>>>>"
        }
        return markedParts == 0
            ? "Merged cleanly: both sides' changes are in"
            : "Merged: \(parts) both sides changed marked <<<<<<< ======= >>>>>>>"
    }
}

/// Who made the two sides of a conflict, for people: the device and when.
public struct ConflictLabels: Sendable, Equatable {
    /// This device's side: "this device".
    public var mine: String
    /// The other side: "laptop (device 1F0C29A3), 2026-12-06 12:01", "another device
    /// (through sync)", or "another program".
    public var theirs: String
}

/// Why a conflict cannot be merged: a side is not UTF-8 text, or too big.
public struct ConflictMergeError: Error, Sendable, CustomStringConvertible {
    /// The reason, as a sentence whose subject is a side ("theirs is not valid UTF-8 text").
    public var reason: String

    public var description: String { "it cannot be merged: \(reason)" }
}

extension TextContainer {
    /// How many of an item's newest versions are looked through for the merge base: hashing
    /// them costs a read each.
    static let mergeBaseSearchLimit = 64

    /// Whether `version` is a conflict sync made (this device's edit, or one another device
    /// shared), not unsaved text a program here kept: sync never names a program.
    public static func isSyncConflict(_ version: FileVersion) -> Bool {
        version.savingProgram == nil
    }

    /// Who made each side of the conflict `version` is: this device's side, and the other
    /// with its device and when it was made where the store knows them.
    ///
    /// - Parameter fileDate: When the file was last modified: the other side's date when the
    ///   file is theirs.
    public static func conflictLabels(of version: FileVersion, fileDate: Date? = nil) -> ConflictLabels {
        let theirs: String
        if !version.isFromThisComputer {
            let name = version.localizedNameOfSavingComputer ?? "another device"
            let device =
                version.savingDeviceIdentifier.map { DeviceIdentity(identifier: $0, name: name).description }
                ?? name
            theirs = device + (version.modificationDate.map { ", " + Self.labelDate($0) } ?? "")
        } else if isSyncConflict(version) {
            theirs = "another device (through sync)" + (fileDate.map { ", " + Self.labelDate($0) } ?? "")
        } else {
            theirs = "another program" + (fileDate.map { ", " + Self.labelDate($0) } ?? "")
        }
        return ConflictLabels(mine: "this device", theirs: theirs)
    }

    /// "2026-12-06 12:01", local time.
    static func labelDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    /// Merges the conflict `version` of the document at `url` with the document's text
    /// `current`: three ways from the version both sides started from (found among the item's
    /// versions by the hash sync recorded), or, when none is found, two ways with every
    /// difference marked. "Mine" and "theirs" are as ``FileVersion/mineSide`` says.
    ///
    /// - Throws: ``ConflictMergeError`` when a side is not text or too big; the error of
    ///   reading the version when its contents cannot be read.
    public static func merge(_ version: FileVersion, of url: URL, current: String, fileDate: Date? = nil)
        throws -> ConflictMerge
    {
        let versionBytes = try Data(contentsOf: version.url)
        let currentBytes = Data(current.utf8)
        let (mine, theirs) =
            version.isFromThisComputer ? (versionBytes, currentBytes) : (currentBytes, versionBytes)
        let base = mergeBase(of: version, at: url, candidates: [currentBytes, versionBytes])
        let labels = conflictLabels(of: version, fileDate: fileDate)
        switch TextMerge.markedMerge(
            base: base, mine: mine, theirs: theirs, labels: (labels.mine, labels.theirs))
        {
        case .merged(let data, let overlaps):
            // Both sides were checked to be UTF-8, and markers are: this decodes.
            return ConflictMerge(
                text: String(decoding: data, as: UTF8.self), markedParts: overlaps, hasBase: base != nil,
                labels: labels)
        case .notText(let reason):
            throw ConflictMergeError(reason: reason)
        }
    }

    /// The bytes both sides of `version` started from: the first of `candidates` or of the
    /// item's newest history versions whose SHA-256 is the one sync recorded; nil when sync
    /// recorded none or none of them holds it.
    static func mergeBase(of version: FileVersion, at url: URL, candidates: [Data]) -> Data? {
        guard let hash = version.mergeBase else { return nil }
        if let same = candidates.first(where: { ContentHash(of: $0).hex == hash }) { return same }
        let history = (FileVersion.otherVersionsOfItem(at: url) ?? []).filter { !$0.isConflict }
            .sorted { ($0.modificationDate ?? .distantPast) > ($1.modificationDate ?? .distantPast) }
        for candidate in history.prefix(mergeBaseSearchLimit) {
            guard let bytes = try? Data(contentsOf: candidate.url), ContentHash(of: bytes).hex == hash else {
                continue
            }
            return bytes
        }
        return nil
    }

    /// Resolves the conflict `version` of the document at `url` by merging
    /// (``merge(_:of:current:fileDate:)``): the merged text is saved as a document save (the
    /// text it replaces stays in the history), then the version is marked resolved (it stays
    /// in the store). Nothing is lost either way.
    ///
    /// - Throws: ``ConflictMergeError``, ``InvalidTextError`` or ``DocumentKitError`` naming
    ///   what could not be read, merged or saved; the document and the conflict are unchanged then.
    @MainActor
    public static func resolveByMerging(_ version: FileVersion, of url: URL) async throws -> ConflictMerge {
        let document = SimpleTextDocument(fileURL: url)
        document.delegate = QuietDelegate.shared
        guard await document.open() else {
            throw document.lastError
                ?? DocumentKitError(.ioFailure, operation: "open the document to merge", url: url)
        }
        let merge: ConflictMerge
        do {
            merge = try Self.merge(
                version, of: url, current: document.documentText, fileDate: document.fileModificationDate)
        } catch {
            _ = await document.close()
            throw error
        }
        if merge.text != document.documentText {
            document.documentText = merge.text
            guard await document.save(to: url, for: .forOverwriting) else {
                let error = document.lastError
                _ = await document.close()
                throw error ?? DocumentKitError(.ioFailure, operation: "save the merge of", url: url)
            }
        }
        _ = await document.close()
        try await version.resolveConflict(ofItemAt: url, keeping: .currentItem)
        return merge
    }
}
