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
}
