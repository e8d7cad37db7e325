import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An S3 answer's XML as a small tree, parsed with `XMLParser`: S3's answers are a page of a
/// listing at most (1,000 keys, a few hundred kilobytes), so a tree costs nothing and keeps
/// each reader a few lines.
struct S3XML {
    /// An element: its local name (no namespace), its text, its children in order.
    final class Element {
        let name: String
        var text = ""
        var children: [Element] = []

        init(name: String) { self.name = name }

        /// The first child named `name`.
        func child(_ name: String) -> Element? { children.first { $0.name == name } }

        /// Every child named `name`.
        func children(_ name: String) -> [Element] { children.filter { $0.name == name } }

        /// The text of the first child named `name`, trimmed.
        func value(_ name: String) -> String? { child(name).map { S3XML.trimmed($0.text) } }
    }

    /// `text` without XML's white space (space, tab, line feed, carriage return) at its ends.
    /// Not Foundation's `trimmingCharacters`: a listing of 100,000 keys trims 300,000 values,
    /// and that went through NSString, a seventh of a no-change pass.
    static func trimmed(_ text: String) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        let bytes = text.utf8
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
            let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        if first == bytes.startIndex, last == bytes.index(before: bytes.endIndex) { return text }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    /// The XML did not parse, or is not a whole document.
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    let root: Element

    /// Parses `data`, which must be one whole document: `XMLParser` accepts a body cut short
    /// (its elements never closed), and a listing page cut before its `<IsTruncated>` would
    /// otherwise read as the last page.
    ///
    /// - Throws: ``Malformed`` when it is not UTF-8, not well-formed XML, or ends before every
    ///   element it opened has closed.
    init(parsing data: Data) throws {
        guard data.isUTF8 else { throw Malformed(description: "not UTF-8 text") }
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            throw Malformed(
                description:
                    "not well-formed XML (\(parser.parserError.map { "\($0)" } ?? "no root element"))")
        }
        guard builder.open.isEmpty else {
            throw Malformed(description: "not well-formed XML (it ends before its elements close)")
        }
        self.root = root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: Element?
        var open: [Element] = []

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            let element = Element(name: elementName)
            if let parent = open.last {
                parent.children.append(element)
            } else if root == nil {
                root = element
            }
            open.append(element)
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
            qualifiedName: String?
        ) {
            _ = open.popLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            open.last?.text += string
        }
    }
}
