"""Reading players' order mails: headers, body text, quote stripping, machine mail.

Players answer a status mail (its Message-ID carries the game and their token,
``mail/threads.py``; mails of games started before it carry the Subject tag
``[pbem:GAME:SECRET]``, still read here) from any mail client, in any language, and write their orders one per line *on top of* the quoted
status mail.  :func:`read_mail` turns the raw bytes of such a mail into an
:class:`OrderMail`: who sent it, which game it is for, the order lines with all quoted
text, signatures and client boilerplate removed, and whether it is machine mail
(auto-reply, bounce, mailing list ...) that must never be answered.

It never raises on bad input: a mail that cannot be read at all comes back with
``error`` set.  Authentication (is this really the player?) is not done here.

Real mail (issue 12): localized reply header blocks, attributions, separators,
sign-offs and greetings come from a table per language (``reply_headers.json``,
:data:`REPLY_TABLE`); each kept line gets a kind (:func:`classify_lines`) so that
signatures without ``-- `` can be listed as not read; 7-bit stateful charsets
(ISO-2022-JP/-KR, UTF-7, HZ) are decoded as declared; the From header is parsed
strictly; :func:`delivery_key` recognises one mail delivered twice; MIME nested too
deeply is refused as unreadable; a mail whose body was not fetched (too large)
comes as headers plus its size.

Everything is parsed with the standard library's :mod:`email` package and
``email.policy.default``.
"""
from __future__ import annotations

import codecs
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from email import errors, policy
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import parseaddr
from html.parser import HTMLParser
from pathlib import Path

from ..store import GAME_ID_PATTERN
from .bounces import BOUNCE_SUBJECT_RE, Bounce, bounce_notice, is_system_sender
from .threads import message_ids
from .transport.base import HeadersOnly

__all__ = [
    "DEFAULT_MAX_SIZE",
    "GAME_ID_PATTERN",
    "SECRET_PATTERN",
    "OrderMail",
    "KEY_HEADERS",
    "REPLY_TABLE",
    "canonical_address",
    "classify_lines",
    "delivery_key",
    "decode_text",
    "html_to_text",
    "parse_subject_tag",
    "player_address",
    "read_mail",
    "strip_quoted",
    "subject_tag",
    "subject_text",
    "unflow",
]

DEFAULT_MAX_SIZE = 256 * 1024
"""Mails larger than this many bytes are not parsed beyond their headers."""


SECRET_PATTERN = r"[a-z0-9]{8}"
"""A game's secret: eight lower-case letters or digits."""

_GAME_RE = re.compile(rf"{GAME_ID_PATTERN}\Z")
_SECRET_RE = re.compile(rf"{SECRET_PATTERN}\Z")
_TAG_RE = re.compile(
    rf"\[\s*(?i:pbem)\s*:\s*({GAME_ID_PATTERN})\s*:\s*({SECRET_PATTERN})\s*\]"
)


# ---------------------------------------------------------------------------
# Addresses and the Subject tag
# ---------------------------------------------------------------------------


def _lenient_parseaddr(text: str) -> tuple[str, str]:
    """``email.utils.parseaddr`` in its lenient form on every Python: releases with
    the CVE-2023-27043 fix (3.11.10+, 3.12.6+ and distributions' patched builds
    such as Debian's 3.11.2-6+deb12u6) return ``('', '')`` for several addresses
    unless asked for ``strict=False``; older ones have no ``strict`` and are lenient."""
    try:
        return parseaddr(text, strict=False)  # type: ignore[call-arg]
    except TypeError:
        return parseaddr(text)


def canonical_address(text: str | None) -> str:
    """The bare address of a mailbox, lower-cased: ``'Anna <Anna@X.CZ>'`` → ``'anna@x.cz'``.

    ``text`` is a header value such as ``Name <addr>``, ``addr (Name)`` or ``addr``;
    of several addresses the first is taken.  A bare word without ``@`` is kept only
    when it is the whole value (``MAILER-DAEMON`` → ``'mailer-daemon'``).  Returns
    ``''`` when there is no address (``''``, ``'<>'``, ``None``, free text).
    """
    if not text:
        return ""
    text = re.sub(r"\s*\r?\n\s*", " ", str(text)).strip()
    try:
        _name, addr = _lenient_parseaddr(text)
    except Exception:  # parseaddr is robust, but never let a header break us
        return ""
    addr = addr.strip().strip("<>").strip()
    if not addr:
        return ""
    if "@" not in addr and addr != text.strip("<> "):
        return ""
    return addr.lower()


def subject_tag(game_id: str, secret: str) -> str:
    """The Subject tag of the moderator's mails before one thread per game and
    player (issue 11): ``'[pbem:ridge:k3x9p2qa]'``.  No mail carries it now;
    replies to older mails still do (:func:`parse_subject_tag` reads it).

    Raises ``ValueError`` when ``game_id`` or ``secret`` do not match
    :data:`GAME_ID_PATTERN` / :data:`SECRET_PATTERN`.
    """
    if not _GAME_RE.match(game_id or ""):
        raise ValueError(f"bad game id {game_id!r}")
    if not _SECRET_RE.match(secret or ""):
        raise ValueError(f"bad secret {secret!r}")
    return f"[pbem:{game_id}:{secret}]"


def _decode_words(text: str) -> str:
    """Decode RFC 2047 encoded words left in ``text`` (a raw header value)."""
    if "=?" not in text:
        return text
    try:
        return str(make_header(decode_header(text)))
    except Exception:
        return text


def _unfold(text: str) -> str:
    """A header value on one line: CRLF + white space becomes one space; trimmed."""
    return re.sub(r"[ \t]*\r?\n[ \t]*", " ", text).strip()


def parse_subject_tag(subject: str | None) -> tuple[str | None, str | None]:
    """``(game_id, secret)`` from the first ``[pbem:GAME:SECRET]`` tag in ``subject``.

    Whatever stands around the tag (``Re:``, ``AW:``, ``Sv:``, ``Fwd:``, ``[list]``
    prefixes, text after it) is ignored; ``pbem`` may be in any case; the value may
    still be folded or hold RFC 2047 encoded words, and white space around the
    colons (left by re-wrapping) is allowed.  ``(None, None)`` when there is no tag.
    """
    if not subject:
        return None, None
    text = _unfold(_decode_words(str(subject)))
    match = _TAG_RE.search(text)
    if not match:
        return None, None
    return match.group(1), match.group(2)


# ---------------------------------------------------------------------------
# Quotes, signatures and client boilerplate
# ---------------------------------------------------------------------------

# Localized reply headers, attributions, separators, sign-offs and greetings come from
# a table per language (reply_headers.json next to this module), not from hand-written
# regular expressions: adding a language is adding an entry there.
_TABLE_PATH = Path(__file__).with_name("reply_headers.json")


def _load_table() -> dict[str, dict[str, list[str]]]:
    data = json.loads(_TABLE_PATH.read_text(encoding="utf-8"))
    return {lang: entry for lang, entry in data.items() if not lang.startswith("_")}


REPLY_TABLE: dict[str, dict[str, list[str]]] = _load_table()
"""Per language code: ``from``, ``sent``, ``date``, ``to``, ``cc``, ``subject`` (the
labels of a reply header block), ``wrote`` and ``start`` (attribution words),
``original`` and ``forwarded`` (separator phrases), ``signoff`` and ``greeting``
(whole short lines).  Loaded from ``reply_headers.json``."""

_UNSPACED = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI", "DEVANAGARI", "HEBREW",
             "ARABIC")


def _word_re(word: str) -> str:
    """A table word as a regular expression: white space matches any run of it; a
    word boundary in front unless the script does not separate words by spaces."""
    body = r"\s+".join(re.escape(part) for part in word.split())
    try:
        name = unicodedata.name(word[0])
    except (ValueError, IndexError):
        name = ""
    return body if name.startswith(_UNSPACED) else rf"(?<!\w){body}"


def _alternation(words) -> str:
    words = sorted({w for w in words if w}, key=len, reverse=True)
    return "|".join(_word_re(w) for w in words)


def _labels(*kinds: str) -> list[str]:
    return [w for entry in REPLY_TABLE.values() for k in kinds for w in entry.get(k, [])]


def _langs_of(kind: str, word: str) -> list[str]:
    return [lang for lang, entry in REPLY_TABLE.items() if word in entry.get(kind, [])]


_LABEL_END = r"\*?\s*[:\uff1a]"
_HDR_FROM_RE = re.compile(rf"\*?(?:{_alternation(_labels('from'))}){_LABEL_END}\s*\S",
                          re.IGNORECASE)
_HDR_OTHER_RE = re.compile(
    rf"\*?(?:{_alternation(_labels('sent', 'date', 'to', 'cc', 'subject'))}){_LABEL_END}",
    re.IGNORECASE,
)
# "On <date>, <who> wrote:" in any language of the table: a line that holds a wrote
# word and ends in a colon (ASCII or full-width) within 100 characters after it.
_WROTE_RE = re.compile(rf".*(?:{_alternation(_labels('wrote'))}).{{0,100}}[:\uff1a]",
                       re.IGNORECASE)
