"""The moderator: one cycle reads new mail, referees it, saves, and answers.

Data flows one way, one stage a module::

    bytes ─read_mail─▶ OrderMail ─route─▶ (game, player) ─interpret─▶ orders
          ─decide─▶ Verdict ─act─▶ new game state + outgoing mails ─▶ spool ─flush─▶ SMTP

0. ``run_cycle`` takes the cycle lock, opens the bookkeeping database
   (``store.bookkeeping``: answered keys, bounces, alerts, the inbox position,
   the games index), brings the games index up to date with ``games/`` (one
   ``stat`` when nothing changed), bounds the answered keys and drops the
   mails spooled before a save that a crash prevented (``notify.sweep``); after
   an outage, a deadline that fell in it moves first (``clock.shift_outages``),
   so that every mail of the cycle gives the moved one;
1. it fetches every mail in the inbox, oldest first (``inbox.poll``; each mail
   handled and moved in one bookkeeping transaction);
2. ``mail.read.read_mail`` reads it (never raises) and ``interpret.mail_id``
   names it;
3. ``decide.screen``: a mail answered already is a ``Duplicate``; machine mail
   (auto-replies, lists, RFC 3834) is ignored, a bounce (RFC 3464) recorded;
   an unreadable or too large mail is refused, if the sender plays at all;
   sign-up mail (``games``, ``join``, ``leave``, a reply to an open game's
   mail) is carried out by ``signup.handle`` and goes no further, the
   substitute pool's (``substitute on|off``, ``take``, the game master's
   ``approve``/``veto``) by ``pool.handle``;
4. ``route.route``: its game (Subject tag, else In-Reply-To/References naming
   one of our mails, else the sender's only running game, from the games
   index); no such game: ``decide.no_game``;
5. with the game locked and loaded (``notify.load``: without the comparison
   when the file is the one the moderator last wrote), ``decide.in_game``: ``authenticate`` (From address and
   secret), ``interpret`` (commands and one order), the engine's judgement
   (``Game.resolve``) → ``Apply``, ``Refuse`` (a named reason), ``Answer``
   (commands), ``Duplicate`` (its order is applied already), ``Ignore``;
6. ``act.act`` carries the verdict out: applies, spools the status mails and
   saves once (``notify.spool_status``), spools the replies under the mail's
   key (never answered twice), answers commands;
7. the mail goes to the processed or ignored folder;
8. ``clock.run_clock``: the games whose next clock event has come (the games
   index's ``deadline``): the built-in player's seats move, reminders, missed
   deadlines, abandoned seats; a deadline that fell during an outage of the
   moderator moves by the outage; its notices are spooled in one batch with
   the save that records them (``notify.spool_status``); then
   ``proposals.run_due``: the players' proposals whose answers were due fail
   (or are carried out, every seat that still votes having accepted), and an
   agreed pause whose days are over ends;
   then the open games' clock (``signup.run_clock``: starts, expiries, lapsed offers),
   the substitute pool's (``pool.run_clock``: the offers of abandoned seats);
9. ``notify.notify_all`` spools, for each game the index still says owes mail
   (a command's events, an earlier cycle that crashed), every player one
   status mail (their own view only; to a reader of the daily digest the
   mails that ask nothing of them are held: ``digest.holds``), ``digest.run``
   spools the daily digests due now, ``send.Post.flush`` sends what the
   spool holds (not the held mails).  A mail saying ``unsubscribe TOKEN``
   (a List-Unsubscribe URI) is carried out first of all (``unsubscribe.handle``).

Game creation is ``create.py``; crash points for the tests are ``faults.py``.
"""
from __future__ import annotations

import logging
import sqlite3
import time
from datetime import datetime, timezone
from email.message import EmailMessage
from typing import Callable

from filelock import FileLock, Timeout

