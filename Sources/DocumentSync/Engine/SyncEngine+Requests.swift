import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a pass an agent ran for another process did (``SyncEngine/passThroughAgent(ofContainer:configuration:takenWithin:)``):
/// its summary, or why it failed.
private struct AgentPassAnswer: Codable {
    var summary: SyncSummary?
    var errorKind: String?
    var message: String?

    init(_ result: Result<SyncSummary, any Error>) {
        switch result {
        case .success(let summary): self.summary = summary
        case .failure(let error as SyncError): (errorKind, message) = (error.kind.rawValue, error.message)
        case .failure(let error): (errorKind, message) = (SyncError.Kind.failed.rawValue, "\(error)")
        }
    }

    func result() throws -> SyncSummary {
        if let summary { return summary }
        throw SyncError(
            errorKind.flatMap(SyncError.Kind.init(rawValue:)) ?? .failed,
            message ?? "the sync agent's pass failed")
    }
}

extension SyncEngine {
    /// One round of an agent: takes the passes other processes asked for
    /// (``SyncPassRequests``), syncs, and answers each with what the pass did.
    func syncAnsweringRequests() -> Result<SyncSummary, any Error> {
        let requests = SyncPassRequests(forContainer: container, stateHome: configuration.stateHome)
        let asked = requests.take()
        let result = Result { try sync() }
        if !asked.isEmpty, let answer = try? JSONEncoder().encode(AgentPassAnswer(result)) {
            for id in asked { requests.answer(id, with: answer) }
        }
        return result
    }

    /// Says in the lock file that this engine keeps syncing: an agent, as `docs status` lists
    /// it.
    func holdLockAsAgent() {
        SyncLockHolder(pid: getpid(), container: container.path, isAgent: true).write(toLockAt: lock.rawValue)
    }

    /// Asks the process syncing `container` (its agent) for a pass, waits for it, and returns
    /// what it did, as ``sync()`` would have here; nil when no process holds the container any
    /// more (the caller syncs it itself).
    ///
    /// A request is taken at the start of the agent's next pass, so the pass sees what was
    /// written before the request. The wait has no deadline while the pass that took it runs
    /// (the pass's requests have theirs), nor while the holder's published status moves (a
    /// long pass before it); a holder that neither takes the request nor moves for
    /// `takenWithin` is given up on.
    ///
    /// - Throws: ``SyncError``: what the agent's pass threw, or that the agent did not take the
    ///   request.
    public static func passThroughAgent(
        ofContainer container: URL, configuration: SyncConfiguration = SyncConfiguration(),
        takenWithin: Duration = .seconds(120)
    ) throws -> SyncSummary? {
        let container = URL(fileURLWithPath: CanonicalPath.of(container), isDirectory: true)
        let stateHome = configuration.stateHome
        let requests = SyncPassRequests(forContainer: container, stateHome: stateHome)
        let lock = SyncStateFiles.lock(forContainer: container, stateHome: stateHome)
        let statusFile = SyncStateFiles.status(forContainer: container, stateHome: stateHome)
        let id: String
        do {
            id = try requests.ask()
        } catch {
            throw SyncError(.failed, "cannot ask the running sync of \(container.path) for a pass: \(error)")
        }
        UbiquityAgent.wake(forContainerAt: container, stateHome: stateHome)
        var lastSign = Date()
        while true {
            let progress: SyncPassRequests.Progress
            do {
                progress = try requests.progress(of: id)
            } catch {
                throw SyncError(.failed, "the running sync of \(container.path) did not answer: \(error)")
            }
            switch progress {
            case .answered(let data):
                guard let answer = try? JSONDecoder().decode(AgentPassAnswer.self, from: data) else {
                    throw SyncError(
                        .failed, "the running sync of \(container.path) answered what is not an answer")
                }
                return try answer.result()
            case .lost:
                throw SyncError(.failed, "the running sync of \(container.path) lost the request for a pass")
            case .taken:
                lastSign = Date()
            case .waiting:
                if let updated = UbiquityStatus.read(statusFile, withSynced: false)?.updated,
                    updated > lastSign
                {
                    lastSign = updated
                }
            }
            guard let holder = SyncLockHolder.of(lock: lock) else {
                // Gone: an answer written as it went is read; else the pass is this process's.
                if case .answered = try? requests.progress(of: id) { continue }
                _ = requests.withdraw(id)
                return nil
            }
            if case .waiting = progress, Date().timeIntervalSince(lastSign) > takenWithin.seconds {
                if requests.withdraw(id) {
                    throw SyncError(
                        .busy,
                        "the sync running on \(container.path) (\(ProcessIdentity.describe(holder.pid))) did not take the request for a pass within \(Int(takenWithin.seconds)) seconds; docs status says what it does"
                    )
                }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
