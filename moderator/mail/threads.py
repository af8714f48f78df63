"""One mail thread per game and player, and the per-player token in our Message-IDs.

Every mail the moderator sends to a player of a game has the same Subject (the
notice ``thread_subject`` of ``templates/words/threads.txt``: no turn, no secret)
and names that player's thread (``GameRecord.threads``, the Message-ID of the
first mail to them) in References, so that Gmail, Outlook and Apple Mail show one
conversation per game.

Its Message-ID is ``<RANDOM.TOKEN.pbem.GAME@domain>`` (:func:`new_message_id`): ``TOKEN`` is
:func:`thread_token` of the player's secret and the game id, so a reply whose
In-Reply-To or References names one of those Message-IDs, sent from the player's
registered address, is the player's (``moderation/authenticate.py``).  The token
changes with the secret (``secret new``, a replacement), so the old mails' tokens
stop working then, without any new field in the game file.  Routing
(``moderation/route.py``) reads the game from the same ``.pbem.GAME@`` part, so
the game a reply is routed to and the game whose token it carries are one.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import Iterable

from ..store import GAME_ID_PATTERN

TOKEN_LENGTH = 16
"""Characters of a token: 16 base32 characters, 80 bits of the HMAC."""

_TOKEN_RE = re.compile(rf"\.([a-z2-7]{{{TOKEN_LENGTH}}})\.pbem\.({GAME_ID_PATTERN})@")


def thread_token(game_id: str, secret: str) -> str:
    """The token in the Message-IDs of mails to the player with ``secret`` in game
    ``game_id``: the first 80 bits of HMAC-SHA256 (key: the secret; message: the
    game id), in lower-case base32 (``TOKEN_LENGTH`` characters, ``a-z2-7``).

    Unguessable without the secret; as strong as the secret against an offline
    search by someone who saw one of the player's Message-IDs (docs/operations.md,
    "Threads and secrets").  Raises ``ValueError`` for an empty secret or game id."""
    if not secret or not game_id:
        raise ValueError("a thread token needs a game id and a secret")
    digest = hmac.new(secret.encode(), f"pbem thread {game_id}".encode(), hashlib.sha256).digest()
    return base64.b32encode(digest[:10]).decode("ascii").lower()


def new_message_id(game_id: str, token: str | None, domain: str) -> str:
    """A fresh Message-ID for a mail of game ``game_id`` (with the player's
    ``token`` when the mail is to a player): ``'<RANDOM.TOKEN.pbem.GAME@domain>'``
    or ``'<RANDOM.pbem.GAME@domain>'``; RANDOM is 64 bits from ``secrets`` in
    base32 (13 characters).

    Short on purpose: a Message-ID longer than a header line (78 characters) is
    written into References and In-Reply-To as RFC 2047 encoded words by Python's
    email package, which Outlook and Exchange then drop (the thread breaks).  With
    a game id and domain of usual length (``ridge``, ``pbem.example.org``) it is
    about 60 characters."""
    rand = base64.b32encode(secrets.token_bytes(8)).decode("ascii").rstrip("=").lower()
    middle = f"{token}.pbem.{game_id}" if token else f"pbem.{game_id}"
    return f"<{rand}.{middle}@{domain}>"


def tokens_in(message_ids: Iterable[str | None], game_id: str) -> list[str]:
    """The tokens of game ``game_id`` that the Message-IDs ``message_ids`` (e.g. a
    mail's In-Reply-To and References, ``'<...>'``) carry, in order; others'
    games and Message-IDs without a token are skipped."""
    found = []
    for mid in message_ids:
        m = _TOKEN_RE.search(mid or "")
        if m and m.group(2) == game_id:
            found.append(m.group(1))
    return found


def carries_token(message_ids: Iterable[str | None], game_id: str, secret: str | None) -> bool:
    """Whether one of ``message_ids`` carries the token of the player with
    ``secret`` in game ``game_id`` (compared in constant time); False without a
    secret."""
    if not secret:
        return False
    mine = thread_token(game_id, secret).encode()
    return any(hmac.compare_digest(t.encode(), mine) for t in tokens_in(message_ids, game_id))


_BARE_ID_RE = re.compile(r"[^\s<>()\[\]\",;:\\@]+@[^\s<>()\[\]\",;\\@]+")


def message_ids(value: str | None) -> list[str]:
    """The Message-IDs in an In-Reply-To or References header value, each as
    ``'<left@right>'``, in order, without repeats.

    Read as real mail carries them (RFC 5322 section 3.6.4 and its obsolete
    forms, section 4.5.4): ``<a@b> <c@d>`` and ``<a@b>,<c@d>``; folded over
    lines, even inside an id (white space inside ``<...>`` is dropped); with
    comments (``<a@b> (Ann's mail)``; an address in a comment or in a quoted
    phrase such as ``"Your mail of Tue" <a@b>`` is no id); and, only when the
    value has no ``<...>`` at all, ids written without angle brackets
    (``a@b``, ``a@b c@d``: some clients and gateways write them so).  Python
    3.11's ``email.policy.default`` parses these two headers as unstructured
    text (``email._header_value_parser`` only reads the one id of Message-ID),
    hence this reader.  Never raises; ``[]`` for None or a value with no id."""
    if not value:
        return []
    outside: list[str] = []  # the text outside comments and quoted strings, ids kept
    ids: list[str] = []
    depth, quoted, i, n = 0, False, 0, len(value)
    while i < n:
        ch = value[i]
        if ch == "\\" and (depth or quoted):
            i += 2
            continue
        if quoted:
            quoted = ch != '"'
        elif depth:
            depth += (ch == "(") - (ch == ")")
        elif ch == "(":
            depth = 1
            outside.append(" ")
        elif ch == '"':
            quoted = True
            outside.append(" ")
        elif ch == "<":
            end = value.find(">", i + 1)
            if end < 0:
                outside.append(value[i + 1:])
                break
            inner = "".join(value[i + 1:end].split())
            if "@" in inner and "<" not in inner:
                ids.append(f"<{inner}>")
            i = end + 1
            continue
        else:
            outside.append(ch)
        i += 1
    if not ids and "<" not in value and "@" in value:  # word by word: linear in the header's length
        ids = [f"<{w.strip('.')}>" for w in re.split(r"[\s,;]+", "".join(outside)) if _BARE_ID_RE.fullmatch(w)]
    seen: set[str] = set()
    return [x for x in ids if not (x in seen or seen.add(x))]


# ------------------------------------------------------------------ the person thread (issue 28)
_PERSON_RE = re.compile(rf"\.([a-z2-7]{{{TOKEN_LENGTH}}})\.pbem-me@")


def person_token(secret: str) -> str:
    """The token in the Message-IDs of a person's own thread (the answer to
    ``me`` and to the commands sent in reply to it): as :func:`thread_token`,
    with the person thread's secret (``Bookkeeping.person_thread``) and no game.
    Raises ``ValueError`` for an empty secret."""
    if not secret:
        raise ValueError("a person token needs a secret")
    digest = hmac.new(secret.encode(), b"pbem person", hashlib.sha256).digest()
    return base64.b32encode(digest[:10]).decode("ascii").lower()


def person_message_id(token: str, domain: str) -> str:
    """A fresh Message-ID of a mail in a person's thread:
    ``'<RANDOM.TOKEN.pbem-me@domain>'`` (no game id: routing,
    ``moderation/route.py``, reads no game from it)."""
    rand = base64.b32encode(secrets.token_bytes(8)).decode("ascii").rstrip("=").lower()
    return f"<{rand}.{token}.pbem-me@{domain}>"


def person_tokens_in(message_ids: Iterable[str | None]) -> list[str]:
    """The person-thread tokens that ``message_ids`` carry (``<...TOKEN.pbem-me@...>``), in order."""
    return [m.group(1) for m in (_PERSON_RE.search(mid or "") for mid in message_ids) if m]
