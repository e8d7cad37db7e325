// Porting corpus. Source: github.com/nenosinc/iCloudDocumentSync, commit 0b9a1563 (branch
// swift-rewrite), CloudDocumentSync/iCloudDocument.swift (MIT, © 2014 iRare Media; the file by
// Sam Spencer). Written anew with its calls: a UIDocument of Data with `init(fileURL:)` and
// `localizedName` overridden, a state description switching over `documentState`, the Data or
// NSData handed to load(fromContents:ofType:), handleError passed on to super, an undoable
// setter, and an NSFileVersion extension comparing modification dates. Ported with its import
// and one Linux edit (the selector form of registerUndo).
import DocumentKit
import Foundation

public protocol CorpusCloudDocumentDelegate {
    func documentErrorOccurred(error: Error)
}

public class CorpusCloudDocument: UIDocument {
    public var contents = Data()
    public var delegate: CorpusCloudDocumentDelegate?

    public override var localizedName: String {
        return fileURL.lastPathComponent
    }

    public var stateDescription: String {
        switch documentState {
        case .normal: return NSLocalizedString("Document state is normal", comment: "iCloud Document State")
        case .closed: return NSLocalizedString("Document is closed", comment: "iCloud Document State")
        case .inConflict:
            return NSLocalizedString("Document is in conflict", comment: "iCloud Document State")
        case .savingError: return NSLocalizedString("Document is experiencing a saving error", comment: "")
        case .editingDisabled: return NSLocalizedString("Document editing is disabled", comment: "")
        default: return NSLocalizedString("Document state is unknown", comment: "iCloud Document State")
        }
    }

    public override init(fileURL url: URL) {
        super.init(fileURL: url)
    }

    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        if let data = contents as? NSData {
            self.contents = Data(referencing: data)
        } else {
            self.contents = Data()
        }
    }

    public override func contents(forType typeName: String) throws -> Any {
        if contents.count <= 0 {
            throw NSError(
                domain: "No valid document data available.", code: 404, userInfo: ["typeName": typeName])
        }
        return contents
    }

    public override func handleError(_ error: Error, userInteractionPermitted: Bool) {
        delegate?.documentErrorOccurred(error: error)
        super.handleError(error, userInteractionPermitted: userInteractionPermitted)
    }

    // PORT (Linux): `@objc` dropped.
    public func setDocumentData(_ newData: Data) {
        let oldData = contents
        contents = newData
        undoManager?.setActionName("Data Change")
        // PORT (Linux): the handler form in place of
        // `registerUndo(withTarget: self, selector: #selector(setDocumentData(_:)), object: oldData)`.
        undoManager?.registerUndo(withTarget: self) { $0.setDocumentData(oldData) }
    }
}

extension NSFileVersion {
    public func corpusLaterVersion(_ first: NSFileVersion, second: NSFileVersion) -> NSFileVersion {
        guard let firstDate = first.modificationDate else { return first }
        guard let secondDate = second.modificationDate else { return second }
        return firstDate.compare(secondDate) != .orderedDescending ? second : first
    }
}
