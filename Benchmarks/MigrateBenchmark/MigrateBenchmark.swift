import ArgumentParser
import BenchmarkSupport
import Foundation
import RecipeMigration
import RecipeModel
import RecipeProtocol
import TestImages

/// `migrate-bench`: `recipes migrate` of a generated Paprika export with a photo per recipe,
/// beside `recipes import-dir` of the same recipes in the Nextcloud layout (the baseline),
/// each into a fresh recipe-storage with its own recipe-worker: recipes per second and the
/// peak memory of the worker and the storage.
@main
struct MigrateBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-bench",
        abstract: "recipes migrate of a Paprika export beside recipes import-dir of the same recipes (Nextcloud layout).")

    @Option(help: "Recipes in the export.") var recipes = 1_000
    @Option(help: "Each photo's size in pixels (width; height is 3/4 of it).") var photoWidth = 1_200
    @Option(help: "A folder for the generated export and the data (kept; reused when it holds an export of the same size).")
    var work = FileManager.default.temporaryDirectory.appendingPathComponent("migrate-bench").path

    func run() async throws {
        let root = URL(fileURLWithPath: work)
        let paprika = root.appendingPathComponent("export-\(recipes)-\(photoWidth).paprikarecipes")
        let nextcloud = root.appendingPathComponent("export-\(recipes)-\(photoWidth)-nextcloud")
        if !FileManager.default.fileExists(atPath: paprika.path) || !FileManager.default.fileExists(atPath: nextcloud.path) {
            try generate(paprika: paprika, nextcloud: nextcloud)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: paprika.path)[.size] as? Int) ?? 0
        print("\(recipes) recipes, one \(photoWidth)×\(photoWidth * 3 / 4) JPEG each; the Paprika export is \(ImageKind.formatBytes(size))")
        let migrate = try measure(["migrate", paprika.path], root: root, name: "migrate")
        let importDir = try measure(["import-dir", nextcloud.path], root: root, name: "import-dir")
        print(row("", "recipes/s", "wall", "worker peak", "storage peak"))
        for (label, result) in [("recipes migrate", migrate), ("import-dir (baseline)", importDir)] {
            print(row(label, String(format: "%.1f", Double(recipes) / result.seconds), String(format: "%.1f s", result.seconds),
                      "\(result.workerPeak / 1_048_576) MiB", "\(result.storagePeak / 1_048_576) MiB"))
        }
        print("migrate / import-dir: " + ratio(importDir.seconds / migrate.seconds) + " the speed")
    }

    struct Result { var seconds: Double; var workerPeak: Int; var storagePeak: Int }

    /// Runs the CLI with `arguments` against a fresh storage and worker; the services' peaks are read before they stop.
    func measure(_ arguments: [String], root: URL, name: String) throws -> Result {
        let data = root.appendingPathComponent("data-\(name)")
        try? FileManager.default.removeItem(at: data)
        let storage = try ServiceUnderTest(folder: data, benchmark: "migrate-bench")
        defer { storage.stop() }
        let worker = try ServiceUnderTest("recipe-worker", ["--bind", "tcp://127.0.0.1:*", "--storage", storage.endpoint, "--sync-on-request"],
                                          benchmark: "migrate-bench")
        defer { worker.stop() }
        let cli = Process()
        cli.executableURL = builtBeside("recipes")
        cli.arguments = arguments + ["--json", "--timeout", "60"]
        cli.environment = ["RECIPES_STORAGE": storage.endpoint, "RECIPES_WORKER": worker.endpoint, "NO_COLOR": "1"]
        cli.standardOutput = FileHandle.nullDevice
        let start = ContinuousClock.now
        try cli.run()
        cli.waitUntilExit()
        let elapsed = ContinuousClock.now - start
        guard cli.terminationStatus == 0 else { throw BenchmarkError("recipes \(arguments[0]) failed with status \(cli.terminationStatus)") }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Result(seconds: seconds, workerPeak: worker.peakResidentBytes, storagePeak: storage.peakResidentBytes)
    }

    /// The same recipes twice: a Paprika export (gzip JSON in a zip, the photo in base64) and Nextcloud folders.
    func generate(paprika: URL, nextcloud: URL) throws {
        print("Generating \(recipes) recipes with photos…")
        try? FileManager.default.removeItem(at: nextcloud)
        try FileManager.default.createDirectory(at: nextcloud, withIntermediateDirectories: true)
        var generator = RecipeGenerator(seed: 7)
        var entries: [(path: String, data: Data)] = []
        for index in 0..<recipes {
            let draft = generator.draft(index)
            let photo = TestImages.picture(width: photoWidth, height: photoWidth * 3 / 4, grain: 10, as: .jpeg(quality: 82))
            let uid = MigratedRecipe.id(for: "bench:\(index)").uuidString
            let object: [String: Any] = [
                "uid": uid, "name": draft.name, "description": draft.description ?? "",
                "ingredients": draft.ingredients.map(\.text).joined(separator: "\n"),
                "directions": draft.instructions.map(\.text).joined(separator: "\n"),
                "servings": draft.recipeYield ?? "", "prep_time": "\(index % 40 + 5) mins", "cook_time": "1 hr \(index % 50) mins",
                "rating": draft.rating, "on_favorites": draft.isFavorite ? 1 : 0, "categories": draft.keywords,
                "notes": draft.notes ?? "", "created": "2020-01-02 03:04:05", "photo_data": photo.base64EncodedString(),
            ]
            entries.append(("\(draft.name).paprikarecipe", Compression.deflate(try JSONSerialization.data(withJSONObject: object), gzip: true)))
            let folder = nextcloud.appendingPathComponent("\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let json: [String: Any] = [
                "@context": "https://schema.org", "@type": "Recipe", "identifier": uid, "name": draft.name,
                "description": draft.description ?? "", "recipeIngredient": draft.ingredients.map(\.text),
                "recipeInstructions": draft.instructions.map { ["@type": "HowToStep", "text": $0.text] },
                "recipeYield": draft.recipeYield ?? "", "prepTime": "PT\(index % 40 + 5)M", "keywords": draft.keywords.joined(separator: ","),
                "image": ["full.jpg"],
            ]
            try JSONSerialization.data(withJSONObject: json).write(to: folder.appendingPathComponent("recipe.json"))
            try photo.write(to: folder.appendingPathComponent("full.jpg"))
        }
        try ZipArchive.write(entries).write(to: paprika)
    }
}
