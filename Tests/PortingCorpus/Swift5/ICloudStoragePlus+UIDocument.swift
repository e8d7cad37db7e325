// Porting corpus. Source: github.com/kingdomseed/icloud_storage_plus, commit f8c58dc2,
// ios/icloud_storage_plus/Sources/icloud_storage_plus/ICloudDocument.swift (MIT, © 2021 Dean
// Yuan; the file by Jason Holt). Written anew with its calls: a UIDocument that streams its
// contents from and to other files (an opaque payload from contents(forType:), an override of
// writeContents(_:andAttributes:safelyTo:for:) and of read(from:)), one that keeps text
// (load(fromContents:) from Data, a FileWrapper or a String) and handleError; a state observer
// that resolves conflicts; and the open / save(to:for:) / close completion-handler calls with
// documentState and hasUnsavedChanges read after open. The source's Flutter method-channel glue
// (iOSICloudStoragePlugin.swift) is not ported. Ported with its import and one Linux edit (the
// `#selector` observer).
import DocumentKit
import Foundation

public class CorpusStreamingDocument: UIDocument {
    struct StreamPayload {
        let sourceURL: URL
    }

    public var sourceURL: URL?
    public var destinationURL: URL?
    public var lastError: Error?
    public private(set) var conflictsSeen = 0
    // PORT (Linux): the block observer's token (no `#selector` observers without the
    // Objective-C runtime).
    private var stateObserver: NSObjectProtocol?

    public override init(fileURL url: URL) {
        super.init(fileURL: url)
        // PORT (Linux): was `addObserver(self, selector: #selector(documentStateChanged), ...)`.
        stateObserver = NotificationCenter.default.addObserver(
            forName: UIDocument.stateChangedNotification, object: self, queue: nil
        ) { [weak self] _ in
            MainActor.assumeIsolated { self?.documentStateChanged() }
        }
    }

    deinit {
        if let stateObserver = stateObserver { NotificationCenter.default.removeObserver(stateObserver) }
    }

    public override func contents(forType typeName: String) throws -> Any {
        guard let sourceURL = sourceURL else {
            throw NSError(
                domain: NSCocoaErrorDomain, code: NSFileWriteUnknownError,
                userInfo: [NSLocalizedDescriptionKey: "Missing source URL"])
        }
        return StreamPayload(sourceURL: sourceURL)
    }

    public override func writeContents(
        _ contents: Any, andAttributes attributes: [AnyHashable: Any]?, safelyTo url: URL,
        for saveOperation: UIDocument.SaveOperation
    ) throws {
        guard let payload = contents as? StreamPayload else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSFileWriteUnknownError, userInfo: nil)
        }
        do {
            try Self.copy(from: payload.sourceURL, to: url)
        } catch {
            lastError = error
            throw error
        }
    }

    public override func read(from url: URL) throws {
        guard let destinationURL = destinationURL else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSFileReadUnknownError, userInfo: nil)
        }
        do {
            try Self.copy(from: url, to: destinationURL)
        } catch {
            lastError = error
            throw error
        }
    }

    // PORT (Linux): `@objc` dropped.
    private func documentStateChanged() {
        if documentState.contains(.inConflict) {
            conflictsSeen += 1
            let targetURL = fileURL
            Task { [weak self] in
                do {
                    try await CorpusConflictResolver.resolveCoordinated(at: targetURL)
                } catch {
                    self?.lastError = error
                }
            }
        }
    }

    static func copy(from source: URL, to destination: URL) throws {
        try FileManager.default.createDirectory(
            at: destination.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: nil)
        try Data(contentsOf: source).write(to: destination)
    }
}

/// Text kept in place, read from whatever `load(fromContents:ofType:)` is handed.
public final class CorpusInPlaceTextDocument: UIDocument {
    public var textContents = ""
    public var lastError: Error?

    public override func contents(forType typeName: String) throws -> Any {
        textContents.data(using: .utf8) ?? Data()
    }

    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        if let data = contents as? Data {
            textContents = String(data: data, encoding: .utf8) ?? ""
        } else if let wrapper = contents as? FileWrapper, let data = wrapper.regularFileContents {
            textContents = String(data: data, encoding: .utf8) ?? ""
        } else if let text = contents as? String {
            textContents = text
        } else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSFileReadUnknownError, userInfo: nil)
        }
    }

    public override func handleError(_ error: Error, userInteractionPermitted: Bool) {
        lastError = error
        super.handleError(error, userInteractionPermitted: userInteractionPermitted)
    }
}

/// The plugin's calls on a document, with completion handlers.
public enum CorpusDocumentCalls {
    public static func writeText(_ text: String, at url: URL, completion: @escaping (Error?) -> Void) {
        let document = CorpusInPlaceTextDocument(fileURL: url)
        document.textContents = text
        document.save(to: url, for: .forCreating) { success in
            if success {
                document.close { _ in completion(nil) }
            } else {
                completion(
                    document.lastError ?? NSError(domain: NSCocoaErrorDomain, code: NSFileWriteUnknownError))
            }
        }
    }

    public static func readText(at url: URL, completion: @escaping (String?, Error?) -> Void) {
        let document = CorpusInPlaceTextDocument(fileURL: url)
        document.open { success in
            guard success else {
                completion(
                    nil,
                    document.lastError ?? NSError(domain: NSCocoaErrorDomain, code: NSFileReadUnknownError))
                return
            }
            let text = document.textContents
            document.close { _ in completion(text, nil) }
        }
    }

    public static func state(at url: URL, completion: @escaping ([String: Any]?) -> Void) {
        let document = CorpusStreamingDocument(fileURL: url)
        document.destinationURL = FileManager.default.temporaryDirectory
            .appendingPathComponent(UUID().uuidString)
        document.open { success in
            guard success else { return completion(nil) }
            var state: [String: Any] = [
                "hasConflicts": document.documentState.contains(.inConflict),
                "hasUnsavedChanges": document.hasUnsavedChanges,
                "isEditingDisabled": document.documentState.contains(.editingDisabled),
                "isClosed": document.documentState.contains(.closed),
                "isNormal": document.documentState.contains(.normal),
                "isSavingError": document.documentState.contains(.savingError),
            ]
            if let conflicts = NSFileVersion.unresolvedConflictVersionsOfItem(at: url) {
                state["conflictCount"] = conflicts.count
            }
            document.close { _ in completion(state) }
        }
    }
}
