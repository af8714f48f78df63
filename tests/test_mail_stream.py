"""Reading the inbox a batch at a time (``Inbox.stream``): the keys and sizes
at once, the mails read as the iteration comes to them, so that memory holds at
most one batch of the size limit, never the whole inbox (Dovecot and Maildir,
memory measured with tracemalloc); the same mails, in the same order, as
``fetch``; a mail moved away meanwhile is left out."""
from __future__ import annotations

import mailbox
import tracemalloc

from moderator.mail.transport import InboundMail, MailStream
from moderator.mail.transport.imap import ImapInbox
from moderator.mail.transport.maildir import MaildirInbox

LIMIT = 256 * 1024


def mail(i: int, body: int) -> bytes:
    return (f"From: p{i}@example.org\r\nTo: moderator@pbem.localhost\r\nSubject: m{i}\r\n"
            f"Message-ID: <m{i}@example.org>\r\n\r\n").encode() + b"x" * body + b"\r\n"


def peak_while_handling(stream) -> tuple[list[tuple[str, int]], int]:
    """Iterate as the moderator does (each mail dropped before the next): the
    keys and sizes seen, and the peak of Python's allocations meanwhile."""
    seen = []
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        for m in stream:
            seen.append((m.key, len(m.raw)))
            del m
        return seen, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_dovecot_stream_holds_one_batch_not_the_inbox(dovecot):
    raws = [mail(i, 100 * 1024) for i in range(30)]  # 3 MB in all, 100 kB each
    uids = [dovecot.append(raw) for raw in raws]
    validity = dovecot.uidvalidity()
    with ImapInbox(**dovecot.inbox_kwargs(), max_size=LIMIT) as inbox:
        stream = inbox.stream()
        assert isinstance(stream, MailStream) and len(stream) == 30
        assert stream.keys == [f"{validity}:{u}" for u in uids]
        assert stream.sizes == {f"{validity}:{u}": len(r) for u, r in zip(uids, raws)}
        assert [len(b) for b in stream.batches()] == [2] * 15  # under 256 kB a batch
        seen, peak = peak_while_handling(stream)
        assert seen == [(f"{validity}:{u}", len(r)) for u, r in zip(uids, raws)]
        assert peak < 1024 * 1024, peak  # a batch and some, not 3 MB
        # fetch reads the same mails, all at once
        assert [(m.key, m.raw) for m in inbox.fetch()] == list(zip(stream.keys, raws))
        # a mail moved away after the listing is left out; the others still come
        stream = inbox.stream()
        inbox.mark_processed(stream.keys[3])
        assert [m.key for m in stream] == stream.keys[:3] + stream.keys[4:]


def test_maildir_stream_reads_one_mail_at_a_time(tmp_path):
    box = mailbox.Maildir(str(tmp_path / "in"), create=True)
    raws = [mail(i, 200 * 1024) for i in range(10)]
    for raw in raws:
        box.add(raw)
    inbox = MaildirInbox(tmp_path / "in", max_size=LIMIT)
    fetched = inbox.fetch()
    stream = inbox.stream()
    assert stream.keys == [m.key for m in fetched] and len(list(stream.batches())) == 10
    seen, peak = peak_while_handling(stream)
    assert seen == [(m.key, len(m.raw)) for m in fetched]
    assert sorted(m.raw for m in fetched) == sorted(r.replace(b"\r\n", b"\n") for r in raws) or \
        sorted(m.raw for m in fetched) == sorted(raws)
    assert peak < 700 * 1024, peak  # one mail and some, not 2 MB
    stream = inbox.stream()
    inbox.mark_ignored(stream.keys[0])
    assert [m.key for m in stream] == stream.keys[1:]


def test_a_stream_of_mails_read_already():
    mails = [InboundMail("a", b"x" * 10), InboundMail("b", b"y")]
    stream = MailStream.of(mails)
    assert len(stream) == 2 and stream.sizes == {"a": 10, "b": 1} and list(stream) == mails
