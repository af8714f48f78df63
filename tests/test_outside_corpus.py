"""The outside corpus (tests/mail/outside, see its README): how many replies of
discourse/email_reply_trimmer's test mails yield exactly the text above the quote."""
from __future__ import annotations

from pathlib import Path

import pytest

from moderator.mail.read import read_mail, strip_quoted

CORPUS = Path(__file__).with_name("mail") / "outside" / "email_reply_trimmer"
REACHED = 55  # may only go up: raise it when the reader gets better
KNOWN_DIFFERENT = {
    "delimiters.txt", "embedded_email_12.txt", "embedded_email_16.txt",
    "embedded_email_17.txt", "embedded_email_18.txt", "embedded_email_7.txt",
    "forwarded_message.txt", "quote_and_text.txt", "quote_only.txt",
}


def _norm(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def _names() -> list[str]:
    return sorted(p.name for p in (CORPUS / "emails").glob("*.txt"))


def _matches(name: str) -> bool:
    body = (CORPUS / "emails" / name).read_text(encoding="utf-8")
    want = (CORPUS / "trimmed" / name).read_text(encoding="utf-8")
    return _norm(strip_quoted(body)) == _norm(want)


def test_corpus_is_complete_with_its_licence():
    assert len(_names()) == 64
    assert _names() == sorted(p.name for p in (CORPUS / "trimmed").glob("*.txt"))
    assert "MIT License" in (CORPUS / "LICENSE").read_text()
    assert f"Count: {REACHED} of 64" in (CORPUS.parent / "README.md").read_text()


def test_count_of_replies_read_exactly():
    exact = [name for name in _names() if _matches(name)]
    assert len(exact) >= REACHED
    assert set(_names()) - set(exact) <= KNOWN_DIFFERENT


@pytest.mark.parametrize("name", _names())
def test_every_reply_reads_as_a_mail(name):
    """Wrapped in a mail, each body reads without error, lines without quotes."""
    body = (CORPUS / "emails" / name).read_bytes()
    raw = (b"From: Some One <some.one@example.org>\r\nTo: moderator@pbem.localhost\r\n"
           b"Subject: Re: [pbem:ridge:k3x9p2qa] x\r\nMIME-Version: 1.0\r\n"
           b"Content-Type: text/plain; charset=utf-8\r\n\r\n" + body)
    om = read_mail(raw, max_size=10**6)
    assert om.error is None
    assert not any(line.startswith(">") for line in om.lines)
    assert len(om.kinds) == len(om.lines)
