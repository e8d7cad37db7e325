import Foundation
import Synchronization
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct MessageChannelTests {
    /// A path whose bytes are not UTF-8: Latin-1 "é", a lone continuation byte, 0xFF.
    static let invalidUTF8Path: [UInt8] = Array("/tmp/caf".utf8) + [0xE9, 0x80, 0xFF] + Array(".txt".utf8)

    static func echo(_ request: Message) -> Message {
        var reply = request
        reply.kind = .ack
        reply.error = "from \(request.senderPID)"
        return reply
    }

    // MARK: - Frames

    @Test func frameCarriesEveryFieldAndABigEndianLength() throws {
        let message = Message(
            kind: .didMove, path: Self.invalidUTF8Path, destinationPath: [0x2F, 0xC3, 0x28], options: 5,
            presenterIDs: ["a", "b"], requestID: .max, senderPID: 42, error: "no")
        let frame = try MessageFrame.encode(message)
        let length = MessageFrame.payloadLength(header: Array(frame.prefix(4)))
        #expect(length == frame.count - 4)
        #expect(frame[0] == UInt8(length >> 24) && frame[3] == UInt8(length & 0xFF))
        #expect(try MessageFrame.decode(payload: Array(frame.dropFirst(4))) == message)
    }

    @Test func typedFieldsRoundTripAndTravelUnderTheirOwnNames() throws {
        let change = VersionChange(
            kind: .resolved, storeRoot: Self.invalidUTF8Path, itemID: "ITEM", versionID: "VERSION",
            name: "notes.txt", savingComputer: "laptop", savingProgram: "ste",
            modified: Date(timeIntervalSince1970: 1_700_000_000.25), isConflict: true, isResolved: true,
            isDiscardable: false)
        let messages = [
            Message(kind: .willWrite, path: Self.invalidUTF8Path, itemExisted: false),
            Message(kind: .didWrite, path: Self.invalidUTF8Path, itemExists: false),
            Message(kind: .versionsDidChange, path: Self.invalidUTF8Path, versionChange: change),
        ]
        for message in messages {
            let frame = try MessageFrame.encode(message)
            #expect(try MessageFrame.decode(payload: Array(frame.dropFirst(4))) == message)
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(frame.dropFirst(4))) as? [String: Any])
            #expect((json["presenterIDs"] as? [String]) == [], "no flags hide among presenter identifiers")
        }
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(MessageFrame.encode(messages[0]).dropFirst(4)))
                as? [String: Any])
        #expect(json["itemExisted"] as? Bool == false)
        #expect(json["itemExists"] == nil && json["versionChange"] == nil)
        let decoded = try MessageFrame.decode(payload: Array(MessageFrame.encode(messages[2]).dropFirst(4)))
        #expect(decoded.versionChange?.storeRoot == Self.invalidUTF8Path)
        #expect(decoded.versionChange?.kind == .resolved)
    }

    @Test func aMessageWithoutTheTypedFieldsDecodesWithNone() throws {
        let payload = Array(#"{"kind":"didWrite","path":"L3RtcC94","requestID":3}"#.utf8)
        let message = try MessageFrame.decode(payload: payload)
        #expect(message.kind == .didWrite && message.url.path == "/tmp/x" && message.requestID == 3)
        #expect(message.itemExisted == nil && message.itemExists == nil && message.versionChange == nil)
    }

    @Test func messageLargerThanTheLimitIsNotEncoded() {
        let message = Message(
            kind: .willWrite, path: [UInt8](repeating: 0x61, count: MessageFrame.maximumPayloadLength))
        #expect(throws: DocumentKitError.self) { try MessageFrame.encode(message) }
    }

    @Test func urlBytesRoundTripForUTF8Names() {
        let url = URL(fileURLWithPath: "/tmp/Notes – draft é.txt")
        let bytes = Message.fileSystemRepresentation(of: url)
        #expect(bytes == Array("/tmp/Notes – draft é.txt".utf8))
        #expect(Message.url(fromFileSystemRepresentation: bytes).path == url.path)
    }

    // MARK: - In process

    @Test func roundTripInProcess() throws {
        let tree = try TemporaryTree()
        let server = try MessageChannelServer(socketPath: tree.file("1.sock").path, handler: Self.echo)
        defer { server.stop() }
        let request = Message(
            kind: .willWrite, url: tree.file("Doc.txt"), options: 3, requestID: 7)
        let reply = try MessageChannelClient.send(request, to: server.socketPath)
        #expect(reply.kind == .ack)
        #expect(reply.requestID == 7 && reply.options == 3)
        #expect(reply.url.path == tree.file("Doc.txt").path)
        // The server puts the kernel's pid for the connection in the request.
        #expect(reply.error == "from \(getpid())")
    }

    @Test func concurrentClientsEachGetTheirOwnReplyAndHandlersOverlap() async throws {
        let tree = try TemporaryTree()
        let inFlight = InFlightCounter()
        let server = try MessageChannelServer(socketPath: tree.file("1.sock").path) { request in
            inFlight.enter()
            defer { inFlight.leave() }
            usleep(200_000)  // handlers that block, as one waiting for the main actor does
            return Self.echo(request)
        }
        defer { server.stop() }
        let replies = try await withThrowingTaskGroup(of: (Int, Message).self) { group in
            for index in 0..<50 {
                group.addTask {
                    var request = Message(kind: .willRead, path: Array("/file-\(index)".utf8))
                    request.requestID = UInt64(index)
                    request.presenterIDs = ["presenter-\(index)"]
                    return (index, try await MessageChannelClient.send(request, to: server.socketPath))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(replies.count == 50)
        for (index, reply) in replies {
            #expect(reply.requestID == UInt64(index))
            #expect(reply.path == Array("/file-\(index)".utf8))
            #expect(reply.presenterIDs == ["presenter-\(index)"])
        }
        // Blocking handlers ran side by side rather than one after another.
        #expect(inFlight.maximum > 1)
    }

    @Test func unansweredRequestTimesOutWithinTheBoundAndOthersAreStillServed() async throws {
        let tree = try TemporaryTree()
        let server = try MessageChannelServer(socketPath: tree.file("1.sock").path) { request in
            if request.kind.rawValue == "hang" { usleep(10_000_000) }
            return Self.echo(request)
        }
        defer { server.stop() }
        let timeout = Duration.milliseconds(400)
        let clock = ContinuousClock()
        let started = clock.now
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelClient.send(
                Message(kind: .init(rawValue: "hang")), to: server.socketPath, timeout: timeout)
        }
        let elapsed = clock.now - started
        #expect(error.code == .timedOut)
        #expect(error.operation == "wait for file presenter")
        #expect(error.description.contains("process \(getpid()) did not answer within 400 ms"), "\(error)")
        #expect(error.url?.path == server.socketPath)
        #expect(elapsed >= timeout)
        // Far below the handler's 10 s: the client gave up at its bound, loaded machine or not.
        #expect(elapsed < .seconds(6), "took \(elapsed)")

        let reply = try await MessageChannelClient.send(Message(kind: .didWrite), to: server.socketPath)
        #expect(reply.kind == .ack)
    }

    @Test func socketFileWithNobodyListeningIsReportedGoneAtOnce() throws {
        let tree = try TemporaryTree()
        let path = tree.file("4242.sock").path
        // A socket file whose process died: bound, never listening, descriptor closed.
        let socket = try ChannelSocket.make().get()
        _ = try Syscall.bind(socket.rawValue, unixPath: path).get()
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelClient.send(Message(kind: .willWrite), to: path)
        }
        #expect(error.code == .presenterGone)
        #expect(error.errno == Errno(rawValue: ECONNREFUSED))
        #expect(error.description.contains("process 4242 has exited"), "\(error)")
    }

    @Test func missingSocketIsReportedGone() throws {
        let tree = try TemporaryTree()
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelClient.send(Message(kind: .willWrite), to: tree.file("9.sock").path)
        }
        #expect(error.code == .presenterGone)
        #expect(error.errno == .noSuchFileOrDirectory)
    }

    @Test func stopRemovesTheSocketAndLaterSendsFindThePresenterGone() throws {
        let tree = try TemporaryTree()
        let server = try MessageChannelServer(socketPath: tree.file("1.sock").path, handler: Self.echo)
        _ = try MessageChannelClient.send(Message(kind: .willRead), to: server.socketPath)
        server.stop()
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: server.socketPath))
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelClient.send(Message(kind: .willRead), to: server.socketPath)
        }
        #expect(error.code == .presenterGone)
        // The path is free again at once.
        let again = try MessageChannelServer(socketPath: server.socketPath, handler: Self.echo)
        defer { again.stop() }
        #expect(try MessageChannelClient.send(Message(kind: .willRead), to: again.socketPath).kind == .ack)
    }

    @Test func secondServerAtALivePathIsRefusedAndTheFirstKeepsServing() throws {
        let tree = try TemporaryTree()
        let server = try MessageChannelServer(socketPath: tree.file("1.sock").path, handler: Self.echo)
        defer { server.stop() }
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelServer(socketPath: server.socketPath, handler: Self.echo)
        }
        #expect(error.code == .fileExists)
        #expect(try MessageChannelClient.send(Message(kind: .willRead), to: server.socketPath).kind == .ack)
    }

    @Test func fileThatIsNotASocketIsNotReplaced() throws {
        let tree = try TemporaryTree()
        let path = try tree.write("precious", to: "1.sock").path
        #expect(throws: DocumentKitError.self) {
            try MessageChannelServer(socketPath: path, handler: Self.echo)
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    }

    @Test func socketIsPrivateAndNewFoldersAre0700() throws {
        let tree = try TemporaryTree()
        let path = tree.file("runtime/documentkit/presenters/\(getpid()).sock").path
        let server = try MessageChannelServer(socketPath: path, handler: Self.echo)
        defer { server.stop() }
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.fileType == S_IFSOCK)
        #expect(info.permissions == 0o600)
        for folder in ["runtime", "runtime/documentkit", "runtime/documentkit/presenters"] {
            #expect(lstat(tree.file(folder).path, &info) == 0)
            #expect(info.permissions == 0o700, "\(folder)")
        }
    }

    @Test func pathSchemeUsesTheRuntimeFolder() throws {
        let tree = try TemporaryTree()
        let directories = StandardDirectories(environment: [
            "HOME": tree.url.path, "XDG_RUNTIME_DIR": tree.file("run").path,
        ])
        let path = try MessageChannelPaths.socketPath(forProcess: 1234, directories: directories)
        #expect(path == tree.file("run/documentkit/presenters/1234.sock").path)
        #expect(MessageChannelPaths.processIdentifier(ofSocketPath: path) == 1234)
    }

    @Test func socketPathLongerThanSunPathIsBoundThroughItsFolder() throws {
        let tree = try TemporaryTree()
        let deep = String(repeating: "long-folder-name/", count: 8) + "\(getpid()).sock"
        let path = tree.file(deep).path
        #expect(path.utf8.count > 108)
        let server = try MessageChannelServer(socketPath: path, handler: Self.echo)
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.fileType == S_IFSOCK && info.permissions == 0o600)
        #expect(try MessageChannelClient.send(Message(kind: .willRead), to: path).kind == .ack)
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func socketNameTooLongEvenForTheShortFormIsAClearError() throws {
        let tree = try TemporaryTree()
        let path = tree.file(String(repeating: "n", count: 120) + ".sock").path
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelServer(socketPath: path, handler: Self.echo)
        }
        #expect(error.code == .invalidArgument)
        #expect(error.errno == .fileNameTooLong)
    }

    // MARK: - Bad frames

    /// Connects without the client's help, sends `bytes` and returns whatever comes back
    /// before the server closes the connection.
    func exchangeRaw(_ bytes: [UInt8], with path: String) throws -> [UInt8] {
        let socket = try MessageChannelClient.connect(to: path, until: .now + .seconds(2))
        let deadline = ContinuousClock.now + .seconds(5)
        // An oversized announcement gets its answer while we are still sending; a reset after
        // that is fine.
        _ = socket.sendAll(bytes, until: deadline)
        var received: [UInt8] = []
        while case .success(let byte) = socket.receive(exactly: 1, until: deadline) { received += byte }
        return received
    }

    static let badFrames: [(String, [UInt8])] = [
        ("not JSON", [0, 0, 0, 8] + Array("not json".utf8)),
        ("empty payload", [0, 0, 0, 0]),
        ("JSON of another shape", [0, 0, 0, 7] + Array(#"{"x":1}"#.utf8)),
        ("path not base64", [0, 0, 0, 27] + Array(#"{"kind":"ack","path":"%%%"}"#.utf8)),
        ("over the limit", [0x7F, 0xFF, 0xFF, 0xFF] + Array("{}".utf8)),
        ("just over the limit", [0, 0x10, 0, 1]),
    ]

    @Test(arguments: badFrames)
    func badFrameIsRejectedAndTheServerSurvives(name: String, bytes: [UInt8]) throws {
        let tree = try TemporaryTree()
        let server = try MessageChannelServer(socketPath: tree.file("1.sock").path, handler: Self.echo)
        defer { server.stop() }
        let received = try exchangeRaw(bytes, with: server.socketPath)
        try #require(received.count > 4, "\(name): no reply")
        #expect(MessageFrame.payloadLength(header: Array(received.prefix(4))) == received.count - 4)
        let reply = try MessageFrame.decode(payload: Array(received.dropFirst(4)))
        #expect(reply.kind == .rejected, "\(name)")
        if name.contains("limit") {
            #expect(reply.error?.contains("exceeds the limit of 1048576") == true, "\(reply.error ?? "")")
        }
        #expect(try MessageChannelClient.send(Message(kind: .willRead), to: server.socketPath).kind == .ack)
    }

    @Test func truncatedFrameAndSilentClientDoNotStopTheServer() throws {
        let tree = try TemporaryTree()
        var configuration = MessageChannelServer.Configuration()
        configuration.transferTimeout = .milliseconds(300)
        let server = try MessageChannelServer(
            socketPath: tree.file("1.sock").path, configuration: configuration, handler: Self.echo)
        defer { server.stop() }
        do {
            let socket = try MessageChannelClient.connect(to: server.socketPath, until: .now + .seconds(1))
            _ = socket.sendAll([0, 0, 0, 100, 0x7B], until: .now + .seconds(1))
        }  // closed halfway through the frame
        let silent = try MessageChannelClient.connect(to: server.socketPath, until: .now + .seconds(1))
        #expect(try MessageChannelClient.send(Message(kind: .willRead), to: server.socketPath).kind == .ack)
        // The server drops the silent client after its transfer timeout.
        let received = silent.receive(exactly: 1, until: .now + .seconds(3))
        guard case .failure(.closed) = received else {
            Issue.record("expected the server to close the silent connection, got \(received)")
            return
        }
    }

    @Test func replyTooLargeToEncodeReachesTheClientAsAnError() throws {
        let tree = try TemporaryTree()
        // A reply too large to encode turns into a rejection, which the client reports.
        let server = try MessageChannelServer(socketPath: tree.file("1.sock").path) { request in
            Message(kind: .ack, path: [UInt8](repeating: 0x61, count: MessageFrame.maximumPayloadLength))
        }
        defer { server.stop() }
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelClient.send(Message(kind: .willRead), to: server.socketPath)
        }
        #expect(error.code == .corruptFile)
    }

    // MARK: - Across processes

    /// Starts the child's echo server and waits for it to say it is listening.
    static func startChildServer(_ path: String, arguments: [String] = []) throws -> Process {
        let process = try TestChild.start(arguments + ["channel-echo-server", path])
        let output = (process.standardOutput as! Pipe).fileHandleForReading
        var text = ""
        while !text.contains("ready\n") {
            let chunk = output.availableData
            if chunk.isEmpty {
                let outcome = TestChild.finish(process)
                throw DocumentKitError(
                    .ioFailure, operation: "start the echo server", url: nil, detail: outcome.standardError)
            }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return process
    }

    @Test func childProcessAnswersAndIsGoneOnceKilled() throws {
        let tree = try TemporaryTree()
        let path = tree.file("presenters/child.sock").path
        let child = try Self.startChildServer(path)
        defer {
            kill(child.processIdentifier, SIGKILL)
            _ = TestChild.finish(child)
        }
        var request = Message(
            kind: .willWrite, path: Self.invalidUTF8Path, destinationPath: Self.invalidUTF8Path + [0x41])
        request.presenterIDs = ["p1", "p2"]
        request.requestID = 99
        let reply = try MessageChannelClient.send(request, to: path)
        #expect(reply.kind == .ack)
        #expect(reply.senderPID == child.processIdentifier)
        #expect(reply.error == "from \(getpid())")
        #expect(reply.requestID == 99 && reply.presenterIDs == ["p1", "p2"])
        // Bytes that are not UTF-8 reach the other process and come back unchanged.
        #expect(reply.path == Self.invalidUTF8Path)
        #expect(reply.destinationPath == Self.invalidUTF8Path + [0x41])

        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: path), "SIGKILL leaves the socket file behind")
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelClient.send(Message(kind: .didWrite), to: path)
        }
        #expect(error.code == .presenterGone)

        // A new server at the dead process's path removes the stale socket and binds.
        let server = try MessageChannelServer(socketPath: path, handler: Self.echo)
        defer { server.stop() }
        #expect(try MessageChannelClient.send(Message(kind: .willRead), to: path).kind == .ack)
    }

    @Test func childKilledWhileHandlingIsReportedGone() throws {
        let tree = try TemporaryTree()
        let path = tree.file("child.sock").path
        let child = try Self.startChildServer(path)
        defer { _ = TestChild.finish(child) }
        let pid = child.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { kill(pid, SIGKILL) }
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelClient.send(Message(kind: .init(rawValue: "sleep"), options: 5000), to: path)
        }
        #expect(error.code == .presenterGone, "\(error)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run a child as another user"))
    func otherUsersAreRefusedOnBothSides() throws {
        let tree = try TemporaryTree()
        let shared = tree.file("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        #expect(chmod(tree.url.path, 0o755) == 0 && chmod(shared.path, 0o777) == 0)

        // The server refuses a client of another user even when the socket's mode lets it in.
        let server = try MessageChannelServer(
            socketPath: shared.appendingPathComponent("root.sock").path, handler: Self.echo)
        defer { server.stop() }
        #expect(chmod(server.socketPath, 0o666) == 0)
        let outcome = try TestChild.run(["as-nobody", "channel-send-unchecked", server.socketPath])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.hasPrefix("refused"), "\(outcome.standardOutput)")

        // The client refuses a server of another user.
        let path = shared.appendingPathComponent("nobody.sock").path
        let child = try Self.startChildServer(path, arguments: ["as-nobody"])
        defer {
            kill(child.processIdentifier, SIGKILL)
            _ = TestChild.finish(child)
        }
        let error = try #require(throws: DocumentKitError.self) {
            try MessageChannelClient.send(Message(kind: .willWrite), to: path)
        }
        #expect(error.code == .permissionDenied)
        #expect(error.description.contains("another user"), "\(error)")
    }
}

/// Counts handlers running at once, and the most seen.
final class InFlightCounter: Sendable {
    private let state = Mutex((current: 0, maximum: 0))

    func enter() {
        state.withLock {
            $0.current += 1
            $0.maximum = max($0.maximum, $0.current)
        }
    }
    func leave() { state.withLock { $0.current -= 1 } }
    var maximum: Int { state.withLock { $0.maximum } }
}
