"""``compose.build_message`` sets each multipart's boundary itself
(``compose._boundary``) and keeps the header objects it repeats
(``compose._header``): the mail is byte for byte the one the ``email`` package
builds alone (but for the random boundaries and Message-ID), and no boundary
appears inside a part.  ``compose.flatten`` writes the bytes of
``as_bytes(policy=policy.SMTP)``."""
from __future__ import annotations

import random
import re
from datetime import datetime, timezone
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.parser import BytesParser

import pytest

from pathlib import Path

from moderator.mail.compose import _cte, build_message, flatten
from moderator.mail.transport import StoredMail

WHEN = datetime(2026, 12, 1, 9, 30, 0, tzinfo=timezone.utc)
PNG = bytes(random.Random(4).randrange(256) for _ in range(5000))  # base64 is all that matters

CASES = {
    "ascii": dict(text="Your move.\n", html="<p>Your move.</p>\n"),
    "non-ascii": dict(text="Zoë — your move · 3 MRR\n", html="<p>Zoë — your move · 3 MRR</p>\n"),
    "long lines": dict(text="x" * 1200 + "\n", html="<p>" + "y " * 700 + "</p>\n"),
    "looks like a boundary": dict(
        text="--===============1234567890123456789==\n--==\n" + "=" * 40 + "\n",
        html="<pre>--===============1234567890123456789==--</pre>\n"),
}


def ours(text: str, html: str, images) -> EmailMessage:
    return build_message(
        from_addr="moderator@up.example", from_name="UP moderator", to="Zoë <zoe@players.example>",
        subject="[pbem] Game g1 — Zoë", text=text, html=html, images=images,
        in_reply_to="<b2@players.example>", references=["<r1@up.example>"],
        auto_submitted="auto-generated", domain="up.example", date=WHEN)


def stock(text: str, html: str, images) -> EmailMessage:
    """The same mail as the ``email`` package builds it alone: headers as
    ``build_message`` sets them, ``add_alternative`` and ``add_related`` making
    their multiparts without a boundary (the generator makes one up)."""
    msg = EmailMessage(policy=policy.default)
    msg["From"] = Address(display_name="UP moderator", addr_spec="moderator@up.example")
    msg["To"] = "Zoë <zoe@players.example>"
    msg["Subject"] = "[pbem] Game g1 — Zoë"
    msg["Date"] = "Tue, 01 Dec 2026 09:30:00 +0000"
    msg["Message-ID"] = "<stock@up.example>"
    msg["In-Reply-To"] = "<b2@players.example>"
    msg["References"] = "<r1@up.example> <b2@players.example>"
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Auto-Response-Suppress"] = "OOF, AutoReply"
    msg.set_content(text, charset="utf-8", cte=_cte(text))
    msg.add_alternative(html, subtype="html", charset="utf-8", cte=_cte(html))
    for cid, png in images:
        msg.get_payload()[1].add_related(png, maintype="image", subtype="png", cid=f"<{cid}>",
                                         disposition="inline")
    for part in msg.walk():
        if part is not msg:
            del part["MIME-Version"]
    return msg


def boundaries(msg: EmailMessage) -> list[str]:
    return [part.get_boundary() for part in msg.walk() if part.is_multipart()]


def normalized(raw: bytes, bounds: list[str]) -> bytes:
    for i, b in enumerate(bounds):
        raw = raw.replace(b.encode(), b"BOUNDARY%d" % i)
    return re.sub(rb"Message-ID: <[^>\r\n]+>", b"Message-ID: <ID>", raw)


