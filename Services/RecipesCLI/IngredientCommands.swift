import ArgumentParser
import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

struct IngredientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ingredients", abstract: "The ingredient catalogue.",
                                                    subcommands: [ListIngredients.self, FindIngredient.self, AddIngredient.self],
                                                    defaultSubcommand: ListIngredients.self)
}

struct ListIngredients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the catalogue.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this category: protein, vegetable, fruit, dairy, grain, pantryStaple, herb, spice, condiment, other.")
    var category: IngredientCategory?

    func run() async throws {
        try await connection.show {
            IngredientOps.List.Response(ingredients: try await allIngredients(try connection.storageClient(), category: category))
        } text: { list in
            Output.table(["NAME", "CATEGORY", "ALSO CALLED"], list.ingredients.map {
                [$0.name, $0.category?.rawValue ?? "", $0.aliases.joined(separator: ", ")]
            })
        }
    }
}

struct FindIngredient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "find", abstract: "Find a food by its name or another name.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "A name, such as \"scallions\".") var name: String

    func run() async throws {
        try await connection.show {
            return try await connection.storageClient().call(IngredientOps.Find.self, .init(name: name))
        } text: { entry in
            print("\(entry.name)" + (entry.category.map { " (\($0.rawValue))" } ?? "") + (entry.aliases.isEmpty ? "" : " — also called " + entry.aliases.joined(separator: ", ")))
        }
    }
}

struct AddIngredient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a food to the catalogue, or update the one with that name.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Its name, such as \"aubergine\".") var name: String
    @Option(help: "protein, vegetable, fruit, dairy, grain, pantryStaple, herb, spice, condiment or other.") var category: IngredientCategory?
    @Option(name: .customLong("alias"), help: "Another name for it, such as \"eggplant\"; repeatable (replaces the aliases; left out, they stay).")
    var aliases: [String] = []

    func run() async throws {
        try await reportingFailures {
            let client = try connection.storageClient()
            // Updating a food by its name: what is not given stays (its category, its other names).
            var existing: CatalogueEntry?
            do {
                let found = try await client.call(IngredientOps.Find.self, .init(name: name))
                if found.name == IngredientParser.normalizeFood(name) { existing = found }
            } catch let error as ServiceError where error.code == .notFound {}
            let entry = try await client.call(
                IngredientOps.Upsert.self, .init(id: existing?.id ?? UUID.timeOrdered(), name: name, category: category ?? existing?.category,
                                                 aliases: aliases.isEmpty ? existing?.aliases ?? [] : aliases))
            if connection.json { return try Output.json(entry) }
            print("\(entry.name)" + (entry.category.map { " (\($0.rawValue))" } ?? "") + (entry.aliases.isEmpty ? "" : " — also called " + entry.aliases.joined(separator: ", ")))
        }
    }
}

extension IngredientCategory: ExpressibleByArgument {}