_ATTRIBUTION_START = re.compile(
    rf"(?:{_alternation(_labels('start'))})\s|.*\b(?:odes[íi]latel|schrieb)\b",
    re.IGNORECASE,
)
# '2016-03-03 17:21 GMT+01:00 Some One <a@b.org>:', '30 нояб. 2026 г., в 23:54, X <a@b>:'
_DATE_ADDR_RE = re.compile(r".*\d{4}.{1,100}<\s*[^@<>\s]+@[^@<>\s]+\s*>\s*[:\uff1a]?")
# Gmail's older form: '2016-03-03 17:21 GMT+01:00 Some One' (address optional)
_GMAIL_ISO_RE = re.compile(r"(?:19|20)\d\d-\d\d-\d\d \d\d?:\d\d GMT[+-]\d\d:\d\d [^:]{1,150}[:\uff1a]?")
_CLOSING_RE = re.compile(r">\s*[:\uff1a]")  # '>:' ending an address wrapped off its line
_RULE_RE = re.compile(r"[-_=]{10,}")  # a rule line right above a reply header block
_ATTRIBUTION_MAX = 400  # characters of a (joined) attribution line

# "-----Original Message-----", "-------- Ursprüngliche Nachricht --------",
# "---------- Forwarded message ---------", QQ Mail's "------ 原始邮件 ------" ...
_SEPARATOR_RE = re.compile(r"-{3,}\s*[^-\s].*?\s*-{3,}")
_PHRASE_SEPARATOR_RE = re.compile(
    rf"[-_=*~\s]*(?:{_alternation(_labels('original', 'forwarded'))})[-_=*~\s]*[:\uff1a]?",
    re.IGNORECASE,
)
# a Sent/Date line written above the From line (GMX, web.de: "Gesendet: ... / Von: ...")
_HDR_SENT_RE = re.compile(rf"\*?(?:{_alternation(_labels('sent', 'date'))}){_LABEL_END}\s*\S", re.IGNORECASE)
# A webmail's line above its header block: "Message du 03/12/12 14:58" (Orange),
# "Nachricht vom ...", "Messaggio di: ..." (the table's intro words)
_INTRO_RE = re.compile(rf"\*?(?:{_alternation(_labels('intro'))})(?:{_LABEL_END}|\s+\d)", re.IGNORECASE)
# any reply-header line: a label of the table before its colon, an intro line, a separator
_LABEL_LINE_RE = re.compile(
    rf"\*?(?:{_alternation(_labels('from', 'sent', 'date', 'to', 'cc', 'subject', 'intro'))}){_LABEL_END}",
    re.IGNORECASE,
)
_UNDERSCORES_RE = re.compile(r"_{10,}")  # Outlook on the web / mobile, before From:
_GROUPWISE_RE = re.compile(r">>>\s.*\s>>>")  # GroupWise: '>>> "Name" <addr> date >>>'

# Phone and app footers: everything from such a line on is dropped.
_FOOTER_RE = re.compile(
    r"(?:Sent from my\b|Sent from (?:Mail|Outlook|Yahoo|AOL|Proton)\b|Sent via\b|"
    r"Get Outlook for\b|Obtener Outlook para\b|Obter o Outlook para\b|"
    r"Outlook f[üu]r \S+ beziehen|T[ée]l[ée]charger Outlook pour\b|Scarica Outlook per\b|"
    r"Z[íi]skat Outlook pro\b|Enviado desde mi\b|Enviado (?:do|de) meu\b|Enviado desde\b|"
    r"Von meinem\b.*\bgesendet|Gesendet von meinem\b|Gesendet mit\b|"
    r"Envoy[ée] de mon\b|Envoy[ée] depuis\b|Odesl[áa]no z\b|"
    r"Verstuurd (?:vanaf|met) mijn\b|Verzonden (?:vanaf|met) mijn\b|"
    r"Inviato da\b|Sendt fra min\b|Skickat från min\b|Lähetetty \S+ ?(?:iPhone|iPad|Android)|"
    r"Wysłane z (?:mojego|iPhone|iPada|telefonu)|Отправлено с (?:iPhone|iPad|моего)|"
    r"Enviado do meu\b|iPhone'umdan gönderildi|iPhoneから送信|发自我的|發自我的|从我的|從我的|来自我的)",
    re.IGNORECASE,
)
_FOOTER_MAX = 100


def is_reply_header(line: str) -> bool:
    """Whether ``line`` (one line of a body, ``>`` quoting and ``*`` emphasis
    allowed) is a line of a reply header block in any language of
    :data:`REPLY_TABLE`: a header label before its colon (``From:``, ``De :``,
    ``Betreff:``, ``Od:``, ``件名：``), a webmail's intro line (``Message du
    03/12/12 14:58``, ``Message du : ...``, ``Messaggio di: ...``) or a
    separator phrase (``-----Original Message-----``, ``Begin forwarded
    message:``).  Such a line is never a command (``moderation.interpret``,
    ``gm.looks_like_gm``).  Never raises."""
    bare = _bare(str(line)).lstrip("> ").strip()
    if not bare or len(bare) > _ATTRIBUTION_MAX:
        return False
    return bool(_LABEL_LINE_RE.match(bare) or _INTRO_RE.match(bare)
                or _SEPARATOR_RE.fullmatch(bare) or _PHRASE_SEPARATOR_RE.fullmatch(bare))


def _header_block_lang(line: str) -> str:
    """The language(s) whose From label opens ``line`` (for OrderMail.cut)."""
    label = re.split(r"\s*[:\uff1a]", line.strip().strip("*"), maxsplit=1)[0].strip("* ")
    langs = [lang for lang, entry in REPLY_TABLE.items()
             if any(label.lower() == w.lower() for w in entry.get("from", []))
             or any(label.lower().startswith(w.lower()) for w in entry.get("intro", []))]
    return "/".join(langs[:3]) or "?"


def _is_quote(line: str) -> bool:
    return line.lstrip().startswith(">")


def _next_text(lines: list[str]) -> list[int]:
    """For each index, the index of the first non-blank line at or after it
    (``len(lines)`` if none): lets the look-aheads below run in constant time."""
    nxt = [len(lines)] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        nxt[i] = i if lines[i].strip() else nxt[i + 1]
    return nxt


def _is_attribution(joined: str) -> bool:
    if not _WROTE_RE.fullmatch(joined):
        return False
    # a date, an address or an opening word: not a player's "Bob wrote:" remark
    return bool(re.search(r"\d|@", joined) or _ATTRIBUTION_START.match(joined))


def _attribution_length(lines: list[str], i: int, nxt: list[int]) -> int:
    """How many lines (1-3) starting at ``i`` form an attribution line; 0 if none."""
    first = lines[i].strip()
    if not first or _is_quote(first) or len(first) > _ATTRIBUTION_MAX:
        return 0
    joined = first
    for n in range(1, 4):
        if n > 1:
            if i + n - 1 >= len(lines):
                break
            more = lines[i + n - 1].strip()
            if not more or (_is_quote(more) and not _CLOSING_RE.fullmatch(more)):
                break
            joined = f"{joined} {more}"
        if len(joined) > _ATTRIBUTION_MAX:
            break
        if _is_attribution(joined) or (
            len(joined) <= 200 and (_DATE_ADDR_RE.fullmatch(joined)
                                    or _GMAIL_ISO_RE.fullmatch(joined))
        ):
            return n
        if n == 1 and not (_ATTRIBUTION_START.match(first) or first.endswith("<")):
            break  # only lines that open like an attribution (or end inside an address) may be wrapped
    # Any other line ending in a colon directly above a '>' quote is an attribution
    # too (other languages, other clients: "2026年11月30日(月) 23:54 X <x@y>:").
    if first.endswith((":", "\uff1a")) or _INTRO_RE.match(first):  # or "Message du 03/12/12 14:58"
        j = nxt[i + 1]
        if j < len(lines) and _is_quote(lines[j]):
            return 1
    return 0


def _is_header_block(lines: list[str], i: int, nxt: list[int]) -> bool:
    """True when line ``i`` opens an Outlook-style ``From: / Sent: / To:`` block
    (or a webmail's intro line opens it: ``Message du 03/12/12 14:58``): at
    least two more header lines among the next six non-blank ones."""
    if not (_HDR_FROM_RE.match(_bare(lines[i])) or _INTRO_RE.match(_bare(lines[i]))):
        return False
    seen = 0
    j = nxt[i + 1]
    for _ in range(6):
        if j >= len(lines):
            break
        if _HDR_OTHER_RE.match(_bare(lines[j])):
            seen += 1
            if seen >= 2:
                return True
        j = nxt[j + 1]
    return False


