"""The game clock: deadlines, reminders, missed moves and the built-in player's seats.

A stage of the cycle (``cycle.Moderator.run_cycle`` runs it after the inbox and
before the status mails, ``clock.py``, which saves and spools what this module
decides): ``clock.run_clock`` takes every game the games index says is
due (``Bookkeeping.games_due``: its ``deadline`` column holds the game's next clock
event, ``next_event``), and ``tick`` does what is due in it at ``now``:

- a seat of the built-in player (``Player.bot``) the game waits for moves at once
  (``moderator.players.heuristic.choose``, with a generator seeded from the game's
  seed and the number of moves made: ``bot_rng``, so a replay is exact); its
  history entry says ``by: bot``;
- a player the game waits for is reminded when ``reminder_lead`` is left
  (24 hours, half the deadline when it is under 48 hours);
- at the deadline (``due``) the move is missed: with ``on_missed: bot`` the
  built-in player moves for the player and every player is told; with ``wait`` the
  game master is told and the wait starts again at the deadline (the player is
  reminded at once, with the new deadline, then once a day, and each further
  deadline is another missed move);
- whenever the deadline in force of a player changes outside a new wait (a
  vacation, the game master's commands, an outage), that player is told the new
  one (``in_force`` before and after, ``deadline_news``, ``changed_notices``;
  the end of a vacation: ``vacations_over``);
- after ``abandon_after`` missed moves in a row the seat is abandoned: the game
  master is asked for a replacement and the built-in player keeps the seat;
- a missed move is made ``settings.grace`` seconds after the deadline (``grace``).

Lateness is judged by when a mail reached the mailbox (``InboundMail.arrived``),
not by when a cycle reads it: before a mail is handled, ``clock.catch_up`` does what the
clock owed in its game by the mail's arrival, and ``late`` tells an order that came
after the automatic move made for its deadline.

Times are ``datetime`` in UTC; the game file keeps ISO 8601 text.  The engine is
never given a clock: the moderator's ``clock`` gives ``now`` (``pbem run --now``).
"""
from __future__ import annotations

import hashlib
import logging
import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable
from zoneinfo import ZoneInfo, available_timezones

from .. import i18n
from ..config import Config
from ..render.words import word
from ..store.gamefile import GameRecord, Player

log = logging.getLogger("pbem")

DAY = 86400
REMINDER_LEAD = 24 * 3600
"""Seconds before the deadline the reminder is sent (half the deadline when the
deadline is under twice this)."""
_DURATION = re.compile(r"\s*(\d{1,7})\s*(m|min|mins|minutes?|h|hours?|d|days?)\s*", re.I)


def parse_duration(text: str, *, allow_none: bool = False) -> int | None:
    """Seconds of a duration written ``90m``, ``48h``, ``3d`` (minutes, hours,
    days; also ``48 hours``, ``3 days``), or None for ``none`` when
    ``allow_none``.  Raises ValueError with a sentence naming what is accepted
    for anything else (also for a zero duration)."""
    t = str(text).strip().lower()
    if allow_none and t in ("none", "off", "no"):
        return None
    m = _DURATION.fullmatch(t)
    if not m or int(m.group(1)) == 0:
        extra = ", or none" if allow_none else ""
        raise ValueError(f"{text!r} is not a duration: write minutes, hours or days, "
                         f"e.g. 90m, 48h, 3d{extra}")
    unit = m.group(2)[0]
    return int(m.group(1)) * {"m": 60, "h": 3600, "d": DAY}[unit]


def format_duration(seconds: int) -> str:
    """``3d``, ``48h``, ``90m``: the shortest exact way ``parse_duration`` reads."""
    if seconds % DAY == 0:
        return f"{seconds // DAY}d"
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    return f"{seconds // 60}m"


def check_timezone(name: str) -> str:
    """The IANA time zone ``zoneinfo`` knows that ``name`` names, as ``zoneinfo``
    writes it (``Europe/Madrid``, ``UTC``): in any case, accents or full-width
    forms, or by a place of one zone (``europe/prague``, ``prague`` →
    ``Europe/Prague``; :func:`moderator.orders.names.timezone_named`).
    ValueError otherwise (its near matches: ``names.timezone_nearest``)."""
    from ..orders.names import timezone_named

    found = timezone_named(name)
    if found is None or found not in _zones():
        raise ValueError(f"unknown time zone {str(name).strip()!r}")
    ZoneInfo(found)
    return found


