"""What the moderation stages read of the spool, without reading it all per mail.

``Spool.entries`` reads every entry's meta file; a cycle asks the spool after
every mail (was this mail answered by a mail still spooled? which status mails
of this game are stale?) while the spool grows by its replies and status mails,
so reading it all each time costs the square of the mails per cycle.  A
``SpoolView`` lists the entry names on each question and reads only the meta
files of entries it has not seen; the fields it uses (``kind``, ``game``,
``player``, ``answers``, ``replaces``, ``log_from``, ``events``) never change
once an entry is written (but ``owed``, set by an undo, which then calls
``forget``).  Whether an entry's sending is under way comes from
the spool's marker file, read each time.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..store.spool import SENDING, Spool, entry_names

_VIEWS: dict[Path, "SpoolView"] = {}


def view(spool: Spool) -> "SpoolView":
    """The view of ``spool``'s directory, kept for the process (its cache of
    meta files is what makes the questions cheap)."""
    key = Path(spool.dir).resolve()
    v = _VIEWS.get(key)
    if v is None:
        v = _VIEWS[key] = SpoolView(key)
    return v


class SpoolView:
    """The entries of the spool in directory ``directory`` as ``Spool.entries``
    gives them (oldest first, those replaced by another left out), their metas
    read once."""

    def __init__(self, directory: Path):
        self.dir = directory
        self._metas: dict[str, dict[str, Any]] = {}

    def entries(self) -> list[tuple[str, dict[str, Any]]]:
        """``[(name, meta)]`` oldest first: entries whose meta file exists, not
        named by another's ``replaces``; ``sending`` set on those whose sending is
        under way (as ``Spool.entries``).  Raises OSError when the directory
        cannot be listed."""
        names = sorted(entry_names(self.dir))
        present = set(names)
        for gone in [n for n in self._metas if n not in present]:
            del self._metas[gone]
        for name in names:
            if name in self._metas:
                continue
            try:
                meta = json.loads((self.dir / f"{name}.json").read_text())
            except FileNotFoundError:
                continue  # not yet added (or being removed): not cached
            except (OSError, ValueError):
                meta = {}
            self._metas[name] = meta if isinstance(meta, dict) else {}
        try:
            marker = json.loads((self.dir / SENDING).read_text())
            at, sending = str(marker["at"]), {str(n) for n in marker["names"]}
        except (OSError, ValueError, KeyError, TypeError):
            at, sending = None, set()
        replaced = {n for m in self._metas.values() for n in m.get("replaces") or []}
        out = []
        for name in names:
            meta = self._metas.get(name)
            if meta is None or name in replaced:
                continue
            if name in sending and "sending" not in meta:
                meta = {**meta, "sending": at}
            out.append((name, meta))
        return out

    def forget(self, name: str) -> None:
        """Read entry ``name``'s meta file again on the next question: the one
        field that changes once an entry is written, ``owed`` (``gm``'s undo
        marks the status mails telling the events it takes back), was set."""
        self._metas.pop(name, None)

    def answers(self, key: str) -> bool:
        """Whether a spooled mail answers the mail (part) ``key``."""
        return any(m.get("answers") == key for _, m in self.entries())

    def pending_notices(self, game: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
        """``{player: [(name, meta)]}``: the unsent clock notices to players of
        ``game`` that a status mail may take in (``notify._status_batch``): kind
        ``clock``, a player named, the notice kept (``notice``, ``values``), not
        being sent (``sending``, ``maybe_sent``); oldest first."""
        out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for name, m in self.entries():
            if m.get("kind") == "clock" and m.get("game") == game and m.get("player") \
                    and m.get("notice") and isinstance(m.get("values"), dict) \
                    and not m.get("sending") and not m.get("maybe_sent"):
                out.setdefault(m.get("player"), []).append((name, m))
        return out

    def stale_observer(self, game: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
        """``{address: [(name, meta)]}``: the unsent public status mails of
        ``game`` to each observer (``observer``: the canonical address; entries
        of an older pbem without it are sent as they are) that a newer one may
        replace, as ``stale_status``; oldest first."""
        out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for name, m in self.entries():
            if m.get("kind") == "observer" and m.get("game") == game and m.get("observer") \
                    and isinstance(m.get("log_from"), int) and not m.get("sending") \
                    and not m.get("maybe_sent") and not m.get("owed"):
                out.setdefault(m["observer"], []).append((name, m))
        return out

    def stale_status(self, game: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
        """``{player: [(name, meta)]}``: the unsent status mails of ``game`` that a
        newer one may replace (not those whose sending is under way, nor those
        ``owed``: see ``forget``), oldest first."""
        out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for name, m in self.entries():
            if m.get("kind") == "status" and m.get("game") == game and not m.get("sending") \
                    and not m.get("owed"):
                out.setdefault(m.get("player"), []).append((name, m))
        return out
