"""The outcome of one cycle (``CycleReport``), counted by the act stage."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass
class CycleReport:
    """What one cycle did: counts of mails by outcome and the problems met.

    ``deferred`` counts the mails the server did not accept for now in this
    cycle; ``waiting`` the mails still in the spool after it (deferred now or
    earlier and not due yet), sent by a later cycle.

    ``errors`` are one-line texts for the log and the CLI; ``inbox_ok`` is False
    when the inbox could not be read or a handled mail could not be moved.

    ``unread_from``: when mails may have been left unread in the inbox (a mail
    of a locked game and those after it, an inbox that could not be read: the
    oldest such mail's arrival, else the last successful cycle), None when all
    were read.  The clock stage then runs as of that instant, so that no move
    is made for a player whose order came in time and is still waiting."""

    fetched: int = 0
    applied: int = 0
    refused: int = 0
    commands: int = 0
    ignored: int = 0
    duplicates: int = 0
    sent: int = 0
    deferred: int = 0
    held: int = 0  # mails kept in the spool for the next day by smtp.daily_limit
    clock_moves: int = 0
    reminders: int = 0
    waiting: int = 0
    signups: int = 0  # sign-up mails handled and open-game clock events (moderation/signup.py)
    skipped: bool = False
    errors: list[str] = field(default_factory=list)
    inbox_ok: bool = True
    unread_from: datetime | None = None

    @property
    def ok(self) -> bool:
        """True when the cycle completed without errors."""
        return not self.errors

    def summary(self) -> str:
        """One line for the log and the CLI."""
        if self.skipped:
            return "another cycle is running; this one did nothing"
        held = (f", {self.held} held for the next day by the daily sending limit"
                if self.held else "")
        return (
            f"{self.fetched} mail(s): {self.applied} order(s) applied, {self.refused} refused, "
            f"{self.commands} command mail(s), {self.duplicates} duplicate(s), {self.ignored} ignored; "
            + (f"{self.clock_moves} move(s) by the built-in player, {self.reminders} reminder(s); "
               if self.clock_moves or self.reminders else "") +
            (f"{self.signups} sign-up event(s); " if self.signups else "") +
            f"{self.sent} mail(s) sent, {self.deferred} deferred{held}, {self.waiting} waiting in the spool; "
            f"{len(self.errors)} error(s)"
        )