_ZONES: set[str] = set()


def _zones() -> set[str]:
    if not _ZONES:
        _ZONES.update(available_timezones())
    return _ZONES


def parse_time(text: str | None) -> datetime | None:
    """The UTC time of ISO 8601 ``text`` (a naive time is UTC), None for None or
    ``''``."""
    if not text:
        return None
    when = datetime.fromisoformat(str(text))
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


def iso(when: datetime) -> str:
    """ISO 8601 with offset, to the second: how the game file writes a time."""
    return when.astimezone(timezone.utc).isoformat(timespec="seconds")


def reminder_lead(deadline: int) -> int:
    """Seconds before the deadline the reminder goes: 24 hours, or half the
    deadline when that is under 48 hours."""
    return REMINDER_LEAD if deadline >= 2 * REMINDER_LEAD else deadline // 2


def _waiting(state: dict[str, Any], names: list[str]) -> list[str]:
    phase = state.get("phase")
    if phase == "initial":
        chosen = state.get("initial_choice") or {}
        return [n for n in names if n not in chosen]
    if phase == "play":
        return [names[int(state.get("current", 0))]]
    return []


def _due(settings: dict[str, Any], clock: dict[str, Any], p: dict[str, Any]) -> datetime | None:
    deadline = settings.get("deadline")
    since = parse_time(clock.get("since"))
    if deadline is None or since is None or settings.get("paused"):
        return None
    extended = int((clock.get("extended") or {}).get(p.get("name"), 0))  # the game master's extend
    due = since + timedelta(seconds=int(deadline) + int(clock.get("shift") or 0) + extended)
    v_from, v_until = parse_time(p.get("vacation_from")), parse_time(p.get("vacation_until"))
    if v_from is not None and v_until is not None and v_until > since:
        due += v_until - max(v_from, since)
    return due


def due(record: GameRecord, player: Player) -> datetime | None:
    """When ``player``'s move is due in ``record``'s game (UTC): the wait's start
    (``clock.since``) + ``settings.deadline`` + ``clock.shift`` + the game
    master's extension of this wait for them (``clock.extended``) + the part of
    the player's vacation after the start; None without a deadline or while the
    game is paused (``settings.paused``)."""
    return _due(record.settings, record.clock, player.to_data())


def first_due(data: dict[str, Any]) -> datetime | None:
    """The earliest deadline of the players (not the built-in player's seats) the
    game file ``data`` waits for, or None (no deadline, nobody waited for)."""
    players = data.get("players") or []
    settings, clock = data.get("settings") or {}, data.get("clock") or {}
    waiting = set(_waiting(data.get("state") or {}, [p["name"] for p in players]))
    times = [_due(settings, clock, p) for p in players if p["name"] in waiting and not p.get("bot")]
    times = [t for t in times if t is not None]
    return min(times) if times else None


def next_event(data: dict[str, Any]) -> datetime | None:
    """When the clock next has something to do in the game file ``data`` (a
    mapping of the current format): at once (the wait's start) for a seat of the
    built-in player the game waits for; else the earliest reminder or deadline of
    the players it waits for; None for a finished game or a game without a
    deadline and without such a seat.  What the games index keeps as the game's
    ``deadline``."""
    players = data.get("players") or []
    settings, clock = data.get("settings") or {}, data.get("clock") or {}
    if data.get("ended"):
        return None  # ended by the game master: the clock stands still
    times: list[datetime] = _proposal_times(data)
    if settings.get("paused"):
        return min(times) if times else None  # paused: only an agreed pause's end
    waiting = set(_waiting(data.get("state") or {}, [p["name"] for p in players]))
    since = parse_time(clock.get("since")) or datetime(1970, 1, 1, tzinfo=timezone.utc)
    for p in players:
        if p["name"] not in waiting:
            continue
        if p.get("bot"):
            times.append(since)
            continue
        when = _due(settings, clock, p)
        if when is None:
            continue
        times.append(when + timedelta(seconds=grace(settings)))  # the missed move: after the grace
        times.append(_reminder_time(settings, clock, p, when))
        back = _vacation_end_owed(clock, p)
        if back is not None:
            times.append(back)
    return min(times) if times else None


