"""A person's record across games (issue 28), computed from the game files alone.

:func:`person_records` is a pure function of game files' data (the mappings
``GameStore.read_data`` gives: no replay, no clock, no database), so that the
record can always be rebuilt from the archive.  A person is an address
(canonical, ``mail.read.canonical_address``): two addresses are two people even
under one seat name, and one address is one person under any seat names.

Definitions (docs/operations.md, "A person across games"):

- **games played**: games with a seat of the address (a seat given up by
  resignation or ejection still counts);
- **finished**: those whose ``state.phase`` is ``over`` (a game the game master
  ended is not finished);
- **won**: finished games in which the seat is in first place by money (rank 1;
  every one of tied players has won);
- **average rank**: the mean of the seat's rank over finished games (1 is
  first; ties share the better rank, as ``Game.standings``);
- **moves in time**: the history's entries of the seat that its player made
  (no ``by: bot``): every such move reached the game before the deadline in
  force, since the clock makes the missed move at the deadline;
- **missed moves**: the moves the built-in player made for the seat because
  its deadline passed (a history entry with ``by: bot`` and ``due``); a game
  with ``on_missed: wait`` does not write its waits into the game file, so
  they are not counted;
- **time to move**: from the move request to the order's arrival (``arrived``,
  else ``received``), in seconds.  The request is the start of the game
  (``created``, or the seat's ``joined`` when later) for the first move of each
  seat in the initial investments (the first entry of each seat while not every
  seat has moved), else the arrival of the previous entry of the history (the
  moment the position changed and the new position was mailed);
  **median** over every move in time of every game (None without any).
"""
from __future__ import annotations

import statistics as _stats
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime, timezone
from typing import Any, Iterable

__all__ = ["Record", "person_records", "reliability", "play_seconds", "person_key", "seat_rows"]


@dataclass
class Record:
    """One person's record across games (see the module for the definitions):
    ``address`` (canonical), ``names`` (the seat names used, first use first),
    ``played``, ``finished``, ``won`` (counts of games), ``ranks`` (the rank in
    each finished game, in the order of the games given), ``in_time`` and
    ``missed`` (counts of moves), ``times`` (seconds from each move request to
    the move in time's arrival)."""

    address: str
    names: list[str] = field(default_factory=list)
    played: int = 0
    finished: int = 0
    won: int = 0
    ranks: list[int] = field(default_factory=list)
    in_time: int = 0
    missed: int = 0
    times: list[float] = field(default_factory=list)

    @property
    def average_rank(self) -> float | None:
        """The mean rank over finished games (None before any)."""
        return sum(self.ranks) / len(self.ranks) if self.ranks else None

    @property
    def median_seconds(self) -> float | None:
        """The median time to move in seconds (None without any move in time)."""
        return float(_stats.median(self.times)) if self.times else None

    @property
    def moves(self) -> int:
        """Moves in time plus missed moves: the moves the seat owed."""
        return self.in_time + self.missed

    @property
    def reliability(self) -> float | None:
        """Moves in time over moves owed (0 to 1), None before any move."""
        return self.in_time / self.moves if self.moves else None


def _time(text: Any) -> datetime | None:
    if not text:
        return None
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when


@lru_cache(maxsize=4096)
def _canonical(address: str) -> str:
    """``mail.read.canonical_address``, remembered (a person's address recurs in every game)."""
    from ..mail.read import canonical_address

    return canonical_address(address)


def _ranks(money: dict[str, Any]) -> dict[str, int]:
    """Rank by money, richest first, ties sharing the better rank (``Game.standings``)."""
    ranked = sorted(((str(p), int(m)) for p, m in money.items()), key=lambda kv: (-kv[1], kv[0]))
    out: dict[str, int] = {}
    place = 0
    for i, (p, m) in enumerate(ranked):
        if i == 0 or m != ranked[i - 1][1]:
            place = i + 1
        out[p] = place
    return out


def person_records(games: Iterable[dict[str, Any]]) -> dict[str, Record]:
    """``{canonical address: Record}`` of every address that holds a seat in one
    of ``games`` (game files' data, as ``GameStore.read_data``).  Pure: reads
    nothing else.  Seats without an address (the built-in player's from the
    start) have no record.  Malformed entries (no time, an unknown player) are
    skipped, never raised on."""
    out: dict[str, Record] = {}
    for data in games:
        players = [p for p in data.get("players") or [] if isinstance(p, dict)]
        seat_of = {str(p.get("name")): _canonical(str(p.get("address") or "")) for p in players
                   if p.get("address")}
        changes = _hands(data)  # seats that changed hands (the game master's replace, the substitute pool)
        state = data.get("state") or {}
        over = state.get("phase") == "over"
        ranks = _ranks(state.get("money") or {}) if over else {}
        for p in players:
            addr = seat_of.get(str(p.get("name")))
            if not addr:
                continue
            rec = out.setdefault(addr, Record(addr))
            shown = changes[str(p["name"])][-1][2] if changes.get(str(p["name"])) else str(p["name"])
            if shown not in rec.names:
                rec.names.append(shown)
        for seat, steps in changes.items():  # the earlier holders of a seat played this game too
            for _at, addr, shown in steps[:-1]:
                rec = out.setdefault(addr, Record(addr))
                if shown not in rec.names:
                    rec.names.append(shown)
                if addr not in seat_of.values():
                    rec.played += 1
        for addr in dict.fromkeys(seat_of.values()):
            rec = out[addr]
            rec.played += 1
            if over:
                mine = [ranks[n] for n, a in seat_of.items() if a == addr and n in ranks]
                if mine:
                    rec.finished += 1
                    rec.ranks.append(min(mine))
                    rec.won += min(mine) == 1
        created = _time(data.get("created"))
        joined = {str(p.get("name")): _time(p.get("joined")) for p in players}
        n_seats = len(players)
        first_seen: set[str] = set()
        previous: datetime | None = None
        for h in data.get("history") or []:
            name = str(h.get("player"))
            arrived = _time(h.get("arrived") or h.get("received"))
            initial = name not in first_seen and len(first_seen) < n_seats
            first_seen.add(name)
            if initial:
                starts = [t for t in (created, joined.get(name)) if t is not None]
                request = max(starts) if starts else None
            else:
                request = previous
            previous = arrived or previous
            addr = seat_of.get(name)
            if name in changes:  # the address that held the seat when the move was made
                addr = _holder(changes[name], _time(h.get("received")) or arrived)
            if addr is None:
                continue
            rec = out[addr]
            if h.get("by") == "bot":
                rec.missed += bool(h.get("due"))
                continue
            rec.in_time += 1
            if request is not None and arrived is not None and arrived >= request:
                rec.times.append((arrived - request).total_seconds())
    return out


