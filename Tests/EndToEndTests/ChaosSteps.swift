import Foundation
import RecipeProtocol
import Testing

/// The steps of the chaos runs that act on a storage's data folder rather than through the CLI: a restore from
/// `recipes backup`, and a photo file lost or damaged on disk.
enum ChaosSteps {
    /// A `recipes backup` made during a run: of which storage, into which folder, at which step.
    struct Backup {
        let storage: Int
        let folder: String
        let step: Int
    }

    /// Puts `backup` in place of its storage's data folder and starts it again on the same endpoint: stopped and the
    /// folder replaced; or (drawn from `random`) killed with -9 and the backup's files copied over the folder (a volume
    /// restored in place: the write-ahead log the kill left must not be replayed onto the backup). The storage must
    /// say it began a new incarnation. Returns what was done, for the run's trace.
    static func restore(_ backup: Backup, of storages: [StorageNode], at step: Int, random: inout ChaosRandom) async throws -> String {
        let target = storages[backup.storage]
        let overKilled = random.below(2) == 0
        if overKilled {
            _ = try await target.process?.stop(signal: SIGKILL)
            // As a person would: cp puts the backup's files in place of the existing ones (each replaced, not written
            // through: a photo `loseBlob` made unreadable is a link to a file whose reads and writes fail, as a failing
            // disk's would, and cp writing through it failed the run — seed 200612579308831045).
            // A folder `loseBlob` put in a photo file's place, not read since (so not moved aside), is in the way of the
            // backup's file, and cp will not put a file over a folder: removed first, as a person would after cp said so
            // (seed 4324851399791794770).
            for path in FileManager.default.enumerator(atPath: backup.folder)?.compactMap({ $0 as? String }) ?? [] {
                var isFolder: ObjCBool = false
                let there = target.folder + "/" + path
                if FileManager.default.fileExists(atPath: backup.folder + "/" + path, isDirectory: &isFolder), !isFolder.boolValue,
                   FileManager.default.fileExists(atPath: there, isDirectory: &isFolder), isFolder.boolValue {
                    try FileManager.default.removeItem(atPath: there)
                }
            }
            let copy = try Process.run(URL(fileURLWithPath: "/bin/cp"), arguments: ["-r", "--remove-destination", backup.folder + "/.", target.folder + "/"])
            copy.waitUntilExit()
            #expect(copy.terminationStatus == 0)
        } else {
            _ = try await target.process?.stop()
            try FileManager.default.removeItem(atPath: target.folder)
            try FileManager.default.copyItem(atPath: backup.folder, toPath: target.folder)
        }
        try await target.start()
        #expect(target.process?.printed.contains("new replica incarnation") == true, "\(target.process?.printed ?? "")")
        return "\(step): storage \(backup.storage) restored from the backup of step \(backup.step)"
            + (overKilled ? ", copied over its folder after kill -9" : "")
    }

    /// Removes, damages (one byte flipped), makes unreadable or puts a folder in the place of a photo file of
    /// `storages[index]` that another storage holds with the same bytes, while it runs; the file's name (its SHA-256) and what was done (for the run's trace), or nil when it has
    /// no such file.
    static func loseBlob(at index: Int, of storages: [StorageNode], at step: Int, random: inout ChaosRandom) throws -> (name: String, said: String)? {
        let photos = URL(fileURLWithPath: storages[index].folder).appendingPathComponent(RecipeVault.photoFolderName)
        let files = (FileManager.default.enumerator(at: photos, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
            .filter { $0.lastPathComponent.count == 64 }.sorted { $0.path < $1.path }
        guard !files.isEmpty else { return nil }
        let file = files[random.below(files.count)]
        let bytes = try Data(contentsOf: file)
        let relative = file.path.dropFirst(storages[index].folder.count)
        guard storages.indices.contains(where: { $0 != index && (try? Data(contentsOf: URL(fileURLWithPath: storages[$0].folder + relative))) == bytes })
        else { return nil }
        let loss: String
        switch random.below(4) {
        case 0:
            var changed = bytes
            changed[changed.count / 2] ^= 0xFF
            try changed.write(to: file)
            loss = "damaged"
        case 1:
            // Its reads fail with an input/output error, as a failing disk's would (a link to a file whose reads do).
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "/proc/self/mem")
            loss = "unreadable"
        case 2:
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
            loss = "a folder in its place"
        default:
            try FileManager.default.removeItem(at: file)
            loss = "removed"
        }
        return (file.lastPathComponent, "\(step): storage \(index) lost blob \(file.lastPathComponent.prefix(12)) (\(loss))")
    }

    /// Whether no storage holds the blob named `name` any more (the one that held the other copy dropped it before
    /// passing it back).
    static func everyCopyGone(of name: String, from storages: [StorageNode]) -> Bool {
        // A file, not a link or a folder standing in its place.
        !storages.contains {
            (try? FileManager.default.attributesOfItem(atPath: "\($0.folder)/\(RecipeVault.photoFolderName)/\(name.prefix(2))/\(name)"))?[.type]
                as? FileAttributeType == .typeRegular
        }
    }
}
