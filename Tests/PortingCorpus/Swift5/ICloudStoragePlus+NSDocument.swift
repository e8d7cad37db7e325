// Porting corpus. Source: github.com/kingdomseed/icloud_storage_plus, commit f8c58dc2,
// macos/icloud_storage_plus/Sources/icloud_storage_plus/ICloudDocument.swift (MIT, © 2021 Dean
// Yuan; the file by Jason Holt). Written anew with its calls: an NSDocument made with `init()`
// that reads by overriding read(from: URL, ofType:) and writes by overriding
// write(to:ofType:for:originalContentsURL:), whose data tier throws, with autosavesInPlace,
// presentedItemDidChange (resolving conflicts) and presentedItemDidMove(to:) overridden; the
// plugin calls read(from:ofType:) and write(...) itself off the main thread, then close(). Ported
// with its import only; the four-argument write waits for item 4.
import DocumentKit
import Foundation

public class CorpusStreamingNSDocument: NSDocument {
    public var sourceURL: URL?
    public var destinationURL: URL?
    public var lastError: Error?

    public override func read(from url: URL, ofType typeName: String) throws {
        guard let destinationURL = destinationURL else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSFileReadUnknownError, userInfo: nil)
        }
        try CorpusStreamingDocument.copy(from: url, to: destinationURL)
    }

    #if DOCUMENTKIT_GAP_4  // GAP 4: NSDocument.write(to:ofType:for:originalContentsURL:) and NSDocument.SaveOperationType are missing
        public override func write(
            to url: URL, ofType typeName: String, for saveOperation: NSDocument.SaveOperationType,
            originalContentsURL: URL?
        ) throws {
            guard let sourceURL = sourceURL else {
                throw NSError(domain: NSCocoaErrorDomain, code: NSFileWriteUnknownError, userInfo: nil)
            }
            try CorpusStreamingDocument.copy(from: sourceURL, to: url)
        }
    #endif

    public override func data(ofType typeName: String) throws -> Data {
        throw NSError(
            domain: NSCocoaErrorDomain, code: NSFileWriteUnknownError,
            userInfo: [NSLocalizedDescriptionKey: "Data tier is unsupported"])
    }

    public override func read(from data: Data, ofType typeName: String) throws {
        throw NSError(
            domain: NSCocoaErrorDomain, code: NSFileReadUnknownError,
            userInfo: [NSLocalizedDescriptionKey: "Data tier is unsupported"])
    }

    public override class var autosavesInPlace: Bool {
        return true
    }

    public override func presentedItemDidChange() {
        super.presentedItemDidChange()
        guard let fileURL = fileURL,
            let conflicts = NSFileVersion.unresolvedConflictVersionsOfItem(at: fileURL), !conflicts.isEmpty
        else { return }
        Task {
            try? await CorpusConflictResolver.resolveCoordinated(at: fileURL)
        }
    }

    public override func presentedItemDidMove(to newURL: URL) {
        super.presentedItemDidMove(to: newURL)
    }
}

/// The plugin's calls on the NSDocument: made on the main thread, the document read on a
/// background queue (Apple's reading and writing methods are `nonisolated`), closed on the main
/// queue.
public enum CorpusNSDocumentCalls {
    @MainActor
    public static func read(at url: URL, into destination: URL, completion: @escaping (Error?) -> Void) {
        let document = CorpusStreamingNSDocument()
        document.destinationURL = destination
        #if DOCUMENTKIT_GAP_4_NONISOLATED  // GAP 4 (fixed): Apple's read(from:ofType:) and write(to:ofType:) are `nonisolated`, as DocumentKit's now are
            DispatchQueue.global(qos: .userInitiated).async {
                defer { DispatchQueue.main.async { document.close() } }
                do {
                    try document.read(from: url, ofType: "public.data")
                    DispatchQueue.main.async { completion(nil) }
                } catch {
                    DispatchQueue.main.async { completion(error) }
                }
            }
        #else
            do {
                try document.read(from: url, ofType: "public.data")
                completion(nil)
            } catch {
                completion(error)
            }
            document.close()
        #endif
    }

    @MainActor
    public static func write(from source: URL, to url: URL) throws {
        let document = CorpusStreamingNSDocument()
        document.sourceURL = source
        defer { document.close() }
        #if DOCUMENTKIT_GAP_4  // GAP 4: write(to:ofType:for:originalContentsURL:) is missing
            try document.write(
                to: url, ofType: "public.data", for: .saveAsOperation, originalContentsURL: nil)
        #else
            try CorpusStreamingDocument.copy(from: source, to: url)
        #endif
    }
}