_BIDI_RE = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _bare(line: str) -> str:
    return _BIDI_RE.sub("", line).strip()


def strip_quoted(text: str) -> str:
    """The text a person wrote in a reply, without what they quoted.

    ``text`` is a plain-text mail body (any newline convention).  Returns the kept
    lines joined with ``\\n`` (lines themselves unchanged, leading and trailing blank
    lines removed).  Dropped are:

    * lines quoted with ``>``;
    * the frame of an OpenPGP cleartext signature (``_pgp_cleartext``: the
      ``BEGIN PGP SIGNED MESSAGE`` line, its ``Hash:`` header, the signature
      block); the signed text is read;
    * everything from a signature line ``-- `` (or ``--``) on, and from a phone/app
      footer such as "Sent from my iPhone", "Get Outlook for Android",
      "Enviado desde mi iPhone", "Von meinem iPhone gesendet";
    * attribution lines: a line (or two or three wrapped lines) holding a "wrote" word
      of any language in :data:`REPLY_TABLE` ("On ... wrote:", "Am ... schrieb ...:",
      "... написал(а):", "... kirjoitti:", "... 写道：" ...) and ending in a colon,
      with a date, an address or an opening word ("On", "Am", "Le" ...); a line with
      a year and an ``<address>`` at its end; any line ending in ``:`` directly
      above a ``>`` quote.  When the text after an attribution is *not* quoted with
      ``>`` (an unmarked quote) everything after it is dropped; when it is, only the
      ``>`` lines go, so orders written below or between quoted lines are kept;
    * everything from a separator such as ``-----Original Message-----`` (any text
      between dashes, or an ``original``/``forwarded`` phrase of the table such as
      "Исходное сообщение", "Begin forwarded message:"), a line of underscores,
      GroupWise's ``>>> "Name" <addr> date >>>``, or a reply header block on: a From
      label of any language in the table followed by at least two more labels
      (Sent/Date/To/Cc/Subject) among the next six non-blank lines
      (``From:/Sent:/To:``, ``От:/Отправлено:/Кому:``, ``Od:/Wysłano:/Do:``,
      ``Lähettäjä:/Lähetetty:/Vastaanottaja:``, ``差出人:/送信日時:/宛先:`` ...),
      or a webmail's intro line (``Message du 03/12/12 14:58``) in place of the
      From line, or a rule line or a Sent/Date line (GMX's ``Gesendet: ...``)
      right above it.

    Never raises for a ``str``.
    """
    return "\n".join(_strip(text)[0])


_PGP_BEGIN = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
_PGP_END = "-----END PGP SIGNATURE-----"
_ARMOR_HEADER_RE = re.compile(r"[A-Za-z][A-Za-z0-9-]*: ?\S.*")


def _pgp_cleartext(lines: list[str]) -> list[str]:
    """``lines`` with an OpenPGP cleartext signature (RFC 4880, section 7: Mutt,
    Thunderbird/Enigmail "inline PGP", gpg --clearsign) taken apart: when the
    first non-blank line is ``-----BEGIN PGP SIGNED MESSAGE-----``, that line and
    its armor headers (``Hash: SHA256``) up to the first blank line go, the signed
    lines are kept with their dash-escaping undone (``- --`` is ``--``), and the
    signature block (``-----BEGIN PGP SIGNATURE-----`` to ``-----END PGP
    SIGNATURE-----``) goes; lines after it are kept.  Any other ``lines`` are
    returned as they are.  Never raises."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first].strip() != _PGP_BEGIN:
        return lines
    i = first + 1
    while i < len(lines) and _ARMOR_HEADER_RE.fullmatch(lines[i].strip()):
        i += 1
    out = lines[:first]
    while i < len(lines) and lines[i].strip() != _PGP_SIGNATURE:
        line = lines[i]
        out.append(line[2:] if line.startswith("- ") else line)
        i += 1
    while i < len(lines) and lines[i].strip() != _PGP_END:
        i += 1
    return out + lines[i + 1:]


def _strip(text: str) -> tuple[list[str], str | None]:
    """``(kept lines, why reading stopped or None)`` for :func:`strip_quoted`."""
    lines = _pgp_cleartext(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    nxt = _next_text(lines)
    kept: list[str] = []
    cut: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        bare = _bare(line)
        if _GROUPWISE_RE.fullmatch(bare):
            cut = "quoted mail (GroupWise)"
            break
        if _is_quote(line):
            i += 1
            continue
        if line.rstrip() == "--":
            cut = "signature separator"
            break
        if bare and len(bare) <= _FOOTER_MAX and _FOOTER_RE.match(bare):
            cut = "app footer"
            break
        if bare and len(bare) <= 200 and (
            _SEPARATOR_RE.fullmatch(bare)
            or _UNDERSCORES_RE.fullmatch(bare)
            or _PHRASE_SEPARATOR_RE.fullmatch(bare)
        ):
            cut = "separator of a quoted mail"
            break
        if (_RULE_RE.fullmatch(bare) or _HDR_SENT_RE.match(bare)) and nxt[i + 1] < len(lines) \
                and _is_header_block(lines, nxt[i + 1], nxt):
            cut = f"reply header block ({_header_block_lang(_bare(lines[nxt[i + 1]]))})"
            break
        if _is_header_block(lines, i, nxt):
            cut = f"reply header block ({_header_block_lang(bare)})"
            break
        n = _attribution_length(lines, i, nxt)
        if n:
            j = nxt[i + n]
            if j >= len(lines) or not _is_quote(lines[j]):
                cut = "attribution of an unquoted mail"
                break  # unmarked quote: everything after the attribution goes
            i += n
            continue
        kept.append(line)
        i += 1
    while kept and not kept[-1].strip():
        kept.pop()
    while kept and not kept[0].strip():
        kept.pop(0)
    return kept, cut


# ---------------------------------------------------------------------------
# format=flowed and HTML
# ---------------------------------------------------------------------------


def unflow(text: str, delsp: bool = False) -> str:
    """Undo ``format=flowed`` (RFC 3676): join soft-broken lines, remove space-stuffing.

    A line ending in a space continues on the next line of the same quote depth; with
    ``delsp`` that trailing space is removed when joining.  The signature separator
    ``-- `` is never joined.  Quote markers are kept (``> `` prefix, normalised).
    """
    out: list[str] = []
    para: str | None = None
    para_depth = 0
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        depth = len(raw) - len(raw.lstrip(">"))
        line = raw[depth:]
        if line.startswith(" "):
            line = line[1:]  # space-stuffing
        flowed = line.endswith(" ") and line != "-- "
        if flowed and delsp:
            line = line[:-1]
        if para is not None and depth == para_depth:
            para += line
        else:
            if para is not None:
                out.append(_requote(para, para_depth))
            para, para_depth = line, depth
        if not flowed:
            out.append(_requote(para, para_depth))
            para = None
    if para is not None:
        out.append(_requote(para, para_depth))
    return "\n".join(out)


def _requote(line: str, depth: int) -> str:
    return (">" * depth + " " + line) if depth else line


_BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "body", "br", "dd", "div", "dl", "dt",
    "fieldset", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "ul",
}
_VOID_TAGS = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
    "param", "source", "track", "wbr",
}
_HIDDEN_TAGS = {"head", "style", "script", "title", "template", "xml"}
# Elements whose whole content is quoted text or a signature.
_SKIP_CLASSES = {
    "gmail_quote", "gmail_quote_container", "gmail_signature", "gmail_attr",
    "moz-cite-prefix", "moz-signature", "yahoo_quoted", "protonmail_quote",
    "zmail_extra", "x_gmail_quote",
}
_SKIP_IDS = {"signature", "x_signature", "ms-outlook-mobile-signature"}
# Elements from which on everything (including what follows them) is quoted text.
_STOP_IDS = {
    "divrplyfwdmsg", "x_divrplyfwdmsg", "appendonsend", "x_appendonsend",
    "mail-editor-reference-message-container", "stopspelling", "reply-intro",
    "isforwardcontent", "isreplycontent",
}


class _TextExtractor(HTMLParser):
    """Collects the visible text of an HTML mail body, skipping quotes (see html_to_text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0
        self.skip_tag: str | None = None
        self.skip_depth = 0
        self.pre = 0
        self.stopped = False
        self.at_line_start = True

    def _newline(self, hard: bool = False) -> None:
        """A line break; a soft one (block boundary) only when not at a line start."""
        if hard or not self.at_line_start:
            self.parts.append("\n")
            self.at_line_start = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.stopped:
            return
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth += 1
            return
        if tag in _HIDDEN_TAGS:
            self.hidden += 1
            return
        values = {k.lower(): (v or "") for k, v in attrs}
        ident = values.get("id", "").strip().lower()
        classes = set(values.get("class", "").lower().split())
        if ident in _STOP_IDS:
            self.stopped = True
            return
        if tag not in _VOID_TAGS and (
            tag == "blockquote" or classes & _SKIP_CLASSES or ident in _SKIP_IDS
        ):
            self.skip_tag, self.skip_depth = tag, 1
            return
        if tag == "pre":
            self.pre += 1
        if tag == "br":
            self._newline(hard=True)
        elif tag in _BLOCK_TAGS:
            self._newline()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.stopped or self.skip_tag is not None or self.hidden:
            return
        values = {k.lower(): (v or "") for k, v in attrs}
        if values.get("id", "").strip().lower() in _STOP_IDS:
            self.stopped = True
        elif tag == "br":
            self._newline(hard=True)
        elif tag in _BLOCK_TAGS:
            self._newline()

    def handle_endtag(self, tag: str) -> None:
        if self.stopped:
            return
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth -= 1
                if self.skip_depth == 0:
                    self.skip_tag = None
                    self._newline()
            return
        if tag in _HIDDEN_TAGS:
            self.hidden = max(0, self.hidden - 1)
            return
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in _BLOCK_TAGS and tag != "br":
            self._newline()

    def handle_data(self, data: str) -> None:
        if self.stopped or self.skip_tag is not None or self.hidden:
            return
        if self.pre:
            self.parts.append(data)
            self.at_line_start = data.endswith("\n")
            return
        data = re.sub(r"[ \t\r\n\f]+", " ", data)
        if self.at_line_start:
            data = data.lstrip(" ")
        if data:
            self.parts.append(data)
            self.at_line_start = False


def html_to_text(html: str) -> str:
    """The visible text of an HTML mail body, without quoted text and signatures.

    ``<br>`` is a line break, the boundary of a block element (``<div>``, ``<p>``,
    ``<li>`` ...) starts a new line unless one has just begun; other white space is collapsed
    (except in ``<pre>``), entities are decoded, ``<head>``/``<style>``/``<script>``
    are dropped.  Dropped with their content: ``<blockquote>``, Gmail's
    ``gmail_quote``/``gmail_signature``, Thunderbird's ``moz-cite-prefix``/
    ``moz-signature``, Yahoo's ``yahoo_quoted``; dropped together with everything
    after them: Outlook's ``divRplyFwdMsg``, ``appendonsend`` and
    ``mail-editor-reference-message-container``.  Returns lines joined by ``\\n``,
    each stripped at the right, runs of blank lines kept to one.  Never raises.
    """
    parser = _TextExtractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # HTMLParser is lenient; this is a last resort
        pass
    text = "".join(parser.parts)
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Charsets
# ---------------------------------------------------------------------------

# Declared charset → the superset that mail clients really mean by it.
_CHARSET_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc-cn": "gb18030",
    "x-gbk": "gb18030",
    "big5": "big5hkscs",
    "iso-8859-1": "cp1252",
    "us-ascii": "utf-8",
    "ascii": "utf-8",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "shift_jis": "cp932",
    "x-sjis": "cp932",
    "iso-8859-8-i": "iso-8859-8",
    "windows-874": "cp874",
    "tis-620": "cp874",
}
_MULTIBYTE_PREFIXES = (
    "utf", "gb", "big5", "cp950", "cp932", "cp949", "shift", "euc", "iso2022", "johab",
    "hz", "cp1361",
)


