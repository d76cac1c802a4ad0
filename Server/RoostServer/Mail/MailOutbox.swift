import RoostCore

/// Mails accepted for sending, in `_mail_outbox`, until the SMTP server has taken them. A mail is queued
/// in the same transaction as the change it tells of (a token issued), so it is sent if and only if that
/// change committed, also across a restart or an SMTP outage. The row is deleted once sent: the link it
/// holds is in no table after that.
enum MailOutbox {
    struct Pending {
        let id: Int64
        let recipient: String
        let message: String
        let attempts: Int64
        let createdAt: Int64
    }

    /// Queues `message` for `recipient`, due now; the sender is woken after the commit.
    static func enqueue(_ message: MailMessage, in db: any SQLConnection) throws {
        let now = ParseDate.now().millisecondsSince1970
        let messageId = "\(try SecureRandom.hex(12))@" + (message.from.split(separator: "@").last.map(String.init) ?? "roost")
        let text = String(decoding: message.encoded(messageId: messageId), as: UTF8.self)
        try db.execute("INSERT INTO _mail_outbox (recipient, message, nextAttemptAt, createdAt) VALUES (?, ?, ?, ?)",
                       [.text(message.to), .text(text), .integer(now), .integer(now)])
        db.queuedMail = true
    }

    /// How many mails wait (`MailSettings.outboxCapacity` bounds it).
    static func count(in db: any SQLConnection) throws -> Int {
        Int(try db.fetchRows("SELECT count(*) FROM _mail_outbox", [], cacheable: true).first?.first?.integer ?? 0)
    }

    /// The mails due by `now`, oldest first, and when the next one after them is due.
    static func due(now: Int64, limit: Int, in db: some SQLQuerying) throws -> (mails: [Pending], nextDue: Int64?) {
        let rows = try db.fetchRows(
            "SELECT id, recipient, message, attempts, createdAt FROM _mail_outbox WHERE nextAttemptAt <= ? ORDER BY id LIMIT ?",
            [.integer(now), .integer(Int64(limit))], cacheable: true)
        let mails = rows.compactMap { row -> Pending? in
            guard let id = row[0].integer, let recipient = row[1].text, let message = row[2].text, let attempts = row[3].integer,
                let createdAt = row[4].integer
            else { return nil }
            return Pending(id: id, recipient: recipient, message: message, attempts: attempts, createdAt: createdAt)
        }
        let next = try db.fetchRows("SELECT min(nextAttemptAt) FROM _mail_outbox WHERE nextAttemptAt > ?", [.integer(now)],
                                    cacheable: true).first?.first?.integer
        return (mails, next)
    }

    static func delete(_ id: Int64, in db: any SQLConnection) throws {
        try db.execute("DELETE FROM _mail_outbox WHERE id = ?", [.integer(id)])
    }

    /// Puts a mail off after a failed try: 1 s, 2 s, 4 s … up to `cap` milliseconds.
    static func postpone(_ mail: Pending, now: Int64, cap: Int64, in db: any SQLConnection) throws {
        let delay = min(cap, 1000 << min(mail.attempts, 20))
        try db.execute("UPDATE _mail_outbox SET attempts = attempts + 1, nextAttemptAt = ? WHERE id = ?",
                       [.integer(now + delay), .integer(mail.id)])
    }
}
