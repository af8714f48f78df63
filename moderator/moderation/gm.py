"""The game master: their commands by mail and on the command line (``pbem gm``).
The players' seat commands (``resign``, ``digest``) are in ``seats``, observers'
mails in ``observers``, the notices to everyone and the game master's token in
``announce`` (their names stay importable from here).

Every game has a game master (``GameRecord.game_master``: ``address`` None means
the operator's address from the configuration, ``config.operator``; ``secret``
proves a mail is theirs, as a player's secret does).  A game master's mail
carries their address and secret; each line is one command (``parse_gm``)::

    pause [reason ...]     resume                 deadline 72h | deadline none
    extend Ann 24h         eject Ann              replace Ann Dora=dora@example.org
    undo 2 [force] [reason ...]                   end [reason ...]
    message TEXT           observe ADDRESS
    mute Ann               unmute Ann             (press: moderation/press.py)

``pbem gm GAME COMMAND ...`` runs the same commands (``Moderator.manage``).
``execute`` carries one out on a loaded, locked game: it changes the record,
appends an entry ``{by, at, command, ...}`` to ``record.gm_log`` (the game
file's ``gm_log``, docs/game-file.md) and spools the announcements; a refusal
raises ``GmRefusal`` (a name of ``templates/words/gm.txt``) with the game
unchanged.  ``undo`` replays the history without its last N actions
(``store.gamefile.replay``'s way: the strict notation through the engine), so
that the game is exactly the game that never had them.
"""
from __future__ import annotations

import getpass
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .. import i18n
from ..mail.read import OrderMail, canonical_address, is_reply_header, player_address
from ..orders.lexicon import fold
from ..render import render
from ..render.words import word
from ..rules.engine import Game
from ..rules.notation import parse_action, public_order
from ..store.gamefile import GameRecord, GameStore, Player, default_clock, new_secret
from ..config import Config
from . import faults, vacancy
from .deadlines import deadline_news, format_duration, game_master_address, in_force, parse_duration, parse_time
from ..render.when import format_duration as spoken_duration, number
from ..render.orders import localize
from .interpret import MAX_ORDER_LINES
from .send import Post, thread_of
# the game master's notices, observers' mails and the seat commands live below gm; their names
# stay importable from here
from .announce import Say, _said, _to_player, gm_token, tell_everyone  # noqa: F401
from .observers import drop_unsent_status, observer_mail, receives_status  # noqa: F401
from .seats import RESIGN_WINDOW, SEAT_COMMANDS, seat_answer, seat_command  # noqa: F401

log = logging.getLogger("pbem")

GM_COMMANDS = ("pause", "resume", "deadline", "extend", "replace", "eject", "undo", "end", "message", "observe",
               "mute", "unmute")
"""The game master's commands (the first word of a line of their mail)."""

AFTER_THE_END = ("undo", "message", "observe", "mute", "unmute")
"""The game master's commands that still act once the game is over (the final
dividend paid): the others (seats, clock, ``end``) would change nothing."""


class GmError(ValueError):
    """A game master's line that is no command: ``code`` names why (a macro of
    ``templates/words/gm.txt``), ``values`` its values."""

    def __init__(self, code: str, **values: Any):
        super().__init__(code)
        self.code = code
        self.values = values

    def text(self) -> str:
        """The worded reason (``templates/words/gm.txt``)."""
        return word("gm", self.code, **self.values)


class GmRefusal(GmError):
    """A game master's command that cannot be done now (the game is unchanged)."""


@dataclass(frozen=True)
class GmCommand:
    """One game-master command: ``name`` (of ``GM_COMMANDS``), ``args`` (the
    words after it: ``replace`` SEAT NAME ADDRESS; ``undo`` N; ``deadline``
    SECONDS or ``none``; ``extend`` SEAT SECONDS; ``eject`` SEAT; ``message``
    and ``observe`` their text), ``force`` (``undo ... force``), ``reason`` (the
    free text after ``undo N``, ``pause`` or ``end``)."""

    name: str
    args: tuple[str, ...] = ()
    force: bool = False
    reason: str = ""

    @property
    def text(self) -> str:
        """The canonical text, as recorded in ``gm_log`` (``command``)."""
        if self.name == "replace":
            return f"replace {self.args[0]} {self.args[1]}={self.args[2]}"
        if self.name == "undo":
            return f"undo {self.args[0]}" + (" force" if self.force else "")
        if self.name == "deadline":
            return "deadline " + (format_duration(int(self.args[0])) if self.args[0] != "none" else "none")
        if self.name == "extend":
            return f"extend {self.args[0]} {format_duration(int(self.args[1]))}"
        return " ".join([self.name, *self.args])


