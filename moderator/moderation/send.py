"""Outgoing mail: compose, spool durably, send what is due, alert the operator.

Every mail goes through the spool (``store.spool.Spool``): it is written to disk
first and sent at the end of the cycle (``flush``), so a crash never loses a mail.
A mail that answers an incoming mail is spooled with that mail's key
(``answers=``, see ``verdict.Verdict.key``) and the key is recorded in the
bookkeeping database (``store.bookkeeping``, committed with the mail's
transaction): a mail is never answered twice, even when the cycle that answered
it died before moving it out of the inbox (the spooled entry names the key until
it is sent, and the key is committed before the spool is sent).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from typing import Any, Callable, Iterable, Sequence

from .. import i18n
from ..config import Config
from ..mail.compose import build_message
from ..mail.read import OrderMail, canonical_address
from ..mail.threads import new_message_id, thread_token
from ..mail.transport import Outbox, TransportError
from ..render import MAP_HERE, render, to_html
from ..render.words import word
from ..store.bookkeeping import Bookkeeping
from ..store.gamefile import GameRecord, Player
from ..store.spool import SendResult, Spool
from . import faults
from .report import CycleReport

log = logging.getLogger("pbem")

ALERT_REPEAT = 86400.0
"""Seconds before the operator is mailed again about the same problem."""
ORDERLESS_PER_DAY = 2
"""Answers per sender, game and UTC day to mails with no order and no command
(a vacation responder without auto-reply headers would be answered forever)."""
WARNINGS_PER_DAY = 2
"""Notices "a mail in your name was refused" per player, game and UTC day."""
DAILY_SENT = "smtp-sent"
"""The bookkeeping's ``daily_counts`` name of the mails the SMTP server accepted
(for ``smtp.daily_limit``)."""
MAX_IMAGE_WIDTH = 640
"""The widest an inline picture is shown (``width``); CSS narrows it to the screen."""


@dataclass(frozen=True)
class ThreadOf:
    """What every mail to one player of one game shares: the ``subject`` (the
    notice ``thread_subject``, ``templates/words/threads.txt``: no turn, no
    secret), the ``game_id`` and ``token`` in its Message-ID (``mail.threads.thread_token`` of the
    player's current secret) and the ``thread`` it continues (the Message-ID of
    the first mail to the player, or None).  The Subject is always rendered in
    English, whatever language the player reads: it stays the same for the whole
    thread, and so every mail client keeps the game in one conversation."""

    game_id: str
    subject: str
    token: str
    thread: str | None = None

    @classmethod
    def of(cls, game_id: str, name: str, secret: str, thread: str | None = None) -> "ThreadOf":
        """The thread of player ``name`` (with ``secret``) in game ``game_id``."""
        with i18n.speaking(i18n.DEFAULT):
            subject = word("threads", "thread_subject", game_id=game_id, player=name)
        return cls(game_id, subject, thread_token(game_id, secret), thread)


def thread_of(record: GameRecord, player: Player) -> ThreadOf:
    """``player``'s thread in ``record``'s game (with their current secret)."""
    return ThreadOf.of(record.id, player.name, player.secret, record.threads.get(player.name))


def _png_width(png: bytes) -> int:
    """The width in pixels of a PNG (from its IHDR chunk, without decoding)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return int.from_bytes(png[16:20], "big")


