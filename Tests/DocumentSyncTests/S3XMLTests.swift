import Foundation
import Testing

@testable import DocumentSync

/// Reading S3's XML answers.
@Suite struct S3XMLTests {
    @Test(arguments: [
        ("plain", "plain"), ("  two sides\t", "two sides"), ("\n\r\n", ""), ("", ""),
        (" 日本語 ", "日本語"), ("\"etag\"\n", "\"etag\""), ("in side", "in side"),
        ("\u{00A0}kept\u{00A0}", "\u{00A0}kept\u{00A0}"),
    ])
    func valuesAreTrimmedOfXMLWhiteSpaceOnly(text: String, trimmed: String) {
        #expect(S3XML.trimmed(text) == trimmed)
    }

    @Test func aListingPageReadsItsValuesTrimmed() throws {
        let page = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <IsTruncated> true </IsTruncated>
              <Contents><Key>
            a/b%20c.txt
            </Key><ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag><Size>1</Size></Contents>
            </ListBucketResult>
            """
        let xml = try S3XML(parsing: Data(page.utf8))
        #expect(xml.root.value("IsTruncated") == "true")
        let contents = try #require(xml.root.child("Contents"))
        #expect(contents.value("Key") == "a/b%20c.txt")
        #expect(contents.value("ETag") == "\"0cc175b9c0f1b6a831c399e269772661\"")
        #expect(
            S3Remote.tag(" 0cc175b9c0f1b6a831c399e269772661 ").rawValue
                == "\"0cc175b9c0f1b6a831c399e269772661\"")
    }

    /// `XMLParser` reads a body cut short as if it ended there: a page cut before its
    /// `</ListBucketResult>` must fail, wherever the cut falls.
    @Test func aDocumentWhoseElementsNeverCloseIsRefused() throws {
        let page = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key></Contents></ListBucketResult>
            """
        _ = try S3XML(parsing: Data(page.utf8))
        for cut in stride(from: page.utf8.count - 1, to: 60, by: -7) {
            #expect(throws: S3XML.Malformed.self, "cut at \(cut)") {
                _ = try S3XML(parsing: Data(page.utf8.prefix(cut)))
            }
        }
    }

    /// FoundationXML stops the process on an element name that is not UTF-8: such an answer
    /// is refused before it is parsed.
    @Test func aDocumentThatIsNotUTF8IsRefused() {
        let bytes = Data("<ListBucketResult><D".utf8) + Data([0xC3]) + Data("prop/></ListBucketResult>".utf8)
        let error = #expect(throws: S3XML.Malformed.self) { _ = try S3XML(parsing: bytes) }
        #expect(error?.description == "not UTF-8 text")
        #expect(throws: Multistatus.Malformed.self) { _ = try Multistatus(parsing: bytes) }
    }
}