# 7-bit stateful charsets (escape sequences or shift characters switch the character
# set): ISO-2022-JP and its variants, ISO-2022-KR, ISO-2022-CN, UTF-7, HZ-GB-2312.
_STATEFUL_7BIT = {
    "iso2022_jp", "iso2022_jp_1", "iso2022_jp_2", "iso2022_jp_2004", "iso2022_jp_3",
    "iso2022_jp_ext", "iso2022_kr", "utf-7", "hz",
}
_CHARSET_SUPERSETS.update({
    "iso-2022-jp": "iso2022_jp_ext",  # half-width katakana, as clients send them
    "csiso2022jp": "iso2022_jp_ext",
    "hz-gb-2312": "hz",
    "x-unicode-2-0-utf-7": "utf-7",
    "unicode-1-1-utf-7": "utf-7",
    "iso-2022-cn": "iso2022_jp_2",  # Python has no ISO-2022-CN codec; -JP-2 reads GB 2312
})


def _codec(name: str | None) -> str | None:
    """Python's codec name for a declared charset, or None if unknown."""
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().strip("\"'")).name
    except (LookupError, ValueError):
        return None


def decode_text(data: bytes, declared: str | None) -> str:
    """Decode a body part's bytes as text; never fails.

    Tries the declared charset (or the superset clients mean by it: GB2312 → GB18030,
    Big5 → Big5-HKSCS, ISO-8859-1 → windows-1252 ...), then UTF-8, then windows-1252
    with replacement characters.  7-bit stateful charsets (ISO-2022-JP/-KR, UTF-7,
    HZ-GB-2312) are decoded as declared although their bytes are ASCII; undeclared
    ASCII holding ISO-2022 escape sequences is decoded as ISO-2022-JP-2 (or -KR).  When a single-byte charset is declared but the bytes
    are valid UTF-8 with non-ASCII characters, UTF-8 wins (a common mislabelling).
    """
    declared_name = (declared or "").strip().strip("\"'").lower()
    if data.isascii():
        stateful = [n for n in (_codec(_CHARSET_SUPERSETS.get(declared_name)),
                                _codec(declared_name)) if n in _STATEFUL_7BIT]
        if stateful or (not _codec(declared_name) and b"\x1b" in data):
            # 7-bit charsets: the bytes are ASCII, the text is not
            for name in stateful + ["iso2022_jp_ext", "iso2022_jp_2", "iso2022_kr"]:
                try:
                    return data.decode(name)
                except (UnicodeDecodeError, LookupError):
                    continue
        return data.decode("ascii")
    names: list[str] = []
    superset = _codec(_CHARSET_SUPERSETS.get(declared_name))
    codec = _codec(declared_name)
    for name in (superset, codec):
        if name and name not in names:
            names.append(name)
    single_byte = bool(names) and not any(
        n.replace("_", "").replace("-", "").startswith(_MULTIBYTE_PREFIXES) for n in names
    )
    if not names or single_byte:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    for name in [*names, "utf-8"]:
        try:
            return data.decode(name)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("cp1252", errors="replace")


# ---------------------------------------------------------------------------
# The mail
# ---------------------------------------------------------------------------


