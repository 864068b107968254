import Foundation
import RecipeProtocol
import Testing

@Suite("A job's counts, as a reply gives them")
struct ImportJobCountTests {
    func job(total: Int, imported: Int, failed: Int) -> ImportJob {
        ImportJob(id: UUID(), createdAt: Date(), updatedAt: Date(), state: .running, total: total, imported: imported, failed: failed, items: nil)
    }

    @Test("finished and progress as a job stands; a job of no URLs is finished")
    func ordinary() {
        #expect(job(total: 10, imported: 3, failed: 2).finished == 5)
        #expect(job(total: 10, imported: 3, failed: 2).progress == 0.5 && job(total: 10, imported: 3, failed: 2).pending == 5)
        #expect(job(total: 0, imported: 0, failed: 0).progress == 1)
        #expect(ImportJob.state(total: 4, imported: 0, failed: 0) == .queued)
        #expect(ImportJob.state(total: 4, imported: 1, failed: 0) == .running)
        #expect(ImportJob.state(total: 4, imported: 3, failed: 1) == .done)
    }

    @Test("counts no storage sends are read without trapping: a sum past Int.max stays there, below zero is none, progress stays within 0 to 1",
          arguments: [(Int.max, Int.max, 1), (10, Int.max, Int.max), (-5, -3, -1), (3, 7, 9), (Int.min, Int.min, Int.min)])
    func hostile(total: Int, imported: Int, failed: Int) {
        let job = job(total: total, imported: imported, failed: failed)
        #expect(job.finished >= 0 && job.pending >= 0)
        #expect((0...1).contains(job.progress))
        _ = ImportJob.state(total: total, imported: imported, failed: failed)
    }
}