@pytest.mark.parametrize("images", [[], [("map.g1@up.example", PNG)]], ids=["no image", "map"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_mail_is_the_one_the_email_package_builds_alone(case, images):
    mine, theirs = ours(images=images, **CASES[case]), stock(images=images, **CASES[case])
    before = boundaries(mine)
    assert all(before) and len(before) == (2 if images else 1)
    raw = mine.as_bytes(policy=policy.SMTP)
    assert boundaries(mine) == before  # flattening did not make another up
    expected = theirs.as_bytes(policy=policy.SMTP)
    assert normalized(raw, before) == normalized(expected, boundaries(theirs))
    back = BytesParser(policy=policy.default).parsebytes(raw)
    assert [p.get_content_type() for p in back.walk()] == [
        "multipart/alternative", "text/plain", *(["multipart/related", "text/html", "image/png"]
                                                 if images else ["text/html"])]
    assert back.get_body(("plain",)).get_content().replace("\r\n", "\n") == CASES[case]["text"]
    assert back.get_body(("html",)).get_content().replace("\r\n", "\n") == CASES[case]["html"]
    if images:
        assert back.get_payload()[1].get_payload()[1].get_content() == PNG


@pytest.mark.parametrize("case", list(CASES))
def test_no_boundary_appears_inside_a_part_and_each_is_new(case):
    seen: set[str] = set()
    for _ in range(20):
        msg = ours(images=[("map.g1@up.example", PNG)], **CASES[case])
        outer, inner = boundaries(msg)
        raw = msg.as_bytes(policy=policy.SMTP)
        for b in (outer, inner):
            # RFC 2046 5.1.1: 1 to 70 characters of bchars, not ending in a space
            assert re.fullmatch(r"[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]", b)
            assert b not in seen
            seen.add(b)
        # the delimiter lines are the only lines that start with a boundary
        lines = raw.split(b"\r\n")
        delimiters = [line for line in lines if line.startswith(b"--" + outer.encode())]
        assert delimiters == [b"--" + outer.encode()] * 2 + [b"--" + outer.encode() + b"--"]
        delimiters = [line for line in lines if line.startswith(b"--" + inner.encode())]
        assert delimiters == [b"--" + inner.encode()] * 2 + [b"--" + inner.encode() + b"--"]
        assert raw.count(outer.encode()) == 4 and raw.count(inner.encode()) == 4  # and the header


CORPUS = sorted((Path(__file__).with_name("mail")).rglob("*.eml"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_flatten_writes_what_as_bytes_writes_for_any_mail(path):
    """Players' mails of every kind (8-bit bodies, bare CR or LF, multiparts,
    bounces), parsed as the moderator parses them."""
    msg = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
    assert flatten(msg) == msg.as_bytes(policy=policy.SMTP)


@pytest.mark.parametrize("case", list(CASES))
def test_flatten_writes_what_as_bytes_writes_for_our_mails(case):
    for images in ([], [("map.g1@up.example", PNG)]):
        msg = ours(images=images, **CASES[case])
        assert flatten(msg) == msg.as_bytes(policy=policy.SMTP)
    odd = EmailMessage(policy=policy.default)
    odd["Subject"] = "no body"
    assert flatten(odd) == odd.as_bytes(policy=policy.SMTP)
    odd.set_content("a\rb\r\nc\nno end", cte="8bit")
    odd.preamble = "pre\namble"
    assert flatten(odd) == odd.as_bytes(policy=policy.SMTP)


def test_flatten_gives_a_stored_mails_own_bytes():
    raw = ours(images=[], **CASES["ascii"]).as_bytes(policy=policy.SMTP)
    stored = StoredMail.of(raw)
    assert flatten(stored) == raw


def test_repeated_headers_are_shared_and_still_right():
    one, two = ours(images=[], **CASES["non-ascii"]), ours(images=[], **CASES["ascii"])
    assert one["To"] is two["To"] and one["From"] is two["From"]  # kept, not parsed again
    assert one["To"].addresses[0].addr_spec == "zoe@players.example"
    assert str(one["Subject"]) == "[pbem] Game g1 — Zoë"
    for msg in (one, two):
        raw = msg.as_bytes(policy=policy.SMTP)
        assert b"To: =?utf-8?q?Zo=C3=AB?= <zoe@players.example>\r\n" in raw
        assert b'From: UP moderator <moderator@up.example>\r\n' in raw
