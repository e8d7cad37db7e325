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
}
