"""Bounce notices in every form they really come in, and the mails of ours they quote.

A mail server that cannot deliver one of our mails sends a notice back, in one of
many forms: an RFC 3464 delivery-status report (``multipart/report``), or a
plain-text notice in the server's own words and language: qmail's QSBMF ("Hi.
This is the qmail-send program"), Exim's ("This message was created
automatically by mail delivery software", with ``X-Failed-Recipients``),
Postfix's ("This is the mail system at host"), Exchange's and Outlook's
("Delivery has failed to these recipients", "Unzustellbar: ..."), Lotus Notes'
("DELIVERY FAILURE: User ... not listed"), Gmail's, Yahoo's, GMX's and web.de's,
in English, German, Spanish, Czech, Chinese, French, Italian, Portuguese, Dutch,
Polish, Russian and any other language.

The words of a notice are never trusted to say *whose* mail failed: a notice is
matched by the Message-IDs of ours it quotes (``<RANDOM.TOKEN.pbem.GAME@domain>``,
``mail/threads.py``), anywhere in it: the notice's own In-Reply-To or
References, an attached ``message/rfc822`` or ``text/rfc822-headers`` part (the
returned headers), or the quoted text, even wrapped over lines or HTML-escaped.
The token in such an id names the player (only their own mail carries it).  The
notice's words only tell a bounce from other machine mail (an out-of-office reply
quotes our Message-ID too): :func:`bounce_notice` needs a delivery-status part,
an ``X-Failed-Recipients`` header, a mail-system sender (``MAILER-DAEMON``,
``postmaster``, Exchange's ``MicrosoftExchange...``) or a bounce Subject
(:data:`BOUNCE_SUBJECT_RE`, in the languages above).

flufl.bounce (GNU Mailman's detectors, maintained: 6.0.0 of 2026) was tried
on the corpus of tests/mail/bounces/: it returns the failed *addresses* its
detectors read from English text, never the Message-ID of the returned mail, so
it cannot say which game and player a notice is about; it found the right
address or rightly nothing in 17 of the 29 mails (none of the German, Spanish,
Czech, Chinese, Dutch, Polish or Portuguese notices, nor Yahoo's or Lotus
Notes'; the moderator's own address for GMX's; an address for a notice that
names no mail of ours).  The standard library's :mod:`email` parses every part
here.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from email.message import Message

from ..store import GAME_ID_PATTERN

__all__ = ["BOUNCE_SUBJECT_RE", "Bounce", "bounce_notice", "is_system_sender", "our_message_ids"]

BOUNCE_SUBJECT_RE = re.compile(
    "|".join([
        # en: RFC 3464 generators, sendmail, Postfix, Exim, qmail, Exchange, Notes, Gmail, Yahoo, GMX, web.de
        r"undeliverable", r"undelivered mail", r"delivery status notification", r"mail delivery (?:failed|failure|subsystem)",
        r"returned mail", r"failure notice", r"delivery failure", r"delivery has failed", r"could not be delivered",
        r"message not delivered", r"non[- ]?deliver(?:able|y)", r"returned to sender", r"mail system error",
        r"permanent (?:error|failure)", r"delivery notification",
        # de
        r"unzustellbar", r"nicht zustellbar", r"zustellung fehlgeschlagen", r"fehlgeschlagene zustellung",
        r"nicht zugestellt", r"konnte nicht zugestellt", r"unzustellbare nachricht", r"unzustellbare e-mail",
        r"benachrichtigung zum übermittlungsstatus", r"übermittlungsfehler",
        # es
        r"no se puede entregar", r"no se pudo entregar", r"no entregad[oa]", r"error de entrega", r"imposible de entregar",
        r"notificación de estado de entrega", r"correo devuelto", r"mensaje no entregado",
        # cs
        r"nedoru[čc]iteln", r"nelze doru[čc]it", r"nebylo mo[žz]n[ée] doru[čc]it", r"chyba doru[čc]en[íi]",
        r"nedoru[čc]en",
        # zh
        r"无法投递", r"未能投递", r"投递失败", r"退信", r"无法送达", r"未送达", r"無法傳遞", r"無法投遞", r"傳遞失敗", r"系統退信",
        r"邮件被退回", r"郵件被退回",
        # fr
        r"non remis", r"non distribuable", r"non délivré", r"échec de (?:la )?(?:remise|distribution|livraison)",
        r"impossible de remettre", r"notification d'état de (?:la )?(?:remise|distribution)", r"message non distribué",
        # it
        r"non recapitabile", r"impossibile recapitare", r"mancato recapito", r"non recapitat[oa]",
        r"notifica (?:sullo )?stato (?:di )?consegna", r"consegna non riuscita",
        # pt
        r"não entregue", r"não (?:é|foi) possível entregar", r"falha (?:na|de) entrega", r"entrega falhou",
        r"notificação de status de entrega", r"mensagem devolvida", r"não foi entregue",
        # nl
        r"onbestelbaar", r"kan niet worden bezorgd", r"niet (?:afgeleverd|bezorgd)", r"bezorging mislukt",
        r"onbezorgbaar",
        # pl
        r"niedostarczon", r"niedostarczaln", r"nie można dostarczyć", r"nie dostarczono", r"nie doręczono",
        r"powiadomienie o stanie dostarczenia", r"błąd dostarczenia",
        # ru
        r"недоставлен", r"недоставляем", r"не доставлен", r"невозможно доставить", r"не удалось доставить",
        r"ошибка доставки", r"уведомление о состоянии доставки", r"возвращ[её]нное письмо",
    ]),
    re.IGNORECASE,
)
"""Words of a bounce notice's Subject (searched anywhere in it, any case)."""

