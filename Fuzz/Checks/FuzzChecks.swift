import Crypto
import Foundation
import GRDB
import Logging
import Messaging
import PhotoProcessing
import RecipeImport
import RecipeMigration
import RecipeModel
import RecipeProtocol
import RecipeStore
import StorageService

/// What each fuzz target checks for one input. The libFuzzer entry points
/// (`Fuzz/Targets`) call these, and the test suite replays the committed corpus
/// through them, so every input that once found a bug stays a test.
///
/// A check returns normally when the input was handled as promised; it traps
/// (`broken`) when a promise broke, which libFuzzer reports as a crash.
public enum FuzzChecks {
    /// Says which promise broke (on standard error, where libFuzzer's log keeps it) and traps.
    static func broken(_ message: String) -> Never {
        FileHandle.standardError.write(Data("promise broken: \(message)\n".utf8))
        fatalError(message)
    }

    /// A request to recipe-storage: any bytes as frame 0 (and a photo frame) get
    /// exactly one reply envelope, `ok` or an error with a documented code.
    public static func storageRequest(_ data: Data) {
        // The envelope's fast path accepts only what the full path reads the same way (Foundation's scanner checks the
        // whole document's syntax before it decodes a field; numbers it reads only when a field asks for them).
        if let fast = WireCodec.scanRequestHeader(data) {
            do {
                let full = try WireCodec.decodeRequestHeaderFully(data, using: WireCodec.makeDecoder())
                if full != fast { broken("the fast envelope path read \(fast), the full path \(full)") }
            } catch {
                if !(fast.version != WireProtocol.version && error.error.code == .unsupportedVersion) {
                    broken("the fast envelope path accepted what the full path refuses (\(error.error.code)): \(String(decoding: data.prefix(200), as: UTF8.self))")
                }
            }
        }
        // The wire's JSON decoder reads from one pass only what Foundation's reads the same way.
        agree(JSONValue.self, data)
        agree(BodyOf<RecipeDraft>.self, data)
        agree(BodyOf<SyncRecord>.self, data)
        agree(BodyOf<[String: Int64]>.self, data)
        let reply = blocking {
            await Fixtures.ensure(storage.store)
            return await storage.routes.reply(to: data, frames: [samplePhoto], logger: quiet)
        }
        if reply.isEmpty { broken("no reply frames") }
        let header = try? WireCodec.decodeReplyHeader(reply[0], using: WireCodec.makeDecoder())
        if header == nil { broken("the reply is not a reply envelope: \(String(decoding: reply[0].prefix(200), as: UTF8.self))") }
        if let error = header?.error, error.code == .internalError { broken("internal_error for a client's input: \(error.message)") }
        if header?.error == nil {
            storedAsSent(data, reply: reply[0])
            takenByAnotherReplica()
        }
        discardBackups()
    }

    /// Runs `body`, which must not fail: a failure is a promise broken, saying what was being done.
    static func must(_ what: String, _ body: () async throws -> Void) async {
        do { try await body() } catch { broken("could not \(what): \(error)") }
    }

    /// Removes what fuzzed `storage.backup` requests wrote: each is a whole copy of the store, and a long run would
    /// otherwise fill the disk with them.
    static func discardBackups() {
        let manager = FileManager.default
        guard let made = try? manager.contentsOfDirectory(at: backupFolder, includingPropertiesForKeys: nil), !made.isEmpty else { return }
        for item in made { try? manager.removeItem(at: item) }
    }

    /// Where the second replica has read the fuzzed store's feed up to.
    nonisolated(unsafe) private static var shadowCursor = 0

