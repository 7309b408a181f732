import Foundation
import GroupSyncCore
import GroupSyncNotify
import GroupSyncStore
import Synchronization
import Testing
@testable import GroupSyncDaemon

/// Stopping the notification worker lets the job in hand finish, so that what a server was just asked to show
/// is noted as shown (found by CI: a daemon stopped between the server's answer and that note showed the
/// notification again, in place, after its restart).
@Suite struct NotificationServiceStopTests {
    /// A server that takes its time to answer.
    final class SlowNotifier: Notifier {
        private let started = Atomic<Bool>(false)
        var showing: Bool { started.load(ordering: .sequentiallyConsistent) }
        func availability() -> NotifierAvailability {
            .available(NotificationServer(instance: ":slow.1", name: "slow", vendor: "tests", version: "1"))
        }
        func show(_ content: NotificationContent, replacing: ServerNotification?) throws(NotifierError) -> ServerNotification {
            started.store(true, ordering: .sequentiallyConsistent)
            Thread.sleep(forTimeInterval: 0.4)
            return ServerNotification(number: 1, serverInstance: ":slow.1")
        }
        func close(_ notification: ServerNotification) throws(NotifierError) -> CloseResult { .closed }
    }

    @Test func stopLetsAShowInHandBeNotedAsShown() throws {
        let folder = NSTemporaryDirectory() + "groupsync-stop-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Store(path: folder + "/store.db", device: DeviceID(bytes: Array(repeating: 3, count: 32)))
        let notifier = SlowNotifier()
        let clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
        let service = NotificationService(store: store, notifier: notifier, log: DaemonLog(clock: clock), clock: clock)
        #expect(service.start())
        let request = try NotificationRequest(id: "slow", content: NotificationContent(title: "Slow"), minIntervalSeconds: 0)
        Thread.detachNewThread { _ = service.onWorker { $0.post(request).json } }
        let asked = Date().addingTimeInterval(5)
        while !notifier.showing, Date() < asked { Thread.sleep(forTimeInterval: 0.01) }
        #expect(notifier.showing, "the server was never asked")

        service.stop()
        #expect(try store.entry(suite: NotificationSuites.display, key: "slow") != nil, "the show in hand was not noted when stop returned")
    }
}
