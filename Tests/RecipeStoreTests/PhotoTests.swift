import Foundation
import RecipeModel
import RecipeProtocol
import Testing
@testable import RecipeStore

/// Bytes that start like an image of `kind`, `count` long, different every call.
func imageBytes(_ kind: ImageKind, count: Int = 2_000) -> Data {
    let header: [UInt8] = switch kind {
    case .jpeg: [0xFF, 0xD8, 0xFF, 0xE0]
    case .png: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    case .webp: Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8)
    case .heic: [0, 0, 0, 24] + Array("ftypheic".utf8)
    }
    var data = Data(header)
    data.append(contentsOf: (header.count..<count).map { _ in UInt8.random(in: 0...255) })
    return data
}

@Suite("Photos in the store")
struct PhotoTests {
    @Test("the four formats are recognised by their bytes; anything else is refused", arguments: ImageKind.allCases)
    func formats(kind: ImageKind) async throws {
        try await withStore { store async throws in
            let id = UUID()
            _ = try await store.createRecipe(id: id, RecipeDraft(name: "Pie"))
            let photos = try await store.addPhoto(recipeID: id, bytes: imageBytes(kind), position: nil)
            #expect(photos.map(\.mediaType) == [kind.mediaType])
        }
    }

    @Test("each rule has its own error code and a message with the numbers; nothing is stored")
    func rules() async throws {
        try await withStore { store async throws in
            let id = UUID()
            _ = try await store.createRecipe(id: id, RecipeDraft(name: "Pie"))
            let large = await #expect(throws: ServiceError.self) {
                _ = try await store.addPhoto(recipeID: id, bytes: imageBytes(.jpeg, count: 2_400_000), position: nil)
            }
            #expect(large?.code == .photoTooLarge)
            #expect(large?.message.contains("photo is 2.4 MB") == true && large?.message.contains("the limit is 2 MB") == true)
            let gif = await #expect(throws: ServiceError.self) {
                _ = try await store.addPhoto(recipeID: id, bytes: Data("GIF89a-not-allowed".utf8), position: nil)
            }
            #expect(gif?.code == .unsupportedImage)
            #expect(gif?.message.contains("JPEG, PNG, WebP or HEIC") == true)
            #expect(try store.photos.allHashes().isEmpty)

