"""Building the mails the moderator sends (status mails, answers to orders).

One function, :func:`build_message`, makes a complete RFC 5322 message with the
standard library (``email.message.EmailMessage``, ``email.policy.default``): our own
Message-ID, Date, threading headers, ``Auto-Submitted`` (so that well-behaved
auto-responders stay quiet, RFC 3834), UTF-8 text, and an HTML alternative when one
is given, with its inline images (``multipart/related``, RFC 2387: the HTML names
each PNG by ``cid:``) when those are given too.  Sending is done elsewhere (``msg.as_bytes(policy=policy.SMTP)``).
"""
from __future__ import annotations

import re
import secrets
from io import BytesIO
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from datetime import datetime, timezone
from email import policy
from email.generator import BytesGenerator
from email.headerregistry import Address, HeaderRegistry
from email.policy import EmailPolicy
from email.message import EmailMessage, Message, MIMEPart
from email.utils import format_datetime, make_msgid

__all__ = ["build_message", "flatten", "seven_bit"]

_SAFE_LINE = 998  # RFC 5322 line length limit; longer lines need an encoding


def _cte(text: str) -> str:
    """Transfer encoding for a text part: 7bit when safe, else 8bit (RFC 6152: the
    UTF-8 bytes as they are) when every line is within RFC 5322's 998 octets,
    else the shorter of quoted-printable and base64.  8bit keeps a Chinese status
    mail a quarter smaller than base64 (issue 26: at most 50 KB a status mail);
    every server pbem submits to is asked for 8BITMIME, and a mail to one that
    does not take it is sent with its 8bit parts in base64 or quoted-printable
    (``seven_bit``, ``moderator.mail.transport.smtp``)."""
    if all(len(line) <= _SAFE_LINE for line in text.splitlines()):
        if text.isascii():
            return "7bit"
        if all(len(line.encode("utf-8")) <= _SAFE_LINE for line in text.splitlines()):
            return "8bit"
    return _cte_7bit(text)


def _cte_7bit(text: str) -> str:
    """The shorter of quoted-printable and base64 for ``text``'s UTF-8 bytes (a
    Chinese text, three bytes a character, is a third longer in base64 but three
    times longer in quoted-printable)."""
    data = text.encode("utf-8")
    escaped = sum(1 for b in data if b > 126 or b == 61)  # written =XX
    qp = len(data) + 2 * escaped + 3 * (len(data) + 2 * escaped) // 75  # and a soft break a line
    base64 = (len(data) + 2) // 3 * 4 * 78 // 76  # and CRLF every 76 characters
    return "quoted-printable" if qp <= base64 else "base64"


def seven_bit(msg: EmailMessage) -> EmailMessage:
    """``msg`` with every 8bit text part re-encoded as quoted-printable or base64
    (``_cte_7bit``), for a server without 8BITMIME (RFC 6152 section 3: such a
    server must not be sent 8-bit data).  Changes ``msg`` in place and returns
    it; a mail without 8bit parts is returned as it is."""
    for part in msg.walk():
        if part.is_multipart() or part.get_content_maintype() != "text":
            continue
        if str(part.get("Content-Transfer-Encoding", "")).lower() != "8bit":
            continue
        text = part.get_content().replace("\r\n", "\n")  # an 8bit part read from CRLF bytes keeps them
        subtype = part.get_content_subtype()
        # the Content-Type's own parameters (a text/calendar part's ``method``) and the disposition kept
        params = {k: v for k, v in part.get_params(failobj=[])[1:] if k.lower() != "charset"}
        disposition, filename = part.get_content_disposition(), part.get_filename()
        MIMEPart.set_content(part, text, subtype=subtype, charset="utf-8", cte=_cte_7bit(text),
                             params=params, disposition=disposition, filename=filename)
    return msg


