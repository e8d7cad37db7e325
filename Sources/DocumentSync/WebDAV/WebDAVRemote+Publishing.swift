import Foundation

extension WebDAVRemote {
    /// Where Nextcloud's and ownCloud's sharing API (OCS) is for a WebDAV collection they serve,
    /// and the collection's path as that API names files (from the user's root).
    struct SharingAPI: Equatable {
        /// `…/ocs/v2.php/apps/files_sharing/api/v1/shares`.
        var shares: URL
        /// The collection below the user's root, "/"-separated, decoded; "" for the root.
        var folder: String

        /// The API of the server whose collection is `base`: found when the collection is
        /// under `remote.php/dav/files/USER/` or `remote.php/webdav/`, where those servers
        /// serve every user's files; nil for any other WebDAV server.
        init?(base: URL, segments: [String]) {
            guard let index = segments.firstIndex(of: "remote.php") else { return nil }
            let after = segments[(index + 1)...]
            let inside: ArraySlice<String>
            if after.starts(with: ["dav", "files"]), after.count >= 3 {
                inside = after.dropFirst(3)
            } else if after.first == "webdav" {
                inside = after.dropFirst()
            } else {
                return nil
            }
            guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else {
                return nil
            }
            let prefix = segments[..<index].map { "/" + $0 }.joined()
            components.percentEncodedPath = ""
            components.path = prefix + "/ocs/v2.php/apps/files_sharing/api/v1/shares"
            components.query = nil
            guard let shares = components.url else { return nil }
            self.shares = shares
            folder = inside.joined(separator: "/")
        }
    }

    /// A public link share of the file, through the sharing API of Nextcloud and ownCloud (a
    /// `POST` of share type 3 with an expiry date, which those servers keep to the day, so the
    /// link lives to the end of the day `lifetime` reaches, at least one). Any other WebDAV
    /// server has no share links.
    ///
    /// - Throws: ``RemoteError``: `.unsupported` for a WebDAV server that is not Nextcloud or
    ///   ownCloud, or whose sharing API answers that it is off; the server's refusal
    ///   otherwise.
    public func publishedLink(of path: RemotePath, lifetime: Duration) throws -> PublishedLink {
        guard let sharing = SharingAPI(base: base, segments: baseSegments) else {
            throw failure(
                .unsupported, .publish, path,
                detail:
                    "\(base.host ?? "the server") is a WebDAV server, and WebDAV has no share links; they are made through the sharing API of Nextcloud and ownCloud, whose files are under /remote.php/"
            )
        }
        let days = max(1, Int((Double(lifetime.components.seconds) / 86_400).rounded(.up)))
        let expiry = Date().addingTimeInterval(Double(days) * 86_400)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let shared = "/" + ([sharing.folder, path.string].filter { !$0.isEmpty }.joined(separator: "/"))
        var form = URLComponents()
        form.queryItems = [
            URLQueryItem(name: "path", value: shared), URLQueryItem(name: "shareType", value: "3"),
            URLQueryItem(name: "permissions", value: "1"),
            URLQueryItem(name: "expireDate", value: formatter.string(from: expiry)),
        ]
        let body = Data((form.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B").utf8)
        let request = request(
            "POST", sharing.shares,
            headers: [
                "OCS-APIRequest": "true", "Accept": "application/json",
                "Content-Type": "application/x-www-form-urlencoded",
            ])
        let answer = try send(request, body: .data(body), into: .memory(limit: 64 << 10), .publish, path)
        let refusal = Self.sharingRefusal(answer)
        switch answer.status {
        case 200...299: break
        case 404, 405, 501:
            // No API there, or sharing turned off ("Public link sharing is disabled").
            throw failure(
                .unsupported, .publish, path,
                detail: refusal
                    ?? "\(base.host ?? "the server") has no sharing API at \(sharing.shares.path) (HTTP \(answer.status))"
            )
        default:
            if let refusal { throw failure(.permissionDenied, .publish, path, detail: refusal) }
            throw error(status: answer, .publish, path)
        }
        guard
            let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
            let ocs = object["ocs"] as? [String: Any], let data = ocs["data"] as? [String: Any],
            let text = data["url"] as? String, let link = URL(string: text),
            ["https", "http"].contains(link.scheme?.lowercased() ?? ""), link.host != nil
        else {
            throw failure(
                .badAnswer, .publish, path, detail: refusal ?? "the sharing API's answer holds no link")
        }
        return PublishedLink(url: link, expires: expiry)
    }

    /// The sharing API's own words of refusal (`ocs.meta.message`), printable and short, with
    /// its status code.
    private static func sharingRefusal(_ answer: HTTPAnswer) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
            let meta = (object["ocs"] as? [String: Any])?["meta"] as? [String: Any],
            let message = meta["message"] as? String, !message.isEmpty
        else { return nil }
        let status = meta["statuscode"].map { "\($0)" } ?? String(answer.status)
        let printable = String(
            message.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200))
        return "the sharing API refused it (\(status)): \(printable)"
    }
}
