"""Route a mail to its game, and tell players from strangers.

A mail reaches a game by (in this order) its old Subject tag ``[pbem:GAME:SECRET]``
(mails no longer carry it, replies to older ones do) or ``game:`` line (``OrderMail.game_id``; ignoring case when that names no game
and exactly one game matches ignoring case); else by In-Reply-To/References naming
one of our Message-IDs (``<...pbem.GAME@domain>``, RFC 5322 section 3.6.4); else
by the sender's only running game, or the running game whose secret the mail
carries.  Who plays where comes from the bookkeeping's games index
(``Bookkeeping.games_of`` / ``is_player``); writes nothing.
"""
from __future__ import annotations

import hmac
import re

from ..mail.read import OrderMail, canonical_address
from ..store import GAME_ID_PATTERN
from ..store.bookkeeping import Bookkeeping
from ..store.gamefile import GameStore, StoreError

_MSGID_GAME_RE = re.compile(rf"\.pbem\.({GAME_ID_PATTERN})@")


def same_secret(a: str | None, b: str | None) -> bool:
    """Whether two secrets are equal (constant-time); False when either is missing."""
    return bool(a) and bool(b) and hmac.compare_digest(str(a).encode(), str(b).encode())


def referenced_game(om: OrderMail) -> str | None:
    """The game named by the first of ``om``'s In-Reply-To and References that is
    one of our Message-IDs (``<...pbem.GAME@domain>``), or None; the file is not
    looked at.  The same Message-ID part carries the player's token
    (``mail/threads.py``), so the game routed to is the game authenticated in."""
    for ref in om.thread_refs:
        m = _MSGID_GAME_RE.search(ref or "")
        if m:
            return m.group(1)
    return None


def route(om: OrderMail, store: GameStore, bk: Bookkeeping) -> str | None:
    """The id of the game ``om`` is for, or None when it cannot be told.  The id
    may name no existing game (a tag or ``game:`` line is taken as written).

    The sender's running games come from the games index
    (``Bookkeeping.games_of``: no game file is opened); only when the sender
    plays several and the mail carries a secret are those few files read, to
    find the game whose secret it is."""
    if om.game_id:
        if store.exists(om.game_id):
            return om.game_id
        # 'game: Ridge': players type ids in any case; only an unambiguous match
        same = [g for g in bk.game_ids() if g.lower() == om.game_id.lower()]
        return same[0] if len(same) == 1 else om.game_id
    for ref in om.thread_refs:
        m = _MSGID_GAME_RE.search(ref or "")
        if m and store.exists(m.group(1)):
            return m.group(1)
    running = bk.games_of(om.sender, active_only=True)
    if len(running) == 1:
        return running[0].game_id
    if not om.secret:
        return None
    for ref in running:
        try:
            data = store.read_data(ref.game_id)
        except StoreError:
            continue
        for p in data.get("players") or []:
            if canonical_address(str(p.get("address", ""))) == om.sender and same_secret(p.get("secret"), om.secret):
                return ref.game_id  # the sender's secret names this game
    return None