@dataclass
class OrderMail:
    """What :func:`read_mail` found in one mail.

    * ``message_id``: the Message-ID header with its angle brackets, e.g.
      ``'<CAF1x@mail.gmail.com>'``, or None.
    * ``sender``: the one From address, lower-cased, parsed strictly with
      :mod:`email.headerregistry` (``''`` if none, or when ``sender_problem`` says
      why the header was refused); ``sender_display`` its display name (``''`` if
      none).
    * ``subject``: decoded, unfolded Subject (``''`` if none).
    * ``game_id``, ``secret``: from the Subject tag ``[pbem:GAME:SECRET]``, else from
      ``game: GAME`` / ``secret: SECRET`` lines of the body (key in any case, ``:`` or
      ``=``; the first valid value counts; a body secret is lower-cased); a
      ``secret:`` line wins over the tag's secret, a ``game:`` line never overrides
      the tag's game.  None when not found.
    * ``lines``: the order lines: the body with quotes, signatures and boilerplate
      removed (:func:`strip_quoted`), each line freed of invisible characters
      (zero-width spaces, BOM, soft hyphen), NFKC-normalised (full-width letters and
      no-break spaces become ASCII) and stripped; blank lines and ``game:`` /
      ``secret:`` lines dropped.  ``[]`` when oversize or on error.  Filled for
      machine mail too: check ``machine`` before acting on them.
    * ``in_reply_to``: the first ``<id>`` of In-Reply-To, or None; ``references``:
      the ``<id>``s of References in order.  Both read as real mail writes them
      (:func:`~moderator.mail.threads.message_ids`: with or without angle
      brackets, folded, with comments, several in one header);
      ``replied_to``: every ``<id>`` of In-Reply-To; ``thread_refs`` (a
      property): those and References, what authentication and routing look in.
    * ``machine``: why the mail must never be answered (``'Auto-Submitted:
      auto-replied'``, ``'Precedence: bulk'``, ``'List-Id'``, ``'empty Return-Path'``,
      ``'sender MAILER-DAEMON'``, ``'sender no-reply'``, ``'delivery status
      notification'``, ``'disposition notification'``, ``'out-of-office subject'``,
      ``'our own address'``, ``'calendar reply'`` (a calendar's iTIP answer to the
      deadline event, RFC 5546 ``REPLY``...) ...), or None for a person's mail.
    * ``bounce``: for a delivery-status report, the canonical address that failed
      (Original-Recipient, else Final-Recipient, of the first failed recipient;
      else the first of X-Failed-Recipients).
    * ``bounce_notice``: for machine mail that is a bounce notice in any form
      (RFC 3464, or the plain notices of qmail, Exim, Postfix, Exchange, Notes,
      the big providers, in any language), the
      :class:`~moderator.mail.bounces.Bounce`: the Message-IDs of ours it quotes
      (what matches it to a player), the failed recipients its fields name, the
      server's reason; else None.
    * ``oversize``: the mail is larger than ``max_size``, or only its headers were
      fetched (:class:`~moderator.mail.transport.base.HeadersOnly`); ``size``: the
      whole mail's bytes (as the store reported them when only headers came).
    * ``error``: why the mail could not be read at all (no text part, no headers,
      undecodable body, ``'MIME nested too deeply'`` ...), else None.  Header fields
      (sender, subject, tag, ``delivery_key``) are still filled when possible, so an
      unreadable mail from a player can be answered "mail not readable".

    * ``body_blank``: the text of the body is empty or white space only (an
      order written in the Subject alone).

    Added for real mail (issue 12):

    * ``kinds``: one entry per line of ``lines`` (same length, same order), what
      the reader makes of that line without knowing the order grammar:
      ``'text'`` (anything else: orders, mistyped orders, remarks), ``'greeting'``
      ("Hallo,", "Hi Bob!", "お世話になっております。" among the first two lines),
      ``'signoff'`` ("Thanks", "Viele Grüße", "С уважением,", "Pozdrawiam" ... from
      :data:`REPLY_TABLE`, also "Cheers, Ann"), ``'signature'`` (after a sign-off or
      from a signature start on: the sender's name, job titles, phone numbers,
      addresses, web links) and ``'notice'`` (legal or security notices of mail
      gateways: "This e-mail is confidential ...", "CAUTION: external sender").
      Advisory: the moderation still parses every line; it may apply a complete
      legal turn and list the other lines as not read, naming a line's kind.
    * ``unread`` (a property): the lines of ``lines`` whose kind is not ``'text'`` (in order):
      what the reader is sure is no order.  The moderation lists these (and any
      ``'text'`` line its order parser did not use) as "not read".
    * ``cut``: why reading stopped before the end of the body, e.g. ``'reply header
      block (ru)'``, ``'attribution of an unquoted mail'``, ``'signature
      separator'``, ``'app footer'``, ``'separator of a quoted mail'``; None when the
      whole body was read (``>`` quotes alone do not count).
    * ``delivery_key``: :func:`delivery_key` of the mail: ``'sha256:<hex>'``, the
      same for copies delivered through different servers.  The duplicate record
      should use ``message_id or delivery_key``.
    * ``sender_problem``: why the From header gave no sender (``sender`` is then
      ``''`` and the mail is from nobody): ``'no From header'``, ``'several From
      headers'``, ``'control characters in From'``, ``'several addresses in
      From'``, ``'no address in From'``, ``'malformed From: <defect>'``; else None.
    * ``auto_hint``: set (to the phrase found) when a person's mail (``machine``
      None) reads like an out-of-office text without saying so in its headers
      ("I am travelling until ...", "bin bis ... nicht im Büro", "в отпуске") and
      has no In-Reply-To; not a reason to ignore it, a hint for the log and for
      rate-limiting answers to mails without orders.
    """

    message_id: str | None = None
    sender: str = ""
    sender_display: str = ""
    subject: str = ""
    game_id: str | None = None
    secret: str | None = None
    lines: list[str] = field(default_factory=list)
    in_reply_to: str | None = None
    references: list[str] = field(default_factory=list)
    machine: str | None = None
    bounce: str | None = None
    oversize: bool = False
    size: int = 0
    error: str | None = None
    # added for issue 12; not compared, so that equality keeps its old meaning
    kinds: list[str] = field(default_factory=list, compare=False)
    cut: str | None = field(default=None, compare=False)
    delivery_key: str = field(default="", compare=False)
    sender_problem: str | None = field(default=None, compare=False)
    auto_hint: str | None = field(default=None, compare=False)
    body_blank: bool = field(default=False, compare=False)
    replied_to: list[str] = field(default_factory=list, compare=False)
    bounce_notice: Bounce | None = field(default=None, compare=False)
    # added for press (issue 29): each line of ``lines`` as written, with ``""`` for
    # the blank lines between them (a message's paragraphs; ``_order_and_text_lines``),
    # and how many attachments (Content-Disposition: attachment) the mail had
    text_lines: list[str] = field(default_factory=list, compare=False)
    attachments: int = field(default=0, compare=False)

    @property
    def thread_refs(self) -> list[str | None]:
        """Every Message-ID of In-Reply-To (``replied_to``, else ``in_reply_to``),
        then those of References, in order: where a player's token is looked for."""
        return [*(self.replied_to or [self.in_reply_to]), *self.references]

    @property
    def unread(self) -> list[str]:
        """The lines that the reader is sure are no orders (kind not ``'text'``)."""
        return [line for line, kind in zip(self.lines, self.kinds) if kind != "text"]


_SURROGATES_RE = re.compile("[\udc80-\udcff]")


def _fix_8bit(text: str) -> str:
    """Raw 8-bit bytes in a header (SMTPUTF8 or sloppy clients) reach us as surrogate
    escapes; decode them as UTF-8, else windows-1252."""
    if not _SURROGATES_RE.search(text):
        return text
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return _SURROGATES_RE.sub("\ufffd", text)
    return decode_text(data, None)


def _fix_7bit(text: str) -> str:
    """Raw ISO-2022 text in a header (old Japanese clients write it unencoded): decode
    it; unchanged when it does not decode."""
    if "\x1b" not in text:
        return text
    for codec in ("iso2022_jp_ext", "iso2022_jp_2", "iso2022_kr"):
        try:
            return text.encode("ascii").decode(codec)
        except (UnicodeError, LookupError):
            continue
    return text


def _header(msg: Message, name: str) -> str | None:
    """A header's decoded, unfolded value, or None; falls back to the raw value when
    the structured parser of ``policy.default`` chokes on it."""
    raw = _raw_header(msg, name)
    if raw is None:
        return None
    if "\x1b" in raw:
        return _decode_words(_fix_7bit(_unfold(raw)))
    if not _SURROGATES_RE.search(raw):  # 8-bit bytes would come back as U+FFFD
        try:
            value = msg.get(name)
            if value is not None:
                return _unfold(str(value))
        except Exception:
            pass
    return _decode_words(_fix_8bit(_unfold(raw)))


def _raw_header(msg: Message, name: str) -> str | None:
    """A header's value as written (comments kept, 8-bit bytes still as surrogate
    escapes), or None."""
    try:
        for key, raw in msg.raw_items():
            if key.lower() == name.lower():
                return str(raw)
    except Exception:
        pass
    return None



_NOREPLY_RE = re.compile(r"(?:no|do[-_.]?not)[-_.]?reply(?:[-_.+].*)?", re.IGNORECASE)
_DAEMON_LOCALS = {"mailer-daemon": "MAILER-DAEMON", "postmaster": "postmaster"}
# Reply/forward prefixes and [list] tags (not our own tag) in front of a subject.
_PREFIX_RE = re.compile(
    r"(?:\s*(?:\[(?!\s*pbem\s*:)[^\]]*\]|"
    r"(?:re|aw|sv|vs|wg|fw|fwd|tr|rv|odp|antw|r|res|回复|答复|回覆)\s*[:：]))*\s*",
    re.IGNORECASE,
)


def subject_text(subject: str) -> str:
    """``subject`` without its reply and forward prefixes and list tags in front
    and without the ``[pbem:GAME:SECRET]`` tag (``'Re: AW: [list] build KCC'`` is
    ``'build KCC'``), stripped."""
    return _PREFIX_RE.sub("", _TAG_RE.sub(" ", subject or ""), count=1).strip()


_OOO_SUBJECT_RE = re.compile(
    r"(?:out of (?:the )?office|automatic reply|auto[- ]?reply|autoreply|auto[- ]?response|"
    r"vacation reply|away from (?:the )?office|abwesenheitsnotiz|automatische antwort|"
    r"abwesend|respuesta autom[áa]tica|fuera de (?:la )?oficina|r[ée]ponse automatique|"
    r"absence du bureau|absent du bureau|automatick[áa] odpov[ěe][dď]|mimo kancel[áa][řr]|"
    r"automatisch antwoord|afwezig|risposta automatica|fuori sede|resposta autom[áa]tica|"
    r"fora do escrit[óo]rio|自动回复|自動回覆|自動回复|自动答复|不在办公室)",
    re.IGNORECASE,
)
_BOUNCE_SUBJECT_RE = re.compile(
    r"(?:undeliverable|undelivered mail|delivery status notification|"
    r"mail delivery (?:failed|failure|subsystem)|returned mail|failure notice|"
    r"delivery failure|unzustellbar|nicht zustellbar|non remis|no se puede entregar|"
    r"nedoru[čc]iteln)",
    re.IGNORECASE,
)
_KEY_LINE_RE = re.compile(r"(game|secret)\s*[:=]\s*(\S*)\s*", re.IGNORECASE)
_INVISIBLE_RE = re.compile("[\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff]")