    /// What a client wrote is what another replica takes: the records the store's feed gained are applied to a second
    /// store, with the photo blobs they name, and none is held back for its values (a replica that holds a record back
    /// never agrees with the one that wrote it).
    private static func takenByAnotherReplica() {
        let problem: String? = blocking {
            do {
                let (store, shadow) = (storage.store, FuzzChecks.shadow)
                let page = try await store.syncChanges(since: shadowCursor, exclude: nil, limit: 1_000)
                guard !page.records.isEmpty else { return nil }
                let named = page.records.flatMap { $0.fields.compactMap { $0.key.hasPrefix(SyncRecord.photoPrefix) ? $0.value.object?["sha256"]?.string : nil } }
                for hash in try shadow.missingPhotos(Array(Set(named))) {
                    if let bytes = try? store.photoBlob(sha256: hash) { _ = try shadow.putPhotoBlob(sha256: hash, bytes: bytes) }
                }
                let replica = try await store.syncInfo().replicaID
                _ = try await shadow.applySync(from: replica, records: page.records, cursor: nil, expecting: nil, after: nil)
                shadowCursor = page.next
                let held = try await shadow.heldRecords().filter { $0.missingPhotos.isEmpty }
                if !held.isEmpty { return "another replica held back what a client wrote: \(held.map { "\($0.kind.rawValue) \($0.id): \($0.reason)" })" }
                for (name, replica) in [("the store", store), ("another replica", shadow)] {
                    let disagreements = try await replica.feedDisagreements()
                    if !disagreements.isEmpty { return "\(name)'s feed and tables disagree: \(disagreements)" }
                }
                return nil
            } catch {
                return "the feed could not be applied to another replica: \(error)"
            }
        }
        if let problem { broken(problem) }
    }

    /// The second replica `takenByAnotherReplica` applies the fuzzed store's feed to.
    static let shadow: RecipeStore = {
        let folder = storageFolder.appendingPathComponent("shadow")
        return try! RecipeStore(folder: folder)
    }()

    /// A recipe.create that succeeded stored what was sent: its texts as written (names, lines and steps trimmed at
    /// the ends; keywords trimmed and each once), never a cut or changed text.
    private static func storedAsSent(_ request: Data, reply: Data) {
        struct Sent: Decodable { var op: String; var body: RecipeOps.Create.Request? }
        struct Answered: Decodable { var body: RecipeOps.Create.Response? }
        guard let sent = try? wireDecoder.decode(Sent.self, from: request), sent.op == RecipeOps.Create.name, let draft = sent.body?.recipe,
              let answer = try? wireDecoder.decode(Answered.self, from: reply).body, answer.created else { return }
        let stored = answer.recipe
        var seen = Set<String>()
        let keywords = draft.keywords.map { $0.trimmingWhitespace(newlines: false) }.filter { seen.insert($0).inserted }
        let differs: [(String, Bool)] = [
            ("name", stored.name != draft.name.trimmingWhitespace()),
            ("description", stored.description != draft.description), ("notes", stored.notes != draft.notes),
            ("author", stored.author != draft.author), ("recipeYield", stored.recipeYield != draft.recipeYield),
            ("ingredients", stored.ingredients.map(\.text) != draft.ingredients.map { $0.text.trimmingWhitespace() }),
            ("instructions", stored.instructions.map(\.text) != draft.instructions.map { $0.text.trimmingWhitespace() }),
            ("keywords", stored.keywords != keywords),
        ]
        if let (field, _) = differs.first(where: \.1) {
            broken("recipe.create stored \(field) other than sent: \(String(decoding: request.prefix(300), as: UTF8.self))")
        }
    }

    /// A request's body read as `Body`.
    private struct BodyOf<Body: Decodable & Equatable>: Decodable, Equatable {
        var body: Body?
    }

    private static let wireDecoder = WireJSONDecoder()
    private static let foundationDecoder = WireCodec.makeDecoder()

