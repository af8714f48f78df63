"""Tests of moderator.mailread (reading order mails) and moderator.compose.

The corpus in tests/mail/ holds raw mails from many clients; tests/mail/expected.yaml
says what read_mail must make of each.  The unit tests below cover the helpers and
edge cases one by one.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from moderator.mail.compose import build_message
from moderator.mail.read import (
    DEFAULT_MAX_SIZE,
    OrderMail,
    canonical_address,
    decode_text,
    html_to_text,
    parse_subject_tag,
    read_mail,
    strip_quoted,
    subject_tag,
    unflow,
)

MAIL_DIR = Path(__file__).with_name("mail")
EXPECTED = yaml.safe_load((MAIL_DIR / "expected.yaml").read_text(encoding="utf-8"))
REQUIRED = ("game_id", "secret", "lines", "machine", "bounce", "oversize")
OPTIONAL = ("sender", "sender_display", "subject", "message_id", "in_reply_to", "references")
STATUS_ID = "<174099240012.3141.5926535897932384626@up.example.org>"


# ---------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------


def test_corpus_and_expectations_match():
    files = sorted(p.name for p in MAIL_DIR.glob("*.eml"))
    assert files == sorted(EXPECTED)
    assert len(files) >= 40


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_mail(name):
    expected = EXPECTED[name]
    for key in REQUIRED:
        assert key in expected, f"{name}: expected.yaml lacks {key}"
    raw = (MAIL_DIR / name).read_bytes()
    mail = read_mail(raw, **expected.get("read", {}))
    assert isinstance(mail, OrderMail)
    got = {key: getattr(mail, key) for key in REQUIRED}
    want = {key: expected[key] for key in REQUIRED}
    for key in OPTIONAL:
        if key in expected:
            got[key] = getattr(mail, key)
            want[key] = expected[key]
    got["error"] = mail.error
    want["error"] = expected.get("error")
    assert got == want
    assert mail.size == len(raw)


def test_corpus_never_leaks_the_quoted_status_mail():
    """No mail read from a player yields a line of the quoted status mail."""
    status_lines = {"Your hand: 3 plain, 2 black-white, 1 white, 1 joker", "Stack: 5 cards",
                    "build DM DEN-CHY plain", "Share cards on display: KCC, MRR, DM, WW"}
    for name, expected in EXPECTED.items():
        if expected["machine"] is not None:
            continue
        mail = read_mail((MAIL_DIR / name).read_bytes(), **expected.get("read", {}))
        assert not status_lines & set(mail.lines), name


# ---------------------------------------------------------------------------
# canonical_address, subject tags
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Anna Nováková <Anna.Novakova@Gmail.COM>", "anna.novakova@gmail.com"),
        ("  ben@example.org  ", "ben@example.org"),
        ('"Carter, Ben" <ben@example.org>', "ben@example.org"),
        ("ben@example.org (Ben Carter)", "ben@example.org"),
        ("<ben@example.org>", "ben@example.org"),
        ("Ben <ben@example.org>, Anna <anna@example.org>", "ben@example.org"),
        ("Ben\r\n <ben@example.org>", "ben@example.org"),
        ("MAILER-DAEMON", "mailer-daemon"),
        ("<>", ""),
        ("", ""),
        (None, ""),
        ("just some words", ""),
        ("Ben Carter <>", ""),
    ],
)
def test_canonical_address(text, expected):
    assert canonical_address(text) == expected


def test_subject_tag():
    assert subject_tag("ridge", "k3x9p2qa") == "[pbem:ridge:k3x9p2qa]"
    assert subject_tag("Ridge_2.b-1", "00000000") == "[pbem:Ridge_2.b-1:00000000]"


@pytest.mark.parametrize(
    "game, secret",
    [("", "k3x9p2qa"), ("-ridge", "k3x9p2qa"), ("a" * 41, "k3x9p2qa"), ("ri dge", "k3x9p2qa"),
     ("ridge", "K3X9P2QA"), ("ridge", "k3x9p2q"), ("ridge", "k3x9p2qaa"), ("ridge", "k3x9-2qa")],
)
def test_subject_tag_rejects_bad_values(game, secret):
    with pytest.raises(ValueError):
        subject_tag(game, secret)


@pytest.mark.parametrize(
    "subject, expected",
    [
        ("[pbem:ridge:k3x9p2qa] Game ridge — your turn", ("ridge", "k3x9p2qa")),
        ("Re: [pbem:ridge:k3x9p2qa] Game ridge", ("ridge", "k3x9p2qa")),
        ("RE: AW: Sv: Fwd: [pbem:ridge:k3x9p2qa]", ("ridge", "k3x9p2qa")),
        ("[boardgamers] Re: [pbem:ridge:k3x9p2qa] x", ("ridge", "k3x9p2qa")),
        ("Re: [PBEM:ridge:k3x9p2qa]", ("ridge", "k3x9p2qa")),
        ("Re: [Pbem:g.1_x-2:0a1b2c3d]", ("g.1_x-2", "0a1b2c3d")),
        ("Re: [pbem:ridge:\r\n k3x9p2qa] Game", ("ridge", "k3x9p2qa")),
        ("Re: [ pbem : ridge : k3x9p2qa ]", ("ridge", "k3x9p2qa")),
        ("=?UTF-8?Q?Re=3A_=5Bpbem=3Aridge=3Ak3?=\r\n =?UTF-8?Q?x9p2qa=5D?=", ("ridge", "k3x9p2qa")),
        ("Re: [pbem:ridge:k3x9p2qa][pbem:other:00000000]", ("ridge", "k3x9p2qa")),
        ("Re: [pbem:ridge:K3X9P2QA]", (None, None)),
        ("Re: [pbem:ridge:k3x9p2q]", (None, None)),
        ("Re: [pbem:ridge:k3x9p2qaa]", (None, None)),
        ("Re: [pbem:-ridge:k3x9p2qa]", (None, None)),
        ("Re: pbem:ridge:k3x9p2qa", (None, None)),
        ("Game ridge", (None, None)),
        ("", (None, None)),
        (None, (None, None)),
    ],
)
def test_parse_subject_tag(subject, expected):
    assert parse_subject_tag(subject) == expected


@given(
    game=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}", fullmatch=True),
    secret=st.from_regex(r"[a-z0-9]{8}", fullmatch=True),
    prefix=st.sampled_from(["", "Re: ", "RE: AW: ", "Sv: ", "Fwd: ", "[list] Re: "]),
)
@settings(max_examples=200)
def test_subject_tag_round_trip(game, secret, prefix):
    assert parse_subject_tag(prefix + subject_tag(game, secret) + " Game") == (game, secret)


# ---------------------------------------------------------------------------
# strip_quoted and friends
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # quotes anywhere go, text between them stays
        ("take stack\n> quoted\n>> deeper\n  > indented\nswap MRR", "take stack\nswap MRR"),
        # signature
        ("take stack\n-- \nBen\nhttp://x", "take stack"),
        ("take stack\n--\nBen", "take stack"),
        ("take stack\n--- not a signature", "take stack\n--- not a signature"),
        # phone footers
        ("take stack\n\nSent from my iPhone\n\nOn x wrote:\n> q", "take stack"),
        ("take stack\nGet Outlook for iOS<https://aka.ms/o0ukef>\nrest", "take stack"),
        ("take stack\nEnviado desde mi iPhone", "take stack"),
        ("take stack\nVon meinem iPhone gesendet", "take stack"),
        ("take stack\nSent from my Galaxy\nmore", "take stack"),
        ("take stack\n发自我的iPhone", "take stack"),
        # attribution lines in each language, one line, unmarked quote below
        ("take stack\nOn Mon, 3 Mar 2025 at 10:00, Mod <m@x> wrote:\nGame ridge", "take stack"),
        ("take stack\nAm 03.03.2025 um 10:00 schrieb Mod <m@x>:\nGame ridge", "take stack"),
        ("take stack\nEl lun, 3 mar 2025 a las 10:00, Mod (<m@x>) escribió:\nGame", "take stack"),
        ("take stack\nLe lun. 3 mars 2025 à 10:00, Mod <m@x> a écrit :\nGame", "take stack"),
        ("take stack\nDne 3. 3. 2025 v 10:00 Mod napsal(a):\nGame", "take stack"),
        ("take stack\nOp ma 3 mrt 2025 om 10:00 schreef Mod <m@x>:\nGame", "take stack"),
        ("take stack\nIl giorno lun 3 mar 2025 alle ore 10:00 Mod <m@x> ha scritto:\nGame", "take stack"),
        ("take stack\nEm seg., 3 de mar. de 2025 às 10:00, Mod <m@x> escreveu:\nGame", "take stack"),
        ("take stack\nMod <m@x> 于2025年3月3日周一 10:00写道：\nGame", "take stack"),
        # wrapped over two and three lines
        ("take stack\nOn Mon, Mar 3, 2025 at 10:00 AM Union Pacific <\nm@x> wrote:\nGame", "take stack"),
        ("take stack\nAm Mo., 3. März 2025 um 10:00 Uhr schrieb\nUnion Pacific\n<m@x>:\nGame", "take stack"),
        # attribution above a '>' quote: orders after the quote are kept (bottom posting)
        ("On Mon, Mod wrote:\n> Game ridge\n\ntake stack", "take stack"),
        # any language: a line ending in ':' right above a '>' quote
        ("take stack\nMod <m@x> kirjoitti 3.3.2025 klo 10.00:\n> Game", "take stack"),
        # but a line ending in ':' above ordinary text stays
        ("my orders:\ntake stack", "my orders:\ntake stack"),
        # "On" lines that are no attribution stay
        ("On second thought:\ntake stack", "On second thought:\ntake stack"),
        # Outlook separators and header blocks
        ("take stack\n-----Original Message-----\nFrom: Mod\nGame", "take stack"),
        ("take stack\n-----Ursprüngliche Nachricht-----\nVon: Mod", "take stack"),
        ("take stack\n________________________________\nFrom: Mod <m@x>\nSent: Monday\n", "take stack"),
        ("take stack\n\nFrom: Mod <m@x>\nSent: Monday, March 3, 2025 10:00 AM\nTo: Ben\nSubject: x\n\nGame",
         "take stack"),
        ("take stack\n\n*From:* Mod <m@x>\n*Sent:* Monday\n*To:* Ben\n\nGame", "take stack"),
        ("take stack\nVon: Mod <m@x>\nGesendet: Montag\nAn: Ben\nBetreff: x\nGame", "take stack"),
        ("take stack\nDe : Mod <m@x>\nEnvoyé : lundi\nÀ : Ben\nObjet : x\nGame", "take stack"),
        ("take stack\nDe: Mod <m@x>\nEnviado: lunes\nPara: Ben\nAsunto: x\nGame", "take stack"),
        ("take stack\nOd: Mod <m@x>\nOdesláno: pondělí\nKomu: Ben\nPředmět: x\nGame", "take stack"),
        ("take stack\n发件人: Mod <m@x>\n发送时间: 2025年3月3日\n收件人: Ben\n主题: x\nGame", "take stack"),
        # a lone From: line is no header block
        ("From: DEN I build\ntake stack", "From: DEN I build\ntake stack"),
        # forwarded messages
        ("history\n---------- Forwarded message ---------\nFrom: Mod", "history"),
        ("history\nBegin forwarded message:\n\nFrom: Mod", "history"),
        # GroupWise
        ('help\n>>> "Mod" <m@x> 03.03.25 10:00 >>>\nGame', "help"),
        # blank lines at the ends go, inner ones and indentation stay
        ("\n\n  take stack\n\nswap MRR\n\n", "  take stack\n\nswap MRR"),
        # newline conventions
        ("take stack\r\nswap MRR\r\n> q\r\n", "take stack\nswap MRR"),
        ("take stack\rswap MRR", "take stack\nswap MRR"),
        # nothing but a quote
        ("> only quoted\n> text", ""),
        ("", ""),
    ],
)
def test_strip_quoted(text, expected):
    assert strip_quoted(text) == expected


@given(st.text())
def test_strip_quoted_never_raises(text):
    assert isinstance(strip_quoted(text), str)


@pytest.mark.parametrize(
    "text, delsp, expected",
    [
        ("one \ntwo \nthree\nfour", False, "one two three\nfour"),
        ("Mün \nchen", True, "München"),
        ("zu  \nteuer", True, "zu teuer"),
        (" From here\n >x", False, "From here\n>x"),
        ("-- \nsig", False, "-- \nsig"),
        ("> quoted \n> more\nnew", False, "> quoted more\nnew"),
        ("> quoted \nnot joined", False, "> quoted \nnot joined"),
        ("trailing ", False, "trailing "),
    ],
)
def test_unflow(text, delsp, expected):
    assert unflow(text, delsp=delsp) == expected


@pytest.mark.parametrize(
    "html, expected",
    [
        ("<div>take stack</div><div>swap&nbsp;MRR</div>", "take stack\nswap\xa0MRR"),
        ("<p>a<br>b</p><p>c</p>", "a\nb\nc"),
        ("<div>a</div><div><br></div><div>b<br></div><div>c</div>", "a\n\nb\nc"),
        ("<html><head><style>p {color:red}</style><title>t</title></head><body>x</body></html>", "x"),
        ("take<div class=\"gmail_quote\">On x wrote:<blockquote>q</blockquote></div>after", "take\nafter"),
        ("take<blockquote type=\"cite\"><div>q<div>qq</div></div></blockquote>", "take"),
        ("take<div id=\"appendonsend\"></div><hr><div id=\"divRplyFwdMsg\">From: x</div><div>q</div>", "take"),
        ("take<hr><div id=\"divRplyFwdMsg\">From: x</div><div>q</div>", "take"),
        ("take<div class=\"moz-signature\">-- <br>Sig</div>", "take"),
        ("a &amp; b &lt;c&gt;", "a & b <c>"),
        ("  lots   of\n  space  ", "lots of space"),
        ("<pre>  keep\n  lines</pre>", "keep\nlines"),
        ("<div><unclosed>text", "text"),
        ("", ""),
    ],
)
def test_html_to_text(html, expected):
    assert html_to_text(html) == expected


@pytest.mark.parametrize(
    "data, declared, expected",
    [
        (b"plain", None, "plain"),
        ("Grüße".encode("utf-8"), "utf-8", "Grüße"),
        ("Grüße".encode("latin-1"), "utf-8", "Grüße"),  # wrong label: cp1252 fallback
        ("Grüße".encode("utf-8"), "iso-8859-1", "Grüße"),  # wrong label: UTF-8 wins
        ("Grüße".encode("latin-1"), "iso-8859-1", "Grüße"),
        ("„Díky“".encode("cp1250"), "windows-1250", "„Díky“"),
        ("Dvořák".encode("iso-8859-2"), "ISO-8859-2", "Dvořák"),
        ("5 €".encode("iso-8859-15"), "iso-8859-15", "5 €"),
        ("—".encode("gbk"), "gb2312", "—"),  # GB2312 label, GBK bytes
        ("謝謝".encode("big5"), "big5", "謝謝"),
        ("Tomáš".encode("utf-8"), "x-no-such-charset", "Tomáš"),
        (b"\x81\xff", "utf-8", "\ufffd\xff"),
        (b"caf\xe9", None, "café"),
    ],
)
def test_decode_text(data, declared, expected):
    assert decode_text(data, declared) == expected


# ---------------------------------------------------------------------------
# read_mail on made-up mails
# ---------------------------------------------------------------------------


def _mail(body: str, headers: str = "", ctype: str = 'text/plain; charset="utf-8"') -> bytes:
    head = (
        "From: Ben Carter <ben@example.org>\n"
        "To: moderator@up.example.org\n"
        "Subject: Re: [pbem:ridge:k3x9p2qa] Game ridge\n"
        "Message-ID: <m1@example.org>\n"
        "MIME-Version: 1.0\n"
        f"Content-Type: {ctype}\n"
        "Content-Transfer-Encoding: 8bit\n"
    )
    return (head + headers + "\n" + body).encode("utf-8")


def test_read_mail_plain():
    mail = read_mail(_mail("take stack\n\n> quoted\n"))
    assert mail == OrderMail(
        message_id="<m1@example.org>", sender="ben@example.org", sender_display="Ben Carter",
        subject="Re: [pbem:ridge:k3x9p2qa] Game ridge", game_id="ridge", secret="k3x9p2qa",
        lines=["take stack"], in_reply_to=None, references=[], machine=None, bounce=None,
        oversize=False, size=len(_mail("take stack\n\n> quoted\n")), error=None,
    )


def test_read_mail_game_and_secret_lines():
    mail = read_mail(_mail("game: other\nsecret: abcd1234\ntake stack\n"))
    assert (mail.game_id, mail.secret, mail.lines) == ("ridge", "abcd1234", ["take stack"])
    raw = _mail("GAME : g-2\nsecret=abcd1234\nswap KCC\n").replace(
        b"Subject: Re: [pbem:ridge:k3x9p2qa] Game ridge", b"Subject: orders"
    )
    mail = read_mail(raw)
    assert (mail.game_id, mail.secret, mail.lines) == ("g-2", "abcd1234", ["swap KCC"])
    # invalid values are dropped with the line; the first valid line wins
    mail = read_mail(raw.replace(b"GAME : g-2", b"game: -bad\ngame: g-3\ngame: g-4"))
    assert (mail.game_id, mail.lines) == ("g-3", ["swap KCC"])
    mail = read_mail(_mail("secret: short\ntake stack\n"))
    assert (mail.secret, mail.lines) == ("k3x9p2qa", ["take stack"])


def test_read_mail_normalises_lines():
    mail = read_mail(_mail("\u200btake\u00a0stack \n\ufeffｓｗａｐ　ＭＲＲ\n\t\n"))
    assert mail.lines == ["take stack", "swap MRR"]


@pytest.mark.parametrize(
    "headers, reason",
    [
        ("Auto-Submitted: auto-replied\n", "Auto-Submitted: auto-replied"),
        ("Auto-Submitted: auto-generated; owner-email=x@y\n", "Auto-Submitted: auto-generated"),
        ("Auto-Submitted: no\n", None),
        ("X-Autoreply: yes\n", "X-Autoreply"),
        ("Precedence: bulk\n", "Precedence: bulk"),
        ("Precedence: junk\n", "Precedence: junk"),
        ("Precedence: list\n", "Precedence: list"),
        ("Precedence: first-class\n", None),
        ("List-Id: <games.example.org>\n", "List-Id"),
        ("List-Unsubscribe: <mailto:u@example.org>\n", "List-Unsubscribe"),
        ("Return-Path: <>\n", "empty Return-Path"),
        ("Return-Path: <ben@example.org>\n", None),
    ],
)
def test_read_mail_machine_headers(headers, reason):
    assert read_mail(_mail("take stack\n", headers)).machine == reason


@pytest.mark.parametrize(
    "sender, reason",
    [
        ("MAILER-DAEMON@example.org", "sender MAILER-DAEMON"),
        ("postmaster@example.org", "sender postmaster"),
        ("noreply@example.org", "sender no-reply"),
        ("no-reply@example.org", "sender no-reply"),
        ("do_not_reply@example.org", "sender no-reply"),
        ("DoNotReply@example.org", "sender no-reply"),
        ("noreply+bounce@example.org", "sender no-reply"),
        ("reply@example.org", None),
        ("nora.reply@example.org", None),
    ],
)
def test_read_mail_machine_senders(sender, reason):
    raw = _mail("take stack\n").replace(b"Ben Carter <ben@example.org>", sender.encode())
    assert read_mail(raw).machine == reason


@pytest.mark.parametrize(
    "subject, reason",
    [
        ("Out of Office: [pbem:ridge:k3x9p2qa] Game", "out-of-office subject"),
        ("Automatic reply: [pbem:ridge:k3x9p2qa] Game", "out-of-office subject"),
        ("Abwesenheitsnotiz: Re: x", "out-of-office subject"),
        ("Re: Respuesta automática: x", "out-of-office subject"),
        ("Automatická odpověď: x", "out-of-office subject"),
        ("Re: [pbem:ridge:k3x9p2qa] out of office next week, orders below", None),
        ("Re: [pbem:ridge:k3x9p2qa] Game ridge", None),
    ],
)
def test_read_mail_out_of_office_subject(subject, reason):
    raw = _mail("take stack\n").replace(
        b"Re: [pbem:ridge:k3x9p2qa] Game ridge", subject.encode("utf-8")
    )
    assert read_mail(raw).machine == reason


def test_read_mail_own_address():
    raw = _mail("take stack\n").replace(b"Ben Carter <ben@example.org>", b"<Moderator@Up.Example.org>")
    assert read_mail(raw, own_address="moderator@up.example.org").machine == "our own address"
    assert read_mail(raw).machine is None
    assert read_mail(_mail("x\n"), own_address="moderator@up.example.org").machine is None


def test_read_mail_oversize_default_limit():
    body = "take stack\n" + ("x" * 99 + "\n") * (DEFAULT_MAX_SIZE // 100 + 1)
    raw = _mail(body)
    mail = read_mail(raw)
    assert (mail.oversize, mail.lines, mail.size, mail.game_id) == (True, [], len(raw), "ridge")
    assert read_mail(raw, max_size=len(raw)).oversize is False
    assert read_mail(raw, max_size=len(raw)).lines[0] == "take stack"


def test_read_mail_threading_headers():
    headers = (
        "In-Reply-To: <a@example.org> (Ben's message of Mon)\n"
        "References: <r1@example.org>\n <r2@example.org>  <a@example.org>\n"
    )
    mail = read_mail(_mail("x\n", headers))
    assert mail.in_reply_to == "<a@example.org>"
    assert mail.references == ["<r1@example.org>", "<r2@example.org>", "<a@example.org>"]


def test_read_mail_html_only_with_meta_charset():
    html = '<html><head><meta charset="windows-1252"></head><body><p>swap MRR</p><p>Gr\xfc\xdfe</p></body></html>'
    raw = _mail("", ctype="text/html").replace(b"Content-Transfer-Encoding: 8bit\n", b"") + html.encode("cp1252")
    assert read_mail(raw).lines == ["swap MRR", "Grüße"]


def test_read_mail_prefers_plain_over_html():
    raw = (
        b"From: ben@example.org\nSubject: x\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/alternative; boundary="b"\n\n'
        b"--b\nContent-Type: text/plain\n\nplain text\n"
        b"--b\nContent-Type: text/html\n\n<p>html text</p>\n--b--\n"
    )
    assert read_mail(raw).lines == ["plain text"]


def test_read_mail_empty_plain_falls_back_to_html():
    raw = (
        b"From: ben@example.org\nSubject: x\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/alternative; boundary="b"\n\n'
        b"--b\nContent-Type: text/plain\n\n \n"
        b"--b\nContent-Type: text/html\n\n<div>take stack</div>\n--b--\n"
    )
    assert read_mail(raw).lines == ["take stack"]


def test_read_mail_forwarded_bounce_is_no_bounce():
    """A player forwarding a bounce (as an attached message) is not machine mail."""
    raw = (
        b"From: ben@example.org\nSubject: Fwd: bounce\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/mixed; boundary="b"\n\n'
        b"--b\nContent-Type: text/plain\n\nwhy did this bounce?\n"
        b"--b\nContent-Type: message/rfc822\n\n"
        b"From: MAILER-DAEMON@example.org\nSubject: Undelivered\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/report; report-type=delivery-status; boundary="c"\n\n'
        b"--c\nContent-Type: text/plain\n\nfailed\n"
        b"--c\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; x\n\n"
        b"Final-Recipient: rfc822; a@example.org\nAction: failed\n\n--c--\n"
        b"--b--\n"
    )
    mail = read_mail(raw)
    assert (mail.machine, mail.bounce, mail.lines) == (None, None, ["why did this bounce?"])


def test_read_mail_raw_8bit_headers():
    raw = _mail("x\n").replace(b"Ben Carter", "Jörg Häußler".encode("utf-8")).replace(
        b"Game ridge", "Grüße".encode("latin-1")
    )
    mail = read_mail(raw)
    assert (mail.sender_display, mail.subject) == ("Jörg Häußler", "Re: [pbem:ridge:k3x9p2qa] Grüße")


def test_read_mail_oversize_dsn_has_no_bounce():
    raw = (
        b"From: MAILER-DAEMON@example.org\nSubject: Undelivered\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/report; report-type=delivery-status; boundary="c"\n\n'
        b"--c\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; x\n\n"
        b"Final-Recipient: rfc822; a@example.org\nAction: failed\n\n--c--\n"
    )
    assert read_mail(raw).bounce == "a@example.org"
    mail = read_mail(raw, max_size=100)
    assert (mail.machine, mail.bounce, mail.oversize) == ("delivery status notification", None, True)


@pytest.mark.parametrize(
    "raw, error",
    [
        (b"", "no headers"),
        (b"\x00\xff\xfe garbage without any header structure", "no headers"),
        (None, "unreadable: TypeError"),
    ],
)
def test_read_mail_unreadable(raw, error):
    mail = read_mail(raw)
    assert (mail.error, mail.lines) == (error, [])


def test_read_mail_accepts_str():
    assert read_mail(_mail("take stack\n").decode()).lines == ["take stack"]


@given(st.binary(max_size=2000))
@settings(max_examples=300, deadline=None)
def test_read_mail_never_raises_on_bytes(raw):
    mail = read_mail(raw)
    assert isinstance(mail, OrderMail)
    assert mail.size == len(raw)


@given(
    body=st.text(max_size=500),
    headers=st.lists(
        st.sampled_from([
            "Content-Type: text/plain; charset=bogus\n", "Content-Transfer-Encoding: base64\n",
            "Content-Transfer-Encoding: quoted-printable\n", "Content-Type: text/html\n",
            "Content-Type: multipart/mixed; boundary=x\n", "From: =?utf-8?q?broken\n",
            "From: <<<@>>>\n", "Subject: =?x-unknown?B?AAAA?=\n", "Return-Path: garbage\n",
            "Content-Type: multipart/report; report-type=delivery-status; boundary=z\n",
            "Content-Type: text/plain; format=flowed; delsp=yes\n", "References: <<a@b>\n",
        ]),
        max_size=4,
    ),
)
@settings(max_examples=300, deadline=None)
def test_read_mail_never_raises_on_odd_mails(body, headers):
    raw = ("".join(headers) + "\n" + body).encode("utf-8", "surrogatepass")
    assert isinstance(read_mail(raw), OrderMail)


# ---------------------------------------------------------------------------
# compose.build_message
# ---------------------------------------------------------------------------

WHEN = datetime(2025, 3, 3, 9, 0, 0, tzinfo=timezone.utc)


def _parse(msg):
    return BytesParser(policy=policy.default).parsebytes(msg.as_bytes())


def test_build_message_text_only():
    msg = build_message(
        from_addr="moderator@up.example.org", from_name="Union Pacific (ridge)",
        to="Anna Nováková <anna@example.cz>", subject="[pbem:ridge:k3x9p2qa] Game ridge — your turn",
        text="Game ridge — your turn\n", domain="up.example.org", date=WHEN,
    )
    back = _parse(msg)
    assert back["From"] == '"Union Pacific (ridge)" <moderator@up.example.org>'
    assert back["From"].addresses[0].addr_spec == "moderator@up.example.org"
    assert back["To"] == "Anna Nováková <anna@example.cz>"
    assert back["Subject"] == "[pbem:ridge:k3x9p2qa] Game ridge — your turn"
    assert back["Date"] == "Mon, 03 Mar 2025 09:00:00 +0000"
    assert re.fullmatch(r"<[^<>@\s]+@up\.example\.org>", back["Message-ID"])
    assert back["In-Reply-To"] is None
    assert back["References"] is None
    assert back["Auto-Submitted"] == "auto-generated"
    assert back["X-Auto-Response-Suppress"] == "OOF, AutoReply"
    assert back["MIME-Version"] == "1.0"
    assert back.get_content_type() == "text/plain"
    assert back.get_content_charset() == "utf-8"
    # a non-ASCII text goes as its UTF-8 bytes (RFC 6152 8BITMIME; issue 26's 50 KB):
    # the headers stay 7-bit clean, and a server without 8BITMIME gets it re-encoded
    assert back["Content-Transfer-Encoding"] == "8bit"
    assert back.get_content() == "Game ridge — your turn\n"
    head, _, body = msg.as_bytes().partition(b"\n\n")
    assert head.isascii() and body == "Game ridge — your turn\n".encode("utf-8")
    from moderator.mail.compose import seven_bit

    assert seven_bit(_parse(msg)).as_bytes().isascii()
    # and our own reader makes sense of it
    mail = read_mail(msg.as_bytes(), own_address="moderator@up.example.org")
    assert (mail.game_id, mail.secret, mail.machine) == ("ridge", "k3x9p2qa", "our own address")


def test_build_message_with_html_and_threading():
    msg = build_message(
        from_addr="moderator@up.example.org", from_name=None, to="ben@example.org",
        subject="Re: [pbem:ridge:k3x9p2qa] orders", text="Orders accepted.\n",
        html="<p>Orders accepted.</p>\n", in_reply_to="<b2@example.org>",
        references=["<r1@example.org>", "<b2@example.org> <r3@example.org>", "r1@example.org"],
        auto_submitted="auto-replied", domain="up.example.org", date=WHEN,
    )
    back = _parse(msg)
    assert back["From"] == "moderator@up.example.org"
    assert back["To"] == "ben@example.org"
    assert back["In-Reply-To"] == "<b2@example.org>"
    assert back["References"] == "<r1@example.org> <b2@example.org> <r3@example.org>"
    assert back["Auto-Submitted"] == "auto-replied"
    assert back.get_content_type() == "multipart/alternative"
    parts = list(back.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    assert [p.get_content_charset() for p in parts] == ["utf-8", "utf-8"]
    assert [p["Content-Transfer-Encoding"] for p in parts] == ["7bit", "7bit"]
    assert [p["MIME-Version"] for p in parts] == [None, None]
    assert [p.get_content() for p in parts] == ["Orders accepted.\n", "<p>Orders accepted.</p>\n"]
    assert read_mail(msg.as_bytes()).lines == ["Orders accepted."]


def test_build_message_references_order_and_bare_ids():
    msg = build_message(
        from_addr="m@x.org", from_name="M", to="b@x.org", subject="s", text="t\n",
        in_reply_to="new@x.org", references=("a@x.org", "<b@x.org>", ""), domain="x.org", date=WHEN,
    )
    back = _parse(msg)
    assert back["In-Reply-To"] == "<new@x.org>"
    assert back["References"] == "<a@x.org> <b@x.org> <new@x.org>"


def test_build_message_unique_message_ids():
    kwargs = dict(from_addr="m@x.org", from_name=None, to="b@x.org", subject="s", text="t", domain="x.org")
    assert build_message(**kwargs)["Message-ID"] != build_message(**kwargs)["Message-ID"]
    assert build_message(**kwargs)["Date"]  # defaults to now


def test_build_message_long_lines_are_encoded():
    text = "x" * 1200 + "\n"
    back = _parse(build_message(from_addr="m@x.org", from_name=None, to="b@x.org", subject="s",
                                text=text, domain="x.org", date=WHEN))
    assert back["Content-Transfer-Encoding"] == "quoted-printable"
    assert back.get_content() == text


@pytest.mark.parametrize(
    "change",
    [
        {"from_addr": ""}, {"to": " "}, {"domain": ""}, {"from_addr": "not-an-address"},
        {"subject": "two\nlines"}, {"to": "a@x.org\nBcc: evil@x.org"},
    ],
)
def test_build_message_rejects_bad_input(change):
    kwargs = dict(from_addr="m@x.org", from_name=None, to="b@x.org", subject="s", text="t", domain="x.org")
    kwargs.update(change)
    with pytest.raises(ValueError):
        build_message(**kwargs)
