"""Reading real mail (issue 12, the reading half): localized reply headers and
attributions from the table, signatures without '-- ', 7-bit stateful charsets,
strict From parsing, deeply nested MIME, the duplicate-delivery key, and the
mails of /work/shared/cases/mail-2 (copied to tests/mail/cases2)."""
from __future__ import annotations

import re
import unicodedata
from email.message import EmailMessage
from pathlib import Path

import pytest

from moderator.mail.read import (
    REPLY_TABLE,
    OrderMail,
    classify_lines,
    decode_text,
    delivery_key,
    read_mail,
    strip_quoted,
)

CASES = Path(__file__).with_name("mail") / "cases2"
OWN = "moderator@pbem.localhost"
THREAD = b"<welcome-1@pbem.localhost>"
SECRET = b"k3x9p2qa"


def case(name: str, n: int = 0) -> list[bytes]:
    """The mails of one case file, its placeholders filled in."""
    raw = (CASES / name).read_bytes()
    raw = raw.replace(b"{{SECRET}}", SECRET).replace(b"{{THREAD}}", THREAD)
    raw = raw.replace(b"{{N}}", str(n).encode())
    return re.split(rb"\r?\n%%NEXT%%\r?\n", raw)


def read(raw: bytes) -> OrderMail:
    return read_mail(raw, own_address=OWN)


def mail(body: str, charset: str = "utf-8", sender: str = "Ann Example <ann@example.org>",
         cte: str = "8bit", extra: str = "") -> bytes:
    head = (f"From: {sender}\r\nTo: {OWN}\r\n"
            "Subject: Re: [pbem:ridge:k3x9p2qa] your move\r\n"
            "Message-ID: <m1@example.org>\r\nIn-Reply-To: <welcome-1@pbem.localhost>\r\n"
            f"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=\"{charset}\"\r\n"
            f"Content-Transfer-Encoding: {cte}\r\n{extra}\r\n")
    codec = {"iso-2022-jp": "iso2022_jp_ext", "hz-gb-2312": "hz"}.get(charset, charset)
    try:
        data = body.replace("\n", "\r\n").encode(codec)
    except LookupError:
        data = body.replace("\n", "\r\n").encode("utf-8")
    return head.encode("utf-8") + data


# ---------------------------------------------------------------------------
# The case files
# ---------------------------------------------------------------------------


def test_case_02_outlook_ru_header_block_koi8r():
    [raw] = case("02_outlook_ru_header.eml")
    om = read(raw)
    assert (om.sender, om.game_id, om.secret) == ("ann@example.org", "ridge", "k3x9p2qa")
    assert om.lines == ["start EPRG"] and om.kinds == ["text"] and om.unread == []
    assert om.cut and om.cut.startswith("reply header block (ru")
    assert om.machine is None and om.error is None


def test_case_04_signature_without_delimiter():
    [raw] = case("04_signature_no_delimiter_phone.eml")
    om = read(raw)
    assert om.lines == ["start EPRG", "Ann Example",
                        "Logistics Coordinator | Example Freight Ltd.",
                        "Office +1 555 0100 | Mobile +1 555 0199"]
    assert om.kinds == ["text", "signature", "signature", "signature"]
    assert om.unread == om.lines[1:]
    assert om.cut.startswith("reply header block (en")
    assert om.machine is None and om.error is None


def test_case_06_iso2022jp_decoded_as_declared():
    [raw] = case("06_iso2022jp_body.eml")
    om = read(raw)
    assert om.lines == ["お世話になっております。", "start EPRG", "よろしくお願いします。"]
    assert om.kinds == ["greeting", "text", "signoff"]
    assert om.unread == ["お世話になっております。", "よろしくお願いします。"]
    assert not any("\x1b" in line or "$B" in line for line in om.lines)
    assert om.machine is None and om.error is None


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_case_08_vacation_reply_without_header(n):
    [raw] = case("08_vacation_reply_no_autosubmitted.eml", n)
    om = read(raw)
    # no machine header: a person's mail to the reader (the moderation rate-limits it)
    assert om.machine is None and om.error is None
    assert om.message_id == f"<vacation-{n}-7f3a@autoresponder.example.org>"
    assert om.kinds == ["greeting", "text", "text", "signature"]
    assert om.unread == ["Hello,", "Ann"]
    assert om.auto_hint == "I am travelling"
    assert "start" not in " ".join(om.lines)
    keys = {read(case("08_vacation_reply_no_autosubmitted.eml", k)[0]).delivery_key
            for k in range(4)}
    assert len(keys) == 4  # one mail per cycle: each a new mail