def _recipient(value: str | None) -> str:
    """The address of a DSN recipient field such as ``'rfc822; anna@example.cz'``."""
    if not value:
        return ""
    kind, _, addr = value.partition(";")
    if not addr:
        addr = kind
    elif kind.strip().lower() not in ("rfc822", "") and "@" not in addr:
        return ""
    return canonical_address(addr.strip())


def _own_parts(part: Message):
    """``part`` and its multipart descendants, not looking into attached messages
    (a player forwarding a bounce is not a bounce)."""
    yield part
    if part.get_content_maintype() == "multipart" and part.is_multipart():
        for sub in part.get_payload():
            if isinstance(sub, Message):
                yield from _own_parts(sub)


_ITIP_ANSWERS = ("REPLY", "COUNTER", "REFRESH", "DECLINECOUNTER")
"""The iTIP methods (RFC 5546) by which a calendar answers an event it was
sent: what a player's calendar mails back for the deadline event of a move
(docs/operations.md, "Deadlines in the calendar")."""


def _itip_answer(part: Message) -> bool:
    """Whether ``part`` is a ``text/calendar`` part of an iTIP answer
    (``_ITIP_ANSWERS``): its ``method`` parameter, else the ``METHOD`` line of
    its VCALENDAR (some clients leave the parameter out)."""
    if part.get_content_type() != "text/calendar":
        return False
    method = str(part.get_param("method") or "").strip().upper()
    if not method:
        try:
            body = part.get_payload(decode=True) or b""
        except Exception:  # noqa: BLE001 - a broken part is no answer
            return False
        found = re.search(rb"^METHOD:([A-Za-z-]+)\s*$", body[:4096], re.M)
        method = found.group(1).decode("ascii").upper() if found else ""
    return method in _ITIP_ANSWERS


def _dsn_bounce(msg: Message) -> str | None:
    """The first failed recipient of a multipart/report delivery-status mail."""
    for part in _own_parts(msg):
        if part.get_content_type() != "message/delivery-status":
            continue
        payload = part.get_payload()
        blocks = payload if isinstance(payload, list) else []
        for block in blocks:
            if not isinstance(block, Message):
                continue
            action = (_header(block, "Action") or "failed").strip().lower()
            if not action.startswith("failed"):
                continue
            addr = _recipient(_header(block, "Original-Recipient")) or _recipient(
                _header(block, "Final-Recipient")
            )
            if addr:
                return addr
    return None


def _machine_reason(msg: Message, sender: str, subject: str, own: str) -> str | None:
    """Why ``msg`` is machine mail (see OrderMail.machine), or None."""
    ctype = msg.get_content_type()
    report = (msg.get_param("report-type") or "") if ctype == "multipart/report" else ""
    report = str(report).lower()
    types = {p.get_content_type() for p in _own_parts(msg)}
    if report == "delivery-status" or "message/delivery-status" in types:
        return "delivery status notification"
    if report == "disposition-notification" or "message/disposition-notification" in types:
        return "disposition notification"
    if "text/calendar" in types and any(_itip_answer(p) for p in _own_parts(msg)):
        return "calendar reply"
    if own and sender == own:
        return "our own address"
    auto = _header(msg, "Auto-Submitted")
    if auto:
        value = auto.split(";")[0].strip().lower()
        if value and value != "no":
            return f"Auto-Submitted: {value}"
    for name in ("X-Autoreply", "X-Autorespond", "X-Autogenerated"):
        if _header(msg, name) is not None:
            return name
    precedence = (_header(msg, "Precedence") or "").strip().lower()
    if precedence in ("bulk", "junk", "list", "auto_reply", "auto-reply"):
        return f"Precedence: {precedence}"
    if _header(msg, "List-Id") is not None:
        return "List-Id"
    if _header(msg, "List-Unsubscribe") is not None:
        return "List-Unsubscribe"
    local = sender.partition("@")[0]
    if local in _DAEMON_LOCALS:
        return f"sender {_DAEMON_LOCALS[local]}"
    if _NOREPLY_RE.fullmatch(local):
        return "sender no-reply"
    return_path = _header(msg, "Return-Path")
    if return_path is not None and not canonical_address(return_path):
        return "empty Return-Path"
    head = _PREFIX_RE.sub("", subject, count=1)
    if (_BOUNCE_SUBJECT_RE.match(head) or BOUNCE_SUBJECT_RE.search(head)) and (
            _header(msg, "X-Failed-Recipients") or is_system_sender(sender, _header(msg, "From") or "")):
        return "delivery status notification"
    if _OOO_SUBJECT_RE.match(head):
        return "out-of-office subject"
    return None


def _body_text(msg: EmailMessage) -> tuple[str | None, str | None]:
    """``(text, error)``: the plain text of the mail's body, or why there is none."""
    plain = msg.get_body(preferencelist=("plain",))
    if plain is not None:
        text, error = _part_text(plain, html=False)
        if error or (text or "").strip():
            return text, error
    # no plain text, or an empty one next to an HTML body (some mobile clients)
    html = msg.get_body(preferencelist=("html",))
    if html is not None:
        return _part_text(html, html=True)
    if plain is not None:
        return "", None
    return None, "no text part"


