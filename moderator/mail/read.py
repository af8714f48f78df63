"""Reading players' order mails: headers, body text, quote stripping, machine mail.

Players answer a status mail (Subject tag ``[pbem:GAME:SECRET]``) from any mail
client, in any language, and write their orders one per line *on top of* the quoted
status mail.  :func:`read_mail` turns the raw bytes of such a mail into an
:class:`OrderMail`: who sent it, which game it is for, the order lines with all quoted
text, signatures and client boilerplate removed, and whether it is machine mail
(auto-reply, bounce, mailing list ...) that must never be answered.

It never raises on bad input: a mail that cannot be read at all comes back with
``error`` set.  Authentication (is this really the player?) is not done here.

Everything is parsed with the standard library's :mod:`email` package and
``email.policy.default``.
"""
from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass, field
from email import errors, policy
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import parseaddr
from html.parser import HTMLParser
from ..store import GAME_ID_PATTERN

__all__ = [
    "DEFAULT_MAX_SIZE",
    "GAME_ID_PATTERN",
    "SECRET_PATTERN",
    "OrderMail",
    "canonical_address",
    "decode_text",
    "html_to_text",
    "parse_subject_tag",
    "read_mail",
    "strip_quoted",
    "subject_tag",
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
        _name, addr = parseaddr(text)
    except Exception:  # parseaddr is robust, but never let a header break us
        return ""
    addr = addr.strip().strip("<>").strip()
    if not addr:
        return ""
    if "@" not in addr and addr != text.strip("<> "):
        return ""
    return addr.lower()


def subject_tag(game_id: str, secret: str) -> str:
    """The tag our status mails carry in their Subject: ``'[pbem:ridge:k3x9p2qa]'``.

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

# Attribution lines ("On <date>, <who> wrote:") by language.  A line (or two or three
# lines joined with a space, for wrapped ones) must match one of these in full.
_ATTRIBUTION_RES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"On\s.*\bwrote\s*:",  # en
        r"Am\s.*\bschrieb\b.*:",  # de
        r".*\bschrieb\s+am\b.*:",  # de, K-9 / Thunderbird for Android
        r"El\s.*\bescribi[óo]\s*:",  # es
        r"Le\s.*\ba\s+[ée]crit\s*:",  # fr
        r"Dne\s.*\bnapsal(?:\(a\)|a)?\s*:",  # cs, Thunderbird
        r".*\bodes[íi]latel\b.*\bnapsal(?:\(a\)|a)?\s*:",  # cs, Gmail
        r"Op\s.*\bschreef\b.*:",  # nl
        r"Il\s.*\bha\s+scritto\s*:",  # it
        r"Em\s.*\bescreveu\s*:",  # pt
        r".*(?:写道|寫道)\s*[:：]",  # zh
    )
]
_ATTRIBUTION_START = re.compile(
    r"(?:On|Am|El|Le|Dne|Op|Il|Em)\s|.*\b(?:odes[íi]latel|schrieb)\b", re.IGNORECASE
)
_ATTRIBUTION_MAX = 400  # characters of a (joined) attribution line

# "-----Original Message-----", "-------- Ursprüngliche Nachricht --------",
# "---------- Forwarded message ---------", QQ Mail's "------ 原始邮件 ------" ...
_SEPARATOR_RE = re.compile(r"-{3,}\s*[^-\s].*?\s*-{3,}")
_UNDERSCORES_RE = re.compile(r"_{10,}")  # Outlook on the web / mobile, before From:
_GROUPWISE_RE = re.compile(r">>>\s.*\s>>>")  # GroupWise: '>>> "Name" <addr> date >>>'
_FORWARD_RE = re.compile(
    r"(?:Begin forwarded message|Anfang der weitergeleiteten Nachricht|"
    r"D[ée]but du message r[ée]exp[ée]di[ée]|Inicio del mensaje reenviado|"
    r"Za[čc][áa]tek p[řr]eposlan[ée] zpr[áa]vy)\s*:",
    re.IGNORECASE,
)

# Phone and app footers: everything from such a line on is dropped.
_FOOTER_RE = re.compile(
    r"(?:Sent from my\b|Sent from (?:Mail|Outlook|Yahoo|AOL|Proton)\b|Sent via\b|"
    r"Get Outlook for\b|Obtener Outlook para\b|Obter o Outlook para\b|"
    r"Outlook f[üu]r \S+ beziehen|T[ée]l[ée]charger Outlook pour\b|Scarica Outlook per\b|"
    r"Z[íi]skat Outlook pro\b|Enviado desde mi\b|Enviado (?:do|de) meu\b|Enviado desde\b|"
    r"Von meinem\b.*\bgesendet|Gesendet von meinem\b|Gesendet mit\b|"
    r"Envoy[ée] de mon\b|Envoy[ée] depuis\b|Odesl[áa]no z\b|"
    r"Verstuurd (?:vanaf|met) mijn\b|Verzonden (?:vanaf|met) mijn\b|"
    r"Inviato da\b|发自我的|發自我的|从我的|從我的|来自我的)",
    re.IGNORECASE,
)
_FOOTER_MAX = 100

# Outlook's reply header block: a From-like line followed by Sent/To/Subject lines.
_HDR_FROM_RE = re.compile(
    r"\*?(?:From|Von|De|Van|Da|Od|Fr[åa]n|Fra|Feladó|Від|От|发件人|寄件者|差出人)\*?"
    r"\s*[:：]\s*\S",
    re.IGNORECASE,
)
_HDR_OTHER_RE = re.compile(
    r"\*?(?:Sent|Date|Gesendet|Datum|Envoy[ée]|Enviado|Enviada|Fecha|Data|Inviato|"
    r"Verzonden|Odesl[áa]no|Skickat|Sendt|To|An|À|A|Para|Aan|Komu|Till|Til|Cc|Kopie|"
    r"Subject|Betreff|Objet|Asunto|Assunto|Onderwerp|Oggetto|P[řr]edm[ěe]t|[ÄA]mne|"
    r"Emne|发送时间|日期|收件人|抄送|主题|寄件日期|收件者|副本|主旨|送信日時|宛先|件名)\*?"
    r"\s*[:：]",
    re.IGNORECASE,
)


def _is_quote(line: str) -> bool:
    return line.lstrip().startswith(">")


def _next_text(lines: list[str]) -> list[int]:
    """For each index, the index of the first non-blank line at or after it
    (``len(lines)`` if none): lets the look-aheads below run in constant time."""
    nxt = [len(lines)] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        nxt[i] = i if lines[i].strip() else nxt[i + 1]
    return nxt


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
            if not more or _is_quote(more):
                break
            joined = f"{joined} {more}"
        if len(joined) > _ATTRIBUTION_MAX:
            break
        if any(r.fullmatch(joined) for r in _ATTRIBUTION_RES):
            return n
        if n == 1 and not _ATTRIBUTION_START.match(first):
            break  # only lines that open like an attribution may be wrapped
    # Any other line ending in a colon directly above a '>' quote is an attribution
    # too (other languages, other clients: "Anna <a@b> kirjoitti:").
    if first.endswith((":", "\uff1a")):
        j = nxt[i + 1]
        if j < len(lines) and _is_quote(lines[j]):
            return 1
    return 0


def _is_header_block(lines: list[str], i: int, nxt: list[int]) -> bool:
    """True when line ``i`` opens an Outlook-style ``From: / Sent: / To:`` block:
    at least two more header lines among the next six non-blank ones."""
    if not _HDR_FROM_RE.match(lines[i].strip()):
        return False
    seen = 0
    j = nxt[i + 1]
    for _ in range(6):
        if j >= len(lines):
            break
        if _HDR_OTHER_RE.match(lines[j].strip()):
            seen += 1
            if seen >= 2:
                return True
        j = nxt[j + 1]
    return False


def strip_quoted(text: str) -> str:
    """The text a person wrote in a reply, without what they quoted.

    ``text`` is a plain-text mail body (any newline convention).  Returns the kept
    lines joined with ``\\n`` (lines themselves unchanged, leading and trailing blank
    lines removed).  Dropped are:

    * lines quoted with ``>``;
    * everything from a signature line ``-- `` (or ``--``) on, and from a phone/app
      footer such as "Sent from my iPhone", "Get Outlook for Android",
      "Enviado desde mi iPhone", "Von meinem iPhone gesendet";
    * attribution lines ("On ... wrote:", "Am ... schrieb ...:", "El ... escribió:",
      "Le ... a écrit :", "Dne ... napsal(a):", "Op ... schreef ...:",
      "Il ... ha scritto:", "Em ... escreveu:", Gmail's Czech and Chinese forms),
      also when wrapped over two or three lines, and any line ending in ``:`` directly
      above a ``>`` quote.  When the text after an attribution is *not* quoted with
      ``>`` (an unmarked quote) everything after it is dropped; when it is, only the
      ``>`` lines go, so orders written below or between quoted lines are kept;
    * everything from ``-----Original Message-----`` and similar separators
      (``-----Ursprüngliche Nachricht-----``, ``---------- Forwarded message ---``),
      a line of underscores, GroupWise's ``>>> "Name" <addr> date >>>``, "Begin forwarded message:", or an Outlook header block
      (``From:/Sent:/To:/Subject:``, also ``Von:/Gesendet:``, ``De :/Envoyé :``,
      ``De:/Enviado:``, ``Od:/Odesláno:``, ``发件人:/发送时间:`` ...) on.

    Never raises for a ``str``.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    nxt = _next_text(lines)
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        bare = line.strip()
        if _GROUPWISE_RE.fullmatch(bare):
            break
        if _is_quote(line):
            i += 1
            continue
        if line.rstrip() == "--":
            break
        if bare and len(bare) <= _FOOTER_MAX and _FOOTER_RE.match(bare):
            break
        if (
            _SEPARATOR_RE.fullmatch(bare)
            or _UNDERSCORES_RE.fullmatch(bare)
            or _FORWARD_RE.fullmatch(bare)
        ):
            break
        if _is_header_block(lines, i, nxt):
            break
        n = _attribution_length(lines, i, nxt)
        if n:
            j = nxt[i + n]
            if j >= len(lines) or not _is_quote(lines[j]):
                break  # unmarked quote: everything after the attribution goes
            i += n
            continue
        kept.append(line)
        i += 1
    while kept and not kept[-1].strip():
        kept.pop()
    while kept and not kept[0].strip():
        kept.pop(0)
    return "\n".join(kept)


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
    with replacement characters.  When a single-byte charset is declared but the bytes
    are valid UTF-8 with non-ASCII characters, UTF-8 wins (a common mislabelling).
    """
    if data.isascii():
        return data.decode("ascii")
    declared_name = (declared or "").strip().strip("\"'").lower()
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
    * ``sender``: the From address by :func:`canonical_address` (``''`` if none);
      ``sender_display`` its display name (``''`` if none).
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
      the ``<id>``s of References in order.
    * ``machine``: why the mail must never be answered (``'Auto-Submitted:
      auto-replied'``, ``'Precedence: bulk'``, ``'List-Id'``, ``'empty Return-Path'``,
      ``'sender MAILER-DAEMON'``, ``'sender no-reply'``, ``'delivery status
      notification'``, ``'disposition notification'``, ``'out-of-office subject'``,
      ``'our own address'`` ...), or None for a person's mail.
    * ``bounce``: for a delivery-status report, the canonical address that failed
      (Original-Recipient, else Final-Recipient, of the first failed recipient).
    * ``oversize``: the raw mail is larger than ``max_size``; ``size``: its bytes.
    * ``error``: why the mail could not be read at all (no text part, no headers,
      undecodable body ...), else None.
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


def _header(msg: Message, name: str) -> str | None:
    """A header's decoded, unfolded value, or None; falls back to the raw value when
    the structured parser of ``policy.default`` chokes on it."""
    raw = _raw_header(msg, name)
    if raw is None:
        return None
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


_MSGID_RE = re.compile(r"<[^<>\s]+>")

_NOREPLY_RE = re.compile(r"(?:no|do[-_.]?not)[-_.]?reply(?:[-_.+].*)?", re.IGNORECASE)
_DAEMON_LOCALS = {"mailer-daemon": "MAILER-DAEMON", "postmaster": "postmaster"}
# Reply/forward prefixes and [list] tags (not our own tag) in front of a subject.
_PREFIX_RE = re.compile(
    r"(?:\s*(?:\[(?!\s*pbem\s*:)[^\]]*\]|"
    r"(?:re|aw|sv|vs|wg|fw|fwd|tr|rv|odp|antw|r|res|回复|答复|回覆)\s*[:：]))*\s*",
    re.IGNORECASE,
)
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
    if _BOUNCE_SUBJECT_RE.match(head) and _header(msg, "X-Failed-Recipients"):
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


def _order_lines(text: str) -> tuple[list[str], str | None, str | None]:
    """``(lines, game_id, secret)`` from a body text (see OrderMail.lines)."""
    lines: list[str] = []
    game = secret = None
    for line in strip_quoted(text).split("\n"):
        line = unicodedata.normalize("NFKC", _INVISIBLE_RE.sub("", line)).strip()
        if not line:
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
    return lines, game, secret


def read_mail(
    raw: bytes, own_address: str | None = None, max_size: int = DEFAULT_MAX_SIZE
) -> OrderMail:
    """Read one raw mail (RFC 5322 bytes, as fetched over IMAP) into an OrderMail.

    ``own_address`` is the moderator's address: mail from it is machine mail.  Mails
    larger than ``max_size`` bytes get ``oversize=True`` and ``lines=[]``; only their
    headers are read.  The body is the ``text/plain`` part, or the ``text/html`` part
    turned into text when it is the only body; attachments are ignored.  Any charset
    and transfer encoding is decoded (see :func:`decode_text`), ``format=flowed`` is
    joined.  Never raises: unreadable input gives ``error`` (``'no headers'``,
    ``'no text part'``, ``'undecodable body: ...'``, ``'unreadable: ...'``).
    """
    result = OrderMail()
    try:
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        raw = bytes(raw)
    except Exception as exc:
        result.error = f"unreadable: {type(exc).__name__}"
        return result
    result.size = len(raw)
    result.oversize = result.size > max_size
    try:
        _read(raw, result, own_address)
    except Exception as exc:  # never let a strange mail break the moderator
        result.lines = []
        result.error = f"unreadable: {type(exc).__name__}: {exc}"
    return result


def _display_name(msg: Message) -> str:
    """The display name of the first From address, decoded; ``''`` if none."""
    try:
        addresses = msg["From"].addresses
        if addresses and addresses[0].display_name:
            return _fix_8bit(str(addresses[0].display_name)).strip()
    except Exception:
        pass
    try:  # also finds the old form 'addr (Name)', whose comment policy.default drops
        raw = _decode_words(_fix_8bit(_unfold(_raw_header(msg, "From") or "")))
        return parseaddr(raw)[0].strip()
    except Exception:
        return ""


def _read(raw: bytes, result: OrderMail, own_address: str | None) -> None:
    parser = BytesParser(policy=policy.default)
    msg = parser.parsebytes(raw, headersonly=result.oversize)
    if not msg.keys():
        result.error = "no headers"
        return
    from_value = _header(msg, "From") or ""
    result.sender = canonical_address(from_value)
    result.sender_display = _display_name(msg)
    result.subject = _header(msg, "Subject") or ""
    message_id = (_header(msg, "Message-ID") or "").strip()
    result.message_id = message_id or None
    in_reply_to = _MSGID_RE.findall(_header(msg, "In-Reply-To") or "")
    result.in_reply_to = in_reply_to[0] if in_reply_to else None
    result.references = _MSGID_RE.findall(_header(msg, "References") or "")
    result.game_id, result.secret = parse_subject_tag(result.subject)

    own = canonical_address(own_address or "")
    result.machine = _machine_reason(msg, result.sender, result.subject, own)
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
    lines, game, secret = _order_lines(text or "")
    result.lines = lines
    if result.game_id is None and game is not None:
        result.game_id = game
    if secret is not None:
        result.secret = secret
