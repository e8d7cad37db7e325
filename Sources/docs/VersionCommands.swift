import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

/// `docs versions NAME`.
enum VersionsCommand {
    static func run(_ container: TextContainer, name: String, json: Bool) throws {
        let url: URL
        let versions: [VersionSummary]
        do {
            url = try container.url(forExistingDocumentNamed: name)
            versions = try VersionsAdapter.versions(of: url).sorted {
                ($0.modificationDate ?? .distantPast) < ($1.modificationDate ?? .distantPast)
            }
        } catch {
            throw DocsFailure.cannot("list the versions of", name, error)
        }
        if json {
            var writer = JSONWriter()
            writer.raw("{\"document\":")
            writer.string(TextContainer.documentName(forFileName: url.lastPathComponent))
            writer.raw(",\"path\":")
            writer.string(url.path)
            writer.raw(",\"versions\":[")
            for (index, version) in versions.enumerated() {
                writer.raw(index == 0 ? "\n{" : ",\n{")
                writer.key("id")
                writer.string(version.id)
                writer.key("modified")
                writer.timestamp(version.modificationDate)
                writer.key("computer")
                writer.string(version.computer)
                writer.key("conflict")
                writer.bool(version.isConflict)
                writer.key("resolved")
                writer.bool(version.isResolved)
                writer.raw("}")
            }
            writer.raw("\n]}\n")
            try Output.write(writer.bytes)
        } else {
            var text = ""
            for version in versions {
                text +=
                    "\(version.id)  \(LocalTime.format(version.modificationDate))  \(version.computer ?? "(unknown computer)")"
                if version.isConflict { text += version.isResolved ? "  conflict, resolved" : "  conflict" }
                text += "\n"
            }
            try Output.write(text)
        }
    }
}

/// `docs restore NAME VERSION`.
enum RestoreCommand {
    static func run(_ container: TextContainer, name: String, versionID: String) throws {
        do {
            let url = try container.url(forExistingDocumentNamed: name)
            try VersionsAdapter.restore(versionID, of: url)
        } catch {
            throw DocsFailure.cannot("restore", name, error)
        }
    }
}

/// `docs resolve NAME --keep mine|theirs|both`.
@MainActor
enum ResolveCommand {
    enum Keep: String {
        case mine, theirs, both
    }

    static func run(_ container: TextContainer, name: String, keep: Keep) async throws {
        let url: URL
        let conflicts: [VersionSummary]
        do {
            url = try container.url(forExistingDocumentNamed: name)
            conflicts = try VersionsAdapter.unresolvedConflicts(of: url).sorted {
                ($0.modificationDate ?? .distantPast) < ($1.modificationDate ?? .distantPast)
            }
        } catch {
            throw DocsFailure.cannot("resolve", name, error)
        }
        guard !conflicts.isEmpty else {
            throw DocsFailure.failure("cannot resolve “\(name)”: it has no unresolved conflicts")
        }
        switch keep {
        case .mine:
            break
        case .theirs:
            // The latest conflict version wins; the current contents stay in the history.
            do {
                try VersionsAdapter.restore(conflicts[conflicts.count - 1].id, of: url)
            } catch {
                throw DocsFailure.cannot("resolve", name, error)
            }
        case .both:
            for conflict in conflicts {
                let created = try await saveAsNewDocument(conflict, of: url, in: container, name: name)
                try Output.write(created.path + "\n")
            }
        }
        do {
            try VersionsAdapter.resolve(conflicts, of: url)
        } catch {
            throw DocsFailure.cannot("resolve", name, error)
        }
    }

    /// Saves a conflict version as “NAME (conflict from COMPUTER DATE).txt”, through a
    /// document save so that editors and history see it.
    private static func saveAsNewDocument(
        _ conflict: VersionSummary, of url: URL, in container: TextContainer, name: String
    ) async throws -> URL {
        let text: String
        do {
            text = try SimpleTextDocument.decodeUTF8(try Data(contentsOf: conflict.contentsURL))
        } catch {
            throw DocsFailure.failure(
                "cannot resolve “\(name)”: cannot read conflict version \(conflict.id): \(error)")
        }
        let stem = conflictDocumentName(
            for: TextContainer.documentName(forFileName: url.lastPathComponent), computer: conflict.computer,
            date: conflict.modificationDate)
        var target = container.url.appendingPathComponent(stem + "." + TextContainer.fileExtension)
        var counter = 2
        while FileManager.default.fileExists(atPath: target.path) {
            target = container.url.appendingPathComponent("\(stem) \(counter).\(TextContainer.fileExtension)")
            counter += 1
        }
        let document = SimpleTextDocument(fileURL: target)
        document.delegate = QuietDelegate.shared
        document.documentText = text
        guard await document.save(to: target, for: .forCreating) else {
            throw DocsFailure.cannot(
                "resolve", name,
                document.lastError ?? DocsFailure.failure("saving the conflict version failed"))
        }
        _ = await document.close()
        return target
    }

    /// “Notes (conflict from laptop 2025-01-31 10.05)”: no slash, and no colon, which some
    /// file systems a container syncs to refuse.
    static func conflictDocumentName(for name: String, computer: String?, date: Date?) -> String {
        let host = (computer ?? "another computer").replacingOccurrences(of: "/", with: "-")
        let when = LocalTime.format(date).replacingOccurrences(of: ":", with: ".")
        return "\(name) (conflict from \(host) \(when))"
    }
}
