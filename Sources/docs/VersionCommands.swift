import DocumentKit
import DocumentSync
import Foundation
import SimpleTextEditorDocument
import TextContainer

/// `docs versions NAME`.
enum VersionsCommand {
    static func run(_ container: TextContainer, name: String, json: Bool) throws {
        let url: URL
        let versions: [VersionSummary]
        do {
            url = try container.url(forExistingFileNamed: name)
            versions = try VersionsAdapter.versions(of: url).sorted {
                ($0.modificationDate ?? .distantPast) < ($1.modificationDate ?? .distantPast)
            }
        } catch {
            throw DocsFailure.cannot("list the versions of", name, error)
        }
        if json {
            var writer = JSONWriter()
            let file = VersionsAdapter.path(of: url, in: container)
            writer.raw("{\"document\":")
            writer.string(shownName(ofFileAt: file))
            writer.raw(",\"kind\":")
            writer.string(TextContainer.isDocumentFileName(file) && !file.contains("/") ? "document" : "file")
            writer.raw(",\"path\":")
            writer.string(url.path)
            writer.raw(",\"versions\":[")
            writer.objects(versions) { writer, version in
                writer.field("id", version.id)
                writer.field("modified", time: version.modificationDate)
                writer.field("computer", version.computer)
                writer.field("device", version.device)
                writer.field("thisDevice", version.isFromThisDevice)
                writer.field("program", version.program)
                writer.field("conflict", version.isConflict)
                writer.field("resolved", version.isResolved)
            }
            writer.raw("}\n")
            try Output.write(writer.bytes)
        } else {
            var text = ""
            for version in versions {
                text +=
                    "\(version.id)  \(LocalTime.format(version.modificationDate, seconds: true))  \(version.computer ?? "(unknown computer)")"
                // The name alone may be another device's too (cloned machines, "localhost").
                if version.isFromThisDevice {
                    text += ", this device"
                } else if let device = version.device {
                    text += ", device \(device.prefix(8))"
                }
                if let program = version.program { text += " (\(program))" }
                if version.isConflict { text += version.isResolved ? "  conflict, resolved" : "  conflict" }
                text += "\n"
            }
            try Output.write(text)
        }
    }
}

/// The name docs shows for the file at `path` in the container: a document's name without
/// `.txt`, any other file's path.
func shownName(ofFileAt path: String) -> String {
    TextContainer.isDocumentFileName(path) && !path.contains("/")
        ? TextContainer.documentName(forFileName: path) : path
}

/// `docs versions NAME --prune`.
@MainActor
enum PruneCommand {
    static func run(_ container: TextContainer, name: String, json: Bool) throws {
        let pruned: VersionsAdapter.Pruned
        do {
            let url = try container.url(forExistingFileNamed: name)
            let bases = try SyncEngine.mergeBases(
                ofContainer: container.url, configuration: SyncCommand.configuration)
            pruned = try VersionsAdapter.prune(
                url, keeping: bases[VersionsAdapter.path(of: url, in: container)].map { [$0] } ?? [])
        } catch {
            throw DocsFailure.cannot("prune the versions of", name, error)
        }
        if json {
            var writer = JSONWriter()
            writer.raw("{")
            writer.field("removed", pruned.removed)
            writer.field("kept", pruned.kept)
            writer.field("conflicts", pruned.conflicts)
            writer.field("mergeBases", pruned.bases)
            writer.field("freedBytes", pruned.freed)
            writer.field("storeBytes", pruned.storeBytes)
            writer.raw("}\n")
            try Output.write(writer.bytes)
        } else {
            var text =
                "removed \(pruned.removed) \(pruned.removed == 1 ? "version" : "versions"), freed \(ByteCount.format(pruned.freed))"
            if pruned.kept > 0 {
                text +=
                    "; kept \(pruned.kept): \(pruned.conflicts) unresolved \(pruned.conflicts == 1 ? "conflict" : "conflicts"), \(pruned.bases) sync merge \(pruned.bases == 1 ? "base" : "bases")"
            }
            text += "\nversion store: \(ByteCount.format(pruned.storeBytes))\n"
            try Output.write(text)
        }
    }
}

/// Byte counts for people: `512 bytes`, `1.5 MB` (powers of 1,000, as `docs sync` counts).
enum ByteCount {
    static func format(_ bytes: Int64) -> String {
        if bytes < 1000 { return "\(bytes) \(bytes == 1 ? "byte" : "bytes")" }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
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

/// `docs resolve NAME --keep mine|theirs|both | --merge [--version-id ID]`: see `Help.resolve`.
@MainActor
enum ResolveCommand {
    enum Keep: String {
        case mine, theirs, both
    }

    /// What resolving does: keep a side (or both), or merge them.
    enum Action: Equatable {
        case keep(Keep)
        case merge
    }

    static func run(_ container: TextContainer, name: String, action: Action, versionID: String?) async throws
    {
        do {
            let url = try container.url(forExistingDocumentNamed: name)
            let conflicts = FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? []
            let version: FileVersion
            if let versionID {
                guard let chosen = conflicts.first(where: { $0.persistentIdentifier == versionID }) else {
                    throw DocsFailure.failure(
                        "it has no unresolved conflict version “\(versionID)”; `docs versions \(name)` lists them"
                    )
                }
                version = chosen
            } else if conflicts.count == 1 {
                version = conflicts[0]
            } else if conflicts.isEmpty {
                throw DocsFailure.failure("it has no unresolved conflicts")
            } else {
                throw DocsFailure.usage(
                    "cannot resolve “\(name)”: it has \(conflicts.count) unresolved conflict versions; name one with --version-id ID (`docs versions \(name)` lists them)",
                    command: "resolve")
            }
            switch action {
            case .merge:
                let merge = try await TextContainer.resolveByMerging(version, of: url)
                try Output.write(merge.summary + "\n")
            case .keep(.mine):
                try await version.resolveConflict(ofItemAt: url, keeping: version.mineSide)
            case .keep(.theirs):
                try await version.resolveConflict(ofItemAt: url, keeping: version.theirsSide)
            case .keep(.both):
                let copy = try await container.saveConflictCopy(of: version, of: url)
                try await version.resolveConflict(ofItemAt: url, keeping: .currentItem)
                try Output.write(copy.path + "\n")
            }
        } catch let failure as DocsFailure where failure.status == .usage {
            throw failure
        } catch {
            throw DocsFailure.cannot("resolve", name, error)
        }
    }
}