_DELAY_SUBJECT_RE = re.compile(
    r"delay|still being retried|not yet been delivered|verzögert|verzoegert|noch nicht zugestellt|retardé|différé|"
    r"retrasad|demorad|zpožděn|zpozden|延迟|延遲|ritardat|atrasad|vertraagd|opóźni|задерж", re.IGNORECASE)
"""A delay warning's Subject ("Warning: message ... delayed 24 hours", "Delivery
Status Notification (Delay)"): the mail is still being tried, no bounce."""

_SYSTEM_LOCALS = re.compile(
    r"(?:mailer-?daemon|mail-?daemon|postmaster|mail\.?delivery(?:\.?system)?|microsoftexchange[0-9a-f]*|"
    r"mailerdaemon|bounces?|mdaemon|smtp-?gateway|mail-?router|notes-?router)\Z", re.IGNORECASE)

_SYSTEM_NAMES = re.compile(r"^\W*(?:mail delivery (?:sub)?system|microsoft outlook|mailer[- ]daemon|"
                           r"mail administrator|postmaster|mail router)\W*(?:<|$)", re.IGNORECASE)
# the fixed part first, the left part of the id read backwards from it (a
# pattern starting with ``[...]*`` would be quadratic on a long run of letters)
_OURS_RE = re.compile(rf"\.pbem\.{GAME_ID_PATTERN}@[A-Za-z0-9.\-]{{0,253}}[A-Za-z0-9]")
_ID_LEFT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._=+-")
_MAX_LEFT = 200
_OURS_GAME_RE = re.compile(rf"\.pbem\.({GAME_ID_PATTERN})@")
_STATUS_RE = re.compile(r"(?<![\d.])([45]\d\d)(?:[ -]+#?([45]\.\d{1,3}\.\d{1,3}))?(?![\d.])")
_MAX_TEXT = 512 * 1024


@dataclass(frozen=True)
class Bounce:
    """What a bounce notice says.

    * ``form``: how it was told from other machine mail: ``'RFC 3464 report'``,
      ``'X-Failed-Recipients'``, ``'mail-system sender'`` (MAILER-DAEMON,
      postmaster ...) or ``'bounce subject'``.
    * ``ours``: the Message-IDs of ours it quotes (``'<...pbem.GAME@domain>'``),
      in the order found (the notice's own In-Reply-To/References first, then its
      parts in MIME order), without repeats; what matches it to a player.
    * ``recipients``: the canonical addresses the notice names as failed in
      fields made for that (RFC 3464 Original-/Final-Recipient of a failed
      recipient, X-Failed-Recipients), never words of its text.
    * ``status``: the server's reason as it wrote it, one line of at most 200
      characters (a DSN's Diagnostic-Code or Status; else the first line of the
      text with an SMTP reply code such as ``550 5.1.1``; else the line of
      words after the failed address, ``_reason_line``), or ``''``."""

    form: str
    ours: tuple[str, ...] = ()
    recipients: tuple[str, ...] = ()
    status: str = ""
    games: tuple[str, ...] = field(default=(), compare=False)


