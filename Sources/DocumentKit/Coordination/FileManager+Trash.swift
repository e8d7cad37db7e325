import Foundation

#if !canImport(Darwin)
    /// Apple's type of an Objective-C out-parameter, as its Swift declarations spell it
    /// (`resultingItemURL: AutoreleasingUnsafeMutablePointer<NSURL?>?`): Linux has no
    /// autorelease pool, so it is a plain pointer, and `&result` and `nil` pass as they do there.
    public typealias AutoreleasingUnsafeMutablePointer<Pointee> = UnsafeMutablePointer<Pointee>

    extension FileManager {
        /// Moves an item to the trash: the desktop's trash of the freedesktop.org Trash
        /// specification, which the file managers, `gio trash` and trash-cli list and restore
        /// from (see ``Trash``).
        ///
        /// Apple's page says only that the name may change in the trash and to use the
        /// resulting URL. Here, as a coordinated move: presenters of the item (an open document)
        /// hear `presentedItemDidMove(to:)` with its place in the trash, and accesses waiting
        /// for it follow it there.
        ///
        /// ```swift
        /// var trashed: NSURL?
        /// try FileManager.default.trashItem(at: documentURL, resultingItemURL: &trashed)
        /// ```
        ///
        /// - Parameters:
        ///   - url: The item to move to the trash (a symbolic link itself, not what it names).
        ///   - outResultingURL: Set to the item's URL in the trash; nil if not wanted.
        /// - Throws: `CocoaError`, the item left where it was: `.fileNoSuchFile` when nothing is
        ///   at `url`; `.fileWriteNoPermission` when a trash folder is a symbolic link or
        ///   another user's; `.fileWriteUnknown` when the item is on another file system whose
        ///   own trash cannot be used (it is never copied). The description names the file and
        ///   the operation; the underlying error
        ///   (`NSUnderlyingErrorKey`) is the ``DocumentKitError``.
        public func trashItem(
            at url: URL, resultingItemURL outResultingURL: AutoreleasingUnsafeMutablePointer<NSURL?>?
        ) throws {
            do {
                let trashed = try FileCoordinator.trashItem(at: url, in: .current)
                outResultingURL?.pointee = trashed as NSURL
            } catch let error as DocumentKitError {
                throw Self.cocoaError(error, url: url)
            }
        }

        private static func cocoaError(_ error: DocumentKitError, url: URL) -> CocoaError {
            let code: CocoaError.Code =
                switch error.code {
                case .fileNotFound: .fileNoSuchFile
                case .permissionDenied, .invalidSymbolicLink: .fileWriteNoPermission
                case .readOnlyVolume: .fileWriteVolumeReadOnly
                case .outOfSpace: .fileWriteOutOfSpace
                case .invalidArgument: .fileWriteInvalidFileName
                default: .fileWriteUnknown
                }
            return CocoaError(
                code,
                userInfo: [
                    NSFilePathErrorKey: url.path, NSURLErrorKey: url, NSUnderlyingErrorKey: error,
                    NSLocalizedDescriptionKey: error.description,
                ])
        }
    }
#endif

extension FileCoordinator {
    /// Moves the item at `url` into `trash` under a coordinated write `.forMoving`: presenters
    /// of the item follow it into the trash.
    ///
    /// - Returns: The item's URL in the trash.
    /// - Throws: ``DocumentKitError`` (see ``Trash/moveItem(at:date:willMove:)``), or the
    ///   coordination's error; the item is where it was.
    package static func trashItem(at url: URL, in trash: Trash) throws -> URL {
        let coordinator = FileCoordinator(filePresenter: nil)
        return try coordinator.coordinate(writingItemAt: url, options: .forMoving) { current in
            let trashed = try trash.moveItem(at: current) { coordinator.item(at: current, willMoveTo: $0) }
            coordinator.item(at: current, didMoveTo: trashed)
            return trashed
        }
    }
}
