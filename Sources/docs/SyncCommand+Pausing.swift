import DocumentKit
import DocumentSync
import Foundation
import TextContainer

/// A paused sync, for `docs`: `docs status` names what it would delete, and
/// `docs sync --resume delete|keep` answers it, through the journal, or through the running
/// agent when one holds the container.
extension SyncCommand {
    /// How long `docs sync --resume` waits for a running agent to take the answer.
    static let agentAnswerTimeout: Duration = .seconds(120)

    /// The pause in force for `container`, or nil.
    static func pause(of container: TextContainer) throws -> SyncPause? {
        do {
            return try SyncEngine.pause(ofContainer: container.url, configuration: configuration)
        } catch {
            throw DocsFailure.failure("cannot read the sync journal of \(container.url.path): \(error)")
        }
    }

    /// A sync error in words, with how to answer a pause.
    static func explained(_ error: SyncError) -> String {
        guard error.kind == .paused else { return error.message }
        return error.message
            + " (docs status names them; docs sync --resume delete deletes them, docs sync --resume keep brings them back)"
    }

    /// Answers the pause through `engine`, which holds the container, and says what it does.
    static func resume(
        _ engine: SyncEngine, _ container: TextContainer, decision: SyncPause.Decision, json: Bool
    ) throws {
        let outcome: String?
        do {
            outcome = try engine.resume(decision)
        } catch let error as SyncError {
            throw DocsFailure.failure(error.message)
        }
        say(outcome ?? "sync of \(container.url.path) is not paused; nothing to resume", json: json)
    }

    /// Leaves the answer for the agent that holds the container, and waits until it has taken
    /// it: the pause lifted (or replaced by a new one, said as a failure), or refused.
    static func resumeThroughAgent(_ container: TextContainer, decision: SyncPause.Decision, json: Bool)
        throws -> ExitStatus
    {
        guard let pause = try pause(of: container) else {
            say("sync of \(container.url.path) is not paused; nothing to resume", json: json)
            return .success
        }
        let asked = Date()
        do {
            try UbiquityAgent.resume(
                forContainerAt: container.url, pause: pause.identifier, decision: decision)
        } catch {
            throw DocsFailure.failure(
                "cannot ask the running sync of \(container.url.path) to resume: \(error)")
        }
        let request = SyncStateFiles.resumeRequest(forContainer: container.url)
        let deadline = ContinuousClock.now + agentAnswerTimeout
        while true {
            let current = try self.pause(of: container)
            if current?.identifier != pause.identifier {
                say("sync resumed by the running sync: \(pause.outcome(of: decision))", json: json)
                if let current { throw DocsFailure.failure(explained(SyncError(.paused, current.message))) }
                return .success
            }
            // Taken and refused: the agent published why, after the answer was left.
            if FileStatus(path: request.path) == nil,
                let status = UbiquityStatus.read(forContainer: container.url),
                status.state == .paused, status.updated >= asked, let message = status.message,
                message != pause.message
            {
                throw DocsFailure.failure(message)
            }
            guard ContinuousClock.now < deadline else {
                throw DocsFailure.failure(
                    "the sync running on \(container.url.path) did not take the answer within 2 minutes; it is left for its next pass (docs status)"
                )
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// A line of what an answer did: on standard output, or on standard error beside JSON.
    private static func say(_ text: String, json: Bool) {
        if json {
            Output.error("docs: \(text)")
        } else {
            try? Output.write("\(Output.escaped(text))\n")
        }
    }

    /// The pause for `docs status`: why, each document it would delete by side, with counts,
    /// and the two answers.
    static func describe(_ pause: SyncPause) -> String {
        var text = "\(Output.escaped(pause.message))\n"
        for (side, names, count) in [
            ("here", pause.deletionsHere, pause.deletionCountHere),
            ("on the remote", pause.deletionsOnRemote, pause.deletionCountOnRemote),
        ] where count > 0 {
            text += "would be deleted \(side): \(count) of \(pause.documentCount) documents\n"
            for name in names { text += "\t\(Output.escaped(name))\n" }
        }
        text += "docs sync --resume delete: \(pause.outcome(of: .delete))\n"
        text += "docs sync --resume keep: \(pause.outcome(of: .keep))\n"
        return text
    }

    /// The pause as a JSON object, or null.
    static func write(_ pause: SyncPause?, to writer: inout JSONWriter) {
        guard let pause else { return writer.raw("null") }
        writer.raw("{")
        writer.field("reason", pause.reason.rawValue)
        writer.field("message", pause.message)
        writer.field("since", time: pause.since)
        writer.field("documents", pause.documentCount)
        writer.field("deleteHereCount", pause.deletionCountHere)
        writer.key("deleteHere")
        writer.strings(pause.deletionsHere)
        writer.field("deleteOnRemoteCount", pause.deletionCountOnRemote)
        writer.key("deleteOnRemote")
        writer.strings(pause.deletionsOnRemote)
        writer.raw("}")
    }
}