def _part_text(part: Message, html: bool) -> tuple[str | None, str | None]:
    """``(text, error)`` of one text/plain or text/html body part."""
    data = part.get_payload(decode=True)
    if data is None:
        data = b""
    if isinstance(data, str):  # defensive: non-text payload
        data = data.encode("utf-8", "surrogateescape")
    if any(isinstance(d, errors.InvalidBase64LengthDefect) for d in part.defects):
        return None, "undecodable body: invalid base64"
    charset = part.get_content_charset()
    if html and not charset:
        meta = re.search(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", data[:4096], re.I)
        if meta:
            charset = meta.group(1).decode("ascii")
    text = decode_text(data, charset)
    if html:
        return html_to_text(text), None
    if str(part.get_param("format") or "").lower() == "flowed":
        delsp = str(part.get_param("delsp") or "").lower() == "yes"
        text = unflow(text, delsp=delsp)
    return text, None


_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _clean_line(line: str) -> str:
    """A body line freed of invisible and control characters, NFKC-normalised, stripped."""
    line = _INVISIBLE_RE.sub("", line).replace("\t", " ")
    line = _CONTROL_RE.sub("", unicodedata.normalize("NFKC", line))
    return line.strip()


def _order_lines(text: str) -> tuple[list[str], str | None, str | None, str | None]:
    """``(lines, game_id, secret, cut)`` from a body text (see OrderMail.lines)."""
    return _order_and_text_lines(text)[:4]


def _order_and_text_lines(text: str) -> tuple[list[str], str | None, str | None, str | None, list[str]]:
    """``_order_lines`` and ``OrderMail.text_lines``: one entry per line of
    ``lines``, that line as written (invisible and control characters removed,
    not NFKC-normalised, not stripped on the left), and a ``""`` where the kept
    text had blank lines between them (one per run)."""
    lines: list[str] = []
    text_lines: list[str] = []
    game = secret = None
    kept, cut = _strip(text)
    for raw in kept:
        line = _clean_line(raw)
        if not line:
            if text_lines and text_lines[-1]:
                text_lines.append("")
            continue
        key = _KEY_LINE_RE.fullmatch(line)
        if key:
            name, value = key.group(1).lower(), key.group(2)
            if name == "game" and game is None and _GAME_RE.match(value):
                game = value
            elif name == "secret" and secret is None and _SECRET_RE.match(value.lower()):
                secret = value.lower()
            continue
        lines.append(line)
        # as written (no NFKC: a Chinese text keeps its full-width commas), without
        # invisible and control characters, bidi overrides included
        text_lines.append(_CONTROL_RE.sub("", _INVISIBLE_RE.sub("", raw).replace("\t", "    ")).rstrip() or line)
    return lines, game, secret, cut, text_lines


# ---------------------------------------------------------------------------
# What each kept line is: greeting, sign-off, signature, gateway notice, or text
# ---------------------------------------------------------------------------

def _phrase_key(text: str) -> str:
    """A line reduced for table look-up: lower case, no surrounding punctuation."""
    return re.sub(r"[\s,.;:!?~\u3001\u3002\uff01\uff0c\uff1a)(-]+", " ", text.lower()).strip()


_SIGNOFFS = {_phrase_key(w) for w in _labels("signoff")} - {""}
_GREETINGS = {_phrase_key(w) for w in _labels("greeting")} - {""}
_PHONE_RE = re.compile(
    r"(?:[A-Za-zÀ-ÿ.]{1,12}\.?\s*[:.]?\s*)?\+?\(?\d[\d\s()./-]{5,}\d"
    r"(?:\s*(?:ext\.?|x)\s*\d+)?"
)
_CONTACT_RE = re.compile(
    r"(?:\S+@\S+\.\w+|https?://\S+|www\.\S+|\S+\.(?:com|org|net|de|fr|co\.uk)\b)",
    re.IGNORECASE,
)
_NOTICE_RE = re.compile(
    r".*(?:confidential|intended (?:solely )?for|intended recipient|disclaimer|privileged|"
    r"legally protected|if you (?:have )?received this|virus|malware|external (?:e-?mail|sender)|"
    r"originated from outside|do not click|caution:|\[external\]|this (?:e-?mail|message) "
    r"(?:and any|has been|was|is|may)|scanned by|unsubscribe|vertraulich|diese e-?mail|"
    r"ce (?:message|courriel)|este (?:mensaje|correo)|questo messaggio|deze e-?mail|"
    r"конфиденциальн|niniejsza wiadomość|tato zpráva|この(?:メール|電子メール)|本邮件|本郵件)",
    re.IGNORECASE,
)


_CLASSIFY_MAX = 300  # longer lines are not looked at closely


def _is_signoff(line: str) -> bool:
    key = _phrase_key(line)
    if key in _SIGNOFFS:
        return True
    # "Cheers, Ann" / "Viele Grüße, Jörg" / "Thanks! -Bob": a sign-off and a name
    head, sep, tail = line.partition(",")
    if not sep:
        words = key.split()
        return any(" ".join(words[:n]) in _SIGNOFFS for n in range(len(words) - 1, 0, -1)
                   if len(words) - n <= 2) and len(words) <= 5 and bool(words)
    return _phrase_key(head) in _SIGNOFFS and len(tail.split()) <= 3


def _is_greeting(line: str) -> bool:
    key = _phrase_key(line)
    if key in _GREETINGS:
        return True
    words = key.split()
    # "Hi Bob," / "Hallo zusammen," / "Dear moderator,": a greeting and up to 3 words
    return (len(words) <= 4 and line.rstrip().endswith((",", "!", "\uff01", "\u3001"))
            and any(" ".join(words[:n]) in _GREETINGS for n in range(1, len(words))))


def _is_name(line: str, names: set[str]) -> bool:
    key = _phrase_key(line)
    return bool(key) and (key in names or key.lstrip("-— ") in names)


def _looks_like_signature(line: str) -> bool:
    """Phone numbers, mail or web addresses, 'Name | Title | Company' lines."""
    if _CONTACT_RE.search(line):
        return True
    if _PHONE_RE.search(line) and sum(c.isdigit() for c in line) >= 7:
        # mostly a number: little text around it
        letters = sum(c.isalpha() for c in line)
        return letters <= 2 * sum(c.isdigit() for c in line) + 20
    return False


_AUTO_TEXT_RE = re.compile(
    r"(?:out of (?:the )?office|I am (?:currently )?(?:travelling|traveling|away|on (?:vacation|"
    r"holiday|leave))|away (?:from|until)|limited access to (?:my )?e-?mail|"
    r"will (?:read|reply|respond|answer)[^.]{0,60}(?:when|after|once) I(?:'m| am)? (?:return|back)|"
    r"(?:bin|ist) (?:bis|vom)[^.]{0,40}(?:abwesend|nicht im b[üu]ro|im urlaub)|abwesenheit|"
    r"en vacances|absente? (?:jusqu|du)|fuera de la oficina|de vacaciones|estoy ausente|"
    r"em f[ée]rias|estou ausente|sono in ferie|fuori ufficio|ben (?:met vakantie|afwezig)|"
    r"na urlopie|jestem poza biurem|mimo kancel[áa][řr]|на отпуске|в отпуске|вне офиса|"
    r"olen lomalla|är på semester|er på ferie|er på (?:ferie|fri)|izindeyim|休暇中|不在にして|"
    r"休假|不在办公室|휴가 중)",
    re.IGNORECASE,
)


def classify_lines(lines: list[str], sender: str = "", display: str = "") -> list[str]:
    """The kind of each order line (see :attr:`OrderMail.kinds`): ``'text'``,
    ``'greeting'``, ``'signoff'``, ``'signature'`` or ``'notice'``.

    ``sender`` and ``display`` (the From address and display name) let a line
    that is the sender's name (whole, first name, or mailbox name) open a
    signature.  A signature starts at a sign-off, at such a name line, or at a
    phone/address line after at least one other line; every later line is then
    signature (or notice).  Never raises.
    """
    names: set[str] = set()
    if display:
        full = _phrase_key(display)
        names.update({full, full.split()[0] if full.split() else ""})
        parts = [p.strip() for p in display.split(",")]
        if len(parts) == 2:  # "Example, Ann"
            names.add(_phrase_key(f"{parts[1]} {parts[0]}"))
    local = sender.partition("@")[0].lower()
    if local:
        names.update({local, _phrase_key(local.replace(".", " ").replace("_", " "))})
    names.discard("")
    kinds: list[str] = []
    in_signature = in_notice = False
    for i, line in enumerate(lines):
        if in_notice:
            kinds.append("notice")
            continue
        if len(line) > _CLASSIFY_MAX:  # long prose: text (and no regex runs on it)
            kinds.append("signature" if in_signature else "text")
            continue
        if _NOTICE_RE.match(line) and len(line) > 20:
            kinds.append("notice")
            # a notice at the bottom: the rest is its text
            in_notice = any(k == "text" for k in kinds[:-1])
            continue
        if in_signature:
            kinds.append("signature")
            continue
        if i < 2 and not any(k == "text" for k in kinds) and _is_greeting(line):
            kinds.append("greeting")
            continue
        if len(line) <= 60 and _is_signoff(line):
            kinds.append("signoff")
            in_signature = True
            continue
        if i > 0 and (_is_name(line, names) or _looks_like_signature(line)):
            kinds.append("signature")
            in_signature = True
            continue
        kinds.append("text")
    return kinds


def read_mail(
    raw: bytes,
    own_address: str | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
    size: int | None = None,
) -> OrderMail:
    """Read one raw mail (RFC 5322 bytes, as fetched over IMAP) into an OrderMail.

    ``own_address`` is the moderator's address: mail from it is machine mail.  Mails
    larger than ``max_size`` bytes get ``oversize=True`` and ``lines=[]``; only their
    headers are read.  ``size`` is the whole mail's size when ``raw`` holds only its
    headers (an inbox fetched no body, see ``InboundMail.headers_only``); a
    :class:`~moderator.mail.transport.base.HeadersOnly` ``raw`` carries it itself.
    Such a mail is always ``oversize``.  The body is the ``text/plain`` part, or the
    ``text/html`` part turned into text when it is the only body; attachments are
    ignored.  Any charset and transfer encoding is decoded (see :func:`decode_text`),
    ``format=flowed`` is joined.  Never raises: unreadable input gives ``error``
    (``'no headers'``, ``'no text part'``, ``'undecodable body: ...'``,
    ``'MIME nested too deeply'``, ``'unreadable: ...'``).
    """
    result = OrderMail()
    try:
        if size is None and isinstance(raw, HeadersOnly):
            size = raw.size
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        raw = bytes(raw)
    except Exception as exc:
        result.error = f"unreadable: {type(exc).__name__}"
        return result
    headers_only = size is not None and size > len(raw)
    result.size = size if headers_only else len(raw)
    result.oversize = headers_only or result.size > max_size
    try:
        result.delivery_key = delivery_key(raw)
    except Exception:  # pragma: no cover - delivery_key never raises for bytes
        result.delivery_key = "sha256:" + hashlib.sha256(raw).hexdigest()
    try:
        _read(raw, result, own_address)
    except RecursionError:
        result.lines, result.kinds = [], []
        result.error = "MIME nested too deeply"
    except Exception as exc:  # never let a strange mail break the moderator
        result.lines, result.kinds = [], []
        result.error = f"unreadable: {type(exc).__name__}: {exc}"
    return result


# ---------------------------------------------------------------------------
# Duplicate delivery
# ---------------------------------------------------------------------------

# The header fields an author's mail client writes; everything else (Received,
# Delivered-To, Return-Path, X-Original-To, ARC-*, DKIM-Signature, Authentication-Results,
# X-Spam-*, X-Virus-*, X-MS-Exchange-*, X-Google-*, Status, X-UID, Content-Length ...)
# may be added, changed or removed by the servers a mail passes through.
KEY_HEADERS = (
    "from", "sender", "reply-to", "to", "cc", "subject", "date", "message-id",
    "in-reply-to", "references", "mime-version", "content-type",
    "content-transfer-encoding", "content-disposition", "content-language",
    "x-mailer", "user-agent", "auto-submitted", "precedence",
)
"""The header fields (lower case) that :func:`delivery_key` hashes."""

_HEADER_END_RE = re.compile(rb"\r?\n\r?\n")


def delivery_key(raw: bytes) -> str:
    """A key that identifies one mail across deliveries: ``'sha256:<64 hex digits>'``.

    Hashes only what the author's client wrote: the header fields named in
    :data:`KEY_HEADERS` (in their order, names lower-cased, values unfolded with
    runs of white space made one space) and the body (line ends made ``\\n``,
    trailing white space of each line and trailing blank lines removed).  So the
    same mail delivered twice through different servers (other Received,
    Delivered-To, Return-Path, X-Original-To, DKIM/ARC signatures, spam verdicts,
    CRLF or LF line ends) gets the same key, while two mails that differ in any of
    those headers or in their text get different keys.  For a
    :class:`~moderator.mail.transport.base.HeadersOnly` mail (no body fetched) the
    key covers the headers only.  Never raises for ``bytes``.
    """
    data = bytes(raw)
    match = _HEADER_END_RE.search(data)
    if match:
        head, body = data[:match.start()], data[match.end():]
    elif data.startswith((b"\r\n", b"\n")):
        head, body = b"", data.lstrip(b"\r\n")
    else:
        head, body = data, b""
    fields: list[tuple[str, bytes]] = []
    for line in re.split(rb"\r?\n", head):
        if line[:1] in (b" ", b"\t") and fields:
            name, value = fields[-1]
            fields[-1] = (name, value + b" " + line.strip())
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            continue
        fields.append((name.strip().decode("latin-1").lower(), value.strip()))
    digest = hashlib.sha256()
    for name, value in fields:
        if name in KEY_HEADERS:
            digest.update(name.encode("latin-1") + b":" + re.sub(rb"\s+", b" ", value) + b"\n")
    digest.update(b"\n")
    lines = [line.rstrip() for line in re.split(rb"\r\n|\n|\r", body)]
    while lines and not lines[-1]:
        lines.pop()
    digest.update(b"\n".join(lines))
    return "sha256:" + digest.hexdigest()


# ---------------------------------------------------------------------------
# The sender, parsed strictly
# ---------------------------------------------------------------------------

_FROM_CONTROL_RE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _parse_from(msg: Message) -> tuple[str, str, str | None]:
    """``(address, display name, problem)`` of the From header, parsed strictly
    with :mod:`email.headerregistry` (``policy.default``).  Exactly one mailbox
    and no invalid-syntax defect, else ``('', '', why)``."""
    raws = []
    try:
        raws = [str(v) for k, v in msg.raw_items() if k.lower() == "from"]
    except Exception:
        pass
    if not raws:
        return "", "", "no From header"
    if len(raws) > 1:
        return "", "", "several From headers"
    value = _fix_7bit(_fix_8bit(re.sub(r"\r?\n(?=[ \t])", "", raws[0]))).strip()
    if _FROM_CONTROL_RE.search(value):
        return "", "", "control characters in From"
    try:
        header = policy.default.header_factory("From", value)
        addresses = header.addresses
    except Exception as exc:
        return "", "", f"malformed From: {type(exc).__name__}"
    for defect in header.defects:
        if isinstance(defect, (errors.InvalidHeaderDefect, errors.NonPrintableDefect,
                               errors.HeaderMissingRequiredValue)):
            text = str(defect)
            if "encoded" in text:
                continue  # encoded words in quotes, without spaces: client quirks
            if "local part with no domain" in text and len(addresses) == 1 and \
                    "@" not in value and "<" not in value:
                continue  # a bare 'MAILER-DAEMON': machine mail, kept for its name
            return "", "", f"malformed From: {text}"
    if len(addresses) > 1:
        return "", "", "several addresses in From"
    if not addresses or not addresses[0].username:
        return "", "", "no address in From"
    address = addresses[0]
    addr = (f"{address.username}@{address.domain}" if address.domain
            else address.username).lower()
    if _FROM_CONTROL_RE.search(addr + address.display_name) or " " in addr:
        return "", "", "control characters in From"
    display = address.display_name.strip()
    if not display:  # the old form 'addr (Name)': the name is a comment
        try:
            display = parseaddr(_decode_words(value))[0].strip()
        except Exception:
            display = ""
    return addr, display, None


def player_address(text: str) -> str:
    """The canonical address (lower-cased ``local@domain``) of a player's address as
    an operator types it at ``pbem new`` (``ann@example.org`` or ``Ann
    <ann@example.org>``), parsed strictly with :mod:`email.headerregistry`.

    Raises ValueError unless ``text`` is exactly one valid address with a domain:
    control characters (a CR/LF that would inject a ``Bcc:`` header), several
    addresses (``"e" <a@x.org>, o@evil.org``), syntax defects, or no ``@``."""
    value = str(text).strip()
    if not value or _FROM_CONTROL_RE.search(value) or "\t" in value:
        raise ValueError(f"{text!r} is not one mail address (control characters)")
    try:
        header = policy.default.header_factory("To", value)
        addresses = header.addresses
    except Exception as exc:  # noqa: BLE001 - any parse failure is a bad address
        raise ValueError(f"{text!r} is not a mail address ({type(exc).__name__})") from None
    if header.defects:
        raise ValueError(f"{text!r} is not a mail address ({header.defects[0]})")
    if len(addresses) != 1:
        raise ValueError(f"{text!r} is not one mail address ({len(addresses)} addresses)")
    address = addresses[0]
    if not address.username or not address.domain or " " in address.addr_spec:
        raise ValueError(f"{text!r} is not a mail address (it needs local@domain)")
    return f"{address.username}@{address.domain}".lower()


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

_MAX_MIME_DEPTH = 30
_MAX_BOUNDARIES = 500


def _mime_too_deep(raw: bytes) -> bool:
    """A cheap look before parsing: more multipart boundaries than any real mail has."""
    return raw.lower().count(b"boundary=") > _MAX_BOUNDARIES


def _depth_ok(msg: Message) -> bool:
    """True when the parsed MIME tree is at most :data:`_MAX_MIME_DEPTH` deep
    (walked without recursion)."""
    stack = [(msg, 0)]
    while stack:
        part, depth = stack.pop()
        if depth > _MAX_MIME_DEPTH:
            return False
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack.extend((sub, depth + 1) for sub in payload if isinstance(sub, Message))
    return True


def _read(raw: bytes, result: OrderMail, own_address: str | None) -> None:
    parser = BytesParser(policy=policy.default)
    deep = not result.oversize and _mime_too_deep(raw)
    whole = None  # parsed once, whole, unless oversize (no body read) or nested too deeply
    if not result.oversize and not deep:
        try:
            whole = parser.parsebytes(raw)
        except Exception:  # the headers first then, as they are; the whole parse again below
            whole = None
    head = whole if whole is not None else parser.parsebytes(raw, headersonly=True)
    if not head.keys():
        result.error = "no headers"
        return
    result.sender, result.sender_display, result.sender_problem = _parse_from(head)
    result.subject = _header(head, "Subject") or ""
    message_id = (_header(head, "Message-ID") or "").strip()
    result.message_id = message_id or None
    result.replied_to = message_ids(_header(head, "In-Reply-To"))
    result.in_reply_to = result.replied_to[0] if result.replied_to else None
    result.references = message_ids(_header(head, "References"))
    result.game_id, result.secret = parse_subject_tag(result.subject)

    if deep:
        result.error = "MIME nested too deeply"
        result.machine = _machine_reason(head, result.sender, result.subject,
                                         canonical_address(own_address or ""))
        return
    msg = head if result.oversize else whole if whole is not None else parser.parsebytes(raw)
    if not result.oversize and not _depth_ok(msg):
        result.error = "MIME nested too deeply"
        msg = head
    own = canonical_address(own_address or "")
    result.machine = _machine_reason(msg, result.sender, result.subject, own)
    if result.error:
        return
    if result.machine:  # headers only when oversize: the notice's own In-Reply-To may still name our mail
        result.bounce_notice = bounce_notice(msg, sender=result.sender, display=result.sender_display,
                                             subject=result.subject, canonical=canonical_address)
    if result.machine and not result.oversize:
        result.bounce = _dsn_bounce(msg)
        if result.bounce is None:  # Exim and others name failed addresses in a header
            result.bounce = canonical_address(_header(msg, "X-Failed-Recipients")) or None
    if result.oversize or not isinstance(msg, EmailMessage):
        return
    text, error = _body_text(msg)
    if error:
        result.error = error
        return
    lines, game, secret, cut, result.text_lines = _order_and_text_lines(text or "")
    result.attachments = sum(1 for p in msg.walk() if p.get_content_disposition() == "attachment")
    result.lines = lines
    result.kinds = classify_lines(lines, result.sender, result.sender_display)
    result.cut = cut
    result.body_blank = not (text or "").strip()
    if not result.machine and result.in_reply_to is None:
        found = _AUTO_TEXT_RE.search(" ".join(lines)[:2000])
        result.auto_hint = found.group(0) if found else None
    if result.game_id is None and game is not None:
        result.game_id = game
    if secret is not None:
        result.secret = secret
