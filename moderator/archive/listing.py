"""``pbem list``: one line per game, read from the game files' data only.

The listing needs no replay and no rules engine: everything it shows is in the
file's ``state`` (phase, player on move, dividends paid, money) and ``history``
(when the last order came), as ``GameStore.read_data`` gives it.
"""
from __future__ import annotations

from datetime import datetime, timezone
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


def _pause_entry(data: dict[str, Any], since: str) -> dict[str, Any]:
    """The ``gm_log`` entry of the pause under way (``command`` pause, ``at`` the
    ``settings.paused`` time ``since``), ``{}`` when the log has none (a file
    edited by hand, or older than game masters)."""
    return next((e for e in reversed(data.get("gm_log") or [])
                 if str(e.get("command", "")).split(" ")[0] == "pause" and str(e.get("at")) == since), {})


def seat_notes(data: dict[str, Any], now: datetime | None = None) -> dict[str, dict[str, Any]]:
    """What the clock knows of each seat of the game file ``data``, for ``pbem
    list`` and ``pbem show``: ``{name: notes}`` for the seats with something to
    say, ``notes`` holding ``due`` (the player's deadline in force while the
    game waits for their move: ISO 8601 UTC, ``deadlines.due``), ``vacation_until``
    (a vacation under way at ``now``, default the wall clock: begun at
    ``vacation_from`` or before, not yet at its end; ISO 8601),
    ``missed`` (deadlines missed in a row) with ``abandon_after`` (the misses that
    abandon a seat, ``settings.abandon_after``), ``bot`` (the built-in player has
    the seat), ``abandoned``, ``resigned`` (the player resigned or was ejected).
    A finished or ended game has no ``due``."""
    from ..moderation.deadlines import _due, _waiting, iso, parse_time

    now = now or datetime.now(timezone.utc)
    state = data.get("state") or {}
    settings, clock = data.get("settings") or {}, data.get("clock") or {}
    players = data.get("players") or []
    running = state.get("phase") not in ("over", None) and not data.get("ended")
    waiting = set(_waiting(state, [p["name"] for p in players])) if running else set()
    resigned = set(data.get("resigned") or [])
    out: dict[str, dict[str, Any]] = {}
    for p in players:
        notes: dict[str, Any] = {}
        if p["name"] in waiting and not p.get("bot"):
            when = _due(settings, clock, p)
            if when is not None:
                notes["due"] = iso(when)
        until, since = parse_time(p.get("vacation_until")), parse_time(p.get("vacation_from"))
        if until is not None and (since is None or since <= now) and now < until and running:
            notes["vacation_until"] = iso(until)
        if int(p.get("missed") or 0):
            notes["missed"] = int(p["missed"])
            notes["abandon_after"] = int(settings.get("abandon_after") or 0)
        if p.get("bot"):
            notes["bot"] = True
        if p.get("abandoned"):
            notes["abandoned"] = True
        if p["name"] in resigned:
            notes["resigned"] = True
        if notes:
            out[p["name"]] = notes
    return out


def summary(data: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """What ``pbem list`` shows of one game file's mapping (``GameStore.read_data``):
    ``id``, ``ruleset``, ``players`` (names in turn order), ``phase``, ``waiting``
    (the players an order is awaited from), ``since`` (the instant the
    deadline in force counts from, ``clock.since``: the move before the wait,
    the cycle that sent the built-in player's move, a ``replace``; for a game
    over or ended, or a file without it, ``received`` of the last history
    entry, else ``created``), ``deadline`` (the earliest deadline of the
    players awaited, ISO 8601 UTC, or None: no deadline), ``dividends``, ``final_dividend``, ``winners`` (empty before the end),
    ``ended`` (the game master ended the game: the ``ended`` mapping's ``reason``,
    ``''`` when none was given; None for a game not ended so), ``paused`` (when
    the game master paused the game's clock, ``settings.paused``, or None).  An
    ended game waits for nobody and has no deadline (docs/game-file.md: ``ended``);
    a paused one has no deadline while the pause lasts.

    Also ``status``: ``running``, ``paused``, ``ended`` or ``over`` (the final
    dividend paid); ``paused_by``, ``paused_reason`` (the pause's ``gm_log``
    entry, ``''`` when unknown); ``ended_at``, ``ended_by`` (the ``ended``
    mapping's ``at`` and ``by``); ``seats`` (``seat_notes(data, now)``:
    deadlines, vacations under way at ``now``, missed moves per seat)."""
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
    if phase != "over" and not ended and (data.get("clock") or {}).get("since"):
        since = data["clock"]["since"]  # the instant the wait, and its deadline, counts from
    from ..moderation.deadlines import first_due, iso

    due = first_due(data) if phase != "over" and not ended else None
    paused = str((data.get("settings") or {}).get("paused") or "")
    pause = _pause_entry(data, paused) if paused else {}
    status = ("ended" if ended else "over" if phase == "over" else "paused" if paused else "running")
    ended_map = ended if isinstance(ended, dict) else {}
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
        "paused": paused or None,
        "status": status,
        "paused_by": str(pause.get("by") or ""),
        "paused_reason": str(pause.get("reason") or ""),
        "ended_at": str(ended_map.get("at") or ""),
        "ended_by": str(ended_map.get("by") or ""),
        "seats": seat_notes(data, now),
    }


