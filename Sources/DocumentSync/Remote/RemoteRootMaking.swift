/// A remote whose own folder can be made again after it vanished, for "keep them" after a
/// pause for a vanished remote (``SyncPause/Reason/remoteGone``): every document is then
/// uploaded again from here, as to a new remote.
///
/// Only the last folder is made, in a parent that exists: a remote whose parent is gone too
/// (a WebDAV account or share removed) is more likely elsewhere than deleted, and is not
/// rebuilt blindly. A local folder that is missing reads as a remote not there (a disk not
/// mounted: offline, never gone), and an S3 prefix has no folder to lose, so neither is ever
/// paused for as gone.
protocol RemoteRootMaking: Remote {
    /// Makes the remote's folder, in a parent folder that exists.
    ///
    /// - Throws: ``RemoteError``: `.parentMissing` when the parent is gone too, `.exists` when
    ///   something is there.
    func makeRootFolder() throws
}
