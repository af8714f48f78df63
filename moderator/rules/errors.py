"""The engine's refusals and the short summary of what is legal: the values that
``moderator.rules.engine`` (which raises ``IllegalAction``) and
``moderator.rules.legal`` (which lists the legal actions) both use.

Imports point one way: ``engine`` imports ``legal`` and this module, ``legal``
imports this module, and this module imports neither (the game is only read,
through its methods: ``LegalSummary.of``).  Both modules re-export the names
they used to define (``engine.IllegalAction``, ``legal.LegalSummary``,
``legal.starts``).

Rules: A turn (BUILD, INVEST), No legal action; Setup, step 5 (initial
investment); options dead_track_redraw and up_only_by_swap (docs/rules.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from .actions import Build, Pass, Start, Take
from .components import JOKER, COMPANIES, TRACK_TYPES, UP, CompanyId, PlayerName, SectionId, ShareKind, TrackType
from .options import ruleset as _ruleset

if TYPE_CHECKING:
    from .engine import Game

_SORTED_TYPES = tuple(sorted(TRACK_TYPES))
_new = object.__new__

class IllegalAction(ValueError):
    """An action that the rules do not allow now.

    ``code`` names the refusal (``not_your_turn``, ``no_such_section`` ...) and
    ``values`` holds what its wording needs; the wording lives in the template
    ``templates/words/illegal.txt`` (one macro per code), rendered by
    ``moderator.render.words.reason``.  What would be legal instead is data, never
    words: ``legal`` lists complete orders in the game's notation (``start KCC``,
    ``discard white``, ``build KCC DEN-KCY white; take stack``), or ``summary``
    holds the player's ``LegalSummary`` (the refusals of a BUILD, INVEST or pass:
    every kind of order legal now), with ``first`` the company the refused order
    named (its builds listed first); ``moderator.render.legal.legal_lines`` words
    both in the reader's language.  ``str(exc)`` gives the code and values (for
    logs), never the player's sentence: ``reason(exc)`` does.

    Placement refusals (``cannot_build``) carry ``why``: a list of
    ``Network.why_not`` reasons (dicts with their own ``code``)."""

    def __init__(self, code: str, legal: list[str] | None = None, *, summary: LegalSummary | None = None,
                 first: CompanyId | None = None, **values: Any):
        super().__init__(code, values)
        self.code = code
        self.values = values
        self.legal = legal or []
        self.summary = summary
        self.first = first

    def __str__(self) -> str:
        if not self.values:
            return self.code
        return f"{self.code} ({', '.join(f'{k}={v!r}' for k, v in self.values.items())})"

def starts(game: "Game", player: PlayerName) -> list[Start]:
    """The initial investments ``player`` may choose (rules: Setup, step 5): one
    ``Start`` per share kind in hand, sorted, without UP in the second edition;
    empty outside the initial phase or after the player chose."""
    return [Start(s) for s in _start_kinds(game, player)]


def _start_kinds(game: "Game", player: PlayerName) -> list[ShareKind]:
    """The share kinds of ``starts(game, player)``, in order."""
    if game.phase != "initial" or player not in game.players or player in game.initial_choice:
        return []
    kinds = sorted(set(game.share_hands[player]))
    if UP in kinds and not _ruleset(game.ruleset).up_may_start:
        kinds.remove(UP)
    return kinds



def _company_builds(tables, near: int, avail: dict[str, int], company: CompanyId,
                    fit: list[tuple[str, tuple[str, str]]]) -> dict[SectionId, tuple[tuple[str, str], ...]]:
    """``LegalSummary.builds`` of one company: ``{section id: ((space type, card),
    ...)}``, sections sorted, from its placement bit sets (``Network.candidates``)
    and ``fit``, the ``(type, (type, card))`` of the held cards, types sorted."""
    ids, own = tables.ids, tables.types[company]
    per = []
    for t, f in fit:
        if t in own:
            m = near & avail.get(t, 0)
            if m:
                per.append((ids(m), f))
    if len(per) == 1:  # one type fits: its sorted sections, one fit each
        sids, f = per[0]
        return dict.fromkeys(sids, (f,))
    sections: dict[str, list[tuple[str, str]]] = {}
    for sids, f in per:
        for sid in sids:
            if sid in sections:
                sections[sid].append(f)
            else:
                sections[sid] = [f]
    return {sid: tuple(sections[sid]) for sid in sorted(sections)}


def _live_bits(tables, near: int, avail: dict[str, int], company: CompanyId) -> int:
    """The bits of the fit key (``LegalSummary.of``: two per track type, types
    sorted) of the types ``company`` has a placement on, ignoring its box."""
    own = tables.types[company]
    bits = 0
    for k, t in enumerate(_SORTED_TYPES):
        if t in own and near & avail.get(t, 0):
            bits |= 3 << 2 * k
    return bits


@dataclass(frozen=True)
class LegalSummary:
    """What ``player`` may order now, in short (not every combination).

    - ``player``; ``phase`` of the game (``"initial"``, ``"play"``, ``"over"``);
      ``on_move``: an order is awaited from the player (``Game.waiting_for``).
      Every other field is empty when ``on_move`` is False.
    - ``starts``: the initial investments (``Start``), initial phase only.
    - ``redraw``: the dead track card kinds the turn may start by redrawing
      (option dead_track_redraw), sorted.
    - ``builds``: ``{company: {section id: ((space track type, card to play),
      ...)}}``, companies in table order (``COMPANIES``), sections and types
      sorted; the card is the type itself when held, else ``joker``.
    - ``takes``: the share draws after a BUILD (``Take``); empty when no BUILD is
      possible.
    - ``swaps``: ``{take: (share kinds that may be returned in the UP swap after
      that draw, ...)}`` for the same draws.
    - ``invest``: the share kinds in hand (sorted); INVEST is possible when any.
    - ``discards``: the track card kinds an INVEST may discard (those held),
      sorted; empty when INVEST is not possible.
    - ``passes``: the passes (``Pass`` per discard choice, ``Pass(None)`` with no
      card) when neither BUILD nor INVEST is possible (rules: No legal action).

    ``cards`` given to ``of`` replaces the track cards held (the hand left after
    a redraw); the redraw choices always come from the whole hand."""

    player: PlayerName
    phase: str
    on_move: bool
    starts: tuple[Start, ...] = ()
    redraw: tuple[TrackType, ...] = ()
    builds: Mapping[CompanyId, Mapping[SectionId, tuple[tuple[TrackType, str], ...]]] = field(
        default_factory=dict)
    takes: tuple[Take, ...] = ()
    swaps: Mapping[Take, tuple[ShareKind, ...]] = field(default_factory=dict)
    invest: tuple[ShareKind, ...] = ()
    discards: tuple[TrackType, ...] = ()
    passes: tuple[Pass, ...] = ()

    @classmethod
    def of(cls, game: "Game", player: PlayerName, cards: list[TrackType] | None = None) -> "LegalSummary":
        """The summary of ``player``'s choices in ``game`` now (see the class)."""
        on_move = player in game.waiting_for()
        if not on_move:
            return cls(player, game.phase, False)
        if game.phase == "initial":
            return cls(player, game.phase, True, starts=tuple(starts(game, player)))
        held = set(game.track_hands[player] if cards is None else cards)
        joker = JOKER in held
        network = game.network
        builds: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {}
        # (space type, card to play) for each type a held card builds on, types
        # sorted (so a section's fits are sorted); ``key`` tells the fits apart
        fit = []
        key = 0
        for k, t in enumerate(_SORTED_TYPES):
            if t in held:
                fit.append((t, (t, t)))
                key |= 1 << 2 * k
            elif joker:
                fit.append((t, (t, JOKER)))
                key |= 2 << 2 * k
        if fit:
            box = network.box
            memos = network.memos()
            near = None
            for company in COMPANIES:
                if box.get(company, 0) <= 0:
                    continue
                memo = memos[company]
                live = memo.get(None)  # kept with the builds: the types it has placements on
                if live is None:
                    if near is None:
                        tables, near, avail = network.candidates()
                    live = memo[None] = _live_bits(tables, near[company], avail, company)
                own = key & live  # the held cards that build for this company
                if not own:
                    continue
                got = memo.get(own)
                if got is None:
                    if near is None:
                        tables, near, avail = network.candidates()
                    got = memo[own] = _company_builds(tables, near[company], avail, company, fit)
                builds[company] = dict(got)
        takes: tuple[Take, ...] = ()
        swaps: dict[Take, tuple[str, ...]] = {}
        shares = game.share_hands[player]
        if builds:  # the draws and their swaps, as ``take_swaps`` gives them
            kinds = set(shares)
            base = tuple(sorted(kinds))
            up = game.up_pile
            options = game.share_options(player)
            takes = tuple(options)
            for take in options:
                source = take.source
                if up - (source == "up") <= 0:
                    swaps[take] = ()
                    continue
                extra = take.company if source == "display" else (UP if source == "up" else None)
                swaps[take] = base if extra is None or extra in kinds else tuple(sorted(kinds | {extra}))
        invest = tuple(sorted(set(shares)))
        passes: tuple[Pass, ...] = ()
        if not builds and not invest:
            passes = tuple(Pass(d) for d in sorted(held)) or (Pass(None),)
        redraw = tuple(game.dead_cards(player)) if game.options["dead_track_redraw"] else ()
        s = _new(cls)  # every field given: without the frozen dataclass's checked assignments
        s.__dict__.update(player=player, phase=game.phase, on_move=True, starts=(), redraw=redraw,
                          builds=builds, takes=takes, swaps=swaps, invest=invest,
                          discards=tuple(sorted(held)) if invest else (), passes=passes)
        return s

    def build_actions(self, first: CompanyId | None = None) -> list[Build]:
        """The builds as incomplete ``Build`` actions (no draw), one per company,
        section and space type, in the order of ``builds``; company ``first`` (the
        one a refused order named) first."""
        out = []
        for company in sorted(self.builds, key=lambda c: c != first):
            for sid, fits in self.builds[company].items():
                for t, card in fits:
                    out.append(Build(company, sid, card, t if card == JOKER else None))
        return out