class Post:
    """The moderator's outgoing mail for one cycle (or one game creation).

    ``bk`` is the bookkeeping database (answered keys, bounces, alerts, SMTP
    outage); its writes join the caller's ``bk.transaction()``; ``notice`` a note for every status mail (the outage
    notice: the text, or what words it in the language in force, ``notice_text``);
    ``clock`` returns the current time.  Counts the replies per
    recipient (``config.max_replies_per_sender`` per cycle)."""

    def __init__(self, config: Config, spool: Spool, bk: Bookkeeping,
                 clock: Callable[[], datetime], notice: str | Callable[[], str] = ""):
        self.config = config
        self.spool = spool
        self.bk = bk
        self.clock = clock
        self.resign_asked: set[tuple[str, str]] = set()
        """``(game id, player name)`` of the resignations asked for in this cycle
        (``seats.seat_answer``: their confirmation must come in a later cycle)."""
        self.notice = notice
        self.tags: dict[str, Any] = {}
        """Spool metadata added to every mail ``put`` while set (``gm.execute``:
        the ``batch`` of the save that records a command, so that ``notify.sweep``
        drops its announcements when that save did not happen)."""
        self.puts = 0
        """How many mails ``put`` spooled (``gm.execute``: whether a command spooled any)."""
        self.domain = config.moderator_address.rpartition("@")[2] or "pbem.localhost"
        self._replies: dict[str, int] = {}
        self.forgotten: list[tuple[str, list[str]]] = []
        """``(address, names)`` of the people forgotten in this cycle
        (``privacy.forget``): ``privacy.finish`` purges and vacuums after sending."""

    def notice_text(self) -> str:
        """The note for every status mail (``notice``) in the language in force."""
        return self.notice() if callable(self.notice) else self.notice

    def message(self, game_id: str | None, to: str, subject: str, text: str,
                in_reply_to: str | None = None, references: Iterable[str] = (),
                auto: str = "auto-replied", images: Sequence[tuple[str, bytes, str]] = (),
                token: str | None = None, html_template: str = "mail/text.html",
                html_context: dict[str, Any] | None = None, from_name: str | None = None,
                calendar: Sequence[tuple[str, str]] = ()) -> EmailMessage:
        """A mail from the moderator (text and its HTML alternative; RFC 3834
        ``Auto-Submitted: auto`` value ``auto``).  A game's mails get Message-IDs
        ``<...pbem.GAME@domain>`` so that replies route back to the game; a mail to
        a player carries their ``token`` (``mail.threads.thread_token``) in it,
        ``<...TOKEN.pbem.GAME@domain>``, so that their reply authenticates.
        ``images``: PNGs ``(cid, bytes, alt)`` shown inline in the HTML part where
        ``text`` has the line ``render.MAP_HERE`` (taken out of the plain text).
        The HTML part is ``html_template`` (``templates/mail/``; by default the
        text laid out) rendered by ``render.to_html`` with ``html_context``.
        ``from_name``: the From display name instead of ``config.moderator_name``
        (a relayed message: the seat's name; the address stays the moderator's).
        ``calendar``: the mail's iCalendar objects ``(method, text)``
        (``moderation.calendar.calendar_parts``; ``build_message``)."""
        plain = text.replace(MAP_HERE + "\n", "").replace(MAP_HERE, "")
        figures = [(cid, alt, min(_png_width(png), MAX_IMAGE_WIDTH)) for cid, png, alt in images]
        html = to_html(text, figures, html_template, **(html_context or {}))
        msg = build_message(
            from_addr=self.config.moderator_address, from_name=from_name or self.config.moderator_name,
            to=to, subject=subject, text=plain, html=html,
            images=[(cid, png) for cid, png, _ in images],
            in_reply_to=in_reply_to, references=[r for r in references if r],
            auto_submitted=auto, domain=self.domain, calendar=calendar,
            message_id=new_message_id(game_id, token, self.domain) if game_id else None,  # stored last
        )
        return msg

    def answer(self, om: OrderMail, game_id: str | None, to: str, subject: str, text: str,
               token: str | None = None, thread: str | None = None,
               calendar: Sequence[tuple[str, str]] = ()) -> EmailMessage:
        """A mail to ``to`` answering ``om`` (In-Reply-To and References, RFC 5322
        section 3.6.4); ``thread``: the Message-ID that starts the player's thread
        (``GameRecord.threads``), put first in References when ``om`` lost it;
        ``token``, ``calendar``: as for ``message``."""
        refs = [r for r in om.references if r]
        if thread and thread not in refs:
            refs.insert(0, thread)
        return self.message(game_id, to, subject, text, in_reply_to=om.message_id, references=refs,
                            token=token, calendar=calendar)

    def put(self, msg: EmailMessage, kind: str = "reply", answers: str | None = None,
            game: str | None = None, player: str | None = None, events: list[str] | None = None,
            **extra: Any) -> str:
        """Spool ``msg`` durably (it is sent by ``flush``); returns the spool
        entry's name.  ``answers``: the key of the mail it answers, recorded as
        answered (in the entry and in the bookkeeping)."""
        meta = {"kind": kind, "game": game, "player": player, "events": events or [],
                "answers": answers, **self.tags, **extra}
        now = self.clock()
        name = self.spool.add(msg, meta, now)
        self.puts += 1
        if answers:
            self.bk.mark_answered(answers, game, now)
        return name

    def answered(self, key: str) -> bool:
        """Whether the mail (or part of a mail) ``key`` was answered already: in the
        bookkeeping, or by a mail still in the spool (an interrupted cycle)."""
        return self.bk.answered(key) or any(
            e.meta.get("answers") == key for e in self.spool.entries())

    def reply(self, om: OrderMail, key: str, to: str, game_id: str | None, title: str,
              message: str, player: ThreadOf | None = None, calendar: Sequence[tuple[str, str]] = (),
              **extra: Any) -> bool:
        """Spool the reply ``templates/reply.txt`` (``title``, ``message`` and
        ``extra``: ``quoted`` lines (``{"line", "mark"}``, see ``act.quoted``) and
        ``omitted`` (how many were left out), ``legal``, ``position``,
        ``game_over``, ``deadline``: the line saying when the move is still due) to ``to``, answering ``om`` (the mail ``key``); not beyond
        the per-cycle limit of replies to one address.  To a registered
        ``player`` of ``game_id`` it goes in their thread (``ThreadOf``: their
        Subject, token and thread); else its Subject names ``title``.
        ``calendar``: the iCalendar objects of a reply in a player's thread (as
        ``message``).  Returns whether the reply was spooled (False: over the limit)."""
        ctx = {"game_id": game_id, "title": title, "message": message, "quoted": [], "omitted": 0,
               "legal": [], "unchanged": True, "position": "", "game_over": False, "deadline": "", **extra}
        if not self.allow(to, title):
            return False
        if player is not None:
            self.put(self.answer(om, player.game_id, to, player.subject, render("reply.txt", **ctx),
                                 token=player.token, thread=player.thread, calendar=calendar), answers=key)
            return True
        subject = word("notices", "subject", game_id=game_id, title=title).replace("  ", " ")
        self.put(self.answer(om, game_id, to, subject, render("reply.txt", **ctx)), answers=key)
        return True

    def allow(self, to: str, what: str, count_only: bool = False) -> bool:
        """Whether one more answer to ``to`` (``what``: for the log) fits the
        per-cycle limit ``config.max_replies_per_sender`` (replies, command
        answers and notices alike); counts it.  ``count_only``: counted but always
        allowed (the answer to ``secret new``, which must reach the player)."""
        recipient = canonical_address(to)
        self._replies[recipient] = self._replies.get(recipient, 0) + 1
        if self._replies[recipient] > self.config.max_replies_per_sender and not count_only:
            log.warning("reply limit reached for %s; not answering %r", recipient, what)
            return False
        return True

    def daily(self, name: str, limit: int) -> bool:
        """Whether one more answer counted as ``name`` fits ``limit`` per UTC day
        (counted in the bookkeeping's ``daily_counts``, so across cycles); counts
        it when it does."""
        now = self.clock()
        if self.bk.count_today(name, now) >= limit:
            return False
        self.bk.bump_count(name, now)
        return True

    def tell_operator(self, text: str) -> None:
        """Mail the operator (config ``operator``) about ``text``: once, and again
        a day later (``ALERT_REPEAT``) if the problem persists."""
        if not self.config.operator:
            return
        now = self.clock()
        last = self.bk.alert_sent(text)
        if last and (now - last).total_seconds() < ALERT_REPEAT:
            return
        self.put(self.message(None, self.config.operator, word("notices", "alert_subject"), text + "\n",
                              auto="auto-generated"), kind="operator")
        self.bk.mark_alert(text, now)  # keeps the newest ``Bookkeeping.ALERTS_KEEP``

    def flush(self, report: CycleReport, outbox: Outbox | None = None, ignore_backoff: bool = False,
              only: set[str] | None = None) -> None:
        """Send what is due in the spool through ``outbox`` (default: the configured
        one, opened and closed here); record permanent failures (SMTP 5xx) as
        bounces and tell the operator.  Transport errors go to ``report.errors``.
        ``ignore_backoff`` and ``only`` (entry names): as ``Spool.send_due``
        (``pbem spool retry``)."""
        if not any(self.spool.dir.glob("*.eml")):
            return
        now = self.clock()
        try:
            box = outbox or self.config.open_outbox()
        except TransportError as exc:
            report.errors.append(f"cannot open the outbox: {exc}")
            if self.bk.smtp_failing_since() is None:
                self.bk.set_smtp_failing_since(now)
            report.waiting = self._waiting()
            return
        try:
            with self.bk.transaction():
                self._flush(report, box, now, close=outbox is None, ignore_backoff=ignore_backoff, only=only)
        finally:
            report.waiting = self._waiting()

    def _hold_all(self, report: CycleReport) -> None:
        """Nothing is tried (a sending limit holds every mail): count them in
        ``report.held``, and keep the time from running against the players
        they are for (``hold_for_players``)."""
        entries = self.spool.entries()
        report.held += len(entries)
        hold_for_players(self, SendResult(undelivered=[(e.meta.get("game"), e.meta.get("player"))
                                                       for e in entries]), self.clock())

    def _waiting(self) -> int:
        """The mails in the spool (not those refused for good in ``failed/``)."""
        return sum(1 for _ in self.spool.dir.glob("*.eml"))

    def daily_limit(self) -> tuple[int | None, str]:
        """The mails a UTC day the SMTP server is given at most, and what says
        so: ``smtp.daily_limit``, or what the server really took on a day it
        answered with its daily limit (``Bookkeeping.learned_daily_limit``,
        kept for a week after it was last met) when that is lower; ``(None, "")`` without either (or without SMTP)."""
        if self.config.smtp is None:
            return None, ""
        configured, learned = self.config.smtp.daily_limit, self.bk.learned_daily_limit(self.clock())
        if learned is not None and (configured is None or learned < configured):
            return learned, "learned from the SMTP server's answer"
        return configured, "smtp.daily_limit" if configured is not None else ""

    def _flush(self, report: CycleReport, box: Outbox, now: datetime, close: bool,
               ignore_backoff: bool = False, only: set[str] | None = None) -> None:
        held_by = self.bk.smtp_limit()
        if held_by and not ignore_backoff and now < datetime.fromisoformat(held_by["until"]):
            # the server's sending limit has not yet reset: nothing is tried
            if close:
                box.close()
            self._hold_all(report)
            log.warning("the SMTP server's sending limit (%s) holds %d mail(s) in the spool until %s",
                        held_by.get("answer"), report.held, held_by["until"])
            return
        limit, said = self.daily_limit()
        limited = None
        if limit is not None:
            left = limit - self.bk.count_today(DAILY_SENT, now)
            if left <= 0:
                # nothing is tried (the entries stay due): the first cycle of the
                # next UTC day sends them
                if close:
                    box.close()
                self._hold_all(report)
                log.warning("daily sending limit of %d mails (%s) reached: %d mail(s) "
                            "wait in the spool for the next day (UTC)", limit, said, report.held)
                return
            box = limited = _DailyLimit(box, left, limit, said)
        recorder = _Recorder(box)
        try:
            result = self.spool.send_due(recorder, now, after_send=lambda: faults.fault("after-send"),
                                         after_accept=lambda: faults.fault("after-accept"),
                                         ignore_backoff=ignore_backoff, only=only)
        finally:
            if close:
                box.close()
        record_sent(self, result, report, now, recorder, limited)


