"""The moderator: one cycle reads new mail, referees it, saves, and answers.

``Moderator`` composes the parts: a transport (``Inbox``/``Outbox`` from
``moderator.transport``), the store (``GameStore``), the rules engine (``Game``
through ``GameRecord``), the order language (``parse_turn``), mail reading
(``read_mail``) and the templates (``render``).  One cycle (``run_cycle``):

1. fetch every mail in the inbox, oldest first;
2. read it (``read_mail``); machine mail (auto-replies, bounces, lists) is never
   answered and goes to the ignored folder;
3. route it to its game (Subject tag, else In-Reply-To/References to one of our
   mails, else the sender's only active game);
4. authenticate: the From address (canonical) must be a player's AND the secret
   must be that player's (constant-time comparison);
5. answer commands (``help``, ``status``, ``history``, ``rules``, ``secret new``),
   parse the order lines into one action, apply it, save the game file;
6. a refused order gets a reply quoting the lines, the reason, what is legal now,
   and the unchanged position; the game file is untouched;
7. move the mail to the processed folder;
8. send every player of each changed game one status mail (their own view only).

A mail whose Message-ID is already in the game's history is not applied twice.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import signal
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any, Callable, Iterable

from ..mail.compose import build_message
from ..config import Config
from ..rules.engine import Game, IllegalAction
from ..rules.options import OPTION_HELP, check_setup, ruleset as ruleset_of
from ..mail.read import OrderMail, canonical_address, read_mail
from ..orders.parser import NoOrderFound, OrderError, command, parse_turn
from ..render.words import reason
from ..render import legal_summary, render, status_context, status_subject, to_html
from ..store import GAME_ID_PATTERN
from ..store.gamefile import GameRecord, GameStore, Player, StoreError, board_ref_for, new_secret
from ..store.spool import ModeratorState, Spool
from ..mail.transport import Inbox, Outbox, TransportError
from filelock import FileLock, Timeout

log = logging.getLogger("pbem")

_MSGID_GAME_RE = re.compile(rf"\.pbem\.({GAME_ID_PATTERN})@")



@dataclass
class CycleReport:
    """What one cycle did: counts of mails by outcome and the problems met."""

    fetched: int = 0
    applied: int = 0
    refused: int = 0
    commands: int = 0
    ignored: int = 0
    duplicates: int = 0
    sent: int = 0
    deferred: int = 0
    skipped: bool = False
    errors: list[str] = field(default_factory=list)
    inbox_ok: bool = True  # the inbox was read (and handled mails moved) without transport errors

    @property
    def ok(self) -> bool:
        """True when the cycle completed without errors."""
        return not self.errors

    def summary(self) -> str:
        """One line for the log and the CLI."""
        if self.skipped:
            return "another cycle is running; this one did nothing"
        return (
            f"{self.fetched} mail(s): {self.applied} order(s) applied, {self.refused} refused, "
            f"{self.commands} command mail(s), {self.duplicates} duplicate(s), {self.ignored} ignored; "
            f"{self.sent} mail(s) sent, {self.deferred} deferred; {len(self.errors)} error(s)"
        )


def _now() -> datetime:
    return datetime.now(timezone.utc)


_fault_counts: dict[str, int] = {}


def fault(point: str) -> None:
    """Fault injection for the crash tests: when ``$PBEM_FAULT`` is ``POINT`` or
    ``POINT:N``, the process kills itself (SIGKILL) the N-th time (default 1st) it
    reaches ``point``.  Points: after-fetch, after-apply, after-save, after-send,
    before-move.  Without the variable this does nothing."""
    spec = os.environ.get("PBEM_FAULT")
    if not spec:
        return
    name, _, n = spec.partition(":")
    if name != point:
        return
    _fault_counts[point] = _fault_counts.get(point, 0) + 1
    if _fault_counts[point] == int(n or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def rules_text(game_id: str, game: Game) -> str:
    """The rules-in-force text of a game (``templates/rules.txt``): ruleset, players,
    options, PBEM decisions; mailed on ``rules`` and printed by ``pbem rules``."""
    return render("rules.txt", game_id=game_id, ruleset=game.ruleset, options=game.options,
                  ruleset_summary=ruleset_of(game.ruleset).summary,
                  option_help=OPTION_HELP, players=game.players, final_dividend=game.final_dividend)


def mail_id(om: OrderMail, raw: bytes) -> str:
    """The identity of a mail: its Message-ID, else ``sha256:`` + hash of the bytes."""
    return om.message_id or "sha256:" + hashlib.sha256(raw).hexdigest()


def public_order(order: str) -> str:
    """An order as other players may see it: the share returned in an UP swap is
    secret (rules: What each player may know)."""
    return re.sub(r"; swap \S+", "; swap (a share) for UP", order)


class Moderator:
    """The referee and banker of every game in one games directory.

    ``config`` says who the moderator is and where games and mail live; ``inbox``
    and ``outbox`` default to the configured transports (opened per cycle);
    ``clock`` returns the current time (for the received stamps in game files)."""

    def __init__(
        self,
        config: Config,
        inbox: Inbox | None = None,
        outbox: Outbox | None = None,
        clock: Callable[[], datetime] = _now,
        max_size: int | None = None,
    ):
        self.config = config
        self.store = GameStore(config.games_dir)
        self._inbox = inbox
        self._outbox = outbox
        self.clock = clock
        self.max_size = max_size or config.max_size
        self.domain = config.moderator_address.rpartition("@")[2] or "pbem.localhost"
        self.spool = Spool(config.spool_dir)
        self.state = ModeratorState.load(self.spool.dir / "moderator.yaml")
        self._replies: dict[str, int] = {}
        self._answering: str | None = None
        self.notice = ""

    # ================================================================ outgoing
    def _message(
        self,
        game_id: str | None,
        to: str,
        subject: str,
        text: str,
        in_reply_to: str | None = None,
        references: Iterable[str] = (),
        auto: str = "auto-replied",
    ) -> EmailMessage:
        msg = build_message(
            from_addr=self.config.moderator_address,
            from_name=self.config.moderator_name,
            to=to,
            subject=subject,
            text=text,
            html=to_html(text),
            in_reply_to=in_reply_to,
            references=[r for r in references if r],
            auto_submitted=auto,
            domain=self.domain,
        )
        if game_id:
            del msg["Message-ID"]
            msg["Message-ID"] = make_msgid(idstring=f"pbem.{game_id}", domain=self.domain)
        return msg

    def _send(self, msg: EmailMessage, kind: str = "reply", game: str | None = None,
              player: str | None = None, events: list[str] | None = None,
              **extra: Any) -> str:
        """Spool ``msg`` durably (it is sent at the end of the cycle); returns the
        spool entry's name.  A mail sent while answering an incoming mail records
        that mail as answered (in the entry and in the state), so it is never
        answered twice."""
        answers = None if kind in ("operator", "status", "welcome") else self._answering
        meta = {"kind": kind, "game": game, "player": player, "events": events or [],
                "answers": answers, **extra}
        name = self.spool.add(msg, meta, self.clock())
        if answers and answers not in self.state.answered:
            self.state.answered.append(answers)
        return name

    def _answered(self, key: str) -> bool:
        """Whether the mail (or part of a mail) ``key`` was answered already: in the
        state, or by a mail still in the spool (an interrupted cycle)."""
        return key in self.state.answered or any(
            e.meta.get("answers") == key for e in self.spool.entries())

    def _flush(self, report: CycleReport) -> None:
        """Send what is due in the spool; record permanent failures as bounces."""
        if not any(self.spool.dir.glob("*.eml")):
            return
        now = self.clock()
        try:
            outbox = self._outbox or self.config.open_outbox()
        except TransportError as exc:
            report.errors.append(f"cannot open the outbox: {exc}")
            self.state.smtp_failing_since = self.state.smtp_failing_since or now.isoformat(timespec="seconds")
            return
        try:
            result = self.spool.send_due(outbox, now, after_send=lambda: fault("after-send"))
        finally:
            if self._outbox is None:
                outbox.close()
        report.sent += result.sent
        report.deferred += result.deferred
        if result.sent or result.failed:
            self.state.smtp_failing_since = None  # the server answers
        elif result.deferred:
            self.state.smtp_failing_since = self.state.smtp_failing_since or now.isoformat(timespec="seconds")
        for err in result.errors:
            # a deferred mail is retried by a later cycle, but the cycle reports it
            log.warning("%s (kept in the spool for a later cycle)", err)
            report.errors.append(f"{err} (kept in the spool for a later cycle)")
        for to, game, reason in result.failed:
            report.errors.append(f"mail to {to} refused permanently: {reason}")
            self.state.bounces[canonical_address(to)] = reason
            log.error("mail to %s (game %s) refused permanently: %s", to, game, reason)
            if canonical_address(to) != canonical_address(self.config.operator):
                self._tell_operator(
                    f"A mail to {to} (game {game or '-'}) was refused permanently by the mail "
                    f"server: {reason}\nIt is kept in {self.spool.dir / 'failed'}; it will not be "
                    "retried. If the address is wrong, correct it in the game file (see docs/operations.md).")

    def status_mail(
        self, record: GameRecord, player: Player, events: list[str], in_reply_to: str | None = None,
        template: str = "status.txt",
    ) -> EmailMessage:
        """The status mail to ``player``: their view of ``record``'s game only."""
        ctx = status_context(record, player.name, events)
        ctx["option_help"] = OPTION_HELP
        ctx["notice"] = self.notice
        ctx["bounce"] = self.state.bounces.get(canonical_address(player.address))
        text = render(template, **ctx)
        subject = status_subject(ctx)
        if template == "welcome.txt":
            subject = f"{ctx['tag']} Union Pacific {record.id}: welcome, {ctx['headline']}"
        root = record.threads.get(player.name)
        return self._message(
            record.id, player.address, subject, text,
            in_reply_to=in_reply_to or root, references=[root] if root else [],
            auto="auto-replied" if in_reply_to else "auto-generated",
        )

    def spool_status(self, record: GameRecord) -> bool:
        """Spool one status mail per player with the events since the last status
        mails (merged with any older unsent status mail to the same player), then
        mark them notified and save.  Returns False when there was nothing new."""
        events = record.unnotified
        if not events:
            return False
        for p in record.players:
            # Merge: the new mail names the stale ones it replaces and is written
            # before they are removed (a crash in between drops them unsent).  Events
            # are taken from the game log by position, so a status spooled twice
            # (a crash before ``notified`` was saved) does not repeat them.
            older = self.spool.stale_status(record.id, p.name)
            starts = [e.meta.get("log_from") for e in older]
            if all(isinstance(x, int) for x in starts):
                start = min([*starts, record.notified])
                mine = record.game.log[start:]
            else:  # entries spooled by an older version
                start = record.notified
                mine = [ev for e in older for ev in e.meta.get("events") or []] + events
            self._send(self.status_mail(record, p, mine, record.reply_to.get(p.name)),
                       kind="status", game=record.id, player=p.name, events=mine,
                       log_from=start, replaces=[e.name for e in older])
            for e in older:
                self.spool.remove(e.name)
        for p in record.players:
            self.state.bounces.pop(canonical_address(p.address), None)
        record.notified = len(record.game.log)
        record.reply_to = {}
        self.store.save(record)
        return True

    # ================================================================ new game
    def create_game(
        self,
        game_id: str,
        players: list[tuple[str, str]],
        seed: int,
        ruleset: str = "first-edition",
        options: dict[str, bool] | None = None,
        board_path: str | None = None,
    ) -> GameRecord:
        """Create game ``game_id`` for ``players`` (``[(name, address)]`` in turn
        order), write its file and mail every player a welcome with their secret,
        hand, the options and the order guide.

        Raises ValueError (nothing written) for a bad id, an existing game, 1 or 7+
        players, a duplicate name or address, an unknown ruleset or option, or a board
        file that does not validate."""
        from ..rules.board import check_board

        ruleset_of(ruleset)  # ValueError naming the rulesets
        self.store.path(game_id)  # validates the id
        if self.store.exists(game_id):
            raise ValueError(f"game {game_id!r} already exists ({self.store.path(game_id)})")
        clash = [g for g in self.store.ids() if g.lower() == game_id.lower()]
        if clash:  # players type ids in any case; some file systems ignore case too
            raise ValueError(f"game {clash[0]!r} already exists; choose an id that differs in more than case")
        names = [n for n, _ in players]
        options = check_setup(names, ruleset, options)
        addresses = [canonical_address(a) for _, a in players]
        for (name, raw), addr in zip(players, addresses):
            if not addr or "@" not in addr:
                raise ValueError(f"{raw!r} is not a mail address (player {name})")
        if len(set(addresses)) != len(addresses):
            dup = next(a for a in addresses if addresses.count(a) > 1)
            raise ValueError(f"two players have the same address {dup}")
        try:
            board_ref, board = board_ref_for(board_path)
        except (OSError, ValueError) as exc:
            raise ValueError(f"board {board_path}: {exc}") from exc
        problems = [m for m in check_board(board) if not m.startswith("warning")]
        if problems:
            raise ValueError("the board does not validate: " + "; ".join(problems))
        game = Game.new(board, names, seed, ruleset, options)
        record = GameRecord(
            id=game_id,
            game=game,
            players=[Player(n, a, new_secret()) for n, a in zip(names, addresses)],
            board_ref=board_ref,
            created=self.clock().isoformat(timespec="seconds"),
        )
        report = CycleReport()
        mails = []
        for p in record.players:
            msg = self.status_mail(record, p, [], template="welcome.txt")
            record.threads[p.name] = str(msg["Message-ID"])
            mails.append((p, msg))
        record.notified = len(game.log)
        with self.store.lock(game_id):
            if self.store.exists(game_id):
                raise ValueError(f"game {game_id!r} already exists")
            self.store.save(record)
            for p, msg in mails:
                self._send(msg, kind="welcome", game=game_id, player=p.name)
        lock = FileLock(str(self.spool.dir / "cycle.lock"))
        try:
            lock.acquire(timeout=10)
        except Timeout:
            log.warning("a cycle is running; it sends the welcome mails")
            return record
        try:
            self.state = ModeratorState.load(self.spool.dir / "moderator.yaml")
            self._flush(report)
            self.state.save()
        finally:
            lock.release()
        if report.errors:
            raise TransportError("; ".join(report.errors))
        return record

    # ================================================================ the cycle
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
            self.state = ModeratorState.load(self.spool.dir / "moderator.yaml")
            self._outage_check()
            self._replies = {}
            try:
                self._poll(report)
                self._notify_all(report)
                self._flush(report)
                # successful: mail came in and went out (a broken game file or a
                # bounce makes the cycle fail, but is no outage of the moderator)
                if report.inbox_ok and not self.state.smtp_failing_since:
                    self.state.last_success = self.clock().isoformat(timespec="seconds")
                self.state.save()
            except OSError as exc:  # disk full, permissions: nothing half-written
                log.error("cycle stopped: %s", exc)
                report.errors.append(f"cycle stopped: {exc}")
        finally:
            lock.release()
        log.info("cycle: %s", report.summary())
        return report

    def _outage_check(self) -> None:
        self.notice = ""
        last = self.state.last_success
        if not last:
            return
        gap = (self.clock() - datetime.fromisoformat(last)).total_seconds()
        if gap > self.config.outage_after:
            hours = gap / 3600
            self.notice = (
                f"Note: the moderator did not complete a cycle for {hours:.1f} hours "
                f"(since {last}). Orders sent in that time are handled now, in the order received."
            )
            log.warning("no successful cycle since %s (%.1f hours)", last, hours)

    def _poll(self, report: CycleReport) -> None:
        if not self.store.dir.is_dir():
            # a wrong games_dir would set every order aside as "for no game"
            report.errors.append(f"the games directory {self.store.dir} does not exist "
                                 "(check games_dir in the configuration); no mail was read")
            return
        try:
            inbox = self._inbox or self.config.open_inbox()
        except TransportError as exc:
            report.errors.append(f"cannot open the inbox: {exc}")
            report.inbox_ok = False
            return
        try:
            try:
                mails = inbox.fetch()
            except TransportError as exc:
                report.errors.append(f"cannot fetch mail: {exc}")
                report.inbox_ok = False
                return
            fault("after-fetch")
            report.fetched = len(mails)
            self._remember_uidvalidity(inbox)
            # keys of mails no longer in the inbox (moved by hand, UIDVALIDITY changed)
            keys = {m.key for m in mails}
            self.state.pending_moves = [k for k in self.state.pending_moves if k in keys]
            for mail in mails:
                if mail.key in self.state.pending_moves:
                    outcome = "processed"  # handled in an earlier cycle; only the move failed
                else:
                    try:
                        outcome = self._handle(mail.raw, report)
                    except StoreError as exc:
                        # the game file is broken: leave the mail for after the repair
                        report.errors.append(str(exc))
                        log.error("%s; the mail stays in the inbox", exc)
                        self._tell_operator(f"pbem: game file problem: {exc}")
                        continue
                    except (OSError, Timeout) as exc:
                        # disk full, a game locked by someone else: leave this mail and
                        # the later ones (their order matters) for the next cycle
                        what = "a game is locked by another process" if isinstance(exc, Timeout) else exc
                        report.errors.append(f"cannot handle a mail: {what}; it stays in the inbox")
                        report.inbox_ok = False
                        log.error("cannot handle a mail: %s; it and %d later mail(s) stay in the inbox",
                                  what, len(mails) - mails.index(mail) - 1)
                        break
                    except Exception as exc:  # noqa: BLE001 - one bad mail must not stop the rest
                        log.exception("unexpected error on a mail")
                        report.errors.append(f"unexpected error on a mail: {exc!r}")
                        outcome = "ignored"
                    finally:
                        self._answering = None
                fault("before-move")
                try:
                    if outcome == "ignored":
                        inbox.mark_ignored(mail.key)
                    else:
                        inbox.mark_processed(mail.key)
                    self._handled(mail.key)
                    if mail.key in self.state.pending_moves:
                        self.state.pending_moves.remove(mail.key)
                except (TransportError, KeyError) as exc:
                    report.errors.append(f"cannot move a handled mail: {exc!r}")
                    report.inbox_ok = False
                    if mail.key not in self.state.pending_moves:
                        self.state.pending_moves.append(mail.key)
                self.state.save()
        finally:
            if self._inbox is None:
                inbox.close()

    def _remember_uidvalidity(self, inbox: Inbox) -> None:
        """Remember the IMAP mailbox's UIDVALIDITY; log when it changed (the mails
        then come back with new UIDs and are matched by Message-ID, so nothing is
        applied or answered twice)."""
        validity = getattr(inbox, "uidvalidity", None)
        if validity is None:
            return
        name = str(getattr(inbox, "mailbox", ""))
        old = self.state.inbox
        if old.get("mailbox") == name and old.get("uidvalidity") not in (None, validity):
            log.warning("UIDVALIDITY of %s changed from %s to %s: mails are matched by Message-ID",
                        name, old["uidvalidity"], validity)
            old = {}
        if old.get("mailbox") != name or old.get("uidvalidity") != validity:
            self.state.inbox = {"mailbox": name, "uidvalidity": validity, "last_uid": 0}

    def _handled(self, key: str) -> None:
        """Record the highest IMAP UID handled (keys ``UIDVALIDITY:UID``)."""
        v, _, u = key.partition(":")
        if u.isdigit() and v.isdigit() and self.state.inbox.get("uidvalidity") == int(v):
            self.state.inbox["last_uid"] = max(int(self.state.inbox.get("last_uid", 0)), int(u))

    def _notify_all(self, report: CycleReport) -> None:
        """Spool status mails for every game with events not yet mailed (this
        cycle's orders, or an earlier cycle's that crashed before mailing)."""
        for gid in self.store.ids():
            try:
                data = self.store.read_data(gid)
            except StoreError:
                continue
            if int(data.get("notified", 0)) >= int(data.get("log_length", 0)):
                continue
            try:
                with self.store.lock(gid):
                    self.spool_status(self.store.load(gid))
            except StoreError as exc:
                report.errors.append(str(exc))
            except (OSError, Timeout) as exc:
                report.errors.append(f"game {gid}: cannot spool the status mails: {exc or 'game locked'}")
                log.error("game %s: cannot spool the status mails: %s", gid, exc or "game locked")

    ALERT_REPEAT = 86400.0
    """Seconds before the operator is mailed again about the same problem."""

    def _tell_operator(self, text: str) -> None:
        """Mail the operator (config ``operator``) about ``text``: once, and again
        a day later if the problem persists (cron runs every few minutes)."""
        if not self.config.operator:
            return
        now = self.clock()
        last = self.state.alerts.get(text)
        if last and (now - datetime.fromisoformat(last)).total_seconds() < self.ALERT_REPEAT:
            return
        self._send(self._message(None, self.config.operator, "pbem: attention needed", text + "\n",
                                 auto="auto-generated"), kind="operator")
        self.state.alerts[text] = now.isoformat(timespec="seconds")
        if len(self.state.alerts) > 200:  # forget the oldest
            for k in sorted(self.state.alerts, key=self.state.alerts.get)[:-200]:
                del self.state.alerts[k]

    def _route(self, om: OrderMail) -> str | None:
        if om.game_id:
            return om.game_id
        for ref in [om.in_reply_to, *om.references]:
            m = _MSGID_GAME_RE.search(ref or "")
            if m and self.store.exists(m.group(1)):
                return m.group(1)
        hits = []
        for gid, data, mine in self._games_of(om.sender):
            if data.get("state", {}).get("phase") == "over":
                continue
            hits.append(gid)
            if om.secret and any(hmac.compare_digest(str(p["secret"]).encode(), om.secret.encode())
                                 for p in mine):
                return gid  # the sender's secret names this game
        return hits[0] if len(hits) == 1 else None

    def _reply(self, om: OrderMail, game_id: str | None, title: str, message: str,
               to: str | None = None, **extra: Any) -> None:
        ctx = {"game_id": game_id, "title": title, "message": message, "quoted": [],
               "legal": [], "unchanged": False, "position": "", "game_over": False}
        ctx.update(extra)
        recipient = canonical_address(to or om.sender)
        self._replies[recipient] = self._replies.get(recipient, 0) + 1
        if self._replies[recipient] > self.config.max_replies_per_sender:
            log.warning("reply limit reached for %s; not answering %r", recipient, title)
            return
        text = render("reply.txt", **ctx)
        tag = extra.pop("tag", None)
        subject = f"{tag + ' ' if tag else ''}Union Pacific {game_id or ''}: {title}".replace("  ", " ")
        self._send(self._message(
            game_id, to or om.sender, subject, text,
            in_reply_to=om.message_id, references=om.references,
        ))

    def _handle(self, raw: bytes, report: CycleReport) -> str:
        """Handle one mail; returns ``"processed"`` or ``"ignored"``."""
        om = read_mail(raw, own_address=self.config.moderator_address, max_size=self.max_size)
        mid = mail_id(om, raw)
        if self._answered(mid):
            report.duplicates += 1
            return "processed"  # answered in an earlier, interrupted cycle
        self._answering = mid
        if om.machine:
            report.ignored += 1
            log.info("ignored machine mail from %s: %s", om.sender or "?", om.machine)
            if om.bounce:
                log.warning("bounce for %s", om.bounce)
                self.state.bounces[om.bounce] = f"bounce report from {om.sender or 'the mail system'}"
            return "ignored"
        if not om.sender:
            report.ignored += 1
            log.info("ignored a mail without a sender address")
            return "ignored"
        if (om.oversize or om.error) and not self._known_sender(om.sender):
            report.ignored += 1
            log.info("ignored an unreadable or oversized mail from unknown sender %s", om.sender)
            return "ignored"
        if om.oversize:
            report.refused += 1
            self._reply(om, om.game_id, "mail too large",
                        f"Your mail is {om.size} bytes; the moderator reads mails up to "
                        f"{self.max_size} bytes. Send your orders as plain text, without attachments.",
                        unchanged=True)
            return "ignored"
        if om.error:
            report.refused += 1
            self._reply(om, om.game_id, "mail not readable",
                        f"The moderator could not read your mail: {om.error}. "
                        "Send your orders as plain text.", unchanged=True)
            return "ignored"
        game_id = self._route(om)
        if game_id is None or not self.store.exists(game_id):
            if not self._known_sender(om.sender):
                report.ignored += 1
                log.info("ignored mail from unknown sender %s (no game)", om.sender)
                return "ignored"
            report.refused += 1
            what = f"There is no game {game_id!r}." if game_id else (
                "The moderator could not tell which game your mail is for.")
            self._reply(om, game_id, "unknown game",
                        what + " Reply to a mail of your game (its subject carries "
                        "[pbem:GAME:SECRET]) or write the lines 'game: GAME' and 'secret: SECRET'.",
                        unchanged=True)
            return "processed"
        with self.store.lock(game_id):
            record = self.store.load(game_id)
            return self._handle_in_game(om, mid, record, report)

    def _games_of(self, sender: str) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
        """The games in which ``sender`` plays: ``(game id, game file data, their
        player entries)``; unreadable game files are passed over."""
        out = []
        for gid in self.store.ids():
            try:
                data = self.store.read_data(gid)
            except StoreError:
                continue
            mine = [p for p in data.get("players") or [] if canonical_address(p["address"]) == sender]
            if mine:
                out.append((gid, data, mine))
        return out

    def _known_sender(self, sender: str) -> bool:
        """Whether ``sender`` is a registered player of any game (only they get
        answers to mails that name no valid game: no backscatter to strangers)."""
        return bool(self._games_of(sender))

    def _handle_in_game(self, om: OrderMail, mid: str, record: GameRecord, report: CycleReport) -> str:
        gid = record.id
        player = record.player_by_address(om.sender)
        if player is None:
            report.ignored += 1
            log.warning("game %s: mail from unregistered address %s refused", gid, om.sender)
            named = next((p for p in record.players if om.secret and hmac.compare_digest(
                p.secret.encode(), om.secret.encode())), None)
            if named is not None:
                self._send(self._message(
                    gid, named.address, f"Union Pacific {gid}: a mail in your name was refused",
                    render("notice.txt", game_id=gid, sender=om.sender),
                ))
            return "ignored"
        if not om.secret or not hmac.compare_digest(player.secret.encode(), om.secret.encode()):
            report.refused += 1
            self._reply(om, gid, "secret missing or wrong",
                        "Your mail did not carry your secret for this game, or carried a wrong one. "
                        "Reply to a mail of the moderator (the subject keeps your secret) or add "
                        "the line 'secret: ...' with your current secret (from your welcome mail, or the "
                        "mail that answered 'secret new').",
                        to=player.address, unchanged=True)
            return "processed"
        commands = list(dict.fromkeys(c for c in (command(l) for l in om.lines) if c))
        orders = [l for l in om.lines if command(l) is None]
        tag = status_context(record, player.name, [])["tag"]
        if record.has_message(mid):
            # applied in an earlier, interrupted cycle: only unanswered commands remain
            report.duplicates += 1
            log.info("game %s: mail %s already applied", gid, om.message_id)
            self._answer_commands(commands, om, mid, record, player, tag, report, skip_status=True,
                                  count_duplicate=False)
            return "processed"
        has_order = bool(orders) and self._has_order(orders, record)
        if has_order or (orders and not commands):
            # the order first, so that commands beside it answer the new position
            self._apply_orders(om, mid, record, player, orders, tag, report)
            self._answer_commands(commands, om, mid, record, player, tag, report, skip_status=True)
        elif commands:
            self._answer_commands(commands, om, mid, record, player, tag, report, skip_status=False)
        else:
            report.refused += 1
            self._reply(om, gid, "no orders found",
                        "The moderator found no orders in your mail (quoted text is ignored: "
                        "write your orders on top of the reply, one per line).",
                        legal=self._legal_lines(record, player.name), unchanged=True, tag=tag)
        return "processed"

    def _answer_commands(self, commands: list[str], om: OrderMail, mid: str, record: GameRecord,
                         player: Player, tag: str, report: CycleReport, skip_status: bool,
                         count_duplicate: bool = True) -> None:
        """Answer the mail's commands once (keyed ``MID#commands``, apart from the
        order's own key).  ``skip_status``: a status mail follows the order anyway."""
        if not commands:
            return
        cmd_key = mid + "#commands"
        if self._answered(cmd_key):
            report.duplicates += count_duplicate
            return
        self._answering = cmd_key
        try:
            for cmd in commands:
                if cmd == "status" and skip_status:
                    continue
                self._command(cmd, om, record, player, tag)
        finally:
            self._answering = mid
        report.commands += 1

    def _apply_orders(self, om: OrderMail, mid: str, record: GameRecord, player: Player,
                      orders: list[str], tag: str, report: CycleReport) -> None:
        """Parse the order lines into one action and apply it, saving the game file;
        or refuse it with a reply, the game file untouched."""
        received = self.clock().isoformat(timespec="seconds")
        self._answering = mid
        try:
            action = parse_turn(orders, record.game.board)
            record.apply(player.name, action, mid, received)  # atomic: refused = unchanged
        except OrderError as exc:
            report.refused += 1
            self._refuse(om, record, player, orders, f"Order not understood: {exc.reason}",
                         self._legal_lines(record, player.name), tag, failed=exc.line)
            return
        except IllegalAction as exc:
            report.refused += 1
            self._refuse(om, record, player, orders, f"Order not legal: {reason(exc)}",
                         exc.legal or self._legal_lines(record, player.name), tag)
            return
        fault("after-apply")
        self.store.save(record)
        fault("after-save")
        report.applied += 1
        log.info("game %s: %s: %s", record.id, player.name, record.history[-1]["order"])

    @staticmethod
    def _has_order(lines: list[str], record: GameRecord) -> bool:
        try:
            parse_turn(lines, record.game.board)
        except NoOrderFound:
            return False
        except OrderError:
            return True
        return True

    def _legal_lines(self, record: GameRecord, name: str) -> list[str]:
        s = legal_summary(record.game, name)
        if record.game.phase == "over":
            return ["nothing: the game is over"]
        if name not in record.game.waiting_for():
            if record.game.phase == "initial":
                waiting = ", ".join(record.game.waiting_for())
                return [f"nothing: you have made your initial investment; waiting for {waiting}"]
            return [f"nothing until your turn (it is {record.game.to_move}'s turn)"]
        out = list(s["starts"])
        if s["builds"]:
            out += s["builds"]
            out.append("after a build, one of: " + " | ".join(s["takes"]))
        if s["invest"]:
            out.append("invest shares you hold: " + ", ".join(s["invest"]) + "; then discard a track card")
        out += s["pass"]
        return out

    def _refuse(self, om, record, player, orders, message, legal, tag, failed: str = "") -> None:
        """Reply to a refused turn: the lines (the failing one marked, the others not
        applied), the reason, what is legal now, the unchanged position."""
        ctx = status_context(record, player.name, [])
        position = render("position.txt", **ctx)
        marked = [("FAILED  " if line == failed else "not applied  ") + line for line in orders] \
            if failed in orders else orders
        self._reply(om, record.id, "order refused", message, to=player.address, quoted=marked,
                    legal=legal, unchanged=True, position=position, tag=tag,
                    game_over=record.game.phase == "over")

    def _command(self, cmd: str, om: OrderMail, record: GameRecord, player: Player, tag: str) -> None:
        gid = record.id
        if cmd == "help":
            text = render("help.txt", game_id=gid, moderator_address=self.config.moderator_address)
            self._send(self._message(gid, player.address, f"{tag} Union Pacific {gid}: help", text,
                                     in_reply_to=om.message_id, references=om.references))
        elif cmd == "status":
            self._send(self.status_mail(record, player, [], in_reply_to=om.message_id))
        elif cmd == "history":
            over = record.game.phase != "initial"
            hist = [
                {"player": h["player"],
                 "order": h["order"] if h["player"] == player.name else public_order(h["order"]),
                 "public": over or h["player"] == player.name}
                for h in record.history
            ]
            text = render("history.txt", game_id=gid, history=hist, log=record.game.log)
            self._send(self._message(gid, player.address, f"{tag} Union Pacific {gid}: history", text,
                                     in_reply_to=om.message_id, references=om.references))
        elif cmd == "rules":
            text = rules_text(gid, record.game)
            self._send(self._message(gid, player.address, f"{tag} Union Pacific {gid}: rules", text,
                                     in_reply_to=om.message_id, references=om.references))
        elif cmd == "secret new":
            player.secret = new_secret()
            self.store.save(record)
            new_tag = status_context(record, player.name, [])["tag"]
            self._send(self._message(
                gid, player.address, f"{new_tag} Union Pacific {gid}: your new secret",
                f"Your new secret for game {gid} is {player.secret}. The old one no longer works.\n",
                in_reply_to=om.message_id, references=om.references))