def parse_gm(line: str) -> GmCommand:
    """The game-master command on ``line`` (case of the command word ignored).
    Raises GmError: ``gm_unknown`` (no such command), ``gm_usage`` (its
    arguments are wrong; values: ``command``).  A line of a reply header block
    (``Message du : 12/03/2024 10:15``, ``De : ...``; ``read.is_reply_header``)
    is never a command: ``gm_unknown``."""
    words = line.strip().split()
    if not words or is_reply_header(line):
        raise GmError("gm_unknown", line=line)
    name, rest = fold(words[0]).strip(":"), words[1:]  # any case and width: "ＰＡＵＳＥ", "Undo"
    tail = line.strip()[len(words[0]):].strip()
    if name not in GM_COMMANDS:
        raise GmError("gm_unknown", line=line)
    if name in ("end", "pause"):
        return GmCommand(name, reason=tail)
    if name == "resume":
        return GmCommand("resume")
    if name in ("eject", "mute", "unmute"):
        if len(rest) != 1:
            raise GmError("gm_usage", command=name)
        return GmCommand(name, (rest[0],))
    if name == "deadline":
        if len(rest) != 1:
            raise GmError("gm_usage", command=name)
        try:
            seconds = parse_duration(rest[0], allow_none=True)
        except ValueError:
            raise GmError("gm_bad_duration", text=rest[0], allow_none=True) from None
        return GmCommand("deadline", ("none" if seconds is None else str(seconds),))
    if name == "extend":
        if len(rest) != 2:
            raise GmError("gm_usage", command=name)
        try:
            seconds = parse_duration(rest[1])
        except ValueError:
            raise GmError("gm_bad_duration", text=rest[1], allow_none=False) from None
        return GmCommand("extend", (rest[0], str(seconds)))
    if name == "message":
        if not tail:
            raise GmError("gm_usage", command=name)
        return GmCommand("message", (tail,))
    if name == "observe":
        if len(rest) != 1:
            raise GmError("gm_usage", command=name)
        return GmCommand("observe", (rest[0],))
    if name == "replace":
        if len(rest) != 2 or rest[1].count("=") != 1:
            raise GmError("gm_usage", command=name)
        new_name, address = (x.strip() for x in rest[1].split("="))
        if not new_name or not address:
            raise GmError("gm_usage", command=name)
        return GmCommand("replace", (rest[0], new_name, address))
    # undo N [force] [reason ...]
    if not rest or not re.fullmatch(r"\d{1,6}", rest[0]):
        raise GmError("gm_usage", command=name)
    force = len(rest) > 1 and rest[1].lower() in ("force", "--force")
    reason = " ".join(rest[2:] if force else rest[1:])
    return GmCommand("undo", (str(int(rest[0])),), force=force, reason=reason)


def looks_like_gm(line: str) -> bool:
    """Whether a player's line is a game-master command (``parse_gm`` reads it)
    written as one, not prose that opens with a command word: such a line is
    refused with ``gm_only``, not read as an order.  The commands of free text
    count alone or with a colon (``pause``, ``end: ...``, ``message: ...``, not
    "Message me if you need anything", "End of story"); ``undo N [force]``
    without more words ("Undo 2 would be nice" is prose); ``observe`` with an
    address; ``resume`` alone.  ``eject``, ``deadline``, ``extend`` and
    ``replace`` are checked by ``parse_gm`` itself (a seat, durations, NAME=ADDRESS)."""
    try:
        cmd = parse_gm(line)
    except GmError:
        return False
    words = line.strip().rstrip(".!").split()
    head = words[0].rstrip(":") if words else ""
    colon = bool(words) and (words[0].endswith(":") or (len(words) > 1 and words[1].startswith(":")))
    if cmd.name in ("end", "pause", "message"):
        return len(words) == 1 or colon
    if cmd.name == "undo":
        return not cmd.reason
    if cmd.name == "observe":
        return "@" in cmd.args[0]
    if cmd.name == "resume":
        return len(words) == 1 and bool(head)
    return True