def test_case_09_duplicate_delivery_has_one_key():
    first, second = case("09_duplicate_delivery_no_message_id.eml")
    a, b = read(first), read(second)
    assert a.message_id is None and b.message_id is None
    assert a.lines == b.lines == ["start EPRG"]
    assert a.delivery_key == b.delivery_key
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", a.delivery_key)
    assert first != second


# ---------------------------------------------------------------------------
# Reply header blocks and attributions, from the table
# ---------------------------------------------------------------------------


def test_table_covers_the_mail_client_languages():
    wanted = {"en", "es", "pt", "fr", "de", "it", "nl", "ru", "pl", "cs", "sv", "da",
              "nb", "fi", "tr", "ja", "zh-hans", "zh-hant", "ko", "ar", "hu", "uk", "el",
              "ro"}
    assert wanted <= set(REPLY_TABLE)
    for lang, entry in REPLY_TABLE.items():
        for kind in ("from", "sent", "to", "subject", "wrote"):
            assert entry.get(kind), (lang, kind)


@pytest.mark.parametrize("lang", sorted(REPLY_TABLE))
def test_header_block_of_every_language_ends_the_reading(lang):
    labels = REPLY_TABLE[lang]
    block = "\n".join([
        f"{labels['from'][0]}: Union Pacific moderator <{OWN}>",
        f"{labels['sent'][0]}: 30.11.2026 23:54",
        f"{labels['to'][0]}: Ann Example <ann@example.org>",
        f"{labels['subject'][0]}: [pbem:ridge:k3x9p2qa] welcome",
        "",
        "Welcome to Union Pacific, game ridge!",
        "  start BNL",
    ])
    text = f"start EPRG\n\n{block}\n"
    assert strip_quoted(text) == "start EPRG"
    om = read(mail(text))
    assert om.lines == ["start EPRG"] and om.cut.startswith("reply header block")


@pytest.mark.parametrize("lang", sorted(REPLY_TABLE))
def test_attribution_of_every_language_ends_the_reading(lang):
    wrote = REPLY_TABLE[lang]["wrote"][0]
    start = (REPLY_TABLE[lang]["start"] or [""])[0]
    line = f"{start} 30.11.2026 23:54 Union Pacific <{OWN}> {wrote}:".strip()
    text = f"start EPRG\n\n{line}\n\nWelcome to Union Pacific, game ridge!\n  start BNL\n"
    assert strip_quoted(text) == "start EPRG", line
    quoted = f"start EPRG\n\n{line}\n> Welcome\n>   start BNL\n\nbuild DM DEN-KCY\n"
    kept = [x for x in strip_quoted(quoted).split("\n") if x.strip()]
    assert kept == ["start EPRG", "build DM DEN-KCY"], line


@pytest.mark.parametrize("text", [
    # Outlook, Polish
    "start EPRG\n\nOd: Union Pacific moderator <m@x>\nWysłano: poniedziałek, 30 listopada 2026 23:54\n"
    "Do: Ann <a@x>\nTemat: welcome\n\nWelcome\n  start BNL",
    # Outlook, Finnish
    "start EPRG\n\nLähettäjä: Union Pacific moderator <m@x>\nLähetetty: maanantai 30. marraskuuta 2026 23.54\n"
    "Vastaanottaja: Ann <a@x>\nAihe: welcome\n\nWelcome\n  start BNL",
    # Outlook, Korean (label with a space), bold labels of HTML mail
    "start EPRG\n\n*보낸 사람:* moderator <m@x>\n*보낸 날짜:* 2026년 11월 30일 월요일 오후 11:54\n"
    "*받는 사람:* Ann <a@x>\n*제목:* welcome\n\n  start BNL",
    # Outlook, Turkish, Hungarian, Greek, Romanian, Ukrainian, Arabic
    "start EPRG\n\nKimden: m <m@x>\nGönderildi: 30 Kasım 2026\nKime: a <a@x>\nKonu: welcome\n\nstart BNL",
    "start EPRG\n\nFeladó: m <m@x>\nElküldve: 2026. november 30.\nCímzett: a <a@x>\nTárgy: welcome\n\nstart BNL",
    "start EPRG\n\nΑπό: m <m@x>\nΣτάλθηκε: Δευτέρα\nΠρος: a <a@x>\nΘέμα: welcome\n\nstart BNL",
    "start EPRG\n\nDe la: m <m@x>\nTrimis: luni\nCătre: a <a@x>\nSubiect: welcome\n\nstart BNL",
    "start EPRG\n\nВід: m <m@x>\nНадіслано: 30 листопада 2026 р.\nКому: a <a@x>\nТема: welcome\n\nstart BNL",
    "start EPRG\n\n\u200fمن: m <m@x>\n\u200fتم الإرسال: 30 نوفمبر\n\u200fإلى: a <a@x>\n\u200fالموضوع: welcome\n\nstart BNL",
    # Gmail attributions
    "start EPRG\n\npon., 30 lis 2026 o 23:54 Union Pacific <m@x.org> napisał(a):\n\n> start BNL",
    "start EPRG\n\nma 30.11.2026 klo 23.54 Union Pacific (m@x.org) kirjoitti:\n\n> start BNL",
    "start EPRG\n\nпн, 30 нояб. 2026 г. в 23:54, Union Pacific <m@x.org>:\n\n> start BNL",
    "start EPRG\n\n2026年11月30日(月) 23:54 Union Pacific <m@x.org>:\n> start BNL",
    "start EPRG\n\n在 2026年11月30日 23:54，Union Pacific <m@x.org> 写道：\n> start BNL",
    "start EPRG\n\n2026년 11월 30일 (월) 오후 11:54, Union Pacific <m@x.org>님이 작성:\n> start BNL",
    # separators
    "start EPRG\n\n-----Исходное сообщение-----\nОт: m\nstart BNL",
    "start EPRG\n\nAlkuperäinen viesti\nstart BNL",
    "start EPRG\n\n---- 원본 메시지 ----\nstart BNL",
])
def test_real_world_reply_blocks(text):
    assert strip_quoted(text) == "start EPRG"