def record_sent(post: Post, result: SendResult, report: CycleReport, now: datetime,
                recorder: _Recorder | None = None, limited: _DailyLimit | None = None) -> None:
    """Record what ``Spool.send_due`` did (``result``) in ``report`` and the
    bookkeeping of ``post``: the mails sent against ``smtp.daily_limit``
    (``limited``: the outbox that held the mails over it, counted in
    ``report.held``, not errors), the SMTP outage (since when nothing was
    accepted), the deferrals once for each cause in words (``recorder``: the
    outbox as the spool saw it), bounces (SMTP 5xx for a recipient; the player
    later reads only the code, never the server's host or words), and alerts to
    the operator for bounces and for a server refusing everything
    (``SendResult.server_failure``: the cycle fails, no bounce is recorded)."""
    held = limited.held if limited is not None else 0
    for _ in range(result.sent):  # also without a limit: what a server's limit is learned from
        post.bk.bump_count(DAILY_SENT, now)
    if held:
        log.warning("%s: %d mail(s) wait in the spool for the next day (UTC)", limited.words, held)
    report.sent += result.sent
    report.deferred += result.deferred - held - result.held
    report.held += held + result.held
    hold_for_players(post, result, now)
    if result.limit is not None:
        record_limit(post, result, now)
        _record_refusals(post, result, report)
        return
    if result.server_failure is not None:
        if post.bk.smtp_failing_since() is None:
            post.bk.set_smtp_failing_since(now)
        # a batch that failed as a whole (connect, TLS, login) in words; else the
        # spool's own words (every recipient refused alike)
        reasons = list(dict.fromkeys(deferral_reason(err) for _, err in recorder.deferred())) \
            if recorder is not None else []
        why = reasons[0] if len(reasons) == 1 else result.server_failure
        text = f"SMTP server failure: {why}; {result.deferred} mail(s) kept in the spool"
        log.error("%s", text)
        report.errors.append(text)
        post.tell_operator(word("operator", "alert_smtp_server", reason=why))
        return
    if result.sent or result.failed or result.refused:
        post.bk.set_smtp_failing_since(None)  # the server answers
        if post.bk.smtp_limit() is not None:
            post.bk.set_smtp_limit(None)  # and its limit is over
    elif result.deferred - held and post.bk.smtp_failing_since() is None:
        post.bk.set_smtp_failing_since(now)

    # a deferred mail is retried by a later cycle, but the cycle reports it:
    # once for each cause, in words (a server that is down defers every mail)
    def is_held(err: object) -> bool:
        return limited is not None and limited.words in str(err)

    deferred: dict[str, list[str]] = {}
    for to, err in (recorder.deferred() if recorder is not None else []):
        if not is_held(err):
            deferred.setdefault(deferral_reason(err), []).append(to)
    if not deferred and any(not is_held(e) for e in result.errors):  # an outbox that did not say why
        deferred = {"the server gave no reason": []}
    for why, recipients in deferred.items():
        text = (f"{len(recipients)} mail(s) kept in the spool for a later cycle "
                f"(to {', '.join(dict.fromkeys(recipients))}): {why}") if recipients else \
            f"mail(s) kept in the spool for a later cycle: {why}"
        log.warning("%s", text)
        report.errors.append(text)
    _record_refusals(post, result, report)


