"""A game's history whose recorded entries are read on first use.

``Game.history`` is a list of ``(player, action)``.  A game restored from a game
file (``Game.from_dict``) may instead get a ``History``: the same sequence, whose
entries from the file are kept as their strict notation (``notation.parse_action``)
and read only when something looks at them (``Game.stack_draws``, iterating,
comparing).  Moves pushed afterwards are kept as actions.  Restoring a game thus
does not cost more late in a game than early in it; its length, its new entries
and its players need no parse.  Pure: no I/O.
"""
from __future__ import annotations

from itertools import chain
from operator import itemgetter
from typing import Any, Iterator

from .actions import Action
from .notation import parse_action


class History:
    """The sequence of ``(player, action)`` of a game, its first entries given as
    ``(player, text)`` in strict notation and read all at once on first use.

    Supports what ``Game`` and its callers do with a history list: ``len``,
    indexing (an index into the moves added since is answered without a parse),
    slicing, iteration, ``append``, ``==`` (with another ``History`` or a list;
    entries compared as actions), ``copy``.  Reading raises ``NotationError``
    (a ValueError) naming the first entry that is not strict notation."""

    __slots__ = ("_texts", "_read", "_added")

    def __init__(self, texts: list[tuple[str, str]]):
        self._texts = list(texts)
        self._read: list[tuple[str, Action]] | None = None
        self._added: list[tuple[str, Action]] = []

    def players(self) -> Iterator[str]:
        """The player of each entry, in order (without reading the actions)."""
        first = itemgetter(0)
        return chain(map(first, self._texts), map(first, self._added))

    def _recorded(self) -> list[tuple[str, Action]]:
        if self._read is None:
            read = []
            for i, (p, text) in enumerate(self._texts):
                try:
                    read.append((p, parse_action(text)))
                except ValueError as exc:
                    raise type(exc)(f"history entry {i + 1} ({p}): {exc}") from exc
            self._read = read
        return self._read

    def as_list(self) -> list[tuple[str, Action]]:
        """A new list of every ``(player, action)``."""
        return [*self._recorded(), *self._added]

    def __len__(self) -> int:
        return len(self._texts) + len(self._added)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int):
            n = len(self._texts)
            if index >= n:
                return self._added[index - n]
            if index < 0 and -index <= len(self._added):
                return self._added[index]
        return self.as_list()[index]

    def __iter__(self) -> Iterator[tuple[str, Action]]:
        yield from self._recorded()
        yield from self._added

    def append(self, entry: tuple[str, Action]) -> None:
        self._added.append(entry)

    def copy(self) -> "History":
        """An independent copy (the recorded texts and actions are shared: immutable)."""
        h = History.__new__(History)
        h._texts, h._read, h._added = self._texts, self._read, list(self._added)
        return h

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History):
            if self._texts == other._texts and self._added == other._added:
                return True
            return self.as_list() == other.as_list()
        if isinstance(other, list):
            return len(self) == len(other) and self.as_list() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"History({len(self._texts)} recorded, {len(self._added)} added)"