# ---------------------------------------------------------------- who is who


def ensure_gm_secret(record: GameRecord) -> bool:
    """Give the game master a secret if the file had none (older files); returns
    whether it did (then save the record)."""
    if record.game_master.get("secret"):
        return False
    record.game_master["secret"] = new_secret()
    return True


def in_game_addresses(record: GameRecord, config: Config) -> set[str]:
    """Every address that has a part in the game: players, observers, game master."""
    out = {canonical_address(p.address) for p in record.players if p.address}
    out |= {canonical_address(a) for a in record.observers}
    gm = game_master_address(record, config)
    if gm:
        out.add(gm)
    return out


# ---------------------------------------------------------------- mails


def _for_gm(record: GameRecord, text: str, before: dict[str, datetime | None]) -> str:
    """The game master's confirmation ``text`` and the deadlines the command
    changed (UTC; ``deadlines.deadline_news``)."""
    news = deadline_news(record, before, None)
    return f"{text} {news}" if news else text


def _status_to_all(post: Post, record: GameRecord, event: Say, after: list = ()) -> None:
    """A fresh status mail to every player who gets mail, and to the observers,
    with ``event`` on top (the position changed outside the order flow: undo),
    each in their language; older unsent status mails of the game that may be
    merged are dropped (not those ``owed``: see ``owe_unsent``).  The mails are
    ``owed`` themselves (their event is in no game log: never merged into a
    later status mail); like every mail of a command they name the ``batch``
    of the save that records it (``execute``).  ``after``: the game's events
    that followed at once (the built-in player's moves), told below ``event``."""
    from .notify import _meta_events, status_mail

    marks = {"owed": "undo"}
    for p in record.players:
        for e in post.spool.stale_status(record.id, p.name):
            post.spool.remove(e.name)
        if not p.address or p.name in record.resigned:
            continue
        with i18n.speaking(record.language_of(p)):
            told = _said(event)
        post.put(status_mail(post, record, p, [told, *after]), kind="status", game=record.id, player=p.name,
                 events=[told, *_meta_events(list(after))], log_from=len(record.game.events), replaces=[],
                 **marks)
    for address in record.observers:
        with i18n.speaking(record.language):
            told = _said(event)
        post.put(observer_mail(post, record, address, [told, *after]), kind="observer", game=record.id,
                 **marks)


def owe_unsent(post: Post, record: GameRecord) -> list[tuple[str, dict[str, Any]]]:
    """Mark ``owed`` every unsent status and observer mail of ``record``'s game
    whose save happened (``log_to`` within the game's log as loaded; one spooled
    before a save that did not happen is left to ``notify.sweep``), before an
    undo takes events back: they are sent as they are, each player's view with
    their own private lines, never merged into a later mail nor dropped by
    ``sweep`` for telling events the game file no longer has; a retry time
    is dropped (they go with the next sending, before the undo's notice).
    Returns the entries marked ``[(name, meta)]``, oldest first.  Raises OSError."""
    from . import spooled

    view = spooled.view(post.spool)
    length = len(record.game.events)
    marked = []
    for name, meta in view.entries():
        if meta.get("game") != record.id or meta.get("kind") not in ("status", "observer") or meta.get("owed"):
            continue
        if isinstance(meta.get("log_to"), int) and meta["log_to"] > length:
            continue  # its save did not happen: ``sweep`` drops it
        try:
            # due at once: sent before the undo's notice, which is spooled after it
            marked.append((name, post.spool.update_meta(name, owed="undo", next_try=None)))
        except FileNotFoundError:
            continue  # sent meanwhile
        finally:
            view.forget(name)
    return marked


# ---------------------------------------------------------------- commands


