import Foundation

// Every Apple name DocumentKit provides, in one place, so that model-layer code written for
// Apple's SDKs ports by changing its imports:
//
// - `UIDocument` (``Document``) and `NSDocument` (``NSDocument``, a class of its own on the
//   same machinery, in Document/NSDocument.swift)
// - `NSFileCoordinator` (``FileCoordinator``), with the `error: NSErrorPointer` forms of its
//   coordinate and prepare methods (Compatibility/FileCoordinator+ErrorPointer.swift)
// - `NSFilePresenter` (``FilePresenter``), `NSFileAccessIntent` (``FileAccessIntent``)
// - `NSFileVersion` (``FileVersion``)
// - `NSEditor` (``DocumentEditor``)
// - `NSMetadataQuery` (``DocumentQuery``) and `NSMetadataItem` (``DocumentQuery/Item``), with
//   their attribute keys, in Query/
// - `NSErrorPointer`, which Foundation on Linux lacks
// - `UndoManager` and `FileWrapper`, under Apple's own names, where Foundation lacks them
// - `unimpErr` and `NSData.WritingOptions.atomicWrite` (Compatibility/CocoaConstants.swift) and
//   `FileManager.containerURL(forSecurityApplicationGroupIdentifier:)`
//   (Compatibility/FileManager+GroupContainers.swift), which Foundation on Linux lacks
//
// What Linux itself cannot have (`@objc`, `#selector`, `NSPredicate(format:)`, overriding from
// an extension) and the one-line change each needs are in docs/Porting.md.

#if !canImport(UIKit)
    /// UIKit's name for ``Document``, so that `class MyDocument: UIDocument` ports unchanged.
    public typealias UIDocument = Document
#endif

#if !canImport(ObjectiveC)
    /// Foundation's name for ``FileCoordinator``.
    public typealias NSFileCoordinator = FileCoordinator

    /// Foundation's name for ``FilePresenter``.
    public typealias NSFilePresenter = FilePresenter

    /// Foundation's name for ``FileAccessIntent``.
    public typealias NSFileAccessIntent = FileAccessIntent

    /// Foundation's name for ``FileVersion``.
    public typealias NSFileVersion = FileVersion

    /// AppKit's name for ``DocumentEditor``, an object that edits a document and commits its
    /// pending changes when asked.
    public typealias NSEditor = DocumentEditor

    /// A pointer through which a call reports an error, as Apple's `NSErrorPointer` is: pass
    /// `nil`, or `&error` for a `var error: NSError?`. Foundation on Linux has no such type.
    ///
    /// For example:
    ///
    /// ```swift
    /// var error: NSError?
    /// NSFileCoordinator(filePresenter: nil).coordinate(
    ///     readingItemAt: url, options: [], error: &error) { url in ... }
    /// ```
    public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?
#endif