def our_message_ids(text: str) -> list[str]:
    """The Message-IDs of ours (``.pbem.GAME@``) in ``text``, each as
    ``'<id>'``, in order, without repeats; ids wrapped over lines (a client
    folding at 72 characters, a ``> `` quote) are found too, after the ids as
    written (the text read unwrapped may also give a longer, glued variant of
    an id: harmless, as the token is read from the ``.TOKEN.pbem.GAME@`` part
    alone).  Never raises."""
    found: list[str] = []
    sources = [text]
    if "\n" in text:  # an id wrapped inside: read the text unwrapped too (found after those as written)
        sources.append(re.sub(r"[ \t]*\r?\n[ \t>]*", "", text))
    for source in sources:
        for m in _OURS_RE.finditer(source):
            start = m.start()
            while start > 0 and m.start() - start < _MAX_LEFT and source[start - 1] in _ID_LEFT:
                start -= 1
            mid = f"<{source[start:m.end()].strip('.')}>"
            if mid not in found:
                found.append(mid)
    return found


def is_system_sender(sender: str, display: str = "") -> bool:
    """Whether ``sender`` (canonical address) with display name ``display`` (or
    the whole From value) is a mail system's: ``MAILER-DAEMON``, ``postmaster``,
    Exchange's ``MicrosoftExchange<hex>``, "Mail Delivery System" ..."""
    local = sender.partition("@")[0]
    return bool(_SYSTEM_LOCALS.match(local)) or bool(_SYSTEM_NAMES.search(display or ""))


def _text_of(part: Message) -> str:
    """A leaf part's text (decoded; HTML unescaped), ``''`` when it has none; the
    raw text of a multipart part whose boundaries are missing (a broken report)."""
    if part.get_content_maintype() == "multipart":
        payload = part.get_payload()
        return payload if isinstance(payload, str) else ""
    if part.is_multipart() or part.get_content_maintype() not in ("text", "message"):
        return ""
    try:
        text = part.get_content() if hasattr(part, "get_content") else part.get_payload(decode=True)
    except Exception:
        text = part.get_payload(decode=True)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        return ""
    return html.unescape(text) if part.get_content_subtype() == "html" else text


def _headers_of(part: Message) -> str:
    try:
        return "\n".join(f"{k}: {v}" for k, v in part.raw_items())
    except Exception:
        return ""


def _dsn(msg: Message, canonical) -> tuple[list[str], str, bool]:
    """The failed recipients of the notice's delivery-status parts, the first
    failed recipient's Diagnostic-Code or Status, and whether the parts report
    only recipients not failed (``Action: delayed``, ``delivered`` ...)."""
    recipients: list[str] = []
    status = ""
    others = failed = 0
    for part in msg.walk():
        if part.get_content_type() != "message/delivery-status":
            continue
        payload = part.get_payload()
        for block in payload if isinstance(payload, list) else []:
            if not isinstance(block, Message):
                continue
            action = str(block.get("Action", "") or "").strip().lower()
            if not action:
                if not (block.get("Final-Recipient") or block.get("Original-Recipient")):
                    continue  # the per-message block
                action = "failed"
            if not action.startswith("failed"):
                others += 1
                continue
            failed += 1
            for name in ("Original-Recipient", "Final-Recipient"):
                value = str(block.get(name, "") or "")
                addr = canonical(value.partition(";")[2] or value)
                if addr:
                    if addr not in recipients:
                        recipients.append(addr)
                    break
            if not status:
                status = " ".join(str(block.get("Diagnostic-Code", "") or "").partition(";")[2].split()) \
                    or " ".join(str(block.get("Status", "") or "").split())
    return recipients, status, bool(others) and not failed


