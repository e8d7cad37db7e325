import Foundation

/// `NSFileCoordinator`'s error-pointer forms, beside the throwing ones: code that passes
/// `error: nil` or `error: &error` ports unchanged. Each runs the accessor when coordination
/// succeeds; when it fails, the accessor does not run and the error (a ``DocumentKitError``
/// as an `NSError`) goes through `outError`.
extension FileCoordinator {
    /// Coordinates reading the item at `url`: see
    /// ``coordinate(readingItemAt:options:byAccessor:)``.
    public func coordinate(
        readingItemAt url: URL, options: ReadingOptions = [], error outError: NSErrorPointer,
        byAccessor reader: (URL) -> Void
    ) {
        reporting(outError) { try coordinate(readingItemAt: url, options: options) { reader($0) } }
    }

    /// Coordinates writing the item at `url`: see
    /// ``coordinate(writingItemAt:options:byAccessor:)``.
    public func coordinate(
        writingItemAt url: URL, options: WritingOptions = [], error outError: NSErrorPointer,
        byAccessor writer: (URL) -> Void
    ) {
        reporting(outError) { try coordinate(writingItemAt: url, options: options) { writer($0) } }
    }

    /// Coordinates reading one item and writing another: see
    /// ``coordinate(readingItemAt:options:writingItemAt:options:byAccessor:)``.
    public func coordinate(
        readingItemAt readingURL: URL, options readingOptions: ReadingOptions = [],
        writingItemAt writingURL: URL, options writingOptions: WritingOptions = [],
        error outError: NSErrorPointer, byAccessor readerWriter: (URL, URL) -> Void
    ) {
        reporting(outError) {
            try coordinate(
                readingItemAt: readingURL, options: readingOptions, writingItemAt: writingURL,
                options: writingOptions
            ) { readerWriter($0, $1) }
        }
    }

    /// Coordinates writing two items: see
    /// ``coordinate(writingItemAt:options:writingItemAt:options:byAccessor:)``.
    public func coordinate(
        writingItemAt url1: URL, options options1: WritingOptions = [], writingItemAt url2: URL,
        options options2: WritingOptions = [], error outError: NSErrorPointer,
        byAccessor writer: (URL, URL) -> Void
    ) {
        reporting(outError) {
            try coordinate(writingItemAt: url1, options: options1, writingItemAt: url2, options: options2) {
                writer($0, $1)
            }
        }
    }

    /// Prepares a batch of reads and writes: presenters of every item are asked once, and
    /// the items stay held until `batchAccessor` calls the completion handler it is given.
    /// Accesses this coordinator makes to those items inside the batch are granted at once.
    ///
    /// Apple's `prepare(forReadingItemsAt:options:writingItemsAt:options:error:byAccessor:)`.
    public func prepare(
        forReadingItemsAt readingURLs: [URL], options readingOptions: ReadingOptions = [],
        writingItemsAt writingURLs: [URL], options writingOptions: WritingOptions = [],
        error outError: NSErrorPointer, byAccessor batchAccessor: (@escaping @Sendable () -> Void) -> Void
    ) {
        let accesses =
            readingURLs.map { Access(url: $0, event: .read, options: readingOptions.rawValue) }
            + writingURLs.map { Access(url: $0, event: .write, options: writingOptions.rawValue) }
        reporting(outError) {
            try perform(accesses) { _ in
                let done = DispatchSemaphore(value: 0)
                batchAccessor { done.signal() }
                done.wait()
            }
        }
    }

    private func reporting(_ outError: NSErrorPointer, _ body: () throws -> Void) {
        do {
            try body()
        } catch {
            outError?.pointee = error as NSError
        }
    }
}
