// Porting corpus. Sources: github.com/nenosinc/iCloudDocumentSync, commit 0b9a1563 (branch
// swift-rewrite), CloudDocumentSync/iCloudTypes.swift (MIT, © 2014 iRare Media; the file by
// Oskari Rauta), CloudFile.swift and iCloudDelegate.swift (the same license; by Sam Spencer).
// Written anew with their calls: the ubiquity identity token's type, an NSMetadataItem's URL
// and name with the URL's downloading status read through `allValues`, and the delegate the
// manager reports to. Ported with their imports only; the downloading status waits for item 5.
import DocumentKit
import Foundation

public typealias CorpusUbiquityIdentityToken = (NSCoding & NSCopying & NSObjectProtocol)

public struct CorpusMetadataItem {
    public var item: NSMetadataItem
    public var url: URL
    public var name: String
    #if DOCUMENTKIT_GAP_5  // GAP 5: URLUbiquitousItemDownloadingStatus is missing
        public var status: URLUbiquitousItemDownloadingStatus
    #endif

    public init?(_ item: NSMetadataItem) {
        guard let url = item.value(forAttribute: NSMetadataItemURLKey) as? URL,
            let name = item.value(forAttribute: NSMetadataItemFSNameKey) as? String,
            let values = try? url.resourceValues(forKeys: [.ubiquitousItemDownloadingStatusKey])
        else { return nil }
        #if DOCUMENTKIT_GAP_5  // GAP 5: as above
            guard
                let status = values.allValues[.ubiquitousItemDownloadingStatusKey]
                    as? URLUbiquitousItemDownloadingStatus
            else { return nil }
            self.status = status
        #else
            _ = values
        #endif
        self.item = item
        self.url = url
        self.name = name
    }
}

public struct CorpusCloudFile {
    public var name: String
    public var metadata: CorpusMetadataItem
    public var content: CorpusCloudDocument
}

public protocol CorpusCloudDelegate: AnyObject {
    func availabilityDidChange(
        toState cloudIsAvailable: Bool, withUbiquityToken: Any?, withUbiquityContainer: URL?)
    func fileUpdateDidBegin()
    func fileUpdateDidEnd()
    func filesChanged(_ files: [CorpusCloudFile])
    func iCloudDidFinishInitializing(
        with ubiquityToken: CorpusUbiquityIdentityToken?, with ubiquityContainer: URL?)
    var iCloudQueryLimitedToFileExtension: [String] { get }
}
