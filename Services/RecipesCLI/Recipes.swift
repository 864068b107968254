import ArgumentParser
import RecipeProtocol

/// `recipes`: the RecipeVault command line.
@main
struct Recipes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recipes",
        abstract: "Your RecipeVault recipes from the command line.",
        discussion: "Talks to recipe-storage (RECIPES_STORAGE, default \(RecipeVault.defaultStorageEndpoint)) and, to import from the web, recipe-worker (RECIPES_WORKER, default \(RecipeVault.defaultWorkerEndpoint)).",
        version: RecipeVault.version,
        subcommands: [
            ListRecipes.self, ShowRecipe.self, SearchRecipes.self, AddRecipe.self, EditRecipe.self, DeleteRecipe.self, DuplicateRecipe.self,
            FavoriteRecipe.self, RateRecipe.self, PhotoCommand.self, BooksCommand.self, IngredientsCommand.self,
            CanMake.self, Cooked.self, CookLog.self, ImportRecipes.self, Jobs.self, ExportRecipes.self, ImportFolder.self, Migrate.self, SyncCommand.self, ConflictsCommand.self, BackupCommand.self, Status.self, Samples.self, KeysCommand.self,
        ]
    )

    static func main() async {
        await main(arguments(Array(CommandLine.arguments.dropFirst())))
    }

    /// The arguments as the parser should read them: a negative number after an option is that option's value
    /// (`--servings -3` is `--servings=-3`), so it meets the option's own range check ("from 0.01 to 10000") instead
    /// of being read as an unknown option and leaving the option without a value.
    static func arguments(_ given: [String]) -> [String] {
        var result: [String] = []
        for argument in given {
            if let option = result.last, option.hasPrefix("--"), option != "--", !option.contains("="), !result.contains("--"),
               argument.count > 1, argument.hasPrefix("-"), Double(argument) != nil {
                result[result.count - 1] = option + "=" + argument
            } else {
                result.append(argument)
            }
        }
        return result
    }
}
