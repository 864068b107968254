import Foundation
import RecipeImport

/// `import-predict GOLD OUT`: runs the importer over saved pages (`GOLD/<host>/<name>.html`)
/// and writes what it read as `OUT/<host>/<name>.json`, the input of shared/tools/import-score.py.
@main
enum ImportPredict {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else {
            FileHandle.standardError.write(Data("usage: import-predict GOLD_FOLDER OUTPUT_FOLDER\n".utf8))
            exit(64)
        }
        let gold = URL(fileURLWithPath: arguments[1]), output = URL(fileURLWithPath: arguments[2])
        var pages = 0, found = 0
        for host in try FileManager.default.contentsOfDirectory(atPath: gold.path).sorted() {
            let folder = gold.appendingPathComponent(host)
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { continue }
            for file in files.sorted() where file.hasSuffix(".html") {
                pages += 1
                let html = String(decoding: try Data(contentsOf: folder.appendingPathComponent(file)), as: UTF8.self)
                guard let recipe = RecipeExtractor.extract(html: html, url: "https://\(host)/") else { continue }
                found += 1
                let d = recipe.draft
                var json: [String: Any] = [
                    "name": d.name, "recipeIngredient": d.ingredients.map(\.text), "recipeInstructions": d.instructions.map(\.text),
                    "image": recipe.images, "nutrition": recipe.nutrition,
                ]
                for (key, value) in [("recipeYield", d.recipeYield), ("totalTime", d.totalTime), ("prepTime", d.prepTime),
                                     ("cookTime", d.cookTime), ("author", d.author), ("description", d.description),
                                     ("recipeCategory", d.recipeCategory), ("recipeCuisine", d.recipeCuisine)] {
                    if let value { json[key] = value }
                }
                let destination = output.appendingPathComponent(host)
                try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
                try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
                    .write(to: destination.appendingPathComponent(file.replacingOccurrences(of: ".html", with: ".json")))
            }
        }
        print("read a recipe from \(found) of \(pages) pages")
    }
}
