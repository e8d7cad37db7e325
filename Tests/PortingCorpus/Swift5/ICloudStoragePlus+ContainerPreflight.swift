// Porting corpus. Source: github.com/kingdomseed/icloud_storage_plus, commit f8c58dc2,
// ios/icloud_storage_plus/Sources/icloud_storage_plus_foundation/WriteEntrypointPreflight.swift
// (MIT, © 2021 Dean Yuan; the file by Jason Holt). Written anew with its calls: the ubiquity
// container looked up off the main thread (Apple asks for that), the item's folder made in it.
// Ported with its import only.
import DocumentKit
import Foundation

@available(macOS 10.15, iOS 13.0, *)
public struct CorpusContainerPreflight {
    public static let errorDomain = "CorpusContainerPreflight"

    public init() {}

    /// The URL of `relativePath` in container `containerID`, its folder made.
    public func prepare(containerID: String?, relativePath: String) async throws -> URL {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, Error>) in
            DispatchQueue.global(qos: .userInitiated).async {
                guard let container = FileManager.default.url(forUbiquityContainerIdentifier: containerID)
                else {
                    continuation.resume(
                        throwing: NSError(
                            domain: Self.errorDomain, code: 1,
                            userInfo: [NSLocalizedDescriptionKey: "Unable to access the iCloud container."]))
                    return
                }
                let fileURL = container.appendingPathComponent(relativePath)
                do {
                    try FileManager.default.createDirectory(
                        at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true,
                        attributes: nil)
                    continuation.resume(returning: fileURL)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
