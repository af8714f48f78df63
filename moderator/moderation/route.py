"""Route a mail to its game, and tell players from strangers.

A mail reaches a game by (in this order) its Subject tag ``[pbem:GAME:SECRET]``
or ``game:`` line (``OrderMail.game_id``); else by In-Reply-To/References naming
one of our Message-IDs (``<...pbem.GAME@domain>``, RFC 5322 section 3.6.4); else
by the sender's only running game, or the running game whose secret the mail
carries.  Reads game files; writes nothing.
"""
from __future__ import annotations

import hmac
import re
from typing import Any

from ..mail.read import OrderMail, canonical_address
from ..store import GAME_ID_PATTERN
from ..store.gamefile import GameStore, StoreError

_MSGID_GAME_RE = re.compile(rf"\.pbem\.({GAME_ID_PATTERN})@")

GameEntry = tuple[str, dict[str, Any], list[dict[str, Any]]]
"""``(game id, game file data, the sender's player entries in it)``."""


def same_secret(a: str | None, b: str | None) -> bool:
    """Whether two secrets are equal (constant-time); False when either is missing."""
    return bool(a) and bool(b) and hmac.compare_digest(str(a).encode(), str(b).encode())


def games_of(store: GameStore, sender: str) -> list[GameEntry]:
    """The games in which ``sender`` (canonical) plays, as ``GameEntry`` values;
    unreadable game files are passed over."""
    out = []
    for gid in store.ids():
        try:
            data = store.read_data(gid)
        except StoreError:
            continue
        mine = [p for p in data.get("players") or [] if canonical_address(p["address"]) == sender]
        if mine:
            out.append((gid, data, mine))
    return out


def known_sender(store: GameStore, sender: str) -> bool:
    """Whether ``sender`` is a registered player of any game (only they get
    answers to mails that name no valid game: no backscatter to strangers)."""
    return bool(games_of(store, sender))


def route(om: OrderMail, store: GameStore) -> str | None:
    """The id of the game ``om`` is for, or None when it cannot be told.  The id
    may name no existing game (a tag or ``game:`` line is taken as written)."""
    if om.game_id:
        return om.game_id
    for ref in [om.in_reply_to, *om.references]:
        m = _MSGID_GAME_RE.search(ref or "")
        if m and store.exists(m.group(1)):
            return m.group(1)
    hits = []
    for gid, data, mine in games_of(store, om.sender):
        if data.get("state", {}).get("phase") == "over":
            continue
        hits.append(gid)
        if om.secret and any(same_secret(p["secret"], om.secret) for p in mine):
            return gid  # the sender's secret names this game
    return hits[0] if len(hits) == 1 else None