HEADER = ("GAME", "RULESET", "PLAYERS", "MOVE", "SINCE", "DEADLINE", "DIVIDENDS", "WINNER", "STATUS", "SEATS")


def status_cell(s: dict[str, Any]) -> str:
    """The STATUS column: ``running``, ``over``, ``paused since 2026-03-01 18:00
    by WHO (WHY)``, ``ended 2026-03-02 10:00 by WHO (WHY)`` (times UTC; the
    parts not known left out)."""
    status = s.get("status") or "running"
    if status == "paused":
        text, by, why = "paused since " + short_time(s.get("paused") or ""), s.get("paused_by"), s.get("paused_reason")
    elif status == "ended":
        text, by, why = "ended " + short_time(s.get("ended_at") or ""), s.get("ended_by"), s.get("ended")
    else:
        return status
    return text + (f" by {by}" if by else "") + (f" ({why})" if why else "")


def seat_text(notes: dict[str, Any], short: bool = True) -> str:
    """One seat's ``seat_notes`` in words, ``; ``-separated: ``due 2026-03-03
    12:00``, ``vacation until ...``, ``missed 2 of 3``, ``built-in player``,
    ``abandoned``, ``resigned or ejected`` (``short`` False: times with ``UTC`` and the
    misses as ``missed 2 moves in a row (3 abandon the seat)``)."""
    utc = "" if short else " UTC"
    parts = []
    if notes.get("due"):
        parts.append(f"due {short_time(notes['due'])}{utc}")
    if notes.get("vacation_until"):
        parts.append(f"vacation until {short_time(notes['vacation_until'])}{utc}")
    if notes.get("missed"):
        n, limit = notes["missed"], notes.get("abandon_after")
        if short:
            parts.append(f"missed {n}" + (f" of {limit}" if limit else ""))
        else:
            parts.append(f"missed {n} move(s) in a row" + (f" ({limit} abandon the seat)" if limit else ""))
    for key, text in (("bot", "built-in player"), ("abandoned", "abandoned"), ("resigned", "resigned or ejected")):
        if notes.get(key):
            parts.append(text)
    return "; ".join(parts)


def seats_cell(s: dict[str, Any]) -> str:
    """The SEATS column: the seats with a vacation under way, missed moves, the
    built-in player or a resignation, ``NAME: notes`` each, ``, ``-separated
    (their deadlines are in DEADLINE); ``-`` for none."""
    cells = []
    for name, notes in (s.get("seats") or {}).items():
        text = seat_text({k: v for k, v in notes.items() if k != "due"})
        if text:
            cells.append(f"{name}: {text}")
    return ", ".join(cells) or "-"


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
            ", ".join(s["winners"]) or "-", status_cell(s), seats_cell(s))


def table(rows: Iterable[tuple[str, ...]]) -> list[str]:
    """Lines of a table with a header, columns padded to their widest cell (in
    columns of a fixed-width font: a Chinese name takes two a character,
    ``i18n.display_width``) and separated by two spaces (no trailing spaces)."""
    rows = [HEADER, *(tuple(r) + ("",) * (len(HEADER) - len(r)) for r in rows)]  # cells left out: empty
    widths = [max(display_width(r[i]) for r in rows) for i in range(len(HEADER))]
    return ["  ".join(pad(c, w) for c, w in zip(r, widths)).rstrip() for r in rows]


def list_games(store: GameStore, which: str = "all",
               now: datetime | None = None) -> tuple[list[str], list[str]]:
    """``(lines, errors)`` for ``pbem list``: the table of every game (``which``:
    ``all``, ``active`` — not over, not ended — or ``finished``: over or ended by
    the game master), sorted by id, and one error
    message per file that cannot be read.  ``now``: the time vacations under
    way are judged at (default the wall clock)."""
    rows, errors = [], []
    for gid in store.ids():
        try:
            s = summary(store.read_data(gid), now)
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