def _proposal_times(data: dict[str, Any]) -> list[datetime]:
    """When the players' proposals (``proposals``, ``moderation/proposals.py``)
    need the clock in the game file ``data``: the open proposal's answers due
    (at once for a takeback the game moved past), the end of an agreed pause
    the game is still in."""
    out = []
    for p in data.get("proposals") or []:
        if p.get("outcome") is None:
            moved = p.get("what") == "takeback" and len(data.get("history") or []) != p.get("moves")
            when = parse_time(p.get("at") if moved else p.get("due"))
        elif p.get("what") == "pause" and p.get("outcome") == "accepted" and not p.get("resumed") and \
                (data.get("settings") or {}).get("paused") == p.get("closed"):
            when = parse_time(p.get("until"))
        else:
            continue
        if when is not None:
            out.append(when)
    return out


def _vacation_end_owed(clock: dict[str, Any], p: dict[str, Any]) -> datetime | None:
    """The end of player ``p``'s (mapping) vacation when it falls in the wait under
    way (after ``clock.since``) and they were not yet told the deadline in force
    at it (``clock.vacation_told``: player name → the ``vacation_until`` told);
    else None."""
    until = parse_time(p.get("vacation_until"))
    since = parse_time(clock.get("since"))
    if until is None or since is None or until <= since:
        return None
    if (clock.get("vacation_told") or {}).get(p.get("name")) == p.get("vacation_until"):
        return None
    return until


def _reminder_time(settings: dict[str, Any], clock: dict[str, Any], p: dict[str, Any],
                   when: datetime) -> datetime:
    """When the next reminder of player ``p`` (mapping) falls, the deadline being
    ``when``: before the deadline once (``reminder_lead``; once more after a
    vacation's end: ``clock.remind_again``); in an overdue wait (policy ``wait``)
    at each missed move (the wait restarts there, with a new deadline), then a
    day after the last one; never during a vacation (at its end)."""
    lead = timedelta(seconds=reminder_lead(int(settings["deadline"])))
    if clock.get("overdue_told"):  # at the missed move (the new deadline), then a day after the last
        last = parse_time(clock.get("reminded_at"))
        since = parse_time(clock.get("since"))
        if clock.get("reminded") and last is not None and last >= since:
            at = last + timedelta(seconds=DAY)
        else:
            at = since
    elif clock.get("reminded") and p.get("name") not in (clock.get("remind_again") or []):
        return when
    else:
        at = when - lead
    v_until = parse_time(p.get("vacation_until"))
    v_from = parse_time(p.get("vacation_from"))
    if v_from is not None and v_until is not None and v_from <= at < v_until:
        at = v_until
    return at


def grace(settings: dict[str, Any]) -> int:
    """Seconds after a deadline during which an order that reached the
    mailbox is still taken, and the clock does not yet act on the missed move
    (``settings.grace``, ``pbem new --grace``; 0 when absent)."""
    return max(0, int(settings.get("grace") or 0))


def late(record: GameRecord, player: Player, arrived: datetime | None,
         action: Any = None) -> dict[str, Any] | None:
    """Whether an order of ``player`` that reached the mailbox at ``arrived``
    (UTC) came too late for the move it was written for: the clock made that
    move for them (policy ``bot``, or the seat abandoned) since their last move
    of their own, the order (``action``, a ``rules.actions`` value; None: not
    compared) is of the kind of that move (an initial investment ``Start``
    for a missed initial investment, a turn's action for a missed turn: else it
    was not written for it, and is judged as any order), and the game does not
    wait for them in a wait that started before ``arrived`` (then the order is
    for the move now asked for, on time).
    A move made before the game master gave the seat to its present player
    (``replace``) was not theirs to miss.  Returns the values of the answer:
    ``arrived``, ``due`` (the deadline that was missed), ``moved_at`` and
    ``order`` (the automatic move); None when the order is not late, or
    ``arrived`` is not known, or the move is one of a file written before the
    history kept its deadline (``due``).  Pure: reads ``record`` only."""
    if arrived is None:
        return None
    last = next((h for h in reversed(record.history) if h.get("player") == player.name), None)
    if last is None or last.get("by") != "bot" or not last.get("due"):
        return None  # their own move last, or a seat the built-in player played from the start
    if action is not None:
        from ..rules.actions import Start

        if isinstance(action, Start) != str(last.get("order", "")).startswith("start "):
            return None  # not written for the missed move (a start for a turn, or a turn's action for a start)
    moved_at = parse_time(last.get("received"))
    replaced = [parse_time(e.get("at")) for e in record.gm_log
                if str(e.get("command", "")).startswith("replace") and e.get("player") == player.name]
    if moved_at is not None and any(r is not None and r >= moved_at for r in replaced):
        return None  # the seat's previous player missed it
    since = parse_time(record.clock.get("since"))
    if player.name in record.game.waiting_for() and since is not None and since <= arrived:
        return None
    return {"arrived": arrived, "due": parse_time(last.get("due")), "moved_at": moved_at, "order": last["order"]}


