import Foundation
import Logging
import RoostCore
import Synchronization

/// Sends the outbox's mails on a thread of its own, so no request waits for the SMTP server. Woken when
/// a commit queued a mail, and when the next postponed one is due. A mail the server refuses for good
/// (a 5xx reply) or that has failed for 3 days is dropped with a log line; others are tried again with
/// backoff. Log lines name the mail's row and recipient domain, never its text (which holds a link).
final class MailSender: @unchecked Sendable {
    private let storage: Storage
    private let settings: MailSettings
    private let logger: Logger
    private let stopping = Atomic(false)
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    static let giveUpAfterMilliseconds: Int64 = 3 * 24 * 3600 * 1000

    init(storage: Storage, settings: MailSettings, logger: Logger) {
        self.storage = storage
        self.settings = settings
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "roost-mail"
        self.thread = thread
        thread.start()
    }

    /// Stops after the mail being sent, if any (the others stay queued for the next start).
    func stop() {
        guard thread != nil else { return }
        stopping.store(true, ordering: .sequentiallyConsistent)
        storage.mailQueued.signal()
        finished.wait()
        thread = nil
    }

    private func run() {
        guard let url = settings.smtpURL else { return }
        let client: SMTPClient
        do {
            client = try SMTPClient(url: url, certificateAuthorities: settings.certificateAuthorities)
        } catch {
            return logger.error("mail: cannot start the SMTP client: \(error)")
        }
        while !stopping.load(ordering: .sequentiallyConsistent) {
            let nextDue = sendDueMails(with: client)
            let now = ParseDate.now().millisecondsSince1970
            // A periodic look as well, in case a signal was missed (another process writing the same file).
            let wait = min(max(0, (nextDue ?? .max) - now), 30_000)
            storage.mailQueued.wait(until: Date().addingTimeInterval(Double(wait) / 1000))
        }
    }

    /// Sends what is due; returns when the next postponed mail is due.
    private func sendDueMails(with client: SMTPClient) -> Int64? {
        while !stopping.load(ordering: .sequentiallyConsistent) {
            let now = ParseDate.now().millisecondsSince1970
            guard let (mails, nextDue) = try? storage.read({ db in try MailOutbox.due(now: now, limit: 20, in: db) }) else { return now + 1000 }
            if mails.isEmpty { return nextDue }
            for mail in mails where !stopping.load(ordering: .sequentiallyConsistent) {
                // The outbox could not be updated (a full disk): wait before looking again, or the same mail goes again at once.
                guard deliver(mail, with: client) else { return now + 5000 }
            }
        }
        return nil
    }

    /// Sends one mail and records the outcome; false when the outbox could not be updated.
    private func deliver(_ mail: MailOutbox.Pending, with client: SMTPClient) -> Bool {
        let domain = mail.recipient.split(separator: "@").last.map(String.init) ?? "?"
        let smtpError: SMTPError
        do {
            try client.send(from: settings.sender, to: mail.recipient, message: Array(mail.message.utf8))
            logger.info("mail \(mail.id) to a recipient at \(domain): sent")
            return record { db in try MailOutbox.delete(mail.id, in: db) }
        } catch let error as SMTPError {
            smtpError = error
        } catch {
            logger.error("mail \(mail.id): \(error)")
            return false
        }
        let now = ParseDate.now().millisecondsSince1970
        if smtpError.isPermanent || now - mail.createdAt > Self.giveUpAfterMilliseconds {
            logger.error("mail \(mail.id) to a recipient at \(domain): dropped: \(smtpError)")
            return record { db in try MailOutbox.delete(mail.id, in: db) }
        }
        logger.warning("mail \(mail.id) to a recipient at \(domain): try \(mail.attempts + 1) failed, will retry: \(smtpError)")
        return record { db in try MailOutbox.postpone(mail, now: now, cap: settings.retryCapMilliseconds, in: db) }
    }

    private func record(_ change: (any SQLConnection) throws -> Void) -> Bool {
        do {
            try storage.write(change)
            return true
        } catch {
            logger.error("mail: cannot update the outbox: \(error)")
            return false
        }
    }

}
