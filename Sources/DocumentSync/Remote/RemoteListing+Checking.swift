import Foundation

/// The one check every remote's listing goes through before the engine sees it; its rules are
/// ``RemoteListing``'s.
extension Remote {
    /// The listing of `folder` holding `entries`, whose names are as the remote spells them
    /// (not yet in NFC), checked as ``RemoteListing`` says: names that cannot be names, two
    /// spellings of one name and items listed twice differently fail it; items listed twice
    /// alike are one; sync's own names are left out.
    ///
    /// - Throws: ``RemoteError`` of kind `.badAnswer` for `.list` on `folder`, naming the name.
    func checkedListing(_ folder: RemotePath, _ entries: [RemoteEntry], folderTag: RemoteTag?) throws
        -> RemoteListing
    {
        var kept: [RemoteEntry] = []
        kept.reserveCapacity(entries.count)
        // The spelling each kept entry was listed with, and where it is by its name: an item
        // listed twice is found in one hash, before the listing is sorted.
        var spellings: [String] = []
        spellings.reserveCapacity(entries.count)
        var indexByName: [String: Int] = [:]
        indexByName.reserveCapacity(entries.count)
        for var entry in entries {
            let spelling = entry.name
            try checkListedName(spelling, .list, folder)
            entry.name = RemotePath.normalized(spelling)
            if RemotePath.isReserved(entry.name) { continue }
            guard let index = indexByName.updateValue(kept.count, forKey: entry.name) else {
                kept.append(entry)
                spellings.append(spelling)
                continue
            }
            indexByName[entry.name] = index
            // Bytes, not `==`: Swift's string equality holds across canonically equal spellings.
            guard spellings[index].utf8.elementsEqual(spelling.utf8) else {
                throw failure(
                    .badAnswer, .list, folder,
                    detail:
                        "it lists two items, \(RemotePath.shown(spellings[index])) and \(RemotePath.shown(spelling)), whose names differ only in how their letters are encoded (Unicode normalisation); rename one on the remote"
                )
            }
            guard kept[index] == entry else {
                throw failure(
                    .badAnswer, .list, folder,
                    detail: "it lists \(RemotePath.shown(spelling)) twice, and differently")
            }
        }
        kept.sort { $0.name < $1.name }
        return RemoteListing(folder: folder, entries: kept, folderTag: folderTag)
    }

    /// Throws unless `name`, one component of an item the remote gave for `operation` on
    /// `path`, can be an item's name (``RemotePath/problem(withName:)``).
    func checkListedName(_ name: String, _ operation: RemoteError.Operation, _ path: RemotePath) throws {
        guard let problem = RemotePath.problem(withName: name) else { return }
        throw failure(
            .badAnswer, operation, path,
            detail:
                "it gives an item named \(RemotePath.shown(name)), which cannot be a name: it \(problem); nothing is synced until it is renamed or removed on the remote"
        )
    }
}