def _seat(record: GameRecord, name: str) -> Player:
    """The seat ``name`` names, regardless of case, accents and full-width forms
    (``zoe`` is ``Zoë``; ``names.find``); GmRefusal ``gm_no_such_player`` listing
    the players, the nearest first, otherwise."""
    from ..orders.names import find, nearest

    by_name = {p.name: p for p in record.players}
    hit = find(name, list(by_name))
    if hit is not None:
        return by_name[hit]
    near = nearest(name, list(by_name))
    order = near + [p.name for p in record.players if p.name not in near]
    raise GmRefusal("gm_no_such_player", player=name, players=", ".join(order))
    raise GmRefusal("gm_no_such_player", player=name, players=", ".join(p.name for p in record.players))


def _named(cmd: GmCommand, seat: Player) -> str:
    """``cmd``'s canonical text with the seat's name as the game spells it."""
    return GmCommand(cmd.name, (seat.name, *cmd.args[1:]), cmd.force, cmd.reason).text


def undo_limits(record: GameRecord) -> tuple[int, int]:
    """``(all, safe)``: how many actions ``undo`` can take back (the whole
    history), and how many without ``force`` (those since the last dividend)."""
    g = record.game
    counts = _dividends_after_each(record)
    safe = 0
    for c in reversed(counts[:-1]):
        if c != g.dividends_paid:
            break
        safe += 1
    return len(record.history), safe


def _dividends_after_each(record: GameRecord) -> list[int]:
    """Dividends paid after 0, 1, ..., all actions of the history (one replay)."""
    g = record.game
    game = Game.new(g.board, [p.name for p in record.players], g.seed, g.ruleset, dict(g.options))
    out = [game.dividends_paid]
    for h in record.history:
        game.push(h["player"], parse_action(h["order"]))
        out.append(game.dividends_paid)
    return out


def replay_prefix(record: GameRecord, n: int) -> Game:
    """The game of ``record`` replayed without its last ``n`` actions (the strict
    notation through the engine, as a game file is replayed)."""
    g = record.game
    game = Game.new(g.board, [p.name for p in record.players], g.seed, g.ruleset, dict(g.options))
    for h in record.history[:len(record.history) - n]:
        game.push(h["player"], parse_action(h["order"]))
    return game


@dataclass
class Context:
    """Who does a command (``by``: an address, or ``command line (USER)``), when
    (``at``, ISO 8601), and the mail and line it came in (``mail``: its key, or
    None)."""

    post: Post
    store: GameStore
    record: GameRecord
    by: str
    at: str
    mail: str | None = None
    line: int | None = None
    voice: str = "gm"
    """The words file (``templates/words/VOICE.txt``) whose macros of the same
    names word the command's notices to players (``undone``, ``ended``,
    ``paused``, ``resumed``, ``deadline_set`` and their titles): ``gm``, or
    ``proposals`` for a proposal the players agreed on (``proposals.py``)."""
    newcomer_language: str | None = None
    """``replace``: the newcomer's own language (a code of ``i18n.LANGUAGES``;
    None: the game's), as the substitute pool knows it (``moderation/pool.py``)."""
    voiced: dict[str, Any] = field(default_factory=dict)
    """The values the macros of a ``voice`` other than ``gm`` take besides the
    game master's (``proposals``: ``proposer``, ``number``, ``length``)."""

    def word(self, name: str, **values: Any) -> str:
        """The notice ``name`` in the command's ``voice`` (the language in force)."""
        if self.voice == "gm":
            return word("gm", name, **values)
        return word(self.voice, name, **values, **self.voiced)


