import Foundation

/// The documents of a container that apps asked to download (with
/// `startDownloadingUbiquitousItem(at:)`, or by opening one kept on the server only): paths
/// relative to the container, in a small file beside the container's journal that the sync
/// agent reads at each pass and clears as the downloads arrive.
///
/// Changed under the file's lock, so requests from several processes at once are all kept.
package struct UbiquityDownloadRequests: Sendable {
    package let file: URL

    package init(forContainer container: URL, stateHome: URL? = nil) {
        file = SyncStateFiles.downloadRequests(forContainer: container, stateHome: stateHome)
    }

    /// The paths asked for; none when the file is missing or unreadable (a request lost to a
    /// damaged file is asked again when the document is opened).
    package func load() -> Set<String> {
        guard let data = try? SettingsFile.contents(of: file, operation: "read the download requests"),
            let paths = try? JSONDecoder().decode([String].self, from: data)
        else { return [] }
        return Set(paths)
    }

    /// Adds `paths` to the requests.
    package func add(_ paths: Set<String>) throws {
        try change { $0.formUnion(paths) }
    }

    /// Removes the requests `isDone` says are met (downloaded, or gone from the server).
    package func remove(where isDone: (String) -> Bool) throws {
        guard !load().isEmpty else { return }
        try change { $0 = $0.filter { !isDone($0) } }
    }

    private func change(_ body: (inout Set<String>) -> Void) throws {
        let lock = try SettingsFile.lock(file, operation: "change the download requests")
        defer { _ = lock }
        var paths = load()
        let before = paths
        body(&paths)
        guard paths != before else { return }
        try SafeSave.write(
            try JSONEncoder().encode(paths.sorted()), to: file, permissions: 0o600)
    }
}
