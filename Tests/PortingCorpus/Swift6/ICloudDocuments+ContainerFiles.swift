// Porting corpus. Source: github.com/VolkovsaVSA/ICloudDocuments, commit c75d1491,
// Sources/ICloudDocuments/ICloudDocuments.swift (MIT, © 2022 Sergei Volkov), a Swift 6 package:
// files copied into and out of an iCloud container (or an app group's container), listed, and
// downloaded first. Written anew with its calls: an injected FileManager, the container from
// containerURL(forSecurityApplicationGroupIdentifier:) or url(forUbiquityContainerIdentifier:),
// contentsOfDirectory(at:includingPropertiesForKeys:options: .skipsHiddenFiles),
// startDownloadingUbiquitousItem(at:), copy and remove by path, and async forms made with
// checked continuations over the completion-handler ones. Ported with its import and one edit
// Linux forces: `ObservableObject` (Combine) dropped.
import DocumentKit
import Foundation

// PORT (Linux): `: ObservableObject` dropped (Combine is not part of the toolchain on Linux).
public final class CorpusContainerFiles {
    public enum Folder: String, Sendable {
        case hidden = "Backup"
        case documents = "Documents"
    }

    public enum ContainerError: Error, Equatable {
        case accessDenied
        case noFilesInContainer
    }

    private let folder: Folder
    private let groupName: String?
    private let fileManager: FileManager

    public init(folder: Folder = .documents, groupName: String? = nil, fileManager: FileManager = .default) {
        self.folder = folder
        self.groupName = groupName
        self.fileManager = fileManager
    }

    public var containerURL: URL? {
        if let groupName {
            fileManager
                .containerURL(forSecurityApplicationGroupIdentifier: groupName)?
                .appendingPathComponent(folder.rawValue)
        } else {
            fileManager
                .url(forUbiquityContainerIdentifier: nil)?
                .appendingPathComponent(folder.rawValue)
        }
    }

    public func listFiles(completion: (Result<[String], Error>) -> Void) {
        guard let container = containerURL else { return completion(.failure(ContainerError.accessDenied)) }
        guard
            let files = try? fileManager.contentsOfDirectory(
                at: container, includingPropertiesForKeys: nil, options: .skipsHiddenFiles)
        else { return completion(.failure(ContainerError.accessDenied)) }
        if files.isEmpty { return completion(.failure(ContainerError.noFilesInContainer)) }
        completion(.success(files.map(\.lastPathComponent).sorted()))
    }

    public func save(localFilePaths: [String], completion: (Result<[String], Error>) -> Void) {
        guard let container = containerURL else { return completion(.failure(ContainerError.accessDenied)) }
        do {
            if !fileManager.fileExists(atPath: container.path, isDirectory: nil) {
                try fileManager.createDirectory(
                    at: container, withIntermediateDirectories: true, attributes: nil)
            }
            var saved: [String] = []
            for path in localFilePaths {
                let name = (path as NSString).lastPathComponent
                let destination = container.appendingPathComponent(name)
                var isDirectory: ObjCBool = false
                if fileManager.fileExists(atPath: destination.path, isDirectory: &isDirectory) {
                    try fileManager.removeItem(atPath: destination.path)
                }
                try fileManager.copyItem(atPath: path, toPath: destination.path)
                saved.append(name)
            }
            completion(.success(saved))
        } catch {
            completion(.failure(error))
        }
    }

    public func startDownload() throws {
        guard let container = containerURL else { throw ContainerError.accessDenied }
        try fileManager.startDownloadingUbiquitousItem(at: container)
    }

    public func listFiles() async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            listFiles { continuation.resume(with: $0) }
        }
    }

    public func save(localFilePaths: [String]) async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            save(localFilePaths: localFilePaths) { continuation.resume(with: $0) }
        }
    }
}
