import Foundation
@testable import RecipeStore

/// A store in a fresh temporary folder, removed afterwards.
func withStore<T>(_ body: (RecipeStore) async throws -> T) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-store-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = try RecipeStore(folder: folder)
    let result = try await body(store)
    try store.close()
    return result
}

/// A fresh temporary folder, removed afterwards.
func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rv-folder-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder)
}