def _record_refusals(post: Post, result: SendResult, report: CycleReport) -> None:
    """The mails refused for good in ``result``: bounces for those about the
    recipient (``failed``), alerts for the others (``refused``)."""
    for to, game, why, code in result.failed:
        report.errors.append(f"mail to {to} refused permanently: {why}")
        post.bk.set_bounce(canonical_address(to), word("operator", "bounce_smtp", code=code))
        log.error("mail to %s (game %s) refused permanently: %s", to, game, why)
        if canonical_address(to) != canonical_address(post.config.operator):
            post.tell_operator(word("notices", "alert_mail_refused", to=to, game=game, reason=why,
                                    folder=post.spool.dir / "failed"))
    for to, game, why, code in result.refused:  # not about the recipient: no bounce
        report.errors.append(f"mail to {to} refused permanently: {why}")
        log.error("mail to %s (game %s) refused permanently (not for its recipient: no bounce "
                  "recorded): %s", to, game, why)
        if canonical_address(to) != canonical_address(post.config.operator):
            post.tell_operator(word("operator", "alert_mail_refused_message", to=to, game=game, reason=why,
                                    folder=post.spool.dir / "failed"))


def record_limit(post: Post, result: SendResult, now: datetime) -> None:
    """The SMTP server answered with its sending limit (``result.limit``, a
    ``mail.answers.Answer``): record it (``Bookkeeping.set_smtp_limit``: no
    mail is tried before ``result.limit_until``), learn the day's limit from
    the mails it took today when the limit is a daily one (a window of a day
    or more), and tell the operator once: what the server said, what was
    held, when sending resumes."""
    answer, until = result.limit, result.limit_until
    accepted = post.bk.count_today(DAILY_SENT, now)
    learned = None
    if answer.window >= 86400 and accepted > 0:
        known = post.bk.learned_daily_limit(now)
        learned = accepted if known is None else min(known, accepted)
        post.bk.set_learned_daily_limit(learned, now)
    post.bk.set_smtp_failing_since(None)  # the server answers: no outage of the moderator
    prior = post.bk.smtp_limit()  # still set: nothing went out since it
    first = prior.get("first", prior.get("since")) if prior and prior.get("row") == answer.row else None
    again = first is not None and (now - datetime.fromisoformat(first)).total_seconds() < ALERT_REPEAT
    post.bk.set_smtp_limit({"since": now.isoformat(), "until": until.isoformat(), "row": answer.row,
                            "provider": answer.provider, "answer": answer.text, "source": answer.source,
                            "accepted": accepted, "held": result.held,
                            "first": first if again else now.isoformat()})
    text = (f"the SMTP server's sending limit ({answer.provider}, {answer.row or 'enhanced status code'}): "
            f"{answer.text}; {result.held} mail(s) kept in the spool until {until.isoformat(timespec='seconds')}")
    log.error("%s", text)
    report_limit = word("operator", "alert_smtp_limit", provider=answer.provider, answer=answer.text,
                        source=answer.source, since=now.isoformat(timespec="seconds"),
                        until=until.isoformat(timespec="seconds"), held=result.held, accepted=accepted,
                        learned=learned)
    if not again:  # the same limit met again right after its window: told once a day
        post.tell_operator(report_limit)