from .. import i18n
from ..config import Config
from ..mail.read import canonical_address, read_mail
from ..mail.transport import Inbox, Outbox, TransportError
from ..render.words import word
from ..store.bookkeeping import Bookkeeping, BookkeepingError
from ..store.gamefile import GameRecord, GameStore, Player, SavedGame, StoreError
from ..store.spool import Spool
from . import clock, create, deadlines, decide, digest, notify, people, pool, privacy, proposals, route, signup, \
    spooled, unsubscribe
from .act import act
from .commands import rules_text
from .faults import fault
from .deadlines import game_master_address
from .inbox import MailWaiter, poll
from .interpret import mail_id, switched_language
from .report import CycleReport
from .verdict import RecordBounce, Refuse
from .send import Post

__all__ = ["CycleReport", "Moderator", "Unsent", "fault", "rules_text"]

log = logging.getLogger("pbem")


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Unsent(TransportError):
    """A command's change is saved, but sending its mails failed (an SMTP answer
    such as ``421``, a server that cannot be reached, a daily limit): they wait
    in the spool, and the next cycle sends them.  ``report`` is the
    ``CycleReport`` of the attempt (``errors``, ``deferred``, ``waiting``).
    A ``TransportError``, so callers that catch those still do."""

    def __init__(self, message: str, report: CycleReport):
        super().__init__(message)
        self.report = report
        self.done = ""  # ``manage``: its confirmation of the change saved