    private static func agree<T: Decodable & Equatable>(_: T.Type, _ data: Data) {
        guard let fast = wireDecoder.fastDecode(T.self, from: data) else { return }
        guard let full = try? foundationDecoder.decode(T.self, from: data) else {
            broken("the wire decoder read \(T.self) from what Foundation refuses: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        if fast != full { broken("the wire decoder read \(T.self) differently from Foundation: \(String(decoding: data.prefix(200), as: UTF8.self))") }
    }

    /// A web page: reading it never traps, and what it yields is a recipe storage accepts. The same bytes are also
    /// read as every text field of a JSON-LD recipe (yield, durations, ingredient lines, steps, image addresses), so the
    /// field readers see arbitrary text too.
    public static func page(_ data: Data) {
        // Read as the worker reads a fetched page with no charset in its header: the <meta>, else what the bytes are.
        let html = PageText.decode([UInt8](data))
        accepted(RecipeExtractor.extract(html: html, url: "https://example.com/recipe"))
        let text = String(html.prefix(4_000))
        let recipe: [String: Any] = [
            "@type": "Recipe", "name": "Fuzz", "recipeYield": text, "prepTime": text, "cookTime": text, "recipeIngredient": [text, text],
            "recipeInstructions": [text, ["@type": "HowToStep", "name": text, "text": text], ["@type": "HowToSection", "name": text, "itemListElement": [text]]],
            "image": [text, ["@type": "ImageObject", "url": text, "width": 300]], "author": text, "description": text,
        ]
        accepted(RecipeExtractor.extract(json: recipe, url: "https://example.com/recipe"))
    }

    private static func accepted(_ imported: ImportedRecipe?) {
        guard let imported else { return }
        do {
            try imported.draft.validate()
        } catch {
            broken("the importer produced a recipe storage refuses: \(error.message)")
        }
        // No control character a terminal would obey (an escape sequence, a carriage return) comes out of a page.
        let draft = imported.draft
        let texts = [draft.name] + draft.ingredients.map(\.text) + draft.instructions.flatMap { [$0.text, $0.section, $0.title].compactMap { $0 } }
            + draft.keywords + RecipeTextField.all.compactMap { draft[keyPath: $0.draft] }
        for text in texts where text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }) {
            broken("the importer kept a control character: \(text.debugDescription.prefix(200))")
        }
        _ = imported.schemaOrg
    }

    /// Durations and ingredient lines: any text reads without trapping, within the documented ranges.
    /// Any bytes given to the worker's photo intake: a photo within the photo rules (and which
    /// fits again to itself), or a refusal with one of the three photo errors — never a crash, a
    /// hang or an internal error. The metadata stripper, on the same bytes read as each format,
    /// keeps within them and is idempotent.
    public static func photoIntake(_ data: Data) {
        for format in [IntakeFormat.jpeg, .png, .webp] {
            guard let (once, _) = MetadataStripper.strip(data, format: format) else { continue }
            if once.count > data.count { broken("stripping \(format) metadata made the file larger") }
            guard let (twice, removed) = MetadataStripper.strip(once, format: format), !removed, twice == once else {
                broken("stripping \(format) metadata twice took more out the second time")
            }
        }
        do {
            let fitted = try photoFitter.fit(data)
            let output = fitted.bytes, fitting = fitted.fitting
            if output.count > photoFitter.limits.maxBytes { broken("the fitted photo is \(output.count) bytes") }
            do { _ = try PhotoRules.check(output) } catch { broken("storage would refuse the fitted photo: \(error.message)") }
            if fitting.stored.byteCount != output.count { broken("the fitting says \(fitting.stored.byteCount) bytes for \(output.count)") }
            if fitting.changes.isEmpty && output != data { broken("no changes reported, but the bytes changed") }
            if !fitting.changes.isEmpty && max(fitting.stored.width, fitting.stored.height) > photoFitter.limits.maxLongSide {
                broken("a fitted photo of \(fitting.stored.width)×\(fitting.stored.height) passes the long side")
            }
            guard let again = try? photoFitter.fit(output) else { broken("the fitted photo is refused when fitted again") }
            if again.bytes != output { broken("fitting a fitted photo changed it again (\(again.fitting.changes))") }
        } catch {
            if ![.unsupportedImage, .unreadableImage, .photoTooLarge].contains(error.code) {
                broken("the photo intake answered \(error.code): \(error.message)")
            }
        }
    }

