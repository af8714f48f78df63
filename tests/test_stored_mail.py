"""A spooled mail is sent as it was stored: ``StoredMail`` (the header section
parsed, the bytes kept) goes to the SMTP server byte for byte as the spool wrote
it, as ``send_message`` of the parsed mail would send it, without a parse and a
flatten per mail; the Maildir outbox writes the same mail; a mail that
``send_message`` would change (a ``Bcc`` to strip) is parsed whole first."""
from __future__ import annotations

import mailbox
from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from moderator.mail.transport import StoredMail
from moderator.mail.transport.maildir import MaildirOutbox
from moderator.mail.transport.smtp import SmtpOutbox
from moderator.store.spool import Spool

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PNG = bytes(range(256)) * 40


def status_mail(to: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "UP moderator <moderator@up.example>"
    msg["To"] = f"Zoë Ärger <{to}>"
    msg["Subject"] = "Re: [pbem:ridge] Zürich – your move"
    msg["Message-ID"] = f"<{to}.1@up.example>"
    # 8-bit text, a line that starts with a dot (SMTP dot-stuffing), a long line
    msg.set_content("Grüße aus Zürich.\n.hidden? no\n" + "x" * 200 + "\n")
    msg.add_attachment(PNG, maintype="image", subtype="png", filename="board.png")
    return msg


def test_a_spooled_mail_reaches_the_server_byte_for_byte(tmp_path, smtp_sink):
    spool = Spool(tmp_path / "spool")
    spool.add_many([(status_mail(f"p{i}@example.org"), {"kind": "status"}) for i in range(2)], NOW)
    stored = {e.name: e.path.read_bytes() for e in spool.entries()}
    entries = spool.entries()
    assert isinstance(entries[0].stored, StoredMail) and entries[0].stored.raw == stored[entries[0].name]
    assert entries[0].stored["To"].addresses[0].addr_spec == "p0@example.org"
    result = spool.send_due(SmtpOutbox(smtp_sink.host, smtp_sink.port, security="none"), NOW)
    assert result.sent == 2 and spool.entries() == []
    got = smtp_sink.messages
    assert [m.raw for m in got] == list(stored.values())
    assert [m.rcpt_tos for m in got] == [("p0@example.org",), ("p1@example.org",)]
    assert got[0].mail_from == "moderator@up.example"
    # what aiosmtplib's send_message makes of the parsed mail: the same bytes
    parsed = BytesParser(policy=policy.default).parsebytes(list(stored.values())[0])
    SmtpOutbox(smtp_sink.host, smtp_sink.port, security="none").send(parsed)
    assert smtp_sink.messages[2].raw == got[0].raw
    assert got[0].message.get_body(("plain",)).get_content() == "Grüße aus Zürich.\n.hidden? no\n" + "x" * 200 + "\n"


def test_maildir_outbox_writes_a_stored_mail_as_the_parsed_one(tmp_path):
    raw = status_mail("ann@example.org").as_bytes(policy=policy.SMTP)
    parsed = BytesParser(policy=policy.default).parsebytes(raw)
    out = MaildirOutbox(tmp_path / "out")
    out.send(StoredMail.of(raw))
    out.send(parsed)
    box = mailbox.Maildir(str(tmp_path / "out"), factory=None)
    first, second = (box.get_bytes(k) for k in sorted(box.keys()))
    assert first == second == raw.replace(b"\r\n", b"\n")


def test_a_stored_mail_with_bcc_is_parsed_and_flattened_without_it(smtp_sink):
    msg = status_mail("ann@example.org")
    msg["Bcc"] = "secret@example.org"
    raw = msg.as_bytes(policy=policy.SMTP)
    SmtpOutbox(smtp_sink.host, smtp_sink.port, security="none").send(StoredMail.of(raw))
    (got,) = smtp_sink.messages
    assert got.rcpt_tos == ("ann@example.org",)  # envelope_of: To and Cc only
    assert b"secret@example.org" not in got.raw and got.message["Bcc"] is None
    assert got.message.get_body(("plain",)).get_content().startswith("Grüße aus Zürich.\n")
