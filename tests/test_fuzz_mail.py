"""A fuzz test of read_mail over hostile mails (issue 12).

A seeded generator builds a few hundred hostile mails per run; the seed rotates
with the day (override with PBEM_FUZZ_SEED, count with PBEM_FUZZ_COUNT), so CI
runs cover new mails over time: 300 a run reaches 10,000 in 34 runs.  Each mail
must read without an exception, within a time bound, and give order lines that
are str without control characters, one kind per line.
"""
from __future__ import annotations

import base64
import datetime
import os
import random
import time
import unicodedata

from moderator.mail.read import OrderMail, delivery_key, read_mail

SEED = int(os.environ.get("PBEM_FUZZ_SEED", datetime.date.today().toordinal()))
COUNT = int(os.environ.get("PBEM_FUZZ_COUNT", "300"))
TIME_LIMIT = 2.0  # seconds per mail (mails up to ~300 kB)

CHARSETS = ["utf-8", "us-ascii", "iso-2022-jp", "iso-2022-kr", "utf-7", "hz-gb-2312", "koi8-r",
            "gb2312", "big5", "shift_jis", "windows-1252", "utf-16", "bogus-charset", "",
            "iso-8859-8-i", "utf-32", "x-unknown"]
CTES = ["7bit", "8bit", "base64", "quoted-printable", "binary", "x-uuencode", "bogus"]
FROMS = [
    "Ann <ann@example.org>", "<ann@example.org>@strangers.example",
    "bob@example.org <zed@strangers.example>", '"e" <a@x.org>, o@evil.org',
    "Ann\x00 <ann@example.org>", "=?utf-8?q?A=0D=0ABcc:_v@e.org?= <ann@example.org>",
    "=?iso-2022-jp?b?GyRCOzNFRBsoQg==?= <t@example.jp>", "", "<>", "a" * 5000 + "@x.org",
    "Ann <ann@bücher.example>", "MAILER-DAEMON", "undisclosed-recipients:;",
    "\"unterminated <ann@example.org>", "ann@example.org (comment (nested (deep)))" * 50,
]
PIECES = [
    "start EPRG", "build DM DEN-KCY plain", "take stack", "pass", "secret: k3x9p2qa",
    "game: ridge", "> quoted", "On Mon, 30 Nov 2026 Ann <a@x.org> wrote:", "From: x <x@y>",
    "Sent: today", "To: y", "Subject: z", "От: m", "Отправлено: x", "Кому: y", "Тема: z",
    "-- ", "--", "-----Original Message-----", "_" * 40, "Thanks", "Ann", "+1 555 0100",
    "\x1b$B$*@$OC$K\x1b(B", "\x1b[31m", "\x00\x01\x02", "\u202e\u2066", "\ufeff\u200b",
    "=?utf-8?b?" + "A" * 30, "<html><body><blockquote>x</blockquote>", "~{Dc:C~}", "+AGEAYgBj-",
    "\t \t", "é" * 50, "日本語", "x" * 3000, "1" * 400, ":" * 500, "wrote:" * 100,
    "2026" + " x" * 100 + " <a@b.c>:", "a\rb\r\nc\n", "From " + "x" * 10,
]


def _text(rng: random.Random) -> str:
    lines = [rng.choice(PIECES) for _ in range(rng.randint(0, 40))]
    if rng.random() < 0.2:
        lines = lines * rng.randint(2, 50)
    return "\n".join(lines)


def _body(rng: random.Random, charset: str, cte: str) -> bytes:
    text = _text(rng)
    try:
        data = text.encode(charset or "utf-8", errors="replace")
    except (LookupError, UnicodeError):
        data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.1:
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 3000)))
    if cte == "base64" and rng.random() < 0.8:
        data = base64.encodebytes(data)
        if rng.random() < 0.2:
            data = data[:-3]  # broken padding
    return data


def _nested(rng: random.Random, depth: int, leaf: bytes) -> bytes:
    out = b""
    for i in range(depth):
        kind = rng.choice([b"mixed", b"alternative", b"related", b"report"])
        out += b'Content-Type: multipart/%s; boundary="b%d"\r\n\r\n--b%d\r\n' % (kind, i, i)
    return out + leaf