def bot_rng(record: GameRecord) -> random.Random:
    """The generator of the built-in player's next move in ``record``'s game: seeded
    from the game's seed and the number of moves made (SHA-256 of both), so that
    the move, once recorded, is the one a replay of the same position would make."""
    digest = hashlib.sha256(f"pbem-bot:{record.game.seed}:{len(record.game.history)}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def bot_moves(record: GameRecord, stamp: str,
              after_move: Callable[[GameRecord, str], Any] | None = None) -> list[tuple[str, str]]:
    """Play at once the moves of the built-in player's seats (``bot``: from the
    start, or abandoned) that ``record``'s game waits for, as ``tick`` does first,
    each recorded ``by: bot`` at ``stamp`` (ISO 8601), ``after_move`` after each
    (the orders in advance: ``advance.play_queued``).  For a change of position
    outside the clock (the game master's ``undo``), so that no status mail asks an
    abandoned seat's player for a move the built-in player makes.  Returns
    ``[(name, order)]`` in the order played."""
    from ..players.heuristic import choose

    played: list[tuple[str, str]] = []
    for _ in range(1000):  # bounded, as tick
        if record.settings.get("paused") or record.ended is not None or record.game.phase == "over":
            break
        bots = [n for n in record.game.waiting_for() if record.player_by_name(n).bot]
        if not bots:
            break
        action = choose(record.game, bots[0], bot_rng(record))
        record.apply(bots[0], action, None, stamp, by="bot")
        played.append((bots[0], record.history[-1]["order"]))
        if after_move is not None:
            after_move(record, stamp)
    return played


def game_master_address(record: GameRecord, config: Config) -> str | None:
    """The game master's address (canonical), where news for them goes: the one
    given at ``pbem new --gm`` (``record.game_master["address"]``), else the
    operator's address from the configuration (``operator``), else None."""
    from ..mail.read import canonical_address

    return canonical_address(record.game_master.get("address") or config.operator) or None


@dataclass
class Notice:
    """A mail the clock sends: ``to`` (address), ``player`` (the player's name, None
    for the game master), ``name`` (its macro in ``templates/words/clock.txt``, the
    title being ``NAME_title``) and the macro's ``values``.  ``raw``: what the
    values worded for one language were made from, so that the notice can be
    worded again in another (``notice_values``: a language changed in the same
    cycle): ``due`` (the deadline, ISO 8601 UTC) for ``due_utc``/``due_local``/
    ``zone``, ``duration`` (seconds) for ``duration``, ``until`` (ISO 8601) for
    ``until``; JSON, as the spool entry keeps it."""

    to: str
    player: str | None
    name: str
    values: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        """The notice as a spool entry's ``news`` keeps it (JSON): ``notice`` (its
        macro), ``values``, ``raw``."""
        return {"notice": self.name, "values": self.values, "raw": self.raw}


def notice_values(item: dict[str, Any], player: Player) -> dict[str, Any]:
    """The values of a notice kept as ``Notice.to_data`` (``item``) worded
    again for ``player`` in the language in force: the deadline from ``raw.due``
    (``_times``), ``duration`` from ``raw.duration`` (seconds,
    ``render.when.format_duration``), ``until`` from ``raw.until`` in their time
    zone, ``news`` from ``raw.news`` (``news_raw``); the other values as they are (orders are worded by the template's
    ``order`` filter, names and numbers need no words)."""
    from ..render.when import format_duration as spoken, format_when

    values = dict(item.get("values") or {})
    raw = item.get("raw") or {}
    if raw.get("due"):
        values.update(_times(parse_time(raw["due"]), player))
    if isinstance(raw.get("duration"), int):
        values["duration"] = spoken(raw["duration"], exact=True)
    if raw.get("until"):
        values["until"] = format_when(parse_time(raw["until"]), player.timezone)
    if isinstance(raw.get("news"), list):  # the deadlines a vacation moved, in the reader's zone
        values["news"] = news_words([(str(n), parse_time(w)) for n, w in raw["news"]], player)
    if isinstance(raw.get("moves"), list) and isinstance(values.get("moves"), list):
        values["moves"] = [notice_values({"values": m, "raw": r}, player) if isinstance(m, dict) and isinstance(r, dict)
                           else m for m, r in zip(values["moves"], raw["moves"])]
    return values