def _boundary() -> str:
    """A new multipart boundary: CPython's shape (``=`` x 15, a token, ``==``)
    with 128 random bits of ``secrets`` for the token.

    Set before the message is flattened, it spares the generator its search
    of every part's text for the boundary it makes up (``Generator._make_boundary``:
    a regular expression compiled and run over the flattened parts, about
    1.7 ms of a status mail).  No line of a part can be it (RFC 2046 section
    5.1.1): a base64 line never holds ``-``, a quoted-printable one never
    ``==``, and a 7bit text, written before the boundary exists, would have to
    hold 128 bits drawn afterwards from the operating system's random source.
    ``tests/test_compose_boundary.py`` compares the mail with the one the
    ``email`` package builds when it makes the boundaries up."""
    return "=" * 15 + secrets.token_hex(16) + "=="


@lru_cache(maxsize=1024)
def _header(name: str, value: str | tuple[str, str]) -> Any:
    """The header object ``msg[name] = value`` stores (``email.policy.default``:
    the value parsed), made once per name and value and shared by the mails
    that repeat it (From, a player's To and Subject, the auto-reply headers):
    a header object never changes, and ``msg[name] = header`` stores it as it
    is.  A tuple value is a mailbox ``(display name, address)``.  Raises as
    ``msg[name] = value`` would (nothing is kept then)."""
    if isinstance(value, tuple):
        value = Address(display_name=value[0], addr_spec=value[1])  # type: ignore[assignment]
    return policy.default.header_store_parse(name, value)[1]


_SHARED_HEADERS = frozenset({"content-type", "content-transfer-encoding", "mime-version",
                             "content-disposition", "date"})
"""The headers whose header objects ``_SharingPolicy`` makes once per value: a
mail's MIME headers (the same few values in every mail: ``text/plain``,
``charset="utf-8"``, ``8bit``, ``1.0``, ``inline``) and its Date (the same
for every mail of the same second)."""


class _Registry(HeaderRegistry):
    """``email.headerregistry.HeaderRegistry`` (the default map) that makes the
    class of each header name once: the standard one makes a new class
    (``type(...)``) for every header it parses, about a quarter of the
    parsing.  The class is the same combination of the name's header class
    and ``BaseHeader``; only its identity is shared."""

    def __init__(self) -> None:
        super().__init__()
        self._classes: dict[str, type] = {}

    def map_to_type(self, name: str, cls: type) -> None:
        super().map_to_type(name, cls)
        self._classes.pop(name.lower(), None)

    def __getitem__(self, name: str) -> type:
        key = name.lower()
        made = self._classes.get(key)
        if made is None:
            made = self._classes[key] = super().__getitem__(name)
        return made


class _SharingPolicy(EmailPolicy):
    """``email.policy.default`` (the same settings, the same header objects and
    bytes) that parses a value of ``_SHARED_HEADERS`` once and shares the header
    object (``_header``) among the mails that store it again: the ``email``
    package stores a part's Content-Type twice (``text/plain``, then with its
    charset) and each part's transfer encoding and MIME-Version anew, about
    0.1-0.3 ms a parse, some twenty a status mail.  A multipart's boundary
    (random, once) is parsed as usual."""

    def header_store_parse(self, name, value):
        if isinstance(value, str) and name.lower() in _SHARED_HEADERS and "boundary=" not in value:
            return name, _header(name, value)
        return super().header_store_parse(name, value)  # parsed by this policy's _Registry


_POLICY = _SharingPolicy(header_factory=_Registry())
"""The policy of every message ``build_message`` makes (``_SharingPolicy``,
its header classes made once: ``_Registry``)."""


def _msgid(value: str) -> str:
    """``value`` as ``<id>``: angle brackets added when missing, white space trimmed."""
    value = value.strip()
    if not value:
        return ""
    if not value.startswith("<"):
        value = "<" + value
    if not value.endswith(">"):
        value = value + ">"
    return value