def test_ordinary_lines_are_not_taken_for_headers_or_attributions():
    text = "build DM DEN-KCY plain\nBob wrote: nothing\nTo: be honest I pass\npass"
    assert strip_quoted(text) == text


# ---------------------------------------------------------------------------
# Signatures and the kinds of lines
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("lines, kinds", [
    (["Hallo,", "build DM DEN-ABQ plain", "Viele Grüße", "Jörg"],
     ["greeting", "text", "signoff", "signature"]),
    (["Hi Bob,", "start UP", "Cheers, Ann"], ["greeting", "text", "signoff"]),
    (["start UP", "С уважением,", "Анна Петрова", "Менеджер по логистике", "+7 495 123-45-67"],
     ["text", "signoff", "signature", "signature", "signature"]),
    (["start UP", "Pozdrawiam", "Anna"], ["text", "signoff", "signature"]),
    (["start UP", "Ystävällisin terveisin", "Anna Virtanen"], ["text", "signoff", "signature"]),
    (["start UP", "Ann Example", "Head of Trains", "Tel. +44 20 7946 0018", "www.example.org"],
     ["text", "signature", "signature", "signature", "signature"]),
    (["start UP", "Mobile: (555) 010-0199"], ["text", "signature"]),
    (["CAUTION: This email originated from outside of the organization.", "start UP"],
     ["notice", "text"]),
    (["start UP", "This e-mail and any attachments are confidential and intended solely for",
      "the addressee. If you received it in error, delete it."], ["text", "notice", "notice"]),
    (["start UP", "strat UP", "build KCC"], ["text", "text", "text"]),
])
def test_classify_lines(lines, kinds):
    assert classify_lines(lines, "ann@example.org", "Ann Example") == kinds


def test_signature_lines_are_listed_as_unread_orders_stay():
    om = read(mail("Hi,\nstart EPRG\nbuild DM DEN-KCY plain\n\nThanks\nAnn\n+1 555 0100\n"))
    assert om.lines == ["Hi,", "start EPRG", "build DM DEN-KCY plain", "Thanks", "Ann",
                        "+1 555 0100"]
    assert om.unread == ["Hi,", "Thanks", "Ann", "+1 555 0100"]
    assert len(om.kinds) == len(om.lines)