@dataclass
class Tick:
    """What ``tick`` did: ``moves`` (``[(player, order text, why)]``, why ``bot``
    for a seat of the built-in player or ``missed``), ``notices`` to send, and
    ``changed`` (the record must be saved)."""

    moves: list[tuple[str, str, str]] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    changed: bool = False


def _times(when: datetime | None, player: Player, language: str | None = None) -> dict[str, Any]:
    """The values by which notices name a deadline: ``due_utc`` and, when the
    player set a time zone, ``due_local`` and ``zone``; formatted for ``language``
    (default: the language in force; ``render.when.format_when``)."""
    from ..render.when import format_when, zone_of

    if when is None:
        return {"due_utc": None, "due_local": None, "zone": None}
    out = {"due_utc": format_when(when, None, language), "due_local": None, "zone": None}
    if zone_of(player.timezone) is not None:
        out["due_local"] = format_when(when, player.timezone, language)
        out["zone"] = player.timezone
    return out


def deadline_values(record: GameRecord, player: Player) -> dict[str, Any]:
    """For the status mail of ``player``: ``{due_utc, due_local, zone, waiting}``
    when the game waits for ``player`` and has a deadline (else ``due_utc`` None),
    ``waiting``: whether it waits for them."""
    waiting = player.name in record.game.waiting_for()
    when = due(record, player) if waiting and not player.bot else None
    return {**_times(when, player), "waiting": waiting}


def _expected(record: GameRecord, language: str) -> str:
    """What the game waits for, as the reminder names it, in ``language``."""
    with i18n.speaking(language):
        return word("language", "expected", initial=record.game.phase == "initial")


def _humans(record: GameRecord) -> list[Player]:
    """The players the clock's announcements go to: those with an address who did
    not resign or were not ejected (they get no mail but the final result)."""
    return [p for p in record.players if p.address and p.name not in record.resigned]


