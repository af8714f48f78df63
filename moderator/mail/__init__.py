"""Mail: reading incoming mail, composing outgoing mail, and the transports (Maildir, IMAP, SMTP)."""