def hold_for_players(post: Post, result: SendResult, now: datetime) -> None:
    """Keep the games whose mails to players the server could not take
    (``result.undelivered``: its limit, an outage) in
    ``Bookkeeping.mail_held``, so that their deadlines do not run meanwhile
    (``deadlines.extend_for_held_mail``); mark a held game ``delivered`` once
    none of its mails is left in the spool after a batch that went through."""
    held = post.bk.mail_held()
    changed = False
    for game, player in result.undelivered:
        if game is None or player is None:
            continue
        entry = held.setdefault(game, {"since": now.isoformat(), "players": []})
        entry.pop("delivered", None)
        if player not in entry["players"]:
            entry["players"].append(player)
        changed = True
    if held and result.limit is None and result.server_failure is None and not result.undelivered:
        waiting = {e.meta.get("game") for e in post.spool.entries()}
        for game, entry in held.items():
            if game not in waiting and "delivered" not in entry:
                entry["delivered"] = now.isoformat()
                changed = True
    if changed:
        post.bk.set_mail_held(held)


class _DailyLimit(Outbox):
    """An outbox that passes at most ``left`` mails of a batch on to ``box``
    (the rest of ``smtp.daily_limit`` for today) and answers the others with a
    temporary TransportError (code 451, so the spool keeps them); ``held``
    counts those."""

    def __init__(self, box: Outbox, left: int, limit: int, said: str = "smtp.daily_limit") -> None:
        self.box, self.left, self.held = box, left, 0
        self.words = f"daily sending limit of {limit} mails ({said}) reached"

    def send(self, msg: EmailMessage) -> None:
        result = self.send_many([msg])[0]
        if result is not None:
            raise result

    def send_many(self, msgs: Iterable[EmailMessage],
                  on_result: Callable[[int, Exception | None], None] | None = None) -> list[Exception | None]:
        msgs = list(msgs)
        now, later = msgs[:max(self.left, 0)], msgs[max(self.left, 0):]
        results = self.box.send_many(now, on_result=on_result) if now else []
        self.left -= sum(1 for r in results if r is None)
        self.held += len(later)
        kept = [TransportError(self.words, code=451, step="held") for _ in later]
        for i, err in enumerate(kept, start=len(results)):
            if on_result is not None:
                on_result(i, err)
        return results + kept

    def close(self) -> None:
        self.box.close()


