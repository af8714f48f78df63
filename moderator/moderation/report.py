"""The outcome of one cycle (``CycleReport``), counted by the act stage."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CycleReport:
    """What one cycle did: counts of mails by outcome and the problems met.

    ``errors`` are one-line texts for the log and the CLI; ``inbox_ok`` is False
    when the inbox could not be read or a handled mail could not be moved."""

    fetched: int = 0
    applied: int = 0
    refused: int = 0
    commands: int = 0
    ignored: int = 0
    duplicates: int = 0
    sent: int = 0
    deferred: int = 0
    clock_moves: int = 0
    reminders: int = 0
    skipped: bool = False
    errors: list[str] = field(default_factory=list)
    inbox_ok: bool = True

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
            + (f"{self.clock_moves} move(s) by the built-in player, {self.reminders} reminder(s); "
               if self.clock_moves or self.reminders else "") +
            f"{self.sent} mail(s) sent, {self.deferred} deferred; {len(self.errors)} error(s)"
        )