def execute(ctx: Context, cmd: GmCommand) -> str:
    """Carry out ``cmd`` on ``ctx.record`` (loaded and locked by the caller), save
    the game file, spool the announcements; returns the confirmation for the game
    master (``templates/words/gm.txt``).  Raises GmRefusal with the game
    unchanged; OSError when the file cannot be saved."""
    record = ctx.record
    if record.ended is not None:
        raise GmRefusal("gm_game_ended")
    if record.game.phase == "over" and cmd.name not in AFTER_THE_END:
        raise GmRefusal("gm_game_over", command=cmd.name)
    entry: dict[str, Any] = {"by": ctx.by, "at": ctx.at, "command": cmd.text}
    if ctx.mail:
        entry["mail"], entry["line"] = ctx.mail, ctx.line
    # every mail the command spools names the batch of the save below: a kill
    # before that save leaves announcements of a change that did not happen,
    # which notify.sweep drops (their batch is beyond the file's mail_batch)
    batch, puts = record.mail_batch + 1, ctx.post.puts
    ctx.post.tags["batch"] = batch
    try:
        done = _COMMANDS[cmd.name](ctx, cmd, entry)
    finally:
        ctx.post.tags.pop("batch", None)
    if ctx.post.puts > puts:
        record.mail_batch = batch
    record.gm_log.append(entry)
    faults.fault("gm-spooled")  # the command's mails spooled, the game not saved
    ctx.store.save(record)
    if cmd.name == "eject":  # the seat's player gets no status mail spooled before
        drop_unsent_status(ctx.post, record, entry["player"])
    return done


