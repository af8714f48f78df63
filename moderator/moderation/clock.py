"""The clock stage of the cycle: what the game clock (``deadlines``) decides,
done: saved with its notices spooled in the same batch.

``run_clock`` takes every game the games index says is due
(``Bookkeeping.games_due``) and ``deadlines.tick``\\ s it; ``shift_outages``
moves the deadlines that fell in an outage of the moderator; ``catch_up`` does
what the clock owed in a game by a mail's arrival, before the mail is handled;
``save_with_notices`` saves a game with the clock's notices and the status
mails it owes in one spool batch.  Above ``deadlines`` (the values: durations,
deadlines in force, ``tick``), ``notify`` and ``gm`` (the game master's token),
which it uses; nothing below imports it.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from .. import i18n
from ..render.words import word
from ..store.gamefile import GameRecord
from . import advance, faults, vacancy
from .deadlines import (Notice, Tick, _one_per_reader, changed_notices, due, extend_for_held_mail, grace,
                        in_force, iso, next_event, parse_time, shift_for_outage, tick)

log = logging.getLogger("pbem")


def shift_outages(post: Any, store: Any, now: datetime, outage_since: datetime | None) -> None:
    """Before the cycle reads its mail: in every game whose next clock event fell
    in the outage since ``outage_since`` (the last successful cycle; None: no
    outage, nothing to do), move the deadline under way by the outage
    (``shift_for_outage``), save, and tell each player whose deadline moved the
    new one (``outage_moved`` of ``templates/words/clock.txt``), so that every
    mail of this cycle (the status mails of the mail read next, the clock's)
    gives the deadline in force.  A game that cannot be loaded or locked is
    left as it is (``run_clock`` meets it again and reports it) and the other
    games go on."""
    from filelock import Timeout

    from ..render.when import format_duration as spoken
    from ..store.gamefile import StoreError
    from . import notify

    if outage_since is None:
        return
    gap = int((now - outage_since).total_seconds())
    for gid in post.bk.games_due(now):
        try:
            with store.lock(gid), post.bk.transaction():
                record = notify.load(post, store, gid)
                if record.settings.get("paused") or record.ended is not None:
                    continue
                before = in_force(record)
                if not shift_for_outage(record, outage_since, now):
                    continue
                notices = changed_notices(record, before, "outage_moved")
                for n in notices:
                    with i18n.speaking(record.language_of(record.player_by_name(n.player))):
                        n.values["duration"] = spoken(gap, exact=True)
                    n.raw["duration"] = gap
                save_with_notices(post, store, record, notices, status=False)
        except (StoreError, OSError, Timeout) as exc:
            log.warning("game %s: the outage shift waits for the clock stage: %s", gid, exc or "game locked")


def run_clock(post: Any, store: Any, report: Any, now: datetime, outage_since: datetime | None = None) -> None:
    """The cycle's clock stage: ``tick`` every game whose next clock event has
    come (``Bookkeeping.games_due(now)``), each under its lock and in one
    bookkeeping transaction; save the games that changed with the clock's
    notices and the status mails of the built-in player's moves spooled in
    the same batch (``save_with_notices``: a kill at any moment doubles a mail
    at worst, never loses one).  Fault points (``faults.fault``):
    ``clock-tick`` (ticked, nothing written), ``clock-spooled``,
    ``clock-saved``, ``clock-committed`` (the game's lock and transaction
    released, nothing sent yet).
    ``outage_since``: the last successful cycle when this one ends an outage (a
    deadline that fell in it moves by its length, ``shift_for_outage``).  One
    game's error is reported in ``report.errors`` (and to the operator) and the
    other games go on."""
    import sqlite3

    from filelock import Timeout

    from ..store.gamefile import StoreError
    from . import notify

    held = post.bk.mail_held()
    games = list(post.bk.games_due(now))
    games += [g for g, entry in held.items() if entry.get("delivered") and g not in games]
    for gid in games:
        try:
            with store.lock(gid), post.bk.transaction():
                record = notify.load(post, store, gid)
                shifted = outage_since is not None and shift_for_outage(record, outage_since, now)
                waited = Tick()
                if gid in held:  # its mails waited in the spool: that time does not count
                    held = post.bk.mail_held()  # as in this transaction
                    entry = held.get(gid)
                    if entry is not None:
                        waited = extend_for_held_mail(record, entry, now)
                        if waited.changed and not entry.get("delivered"):
                            # the held status mails tell the deadline as it is when they go
                            renew_held(post, record, [n for n in record.game.waiting_for()
                                                      if n in set(entry.get("players") or [])])
                        if entry.get("delivered"):
                            del held[gid]
                        post.bk.set_mail_held(held)
                        if waited.changed:
                            log.info("game %s: its mails waited in the spool (the SMTP server's limit or "
                                     "an outage): the deadline moved by %s s in all", gid, entry.get("shifted"))
                advance.begin(record)
                abandoned = _abandoned(record)
                done = tick(record, now, post.config, advance.play_queued)
                _vacate_abandoned(post, record, abandoned, now)
                faults.fault("clock-tick")
                done.notices[:0] = waited.notices
                if done.changed or shifted or waited.changed or done.notices:
                    save_with_notices(post, store, record, done.notices, points="clock")
                else:
                    post.bk.set_deadline(gid, next_event(record.to_data()))
            faults.fault("clock-committed")  # the lock and the transaction released, nothing sent
            report.clock_moves += len(done.moves)
            report.reminders += sum(n.name == "reminder" for n in done.notices)
            for name, order, why in done.moves:
                log.info("game %s: the built-in player moved for %s (%s): %s", gid, name, why, order)
        except StoreError as exc:
            report.errors.append(str(exc))
        except (OSError, Timeout) as exc:
            report.errors.append(f"game {gid}: clock: {exc or 'game locked'}")
        except sqlite3.Error:
            raise
        except Exception as exc:  # noqa: BLE001 - one game's error must never stop the others
            log.exception("game %s: the clock failed", gid)
            report.errors.append(f"game {gid}: the clock failed: {exc!r}")
            post.tell_operator(word("notices", "alert_game_error", game=gid, problem=repr(exc)))


def _abandoned(record: GameRecord) -> set[str]:
    """The names of ``record``'s abandoned seats (``Player.abandoned``)."""
    return {p.name for p in record.players if p.abandoned}


def _vacate_abandoned(post: Any, record: GameRecord, before: set[str], when: datetime) -> None:
    """Record a vacancy for the substitute pool (``vacancy.vacate``) of each
    seat ``tick`` abandoned at ``when`` (abandoned now, not in ``before``)."""
    for name in sorted(_abandoned(record) - before):
        vacancy.vacate(post.bk, record, name, "abandoned", when)


def _owed(record: GameRecord) -> datetime | None:
    """The first instant the clock must act at in ``record``'s game (UTC): the
    start of the wait of a seat of the built-in player the game waits for,
    else the earliest deadline plus the grace of the players it waits for;
    None when nothing is owed (no deadline, paused, ended, finished)."""
    if record.settings.get("paused") or record.ended is not None:
        return None
    extra = timedelta(seconds=grace(record.settings))
    since = parse_time(record.clock.get("since"))
    times = []
    for name in record.game.waiting_for():
        p = record.player_by_name(name)
        at = since if p.bot else due(record, p)
        if at is not None:
            times.append(at if p.bot else at + extra)
    return min(times) if times else None


def renew_held(post: Any, record: GameRecord, names: list[str]) -> list[str]:
    """The unsent status mails of the players ``names`` of ``record``'s game
    made anew (``notify.restatus``: the same events and news, with the
    clock notices spooled alone to them) from the game as it is now, after
    the deadline moved for the time their mail waited in the spool
    (``extend_for_held_mail``): so the mail that finally goes says the
    deadline in force then, in its text and its calendar event (a higher
    SEQUENCE, the new DTSTART; ``calendar.calendar_parts``).  Each new mail
    names the old ones in ``replaces`` and is spooled before they are
    removed (``respeak``'s order).  Mails whose sending is under way are left
    as they are.  Returns the names of the new entries."""
    from . import notify, spooled

    view = spooled.view(post.spool)
    stale = view.stale_status(record.id)
    pending = view.pending_notices(record.id)
    mails: list[tuple[Any, dict[str, Any]]] = []
    gone: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        older = stale.get(name, [])
        if not older:
            continue
        built = notify.restatus(post, record, record.player_by_name(name), older, pending.get(name, []))
        if built is None:
            continue  # entries spooled by an older version: sent as they are
        mails.append(built)
        gone += older + pending.get(name, [])
    if not mails:
        return []
    names_new = post.spool.add_many(mails, post.clock())
    for entry, _ in gone:
        post.spool.remove(entry)
    return names_new


def catch_up(post: Any, store: Any, record: GameRecord, when: datetime, report: Any) -> bool:
    """Before a mail that reached the mailbox at ``when`` is handled (the game
    locked, in the mail's bookkeeping transaction): do what the clock owed in
    ``record``'s game by then, in time order: ``tick`` at each instant a
    deadline (with the grace) passed or a seat of the built-in player was to
    move, up to ``when`` (each automatic move stamped with its instant, not
    the cycle's); save the game when that changed it and spool the clock's
    notices, as the clock stage does.  So a mail is judged as if the clock had
    run the moment it arrived: an order that came after the built-in player's
    move for its deadline is late (``late``).  The wait after an automatic move
    starts at the cycle's time (``post.clock()``), when the mail asking for the
    next move goes.  Returns whether the clock did anything.  Raises as
    ``store.save``."""
    notices: list[Notice] = []
    moves: list[tuple[str, str, str]] = []
    changed = False
    advance.begin(record)
    for _ in range(1000):  # bounded: each pass makes a move or starts a new wait
        at = _owed(record)
        if at is None or at > when:
            break
        abandoned = _abandoned(record)
        done = tick(record, at, post.config, advance.play_queued)
        _vacate_abandoned(post, record, abandoned, at)
        notices += done.notices
        moves += done.moves
        changed = changed or done.changed
        if not done.changed:
            break
    if moves and record.history[-1].get("by") == "bot":
        # the wait for the next move starts when the mail asking for it goes: in this cycle
        since, now = parse_time(record.clock.get("since")), post.clock()
        if since is None or since < now:
            record.clock["since"] = iso(now)
    notices = _one_per_reader(notices)
    if changed or notices:
        # the notices in one batch with the save; the status mails of the moves are
        # left to the mail's own save (one status mail per player for both)
        save_with_notices(post, store, record, notices, status=False)
    report.clock_moves += len(moves)
    report.reminders += sum(n.name == "reminder" for n in notices)
    for name, order, why in moves:
        log.info("game %s: the built-in player moved for %s (%s), before a mail that arrived at %s: %s",
                 record.id, name, why, iso(when), order)
    return changed or bool(notices)


def _for_macro(name: str, values: dict[str, Any]) -> dict[str, Any]:
    """The ``values`` the macro ``name`` of ``templates/words/clock.txt`` takes."""
    from ..render import environment

    macro = getattr(environment().get_template("words/clock.txt").module, name)
    return {k: v for k, v in values.items() if k in macro.arguments}


def save_with_notices(post: Any, store: Any, record: GameRecord, notices: list[Notice],
                      points: str | None = None, status: bool = True) -> None:
    """Save ``record`` with its clock ``notices`` (``Notice``) and the status
    mails it owes (the built-in player's moves) spooled in one batch with the
    save (``notify.spool_status``), so that a kill at any moment sends each at
    worst twice, never not at all: the clock stage's one save of a game, and
    the way for any other change that tells players of it (a vacation, the
    outage shift, a catch-up before a mail).  When the status mails cannot be built (a bug), the
    notices are saved without them (``notify_all`` tries them again and tells
    the operator).  ``points``: the prefix of the fault points (``faults``)
    ``POINTS-spooled`` (the batch spooled, the game not saved) and
    ``POINTS-saved`` (saved, the bookkeeping not yet committed); the clock
    stage's are ``clock``.  ``status`` False: the notices only, the status
    mails left to the next save that tells them (``catch_up``, before a mail's
    own save).  Raises OSError/StoreError as ``GameStore.save``.

    One mail per player per cycle: a notice to a player who gets a status mail
    in the same batch is a line of that status mail (``notify.spool_status``
    ``news``), not a mail of its own; the others are mails (``_mails``) that
    keep their notice in the spool entry, so that a later status mail to the
    same player in the same cycle takes them in (``notify._status_batch``).
    The game master's notices are always mails of their own."""
    from . import notify
    from ..store.gamefile import StoreError

    news = [n for n in notices if n.player is not None]
    mails = _mails(post, record, [n for n in notices if n.player is None])
    hooks = {} if points is None else {"after_spool": lambda: faults.fault(f"{points}-spooled"),
                                       "after_save": lambda: faults.fault(f"{points}-saved")}

    def loose(left: list[Notice]) -> list[tuple[Any, dict[str, Any]]]:
        return _mails(post, record, left)

    try:
        saved = notify.spool_status(post, store, record, extra=mails, status=status, news=news,
                                    loose=loose, **hooks)
    except (OSError, StoreError):
        raise
    except Exception:  # noqa: BLE001 - a status mail could not be built: the clock goes on
        log.warning("game %s: the status mails could not be built; the clock's changes are saved, "
                    "the mails are tried again", record.id, exc_info=True)
        saved = notify.spool_status(post, store, record, extra=mails + _mails(post, record, news),
                                    status=False, **hooks)
    if not saved:  # nothing to mail (an outage shift alone)
        store.save(record)  # the store's on_save indexes the next event


def _mails(post: Any, record: GameRecord, notices: list[Notice]) -> list[tuple[Any, dict[str, Any]]]:
    """The mails of ``notices``, ``[(msg, spool meta)]`` (meta: ``kind`` clock,
    ``game``, ``player`` (None: the game master), ``notice``: the macro's name):
    to a player in their thread (the game's one Subject; the title is the
    first line of the text, and the Message-ID carries their token, so a reply
    authenticates), to the game master under a Subject with the title (and
    their token, ``announce.gm_token``); each in the reader's language."""
    from ..mail.read import canonical_address
    from .announce import gm_token
    from .calendar import mail_parts
    from .send import thread_of

    out = []
    for n in notices:
        # a player reads their language, the game master English
        with i18n.speaking(record.language_of(n.player) if n.player is not None else i18n.DEFAULT):
            title = word("clock", n.name + "_title", **_for_macro(n.name + "_title", n.values))
            text = word("clock", n.name, **n.values) + "\n"
            if n.name == "reminder" and n.player is not None:  # their queued orders will be played
                queued = advance.reminder_line(record, record.player_by_name(n.player))
                text += "\n" + queued + "\n" if queued else ""
            if n.player is not None:
                thread = thread_of(record, record.player_by_name(n.player))
                root = thread.thread
                text = word("language", "notice_heading", game_id=record.id, title=title) + "\n\n" + text
                player = record.player_by_name(n.player)
                msg = post.message(record.id, n.to, thread.subject, text, in_reply_to=root,
                                   references=[root] if root else [], auto="auto-generated",
                                   token=thread.token, calendar=mail_parts(post, record, player)
                                   if canonical_address(n.to) == canonical_address(player.address) else ())
            else:  # the game master: the token of their secret, so that a reply proves them
                subject = word("notices", "subject", game_id=record.id, title=title)
                msg = post.message(record.id, n.to, subject, text, auto="auto-generated", token=gm_token(record))
        meta = {"kind": "clock", "game": record.id, "player": n.player, "events": [], "answers": None,
                "notice": n.name}
        if n.player is not None:  # a status mail of the same cycle takes it in (``notify._status_batch``)
            meta.update(values=n.values, raw=n.raw)
        out.append((msg, meta))
    return out


def notice_mail(post: Any, record: GameRecord, item: dict[str, Any], to: str, player: str) -> Any:
    """The mail of a player's clock notice kept as ``Notice.to_data`` (``item``,
    a spool entry's ``notice``/``values``/``raw``), worded anew in ``player``'s
    language (``deadlines.notice_values``): ``language CODE`` in the same cycle."""
    from .deadlines import notice_values

    p = record.player_by_name(player)
    with i18n.speaking(record.language_of(p)):
        values = notice_values(item, p)
    n = Notice(to, player, item["notice"], values, item.get("raw") or {})
    return _mails(post, record, [n])[0][0]


def respeak(post: Any, store: Any, record: GameRecord, player: Any) -> list[str]:
    """After ``player`` changed their language (``language CODE``), word again
    in it the mails of theirs of ``record``'s game still unsent in the spool,
    so that every mail of the cycle comes in the new language: their stale
    status mail (with the news it carries and their clock notices spooled
    alone: one status mail, the events ``log_from``-``log_to`` it told, as
    ``notify._status_batch`` builds it) or, without one, each clock notice
    alone (``notice_mail``; its ``batch`` kept, so that ``notify.sweep`` judges it
    as before).  Each new mail names the old ones in ``replaces`` and is spooled
    before they are removed: a crash between the two sends the new one only
    (``Spool.entries`` drops the replaced).  The game file is not changed.
    Mails whose sending is under way, replies to a mail and the game master's
    announcements are left as they are.  Returns the names of the new entries."""
    from . import notify, spooled

    view = spooled.view(post.spool)
    older = view.stale_status(record.id).get(player.name, [])
    notices = view.pending_notices(record.id).get(player.name, [])
    if not older and not notices:
        return []
    mails: list[tuple[Any, dict[str, Any]]] = []
    if older:
        built = notify.restatus(post, record, player, older, notices)
        if built is None:
            return []  # entries spooled by an older version: sent as they are
        mails.append(built)
    else:
        for name, m in notices:
            item = {"notice": m["notice"], "values": m["values"], "raw": m.get("raw") or {}}
            msg = notice_mail(post, record, item, player.address, player.name)
            mails.append((msg, {**m, "replaces": [name]}))
    names = post.spool.add_many(mails, post.clock())
    for name, _ in older + notices:
        post.spool.remove(name)
    log.info("game %s: %d unsent mail(s) to %s worded again in %s", record.id, len(older) + len(notices),
             player.name, record.language_of(player))
    return names