            for _ in 0..<RecipeVault.maxPhotosPerRecipe { _ = try await store.addPhoto(recipeID: id, bytes: imageBytes(.png), position: nil) }
            let eleventh = await #expect(throws: ServiceError.self) {
                _ = try await store.addPhoto(recipeID: id, bytes: imageBytes(.png), position: nil)
            }
            #expect(eleventh?.code == .tooManyPhotos)
            #expect(eleventh?.message.contains("has 10 photos; the limit is 10") == true)
            #expect(try await store.photoList(recipeID: id).count == 10)
            #expect(try store.photos.allHashes().count == 10, "the refused photo left no file")
        }
    }

    @Test("exact bytes come back; the same photo twice on one recipe is kept once; shared files are one file")
    func contentAddressing() async throws {
        try await withStore { store async throws in
            let first = UUID(), second = UUID()
            _ = try await store.createRecipe(id: first, RecipeDraft(name: "One"))
            _ = try await store.createRecipe(id: second, RecipeDraft(name: "Two"))
            let bytes = imageBytes(.jpeg, count: 1_900_000)
            _ = try await store.addPhoto(recipeID: first, bytes: bytes, position: nil)
            #expect(try await store.addPhoto(recipeID: first, bytes: bytes, position: nil).count == 1)
            _ = try await store.addPhoto(recipeID: second, bytes: bytes, position: nil)
            #expect(try store.photos.allHashes() == [PhotoBlobs.hash(bytes)])
            let (info, back) = try await store.photo(recipeID: second, position: 0)
            #expect(back == bytes && info.byteCount == bytes.count && info.sha256 == PhotoBlobs.hash(bytes))

            // Removing it from one recipe keeps the file; deleting the other recipe collects it.
            _ = try await store.removePhoto(recipeID: first, photoID: try await store.photoList(recipeID: first)[0].id)
            #expect(try store.photos.allHashes().count == 1)
            _ = try await store.deleteRecipe(id: second)
            #expect(try store.photos.allHashes().isEmpty)
        }
    }

    @Test("photos reorder and insert at a position; the recipe's version moves with them")
    func ordering() async throws {
        try await withStore { store async throws in
            let id = UUID()
            _ = try await store.createRecipe(id: id, RecipeDraft(name: "Pie"))
            let a = try await store.addPhoto(recipeID: id, bytes: imageBytes(.jpeg), position: nil)[0]
            let b = try await store.addPhoto(recipeID: id, bytes: imageBytes(.png), position: nil)[1]
            let c = try await store.addPhoto(recipeID: id, bytes: imageBytes(.webp), position: 0)[0]
            #expect(try await store.photoList(recipeID: id).map(\.id) == [c.id, a.id, b.id])
            #expect(try await store.movePhoto(recipeID: id, photoID: c.id, to: 2).map(\.id) == [a.id, b.id, c.id])
            #expect(try await store.movePhoto(recipeID: id, photoID: c.id, to: 2).map(\.position) == [0, 1, 2])
            #expect(try await store.recipe(id).version == 6)
            let bad = await #expect(throws: ServiceError.self) { _ = try await store.movePhoto(recipeID: id, photoID: a.id, to: 3) }
            #expect(bad?.message.contains("must be 0 to 2") == true)
            let missing = await #expect(throws: ServiceError.self) { _ = try await store.photo(recipeID: id, position: 7) }
            #expect(missing?.code == .notFound)
        }
    }

    @Test("starters take no photos")
    func starterPhotos() async throws {
        try await withStore { store async throws in
            _ = try await store.loadSamples()
            let error = await #expect(throws: ServiceError.self) {
                _ = try await store.addPhoto(recipeID: SampleData.recipeID(2), bytes: imageBytes(.jpeg), position: nil)
            }
            #expect(error?.code == .starterReadOnly)
        }
    }
}

@Suite("Checks of the whole store")
struct StoreCheckTests {
    @Test("checks asked for while the same check runs join it: one reads everything, each gets its answer; a different check runs on its own")
    func concurrentChecksJoin() async throws {
        try await withStore { store async throws in
            for index in 0..<4 {
                let id = UUID()
                _ = try await store.createRecipe(id: id, RecipeDraft(name: "Pie \(index)"))
                for _ in 0..<5 { _ = try await store.addPhoto(recipeID: id, bytes: imageBytes(.jpeg, count: 20_000), position: nil) }
            }
            // The first check is held before it reads until the other five have come (or 30 s have passed), so they come
            // while it runs however the tasks are scheduled.
            store.beforeCheckReads.withLock { hold in
                hold = {
                    let deadline = ContinuousClock.now + .seconds(30)
                    while store.checksJoined.load(ordering: .relaxed) < 5, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
                }
            }
            let answers = try await withThrowingTaskGroup(of: StorageCheck.self) { group in
                for _ in 0..<6 { group.addTask { try await store.check(photos: true, full: false) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            store.beforeCheckReads.withLock { $0 = nil }
            #expect(answers.count == 6 && answers.allSatisfy { $0 == answers[0] && $0.photosChecked == 20 }, "\(answers)")
            #expect(store.checksRun.load(ordering: .relaxed) == 1, "six checks at once read everything \(store.checksRun.load(ordering: .relaxed)) times")
            #expect(store.checksJoined.load(ordering: .relaxed) == 5)
            // One finished is not joined: the next reads everything again.
            _ = try await store.check(photos: true, full: false)
            _ = try await store.check(photos: false, full: true)
            #expect(store.checksRun.load(ordering: .relaxed) == 3)
        }
    }
}
