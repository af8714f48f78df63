"""``pbem list``: one line per game, read from the game files' data only.

The listing needs no replay and no rules engine: everything it shows is in the
file's ``state`` (phase, player on move, dividends paid, money) and ``history``
(when the last order came), as ``GameStore.read_data`` gives it.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..i18n import display_width, pad
from ..store.gamefile import GameStore, StoreError

IMAGINARY = "(imaginary player)"


def short_time(stamp: str) -> str:
    """``2026-11-30T12:00:00+00:00`` as ``2026-11-30 12:00`` (minutes; the offset
    dropped), ``-`` for an empty stamp."""
    stamp = str(stamp or "").strip()
    if not stamp:
        return "-"
    return stamp[:16].replace("T", " ")


def final_dividend(n_players: int) -> int:
    """The dividend that ends a game: 3 with two players, else 4 (rules: Game end)."""
    return 3 if n_players == 2 else 4


def winners_of(money: dict[str, int]) -> list[str]:
    """The richest of ``money`` (several on a tie), in name order."""
    if not money:
        return []
    top = max(money.values())
    return sorted(p for p, m in money.items() if m == top)


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """What ``pbem list`` shows of one game file's mapping (``GameStore.read_data``):
    ``id``, ``ruleset``, ``players`` (names in turn order), ``phase``, ``waiting``
    (the players an order is awaited from), ``since`` (``received`` of the last
    history entry, else ``created``), ``deadline`` (the earliest deadline of the
    players awaited, ISO 8601 UTC, or None: no deadline), ``dividends``, ``final_dividend``, ``winners`` (empty before the end),
    ``ended`` (the game master ended the game: the ``ended`` mapping's ``reason``,
    ``''`` when none was given; None for a game not ended so), ``paused`` (when
    the game master paused the game's clock, ``settings.paused``, or None).  An
    ended game waits for nobody and has no deadline (docs/game-file.md: ``ended``);
    a paused one has no deadline while the pause lasts."""
    state = data.get("state") or {}
    names = [p["name"] for p in data.get("players") or []]
    phase = state.get("phase", "initial")
    if phase == "initial":
        chosen = state.get("initial_choice") or {}
        waiting = [p for p in names if p not in chosen]
    elif phase == "play":
        waiting = [names[int(state.get("current", 0))]] if names else []
    else:
        waiting = []
    ended = data.get("ended")
    if ended:
        waiting = []
    history = data.get("history") or []
    since = (history[-1].get("received") if history else "") or data.get("created") or ""
    from ..moderation.deadlines import first_due, iso

    due = first_due(data) if phase != "over" and not ended else None
    return {
        "id": str(data.get("game")),
        "ruleset": data.get("ruleset", ""),
        "players": names,
        "phase": phase,
        "waiting": waiting,
        "since": str(since),
        "deadline": iso(due) if due is not None else None,
        "dividends": int(state.get("dividends_paid", 0)),
        "final_dividend": final_dividend(len(names)),
        "winners": winners_of(state.get("money") or {}) if phase == "over" else [],
        "ended": str(ended.get("reason") or "") if isinstance(ended, dict) else None,
        "paused": str((data.get("settings") or {}).get("paused") or "") or None,
    }


HEADER = ("GAME", "RULESET", "PLAYERS", "MOVE", "SINCE", "DEADLINE", "DIVIDENDS", "WINNER")


def row(s: dict[str, Any]) -> tuple[str, ...]:
    """The columns of one game's line."""
    if s.get("ended") is not None:
        move = f"ended ({s['ended']})" if s["ended"] else "ended"
    elif s["phase"] == "over":
        move = "over"
    elif s["phase"] == "initial":
        move = "start: " + ", ".join(s["waiting"])
    else:
        move = ", ".join(s["waiting"])
    deadline = short_time(s["deadline"] or "")
    if s.get("paused") and s.get("ended") is None and s["phase"] != "over":
        deadline = "paused " + short_time(s["paused"])
    return (s["id"], s["ruleset"], ", ".join(s["players"]), move, short_time(s["since"]),
            deadline, f"{s['dividends']}/{s['final_dividend']}",
            ", ".join(s["winners"]) or "-")


def table(rows: Iterable[tuple[str, ...]]) -> list[str]:
    """Lines of a table with a header, columns padded to their widest cell (in
    columns of a fixed-width font: a Chinese name takes two a character,
    ``i18n.display_width``) and separated by two spaces (no trailing spaces)."""
    rows = [HEADER, *rows]
    widths = [max(display_width(r[i]) for r in rows) for i in range(len(HEADER))]
    return ["  ".join(pad(c, w) for c, w in zip(r, widths)).rstrip() for r in rows]


def list_games(store: GameStore, which: str = "all") -> tuple[list[str], list[str]]:
    """``(lines, errors)`` for ``pbem list``: the table of every game (``which``:
    ``all``, ``active`` — not over, not ended — or ``finished``: over or ended by
    the game master), sorted by id, and one error
    message per file that cannot be read."""
    rows, errors = [], []
    for gid in store.ids():
        try:
            s = summary(store.read_data(gid))
        except (StoreError, ValueError, KeyError, TypeError, IndexError) as exc:
            errors.append(f"{gid}: {exc}")
            continue
        done = s["phase"] == "over" or s["ended"] is not None
        if which == "active" and done:
            continue
        if which == "finished" and not done:
            continue
        rows.append(row(s))
    return (table(rows) if rows else []), errors
