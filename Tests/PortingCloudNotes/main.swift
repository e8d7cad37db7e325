// The CloudNotes porting scenario, run as a process of its own (an app has the process's
// settings to itself): device A is this process's app, its ubiquity container set up in
// $XDG_CONFIG_HOME and synced by an engine as its agent would; device B is a second container
// with its own journal, versions and key-value store, synced to the same folder remote.
// PortingTests runs it and checks each observation it prints, one JSON object a line.
import DocumentKit
import DocumentSync
import Foundation
import PortingSwift5
import PortingSwift6

@MainActor
func observe(_ step: String, _ values: [String: Any]) {
    var object = values
    object["step"] = step
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

@MainActor
func waitUntil(_ what: String, _ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(20)
    while !condition() {
        if ContinuousClock.now > deadline {
            observe("timeout", ["waiting for": what])
            return
        }
        try? await Task.sleep(for: .milliseconds(10))
    }
}

@MainActor
func listing(_ notes: CloudNotes) -> [[String: Any]] {
    notes.notes.map {
        [
            "name": $0.name, "status": $0.downloadingStatus ?? "none", "uploaded": $0.isUploaded,
            "conflicts": $0.hasConflicts,
        ]
    }
}

func read(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "<missing>" }

/// The note's file status as the app reads it (`CloudNotes.fileStatus(of:)`), or the error.
func fileStatus(_ url: URL) -> [String: Any] {
    do {
        let status = try CloudNotes.fileStatus(of: url)
        return [
            "ubiquitous": status.isUbiquitous, "status": status.downloadingStatus ?? "none",
            "downloaded": status.isDownloaded, "downloading": status.isDownloading,
            "requested": status.downloadRequested, "uploaded": status.isUploaded,
            "uploading": status.isUploading, "conflicts": status.hasConflicts,
            "uploadError": status.uploadError ?? "none", "downloadError": status.downloadError ?? "none",
            "container": status.containerName ?? "none",
        ]
    } catch {
        return ["error": (error as? CocoaError)?.code.rawValue ?? -1]
    }
}

/// The same, through the Swift 5 helper, and what its promised getters say.
func helperStatus(_ url: URL) -> [String: Any] {
    let helper = ICloudItemStatus(url: url)
    return [
        "downloaded": helper.isDownloaded, "uploaded": helper.isUploaded, "conflicts": helper.hasConflicts,
        "uploadError": helper.uploadError?.code ?? 0, "promisedSize": (try? helper.promisedFileSize()) ?? -1,
        "promisedStatus": (try? helper.promisedDownloadingStatus()) ?? "none",
        "coordinatedSize": helper.sizeWithoutDownloading() ?? -1,
    ]
}

/// A folder remote whose server refuses to store one note (out of space), as a quota would.
final class RefusingRemote: Remote {
    let base: LocalFolderRemote
    let refusedName: String
    init(_ base: LocalFolderRemote, refusing name: String) {
        self.base = base
        refusedName = name
    }
    var displayName: String { base.displayName }
    var address: RemoteAddress? { base.address }
    func list(_ folder: RemotePath) throws -> RemoteListing { try base.list(folder) }
    func entry(at path: RemotePath) throws -> RemoteEntry? { try base.entry(at: path) }
    func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        try base.read(path, into: sink)
    }
    func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws -> RemoteTag?
    {
        if path.name == refusedName {
            throw RemoteError(.outOfSpace, operation: .write, path: path, remote: displayName)
        }
        return try base.write(path, from: source, condition: condition)
    }
    func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try base.delete(path, condition: condition)
    }
    func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        try base.move(source, to: destination, condition: condition)
    }
    func makeFolder(_ path: RemotePath) throws { try base.makeFolder(path) }
    func changeMarker() throws -> RemoteTag? { try base.changeMarker() }
}

/// Runs the agent program (`docs`) with `arguments`: its exit status and what it printed.
func docs(_ arguments: [String]) throws -> (Int32, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[4])
    process.arguments = arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}

/// `curl URL` with no credentials: the HTTP status and the body.
func curl(_ url: URL) throws -> (Int, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-w", "\n%{http_code}", url.absoluteString]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard let newline = text.lastIndex(of: "\n") else { return (0, text) }
    return (Int(text[text.index(after: newline)...]) ?? 0, String(text[..<newline]))
}

