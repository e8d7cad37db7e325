// Porting corpus. Source: github.com/donmccaughey/Mutabit, commit 70ad9b27,
// Mutabit/MbitDocument.swift (BSD-2-Clause, © 2025 Don McCaughey): an NSDocument as Xcode's
// document-app template makes it, which every Mac document app starts from. Written anew with
// its calls: `override init()`, `autosavesInPlace` overridden as a class property, and the
// reading and writing methods throwing NSOSStatusErrorDomain's `unimpErr` until the app
// fills them in. The view layer is dropped: four `@IBOutlet` NSTextViews and
// `windowNibName`. Ported with its import only.
import DocumentKit
import Foundation

public class CorpusTemplateDocument: NSDocument {
    public override init() {
        super.init()
    }

    public override class var autosavesInPlace: Bool {
        return true
    }

    public override func data(ofType typeName: String) throws -> Data {
        throw NSError(domain: NSOSStatusErrorDomain, code: unimpErr, userInfo: nil)
    }

    public override func read(from data: Data, ofType typeName: String) throws {
        throw NSError(domain: NSOSStatusErrorDomain, code: unimpErr, userInfo: nil)
    }
}
