import Foundation
import Synchronization
import Testing

/// The iCloud notes app of `Tests/Porting/Swift6/CloudNotes.swift`, ported by its imports,
/// across two devices synced through a folder remote: run by `porting-cloud-notes` in a
/// process of its own (its ubiquity settings are the process's), each observation checked
/// here against what Apple documents.
@Suite struct CloudNotesScenarioTests {
    /// The observations of one run, by step.
    ///
    /// - Parameter s3: The environment of an S3 store (`DOCUMENTSYNC_S3_*`, its access key as
    ///   `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`) and its bucket: the scenario then also
    ///   shares a note of a container synced with it.
    func run(s3: (environment: [String: String], bucket: String)? = nil) throws -> (
        status: Int32, steps: [String: [String: Any]], printed: String
    ) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cloud-notes-\(UUID().uuidString)", isDirectory: true)
        for name in ["remote", "A", "B"] {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        var environment = ProcessInfo.processInfo.environment
        for (variable, name) in [
            ("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data"),
        ] {
            environment[variable] = folder.appendingPathComponent(name).path
        }
        // No agent is started: the scenario runs device A's engine itself. `docs` is the agent
        // program it records, which makes share links.
        environment["DOCUMENTKIT_SYNC_AGENT"] = "manual"
        if let s3 { environment.merge(s3.environment) { $1 } }
        let (status, printed) = try runExample(
            "porting-cloud-notes",
            arguments: [
                folder.appendingPathComponent("remote").path, folder.appendingPathComponent("A").path,
                folder.appendingPathComponent("B/device").path, executable("docs").path,
            ] + (s3.map { [$0.bucket] } ?? []), environment: environment, timeout: 120)
        var steps: [String: [String: Any]] = [:]
        for line in printed.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let step = object["step"] as? String
            else { continue }
            steps[step] = object
        }
        return (status, steps, printed)
    }

    func notes(_ step: [String: Any]?) -> [[String: Any]] { step?["notes"] as? [[String: Any]] ?? [] }

    @Test func anICloudNotesAppSyncsListsResolvesMovesAndKeepsSettingsAcrossTwoDevices() throws {
        let (status, steps, printed) = try run()
        #expect(status == 0, "\(printed)")
        #expect(steps["timeout"] == nil, "\(printed)")
        #expect(steps["done"] != nil, "\(printed)")

        // The query over the ubiquitous documents scope lists the new note, current here and
        // not yet uploaded; uploaded once the agent's pass is done.
        #expect(notes(steps["gathered"]).isEmpty)
        let created = try #require(notes(steps["created"]).first, "\(printed)")
        #expect(created["name"] as? String == "Plan.note")
        #expect(created["status"] as? String == "NSMetadataUbiquitousItemDownloadingStatusCurrent")
        #expect(created["uploaded"] as? Bool == false)
        #expect(notes(steps["uploaded"]).first?["uploaded"] as? Bool == true)

        // The other device gets it; its edit reloads the open UIDocument.
        #expect(steps["on B"]?["text"] as? String == "one\n")
        #expect(steps["reloaded"]?["text"] as? String == "one\nfrom B\n")

        // A conflicting edit: the document shows the server's text, is in conflict, and the
        // user's own typing is a conflict version; the query badges it.
        let conflict = try #require(steps["conflict"], "\(printed)")
        #expect(conflict["saved"] as? Bool == true)
        #expect(conflict["text"] as? String == "theirs\n")
        #expect(conflict["inConflict"] as? Bool == true)
        #expect(conflict["versions"] as? [String] == ["mine\n"])
        #expect(notes(conflict).first?["conflicts"] as? Bool == true)
        // Resolved on A: resolved on B too.
        #expect(steps["resolved"]?["inConflict"] as? Bool == false)
        #expect(steps["resolved"]?["conflictsOnB"] as? Int == 0)

        // setUbiquitous moved the local note into the container; it reached B.
        let moved = try #require(steps["moved"], "\(printed)")
        #expect(moved["localExists"] as? Bool == false)
        #expect(moved["ubiquitous"] as? Bool == true)
        #expect(moved["onB"] as? String == "flour\n")
        #expect(notes(moved).map { $0["name"] as? String } == ["Plan.note", "Recipe.note"])

        // NSUbiquitousKeyValueStore: each device's write reaches the other, and A's app hears of
        // B's through didChangeExternallyNotification.
        #expect(steps["settings"]?["fontOnB"] as? Double == 21)
        #expect(steps["settings"]?["fontOnA"] as? Double == 25)

        // evictUbiquitousItem: the note stays listed, not downloaded; opening it downloads it.
        let evicted = try #require(steps["evicted"], "\(printed)")
        #expect(evicted["exists"] as? Bool == false)
        #expect(
            notes(evicted).first { $0["name"] as? String == "Recipe.note" }?["status"] as? String
                == "NSMetadataUbiquitousItemDownloadingStatusNotDownloaded")
        #expect(steps["downloaded"]?["text"] as? String == "flour\n", "\(printed)")

        // One run of the scenario serves both: it takes seconds.
        try checkUbiquitousResourceValues(steps, printed)

        // url(forPublishingUbiquitousItemAt:expiration:) on a folder remote: Cocoa's
        // featureUnsupported, naming the kind of remote; the Swift 5 helper gets nil.
        let shared = try #require(steps["shared"], "\(printed)")
        #expect(shared["code"] as? Int == CocoaError.featureUnsupported.rawValue, "\(shared)")
        #expect((shared["reason"] as? String)?.contains("a folder remote (file://)") == true, "\(shared)")
        #expect(shared["helper"] as? String == "none")
    }

    /// The app's share link of a note in a container synced with S3 (SeaweedFS here): a
    /// presigned URL, made by the agent program, that curl downloads the note with until it
    /// expires (3 s here), and that holds no secret.
    @Test func anICloudNotesAppsShareLinkOnS3DownloadsTheNoteUntilItExpires() throws {
        func setting(_ name: String) throws -> String {
            guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
                throw CocoaError(
                    .featureUnsupported,
                    userInfo: [
                        NSLocalizedDescriptionKey: "\(name) is not set: run the tests with scripts/test"
                    ])
            }
            return value
        }
        let keys = URL(fileURLWithPath: try setting("DOCUMENTSYNC_S3_DIR"))
        func key(_ name: String) throws -> String {
            try String(contentsOf: keys.appendingPathComponent(name), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let secret = try key("secret-access-key")
        let environment = [
            "DOCUMENTSYNC_S3_ENDPOINT": try setting("DOCUMENTSYNC_S3_ENDPOINT"),
            "DOCUMENTSYNC_S3_REGION": try setting("DOCUMENTSYNC_S3_REGION"),
            "AWS_ACCESS_KEY_ID": try key("access-key-id"), "AWS_SECRET_ACCESS_KEY": secret,
        ]
        let (status, steps, printed) = try run(s3: (environment, try setting("DOCUMENTSYNC_S3_BUCKET")))
        #expect(status == 0, "\(printed)")
        let shared = try #require(steps["shared on S3"], "\(printed)")
        #expect(shared["added"] as? Int == 0 && shared["synced"] as? Int == 0, "\(shared)")
        let link = try #require(shared["link"] as? String)
        #expect(link.contains("X-Amz-Expires=3&") && link.contains("X-Amz-Signature="))
        #expect(!link.contains(secret) && !printed.contains(secret))
        #expect(abs((shared["expiresIn"] as? Double ?? 0) - 3) < 2, "\(shared)")
        #expect(shared["status"] as? Int == 200 && shared["body"] as? String == "shared\n", "\(shared)")
        #expect(shared["lateStatus"] as? Int == 403, "\(shared)")
    }

    func file(_ step: String, _ steps: [String: [String: Any]], _ key: String = "file") -> [String: Any] {
        steps[step]?[key] as? [String: Any] ?? [:]
    }

    /// `url.resourceValues(forKeys:)` with the ubiquitous keys and the promised-item getters, as
    /// the app (Swift 6) and a helper library (Swift 5) call them, against the state device A's
    /// engine published: Apple's documented meaning of each key.
    func checkUbiquitousResourceValues(_ steps: [String: [String: Any]], _ printed: String) throws {
        let current = "NSURLUbiquitousItemDownloadingStatusCurrent"

        // Saved here, not uploaded yet: current (the local copy is the latest known), ubiquitous,
        // in the container named "notes".
        let created = file("created", steps)
        #expect(created["ubiquitous"] as? Bool == true, "\(printed)")
        #expect(created["status"] as? String == current)
        #expect(created["downloaded"] as? Bool == true)
        #expect(created["uploaded"] as? Bool == false)
        #expect(created["conflicts"] as? Bool == false)
        #expect(created["container"] as? String == "notes")
        #expect(created["uploadError"] as? String == "none")

        // After the agent's pass: uploaded, nothing moving.
        let uploaded = file("uploaded", steps)
        #expect(uploaded["uploaded"] as? Bool == true, "\(printed)")
        #expect(uploaded["uploading"] as? Bool == false)
        #expect(uploaded["downloading"] as? Bool == false)
        let helper = file("uploaded", steps, "helper")
        #expect(helper["downloaded"] as? Bool == true && helper["uploaded"] as? Bool == true, "\(printed)")
        #expect(helper["promisedSize"] as? Int == 4)
        #expect(helper["promisedStatus"] as? String == current)

        // In conflict: the key says so, in both language modes.
        #expect(file("conflict", steps)["conflicts"] as? Bool == true, "\(printed)")
        #expect(file("conflict", steps, "helper")["conflicts"] as? Bool == true)

        // Evicted: the document is not there, so its resource values fail as Apple's do (no
        // such file); its promised item answers from the placeholder, inside a metadata-only
        // coordinated read that does not download it.
        let evicted = try #require(steps["evicted"], "\(printed)")
        #expect(
            file("evicted", steps)["error"] as? Int == CocoaError.fileReadNoSuchFile.rawValue, "\(printed)")
        #expect(evicted["promisedSize"] as? Int == 6)
        #expect(evicted["promisedDownloaded"] as? Bool == false)
        #expect(evicted["requested"] as? Bool == true)
        #expect(evicted["name"] as? String == "Recipe.note")
        #expect(evicted["promisedName"] as? String == "Recipe.note")
        let evictedHelper = file("evicted", steps, "helper")
        #expect(evictedHelper["downloaded"] as? Bool == false)
        #expect(evictedHelper["promisedSize"] as? Int == 6)
        #expect(evictedHelper["coordinatedSize"] as? Int == 6)
        #expect(
            evictedHelper["promisedStatus"] as? String == "NSURLUbiquitousItemDownloadingStatusNotDownloaded")
        // Downloaded again: current.
        #expect(file("downloaded", steps)["status"] as? String == current, "\(printed)")
        #expect(steps["downloaded"]?["promisedSize"] as? Int == 6)

        // Refused by the server: not uploaded, with the reason, as a Cocoa ubiquity error.
        let refused = file("refused", steps)
        #expect(refused["uploaded"] as? Bool == false, "\(printed)")
        #expect((refused["uploadError"] as? String)?.contains("Full.note") == true, "\(printed)")
        #expect(
            file("refused", steps, "helper")["uploadError"] as? Int
                == CocoaError.ubiquitousFileUbiquityServerNotAvailable.rawValue)
    }
}