def _replace(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    from .notify import status_mail

    record, post = ctx.record, ctx.post
    seat = _seat(record, cmd.args[0])
    try:
        address = player_address(cmd.args[2])
    except ValueError:
        raise GmRefusal("gm_bad_address", address=cmd.args[2]) from None
    if address in in_game_addresses(record, ctx.post.config):
        raise GmRefusal("gm_address_in_game", address=address)
    name = cmd.args[1]
    old = seat.address
    # the old player's calendar still shows the deadline of this seat's move: cancelled in a
    # last notice to them (same UID, SEQUENCE one higher), worded for them, before the seat changes
    farewell = _farewell_of(post, record, seat)
    seat.address, seat.secret = address, new_secret()
    # a human again: the seat's clock starts afresh (not the built-in player's, not abandoned)
    seat.bot, seat.abandoned, seat.missed, seat.timezone = False, False, 0, None
    seat.language = ctx.newcomer_language if ctx.newcomer_language != record.language else None
    seat.vacation_used, seat.vacation_from, seat.vacation_until = 0, None, None
    before = in_force(record)
    if seat.name in record.game.waiting_for():
        record.clock = default_clock(ctx.at)  # the newcomer gets a whole deadline
    for names in (record.resigned, record.digest, record.calendar_off):
        if seat.name in names:
            names.remove(seat.name)
    record.resigning.pop(seat.name, None)
    sent = record.calendar.get(seat.name)
    if sent is not None:  # the newcomer's event goes above every SEQUENCE sent for the seat (same UIDs)
        sent["open"] = False
    entry.update(player=seat.name, name=name, address=address, old_address=old, command=_named(cmd, seat))
    vacancy.refill(post.bk, record.id, seat.name)  # a vacancy's offers to the pool stop (moderation/pool.py)

    def event() -> str:  # the pool's take-over says so (voice pool), not "the game master gave"
        return ctx.word("replaced", seat=seat.name, newcomer=name)

    for e in post.spool.stale_status(record.id, seat.name):
        post.spool.remove(e.name)
    if farewell is not None:
        farewell(lambda: word("gm", "replaced_title", seat=seat.name), event)
    with i18n.speaking(record.language_of(seat)):
        msg = status_mail(post, record, seat, [event()], template="welcome.txt")
    record.threads[seat.name] = str(msg["Message-ID"])
    post.put(msg, kind="welcome", game=record.id, player=seat.name)
    tell_everyone(post, record, lambda: word("gm", "replaced_title", seat=seat.name), event, skip=(seat.name,),
                  before=before)
    return _for_gm(record, event(), before)


def _farewell_of(post: Post, record: GameRecord, seat: Player):
    """What tells ``seat``'s player, as they are now (address, thread, language,
    zone), that the seat is no longer theirs, with the cancellation of the
    deadline event their mails carried (``calendar.mail_cancel``); None when no
    event of theirs is open (nothing in their calendar to take back).  Call it
    before the seat changes; the returned function ``(title, text)`` (``Say``s)
    spools the notice (``announce.farewell``)."""
    from .announce import farewell
    from .calendar import mail_cancel

    if not seat.address:
        return None
    address, thread, language = seat.address, thread_of(record, seat), record.language_of(seat)
    parts = mail_cancel(post, record, seat)
    if not parts:
        return None
    return lambda title, text: farewell(post, record, address, thread, language, title, text, parts)


def _undo(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    record = ctx.record
    n = int(cmd.args[0])
    total, safe = undo_limits(record)
    if n < 1 or n > total:
        raise GmRefusal("gm_undo_too_many", n=n, total=total, safe=safe)
    if n > safe and not cmd.force:
        raise GmRefusal("gm_undo_dividend", n=n, safe=safe)
    game = replay_prefix(record, n)
    undone = record.history[-n:]
    owed = owe_unsent(ctx.post, record)  # what players were told of and not yet sent
    if owed:
        spans = [f"{m.get('player') or 'observer'} {m['log_from'] + 1}-{m['log_to']}"
                 if isinstance(m.get("log_from"), int) and isinstance(m.get("log_to"), int)
                 else str(m.get("player") or "observer") for _, m in owed]
        log.info("game %s: undo %d: %d status mail(s) not yet sent (events: %s) are sent as they are, "
                 "then the undo's notice", record.id, n, len(owed), ", ".join(spans))
    before = in_force(record)
    record.game = game
    record.history = record.history[:-n]
    record.notified = len(game.events)
    record.reply_to = {}
    record.clock = default_clock(ctx.at)  # the move the game now waits for: a whole deadline
    from .advance import begin, drop_all

    begin(record)
    # queued for a position that is gone: told in the status mails (a takeback the players agreed: so worded)
    dropped = drop_all(record, "undo" if ctx.voice == "gm" else "takeback")
    entry.update(reason=cmd.reason, undone=[dict(h) for h in undone])
    if dropped:
        entry["queued_dropped"] = dropped
    from .advance import play_queued
    from .deadlines import bot_moves

    # a seat of the built-in player (an abandoned one) now on move moves at once, as the
    # clock would: its player is not asked for it, and the undo's mail tells that move too
    # (a new user's check: the abandoned seat's player was asked to move)
    start = len(record.game.events)
    bot_moves(record, ctx.at, play_queued)
    after = list(record.game.events[start:])
    record.notified = len(record.game.events)
    shown = [(h["player"], public_order(h["order"], game.phase != "initial")) for h in undone]

    def event() -> str:  # the orders as the reader's language writes them
        return ctx.word("undone", n=n, orders=[f"{who}: {localize(order)}" for who, order in shown],
                        reason=cmd.reason)

    _status_to_all(ctx.post, record, event, after)
    return _for_gm(record, event(), before)


def _end(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    record = ctx.record
    standings = record.game.standings()
    record.ended = {"by": ctx.by, "at": ctx.at, "standings": [[pl, p, m] for pl, p, m in standings],
                    "reason": cmd.reason}
    entry["reason"] = cmd.reason
    def text() -> str:
        return ctx.word("ended", standings=standings, reason=cmd.reason)

    tell_everyone(ctx.post, record, lambda: ctx.word("ended_title"), text, resigned=True)
    return text()


def _message(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    n = tell_everyone(ctx.post, ctx.record, lambda: word("gm", "message_title"),
                      lambda: word("gm", "message", text=cmd.args[0]))
    return word("gm", "message_sent", n=n)


def _observe(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    record = ctx.record
    try:
        address = player_address(cmd.args[0])
    except ValueError:
        raise GmRefusal("gm_bad_address", address=cmd.args[0]) from None
    if address in in_game_addresses(record, ctx.post.config):
        raise GmRefusal("gm_address_in_game", address=address)
    record.observers.append(address)
    entry["address"] = address
    with i18n.speaking(record.language):
        text = word("gm", "observing", game_id=record.id)
    ctx.post.put(observer_mail(ctx.post, record, address, [text], welcome=True), kind="observer", game=record.id)
    return word("gm", "observer_added", address=address)


def _pause(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    record = ctx.record
    if record.settings.get("paused"):
        raise GmRefusal("gm_already_paused", since=record.settings["paused"])
    record.settings["paused"] = ctx.at
    entry["reason"] = cmd.reason
    def text() -> str:
        return ctx.word("paused", reason=cmd.reason)

    tell_everyone(ctx.post, record, lambda: ctx.word("paused_title"), text)
    return text()


def refund_paused_vacation(record, paused, now) -> dict[str, int]:
    """Give back the vacation time each player spent while the game was paused
    (from ``paused`` to ``now``, aware datetimes): no clock ran then, so those days
    are not charged to the allowance (``settings.vacation_limit``;
    docs/operations.md, "Vacations").  Changes ``vacation_used`` of the players in
    ``record``; returns ``{name: seconds given back}`` (only those > 0)."""
    given: dict[str, int] = {}
    for p in record.players:
        v_from, v_until = parse_time(p.vacation_from), parse_time(p.vacation_until)
        if v_from is None or v_until is None:
            continue
        both = int((min(v_until, now) - max(v_from, paused)).total_seconds())
        if both > 0:
            back = min(both, p.vacation_used)
            p.vacation_used -= back
            if back:
                given[p.name] = back
    return given


def _resume(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    record = ctx.record
    paused = parse_time(record.settings.get("paused"))
    if paused is None:
        raise GmRefusal("gm_not_paused")
    now, since = parse_time(ctx.at), parse_time(record.clock.get("since"))
    if since is not None and now is not None:
        # the wait under way loses nothing: its deadline moves by the pause
        start = max(paused, since)
        record.clock["shift"] = int(record.clock.get("shift") or 0) + max(0, int((now - start).total_seconds()))
        # a vacation during the pause stops no clock twice: the time both held counts once
        for p in record.players:
            v_from, v_until = parse_time(p.vacation_from), parse_time(p.vacation_until)
            if v_from is None or v_until is None or p.name not in record.game.waiting_for():
                continue
            both = int((min(v_until, now) - max(v_from, start)).total_seconds())
            if both > 0:
                extended = record.clock.setdefault("extended", {})
                extended[p.name] = int(extended.get(p.name, 0)) - both
    if now is not None:
        refund_paused_vacation(record, paused, now)
    before = in_force(record)  # paused: none runs
    record.settings["paused"] = None
    tell_everyone(ctx.post, record, lambda: ctx.word("resumed_title"), lambda: ctx.word("resumed"),
                  before=before)
    return _for_gm(record, ctx.word("resumed"), before)


def _deadline(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    record = ctx.record
    seconds = None if cmd.args[0] == "none" else int(cmd.args[0])
    record.settings["deadline"] = seconds
    # the move under way: the new deadline counts from the command, never from the past
    told = record.clock.get("vacation_told")
    record.clock = default_clock(ctx.at)
    if told:
        record.clock["vacation_told"] = told
    def text() -> str:
        return ctx.word("deadline_set", duration=spoken_duration(seconds) if seconds else None)

    # every deadline now in force is named, the ones it left where they were too
    tell_everyone(ctx.post, record, lambda: ctx.word("deadline_title"), text, before={})
    return _for_gm(record, text(), {})


def _extend(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    record = ctx.record
    seat = _seat(record, cmd.args[0])
    waiting = record.game.waiting_for()
    if seat.name not in waiting:
        raise GmRefusal("gm_not_waiting", player=seat.name, waiting=", ".join(waiting) or "nobody")
    seconds = int(cmd.args[1])
    before = in_force(record)
    extended = record.clock.setdefault("extended", {})
    extended[seat.name] = int(extended.get(seat.name, 0)) + seconds
    record.clock["reminded"] = False
    entry.update(player=seat.name, command=_named(cmd, seat))
    def text() -> str:
        return word("gm", "extended", player=seat.name, duration=spoken_duration(seconds))

    tell_everyone(ctx.post, record, lambda: word("gm", "extended_title", player=seat.name), text, before=before)
    return _for_gm(record, text(), before)


def _eject(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    record = ctx.record
    seat = _seat(record, cmd.args[0])
    if seat.bot:
        raise GmRefusal("gm_already_bot", player=seat.name)
    seat.bot = True
    if seat.name not in record.resigned:
        record.resigned.append(seat.name)  # like a resignation: no more mail but the result
    record.resigning.pop(seat.name, None)
    entry.update(player=seat.name, command=_named(cmd, seat))
    # the substitute pool is offered the seat (moderation/pool.py), unless the game's policy is none
    vacancy.vacate(ctx.post.bk, record, seat.name, "ejected", datetime.fromisoformat(ctx.at))
    def text() -> str:
        return word("gm", "ejected", player=seat.name)

    tell_everyone(ctx.post, record, lambda: word("gm", "ejected_title", player=seat.name), text)
    # the ejected player gets no more mail, but their calendar still shows their move's deadline:
    # one notice cancels it (a breaker's check)
    farewell = _farewell_of(ctx.post, record, seat)
    if farewell is not None:
        farewell(lambda: word("gm", "ejected_title", player=seat.name), text)
    return text()


def _mute(ctx: Context, cmd: GmCommand, entry: dict[str, Any]) -> str:
    """``mute NAME`` / ``unmute NAME``: the seat's messages to other players are
    not relayed / relayed again (``moderation/press.py``; ``GameRecord.muted``)."""
    from .press import mute

    seat = _seat(ctx.record, cmd.args[0])
    entry["command"], entry["player"] = _named(cmd, seat), seat.name
    on = cmd.name == "mute"
    if not mute(ctx.record, seat.name, on):
        raise GmRefusal("gm_mute_unchanged", player=seat.name, on=on)
    return word("gm", "gm_muted", player=seat.name, on=on)


_COMMANDS = {"pause": _pause, "resume": _resume, "deadline": _deadline, "extend": _extend, "eject": _eject,
             "replace": _replace, "undo": _undo, "end": _end, "message": _message, "observe": _observe,
             "mute": _mute, "unmute": _mute}


def command_line_user() -> str:
    """``by`` of a command given on the command line: ``command line (USER)``."""
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in this environment
        user = "?"
    return f"command line ({user})"


# ---------------------------------------------------------------- by mail


def manage_mail(post: Post, store: GameStore, om: OrderMail, key: str, record: GameRecord,
                at: datetime) -> None:
    """Carry out the game master's mail ``om`` (authenticated; the mail ``key``):
    each line a command, in order; answer them with what was done and what was
    refused (``templates/gm_reply.txt``).  A command of this mail done already
    (an interrupted cycle: ``gm_log`` names the mail and line) is not done again.
    A mail of more than ``MAX_ORDER_LINES`` lines is answered with how many it
    had, and none of them is done."""
    ctx = Context(post, store, record, canonical_address(om.sender), at.isoformat(timespec="seconds"), key)
    done_lines = {e.get("line") for e in record.gm_log if e.get("mail") == key}
    results, guide = [], False
    lines = om.lines
    if len(lines) > MAX_ORDER_LINES:  # none done: the work per mail is bounded (interpret.MAX_ORDER_LINES)
        results.append({"line": "", "ok": False, "text": word("limits", "gm_too_many_lines", lines=number(len(lines)),
                                                              max_lines=number(MAX_ORDER_LINES))})
        lines = []
    for i, line in enumerate(lines):
        if line.strip().strip("?!.").lower() == "help":
            guide = True
            continue
        try:
            cmd = parse_gm(line)
        except GmError as exc:
            results.append({"line": line, "ok": False, "text": exc.text()})
            continue
        if i in done_lines:
            results.append({"line": line, "ok": True, "text": word("gm", "done_before")})
            continue
        ctx.line = i
        try:
            text = execute(ctx, cmd)
        except GmRefusal as exc:
            results.append({"line": line, "ok": False, "text": exc.text()})
            continue
        results.append({"line": line, "ok": True, "text": text})
    if not results and not guide:
        results.append({"line": "", "ok": False, "text": word("gm", "gm_nothing")})
    if any(not r["ok"] for r in results):
        guide = True
    text = render("gm_reply.txt", game_id=record.id, results=results, guide=gm_help() if guide else "")
    subject = word("notices", "subject", game_id=record.id, title=word("gm", "reply_title"))
    post.put(post.answer(om, record.id, canonical_address(om.sender), subject, text, token=gm_token(record)),
             answers=key)


def gm_help() -> str:
    """The game master's guide (``templates/gm_help.txt``)."""
    return render("gm_help.txt")
