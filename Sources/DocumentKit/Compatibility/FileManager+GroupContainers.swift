import Foundation

#if !canImport(ObjectiveC)
    extension FileManager {
        /// The folder an app shares with the other apps and extensions of an application group,
        /// as Apple's `containerURL(forSecurityApplicationGroupIdentifier:)` returns it.
        ///
        /// On macOS the group's container is `~/Library/Group Containers/ID`, which the system
        /// makes the first time it is asked for, and Apple's documentation says that "a URL of
        /// the expected form is always returned, even if the app group is invalid". Linux has no
        /// entitlements, so every program of the user belongs to every group: the container is
        /// `$XDG_DATA_HOME/group-containers/ID` (`~/.local/share/group-containers/ID`), made
        /// private to the user (0700) when it is missing.
        ///
        /// For example:
        ///
        /// ```swift
        /// let shared = FileManager.default
        ///     .containerURL(forSecurityApplicationGroupIdentifier: "group.com.example.notes")
        /// ```
        ///
        /// - Parameter groupIdentifier: The group's name, such as `group.com.example.notes`.
        /// - Returns: The group's folder; nil when the identifier is not a single file name (it is
        ///   empty, `.` or `..`, or holds a `/` or a NUL), as iOS returns nil for an invalid
        ///   group. As on macOS, the URL is returned even when the folder could not be made: test
        ///   that it is there before using it.
        public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
            guard !groupIdentifier.isEmpty, groupIdentifier != ".", groupIdentifier != "..",
                !groupIdentifier.contains("/"), !groupIdentifier.contains("\0")
            else { return nil }
            let container = StandardDirectories.current.applicationSupport
                .appendingPathComponent("group-containers", isDirectory: true)
                .appendingPathComponent(groupIdentifier, isDirectory: true)
            _ = try? PrivateFolder.open(at: container, operation: "make the group container")
            return container
        }
    }
#endif