    /// One entry of another app's export, as the worker reads it: byte 0 picks the format, the rest is
    /// the entry's file (a gzip recipe, an inner zip, a .cook or .md text, a JSON file). Reading never traps;
    /// what it gives is a recipe storage accepts, or `unreadable_entry` with a sentence. The same bytes
    /// also go through the zip reader, the capped inflater and the entry frame decoder.
    public static func migration(_ data: Data) {
        guard let entry = migrationEntry(data) else { return }
        let body = Data(data.dropFirst())
        do {
            let recipe = try MigrationReader.read(entry)
            do { try recipe.draft.validate() } catch { broken("a migrated recipe storage would refuse: \(error.message)") }
            if recipe.photos.count > RecipeVault.maxPhotosPerRecipe { broken("\(recipe.photos.count) photos on one recipe") }
            if recipe.sourceID.isEmpty { broken("a migrated recipe without a source id") }
            if let created = recipe.createdAt, created.timeIntervalSince1970 <= 0 || created > Date() { broken("created \(created)") }
        } catch {
            if error.message.isEmpty { broken("an entry refused without a reason") }
        }
        guard MigrationEntry.decode(entry.encoded()) == entry else { broken("an entry did not survive its frame") }
        if let decoded = MigrationEntry.decode(body), MigrationEntry.decode(decoded.encoded()) != decoded {
            broken("a decoded entry did not survive its frame again")
        }
        let limit = 1 << 20
        if let inflated = try? Compression.inflate(body, wrapping: .gzipOrZlib, limit: limit), inflated.count > limit {
            broken("inflating gave \(inflated.count) bytes past the cap")
        }
        if let archive = try? ZipArchive(body) {
            for entry in archive.entries.prefix(16) {
                if let bytes = try? archive.read(entry, limit: limit), bytes.count > limit { broken("a zip entry unpacked past the cap") }
            }
        }
    }

    /// The entry a migration input stands for: byte 0 picks the format (and, with its high bit, a variant), the rest
    /// is the entry's file.
    static func migrationEntry(_ data: Data) -> MigrationEntry? {
        guard let first = data.first else { return nil }
        let formats = MigrationFormat.allCases
        let format = formats[Int(first & 0x7F) % formats.count]
        let body = Data(data.dropFirst())
        let name = switch format {
        case .paprika: "Recipe.paprikarecipe"
        case .tandoor: "1.zip"
        case .cooklang: "Recipe.cook"
        case .chowdown: "recipe.md"
        case .nextcloud: "recipe.json"
        case .mealie: "recipe.json"
        case .schema: first & 0x80 == 0 ? "recipe.json" : "recipe.html"
        }
        // A Tandoor entry is its inner zip alone (as the export holds it), or with the high bit its recipe.json and a
        // photo: with a photo beside it the zip is never opened, and the recipe's JSON was never reached.
        return switch (format, first & 0x80 == 0) {
        case (.tandoor, true): MigrationEntry(label: name, format: format, files: [.init(name: name, data: body)])
        case (.tandoor, false): MigrationEntry(label: "1.zip", format: format, files: [.init(name: "recipe.json", data: body), .init(name: "full.jpg", data: body.prefix(64))])
        default: MigrationEntry(label: name, format: format, files: [.init(name: name, data: body), .init(name: "full.jpg", data: body.prefix(64))])
        }
    }

    /// What the committed seeds reach, for the replay test to hold the corpus to: a seed that stops at the first
    /// refusal (an unknown operation, an entry that never gets to its recipe) leaves the code behind it unfuzzed.
    public enum Reach {
        /// Every operation recipe-storage answers.
        public static var storageOperations: [String] { storage.routes.operations }

        /// How the worker's sync against the stranger replica of a `syncPeer` input ended: nil when the input runs no
        /// sync, "done", or the code of the error it ended with ("other" for an error that is not a service's).
        public static func syncPeer(_ data: Data) -> String? {
            syncWithStranger(data).map { ended in ended.map { ($0 as? ServiceError)?.code.rawValue ?? "other" } ?? "done" }
        }

        /// The ids of the fixture recipe's photos (`Fixtures`), in order.
        public static func fixturePhotos() -> [UUID] {
            blocking {
                await Fixtures.ensure(storage.store)
                return (try? await storage.store.recipe(Fixtures.recipe).photos.map(\.id)) ?? []
            }
        }

