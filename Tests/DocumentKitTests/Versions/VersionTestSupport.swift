import CDocumentSystem
import DocumentKit
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A clock for a version store that a test sets by hand.
final class StoreClock: Sendable {
    private let date: Mutex<Date>

    init(_ start: Date) { date = Mutex(start) }

    var now: Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }

    var reading: @Sendable () -> Date { { [self] in self.now } }
}

extension VersionStore.ThinningPolicy {
    /// Every version of the first hour kept, not one a minute: for tests about something
    /// else than thinning that save many times within a second and look for each version.
    static var keepingTheFirstHour: Self {
        var policy = Self()
        policy.keepsEverythingFor = 3600
        return policy
    }
}

/// A store of the test's own under `tree`, never the shared one; it keeps every version of
/// the first hour unless `policy` says otherwise.
func makeStore(
    in tree: TemporaryTree, clock: StoreClock? = nil,
    policy: VersionStore.ThinningPolicy = .keepingTheFirstHour
)
    -> VersionStore
{
    var now: @Sendable () -> Date = { Date() }
    if let clock { now = clock.reading }
    return VersionStore(root: tree.file("store/Versions"), thinningPolicy: policy, now: now)
}

/// A document created at `url` with the first of `texts`, then saved with each of the
/// others in turn, keeping its versions in `store`; left open.
@MainActor
func documentSaved(_ texts: [String], at url: URL, store: VersionStore) async -> TextDocument {
    let document = versionedDocument(url, store: store)
    document.text = texts[0]
    #expect(await document.save(to: url, for: .forCreating))
    for text in texts.dropFirst() { #expect(await document.saveText(text)) }
    return document
}

/// A text document on `url` that keeps its versions in `store`, with autosave off.
@MainActor
func versionedDocument(_ url: URL, store: VersionStore) -> TextDocument {
    let document = TextDocument(fileURL: url)
    document.versionStore = store
    document.autosaveConfiguration.isEnabled = false
    return document
}

@MainActor
extension TextDocument {
    /// Sets the text as an edit and saves it over the file.
    func saveText(_ text: String) async -> Bool {
        self.text = text
        updateChangeCount(.done)
        return await save(to: fileURL, for: .forOverwriting)
    }
}

func contents(of version: FileVersion) -> String? {
    try? String(contentsOf: version.url, encoding: .utf8)
}

/// The bytes of the files under `url`.
func bytesUnder(_ url: URL) -> Int {
    guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return 0 }
    var total = 0
    while let relative = enumerator.nextObject() as? String {
        let path = url.appendingPathComponent(relative).path
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular
        {
            total += (attributes[.size] as? Int) ?? 0
        }
    }
    return total
}

/// Removes the identity attribute in place, as a writer that drops attributes would.
func dropIdentityAttribute(_ url: URL) -> Bool {
    let fd = open(url.path, O_RDONLY)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return cds_fremovexattr(fd, "user.documentkit.id") == 0
}

/// A presenter that records the version news it hears.
final class VersionNewsPresenter: FilePresenter, @unchecked Sendable {
    // Written on the presenter queue, read by the test after waiting.
    let url: URL
    let events = Mutex<[String]>([])
    /// The versions handed over, in the order heard.
    let versions = Mutex<[FileVersion]>([])

    init(url: URL) { self.url = url }

    var presentedItemURL: URL? { url }

    func presentedItemDidGain(_ version: FileVersion) { record("gain", version) }
    func presentedItemDidLose(_ version: FileVersion) { record("lose", version) }
    func presentedItemDidResolveConflict(_ version: FileVersion) { record("resolve", version) }

    private func record(_ event: String, _ version: FileVersion) {
        versions.withLock { $0.append(version) }
        events.withLock { $0.append(event) }
    }

    func waitFor(_ event: String, count: Int = 1) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if events.withLock({ $0.filter { $0 == event }.count }) >= count { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }
}
