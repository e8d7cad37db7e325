import Foundation
import Synchronization

#if !canImport(Darwin)
    extension FileManager {
        /// A link that lets anyone download a copy of the document at `url`, which must be a
        /// flat file in a ubiquity container, already uploaded; `outDate`, when given, is set to
        /// when the link stops working. As on Apple's platforms, the link is the remote's, and
        /// how long it lives is not the caller's to choose
        /// (``UbiquityConfiguration/publishedLinkLifetime``, seven days unless set).
        ///
        /// The container's sync agent program makes it (`docs share`): on an S3 remote, a
        /// presigned `GET` of the document's object (the URL carries the access key's id and a
        /// signature, never the secret); on a Nextcloud or ownCloud server, a public link share
        /// through their sharing API. A folder remote, and any other WebDAV server, has no
        /// share links: the error names the kind of remote.
        ///
        /// Apple's `AutoreleasingUnsafeMutablePointer` is an `UnsafeMutablePointer` here: both
        /// `expiration: nil` and `expiration: &date` pass, as with Apple's.
        ///
        /// ```swift
        /// var expiration: NSDate?
        /// let link = try FileManager.default.url(forPublishingUbiquitousItemAt: url, expiration: &expiration)
        /// ```
        ///
        /// As on Apple's platforms, do not call it on the main thread: it waits for the remote.
        ///
        /// - Throws: `CocoaError`: `.fileNoSuchFile` when nothing is at `url`,
        ///   `.ubiquitousFileUnavailable` when it is in no ubiquity container or not uploaded
        ///   yet, `.featureUnsupported` for a folder or package, for a remote without share links
        ///   or with no sync agent recorded, `.ubiquitousFileUbiquityServerNotAvailable` when the
        ///   remote could not make the link; each with the reason in `NSLocalizedDescriptionKey`.
        public func url(
            forPublishingUbiquitousItemAt url: URL, expiration outDate: UnsafeMutablePointer<NSDate?>?
        ) throws -> URL {
            let (container, _) = try Self.publishableItem(at: url)
            guard let agent = (try? UbiquityConfiguration.load())?.agent, isExecutableFile(atPath: agent)
            else {
                throw Self.publishingError(
                    .featureUnsupported, url,
                    "cannot make a share link of \(url.path): no sync agent is recorded for its container (docs remote add records one)"
                )
            }
            let seconds = max(1, Int(UbiquityConfiguration.publishedLinkLifetime.components.seconds))
            let status: Int32
            let output: Data
            let message: String
            do {
                (status, output, message) = try Self.run(
                    agent,
                    [
                        "share", "--container", container.folder, url.path, "--expires", String(seconds),
                        "--json",
                    ])
            } catch {
                throw Self.publishingError(
                    .featureUnsupported, url,
                    "cannot make a share link of \(url.path): the sync agent \(agent) did not start (\(error.localizedDescription))"
                )
            }
            let answer = (try? JSONSerialization.jsonObject(with: output)) as? [String: Any]
            guard status == 0 else {
                // The agent's own sentence ("docs: …"): it names the remote's kind and why.
                let reason = message.hasPrefix("docs: ") ? String(message.dropFirst(6)) : message
                throw Self.publishingError(
                    answer?["unsupported"] as? Bool == true
                        ? .featureUnsupported : .ubiquitousFileUbiquityServerNotAvailable,
                    url, reason.isEmpty ? "cannot make a share link of \(url.path)" : reason)
            }
            guard let text = answer?["url"] as? String, let link = URL(string: text), link.scheme != nil
            else {
                throw Self.publishingError(
                    .ubiquitousFileUbiquityServerNotAvailable, url,
                    "cannot make a share link of \(url.path): the sync agent gave no link")
            }
            if let outDate {
                outDate.pointee = (answer?["expires"] as? NSNumber).map {
                    NSDate(timeIntervalSince1970: $0.doubleValue)
                }
            }
            return link
        }

        /// The container holding the document at `url` and its path there, when the document can
        /// have a share link: a flat file in a ubiquity container, uploaded as it is now (what
        /// the agent last published says so). What `docs share` checks too.
        ///
        /// - Throws: `CocoaError` as ``url(forPublishingUbiquitousItemAt:expiration:)`` does.
        package static func publishableItem(at url: URL) throws -> (UbiquityContainer, String) {
            guard url.isFileURL, let container = try? UbiquityConfiguration.load().container(holding: url),
                CanonicalPath.of(url) != CanonicalPath.of(container.url)
            else {
                throw publishingError(
                    .ubiquitousFileUnavailable, url,
                    "cannot make a share link of \(url.path): it is in no ubiquity container")
            }
            guard let status = FileStatus(path: url.path, followingLinks: false) else {
                throw CocoaError(
                    .fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path, NSURLErrorKey: url])
            }
            guard status.isRegularFile else {
                throw publishingError(
                    .featureUnsupported, url,
                    "cannot make a share link of \(url.path): only a flat file has one, not a folder or package"
                )
            }
            let relative = relativePath(of: url, in: container)
            let item = UbiquityStatus.itemState(
                relative, published: UbiquityStatus.cachedRead(forContainer: container.url), status: status)
            guard item.isUploaded else {
                throw publishingError(
                    .ubiquitousFileUnavailable, url,
                    "cannot make a share link of \(url.path): its changes are not uploaded yet; sync first (docs sync)"
                )
            }
            return (container, relative)
        }

        private static func publishingError(_ code: CocoaError.Code, _ url: URL, _ reason: String)
            -> CocoaError
        {
            CocoaError(
                code,
                userInfo: [
                    NSFilePathErrorKey: url.path, NSURLErrorKey: url, NSLocalizedDescriptionKey: reason,
                ])
        }

        /// Runs the agent program with `arguments` and the folders this process resolved, and
        /// returns its exit status, its output and the last line of its errors.
        private static func run(_ program: String, _ arguments: [String]) throws -> (Int32, Data, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
            process.environment = UbiquityAgent.environment()
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            process.standardInput = FileHandle.nullDevice
            try process.run()
            // Both read at once: a pipe left unread could fill and stop the agent.
            let collected = Mutex(Data())
            let reading = DispatchGroup()
            DispatchQueue.global().async(group: reading) {
                let data = errors.fileHandleForReading.readDataToEndOfFile()
                collected.withLock { $0 = data }
            }
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            reading.wait()
            let message =
                String(decoding: collected.withLock { $0 }.suffix(4096), as: UTF8.self)
                .split(separator: "\n").last.map(String.init) ?? ""
            return (process.terminationStatus, printed, message)
        }
    }
#endif