class _Recorder:
    """The outbox as the spool sees it, keeping every outcome (the spool keeps
    only its text): ``deferred()`` lists ``(To, error)`` of the mails not
    accepted for now, i.e. neither sent nor refused for good (5xx, or a mail
    without sender or recipient)."""

    def __init__(self, box: Outbox):
        self.box = box
        self.outcomes: list[tuple[EmailMessage, Exception | None]] = []

    def send(self, msg: EmailMessage) -> None:
        try:
            self.box.send(msg)
        except (TransportError, ValueError) as exc:
            self.outcomes.append((msg, exc))
            raise
        self.outcomes.append((msg, None))

    def send_many(self, msgs: Iterable[EmailMessage],
                  on_result: Callable[[int, Exception | None], None] | None = None) -> list[Exception | None]:
        msgs = list(msgs)
        try:
            results = self.box.send_many(msgs, on_result=on_result)
        except TransportError as exc:
            self.outcomes += [(m, exc) for m in msgs]
            raise
        self.outcomes += list(zip(msgs, results))
        return results

    def close(self) -> None:
        self.box.close()

    def deferred(self) -> list[tuple[str, Exception]]:
        out = []
        for msg, err in self.outcomes:
            code = getattr(err, "code", None)
            if err is None or isinstance(err, ValueError) or (code is not None and 500 <= code < 600):
                continue
            out.append((str(msg.get("To", "")), err))
        return out


