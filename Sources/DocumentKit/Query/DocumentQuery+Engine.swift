import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DocumentQuery {
    /// One run of a query, from ``DocumentQuery/start()`` to ``DocumentQuery/stop()``: it
    /// gathers, applies the watcher's events, and publishes differences.
    ///
    /// Everything runs on `queue`, the watcher's delivery queue too, so gathering and
    /// events never interleave; the model's lock is only ever taken there.
    final class Engine: Sendable {
        struct Configuration: Sendable {
            var scopes: [[UInt8]]
            /// Folders inside the scopes that are not searched (the documents of ubiquity
            /// containers, for the data scope).
            var excludedFolders: [[UInt8]] = []
            var predicate: Unchecked<NSPredicate>?
            var fileNamePattern: String?
            var orderings: [Ordering]
            var includesHiddenItems: Bool
            var includesDirectories: Bool
            var batchingInterval: TimeInterval
            var versionStore: VersionStore?
        }

        let generation: Int
        let queue = DispatchQueue(label: "DocumentKit.DocumentQuery.engine")
        let model: Mutex<Model>
        /// Set once after init; the watcher's handler holds the engine until ``cancel()``.
        let watcher = Mutex<DirectoryWatcher?>(nil)
        /// Watches the folder the sync agents publish their status in, when a container is
        /// configured.
        let statusWatcher = Mutex<DirectoryWatcher?>(nil)
        /// The engine's registration for version news, which holds it until ``cancel()``.
        let newsListener = Mutex<VersionNewsListeners.Token?>(nil)
        let query: WeakQuery

        struct WeakQuery: @unchecked Sendable {
            // A weak reference is read atomically; it is never written after init.
            weak var query: DocumentQuery?
        }

        init(configuration: Configuration, generation: Int, query: DocumentQuery) throws {
            self.generation = generation
            self.model = Mutex(Model(configuration: configuration))
            self.query = WeakQuery(query: query)
            let watcher = try DirectoryWatcher(queue: queue) { [self] events in handle(events) }
            for scope in configuration.scopes {
                do {
                    try watcher.watch(DirectoryWatcher.url(for: scope, isDirectory: true), recursive: true)
                } catch {
                    watcher.cancel()
                    throw error
                }
            }
            self.watcher.withLock { $0 = watcher }
            // Sync status comes and goes with nothing written to the items either: the agents'
            // status files are what update the ubiquitous attributes.
            if let folder = UbiquityLookup.statusFolder() {
                try? FileManager.default.createDirectory(
                    at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                let statusWatcher = try? DirectoryWatcher(queue: queue) { [self] events in
                    // The agents' status, and the downloads apps ask of them.
                    if events.contains(where: {
                        let name = $0.url.lastPathComponent
                        return name.hasSuffix(".status.json") || name.hasSuffix(".downloads.json")
                    }) {
                        ubiquityChanged()
                    }
                }
                try? statusWatcher?.watch(folder, recursive: false)
                self.statusWatcher.withLock { $0 = statusWatcher }
            }
            // Conflicts come and go with nothing written to the items: the store's news of
            // them, from this process or another, is what updates the items' flags.
            if let store = configuration.versionStore {
                // By path: a URL's trailing slash would tell two spellings of one folder apart.
                let root = store.root.standardizedFileURL.path
                let folders = configuration.scopes.map {
                    CanonicalPath.of(DirectoryWatcher.url(for: $0, isDirectory: true))
                }
                let token = VersionNewsListeners.shared.add(folders: folders) { [self] change, _ in
                    guard change.isConflict, change.storeRootURL.standardizedFileURL.path == root else {
                        return
                    }
                    queue.async { [self] in conflictsChanged() }
                }
                newsListener.withLock { $0 = token }
            }
        }

        func cancel() {
            let watcher = self.watcher.withLock { watcher in
                defer { watcher = nil }
                return watcher
            }
            watcher?.cancel()
            statusWatcher.withLock { watcher in
                watcher?.cancel()
                watcher = nil
            }
            let token = newsListener.withLock { token in
                defer { token = nil }
                return token
            }
            if let token { VersionNewsListeners.shared.remove(token) }
            queue.async { [self] in model.withLock { $0.isCancelled = true } }
        }

        // MARK: Gathering

        func gather() {
            queue.async { [self] in
                guard let query = query.query else { return }
                let results = model.withLock { model -> [Item]? in
                    guard !model.isCancelled else { return nil }
                    model.gather()
                    let results = model.sorted
                    let committed = query.state.withLock { state -> Bool in
                        guard state.generation == generation else { return false }
                        state.phase = .live
                        state.results = results
                        let snapshot = Snapshot(results: results, added: results, changed: [], removed: [])
                        for continuation in state.continuations.values { continuation.yield(snapshot) }
                        return true
                    }
                    if !committed { model.isCancelled = true }
                    return committed ? results : nil
                }
                if results != nil {
                    query.post(DocumentQuery.didFinishGatheringNotification, generation: generation)
                }
            }
        }

        // MARK: Updating

        func handle(_ events: [DirectoryWatcher.Event]) {
            let deadline = model.withLock { model -> DispatchTime? in
                // Events queued before gathering describe changes the gathering has seen.
                guard model.isGathered && !model.isCancelled else { return nil }
                for event in events { model.apply(event) }
                return model.schedulePublish(now: .now())
            }
            if let deadline {
                queue.asyncAfter(deadline: deadline) { [self] in publish() }
            }
        }

        /// A version of an item in the scopes was added, removed or resolved: takes the
        /// store's conflicts again and publishes the items whose flag changed.
        func conflictsChanged() {
            let deadline = model.withLock { model -> DispatchTime? in
                model.configuration.versionStore?.invalidateConflictSummary()
                // A gathering still to come reads the store afresh.
                guard model.isGathered && !model.isCancelled else { return nil }
                model.recheckConflicts()
                return model.schedulePublish(now: .now())
            }
            if let deadline {
                queue.asyncAfter(deadline: deadline) { [self] in publish() }
            }
        }

        /// An agent published a container's status: updates the items whose attributes changed.
        func ubiquityChanged() {
            let deadline = model.withLock { model -> DispatchTime? in
                guard model.isGathered && !model.isCancelled else { return nil }
                model.recheckUbiquity()
                return model.schedulePublish(now: .now())
            }
            if let deadline {
                queue.asyncAfter(deadline: deadline) { [self] in publish() }
            }
        }

        func requestPublish() {
            queue.async { [self] in publish() }
        }

        func publish() {
            guard let query = query.query else { return }
            let update = model.withLock { model -> (added: [Item], changed: [Item], removed: [Item])? in
                model.isPublishScheduled = false
                guard !model.isCancelled, model.isGathered, !model.dirty.isEmpty else { return nil }
                guard query.state.withLock({ $0.updatesDisabled == 0 }) else { return nil }
                let update = model.difference()
                guard !(update.added.isEmpty && update.changed.isEmpty && update.removed.isEmpty) else {
                    model.commit(update, sorted: model.sorted, now: .now())
                    return nil
                }
                let sorted = model.sortedResults(applying: update)
                let committed = query.state.withLock { state -> Bool in
                    guard state.generation == generation, state.updatesDisabled == 0 else { return false }
                    state.results = sorted
                    let snapshot = Snapshot(
                        results: sorted, added: update.added, changed: update.changed, removed: update.removed
                    )
                    for continuation in state.continuations.values { continuation.yield(snapshot) }
                    return true
                }
                guard committed else { return nil }
                model.commit(update, sorted: sorted, now: .now())
                return update
            }
            if let update {
                query.post(
                    DocumentQuery.didUpdateNotification, generation: generation, added: update.added,
                    changed: update.changed, removed: update.removed)
            }
        }
    }
}