class Moderator:
    """The referee and banker of every game in one games directory.

    ``config`` says who the moderator is and where games and mail live; ``inbox``
    and ``outbox`` default to the configured transports (opened per cycle);
    ``clock`` returns the current time (for the received stamps in game files);
    ``max_size`` is the largest mail read (default ``config.max_size``);
    ``keep_open`` (``pbem run --loop``): the configured transports are opened once
    and kept from one cycle to the next (the IMAP inbox's connection, the SMTP
    outbox's connection: ``SmtpOutbox.keep_connection``), each opened again after
    it failed; ``close`` closes them.

    Its memory between cycles is the bookkeeping database ``SPOOL/pbem.sqlite3``
    (``bk``, ``store.bookkeeping.Bookkeeping``), opened on first use (a cycle
    that finds another one running opens nothing); every game file saved through
    ``store`` updates its games index and trusted digest (``on_save``)."""

    def __init__(self, config: Config, inbox: Inbox | None = None, outbox: Outbox | None = None,
                 clock: Callable[[], datetime] = _now, max_size: int | None = None,
                 keep_open: bool = False):
        self.config = config
        # ``pbem run --loop``: the configured inbox and outbox opened once and
        # kept across cycles (an IMAP login, NAMESPACE, LIST and SELECT and an
        # SMTP connect, EHLO and login saved per cycle)
        self.keep_open = keep_open
        self._kept_inbox: Inbox | None = None
        self._kept_outbox: Outbox | None = None  # SMTP: its connection kept (``keep_connection``)
        self.store = GameStore(config.games_dir, on_save=self._record_saved)
        self._inbox = inbox
        self._outbox = outbox
        self.clock = clock
        self.max_size = max_size or config.max_size
        self.spool = Spool(config.spool_dir)
        self._bk: Bookkeeping | None = None
        # the IMAP connection that IDLEs between cycles, when worth trying
        self._waiter = MailWaiter(config, idle=config.imap is not None and inbox is None)
        self._outage: datetime | None = None  # the cycle's outage_since (an outage ends: no catch-up)
        self._last: datetime | None = None  # the last successful cycle before this one (``arrival``)
        # the outage notice of the current cycle, for every status mail ("" or what
        # words it in the language in force)
        self.notice: str | Callable[[], str] = ""
        #: game files this moderator saved (its ``store``), since it was made
        self.saves = 0

    @property
    def bk(self) -> Bookkeeping:
        """The bookkeeping database (``SPOOL/pbem.sqlite3``), opened on first use
        (importing an old ``SPOOL/moderator.yaml``).  Raises BookkeepingError."""
        if self._bk is None:
            self._bk = Bookkeeping.in_spool(self.spool.dir)
        return self._bk

    def close(self) -> None:
        """Close the bookkeeping database, the IDLE connection and the inbox
        and outbox kept open (``keep_open``: the SMTP connection says QUIT);
        each is opened again when next needed."""
        if self._bk is not None:
            self._bk.close()
            self._bk = None
        self._waiter.close()
        self._drop_inbox()
        kept, self._kept_outbox = self._kept_outbox, None
        if kept is not None:
            kept.close()

    def _cycle_outbox(self) -> Outbox | None:
        """The outbox for this cycle: the one given to the constructor, else with
        ``keep_open`` the configured one made once and kept, its SMTP connection
        kept open between cycles (``SmtpOutbox.keep_connection``; None when it
        cannot be made now: ``Post.flush`` reports why), else None (``flush``
        opens and closes the configured one)."""
        if self._outbox is not None or not self.keep_open:
            return self._outbox
        if self._kept_outbox is None:
            try:
                self._kept_outbox = self.config.open_outbox()
            except TransportError:
                return None
            keep = getattr(self._kept_outbox, "keep_connection", None)
            if keep is not None:
                keep()
        return self._kept_outbox

    def _cycle_inbox(self) -> Inbox | None:
        """The inbox for this cycle: the one given to the constructor, else with
        ``keep_open`` the configured one opened once and kept (None when it cannot
        be opened now: ``inbox.poll`` opens it and reports why), else None
        (``poll`` opens and closes the configured one)."""
        if self._inbox is not None or not self.keep_open:
            return self._inbox  # None: ``poll`` opens and closes the configured one
        if self._kept_inbox is None:
            try:
                self._kept_inbox = self.config.open_inbox()
            except TransportError:
                return None
        return self._kept_inbox

    def _drop_inbox(self) -> None:
        """Close the inbox kept open (the next cycle opens a new one)."""
        kept, self._kept_inbox = self._kept_inbox, None
        if kept is not None:
            kept.close()

    def wait_for_mail(self, seconds: float, sleep: Callable[[float], None] = time.sleep) -> str:
        """Wait up to ``seconds`` between two cycles of ``pbem run --loop``:
        ``inbox.MailWaiter.wait`` (an IMAP IDLE when the server offers it, else
        ``sleep``); returns ``"mail"``, ``"timeout"`` or ``"slept"``.  Never
        raises TransportError."""
        return self._waiter.wait(seconds, sleep)

    def _record_saved(self, saved: SavedGame) -> None:
        self.saves += 1
        self.bk.record_saved(saved)
        self.bk.set_deadline(saved.game_id, deadlines.next_event(saved.data))

    def _post(self) -> Post:
        return Post(self.config, self.spool, self.bk, self.clock, self.notice)

    def status_mail(self, record: GameRecord, player: Player, events: list[str],
                    in_reply_to: str | None = None, template: str = "status.txt") -> EmailMessage:
        """The status mail to ``player``: their view of ``record``'s game only
        (see ``notify.status_mail``)."""
        return notify.status_mail(self._post(), record, player, events, in_reply_to, template)

    def create_game(self, game_id: str, players: list[tuple[str, str]], seed: int,
                    ruleset: str = "first-edition", options: dict[str, bool] | None = None,
                    board_path: str | None = None, settings: dict | None = None,
                    bots: list[str] | tuple[str, ...] = (), gm: str | None = None,
                    observers: list[str] | tuple[str, ...] = (),
                    languages: dict[str, str] | None = None) -> GameRecord:
        """Create game ``game_id`` for ``players`` (``[(name, address)]`` in turn
        order) and the built-in player's seats ``bots`` (names), write its file and
        mail every player a welcome with their secret, hand, the options and the
        order guide, each in their language.  ``settings``: the clock settings and
        the game's ``language`` (see ``create.new_game``); ``languages``: players'
        own languages ``{name: code}``.

        Raises ValueError (nothing written) for a bad id, an existing game, 1 or 7+
        players, a duplicate name or address, an unknown ruleset or option, or a board
        file that does not validate (see ``create.new_game``); ``Unsent`` (a
        TransportError) when the game is created but the welcomes could not be
        sent (they stay in the spool)."""
        record = create.new_game(self.store, game_id, players, seed, self.clock(), ruleset, options, board_path,
                                 settings, bots, gm=gm, observers=observers, languages=languages)
        people.seat_defaults(self.bk, record)  # a person-level zone and language apply to new games too
        # written under the game's lock, indexed after it is released (a cycle
        # holds the database while it waits for a game's lock, never the reverse)
        saved = create.welcome(self._post(), GameStore(self.config.games_dir), record)
        self._record_saved(saved)
        self._flush_now("the welcome mails")
        return record

    def _flush_now(self, what: str) -> None:
        """Send what the spool holds now (outside a cycle); when a cycle is
        running, it sends them.  Raises ``Unsent`` (a TransportError) when
        sending failed, also for a disk or bookkeeping error while sending (the
        mails stay in the spool; what was saved before stays saved)."""
        lock = FileLock(str(self.spool.dir / "cycle.lock"))
        try:
            lock.acquire(timeout=10)
        except Timeout:
            log.warning("a cycle is running; it sends %s", what)
            return
        except OSError as exc:  # the spool cannot be locked: the next cycle sends them
            raise Unsent(f"sending {what}: cannot lock {self.spool.dir / 'cycle.lock'}: {exc}", CycleReport()) \
                from None
        report = CycleReport()
        try:
            post = self._post()
            sync_index(self.bk, self.store)  # the index as the files are: what ``sweep`` compares with
            notify.sweep(post)
            post.flush(report, self._outbox)
        except (OSError, sqlite3.Error, BookkeepingError) as exc:  # the change is saved all the same
            report.errors.append(f"sending {what} stopped: {exc}")
        finally:
            lock.release()
        if report.errors:
            raise Unsent("; ".join(report.errors), report)

    def forget_person(self, address: str) -> list[str]:
        """``pbem forget ADDRESS``: forget ``address`` as a confirmed ``forget
        me`` does (``privacy.forget``: game files, bookkeeping, spool; the other
        players of running games told), under the cycle lock, without mailing
        the address; the mails to the others are sent now (``Unsent`` when they
        could not be: they stay in the spool), then the database is vacuumed.
        Returns the ids of the games changed.  Raises ``filelock.Timeout`` when a
        cycle runs for more than a minute, OSError, BookkeepingError."""
        lock = FileLock(str(self.spool.dir / "cycle.lock"))
        lock.acquire(timeout=60)
        report = CycleReport()
        try:
            post = self._post()
            sync_index(self.bk, self.store)
            with self.bk.transaction():
                games = privacy.forget(post, self.store, address)
            post.flush(report, self._outbox)
            privacy.finish(post)
        finally:
            lock.release()
        if report.errors:
            raise Unsent("; ".join(report.errors), report)
        return games

    def manage(self, game_id: str, line: str, by: str | None = None) -> str:
        """Carry out the game-master command ``line`` (``gm.parse_gm``: ``undo 2
        force reason``, ``replace Ann Dora=dora@example.org`` ...) on game
        ``game_id`` as the command line's ``pbem gm``, save, and send the
        announcements.  ``by``: who, for the game file (default ``command line
        (USER)``).  Returns the confirmation.  Raises ``gm.GmError`` (a line that
        is no command, or a command refused: the game is unchanged), StoreError,
        ValueError (bad id), ``filelock.Timeout`` (the game is locked: unchanged),
        OSError (the file could not be saved: unchanged, and the mails the
        command spooled for it are removed), all before anything is saved;
        ``Unsent`` after the save (the mails stay in the spool for the next
        cycle; ``Unsent.done`` is the confirmation)."""
        from . import gm

        cmd = gm.parse_gm(line)
        self.store.require(game_id)
        with self.store.lock(game_id):
            post = self._post()
            record = notify.load(post, self.store, game_id)
            ctx = gm.Context(post, self.store, record, by or gm.command_line_user(),
                             self.clock().isoformat(timespec="seconds"))
            before = {e.name for e in post.spool.entries()}
            try:
                done = gm.execute(ctx, cmd)
            except BaseException:  # not saved (a full disk): its announcements are not sent either
                for e in post.spool.entries():
                    if e.name not in before and e.meta.get("game") == game_id:
                        post.spool.remove(e.name)
                raise
        try:
            self._flush_now("the game master's mails")
        except Unsent as exc:
            exc.done = done  # the confirmation of what was saved
            raise
        return done

    def gm_secret(self, game_id: str) -> tuple[str | None, str]:
        """The game master's address (None: no operator configured and none given)
        and secret of ``game_id``, giving them a secret first when the game file
        has none (files older than game masters).  Raises StoreError, ValueError."""
        from . import gm

        self.store.require(game_id)
        with self.store.lock(game_id):
            record = notify.load(self._post(), self.store, game_id)
            if gm.ensure_gm_secret(record):
                self.store.save(record)
        return game_master_address(record, self.config), record.game_master["secret"]

    def run_cycle(self) -> CycleReport:
        """One poll: process every mail in the inbox, spool the status mails, send
        what the spool holds.

        Only one cycle runs at a time (a lock in the spool directory; a second one
        returns at once with ``skipped``).  Never raises for a bad mail; a transport
        failure is reported in ``report.errors`` and leaves unhandled mails in the
        inbox and unsent mails in the spool."""
        report = CycleReport()
        lock = FileLock(str(self.spool.dir / "cycle.lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            report.skipped = True
            log.warning("another cycle is running; skipped")
            return report
        try:
            try:
                self.spool.mark_owner(_now())  # wall-clock: doctor compares it with its own
                bk = self.bk
                sync_index(self.bk, self.store)
                bk.prune(self.clock())
                bk.prune_counts(self.clock())
                self._last = bk.last_success()  # read once a cycle, for every mail's arrival
                outage_since = self._outage = outage_start(bk, self.clock(), self.config.outage_after)
                self.notice = outage_notice(bk, self.clock(), self.config.outage_after)
                post = self._post()
                notify.sweep(post)
                # a deadline that fell in an outage moves first: this cycle's mails give the new one
                clock.shift_outages(post, self.store, self.clock(), outage_since)
                inbox = self._cycle_inbox()
                poll(self.config, self.store, inbox, post, report,
                     lambda raw, arrived=None: self._handle(raw, post, report, arrived))
                if not report.inbox_ok and inbox is self._kept_inbox:
                    self._drop_inbox()  # a failing connection: a fresh one next cycle
                clock.run_clock(post, self.store, report, clock_time(self.clock(), report), outage_since)
                proposals.run_due(post, self.store, report, clock_time(self.clock(), report))
                signup.run_clock(post, self.store, clock_time(self.clock(), report), report)
                pool.run_clock(post, self.store, clock_time(self.clock(), report), report)
                notify.notify_all(post, self.store, report)
                digest.run(post, self.store, report)  # the daily digests due now (issue 28)
                post.flush(report, self._cycle_outbox())
                privacy.finish(post)  # people forgotten in this cycle: purged again, the database vacuumed
                # successful: mail came in and went out (a broken game file or a
                # bounce makes the cycle fail, but is no outage of the moderator)
                if report.inbox_ok and bk.smtp_failing_since() is None:
                    bk.set_last_success(self.clock())
            except OSError as exc:  # disk full, permissions: nothing half-written
                log.error("cycle stopped: %s", exc)
                report.errors.append(f"cycle stopped: {exc}")
            except (sqlite3.Error, BookkeepingError) as exc:  # the database: its transaction rolled back
                log.error("cycle stopped: bookkeeping database %s: %s", self.spool.dir / "pbem.sqlite3", exc)
                report.errors.append(f"cycle stopped: bookkeeping database: {exc}")
        finally:
            lock.release()
        log.info("cycle: %s", report.summary())
        return report

    def _handle(self, raw: bytes, post: Post, report: CycleReport, arrived: datetime | None = None) -> str:
        """Read, decide and act on one mail that reached the mailbox at
        ``arrived`` (``InboundMail.arrived``; None: not known, taken as now);
        returns ``"processed"`` or ``"ignored"``.  The game's clock first does
        what it owed by the mail's arrival (``clock.catch_up``; not while
        an outage ends: its shift comes first), so that an order is judged
        on time or late by when it arrived."""
        om = read_mail(raw, own_address=self.config.moderator_address, max_size=self.max_size)
        key = mail_id(om, raw)

        plays = self.bk.is_player  # the games index: no game file is opened
        spool = spooled.view(post.spool)

        def answered(k: str) -> bool:  # as ``post.answered``, the spool's metas read once
            return self.bk.answered(k) or spool.answers(k)

        done = unsubscribe.handle(om, key, post, report, answered)
        if done is not None:  # 'unsubscribe TOKEN': a digest's or pool offer's List-Unsubscribe (issue 28)
            return done
        verdict = decide.screen(om, key, max_size=self.max_size, answered=answered, plays=plays)
        if isinstance(verdict, RecordBounce) and verdict.game_id and self.store.exists(verdict.game_id):
            with self.store.lock(verdict.game_id):  # matched to the player by the token it quotes
                record = notify.load(post, self.store, verdict.game_id)
                return act(decide.bounce_in_game(verdict, record), om, post, self.store, report, record)
        if verdict is not None:
            return act(decide.once(verdict, answered=answered), om, post, self.store, report)
        done = people.handle(om, key, post, self.store, report,
                             arrival(self.clock(), arrived, self._last) if self._outage is None else None)
        if done is not None:  # a reply in the sender's person thread (issue 28)
            return done
        done = signup.handle(om, key, post, self.store, report,
                             arrival(self.clock(), arrived, self._last))
        if done is not None:  # games, join, leave, a reply to an open game's mail
            return done
        done = pool.handle(om, key, post, self.store, report, arrival(self.clock(), arrived, self._last))
        if done is not None:  # substitute on|off, take, the game master's approve|veto
            return done
        game_id = route.route(om, self.store, self.bk)
        if game_id is not None and not self.store.exists(game_id) and game_id in self.bk.missing_games():
            # the game existed (the games index knows it): its mail waits for the file
            raise StoreError(f"game {game_id}: its file {self.store.path(game_id)} is missing (the games "
                             "index knows the game); its mails stay in the inbox until the file is back")
        if game_id is None or not self.store.exists(game_id):
            games = [g.game_id for g in self.bk.games_of(om.sender, active_only=True)]
            verdict = decide.no_game(om, key, game_id, plays=plays, games=games)
            return act(decide.once(verdict, answered=answered), om, post, self.store, report)
        when = arrival(self.clock(), arrived, self._last)
        with self.store.lock(game_id):
            record = notify.load(post, self.store, game_id)
            if self._outage is None:
                clock.catch_up(post, self.store, record, when, report)
            gm_address = game_master_address(record, self.config)
            # the sender's language: their orders are parsed with its words, and
            # every answer is worded in it (the game master's in English)
            language = i18n.DEFAULT if canonical_address(om.sender) == gm_address and \
                record.player_by_address(om.sender) is None else record.language_for_address(om.sender)
            switched = None
            if record.player_by_address(om.sender) is not None and not om.machine:
                with i18n.speaking(language):
                    switched = switched_language(om.lines)
            if switched is not None and switched != language:
                # 'language es' in the mail: its orders are read in Spanish, or, when
                # they cannot be, in the language they were written in before
                with i18n.speaking(switched):
                    verdict = decide.in_game(om, key, record, answered=answered, gm_address=gm_address,
                                             arrived=when)
                if isinstance(verdict, Refuse):
                    with i18n.speaking(language):
                        before = decide.in_game(om, key, record, answered=answered, gm_address=gm_address,
                                                arrived=when)
                    verdict = verdict if isinstance(before, Refuse) else before
                language = switched
            else:
                with i18n.speaking(language):
                    verdict = decide.in_game(om, key, record, answered=answered, gm_address=gm_address,
                                             arrived=when)
            with i18n.speaking(language):
                done = act(decide.once(verdict, answered=answered), om, post, self.store, report, record)
            # 'substitute on|off' below other lines of a player's mail (pool.handle reads the first)
            pool.seat_lines(post, om, record, getattr(verdict, "player", None), key, when)
            return done


def clock_time(now: datetime, report: CycleReport) -> datetime:
    """The instant the clock stage runs as of: the cycle's time ``now``, or, when
    mails may be left unread in the inbox (``report.unread_from``), that
    earlier instant, so that no deadline is judged missed while an order
    that came before it waits unread."""
    held = report.unread_from
    if held is not None and held < now:
        log.warning("mails may wait unread in the inbox since %s: the clock runs as of then",
                    held.isoformat(timespec="seconds"))
        return held
    return now


def arrival(now: datetime, arrived: datetime | None, last: datetime | None = None) -> datetime:
    """When a mail reached the mailbox (``InboundMail.arrived``), for
    judging lateness: the store's time, never the sender's ``Date``; the
    cycle's time ``now`` when the store gave none or a later one (the cycle's
    clock is the moderator's time: ``pbem run --now``); the last successful
    cycle's time ``last`` when the store gives an earlier one (that cycle read
    the whole inbox and did not see the mail, so it came after: a file copied
    into a Maildir keeps its old time, an IMAP APPEND may give any date)."""
    if arrived is None or arrived > now:
        return now
    if last is not None and arrived < last <= now:
        return last
    return arrived


def sync_index(bk: Bookkeeping, store: GameStore) -> None:
    """Bring the games index up to date with the games directory (one ``stat``
    when nothing changed; ``Bookkeeping.sync_games``) and log what it found."""
    found = bk.sync_games(store)
    if found.flagged:
        log.info("games index: %d game file(s) new or changed outside the moderator, replayed in "
                 "full before use: %s", len(found.flagged), ", ".join(found.flagged))
    for gid, why in found.unreadable.items():
        log.warning("games index: game %s cannot be read: %s", gid, why)
    if found.removed:
        log.info("games index: game file(s) gone: %s", ", ".join(found.removed))


def outage_start(bk: Bookkeeping, now: datetime, outage_after: float) -> datetime | None:
    """When the last successful cycle was, if that is longer ago than
    ``outage_after`` seconds (``config.outage_after``: an outage of the
    moderator) at ``now``, else None."""
    last = bk.last_success()
    if last is None or (now - last).total_seconds() <= outage_after:
        return None
    return last


def outage_notice(bk: Bookkeeping, now: datetime, outage_after: float) -> str | Callable[[], str]:
    """The note for this cycle's status mails when no cycle completed for longer
    than ``outage_after`` seconds (``config.outage_after``) at ``now`` (what
    words it in the language in force, for each reader), else ``""``."""
    last = bk.last_success()
    if last is None:
        return ""
    gap = (now - last).total_seconds()
    if gap <= outage_after:
        return ""
    since = last.isoformat(timespec="seconds")
    log.warning("no successful cycle since %s (%.1f hours)", since, gap / 3600)
    from ..render.when import format_duration, format_when

    return lambda: word("notices", "outage", duration=format_duration(gap, exact=True), since=format_when(last))
