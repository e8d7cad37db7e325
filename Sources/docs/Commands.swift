import DocumentKit
import Foundation
import SimpleTextEditorDocument
import TextContainer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `docs list`: one directory scan, one `fstatat` per file, one write.
enum ListCommand {
    static func run(_ container: TextContainer, json: Bool) throws {
        let entries: [TextContainer.Entry]
        do {
            entries = try container.files()
        } catch let error as DocumentKitError {
            throw DocsFailure.failure("cannot list the container: \(DocsFailure.reason(for: error))")
        }
        let conflicts = VersionsAdapter.unresolvedConflictCounts(of: entries, in: container)
        if json {
            try Output.write(jsonListing(entries, conflicts: conflicts, container: container).bytes)
        } else {
            try Output.write(textListing(entries, conflicts: conflicts))
        }
    }

    static func jsonListing(_ entries: [TextContainer.Entry], conflicts: [Int], container: TextContainer)
        -> JSONWriter
    {
        let folder = container.url.path
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        var json = JSONWriter(reservingCapacity: 64 + entries.count * (prefix.utf8.count + 160))
        json.raw("{\"container\":")
        json.string(folder)
        json.raw(",\"documents\":[")
        json.objects(zip(entries, conflicts)) { json, item in
            let (entry, conflicted) = item
            json.field("name", entry.name)
            json.field("file", entry.fileName)
            json.field("path", prefix + entry.fileName)
            json.field("size", entry.size)
            json.key("modified")
            json.timestamp(seconds: entry.modificationSeconds, nanoseconds: entry.modificationNanoseconds)
            json.field("conflicts", conflicted)
            json.field("kind", entry.isDocument ? "document" : "file")
            if entry.isOnServerOnly { json.field("onServerOnly", true) }
        }
        json.raw("}\n")
        return json
    }

    static func textListing(_ entries: [TextContainer.Entry], conflicts: [Int]) -> String {
        let width = entries.map { String($0.size).count }.max() ?? 1
        var text = ""
        text.reserveCapacity(entries.count * 64)
        for (index, entry) in entries.enumerated() {
            let size = String(entry.size)
            text += String(repeating: " ", count: width - size.count) + size
            text +=
                "  " + LocalTime.format(seconds: entry.modificationSeconds) + "  "
                + Output.escaped(entry.name)
            if !entry.isDocument { text += "  (file)" }
            if entry.isOnServerOnly { text += "  (on the server only)" }
            switch conflicts[index] {
            case 0: break
            case 1: text += "  (1 conflict)"
            case let count: text += "  (\(count) conflicts)"
            }
            text += "\n"
        }
        return text
    }
}

/// Why a file could not be read: the name to show and the system's reason.
struct ReadError: Error {
    var source: String
    var reason: String
}

/// Reads a whole file with `open`/`read`, for `show` and `new --from`.
enum FileReading {
    /// The bytes of the file at `path`, or of standard input for `-`.
    ///
    /// - Throws: ``ReadError`` naming `path` and the reason.
    static func contents(ofPath path: String) throws -> [UInt8] {
        let label = path == "-" ? "standard input" : "“\(path)”"
        let descriptor: CInt
        switch path == "-" ? .success(STDIN_FILENO) : Syscall.openat(AT_FDCWD, path, O_RDONLY) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw ReadError(source: label, reason: error.description)
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        // Without a status (it cannot fail on an open descriptor but for EBADF) the read itself
        // says what is wrong, and the size is only a hint.
        let status = try? Syscall.fileStatus(of: descriptor).get()
        if status?.isDirectory == true {
            throw ReadError(source: label, reason: "it is a folder")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(Int(status?.size ?? 0), 0) + 1)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(source: label, reason: String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}

/// The reason an `InvalidTextError` gives, about `source` rather than "the file".
func notText(_ source: String, _ error: InvalidTextError) -> String {
    switch error.reason {
    case .invalidUTF8(let offset):
        return "\(source) is not UTF-8 text (the byte at offset \(offset) is not valid UTF-8)"
    case .notAFile:
        return "\(source) is a folder, not a file"
    }
}

/// `docs new NAME [--from FILE|-]`.
@MainActor
enum NewCommand {
    static func run(_ container: TextContainer, name: String, from source: String?) async throws {
        let url: URL
        do {
            url = try container.url(forNewDocumentNamed: name)
        } catch let error as DocumentKitError where error.code == .fileExists {
            throw DocsFailure.failure(
                "cannot create “\(name)”: a document with that name exists (\(error.url?.path ?? ""))")
        } catch {
            throw DocsFailure.cannot("create", name, error)
        }
        var text = ""
        if let source {
            let bytes: [UInt8]
            do {
                bytes = try FileReading.contents(ofPath: source)
            } catch let error as ReadError {
                throw DocsFailure.failure(
                    "cannot create “\(name)”: cannot read \(error.source): \(error.reason)")
            }
            do {
                text = try SimpleTextDocument.decodeUTF8(Data(bytes))
            } catch let error as InvalidTextError {
                let label = source == "-" ? "standard input" : "“\(source)”"
                throw DocsFailure.failure(
                    "cannot create “\(name)”: \(notText(label, error)); nothing was created")
            }
        }
        let document = SimpleTextDocument(fileURL: url)
        document.delegate = QuietDelegate.shared
        document.documentText = text
        guard await document.save(to: url, for: .forCreating) else {
            throw DocsFailure.cannot(
                "create", name, document.lastError ?? DocsFailure.failure("the save failed"))
        }
        _ = await document.close()
        try Output.write(url.path + "\n")
    }
}

/// `docs show NAME`: a coordinated read, refused unless the file is UTF-8 text.
@MainActor
enum ShowCommand {
    static func run(_ container: TextContainer, name: String) throws {
        let url: URL
        do {
            url = try container.url(forExistingDocumentNamed: name)
        } catch {
            throw DocsFailure.cannot("show", name, error)
        }
        let bytes: [UInt8]
        do {
            bytes = try FileCoordinator(filePresenter: nil).coordinate(readingItemAt: url) { url in
                try FileReading.contents(ofPath: url.path)
            }
        } catch let error as ReadError {
            throw DocsFailure.failure("cannot show “\(name)”: \(error.reason) (\(url.path))")
        } catch {
            throw DocsFailure.cannot("show", name, error)
        }
        if String(validating: bytes, as: UTF8.self) == nil {
            do {
                _ = try SimpleTextDocument.decodeUTF8(Data(bytes))
            } catch let error as InvalidTextError {
                throw DocsFailure.failure(
                    "cannot show “\(name)”: \(notText("it", error)); nothing was printed")
            }
        }
        try Output.write(bytes)
    }
}

/// `docs rename OLD NEW`.
enum RenameCommand {
    static func run(_ container: TextContainer, from name: String, to newName: String) throws {
        do {
            // Check the new name first: a bad one is a usage error whatever the old one is.
            _ = try TextContainer.validatedName(newName)
            let moved = try container.renameDocument(named: name, to: newName)
            try Output.write(moved.path + "\n")
        } catch let error as DocumentKitError {
            throw DocsFailure.cannot("rename", name, error)
        }
    }
}

/// `docs delete NAME`: recoverable, into the desktop's trash.
enum DeleteCommand {
    static func run(_ container: TextContainer, name: String) throws {
        do {
            let destination = try container.deleteDocument(named: name)
            try Output.write(Output.escaped(destination.path) + "\n")
        } catch {
            throw DocsFailure.cannot("delete", name, error)
        }
    }
}