        /// Whether a `snapshotInstall` input is installed (after the checks it runs).
        public static func snapshotInstalled(_ data: Data) -> Bool { installSnapshot(data) }

        /// How many times the fuzzing store's clock has restarted (`syncApply` inputs with `after`).
        public static func clockRestarts() -> Int {
            blocking { (try? await storage.store.clockRestarts().count) ?? -1 }
        }

        /// The error code the fuzzing store answers a storage request with (nil: `ok`), as `storageRequest` sends it.
        public static func storageReply(_ data: Data) -> ErrorCode?? {
            let reply = blocking {
                await Fixtures.ensure(storage.store)
                return await storage.routes.reply(to: data, frames: [samplePhoto], logger: quiet)
            }
            guard let first = reply.first, let header = try? WireCodec.decodeReplyHeader(first, using: WireCodec.makeDecoder()) else { return nil }
            discardBackups()
            return .some(header.error?.code)
        }

        /// The format a migration input is read as, and why it gives no recipe (nil when it gives one).
        public static func migration(_ data: Data) -> (format: String, refusal: String?)? {
            guard let entry = migrationEntry(data) else { return nil }
            do {
                _ = try MigrationReader.read(entry)
                return (entry.format.rawValue, nil)
            } catch {
                return (entry.format.rawValue, error.message)
            }
        }
    }

    /// Small limits, so one input stays quick: 4 megapixels read at most, 1,024 px stored.
    private static let photoFitter: PhotoFitter = {
        var limits = PhotoFitter.Limits()
        limits.maxPixels = 4_000_000
        limits.maxLongSide = 1_024
        return PhotoFitter(limits: limits)
    }()

    public static func parsers(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        if case .minutes(let minutes) = ISODuration.read(text) {
            if !(0...ISODuration.maxMinutes).contains(minutes) { broken("duration out of range: \(minutes)") }
            _ = ISODuration.text(minutes: minutes)
        }
        let parsed = IngredientParser.parse(text)
        for quantity in [parsed.quantity, parsed.quantityMax].compactMap({ $0 }) {
            if !(quantity.isFinite && quantity <= IngredientParser.maxQuantity) { broken("quantity out of range: \(quantity)") }
            _ = Scaling.format(quantity * 10_000)
        }
        // Scaling: every place it rewrites lies in the line, and a line shown for its own servings changes its
        // amount's words only (other amounts, units and foods stay as written).
        let line = IngredientLine(text: text)
        if let places = IngredientParser.amountPlaces(in: text) {
            let scalars = Array(text.unicodeScalars)
            let ranges = [places.scalars] + [places.numberWord].compactMap { $0 } + places.measures.flatMap { [$0.scalars, $0.unitWord] }
            if let outside = ranges.first(where: { $0.isEmpty || $0.upperBound > scalars.count }) {
                broken("a place \(outside) outside a line of \(scalars.count) scalars")
            }
            let same = Array(Scaling.text(of: line).unicodeScalars)
            if !(same.starts(with: scalars[..<places.scalars.lowerBound])
                 && same.reversed().starts(with: scalars[places.scalars.upperBound...].reversed())) {
                broken("scaled by 1, the line changed beyond its amount: \(String(String.UnicodeScalarView(same)).debugDescription)")
            }
        }
        for factor in [0.5, 3, 1.0 / 3, 10_000] { _ = Scaling.text(of: Scaling.scaled(line, by: factor)) }
        if let problem = ISODuration.problem(text, field: "prepTime"), problem.isEmpty { broken("an empty problem") }
    }

