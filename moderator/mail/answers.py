"""What an SMTP server's answer to a submitted mail means: the server's own
sending limit, the recipient's address, a temporary trouble, or a refusal of
the mail for another reason.

The first digit of a reply code does not say it: Gmail's daily quota is
``550 5.4.5 Daily user sending quota exceeded``, Outlook.com's
``554 5.2.0 ... WASCL UserAction verdict ...``, and neither says anything about
the recipient.  The answers of the big providers, and the classes of the
enhanced status codes (RFC 3463, the RFC 5248 registry), are rows of one data
file, ``smtp_answers.json`` beside this module (its ``about`` explains the
columns; every row names its source).  ``classify`` reads an answer.
"""
from __future__ import annotations

import fnmatch
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).with_name("smtp_answers.json")
"""The data file of the answers (package data)."""

LIMIT, RECIPIENT, TEMPORARY, SERVER, REFUSED = "limit", "recipient", "temporary", "server", "refused"
KINDS = (LIMIT, RECIPIENT, TEMPORARY, SERVER, REFUSED)

_STATUS = re.compile(r"(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?!\.?\d)")


@dataclass(frozen=True)
class Answer:
    """What one SMTP answer means: ``kind`` (``limit``, ``recipient``,
    ``temporary``, ``server`` or ``refused``: see ``smtp_answers.json``), ``row`` (the id
    of the row that matched, None when none did), ``provider``, ``window``
    (seconds until a ``limit`` can have reset; 0 for the other kinds),
    ``source`` (where the row's text is documented), ``code`` (the basic
    reply code, or None), ``status`` (the enhanced status code, e.g.
    ``"5.4.5"``, or None) and ``text`` (the server's words, one line)."""

    kind: str
    row: str | None
    provider: str
    window: int
    source: str
    code: int | None
    status: str | None
    text: str

    @property
    def limit(self) -> bool:
        """Whether it is the server's sending limit (or its policy about the
        moderator's account): nothing is held against the recipient."""
        return self.kind == LIMIT


@dataclass(frozen=True)
class _Row:
    id: str
    provider: str
    kind: str
    window: int
    source: str
    example: str
    status: str | None
    codes: frozenset[int] | None
    text: re.Pattern[str] | None
    hosts: frozenset[str] | None

    def matches(self, code: int | None, status: str | None, text: str, host: str | None) -> bool:
        if self.hosts is not None and (host or "").lower() not in self.hosts:
            return False
        if self.codes is not None and code not in self.codes:
            return False
        if self.status is not None and (status is None or not fnmatch.fnmatchcase(status, self.status)):
            return False
        return self.text is None or self.text.search(text) is not None


@functools.lru_cache(maxsize=1)
def rows() -> tuple[_Row, ...]:
    """The rows of ``smtp_answers.json``, in order (read once).  Raises
    ValueError for a row without ``id``, ``kind`` among ``KINDS``, ``source``
    and ``example``, or a ``limit`` without a positive ``window``."""
    data = json.loads(DATA.read_text(encoding="utf-8"))
    out = []
    for raw in data["answers"]:
        kind, window = raw.get("kind"), int(raw.get("window") or 0)
        if not raw.get("id") or kind not in KINDS or not raw.get("source") or not raw.get("example") \
                or (kind == LIMIT) != (window > 0):
            raise ValueError(f"{DATA.name}: bad row {raw!r}")
        out.append(_Row(
            id=raw["id"], provider=raw.get("provider", "any"), kind=kind, window=window,
            source=raw["source"], example=raw["example"], status=raw.get("status"),
            codes=frozenset(raw["codes"]) if raw.get("codes") else None,
            text=re.compile(raw["text"], re.IGNORECASE) if raw.get("text") else None,
            hosts=frozenset(h.lower() for h in raw["hosts"]) if raw.get("hosts") else None))
    return tuple(out)


def enhanced_status(text: str, code: int | None = None) -> str | None:
    """The first enhanced status code (RFC 3463 ``class.subject.detail``) in
    ``text`` whose class agrees with the basic ``code`` (when known), e.g.
    ``"5.4.5"``; None when there is none (an IP address such as Yahoo's
    ``4.16.55.1`` is no status code)."""
    for m in _STATUS.finditer(text):
        if code is None or str(code)[0] == m.group(1):
            return m.group(0)
    return None


def classify(code: int | None, text: str, host: str | None = None) -> Answer:
    """What the SMTP answer with reply ``code`` (None: no code) and words
    ``text`` (the server's answer, with or without the code in front) from
    the server ``host`` (the configured smtp.host, or None) means: the first
    matching row of ``smtp_answers.json``; else ``temporary`` for a 4xx or no
    code at all (then nothing was answered: a lost connection), ``refused``
    for a 5xx."""
    line = " ".join(str(text).split())
    if code is None:
        m = re.match(r"([245]\d\d)[ -]", line)
        code = int(m.group(1)) if m else None
    status = enhanced_status(line, code)
    for row in rows():
        if code is None or str(code)[0] not in "45":
            break  # no answer of the server (a lost connection) or none that refuses
        if row.matches(code, status, line, host):
            return Answer(row.kind, row.id, row.provider, row.window, row.source, code, status, line)
    kind = REFUSED if code is not None and 500 <= code < 600 else TEMPORARY
    return Answer(kind, None, "any", 0, "RFC 5321 section 4.2.1 (the first digit)", code, status, line)


def server_words(err: BaseException) -> str:
    """The server's words in a transport's error ``err``: the message of the
    SMTP reply that caused it (aiosmtplib's ``SMTPResponseException``), else
    its text (which names the refused recipients with their answers)."""
    cause = err.__cause__
    message = getattr(cause, "message", None)
    if message:
        code = getattr(cause, "code", None)
        return f"{code} {message}" if code else str(message)
    text = str(err)
    said = _REPLY.search(text)  # "... failed: SMTPDataError: (550, '5.4.5 ...')"
    if said:
        return f"{said.group(1)} {said.group(3)}".replace("\\n", " ")
    said = _REFUSED.search(text)  # "... refused (bob@example.org: 550 5.1.1 ...)"
    return said.group(1) if said else text


_REPLY = re.compile(r"\(([245]\d\d), (['\"])(.*)\2\)\s*$", re.S)
_REFUSED = re.compile(r"[^\s:;(]+@[^\s:;()]+: ([245]\d\d\b.*?)(?:; [^\s:;]+@[^\s:;]+: |\)?$)", re.S)


def of_error(err: BaseException) -> Answer:
    """``classify`` for a transport's error ``err`` (its ``code``, its
    server's words, its ``host``)."""
    return classify(getattr(err, "code", None), server_words(err), getattr(err, "host", None))