def _hands(data: dict[str, Any]) -> dict[str, list[tuple[datetime | None, str, str]]]:
    """The seats of a game file that changed hands (``gm_log`` entries of
    ``replace``, the game master's or the substitute pool's), each as its
    holders in turn: ``[(from when (None: the start), canonical address, the
    name shown)]``; the first holder is the replaced entry's ``old_address``
    under the seat's name, each newcomer under the ``name`` they were given."""
    out: dict[str, list[tuple[datetime | None, str, str]]] = {}
    for e in data.get("gm_log") or []:
        if not isinstance(e, dict) or not str(e.get("command") or "").startswith("replace "):
            continue
        seat, new, old = e.get("player"), e.get("address"), e.get("old_address")
        if not seat or not new:
            continue
        steps = out.setdefault(str(seat), [])
        if not steps and old:
            steps.append((None, _canonical(str(old)), str(seat)))
        steps.append((_time(e.get("at")), _canonical(str(new)), str(e.get("name") or seat)))
    return out


def _holder(steps: list[tuple[datetime | None, str, str]], when: datetime | None) -> str | None:
    """The address of ``steps`` (``_hands``) that held the seat at ``when``."""
    holder = None
    for at, addr, _shown in steps:
        if at is None or when is None or at <= when:
            holder = addr
    return holder


def reliability(record: Record | None) -> float | None:
    """The share of a person's moves made in time (``Record.reliability``), None
    for no record or no move yet (then they are admitted to an open game with
    ``--min-reliability``)."""
    return None if record is None else record.reliability


def play_seconds(games: Iterable[dict[str, Any]], address: str, now: datetime) -> int:
    """Seconds of play of ``address`` up to ``now``: the length of the union of
    the spans of its seats, each from the game's start (``created``, or the seat's
    ``joined`` when later) to the game's end (the last history entry's arrival of a
    finished game; ``ended.at`` of a game the game master ended) or ``now``.  Two
    games at once count once.  The vacation bank accrues with it
    (``moderation.people``)."""
    addr = _canonical(address)
    spans: list[tuple[datetime, datetime]] = []
    for data in games:
        seats = [p for p in data.get("players") or [] if isinstance(p, dict)
                 and p.get("address") and _canonical(str(p["address"])) == addr]
        if not seats:
            continue
        starts = [t for t in [_time(data.get("created"))] + [_time(p.get("joined")) for p in seats] if t]
        if not starts:
            continue
        start = max(starts)
        end = now
        history = data.get("history") or []
        if (data.get("state") or {}).get("phase") == "over" and history:
            end = _time(history[-1].get("arrived") or history[-1].get("received")) or now
        elif isinstance(data.get("ended"), dict) and _time(data["ended"].get("at")):
            end = _time(data["ended"]["at"])  # type: ignore[assignment]
        end = min(end, now)
        if end > start:
            spans.append((start, end))
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(spans):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += (cur_e - cur_s).total_seconds()
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += (cur_e - cur_s).total_seconds()
    return int(total)


def person_key(address: str, salt: str) -> str:
    """An opaque key of a person for the archive's statistics: the first 16 hex
    digits of HMAC-SHA256 (key: ``salt``, the archive's own secret; message: the
    canonical address).  The same address always gives the same key under one
    salt; without the salt it cannot be tested against a guessed address."""
    import hashlib
    import hmac

    return hmac.new(salt.encode(), _canonical(address).encode(), hashlib.sha256).hexdigest()[:16]


def seat_rows(data: dict[str, Any], salt: str) -> list[dict[str, Any]]:
    """The record of one game file per person, as the archive's manifest keeps
    it (no address: ``key`` is ``person_key``): ``{key, names, finished, won,
    ranks, in_time, missed, times}``."""
    return [{"key": person_key(addr, salt), "names": r.names, "finished": r.finished, "won": r.won,
             "ranks": r.ranks, "in_time": r.in_time, "missed": r.missed, "times": r.times}
            for addr, r in sorted(person_records([data]).items())]
