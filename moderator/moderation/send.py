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
from datetime import datetime
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any, Callable, Iterable, Sequence

from ..config import Config
from ..mail.compose import build_message
from ..mail.read import OrderMail, canonical_address
from ..mail.transport import Outbox, TransportError
from ..render import MAP_HERE, render, to_html
from ..render.words import word
from ..store.bookkeeping import Bookkeeping
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
MAX_IMAGE_WIDTH = 640
"""The widest an inline picture is shown (``width``); CSS narrows it to the screen."""


def _png_width(png: bytes) -> int:
    """The width in pixels of a PNG (from its IHDR chunk, without decoding)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return int.from_bytes(png[16:20], "big")


class Post:
    """The moderator's outgoing mail for one cycle (or one game creation).

    ``bk`` is the bookkeeping database (answered keys, bounces, alerts, SMTP
    outage); its writes join the caller's ``bk.transaction()``; ``notice`` a note for every status mail (the outage
    notice); ``clock`` returns the current time.  Counts the replies per
    recipient (``config.max_replies_per_sender`` per cycle)."""

    def __init__(self, config: Config, spool: Spool, bk: Bookkeeping,
                 clock: Callable[[], datetime], notice: str = ""):
        self.config = config
        self.spool = spool
        self.bk = bk
        self.clock = clock
        self.notice = notice
        self.domain = config.moderator_address.rpartition("@")[2] or "pbem.localhost"
        self._replies: dict[str, int] = {}

    def message(self, game_id: str | None, to: str, subject: str, text: str,
                in_reply_to: str | None = None, references: Iterable[str] = (),
                auto: str = "auto-replied", images: Sequence[tuple[str, bytes, str]] = ()) -> EmailMessage:
        """A mail from the moderator (text and its HTML alternative; RFC 3834
        ``Auto-Submitted: auto`` value ``auto``).  A game's mails get Message-IDs
        ``<...pbem.GAME@domain>`` so that replies route back to the game.
        ``images``: PNGs ``(cid, bytes, alt)`` shown inline in the HTML part where
        ``text`` has the line ``render.MAP_HERE`` (taken out of the plain text)."""
        plain = text.replace(MAP_HERE + "\n", "").replace(MAP_HERE, "")
        figures = [(cid, alt, min(_png_width(png), MAX_IMAGE_WIDTH)) for cid, png, alt in images]
        msg = build_message(
            from_addr=self.config.moderator_address, from_name=self.config.moderator_name,
            to=to, subject=subject, text=plain, html=to_html(text, figures),
            images=[(cid, png) for cid, png, _ in images],
            in_reply_to=in_reply_to, references=[r for r in references if r],
            auto_submitted=auto, domain=self.domain,
        )
        if game_id:
            del msg["Message-ID"]
            msg["Message-ID"] = make_msgid(idstring=f"pbem.{game_id}", domain=self.domain)
        return msg

    def answer(self, om: OrderMail, game_id: str | None, to: str, subject: str, text: str) -> EmailMessage:
        """A mail to ``to`` answering ``om`` (In-Reply-To and References, RFC 5322
        section 3.6.4)."""
        return self.message(game_id, to, subject, text, in_reply_to=om.message_id, references=om.references)

    def put(self, msg: EmailMessage, kind: str = "reply", answers: str | None = None,
            game: str | None = None, player: str | None = None, events: list[str] | None = None,
            **extra: Any) -> str:
        """Spool ``msg`` durably (it is sent by ``flush``); returns the spool
        entry's name.  ``answers``: the key of the mail it answers, recorded as
        answered (in the entry and in the bookkeeping)."""
        meta = {"kind": kind, "game": game, "player": player, "events": events or [],
                "answers": answers, **extra}
        now = self.clock()
        name = self.spool.add(msg, meta, now)
        if answers:
            self.bk.mark_answered(answers, game, now)
        return name

    def answered(self, key: str) -> bool:
        """Whether the mail (or part of a mail) ``key`` was answered already: in the
        bookkeeping, or by a mail still in the spool (an interrupted cycle)."""
        return self.bk.answered(key) or any(
            e.meta.get("answers") == key for e in self.spool.entries())

    def reply(self, om: OrderMail, key: str, to: str, game_id: str | None, title: str,
              message: str, tag: str | None = None, **extra: Any) -> None:
        """Spool the reply ``templates/reply.txt`` (``title``, ``message`` and
        ``extra``: ``quoted`` lines (``{"line", "mark"}``, see ``act.quoted``) and
        ``omitted`` (how many were left out), ``legal``, ``position``,
        ``game_over``) to ``to``, answering ``om`` (the mail ``key``); not beyond
        the per-cycle limit of replies to one address."""
        ctx = {"game_id": game_id, "title": title, "message": message, "quoted": [], "omitted": 0,
               "legal": [], "unchanged": True, "position": "", "game_over": False, **extra}
        if not self.allow(to, title):
            return
        subject = word("notices", "subject", tag=tag or "", game_id=game_id, title=title).replace("  ", " ")
        self.put(self.answer(om, game_id, to, subject, render("reply.txt", **ctx)), answers=key)

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
            return
        with self.bk.transaction():
            self._flush(report, box, now, close=outbox is None, ignore_backoff=ignore_backoff, only=only)

    def _flush(self, report: CycleReport, box: Outbox, now: datetime, close: bool,
               ignore_backoff: bool = False, only: set[str] | None = None) -> None:
        try:
            result = self.spool.send_due(box, now, after_send=lambda: faults.fault("after-send"),
                                         after_accept=lambda: faults.fault("after-accept"),
                                         ignore_backoff=ignore_backoff, only=only)
        finally:
            if close:
                box.close()
        record_sent(self, result, report, now)


def record_sent(post: Post, result: SendResult, report: CycleReport, now: datetime) -> None:
    """Record what ``Spool.send_due`` did (``result``) in ``report`` and the
    bookkeeping of ``post``: the SMTP outage (since when nothing was accepted),
    bounces (SMTP 5xx for a recipient; the player later reads only the code,
    never the server's host or words), and alerts to the operator for bounces
    and for a server refusing everything (``SendResult.server_failure``: the
    cycle fails, no bounce is recorded)."""
    report.sent += result.sent
    report.deferred += result.deferred
    if result.server_failure is not None:
        if post.bk.smtp_failing_since() is None:
            post.bk.set_smtp_failing_since(now)
        log.error("SMTP server failure: %s", result.server_failure)
        report.errors.append(f"SMTP server failure: {result.server_failure}; "
                             f"{result.deferred} mail(s) kept in the spool")
        post.tell_operator(word("operator", "alert_smtp_server", reason=result.server_failure))
        return
    if result.sent or result.failed:
        post.bk.set_smtp_failing_since(None)  # the server answers
    elif result.deferred and post.bk.smtp_failing_since() is None:
        post.bk.set_smtp_failing_since(now)
    for err in result.errors:
        # a deferred mail is retried by a later cycle, but the cycle reports it
        log.warning("%s (kept in the spool for a later cycle)", err)
        report.errors.append(f"{err} (kept in the spool for a later cycle)")
    for to, game, why, code in result.failed:
        report.errors.append(f"mail to {to} refused permanently: {why}")
        post.bk.set_bounce(canonical_address(to), word("operator", "bounce_smtp", code=code))
        log.error("mail to %s (game %s) refused permanently: %s", to, game, why)
        if canonical_address(to) != canonical_address(post.config.operator):
            post.tell_operator(word("notices", "alert_mail_refused", to=to, game=game, reason=why,
                                    folder=post.spool.dir / "failed"))