    /// `sync.apply` from a peer: any records either merge into something that reads back,
    /// or are held back (never written), or the request is refused with `invalid_argument` (or `busy` once
    /// 10,000 records are held); the store keeps working.
    ///
    /// With `after` (which this target does not send on), the machine's clock runs that many minutes ahead while the
    /// records are applied (up to 20 years), and is then set right: the next write restarts the replica's clock and
    /// stamps again what was stamped ahead, and the promises above hold after that too.
    public static func syncApply(_ data: Data) {
        guard let request = try? WireCodec.makeDecoder().decode(SyncOps.Apply.Request.self, from: data) else { return }
        let store = storage.store
        blocking {
            let ahead = request.after.map { Int64(min(max($0, 0), 20 * 525_600)) * 60_000 }
            // A person's write while the clock is ahead, so there is something stamped ahead of the machine's time after.
            let written = UUID()
            if let ahead {
                await must("set the clock ahead") { try await store.setClockOffset(milliseconds: ahead) }
                await must("write while the clock is ahead") { _ = try await store.createBook(id: written, title: "Clock check", author: nil) }
            }
            do {
                _ = try await store.applySync(from: request.from, records: request.records, cursor: request.cursor, seen: request.seen,
                                              cursorMark: request.cursorMark, unavailablePhotos: request.unavailablePhotos ?? [])
            } catch let error as ServiceError {
                if ![.invalidArgument, .missingPhoto, .busy].contains(error.code) { broken("sync.apply failed with \(error)") }
            } catch {
                broken("sync.apply failed outside the protocol: \(error)")
            }
            if ahead != nil {
                await must("set the clock right") { try await store.setClockOffset(milliseconds: 0) }
                // The next write (an apply of nothing, which retries what is held) restarts the clock.
                await must("apply after the clock was set right") { _ = try await store.applySync(from: "fuzzclock", records: [], cursor: nil) }
                await must("write after the clock was set right") { _ = try await store.deleteBook(id: written) }
            }
            // Whatever was stored reads back and encodes, and the feed says what the tables hold.
            do {
                let disagreements = try await store.feedDisagreements()
                if !disagreements.isEmpty { broken("after sync.apply the feed and the tables disagree: \(disagreements)") }
                let listed = try await store.syncChanges(since: 0, exclude: nil, limit: 1_000)
                _ = try JSONEncoder().encode(listed)
                for record in request.records where record.kind == .recipe {
                    if let id = UUID(uuidString: record.id), let recipe = try? await store.recipe(id) {
                        _ = try JSONEncoder().encode(recipe)
                    }
                }
            } catch {
                broken("the store no longer reads back: \(error)")
            }
        }
    }

    /// A peer's database snapshot, as an empty replica receives it: any bytes as the file. Installing either
    /// refuses it (`invalid_argument` with what is wrong, or `installed: false`) and leaves the replica empty, or
    /// installs it, and then everything the storage reads — lists, each recipe, search, the feed, conflicts, the
    /// cook log, the catalogue, its statistics — reads without trapping, and the file passes SQLite's integrity check.
    public static func snapshotInstall(_ data: Data) {
        _ = installSnapshot(data)
    }

