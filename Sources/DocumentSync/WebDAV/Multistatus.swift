import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A PROPFIND answer (RFC 4918's `multistatus`), parsed with `XMLParser`: per `response`, its
/// href and the properties the server found (those in a `propstat` whose status is 200).
///
/// Only the properties sync reads are kept: `resourcetype` (collection or not), `getetag`,
/// `getcontentlength`, and ownCloud's and Nextcloud's `oc:fileid` and `oc:checksums`.
struct Multistatus {
    /// One `response` element.
    struct Response {
        /// The href as the server wrote it, percent-encoded.
        var href: String
        var isCollection = false
        var etag: String?
        var contentLength: Int64?
        var fileID: String?
        var checksums: String?
        /// The locks on the item (`lockdiscovery`, when asked for).
        var locks: [ActiveLock] = []
        /// Whether a propstat of the response had status 200: one without any (a member
        /// the server answers 404 or 403 for) says nothing of the item.
        var hasProperties = false
    }

    var responses: [Response]

    /// A lock `lockdiscovery` lists: its token, its owner's text, and how long it still holds.
    struct ActiveLock {
        var token = ""
        var owner = ""
        /// "Second-N" or "Infinite", as the server wrote it.
        var timeout = ""
    }

    /// Why a body is not a multistatus sync can use.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses `data`.
    ///
    /// - Throws: ``Malformed`` when it is not UTF-8, not well-formed XML or not a
    ///   `multistatus`, or a `response` has no href.
    init(parsing data: Data) throws {
        guard data.isUTF8 else { throw Malformed(description: "not UTF-8 text") }
        let parser = XMLParser(data: data)
        let reader = Reader()
        parser.delegate = reader
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        guard parser.parse(), reader.sawMultistatus else {
            let reason =
                reader.failure
                ?? parser.parserError.map { "not well-formed XML (\($0.localizedDescription))" }
                ?? "not a WebDAV multistatus"
            throw Malformed(description: reason)
        }
        if let failure = reader.failure { throw Malformed(description: failure) }
        // XMLParser can accept a body cut short: what it opened must have closed.
        guard reader.closedEverything else {
            throw Malformed(description: "not well-formed XML (it ends before its elements close)")
        }
        responses = reader.responses
    }

    static let davNamespace = "DAV:"
    static let ownCloudNamespace = "http://owncloud.org/ns"

    /// The PROPFIND body asking for the item's locks.
    static let lockRequest = Data(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:"><d:prop><d:lockdiscovery/></d:prop></d:propfind>
        """.utf8)

    /// The PROPFIND body asking for what ``Response`` keeps.
    static let request = Data(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
        <d:prop><d:resourcetype/><d:getetag/><d:getcontentlength/><oc:fileid/><oc:checksums/></d:prop>
        </d:propfind>
        """.utf8)

    /// The same without ownCloud's properties, for a server that has none: a server answers
    /// each property it lacks with a propstat of its own, which doubles a listing.
    static let plainRequest = Data(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getetag/><d:getcontentlength/></d:prop></d:propfind>
        """.utf8)

    /// Follows the parser's events; keeps each response's properties from the propstats whose
    /// status is 200 and drops the others (Apache answers 404 for properties it lacks).
    private final class Reader: NSObject, XMLParserDelegate {
        var responses: [Response] = []
        var sawMultistatus = false
        var failure: String?
        var closedEverything: Bool { depth == 0 }

        private var depth = 0
        private var response: Response?
        private var found = Response(href: "")
        private var propstatStatus: String?
        private var text = ""
        private var inProp = false
        private var inResourceType = false
        private var lock: ActiveLock?
        private var inLockToken = false

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            depth += 1
            text = ""
            let dav = namespaceURI == Multistatus.davNamespace
            if depth == 1 {
                sawMultistatus = dav && name == "multistatus"
                if !sawMultistatus {
                    failure = "the answer's root element is “\(name)”, not a WebDAV multistatus"
                    parser.abortParsing()
                }
                return
            }
            guard dav else { return }
            switch name {
            case "response" where depth == 2: response = Response(href: "")
            case "propstat" where response != nil:
                found = Response(href: "")
                propstatStatus = nil
            case "prop" where response != nil: inProp = true
            case "resourcetype" where inProp: inResourceType = true
            case "collection" where inResourceType: found.isCollection = true
            case "activelock" where inProp: lock = ActiveLock()
            case "locktoken" where lock != nil: inLockToken = true
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(
            _ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?
        ) {
            defer {
                depth -= 1
                text = ""
            }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if namespaceURI == Multistatus.ownCloudNamespace, inProp {
                if name == "fileid" { found.fileID = value.isEmpty ? nil : value }
                if name == "checksums" { found.checksums = value.isEmpty ? nil : value }
                return
            }
            guard namespaceURI == Multistatus.davNamespace, response != nil else { return }
            switch name {
            case "href" where depth == 3: response?.href = value
            case "href" where inLockToken: lock?.token = value
            case "locktoken": inLockToken = false
            case "owner" where lock != nil: lock?.owner = value
            case "timeout" where lock != nil: lock?.timeout = value
            case "activelock":
                if let lock { found.locks.append(lock) }
                lock = nil
            case "status" where depth == 4: propstatStatus = value
            case "getetag" where inProp: found.etag = value.isEmpty ? nil : value
            case "getcontentlength" where inProp: found.contentLength = Int64(value)
            case "resourcetype": inResourceType = false
            case "prop": inProp = false
            case "propstat":
                // "HTTP/1.1 200 OK": the properties were found.
                if let status = propstatStatus?.split(separator: " ").dropFirst().first, status == "200" {
                    if var kept = response {
                        kept.hasProperties = true
                        kept.isCollection = kept.isCollection || found.isCollection
                        kept.etag = found.etag ?? kept.etag
                        kept.contentLength = found.contentLength ?? kept.contentLength
                        kept.fileID = found.fileID ?? kept.fileID
                        kept.checksums = found.checksums ?? kept.checksums
                        kept.locks += found.locks
                        response = kept
                    }
                }
            case "response" where depth == 2:
                if let response {
                    if response.href.isEmpty {
                        failure = "a response in the answer has no href"
                        parser.abortParsing()
                    } else {
                        responses.append(response)
                    }
                }
                response = nil
            default: break
            }
        }
    }
}

extension Data {
    /// Whether the bytes are UTF-8 text, as every WebDAV and S3 answer of ours is: checked before
    /// `XMLParser` sees them, since FoundationXML stops the process on an element name that is not
    /// (a server's answer must never crash sync).
    var isUTF8: Bool {
        withUnsafeBytes { String(validating: $0.bindMemory(to: UInt8.self), as: UTF8.self) != nil }
    }
}