# ---------------------------------------------------------------------------
# Charsets
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("charset, text", [
    ("iso-2022-jp", "お世話になっております。\nstart EPRG\nｶﾀｶﾅ"),
    ("iso-2022-kr", "안녕하세요\nstart EPRG"),
    ("utf-7", "Grüße € ok\nstart EPRG"),
    ("hz-gb-2312", "你好\nstart EPRG"),
    ("iso-2022-jp-2", "Ελλάδα 日本\nstart EPRG"),
    ("koi8-r", "Привет\nstart EPRG"),
    ("koi8-u", "Привіт, ґанок\nstart EPRG"),
    ("gb18030", "你好\nstart EPRG"),
    ("big5", "你好\nstart EPRG"),
    ("shift_jis", "こんにちは\nstart EPRG"),
    ("euc-jp", "こんにちは\nstart EPRG"),
    ("euc-kr", "안녕하세요\nstart EPRG"),
    ("windows-1251", "Привет\nstart EPRG"),
    ("iso-8859-2", "Dzień dobry\nstart EPRG"),
    ("iso-8859-7", "Γεια\nstart EPRG"),
    ("windows-1256", "مرحبا\nstart EPRG"),
    ("iso-8859-9", "Merhaba, şükran\nstart EPRG"),
])
@pytest.mark.parametrize("cte", ["8bit", "base64", "quoted-printable"])
def test_charsets_as_declared(charset, text, cte):
    codec = {"iso-2022-jp": "iso2022_jp_ext", "hz-gb-2312": "hz"}.get(charset, charset)
    data = text.replace("\n", "\r\n").encode(codec)
    if cte == "base64":
        import base64
        body = base64.encodebytes(data)
    elif cte == "quoted-printable":
        import quopri
        body = quopri.encodestring(data)
    else:
        body = data
    head = mail("", charset=charset, cte=cte)
    om = read(head + body)
    want = [unicodedata.normalize("NFKC", line) for line in text.split("\n")]
    assert om.lines == want, (charset, cte)
    assert om.error is None


def test_undeclared_iso2022_is_still_decoded():
    assert decode_text("日本語".encode("iso2022_jp"), None) == "日本語"
    assert decode_text(b"plain ascii", "utf-7") == "plain ascii"


def test_escape_sequences_never_reach_the_lines():
    body = b"\x1b$Bbroken \x1b[31mred\x1b[0m\r\nstart EPRG\x07\r\n"
    for charset in ("iso-2022-jp", "us-ascii", "utf-8", "bogus"):
        om = read(mail("", charset=charset) + body)
        assert all("\x1b" not in line and "\x07" not in line for line in om.lines)
        assert "start EPRG" in om.lines


def test_iso2022jp_subject_and_name_headers():
    msg = EmailMessage()
    msg["From"] = "山田 太郎 <taro@example.jp>"
    msg["To"] = OWN
    msg["Subject"] = "Re: [pbem:ridge:k3x9p2qa] ようこそ"
    msg.set_content("start EPRG\n", charset="iso-2022-jp")
    raw = msg.as_bytes()
    om = read(raw)
    assert om.sender_display == "山田 太郎" and om.game_id == "ridge"
    assert om.lines == ["start EPRG"]


# ---------------------------------------------------------------------------
# Strict From
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("value, problem", [
    ("<ann@example.org>@strangers.example", "malformed From"),
    ("bob@example.org <zed@strangers.example>", "malformed From"),
    ('"e" <a@x.org>, o@evil.org', "several addresses in From"),
    ("ann@example.org, bob@example.org", "several addresses in From"),
    ("Ann\x01 <ann@example.org>", "control characters in From"),
    ("Ann <ann@example.org>\x00", "control characters in From"),
    ("<>", "malformed From"),
    ("undisclosed-recipients:;", "no address in From"),
    ("Ann <ann@example.org", "malformed From"),
])
def test_bad_from_gives_no_sender(value, problem):
    om = read(mail("start EPRG", sender=value))
    assert om.sender == "" and om.sender_display == ""
    assert om.sender_problem.startswith(problem), om.sender_problem
    assert om.lines == ["start EPRG"]  # still read: the moderation decides


def test_two_from_headers_give_no_sender():
    om = read(mail("start EPRG", extra="From: Bob <bob@example.org>\r\n"))
    assert om.sender == "" and om.sender_problem == "several From headers"


@pytest.mark.parametrize("value, sender, display", [
    ("Ann Example <ann@example.org>", "ann@example.org", "Ann Example"),
    ('"Example, Ann" <Ann@Example.ORG>', "ann@example.org", "Example, Ann"),
    ("=?utf-8?q?J=C3=B6rg_H=C3=A4u=C3=9Fler?= <joerg@example.de>", "joerg@example.de",
     "Jörg Häußler"),
    ("=?iso-2022-jp?b?GyRCOzNFRBsoQg==?= <taro@example.jp>", "taro@example.jp", "山田"),
    ("ann@example.org (Ann Example)", "ann@example.org", "Ann Example"),
    ("ann@example.org", "ann@example.org", ""),
    ("Ann <ann@bücher.example>", "ann@bücher.example", "Ann"),
    ("Ann <ann@xn--bcher-kva.example>", "ann@xn--bcher-kva.example", "Ann"),
    ("Ann E. Example <ann@example.org>", "ann@example.org", "Ann E. Example"),
    ("Ann\r\n <ann@example.org>", "ann@example.org", "Ann"),
])
def test_good_from_still_works(value, sender, display):
    om = read(mail("start EPRG", sender=value))
    assert (om.sender, om.sender_display, om.sender_problem) == (sender, display, None)


