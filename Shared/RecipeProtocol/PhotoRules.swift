import Foundation
import RecipeModel

/// The photo rules every path into storage applies (and clients may check first).
public enum PhotoRules {
    /// The kind of image `bytes` are, if they may be stored; otherwise the error saying why.
    public static func check(_ bytes: Data) throws(ServiceError) -> ImageKind {
        guard bytes.count <= RecipeVault.maxPhotoBytes else {
            throw ServiceError(.photoTooLarge,
                "photo is \(ImageKind.formatBytes(bytes.count)) (\(bytes.count) bytes); the limit is \(ImageKind.formatBytes(RecipeVault.maxPhotoBytes)) per photo")
        }
        guard let kind = ImageKind.detect(bytes) else {
            throw ServiceError(.unsupportedImage,
                "the photo's bytes are not a JPEG, PNG, WebP or HEIC image (\(describe(bytes))); only those four are kept")
        }
        return kind
    }

    /// "2000 bytes starting ffd8ffe0": what a refused file was, for the error.
    public static func describe(_ bytes: Data) -> String {
        "\(bytes.count) bytes starting \(bytes.prefix(4).map { String(format: "%02x", $0) }.joined())"
    }

    /// The error for a recipe that already has `count` photos.
    public static func tooMany(_ count: Int) -> ServiceError {
        ServiceError(.tooManyPhotos,
            "the recipe has \(count) photos; the limit is \(RecipeVault.maxPhotosPerRecipe) per recipe, so remove one before adding another")
    }
}
