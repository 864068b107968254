import Foundation
print("import-bench: not yet")