def hostile_mail(rng: random.Random) -> bytes:
    charset = rng.choice(CHARSETS)
    cte = rng.choice(CTES)
    headers = [
        f"From: {rng.choice(FROMS)}",
        f"To: {rng.choice(FROMS)}",
        "Subject: " + rng.choice(["Re: [pbem:ridge:k3x9p2qa] x", "[pbem:RIDGE:K3X9P2QA]",
                                  "=?utf-8?q?=5Bpbem:ridge:k3x9p2qa=5D?=", "x" * 2000,
                                  "Out of office", "Re:\r\n [pbem:ridge:\r\n k3x9p2qa]", ""]),
        "Message-ID: " + rng.choice(["<a@b>", "", "<" + "x" * 1000 + ">", "no brackets"]),
    ]
    for _ in range(rng.randint(0, 6)):
        headers.append(rng.choice([
            "Auto-Submitted: auto-replied", "Precedence: bulk", "Return-Path: <>",
            "Received: from x by y", "X-Spam-Status: Yes", "MIME-Version: 1.0",
            "Content-Disposition: attachment", "In-Reply-To: <" + "y" * 500,
            "References: " + "<r@x> " * 300, "X-Injected: a\rb", "Bad Header Without Colon",
            "From: second <s@x.org>", "Content-Type: message/rfc822",
            "Content-Type: multipart/report; report-type=delivery-status; boundary=z",
            "\x00: \x00", " folded continuation first",
        ]))
    ctype = rng.choice([f'text/plain; charset="{charset}"', "text/html; charset=" + charset,
                        "text/plain; format=flowed; delsp=yes", "application/octet-stream",
                        'multipart/alternative; boundary="q"', "text/plain; charset=*''",
                        "", "text/plain; charset=\"" + "x" * 300 + "\""])
    head = "\r\n".join(headers + [f"Content-Type: {ctype}",
                                  f"Content-Transfer-Encoding: {cte}"]) + "\r\n\r\n"
    body = _body(rng, charset, cte)
    roll = rng.random()
    if roll < 0.05:
        body = _nested(rng, rng.choice([5, 50, 1000, 3000]), b"Content-Type: text/plain\r\n\r\n" + body)
    elif roll < 0.12:
        body = b"--q\r\nContent-Type: text/html\r\n\r\n" + body + b"\r\n--q--\r\n"
    raw = head.encode("utf-8", "surrogatepass") + body
    if rng.random() < 0.05:  # cut anywhere, or drop the header/body separator
        raw = raw[:rng.randint(0, len(raw))]
    if rng.random() < 0.05:
        raw = raw.replace(b"\r\n\r\n", b"\r\n", 1)
    if rng.random() < 0.05:
        raw = raw.replace(b"\r\n", b"\r")
    return raw


def _control_free(line: str) -> bool:
    return not any(unicodedata.category(c) == "Cc" for c in line)


def test_read_mail_survives_hostile_mails():
    rng = random.Random(SEED)
    slowest = 0.0
    for n in range(COUNT):
        raw = hostile_mail(rng)
        started = time.perf_counter()
        om = read_mail(raw, own_address="moderator@pbem.localhost",
                       max_size=rng.choice([1024, 256 * 1024, 10**7]))
        spent = time.perf_counter() - started
        slowest = max(slowest, spent)
        where = f"seed {SEED}, mail {n}"
        assert isinstance(om, OrderMail), where
        assert spent < TIME_LIMIT, (where, spent)
        assert all(isinstance(line, str) and line and _control_free(line) for line in om.lines), where
        assert len(om.kinds) == len(om.lines), where
        assert om.delivery_key == delivery_key(raw), where
        assert isinstance(om.sender, str) and _control_free(om.sender) and " " not in om.sender
        assert om.sender == "" or om.sender_problem is None, where
        if om.oversize:
            assert om.lines == [], where


def test_fuzz_generator_is_reproducible():
    a = [hostile_mail(random.Random(7)) for _ in range(3)]
    b = [hostile_mail(random.Random(7)) for _ in range(3)]
    assert a == b
