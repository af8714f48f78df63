"""The old bookkeeping of an earlier pbem: ``spool/moderator.yaml`` (legacy).

The moderator now keeps its memory in the SQLite database ``spool/pbem.sqlite3``
(``moderator.store.bookkeeping``), which imports this file on its first open and
renames it ``moderator.yaml.migrated``.  ``ModeratorState`` stays to read such a
file where no database exists yet (``pbem doctor`` before the first cycle of this
version) and to write one in the tests of the import.  A missing or unreadable
file gives a fresh state; writes are atomic.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .files import atomic_write

__all__ = ["ModeratorState"]


@dataclass
class ModeratorState:
    """The moderator's own memory between cycles (``spool/moderator.yaml``):
    ``last_success`` (ISO time of the last successful cycle: the inbox was read and
    the SMTP server was not refusing everything), ``answered`` (ids of
    mails already answered, newest last, bounded), ``pending_moves`` (inbox keys
    handled but not yet moved out of the inbox), ``bounces`` ({address: reason}),
    ``alerts`` ({problem: ISO time the operator was last mailed about it}),
    ``smtp_failing_since`` (ISO time of the first of the latest run of sending
    attempts in which the server accepted nothing; None once it accepts again),
    ``inbox`` (for an IMAP inbox: ``{mailbox, uidvalidity, last_uid}``, the highest
    UID handled; a changed UIDVALIDITY is logged, and the mails are matched by
    Message-ID, or a hash of the bytes, against the game histories)."""

    path: Path
    last_success: str | None = None
    answered: list[str] = field(default_factory=list)
    pending_moves: list[str] = field(default_factory=list)
    bounces: dict[str, str] = field(default_factory=dict)
    alerts: dict[str, str] = field(default_factory=dict)
    smtp_failing_since: str | None = None
    inbox: dict[str, Any] = field(default_factory=dict)

    KEEP = 5000

    @classmethod
    def load(cls, path: Path) -> "ModeratorState":
        """Read the state file at ``path`` (YAML mapping with the fields above);
        a missing or unreadable file, or invalid YAML, gives a fresh state."""
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            data = {}
        return cls(
            path=path,
            last_success=data.get("last_success"),
            answered=list(data.get("answered") or []),
            pending_moves=list(data.get("pending_moves") or []),
            bounces=dict(data.get("bounces") or {}),
            alerts=dict(data.get("alerts") or {}),
            smtp_failing_since=data.get("smtp_failing_since"),
            inbox=dict(data.get("inbox") or {}),
        )

    def save(self) -> None:
        """Write the state file atomically (``answered`` cut to the newest ``KEEP``),
        creating its directory.  Raises OSError."""
        self.answered = self.answered[-self.KEEP:]
        data = {"last_success": self.last_success, "answered": self.answered,
                "pending_moves": self.pending_moves, "bounces": self.bounces,
                "alerts": self.alerts, "smtp_failing_since": self.smtp_failing_since,
                "inbox": self.inbox}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, yaml.safe_dump(data, sort_keys=False).encode())