def deferral_reason(err: BaseException) -> str:
    """Why a mail was not accepted for now, in words for the operator's log: the
    server and its answer (``"the SMTP server 127.0.0.1:25 answered 421: Try
    again later"``), or what failed (``"the SMTP server 127.0.0.1:25 could not be
    reached: connection refused"``), never a Python exception's repr."""
    where = "the outbox"
    if isinstance(err, TransportError) and err.host is not None:
        where = f"the SMTP server {err.host}:{err.port}"
    step = getattr(err, "step", None)
    text = str(err)
    detail = text.split(" failed: ", 1)[1] if " failed: " in text else text
    code = getattr(err, "code", None)
    if code is not None:
        message = getattr(err.__cause__, "message", None)
        said = " ".join(str(message).split()) if message else detail
        return f"{where} answered {code}: {said}"
    chain, link = [], err.__cause__
    while link is not None and len(chain) < 5:
        chain.append(link)
        link = link.__cause__ or link.__context__
    timeouts = [c for c in chain if isinstance(c, TimeoutError) or "Timeout" in type(c).__name__]
    tls = [c for c in chain if type(c).__module__ == "ssl" and isinstance(c, OSError)]  # ssl.SSLError
    system = [c for c in chain if isinstance(c, OSError) and c.errno is not None]
    if timeouts:
        return f"{where} did not answer in time ({step or 'waiting for it'})"
    if tls:
        reason = getattr(tls[0], "verify_message", None) or getattr(tls[0], "reason", None) or tls[0].strerror
        return f"the TLS handshake with {where} failed: {reason}"
    if system:
        what = os.strerror(system[0].errno).lower()
        return (f"{where} could not be reached: {what}" if step == "connect"
                else f"{where}: the connection failed: {what}")
    if step == "connect":
        return f"{where} could not be reached"
    if detail.endswith("connection lost"):
        return f"{where} closed the connection"
    head, _, tail = detail.partition(": ")
    return f"{where}: {tail if head.isidentifier() and tail else detail}"  # no "TypeName: "