def build_message(
    *,
    from_addr: str,
    from_name: str | None,
    to: str,
    subject: str,
    text: str,
    html: str | None = None,
    images: Sequence[tuple[str, bytes]] = (),
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    auto_submitted: str = "auto-generated",
    domain: str,
    date: datetime | None = None,
    calendar: Sequence[tuple[str, str]] = (),
    message_id: str | None = None,
) -> EmailMessage:
    """A ready-to-send message.

    * ``from_addr``/``from_name``: the From mailbox (name may be None or non-ASCII).
    * ``to``: the recipient, a bare address or ``Name <addr>``.
    * ``subject``: any Unicode; encoded as RFC 2047 words where needed.
    * ``text``: the plain-text body; ``html``: an optional HTML body, which makes the
      message ``multipart/alternative`` (text first, HTML second).  Both are UTF-8,
      ``7bit`` when plain ASCII with short lines, else the shorter of quoted-printable
      and base64 (``_cte``).
    * ``images``: inline PNGs of the HTML part, ``(cid, png bytes)``: then the HTML
      alternative is ``multipart/related`` (the HTML first, then each image as
      ``image/png``, base64, ``Content-Disposition: inline`` and ``Content-ID:
      <cid>``; the HTML shows it with ``<img src="cid:...">``, the cid without angle
      brackets).  Ignored without ``html``.  Each multipart's boundary is set
      here (``_boundary``: random, never found in any part).
    * ``in_reply_to``: the Message-ID answered (angle brackets added if missing);
      ``references``: the earlier thread.  The References header is ``references``
      followed by ``in_reply_to``, duplicates removed, order kept; a reference string
      holding several ids is split.  Neither header is set when empty.
    * ``auto_submitted``: the ``Auto-Submitted`` value (``auto-generated`` for status
      mails, ``auto-replied`` for answers to orders).  ``X-Auto-Response-Suppress:
      OOF, AutoReply`` is set too, which keeps Exchange's out-of-office replies away.
    * ``domain``: the right-hand side of our Message-ID (``make_msgid(domain=...)``).
    * ``date``: the Date (default: now, UTC).
    * ``calendar``: iCalendar objects ``(iTIP method, VCALENDAR text)``
      (``moderator.mail.calendar.to_ical``; docs/operations.md, "Deadlines in
      the calendar"): the first is the last alternative of the
      ``multipart/alternative`` (iMIP, RFC 6047: ``text/calendar; method=...;
      charset=utf-8``, what Gmail, Outlook, Apple Mail and Thunderbird show
      as an invitation), any further one an attachment ``cancel.ics`` (a
      ``CANCEL``) or ``invite.ics`` (a ``REQUEST``: a person-level vacation
      moved the deadlines of several games) beside it (then the message is
      ``multipart/mixed``): a second object cannot
      share the alternative (a client shows one alternative only).
    * ``message_id``: the Message-ID (``<id@domain>``), stored as the last
      header, below the MIME headers (default: ``make_msgid(domain=domain)``,
      stored after the Date).

    Raises ``ValueError`` for an empty ``from_addr``, ``to`` or ``domain``, a
    ``from_addr`` that is no ``local@domain`` (``email.errors.InvalidHeaderDefect``,
    a ``ValueError``), header values containing line breaks, or an empty or
    malformed image cid.
    """
    if not from_addr or not from_addr.strip():
        raise ValueError("from_addr is empty")
    if not to or not to.strip():
        raise ValueError("to is empty")
    if not domain or not domain.strip():
        raise ValueError("domain is empty")
    for name, value in (("subject", subject), ("to", to), ("from_name", from_name or "")):
        if "\r" in value or "\n" in value:
            raise ValueError(f"{name} contains a line break")
    cids = [_msgid(cid) for cid, _ in images]
    for cid in cids:
        if not cid or any(c in cid[1:-1] for c in "<> \t\r\n"):
            raise ValueError(f"bad image cid {cid!r}")

    msg = EmailMessage(policy=_POLICY)
    # a new message holds no header yet: each is stored with set_raw, as msg[name] =
    # value stores it, without the check for a second one (it costs a class a header)
    msg.set_raw("From", _header("From", (from_name or "", from_addr.strip())))
    msg.set_raw("To", _header("To", to.strip()))
    msg.set_raw("Subject", _header("Subject", subject))
    msg.set_raw("Date", _header("Date", format_datetime(date or datetime.now(timezone.utc))))
    if message_id is None:
        msg.set_raw(*policy.default.header_store_parse("Message-ID", make_msgid(domain=domain.strip())))

    reply_id = _msgid(in_reply_to or "")
    refs: list[str] = []
    for ref in [*references, reply_id]:
        for one in re.split(r"\s+", ref or ""):
            one = _msgid(one)
            if one and one not in refs:
                refs.append(one)
    if reply_id:
        msg.set_raw(*policy.default.header_store_parse("In-Reply-To", reply_id))
    if refs:
        msg.set_raw(*policy.default.header_store_parse("References", " ".join(refs)))
    msg.set_raw("Auto-Submitted", _header("Auto-Submitted", auto_submitted))
    msg.set_raw("X-Auto-Response-Suppress", _header("X-Auto-Response-Suppress", "OOF, AutoReply"))

    msg.set_content(text, charset="utf-8", cte=_cte(text))
    if html is not None:
        msg.make_alternative(boundary=_boundary())  # what add_alternative makes, its boundary set
        msg.add_alternative(html, subtype="html", charset="utf-8", cte=_cte(html))
        if images:
            html_part = msg.get_payload()[1]
            html_part.make_related(boundary=_boundary())  # likewise for add_related
            for cid, (_, png) in zip(cids, images):
                # on a text/html part, add_related makes it multipart/related
                html_part.add_related(png, maintype="image", subtype="png", cid=cid,
                                      disposition="inline")
    if calendar:
        method, ics = calendar[0]
        if not msg.is_multipart():
            msg.make_alternative(boundary=_boundary())
        msg.add_alternative(ics, subtype="calendar", charset="utf-8", cte=_cte(ics), params={"method": method})
        if len(calendar) > 1:
            msg.make_mixed(boundary=_boundary())
            for method, ics in calendar[1:]:
                msg.add_attachment(ics, subtype="calendar", charset="utf-8", cte=_cte(ics),
                                   params={"method": method},
                                   filename="cancel.ics" if method == "CANCEL" else "invite.ics")
    if msg.is_multipart():
        for part in msg.walk():
            if part is not msg:
                del part["MIME-Version"]  # belongs to the top level only
    if message_id is not None:
        msg.set_raw(*policy.default.header_store_parse("Message-ID", message_id))
    return msg


_NEWLINE = re.compile(r"\r\n|\r|\n")  # the line ends the generator turns into the policy's


class _Generator(BytesGenerator):
    """``BytesGenerator`` that writes the lines of a text (a part's body, a
    preamble) in one piece, not one ``write`` per line and one per line end:
    the same bytes (``tests/test_compose_boundary.py`` compares), in a fraction
    of the calls (a status mail's map alone is about 700 base64 lines)."""

    def _write_lines(self, lines: str) -> None:
        if lines:
            self.write(self._NL.join(_NEWLINE.split(lines)))


def flatten(msg: EmailMessage) -> bytes:
    """``msg.as_bytes(policy=email.policy.SMTP)``: the mail as it is spooled
    and sent (CRLF line ends).  A message with its own ``as_bytes`` (a
    ``StoredMail`` keeps the bytes it was read from) gives those."""
    if type(msg).as_bytes is not Message.as_bytes:
        return msg.as_bytes(policy=policy.SMTP)
    out = BytesIO()
    _Generator(out, mangle_from_=False, policy=policy.SMTP).flatten(msg)
    return out.getvalue()
