"""Transports and issue 12: a mail's size before its body, headers only when too
large (Maildir and Dovecot, memory measured with tracemalloc), and IMAP without
MOVE/UIDPLUS: never expunge another client's \\Deleted mail, never fetch one."""
from __future__ import annotations

import mailbox
import tracemalloc

import pytest

from moderator.mail.read import read_mail
from moderator.mail.transport import HeadersOnly, InboundMail
from moderator.mail.transport.imap import MOVED_KEYWORD, ImapInbox
from moderator.mail.transport.maildir import MaildirInbox, read_headers
from servers import Dovecot

BIG = 50 * 1024 * 1024
HEAD = (b"From: Ann Example <ann@example.org>\r\n"
        b"To: moderator@pbem.localhost\r\n"
        b"Subject: Re: [pbem:ridge:k3x9p2qa] huge\r\n"
        b"Message-ID: <big@example.org>\r\n"
        b"MIME-Version: 1.0\r\n"
        b"Content-Type: text/plain; charset=us-ascii\r\n\r\n")
SMALL = HEAD.replace(b"huge", b"small").replace(b"<big@", b"<small@") + b"start EPRG\r\n"


def big_mail() -> bytes:
    line = b"x" * 76 + b"\r\n"
    return HEAD + b"start EPRG\r\n" + line * (BIG // len(line))


def _peak(fn):
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def test_inbound_mail_defaults_keep_old_callers_working():
    mail = InboundMail("k", b"abc")
    assert (mail.size, mail.headers_only) == (3, False)
    assert mail == InboundMail("k", b"abc", size=3)
    head = HeadersOnly(b"From: a@b.c\r\n\r\n", 1000)
    assert InboundMail("k", head).size == 1000 and InboundMail("k", head).headers_only


def test_read_headers_stops_at_the_blank_line():
    import io
    stream = io.BytesIO(HEAD + b"body\r\n" * 100000)
    assert read_headers(stream) == HEAD
    assert stream.tell() < 70 * 1024
    assert read_headers(io.BytesIO(b"a: b\nc: d")) == b"a: b\nc: d"
    assert read_headers(io.BytesIO(b"a: b\n" * 100000), limit=1000).endswith(b"\n")


def test_maildir_oversize_mail_is_fetched_headers_only(tmp_path):
    data = big_mail()
    box = mailbox.Maildir(str(tmp_path / "in"), create=True)
    box.add(data)
    box.add(SMALL)
    del data, box
    inbox = MaildirInbox(tmp_path / "in", max_size=256 * 1024)
    mails, peak = _peak(inbox.fetch)
    assert peak < 2 * 1024 * 1024, peak
    big, small = sorted(mails, key=lambda m: m.size, reverse=True)
    assert big.headers_only and big.size > BIG and isinstance(big.raw, HeadersOnly)
    assert big.raw == HEAD.replace(b"\r\n", b"\n") or big.raw == HEAD
    assert not small.headers_only and small.raw == SMALL
    om, peak = _peak(lambda: read_mail(big.raw, max_size=256 * 1024))
    assert peak < 2 * 1024 * 1024
    assert om.oversize and om.size == big.size and om.lines == [] and om.error is None
    assert (om.sender, om.game_id, om.message_id) == ("ann@example.org", "ridge", "<big@example.org>")
    inbox.mark_ignored(big.key)
    assert [m.key for m in inbox.fetch()] == [small.key]


def test_maildir_default_limit_reads_ordinary_mails_whole(tmp_path):
    box = mailbox.Maildir(str(tmp_path / "in"), create=True)
    key = box.add(SMALL)
    assert MaildirInbox(tmp_path / "in").fetch() == [InboundMail(key, SMALL)]


def test_dovecot_oversize_mail_is_fetched_headers_only(dovecot):
    uid_big = dovecot.append(big_mail())
    uid_small = dovecot.append(SMALL)
    validity = dovecot.uidvalidity()
    with ImapInbox(**dovecot.inbox_kwargs(), max_size=256 * 1024) as inbox:
        mails, peak = _peak(inbox.fetch)
        assert peak < 4 * 1024 * 1024, peak
        assert [m.key for m in mails] == [f"{validity}:{uid_big}", f"{validity}:{uid_small}"]
        big, small = mails
        assert big.headers_only and big.size > BIG and big.raw == HEAD
        assert small == InboundMail(f"{validity}:{uid_small}", SMALL)
        om = read_mail(big.raw)
        assert om.oversize and om.size == big.size and om.sender == "ann@example.org"
        inbox.mark_ignored(big.key)
    assert [m.uid for m in dovecot.messages("INBOX")] == [uid_small]


DELETED = b"\\Deleted"


@pytest.mark.parametrize("capability", ["IMAP4rev1 LITERAL+", "IMAP4rev1 LITERAL+ UIDPLUS"])
def test_imap_never_expunges_or_fetches_another_clients_deleted_mail(capability):
    foreign = SMALL.replace(b"<small@", b"<foreign@")
    with Dovecot(imap_capability=capability) as server:
        uid_foreign = server.append(foreign, flags=(DELETED,))
        uid1 = server.append(SMALL)
        uid2 = server.append(SMALL.replace(b"<small@", b"<second@"))
        validity = server.uidvalidity()
        with ImapInbox(**server.inbox_kwargs()) as inbox:
            assert [m.key for m in inbox.fetch()] == [f"{validity}:{uid1}", f"{validity}:{uid2}"]
            inbox.mark_processed(f"{validity}:{uid1}")
            # the other client's mail is still there, still flagged
            stored = {m.uid: m for m in server.messages("INBOX")}
            assert DELETED in stored[uid_foreign].flags
            assert [m.key for m in inbox.fetch()] == [f"{validity}:{uid2}"]
            with pytest.raises(KeyError):
                inbox.mark_processed(f"{validity}:{uid1}")  # gone from our view
            # the other client changes its mind: undeletes its mail
            client = server.connect()
            client.select_folder("INBOX")
            client.remove_flags([uid_foreign], [DELETED])
            client.logout()
            inbox.mark_ignored(f"{validity}:{uid2}")
            assert [m.key for m in inbox.fetch()] == [f"{validity}:{uid_foreign}"]
        # now our flagged mails are expunged (with UIDPLUS, at once), the foreign one kept
        assert [(m.uid, m.raw) for m in server.messages("INBOX")] == [(uid_foreign, foreign)]
        assert [m.raw for m in server.messages("Processed")] == [SMALL]
        assert len(server.messages("Ignored")) == 1
        for folder in ("Processed", "Ignored"):
            for m in server.messages(folder):
                assert DELETED not in m.flags and MOVED_KEYWORD not in m.flags


def test_imap_without_uidplus_expunges_our_leftovers_in_a_later_session():
    with Dovecot(imap_capability="IMAP4rev1 LITERAL+") as server:
        uid_foreign = server.append(SMALL.replace(b"<small@", b"<f@"), flags=(DELETED,))
        uid1 = server.append(SMALL)
        uid2 = server.append(SMALL.replace(b"<small@", b"<s2@"))
        validity = server.uidvalidity()
        with ImapInbox(**server.inbox_kwargs()) as inbox:
            inbox.mark_processed(f"{validity}:{uid1}")
        stored = {m.uid: m.flags for m in server.messages("INBOX")}
        assert DELETED in stored[uid1] and MOVED_KEYWORD in stored[uid1]
        client = server.connect()
        client.select_folder("INBOX")
        client.remove_flags([uid_foreign], [DELETED])  # the other client undeletes
        client.logout()
        with ImapInbox(**server.inbox_kwargs()) as inbox:  # a new session: keyword says ours
            inbox.mark_processed(f"{validity}:{uid2}")
        assert [m.uid for m in server.messages("INBOX")] == [uid_foreign]
        assert len(server.messages("Processed")) == 2
