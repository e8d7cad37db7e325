import DocumentKit
import Foundation
import SimpleTextEditorDocument

extension TextContainer {
    /// The name of the copy that "keep both" makes of a conflict version, the one rule `ste`
    /// and `docs` share: “Notes (conflict from laptop 2026-12-01 20.54.13)”. No slash, and no
    /// colon, which some file systems a container syncs to refuse.
    ///
    /// A long name is shortened (whole characters) so that the copy's file name, with a number
    /// and `.txt`, still fits in the 255 bytes a file name may have.
    public static func conflictCopyName(for name: String, computer: String?, date: Date?) -> String {
        let host = (computer ?? "another computer").replacingOccurrences(of: "/", with: "-")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH.mm.ss"
        let when = date.map(formatter.string) ?? "unknown date"
        let suffix = " (conflict from \(host) \(when))"
        return shortened(name, leaving: suffix.utf8.count + numberedSuffixRoom) + suffix
    }

    /// Room for " 999" and ".txt" after a name that may be numbered when taken.
    static let numberedSuffixRoom = 4 + 1 + fileExtension.utf8.count

    /// `name` cut to whole characters so that `reserved` more bytes fit in a file name.
    static func shortened(_ name: String, leaving reserved: Int) -> String {
        let room = max(0, 255 - reserved)
        guard name.utf8.count > room else { return name }
        var result = ""
        for character in name {
            if result.utf8.count + String(character).utf8.count > room { break }
            result.append(character)
        }
        return result
    }

    /// Keeps both sides of a conflict: saves `version`'s text as a new document named by
    /// ``conflictCopyName(for:computer:date:)`` (numbered when taken; another device's computer
    /// named with the start of its identifier, “Notes (conflict from pi 1F0C29A3 …)”), through
    /// a document save, so that editors and history see it. The version itself is left as it is.
    ///
    /// - Parameter url: The document the version belongs to.
    /// - Returns: The new document's URL.
    /// - Throws: ``DocumentKitError`` or ``InvalidTextError`` naming what could not be read
    ///   or written; nothing is created then.
    @MainActor
    public func saveConflictCopy(of version: FileVersion, of url: URL) async throws -> URL {
        let data: Data
        do {
            data = try Data(contentsOf: version.url)
        } catch {
            throw DocumentKitError(
                .ioFailure, operation: "read the conflict version of", url: url,
                detail: error.localizedDescription)
        }
        let text = try SimpleTextDocument.decodeUTF8(data)
        // Another device's name may be this computer's too: its identifier's start tells them apart.
        var computer = version.localizedNameOfSavingComputer
        if !version.isFromThisComputer, let device = version.savingDeviceIdentifier {
            computer = "\(computer ?? "another computer") \(device.prefix(8))"
        }
        let stem = Self.conflictCopyName(
            for: Self.documentName(forFileName: url.lastPathComponent), computer: computer,
            date: version.modificationDate)
        var number = 1
        while true {
            let target = try self.url(forDocumentNamed: number == 1 ? stem : "\(stem) \(number)")
            number += 1
            if FileManager.default.fileExists(atPath: target.path) { continue }
            let document = SimpleTextDocument(fileURL: target)
            document.delegate = QuietDelegate.shared
            document.documentText = text
            if await document.save(to: target, for: .forCreating) {
                _ = await document.close()
                return target
            }
            // Taken between the check and the save: try the next number.
            if let error = document.lastError as? DocumentKitError, error.code == .fileExists, number < 1000 {
                continue
            }
            throw document.lastError
                ?? DocumentKitError(.ioFailure, operation: "save the conflict copy", url: target)
        }
    }
}

/// A document delegate that keeps DocumentKit's default logging off standard error, for
/// tools that word each error themselves from the document's `lastError`.
@MainActor
public final class QuietDelegate: SimpleTextDocumentDelegate {
    /// The one instance: documents hold their delegate weakly.
    public static let shared = QuietDelegate()
    public func documentContentsDidChange(_ document: SimpleTextDocument) {}
}