def _status_line(text: str) -> str:
    for line in text.splitlines():
        if _STATUS_RE.search(line) and re.search(r"[A-Za-z]{3}", line):
            return " ".join(line.split())[:200]
    return ""


_ADDRESS_LINE_RE = re.compile(r"\s*<?[^\s<>@]+@[^\s<>@]+?>?:?\s*")


def _reason_line(text: str) -> str:
    """The server's own reason in a plain notice with no SMTP reply code: the
    first line with words after the line naming a failed address (``ana@x``
    then ``Das Postfach ist voll ...``), before the returned mail (a ``---``
    separator or a header line); ``''`` when there is none."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not _ADDRESS_LINE_RE.fullmatch(line):
            continue
        for after in lines[i + 1:]:
            if not after.strip() or _ADDRESS_LINE_RE.fullmatch(after):
                continue
            if after.lstrip().startswith(("---", "From:", "To:", "Subject:", "Message-ID:", ">")):
                return ""
            return " ".join(after.split())[:200] if re.search(r"\w{3}", after) else ""
    return ""


def bounce_notice(msg: Message, *, sender: str, display: str = "", subject: str = "",
                  canonical=lambda s: s.strip().strip("<>").lower()) -> Bounce | None:
    """The :class:`Bounce` that machine mail ``msg`` is, or None when it is no
    bounce notice (an auto-reply, a list mail ...).

    ``sender``: its From address (canonical), ``display`` its display name,
    ``subject`` its decoded Subject; ``canonical``: the function making a
    canonical address of a header value (``read.canonical_address``).  The
    caller knows ``msg`` is machine mail (``OrderMail.machine``); a person's
    mail saying "your mail bounced" is never passed here.  Never raises."""
    try:
        return _notice(msg, sender, display, subject, canonical)
    except Exception:  # a notice too broken to read is no bounce we can match
        return None


def _notice(msg: Message, sender: str, display: str, subject: str, canonical) -> Bounce | None:
    recipients, status, delayed = _dsn(msg, canonical)
    failed = str(msg.get("X-Failed-Recipients", "") or "")
    if delayed or (not recipients and not failed.strip() and _DELAY_SUBJECT_RE.search(subject or "")):
        return None  # a delay warning: the mail is still being tried
    if recipients:
        form = "RFC 3464 report"
    elif any(p.get_content_type() == "message/delivery-status" for p in msg.walk()):
        form = "RFC 3464 report"
    elif failed.strip():
        form = "X-Failed-Recipients"
    elif is_system_sender(sender, display):
        form = "mail-system sender"
    elif BOUNCE_SUBJECT_RE.search(subject or ""):
        form = "bounce subject"
    else:
        return None
    for value in re.split(r"[,\s]+", failed):
        addr = canonical(value) if "@" in value else ""
        if addr and addr not in recipients:
            recipients.append(addr)
    # where our Message-IDs may be quoted: the notice's own thread headers, then
    # every part (attached messages and returned headers included) in MIME order
    chunks = [str(msg.get("In-Reply-To", "") or ""), str(msg.get("References", "") or "")]
    size = 0
    texts = []
    for part in msg.walk():
        if part is not msg:
            chunks.append(_headers_of(part))
        text = _text_of(part)
        if text and size < _MAX_TEXT:
            text = text[:_MAX_TEXT - size]
            size += len(text)
            chunks.append(text)
            texts.append(text)
    ours = our_message_ids("\n".join(chunks))
    if not status:
        status = next((s for s in map(_status_line, texts) if s), "")
    if not status:  # a plain notice without a reply code: its words after the failed address
        status = next((s for s in map(_reason_line, texts) if s), "")
    if "\x1b" in status:  # ISO-2022-JP written raw in a delivery-status field
        try:
            status = status.encode("ascii").decode("iso2022_jp")
        except (UnicodeError, LookupError):
            status = status.replace("\x1b", "")
    games = tuple(dict.fromkeys(m.group(1) for m in map(_OURS_GAME_RE.search, ours) if m))
    return Bounce(form=form, ours=tuple(ours), recipients=tuple(recipients), status=status[:200], games=games)
