"""Seats that need a substitute (issue 27): recorded where a seat is given up
(``deadlines`` abandonment seen by ``clock``, the game master's ``eject``, a
player's ``resign confirm``) and filled or closed where a seat gets a player
again (``gm`` ``replace``).  The offers to the substitute pool are
``moderation/pool.py``'s; this module only writes the bookkeeping's
``vacancies`` and ``offers`` rows (schema 4), so that the modules below the pool
need not import it.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

POLICIES = ("auto", "gm", "none")
"""The game's ``substitutes`` setting: ``auto`` (the first volunteer of the pool
who replies ``take GAME`` gets the seat), ``gm`` (the game master approves or
vetoes that volunteer first), ``none`` (no pool: the game master finds a
replacement and uses ``replace``, as before the pool)."""
DEFAULT_POLICY = "auto"


def policy(record: Any) -> str:
    """The substitute policy of ``record``'s game (``POLICIES``): the game
    file's ``settings.substitutes`` (format 6, absent: ``auto``), else that of
    the open game it started from (``signup.substitutes``), else ``auto``."""
    value = record.settings.get("substitutes") or (getattr(record, "signup", None) or {}).get("substitutes")
    return value if value in POLICIES else DEFAULT_POLICY


def vacate(bk: Any, record: Any, seat: str, why: str, when: datetime) -> bool:
    """Record that seat ``seat`` of ``record``'s game needs a substitute
    (``why``: ``abandoned``, ``ejected`` or ``resigned``) at ``when``, unless the
    game's policy is ``none``, the game is over or ended, or the seat's vacancy
    is open already; the pool's stage of the cycle offers it
    (``pool.run_clock``).  Returns whether a vacancy was recorded."""
    if policy(record) == "none" or record.ended is not None or record.game.phase == "over":
        return False
    return bool(bk.add_vacancy(record.id, seat, why, when))


def refill(bk: Any, game_id: str, seat: str, state: str = "closed") -> None:
    """Seat ``seat`` of ``game_id`` has a player again (a ``replace``): its
    vacancy (if any is open) becomes ``state`` (``closed``: filled by the game
    master by hand; ``filled``: from the pool) and every offer of it still
    waiting is ``lost`` (a late ``take`` is told the seat is taken)."""
    v = bk.vacancy(game_id, seat)
    if v is None or v["state"] not in ("open", "gm"):
        return
    bk.set_vacancy(game_id, seat, state=state)
    for o in bk.offers(game_id, seat, ("offered", "gm")):
        bk.set_offer(o["seq"], state="lost")