def tick(record: GameRecord, now: datetime, config: Config,
         after_move: Callable[[GameRecord, str], Any] | None = None) -> Tick:
    """Do in ``record``'s game what the clock owes at ``now`` (UTC): the moves of
    the built-in player's seats, reminders, missed deadlines, abandoned seats (see
    the module).  Changes ``record`` (not saved); returns the ``Tick``.  Never
    raises for a game in any state (a finished game: nothing to do).
    ``after_move(record, stamp)`` is called after each move it makes (the
    orders in advance whose turn comes then: ``advance.play_queued``)."""
    from ..players.heuristic import choose  # only when a move is made

    out = Tick()
    if record.settings.get("paused") or record.ended is not None:
        return out  # paused or ended by the game master
    gm = game_master_address(record, config)
    stamp = iso(now)

    def move(name: str, why: str, when: datetime | None = None) -> None:
        action = choose(record.game, name, bot_rng(record))
        record.apply(name, action, None, stamp, by="bot")
        if when is not None:  # a missed move: the deadline it missed (``late``)
            record.history[-1]["due"] = iso(when)
        out.changed = True
        order = record.history[-1]["order"]
        if why == "bot" and record.player_by_name(name).abandoned:
            # an abandoned seat (not one of the built-in player's from the start): told why it moved
            from ..rules.notation import public_order

            for q in _humans(record):
                if q.name in record.digest and q.name != name:
                    continue
                shown = order if q.name == name else public_order(order, record.game.phase != "initial")
                out.notices.append(Notice(q.address, q.name, "abandoned_move",
                                          {"player": name, "order": shown, "you": q.name == name}))
        if why == "missed":
            from ..rules.notation import public_order

            for q in _humans(record):
                if q.name in record.digest and q.name != name:
                    continue  # digest on: another player's automatic move does not concern them
                shown = order if q.name == name else public_order(order, record.game.phase != "initial")
                # the deadline that passed, in the reader's words (``raw``: worded again in another)
                passed = _times(when, q, record.language_of(q)) if when is not None else {}
                out.notices.append(Notice(q.address, q.name, "automatic_move",
                                          {"player": name, "order": shown, "you": q.name == name, **passed},
                                          {"due": iso(when)} if when is not None else {}))
        out.moves.append((name, order, why))
        if after_move is not None:
            after_move(record, stamp)

    for _ in range(1000):  # bounded: each pass makes a move or restarts a wait
        waiting = record.game.waiting_for()
        bots = [n for n in waiting if record.player_by_name(n).bot]
        if bots:
            move(bots[0], "bot")
            continue
        overdue = []
        for name in waiting:
            p = record.player_by_name(name)
            when = due(record, p)
            if when is not None and now >= when + timedelta(seconds=grace(record.settings)):
                overdue.append((p, when))
        if not overdue:
            break
        waits = []
        for p, when in overdue:
            p.missed += 1
            out.changed = True
            if p.missed >= int(record.settings.get("abandon_after") or 0) > 0:
                p.abandoned = True
                p.bot = True
                for q in _humans(record):
                    out.notices.append(Notice(q.address, q.name, "abandoned",
                                              {"player": p.name, "missed": p.missed}))
                if gm:
                    # offered to the substitute pool unless the game's policy is none (moderation/vacancy.py)
                    pool = (record.settings.get("substitutes")
                            or (record.signup or {}).get("substitutes") or "auto") != "none"
                    out.notices.append(Notice(gm, None, "gm_abandoned",
                                              {"player": p.name, "missed": p.missed, "game_id": record.id,
                                               "pool": pool}))
            elif record.settings.get("on_missed", "bot") == "wait":
                waits.append((p, when))
                if gm:
                    out.notices.append(Notice(gm, None, "gm_missed", {
                        "player": p.name, "missed": p.missed, "game_id": record.id,
                        "due_utc": _times(when, p, i18n.DEFAULT)["due_utc"]}))
        waiting_names = {p.name for p, _when in waits}
        for p, when in overdue:  # policy bot, and abandoned seats: the built-in player moves
            if p.name not in waiting_names and p.name in record.game.waiting_for():
                move(p.name, "missed", when)
        if waits:  # policy wait: no move; the wait starts again at the deadline
            # the others the game waits for (the initial investments) keep their deadline
            keep = {q: due(record, record.player_by_name(q)) for q in record.game.waiting_for()
                    if q not in waiting_names and not record.player_by_name(q).bot}
            # the player is reminded at once (the deadline in force changed), then once a day
            record.clock.update(since=iso(max(w for _p, w in waits)), shift=0, reminded=False,
                                overdue_told=True)
            record.clock.pop("extended", None)  # the extension is in the deadline the wait restarts at
            for q, old in keep.items():
                base = due(record, record.player_by_name(q))
                if old is not None and base is not None and base != old:
                    record.clock.setdefault("extended", {})[q] = int((old - base).total_seconds())
    told = dict(record.clock.get("vacation_told") or {})
    out.notices.extend(vacations_over(record, now))
    out.changed = out.changed or told != (record.clock.get("vacation_told") or {})
    _remind(record, now, out, told=bool(gm))
    out.notices = _one_per_reader(out.notices)
    return out


def _one_per_reader(notices: list[Notice]) -> list[Notice]:
    """``notices`` with the automatic moves of one tick told to each reader in one
    mail: two or more ``automatic_move`` notices to one address become one
    ``automatic_moves`` (values ``moves``: their values, in order, and
    ``players``: the names moved for), in the place of the first; the others
    stay as they are."""
    moves: dict[str, list[Notice]] = {}
    for n in notices:
        if n.name == "automatic_move":
            moves.setdefault(n.to, []).append(n)
    out = []
    for n in notices:
        told = moves.get(n.to, [])
        if n.name != "automatic_move" or len(told) < 2:
            out.append(n)
        elif n is told[0]:
            out.append(Notice(n.to, n.player, "automatic_moves", {
                "moves": [m.values for m in told], "players": ", ".join(m.values["player"] for m in told)},
                {"moves": [m.raw for m in told]}))
    return out


def _at_the_deadline(record: GameRecord, p: Player) -> dict[str, Any]:
    """What the reminder of player ``p`` says happens when the deadline passes
    without a move (``tick``'s rules): ``then`` is ``abandon`` when this miss
    makes ``abandon_after`` in a row (the seat is abandoned and the built-in
    player moves), else the game's ``on_missed``: ``bot`` (the built-in player
    moves for them) or ``wait`` (no move, the game master is told); with
    ``abandon_after``."""
    after = int(record.settings.get("abandon_after") or 0)
    if 0 < after <= p.missed + 1:
        then = "abandon"
    else:
        then = "wait" if record.settings.get("on_missed", "bot") == "wait" else "bot"
    return {"then": then, "abandon_after": after, "left": max(0, after - p.missed) if after else 0}


