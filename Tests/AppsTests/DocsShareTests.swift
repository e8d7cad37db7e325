import Foundation
import Testing

/// `docs share`: the share link `FileManager.url(forPublishingUbiquitousItemAt:expiration:)`
/// asks the container's agent program for.
extension DocsRemoteTests {
    /// `curl URL` with no credentials: the HTTP status and the body.
    func fetch(_ url: String) throws -> (status: Int, body: String) {
        let body = remoteRoot.appendingPathComponent("fetched-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: body) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-o", body.path, "-w", "%{http_code}", url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let status = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (Int(status) ?? 0, (try? String(contentsOf: body, encoding: .utf8)) ?? "")
    }

    @Test func shareGivesAPresignedS3LinkThatWorksUntilItExpiresAndHoldsNoSecret() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let keys = URL(fileURLWithPath: try testServerSetting("DOCUMENTSYNC_S3_DIR"))
        let keyID = try String(contentsOf: keys.appendingPathComponent("access-key-id"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let secret = try String(contentsOf: keys.appendingPathComponent("secret-access-key"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let device = try DocsFolder()
        var environment = try bareEnvironment(device)
        environment["AWS_ACCESS_KEY_ID"] = keyID
        environment["AWS_SECRET_ACCESS_KEY"] = secret
        let url =
            "s3://\(try testServerSetting("DOCUMENTSYNC_S3_BUCKET"))/share-\(UUID().uuidString.prefix(8))"
        let settings = [
            "--endpoint", try testServerSetting("DOCUMENTSYNC_S3_ENDPOINT"), "--region",
            try testServerSetting("DOCUMENTSYNC_S3_REGION"),
        ]
        #expect(try docs(device, ["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        let added = try docs(device, ["remote", "add", "store", url] + settings, environment: environment)
        #expect(added.status == 0, "\(added.error)")
        let synced = try docs(device, ["sync"], environment: environment)
        #expect(synced.status == 0, "\(synced.error)")

        let shared = try docs(
            device, ["share", "Plan", "--expires", "3", "--json"], environment: environment)
        #expect(shared.status == 0, "\(shared.error)")
        let answer = try #require(try JSONSerialization.jsonObject(with: shared.outputData) as? [String: Any])
        let link = try #require(answer["url"] as? String)
        let expires = try #require(answer["expires"] as? Int)
        #expect(abs(Double(expires) - Date().timeIntervalSince1970 - 3) < 2)
        #expect(link.contains("X-Amz-Signature=") && link.contains("X-Amz-Expires=3&"))
        for text in [shared.output, shared.error] { #expect(!text.contains(secret)) }
        let fetched = try fetch(link)
        #expect(fetched.status == 200 && fetched.body == "one\n", "\(fetched)")
        Thread.sleep(until: Date(timeIntervalSince1970: Double(expires) + 2))
        #expect(try fetch(link).status == 403)

        // Changed since its upload: no link until it is synced.
        try device.write("Plan.txt", "one\ntwo\n")
        let unsynced = try docs(device, ["share", "Plan"], environment: environment)
        #expect(unsynced.status == 1)
        #expect(unsynced.error.contains("its changes are not uploaded yet; sync first"), "\(unsynced.error)")
    }

    @Test func shareOnAFolderRemoteSaysItHasNoLinks() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        #expect(try docs(device, ["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        #expect(try docs(device, ["remote", "add", "notes", remoteURL]).status == 0)
        #expect(try docs(device, ["sync"]).status == 0)
        let shared = try docs(device, ["share", "Plan", "--json"])
        #expect(shared.status == 1)
        #expect(shared.output == "{\"unsupported\":true}\n")
        #expect(
            shared.error.contains("Could not make a share link of “Plan.txt”")
                && shared.error.contains("a folder remote (file://) has no address others can download from"),
            "\(shared.error)")
        let misused = try docs(device, ["list", "--expires", "5"])
        #expect(misused.status == 2 && misused.error.contains("--expires is for share"), "\(misused.error)")
    }
}