    /// A database file of an earlier release brought to this release's schema, as a peer of this release would send
    /// it (`RecipeStore.upgradeDatabaseFile`); other bytes as they are. A snapshot is installed only at the receiver's
    /// exact schema: without this every seed (made at v16) was refused at that first comparison after each schema
    /// change, and the fuzzer never reached the checks and the install behind it.
    static func currentSchema(_ data: Data) -> Data {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rv-fuzz-upgrade-\(UUID().uuidString).sqlite").path
        defer { RecipeStore.removeDatabaseFile(path) }
        guard (try? data.write(to: URL(fileURLWithPath: path))) != nil,
              (try? RecipeStore.upgradeDatabaseFile(at: path)) != nil,
              let upgraded = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return data }
        return upgraded
    }

    /// Runs `snapshotInstall`'s checks; returns whether the snapshot was installed.
    static func installSnapshot(_ input: Data) -> Bool {
        guard !input.isEmpty else { return false }
        let data = currentSchema(input)
        return blocking { () -> Bool in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-fuzz-install-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            do {
                let store = try RecipeStore(folder: folder)
                defer { try? store.close() }
                let (from, seq) = snapshotLabel(data)
                let id = UUID()
                // Told the size (the write starts the check) or not (install checks), as the first byte says.
                let total = data[data.startIndex] & 1 == 0 ? data.count : nil
                _ = try await store.writeSnapshot(id, offset: 0, bytes: data, total: total)
                let sha = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
                let result: SyncOps.Install.Response
                do {
                    result = try await store.installSnapshot(.init(snapshot: id, from: from, seq: seq, bytes: data.count, sha256: sha))
                } catch let error as ServiceError where error.code == .invalidArgument {
                    guard try await store.syncInfo().empty else { broken("a refused snapshot left something behind: \(error.message)") }
                    return false
                }
                guard result.installed else {
                    guard try await store.syncInfo().empty else { broken("a snapshot not installed left something behind") }
                    return false
                }
                // Installed: everything reads back.
                let page = try await store.listRecipes(RecipeListQuery(limit: 200))
                for summary in page.recipes { _ = try JSONEncoder().encode(try await store.recipe(summary.id)) }
                _ = try await store.searchRecipes("a", limit: 20)
                _ = try JSONEncoder().encode(try await store.syncChanges(since: 0, exclude: nil, limit: 1_000))
                _ = try await store.conflicts()
                _ = try await store.cookLog(recipeID: nil, limit: 100)
                _ = try await store.stats()
                _ = try await store.canonicalDump()
                guard try store.integrityCheck() == "ok" else { broken("an installed snapshot fails the integrity check") }
                return true
            } catch let error as ServiceError where error.code == .invalidArgument || error.code == .notFound {
                // Refused with a reason (checked above), or a recipe listed but gone: the store still answers.
                return false
            } catch {
                broken("installing or reading a snapshot failed outside the protocol: \(error)")
            }
        }
    }

    /// The replica id and last feed position a database file says it has (so a fuzzed copy reaches the deeper
    /// checks), or made-up ones when it does not open.
    private static func snapshotLabel(_ data: Data) -> (from: String, seq: Int) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rv-fuzz-label-\(UUID().uuidString).sqlite").path
        defer { RecipeStore.removeDatabaseFile(path) }
        guard (try? data.write(to: URL(fileURLWithPath: path))) != nil, let queue = try? DatabaseQueue(path: path) else { return ("0123456789ab", 0) }
        defer { try? queue.close() }
        let label = try? queue.read { db -> (String, Int) in
            (try String.fetchOne(db, sql: "SELECT CAST(value AS TEXT) FROM sync_state WHERE key = 'replica'") ?? "0123456789ab",
             try Int.fetchOne(db, sql: "SELECT CAST(COALESCE(MAX(seq), 0) AS INTEGER) FROM sync_records") ?? 0)
        }
        return label ?? ("0123456789ab", 0)
    }

    // MARK: Shared state

    struct Storage: Sendable {
        let store: RecipeStore
        let routes: Routes
    }

    /// The folder of the fuzzing process's store, removed when the process exits.
    private static let storageFolder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-fuzz-\(UUID().uuidString)")

    /// Where the fuzzed store's backups go.
    static let backupFolder = storageFolder.appendingPathComponent("backups")

    /// One store per fuzzing process, in a fresh temporary folder.
    static let storage: Storage = {
        atexit { try? FileManager.default.removeItem(at: FuzzChecks.storageFolder) }
        let store = try! RecipeStore(folder: storageFolder.appendingPathComponent("store"))
        // A fuzzed storage.backup writes into this process's own folder, never where its input says on the machine.
        try! store.confineBackups(to: backupFolder)
        var routes = Routes()
        routes.translateFailures(RecipeStore.reply(for:during:)) // as the storage service answers
        routes.addSystemOperations(service: "recipe-storage")
        routes.addStorageOperations(store: store)
        return Storage(store: store, routes: routes)
    }()

    /// Records at fixed ids that the seeds name: a recipe with lines and two photos, a book, a cook-log entry, a
    /// catalogue entry, a batch job and a migration job with an entry staged. Without them, every seed naming a record
    /// was answered `not_found`, and no mutation of an id (which SQLite compares, out of libFuzzer's sight) finds one:
    /// what lies behind each lookup went unfuzzed. Put back as they were before every input, so an input replayed
    /// alone meets the store it met while fuzzed.
    public enum Fixtures {
        public static let recipe = UUID(uuidString: "F0220000-0000-4000-8000-000000000001")!
        public static let book = UUID(uuidString: "F0220000-0000-4000-8000-000000000002")!
        public static let cookLogEntry = UUID(uuidString: "F0220000-0000-4000-8000-000000000003")!
        public static let job = UUID(uuidString: "F0220000-0000-4000-8000-000000000004")!
        public static let migrationJob = UUID(uuidString: "F0220000-0000-4000-8000-000000000005")!
        public static let ingredient = "fuzz salt"
        /// The recipe's two photos: the frame every request carries, and another.
        public static var photos: [Data] { [samplePhoto, samplePhoto + Data([0])] }
        /// Their SHA-256s, as photo blobs are named.
        public static var photoHashes: [String] { photos.map { SHA256.hash(data: $0).map { String(format: "%02x", $0) }.joined() } }
        static let draft = RecipeDraft(name: "Fuzz fixture stew", description: "For the seeds",
                                       ingredients: [.init(text: "2 leeks"), .init(text: "1 l stock"), .init(text: "salt")],
                                       instructions: [.init(text: "Simmer."), .init(text: "Season.")], servings: 4, bookID: book)

        nonisolated(unsafe) static var madeVersion: Int?

        /// Puts every fixture back as made (a recipe changed in any way is made again under its id).
        static func ensure(_ store: RecipeStore) async {
            if (try? await store.book(book)) == nil { _ = try? await store.createBook(id: book, title: "Fuzz fixtures", author: nil) }
            // Its version as made says it is unchanged (every write to it moves the version on).
            if let current = try? await store.recipe(recipe), current.version != madeVersion { _ = try? await store.deleteRecipe(id: recipe) }
            if (try? await store.recipe(recipe)) == nil {
                _ = try? await store.createRecipe(id: recipe, draft)
                for photo in photos { _ = try? await store.addPhoto(recipeID: recipe, bytes: photo, position: nil) }
                madeVersion = (try? await store.recipe(recipe))?.version
            }
            if (try? await store.cookLog(recipeID: recipe, limit: 100))?.contains(where: { $0.id == cookLogEntry }) != true {
                _ = try? await store.addCookLogEntry(id: cookLogEntry, recipeID: recipe, cookedAt: nil, rating: 4, note: "fixture", servings: nil)
            }
            if (try? await store.findIngredient(ingredient)) == nil {
                _ = try? await store.upsertIngredient(id: UUID(), name: ingredient, category: nil, aliases: [])
            }
            if (try? await store.job(job)) == nil { _ = try? await store.createJob(id: job, urls: ["https://example.com/fuzz-fixture"]) }
            if (try? await store.job(migrationJob)) == nil {
                _ = try? await store.createMigration(id: migrationJob, plan: MigrationPlan(format: .paprika, source: "fuzz fixture export",
                                                                                          entries: [MigrationEntryInfo(label: "stew.paprikarecipe")]))
                try? await store.stageJobEntry(jobID: migrationJob, position: 0, bytes: Data("{\"name\":\"Stew\"}".utf8))
            }
        }
    }

    /// The services' logger while fuzzed: every line is made, as at the most verbose level (its message and metadata
    /// are only computed when the level lets them through, and a trap there ends a service as any other), and dropped.
    static let quiet: Logger = {
        var logger = Logger(label: "fuzz", factory: { _ in DroppingLogHandler() })
        logger.logLevel = .trace
        return logger
    }()

    /// Takes every line at any level, and keeps none.
    struct DroppingLogHandler: LogHandler {
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {}
    }

    /// A 1×1 PNG, the frame every fuzzed request carries (so photo operations reach their checks).
    private static let samplePhoto = Data([
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
        0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ])

    /// Where the async work of a check runs: a thread of its own, so waiting for it from a
    /// caller that holds a thread of the cooperative pool (a test) cannot starve it.
    private static let thread = ThreadExecutor(name: "fuzz checks")

    /// Runs `work` to the end from synchronous code (libFuzzer calls in on its own thread).
    static func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: thread) {
            box.value = await work()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    // Written by the task before the semaphore is signalled, read after the wait.
    var value: T?
}
