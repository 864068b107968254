import Foundation
import RecipeModel

/// Photo operations of `recipe-storage`. Photo bytes travel as binary frames.
public enum PhotoOps {
    /// A recipe's photos, in order.
    public struct List: Codable, Sendable, Equatable {
        public var photos: [PhotoInfo]
        public init(photos: [PhotoInfo]) { self.photos = photos }
    }

    /// A recipe's photos after one was added, and, from recipe-worker, what was done to make it fit.
    public struct Added: Codable, Sendable, Equatable {
        public var photos: [PhotoInfo]
        /// recipe-worker only: the photo as it came and as it was stored. recipe-storage stores bytes as they come.
        public var fitting: PhotoFitting?
        public init(photos: [PhotoInfo], fitting: PhotoFitting? = nil) {
            self.photos = photos
            self.fitting = fitting
        }
    }

    /// `photo.add`: the bytes in a binary frame; at most 10 per recipe, 2 MB each, JPEG/PNG/WebP/HEIC.
    /// Sent to recipe-worker, the photo is made to fit first (see `PhotoFitting`).
    public enum Add: WireOperation {
        public static let touchesFiles = true
        public static let name = "photo.add"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var recipeID: UUID
            /// The frame holding the bytes (usually `{"frame": 1}`).
            public var photo: FrameReference
            /// Where to put it (0 = first); at the end when left out.
            public var position: Int?
            /// recipe-worker only: keep the photo's EXIF, XMP and IPTC metadata (GPS position, camera)
            /// instead of removing it. recipe-storage keeps the bytes as they come either way.
            public var keepMetadata: Bool?
            public init(recipeID: UUID, photo: FrameReference = FrameReference(frame: 1), position: Int? = nil,
                        keepMetadata: Bool? = nil) {
                self.recipeID = recipeID
                self.photo = photo
                self.position = position
                self.keepMetadata = keepMetadata
            }
        }
        public typealias Response = Added
    }

    /// `photo.fit` (recipe-worker): the photo made to fit the photo rules and handed back, for a
    /// client that stores it itself (the CLI, which stores into the storage it was pointed at).
    public enum Fit: WireOperation {
        public static let name = "photo.fit"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            /// The frame holding the bytes (usually `{"frame": 1}`).
            public var photo: FrameReference
            /// Keep EXIF, XMP and IPTC metadata (GPS position, camera) instead of removing it.
            public var keepMetadata: Bool?
            public init(photo: FrameReference = FrameReference(frame: 1), keepMetadata: Bool? = nil) {
                self.photo = photo
                self.keepMetadata = keepMetadata
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var fitting: PhotoFitting
            /// Always `{"frame": 1}`: the photo to store.
            public var photo: FrameReference
            public init(fitting: PhotoFitting, photo: FrameReference = FrameReference(frame: 1)) {
                self.fitting = fitting
                self.photo = photo
            }
        }
    }

    /// `photo.list`
    public enum ListPhotos: WireOperation {
        public static let name = "photo.list"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var recipeID: UUID
            public init(recipeID: UUID) { self.recipeID = recipeID }
        }
        public typealias Response = List
    }

    /// `photo.get`: the photo at `position`, its bytes in reply frame 1.
    public enum Get: WireOperation {
        public static let touchesFiles = true
        public static let name = "photo.get"
        public static let isWrite = false
        public struct Request: Codable, Sendable, Equatable {
            public var recipeID: UUID
            /// 0-based.
            public var position: Int
            public init(recipeID: UUID, position: Int) {
                self.recipeID = recipeID
                self.position = position
            }
        }
        public struct Response: Codable, Sendable, Equatable {
            public var photo: PhotoInfo
            /// Always `{"frame": 1}`.
            public var bytes: FrameReference
            public init(photo: PhotoInfo, bytes: FrameReference) {
                self.photo = photo
                self.bytes = bytes
            }
        }
    }

    /// `photo.move`: puts a photo at `position`, shifting the others.
    public enum Move: WireOperation {
        public static let name = "photo.move"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var recipeID: UUID
            public var photoID: UUID
            public var position: Int
            public init(recipeID: UUID, photoID: UUID, position: Int) {
                self.recipeID = recipeID
                self.photoID = photoID
                self.position = position
            }
        }
        public typealias Response = List
    }

    /// `photo.remove`
    public enum Remove: WireOperation {
        public static let touchesFiles = true
        public static let name = "photo.remove"
        public static let isWrite = true
        public struct Request: Codable, Sendable, Equatable {
            public var recipeID: UUID
            public var photoID: UUID
            public init(recipeID: UUID, photoID: UUID) {
                self.recipeID = recipeID
                self.photoID = photoID
            }
        }
        public typealias Response = List
    }
}