/// A second container, synced with an S3 store by `docs` (its credentials in the environment,
/// as the agent has them): the app's share link is a presigned URL curl downloads the note
/// with, until it expires.
@MainActor
func shareOnS3(bucket: String, folderA: URL) throws {
    let environment = ProcessInfo.processInfo.environment
    let folder = folderA.deletingLastPathComponent().appendingPathComponent("Shared", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let added = try docs([
        "remote", "add", "shared", "s3://\(bucket)/porting-\(UUID().uuidString.prefix(8))", "--endpoint",
        environment["DOCUMENTSYNC_S3_ENDPOINT"] ?? "", "--region",
        environment["DOCUMENTSYNC_S3_REGION"] ?? "",
        "--container", folder.path,
    ])
    let note = folder.appendingPathComponent("Shared.note")
    try Data("shared\n".utf8).write(to: note)
    let synced = try docs(["sync", "--container", folder.path])
    UbiquityConfiguration.publishedLinkLifetime = .seconds(3)
    let shared = try CloudNotes.shareLink(for: note)
    let fetched = try curl(shared.link)
    Thread.sleep(until: (shared.expires ?? Date()).addingTimeInterval(2))
    let late = try curl(shared.link)
    observe(
        "shared on S3",
        [
            "added": added.0, "synced": synced.0, "errors": added.1 + synced.1,
            "link": shared.link.absoluteString,
            "expiresIn": (shared.expires?.timeIntervalSinceNow ?? -99) + 5, "status": fetched.0,
            "body": fetched.1, "lateStatus": late.0,
        ])
}

@MainActor
func run() async throws {
    let arguments = CommandLine.arguments
    let remoteFolder = URL(fileURLWithPath: arguments[1], isDirectory: true)
    let folderA = URL(fileURLWithPath: arguments[2], isDirectory: true)
    let deviceB = URL(fileURLWithPath: arguments[3], isDirectory: true)

    // What `docs remote add notes file:///… --container A` records, with the agent program.
    let entry = UbiquityContainer(
        name: "notes", identifier: "iCloud.com.example.CloudNotes", folder: folderA.path,
        remote: remoteFolder.absoluteString)
    try UbiquityConfiguration.update {
        try $0.add(entry)
        $0.agent = arguments.count > 4 ? arguments[4] : nil
    }

    var settingsA = SyncConfiguration.ubiquityContainer(entry)
    settingsA.settleTime = .zero
    settingsA.publishesStatus = true
    let remote = LocalFolderRemote(root: remoteFolder)
    let engineA = try SyncEngine(
        container: folderA, remote: RefusingRemote(remote, refusing: "Full.note"), configuration: settingsA)

    let containerB = deviceB.appendingPathComponent("Container", isDirectory: true)
    try FileManager.default.createDirectory(at: containerB, withIntermediateDirectories: true)
    let storeB = VersionStore(root: deviceB.appendingPathComponent("Versions", isDirectory: true))
    let keyValuesB = deviceB.appendingPathComponent("state/keyvalue.plist")
    let engineB = try SyncEngine(
        container: containerB, remote: remote,
        configuration: SyncConfiguration(
            stateHome: deviceB.appendingPathComponent("state", isDirectory: true), versionStore: storeB,
            settleTime: .zero, computerName: "device B", keyValueStore: keyValuesB, deviceIdentifier: "B"))
    let settingsB = UbiquitousKeyValueStore(fileURL: keyValuesB, device: "B")
    func syncBoth(_ first: SyncEngine, _ second: SyncEngine) throws {
        _ = try first.sync()
        _ = try second.sync()
        VersionStore.shared.waitUntilIdle()
        storeB.waitUntilIdle()
    }

    guard let notes = CloudNotes() else {
        observe("signed out", [:])
        return
    }
    notes.start()
    await waitUntil("gathering") { notes.refreshes >= 1 }
    observe("gathered", ["notes": listing(notes)])

    guard let plan = await notes.createNote(named: "Plan", text: "one\n") else {
        observe("create failed", [:])
        return
    }
    await waitUntil("the new note") { notes.notes.contains { $0.name == "Plan.note" } }
    observe("created", ["notes": listing(notes), "file": fileStatus(plan.fileURL)])

    _ = try await engineA.sync()
    await waitUntil("the upload") { notes.notes.first?.isUploaded == true }
    observe(
        "uploaded",
        ["notes": listing(notes), "file": fileStatus(plan.fileURL), "helper": helperStatus(plan.fileURL)])

    _ = try await engineB.sync()
    let planB = containerB.appendingPathComponent("Documents/Plan.note")
    observe("on B", ["text": read(planB)])

    // B edits; A's open document reloads.
    try Data("one\nfrom B\n".utf8).write(to: planB)
    try syncBoth(engineB, engineA)
    await waitUntil("the reload") { plan.text == "one\nfrom B\n" }
    observe("reloaded", ["text": plan.text])

    // Both edit the same line: B's reaches the server first; A's becomes a conflict version.
    plan.text = "mine\n"
    plan.updateChangeCount(.done)
    let saved = await plan.autosave()
    try Data("theirs\n".utf8).write(to: planB)
    try syncBoth(engineB, engineA)
    // The conflict state and the reload to the server's text reach the open document as two
    // presenter messages, in either order (as on Apple's platforms): wait for both.
    await waitUntil("the conflict") { plan.documentState.contains(.inConflict) }
    await waitUntil("the reload to the server's text") { plan.text == "theirs\n" }
    await waitUntil("the conflict badge") { notes.notes.first?.hasConflicts == true }
    let versions = (NSFileVersion.unresolvedConflictVersionsOfItem(at: plan.fileURL) ?? []).map {
        read($0.url)
    }
    observe(
        "conflict",
        [
            "saved": saved, "text": plan.text, "inConflict": plan.documentState.contains(.inConflict),
            "versions": versions, "notes": listing(notes), "file": fileStatus(plan.fileURL),
            "helper": helperStatus(plan.fileURL),
        ])

    try CloudNotes.resolveConflicts(of: plan)
    try syncBoth(engineA, engineB)
    await waitUntil("the resolution") { !plan.documentState.contains(.inConflict) }
    observe(
        "resolved",
        [
            "inConflict": plan.documentState.contains(.inConflict),
            "conflictsOnB": storeB.unresolvedConflictVersionsOfItem(at: planB).count, "textB": read(planB),
        ])

    // A note kept on the device moves into iCloud.
    let local = deviceB.deletingLastPathComponent().appendingPathComponent("Local/Recipe.note")
    try FileManager.default.createDirectory(
        at: local.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data("flour\n".utf8).write(to: local)
    let moved = try await notes.moveToCloud(local)
    await waitUntil("the moved note") { notes.notes.contains { $0.name == "Recipe.note" } }
    try syncBoth(engineA, engineB)
    observe(
        "moved",
        [
            "localExists": FileManager.default.fileExists(atPath: local.path),
            "ubiquitous": FileManager.default.isUbiquitousItem(at: moved),
            "onB": read(containerB.appendingPathComponent("Documents/Recipe.note")), "notes": listing(notes),
        ])

    // Settings: A's font size reaches B; B's change reaches A with the notification.
    notes.setFontSize(21)
    try syncBoth(engineA, engineB)
    settingsB.synchronize()
    let fontOnB = settingsB.double(forKey: "fontSize")
    settingsB.set(25.0, forKey: "fontSize")
    settingsB.synchronize()
    try syncBoth(engineB, engineA)
    await waitUntil("the font size from B") { notes.fontSize == 25 }
    observe("settings", ["fontOnB": fontOnB, "fontOnA": notes.fontSize])

    // Evicted: listed as not downloaded; opened, it is downloaded first (A's agent fetches it).
    try await notes.evict(moved)
    await waitUntil("the eviction") {
        notes.notes.first { $0.name == "Recipe.note" }?.downloadingStatus
            == NSMetadataUbiquitousItemDownloadingStatusNotDownloaded
    }
    let promised = CloudNotes.promisedSize(of: moved)
    try FileManager.default.startDownloadingUbiquitousItem(at: moved)
    let promisedValues = try (moved as NSURL).promisedItemResourceValues(forKeys: [
        .ubiquitousItemDownloadRequestedKey, .nameKey,
    ])
    observe(
        "evicted",
        [
            "exists": FileManager.default.fileExists(atPath: moved.path), "notes": listing(notes),
            "file": fileStatus(moved), "promisedSize": promised.size ?? -1,
            "promisedDownloaded": promised.isDownloaded ?? "none", "helper": helperStatus(moved),
            "requested": (promisedValues[.ubiquitousItemDownloadRequestedKey] as? NSNumber)?.boolValue
                ?? "none",
            "name": promisedValues[.nameKey] as? String ?? "none",
            "promisedName": (try? CloudNotes.promisedName(of: moved)) ?? "none",
        ])
    let agent = Task {
        while !FileManager.default.fileExists(atPath: moved.path) {
            _ = try await engineA.sync()
            try await Task.sleep(for: .milliseconds(50))
        }
    }
    let recipe = await notes.open(moved)
    try await agent.value
    await waitUntil("the download") {
        notes.notes.first { $0.name == "Recipe.note" }?.downloadingStatus
            != NSMetadataUbiquitousItemDownloadingStatusNotDownloaded
    }
    observe(
        "downloaded",
        [
            "text": recipe?.text ?? "<not opened>", "notes": listing(notes), "file": fileStatus(moved),
            "promisedSize": CloudNotes.promisedSize(of: moved).size ?? -1,
        ])
    _ = await recipe?.close()

    // A note the server refuses (out of space): not uploaded, with the upload's error.
    guard let full = await notes.createNote(named: "Full", text: "too much\n") else {
        observe("create failed", [:])
        return
    }
    _ = try await engineA.sync()
    observe("refused", ["file": fileStatus(full.fileURL), "helper": helperStatus(full.fileURL)])
    _ = await full.close()

    // A share link: the folder remote has none, and the error says so.
    do {
        let shared = try CloudNotes.shareLink(for: plan.fileURL)
        observe("shared", ["link": shared.link.absoluteString])
    } catch {
        let cocoa = error as? CocoaError
        observe(
            "shared",
            [
                "code": cocoa?.code.rawValue ?? -1,
                "reason": cocoa?.userInfo[NSLocalizedDescriptionKey] as? String ?? "\(error)",
                "helper": ICloudItemStatus(url: plan.fileURL).publicLink()?.absoluteString ?? "none",
            ])
    }
    if arguments.count > 5 { try shareOnS3(bucket: arguments[5], folderA: folderA) }

    _ = await plan.close()
    notes.stop()
    observe("done", [:])
}

try await run()