def _remind(record: GameRecord, now: datetime, out: Tick, told: bool = True) -> None:
    """The reminders owed at ``now`` to the players the game waits for; ``told``:
    whether the game has a game master (or operator) to tell of a missed move
    (``game_master_address``), so that the reminder says only what happens."""
    deadline = record.settings.get("deadline")
    if deadline is None:
        return
    clock = dict(record.clock)  # as before this cycle's reminders: one wait, all its players
    for name in record.game.waiting_for():
        p = record.player_by_name(name)
        if p.bot or not p.address:
            continue
        when = due(record, p)
        if when is None or now >= when:
            continue
        again = name in (clock.get("remind_again") or [])
        at = _reminder_time(record.settings, clock, p.to_data(), when)
        if now < at or (clock.get("reminded") and not clock.get("overdue_told") and not again):
            continue
        language = record.language_of(p)
        out.notices.append(Notice(p.address, p.name, "reminder", {
            **_times(when, p, language), "expected": _expected(record, language), "overdue": bool(record.clock.get("overdue_told")),
            "missed": p.missed, "gm": told, **_at_the_deadline(record, p)}, {"due": iso(when)}))
        record.clock["reminded"] = True
        record.clock["reminded_at"] = iso(now)
        if again:
            record.clock["remind_again"] = [n for n in record.clock["remind_again"] if n != name]
        out.changed = True


def in_force(record: GameRecord) -> dict[str, datetime | None]:
    """The deadline in force (``due``, UTC; None: no deadline runs, e.g. paused)
    of each player the game waits for, not the built-in player's seats: the
    ``before`` of ``deadline_news`` and ``changed_notices``."""
    if record.ended is not None:
        return {}
    out: dict[str, datetime | None] = {}
    for name in record.game.waiting_for():
        p = record.player_by_name(name)
        if not p.bot:
            out[name] = due(record, p)
    return out


def deadline_news(record: GameRecord, before: dict[str, datetime | None],
                  reader: Player | None) -> str:
    """The sentences, in the language in force, that tell ``reader`` (None: an
    observer or the game master, UTC only) every deadline of ``in_force(record)``
    that differs from ``before`` (``in_force`` earlier): their own as ``Your move
    is now due by ...`` (``deadline_now`` of ``templates/words/clock.txt``),
    another player's as ``NAME's move is now due by ...`` (``deadline_other``),
    both in UTC and in the reader's time zone; ``''`` when none changed.  A
    deadline that ends (None: a pause, ``deadline none``) is not named: the
    command's own words say so.  The one place where a change of the instant by
    which a player must move is worded for a reader (``news_words``)."""
    return news_words(changed_deadlines(record, before), reader)


def changed_deadlines(record: GameRecord, before: dict[str, datetime | None]) -> list[tuple[str, datetime]]:
    """``[(seat, new deadline)]`` of ``in_force(record)`` that differ from
    ``before`` and are not None (what ``deadline_news`` tells), in seat order."""
    return [(name, when) for name, when in in_force(record).items()
            if when is not None and before.get(name) != when]


def news_raw(record: GameRecord, before: dict[str, datetime | None]) -> list[list[str]]:
    """``changed_deadlines`` as a notice's ``raw`` keeps it (``[[seat, ISO
    time]]``), so that ``notice_values`` words the news again for a reader who
    changed their zone or language in the same cycle."""
    return [[name, iso(when)] for name, when in changed_deadlines(record, before)]


def news_words(changed: list[tuple[str, datetime]], reader: Player | None) -> str:
    """``deadline_news``'s sentences for ``changed`` (``changed_deadlines``)."""
    parts = []
    for name, when in changed:
        if reader is not None and reader.name == name:
            parts.append(word("clock", "deadline_now", **_times(when, reader)))
        else:
            seen_by = reader if reader is not None else Player(name="", address="", secret="")  # UTC only
            parts.append(word("clock", "deadline_other", player=name, **_times(when, seen_by)))
    return " ".join(parts)