# ---------------------------------------------------------------------------
# Deep MIME
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [40, 3000])
def test_deeply_nested_mime_is_not_readable_but_has_a_sender(levels):
    head = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (i, i)
                    for i in range(levels))
    raw = (b"From: Ann <ann@example.org>\r\nSubject: Re: [pbem:ridge:k3x9p2qa] x\r\n"
           b"MIME-Version: 1.0\r\n" + head + b"Content-Type: text/plain\r\n\r\nstart EPRG\r\n")
    om = read_mail(raw, max_size=10**8)
    assert om.error == "MIME nested too deeply"
    assert (om.sender, om.game_id, om.lines) == ("ann@example.org", "ridge", [])
    assert om.delivery_key.startswith("sha256:")


def test_moderately_nested_mime_is_read():
    head = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (i, i)
                    for i in range(10))
    raw = (b"From: Ann <ann@example.org>\r\nSubject: x\r\nMIME-Version: 1.0\r\n" + head
           + b"Content-Type: text/plain\r\n\r\nstart EPRG\r\n")
    assert read_mail(raw).lines == ["start EPRG"]


# ---------------------------------------------------------------------------
# The delivery key
# ---------------------------------------------------------------------------

BASE = (b"From: ann@example.org\r\nTo: moderator@pbem.localhost\r\n"
        b"Subject: Re: [pbem:ridge:k3x9p2qa] x\r\nDate: Mon, 30 Nov 2026 23:07:00 +0100\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nstart EPRG\r\n")


@pytest.mark.parametrize("transport", [
    b"Received: from a by b; Mon, 30 Nov 2026 23:07:01 +0100\r\n",
    b"Return-Path: <ann@example.org>\r\nDelivered-To: m@x\r\nX-Original-To: m@x\r\n",
    b"X-Received: by 2002:a05 with SMTP id x;\r\n Mon, 30 Nov 2026\r\n",
    b"ARC-Seal: i=1; a=rsa-sha256; cv=none; d=google.com; s=arc; b=abc\r\n"
    b"ARC-Message-Signature: i=1; b=x\r\nARC-Authentication-Results: i=1; mx.google.com\r\n",
    b"DKIM-Signature: v=1; a=rsa-sha256; d=relay.example; b=xyz\r\n"
    b"Authentication-Results: mx; spf=pass\r\nReceived-SPF: pass\r\n",
    b"X-Spam-Status: No, score=-1.0\r\nX-Spam-Score: -1.0\r\nX-Virus-Scanned: ClamAV\r\n",
    b"X-MS-Exchange-Organization-SCL: 1\r\nX-Forefront-Antispam-Report: x\r\n"
    b"Status: RO\r\nX-UID: 12\r\nContent-Length: 12\r\nLines: 1\r\n",
])
def test_delivery_key_ignores_transport_headers(transport):
    assert delivery_key(transport + BASE) == delivery_key(BASE)
    assert delivery_key(BASE.replace(b"\r\n", b"\n")) == delivery_key(BASE)
    assert delivery_key(BASE + b"\r\n\r\n") == delivery_key(BASE)


@pytest.mark.parametrize("change", [
    (b"start EPRG", b"start UP"),
    (b"23:07:00", b"23:08:00"),
    (b"ann@example.org", b"bob@example.org"),
    (b"] x", b"] y"),
    (b"us-ascii", b"utf-8"),
    (b"Date:", b"Message-ID: <a@b>\r\nDate:"),
])
def test_delivery_key_tells_different_mails_apart(change):
    assert delivery_key(BASE.replace(*change)) != delivery_key(BASE)


def test_delivery_key_on_odd_input():
    for raw in (b"", b"\r\n\r\n", b"no header at all", b"\xff\xfe" * 100, b":\r\n:"):
        assert delivery_key(raw).startswith("sha256:")
    assert read_mail(BASE).delivery_key == delivery_key(BASE)


def test_raw_iso2022jp_headers_are_decoded():
    subject = "Re: [pbem:ridge:k3x9p2qa] ようこそ".encode("iso2022_jp")
    name = "山田".encode("iso2022_jp")
    raw = (b"From: " + name + b" <taro@example.jp>\r\nTo: m@x\r\nSubject: " + subject
           + b"\r\nContent-Type: text/plain; charset=iso-2022-jp\r\n\r\nstart EPRG\r\n")
    om = read(raw)
    assert om.subject == "Re: [pbem:ridge:k3x9p2qa] ようこそ" and om.game_id == "ridge"
    assert (om.sender, om.sender_display) == ("taro@example.jp", "山田")
