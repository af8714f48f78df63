"""Actions: what a player does, as immutable objects that format to order text.

An action is one player's whole move: the initial investment (``Start``), a turn
(``Build``, ``Invest``, ``Pass``).  ``str(action)`` gives the canonical order text,
which ``moderator.rules.notation.parse_action`` reads back to an equal action (python-chess's
``Move.uci()`` / ``Move.from_uci()`` is the model).  Fields left ``None`` by a
forgiving order (e.g. a BUILD that does not name the track card) are filled in by
``Game.resolve`` when only one choice fits.

With the option ``dead_track_redraw`` a turn may start by showing a dead track card
(every space of its track type is full), removing it from the game and drawing a
replacement: the ``redraw`` field of ``Build``, ``Invest`` and ``Pass``, written as
a leading ``redraw white; `` part of the order text (e.g.
``redraw black; build KCC DEN-KCY white; take stack``).  The rest of the turn is
checked against the hand without the shown card, and the replacement cannot be
played in the same turn (it is drawn after the order was written).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .components import JOKER

_new = object.__new__

DRAWN = "drawn"
"""``Build.swap`` for the share just drawn from the stack, unseen when the order is
written (rules: BUILD, step 4: "even the one just drawn"): ``swap drawn``."""


@dataclass(frozen=True)
class Start:
    """The initial investment: one share card from hand, chosen secretly
    (rules: Setup, step 5).  ``share`` is a company abbreviation or ``UP``."""

    share: str

    def __str__(self) -> str:
        return f"start {self.share}"


@dataclass(frozen=True)
class Take:
    """The share drawn after a BUILD (rules: BUILD, step 3).

    ``source`` is ``"display"`` (a face-up card: ``company``, or the 1-based
    ``place`` as ordered, resolved to its company), ``"stack"`` (top card, unseen),
    ``"up"`` (the UP pile) or ``"none"`` (allowed only when no share can be drawn)."""

    source: str
    company: str | None = None
    place: int | None = None

    def __str__(self) -> str:
        if self.source == "display":
            return f"take {self.company}" if self.company else f"take display {self.place}"
        return {"stack": "take stack", "up": "take UP", "none": "take none"}[self.source]


@dataclass(frozen=True)
class Build:
    """BUILD (rules: A turn, BUILD): play track card ``card`` (a track type or
    ``joker``) and place a train of ``company`` on a neutral space of track type
    ``space`` on section ``section`` (id ``"A-B"``), then draw ``take``, then
    optionally ``swap`` one share from hand (abbreviation or ``UP``, or ``DRAWN``:
    the share this take drew from the stack) for a UP share.
    ``redraw``: a dead track card shown first (option dead_track_redraw)."""

    company: str
    section: str
    card: str | None = None
    space: str | None = None
    take: Take | None = None
    swap: str | None = None
    redraw: str | None = None

    @classmethod
    def trusted(cls, company: str, section: str, card: str | None, space: str | None,
                take: Take | None, swap: str | None, redraw: str | None) -> "Build":
        """``Build(...)`` with every field given, made without the frozen
        dataclass's checked assignment of each field (about half the time): for
        the engine's own generated actions in its hot path.  Equal to, and
        hashing like, the same ``Build(...)``."""
        b = _new(cls)
        b.__dict__.update(company=company, section=section, card=card, space=space,
                          take=take, swap=swap, redraw=redraw)
        return b

    def __str__(self) -> str:
        card = self.card or ""
        if self.card == JOKER:
            card = f"joker as {self.space}" if self.space else "joker"
        text = _redraw(self.redraw) + f"build {self.company} {self.section} {card}".rstrip()
        if self.take is not None:
            text += f"; {self.take}"
        if self.swap is not None:
            text += f"; swap {self.swap}"
        return text


@dataclass(frozen=True)
class Invest:
    """INVEST (rules: A turn, INVEST): place ``shares`` (abbreviations, sorted) from
    hand face up — any number of ONE company or exactly one each of TWO — then
    discard track card ``discard``.  ``redraw``: a dead track card shown first
    (option dead_track_redraw)."""

    shares: tuple[str, ...]
    discard: str | None = None
    redraw: str | None = None

    @classmethod
    def trusted(cls, shares: tuple[str, ...], discard: str | None, redraw: str | None) -> "Invest":
        """``Invest(...)`` with every field given, made without the frozen
        dataclass's checked assignment of each field, like ``Build.trusted``: for
        the engine's own generated actions.  Equal to, and hashing like, the same
        ``Invest(...)``."""
        i = _new(cls)
        i.__dict__.update(shares=shares, discard=discard, redraw=redraw)
        return i

    def __str__(self) -> str:
        kinds = sorted(set(self.shares))
        if len(kinds) == 1:
            n = len(self.shares)
            what = f"{n} {kinds[0]}" if n > 1 else kinds[0]
        else:
            what = " ".join(self.shares)
        text = _redraw(self.redraw) + f"invest {what}"
        if self.discard is not None:
            text += f"; discard {self.discard}"
        return text


@dataclass(frozen=True)
class Pass:
    """The no-legal-action pass: only discard track card ``discard``
    (rules: No legal action, PBEM decision).  ``redraw``: a dead track card shown
    first (option dead_track_redraw)."""

    discard: str | None = None
    redraw: str | None = None

    def __str__(self) -> str:
        text = f"pass; discard {self.discard}" if self.discard else "pass"
        return _redraw(self.redraw) + text


def _redraw(card: str | None) -> str:
    """The leading order part of a dead-card redraw: ``"redraw white; "`` or ``""``."""
    return f"redraw {card}; " if card is not None else ""


Action = Union[Start, Build, Invest, Pass]