def changed_notices(record: GameRecord, before: dict[str, datetime | None], name: str,
                    values: dict[str, Any] | None = None) -> list[Notice]:
    """The clock's notices ``name`` (a macro of ``templates/words/clock.txt`` taking
    the deadline values of ``_times``) to each player whose deadline in force
    differs from ``before`` (``in_force`` earlier) and is not None, with the new
    deadline in UTC and their time zone (and ``values``); rendered in their
    language by ``_mails``."""
    out = []
    for pname, when in in_force(record).items():
        p = record.player_by_name(pname)
        if when is None or before.get(pname) == when or not p.address or pname in record.resigned:
            continue
        out.append(Notice(p.address, p.name, name, {**(values or {}), **_times(when, p, record.language_of(p))},
                          {"due": iso(when)}))
    return out


def vacations_over(record: GameRecord, now: datetime) -> list[Notice]:
    """At the end of the vacation of a player the game waits for (it ended by
    ``now`` within the wait under way, not yet told): the notice
    ``vacation_over`` with the deadline in force, and the reminder schedule
    starts again for them (``clock.remind_again``: the reminder before the
    deadline is owed once more, unless the deadline is that close already; then
    this notice is their reminder).  Marks them told (``clock.vacation_told``).
    Changes ``record`` when it returns notices."""
    out = []
    if record.settings.get("paused") or record.ended is not None:
        return out
    for name in record.game.waiting_for():
        p = record.player_by_name(name)
        back = _vacation_end_owed(record.clock, p.to_data())
        if p.bot or back is None or back > now:
            continue
        record.clock.setdefault("vacation_told", {})[name] = p.vacation_until
        when = due(record, p)
        if when is None or not p.address:
            continue
        deadline = record.settings.get("deadline")
        if when - timedelta(seconds=reminder_lead(int(deadline))) > now:
            again = record.clock.setdefault("remind_again", [])
            if name not in again:
                again.append(name)
        out.append(Notice(p.address, p.name, "vacation_over", _times(when, p, record.language_of(p)),
                          {"due": iso(when)}))
    return out


def shift_for_outage(record: GameRecord, last: datetime, now: datetime) -> bool:
    """Move the deadline of the current wait by the outage ``now - last`` (the
    moderator completed no cycle since ``last``) when a deadline of a player the
    game waits for fell during it.  Returns whether it moved."""
    gap = now - last
    for name in record.game.waiting_for():
        p = record.player_by_name(name)
        when = due(record, p)
        if when is not None and not p.bot and last < when <= now:
            record.clock["shift"] = int(record.clock.get("shift") or 0) + int(gap.total_seconds())
            return True
    return False


def extend_for_held_mail(record: GameRecord, held: dict[str, Any], now: datetime) -> Tick:
    """Do not let the time run against players whose mails the SMTP server
    could not take (its sending limit, an outage): ``held`` is the game's
    ``Bookkeeping.mail_held`` entry (``since``, ``players``, ``shifted``,
    maybe ``delivered``).  When the game waits for one of ``players`` (not a
    seat of the built-in player) and has a deadline, the wait's deadline moves
    by the time from ``since`` to ``delivered`` (or to ``now`` while the mail
    still waits), as for an outage of the moderator (``shift_for_outage``);
    ``held["since"]`` becomes that time, ``held["shifted"]`` adds it up.  Once
    ``delivered``, each such player is told the new deadline in force
    (``mail_delayed`` in ``templates/words/clock.txt``) when it moved.  Changes
    ``record`` and ``held``; returns a ``Tick`` (``changed``, ``notices``)."""
    out = Tick()
    start = parse_time(held.get("since")) or now
    end = parse_time(held.get("delivered")) or now
    seconds = max(0, int((end - start).total_seconds()))
    names = set(held.get("players") or [])
    waited = [record.player_by_name(n) for n in record.game.waiting_for() if n in names]
    waited = [p for p in waited if p is not None and not p.bot and p.address and due(record, p) is not None]
    if record.ended is not None or record.game.phase == "over":
        waited = []
    if waited and seconds:
        record.clock["shift"] = int(record.clock.get("shift") or 0) + seconds
        held["shifted"] = int(held.get("shifted") or 0) + seconds
        out.changed = True
    held["since"] = iso(end)
    if held.get("delivered") and waited and held.get("shifted"):
        for p in waited:
            language = record.language_of(p)
            from ..render.when import format_duration

            out.notices.append(Notice(p.address, p.name, "mail_delayed", {
                **_times(due(record, p), p, language),
                "duration": format_duration(int(held["shifted"]), language, exact=True)},
                {"due": iso(due(record, p)), "duration": int(held["shifted"])}))
    return out


