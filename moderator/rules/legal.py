"""What a player may do now: every legal action as a view, and one short summary.

``LegalActions`` is a live view of the complete legal actions of one player in one
game (python-chess's ``LegalMoveGenerator`` is the model): iterate it to list them,
ask ``action in legal`` (checked by ``Game.resolve``, without listing), ``count()``
or ``len()`` them and draw ``random(rng)`` one, both without listing the thousands
of BUILD x take x swap combinations.  ``Game.legal_actions(player)`` returns it.

``LegalSummary`` (defined in ``moderator.rules.errors``, re-exported here) is the
short structured answer to "what is legal now" that the
replies and the status mail show: the starts, the dead cards to redraw, the builds
grouped by company and section, the share draws and swaps after a build, the shares
to invest and the passes; built from the network's placements, never from the
product of the combinations.  ``moderator.render.legal_summary`` (the status
mail) and ``moderator.render.legal.legal_lines`` (refusals, the ``legal``
command) word it; the engine's refusals carry it (``IllegalAction.summary``).

Rules: A turn (BUILD, INVEST), No legal action; Setup, step 5 (initial
investment); options dead_track_redraw and up_only_by_swap (docs/rules.md).
"""
from __future__ import annotations

import random as _random
from collections import Counter
from itertools import combinations as _combinations, islice as _islice
from typing import TYPE_CHECKING, Iterator

from .actions import Action, Build, Invest, Pass, Start, Take
from .components import (
    COMPANIES, JOKER, SHARE_COMPANIES, TRACK_TYPES, UP, PlayerName, ShareKind,
)
from .errors import IllegalAction, LegalSummary, _start_kinds, starts  # noqa: F401 (re-exported)
from .options import ruleset as _ruleset

if TYPE_CHECKING:
    from .engine import Game


def without(cards: list[str], card: str) -> list[str]:
    """``cards`` with one ``card`` removed (a new list); ValueError if absent."""
    out = list(cards)
    out.remove(card)
    return out


def take_swaps(game: "Game", player: PlayerName) -> list[tuple[Take, list[ShareKind | None]]]:
    """Each possible draw after a BUILD (``Game.share_options``) with its swap
    choices: None (no swap), then every share kind held after the draw while a UP
    share is left (rules: BUILD, steps 3-4).  A share drawn unseen from the stack
    is not known when the order is written, so it is not among the swap choices
    (PBEM decision)."""
    hand = set(game.share_hands[player])
    base: list[str | None] = [None, *sorted(hand)]
    out: list[tuple[Take, list[str | None]]] = []
    for take in game.share_options(player):
        if game.up_pile - (1 if take.source == "up" else 0) <= 0:
            out.append((take, [None]))
            continue
        extra = take.company if take.source == "display" else (UP if take.source == "up" else None)
        if extra is None or extra in hand:
            out.append((take, base))
        else:
            out.append((take, [None, *sorted(hand | {extra})]))
    return out


def invests(game: "Game", player: PlayerName) -> list[tuple[ShareKind, ...]]:
    """Every legal investment of ``player``'s share hand (rules: INVEST), in a
    stable order: each number of shares of one company, then each pair of two
    companies; share tuples sorted."""
    counts = Counter(game.share_hands[player])
    kinds = sorted(counts)
    out = [(a,) * n for a in kinds for n in range(1, counts[a] + 1)]
    out += [(a, b) for i, a in enumerate(kinds) for b in kinds[i + 1 :]]
    return out


class _Plan:
    """The legal turn actions of the player on move, counted in blocks (one block
    per redraw choice) without listing them.

    ``options`` are the share draws (``Game.share_options``), ``per_build`` the
    number of (draw, swap) pairs after a BUILD; ``takes``
    pairs each share draw with its swap choices (``None`` first), made when first
    asked; ``blocks`` are ``(redraw, builds, n_builds, n_invests, n_passes,
    discards)`` where ``builds`` lists ``(track type, cards that build on it,
    placements of that type over all companies with trains left)``; ``total``
    the number of legal actions counted."""

    __slots__ = ("game", "player", "options", "per_build", "blocks", "total", "_takes")

    def __init__(self, game: "Game", player: PlayerName, options: list[Take], per_build: int,
                 blocks: list[tuple[str | None, list[tuple[str, list[str], int]], int, int, int, list[str | None]]],
                 total: int) -> None:
        self.game, self.player, self.options = game, player, options
        self.per_build, self.blocks, self.total = per_build, blocks, total
        self._takes: list[tuple[Take, list[str | None]]] | None = None

    @property
    def takes(self) -> list[tuple[Take, list[str | None]]]:
        """``take_swaps`` of the plan's game and player (made once)."""
        if self._takes is None:
            self._takes = take_swaps(self.game, self.player)
        return self._takes



def _draws_per_build(options, up: int, kinds: set) -> int:
    """The number of (draw, swap) pairs that follow one BUILD, counted as
    ``take_swaps`` lists them: ``options`` the draws (``Game.share_options``),
    ``up`` the UP pile, ``kinds`` the companies of the shares held."""
    k = len(kinds)
    n = 0
    for take in options:
        source = take.source
        if source == "up":
            n += 1 if up <= 1 else 2 + k - (UP in kinds)
        elif up <= 0:
            n += 1
        elif source == "display":
            n += 2 + k - (take.company in kinds)
        else:
            n += 1 + k
    return n

def plan(game: "Game", player: PlayerName) -> _Plan:
    """The counted plan of the turn actions of ``player`` (on move, play phase)."""
    hand = game.track_hands[player]
    shares = game.share_hands[player]
    kinds = set(shares)
    k = len(kinds)
    n_inv = len(shares) + k * (k - 1) // 2
    # the (draw, swap) pairs, counted as ``take_swaps`` lists them
    up = game.up_pile
    options = game.share_options(player)
    per_build = _draws_per_build(options, up, kinds)
    tot = game.network.placement_totals()
    blocks = []
    total = 0
    dead = game.dead_cards(player) if game.options["dead_track_redraw"] else ()
    for r in (None, *dead):
        held = set(hand) if r is None else set(without(hand, r))
        joker = JOKER in held
        builds = []
        w = 0
        for t in TRACK_TYPES:
            n = tot[t]
            if n:
                if t in held:
                    if joker:
                        builds.append((t, [t, JOKER], n))
                        w += n + n
                    else:
                        builds.append((t, [t], n))
                        w += n
                elif joker:
                    builds.append((t, [JOKER], n))
                    w += n
        discards: list[str | None] = sorted(held) or [None]  # type: ignore[assignment]
        n_pass = len(discards) if w == 0 and not shares else 0
        nb, ni = w * per_build, n_inv * len(discards)
        blocks.append((r, builds, nb, ni, n_pass, discards))
        total += nb + ni + n_pass
    return _Plan(game, player, options, per_build, blocks, total)


def action_at(game: "Game", player: PlayerName, p: _Plan, i: int) -> Action:
    """The ``i``-th action of plan ``p`` (0 <= i < p.total); a bijection onto the
    legal actions (tested), so a uniform ``i`` gives a uniform action.  The order
    is not the listing order.  IndexError out of range."""
    for r, builds, nb, ni, npass, discards in p.blocks:
        if i < nb:
            w, j = divmod(i, p.per_build)
            for t, cl, n in builds:
                if w < n * len(cl):
                    q, k = divmod(w, len(cl))
                    card = cl[k]
                    break
                w -= n * len(cl)
            c, sid = game.network.placement_at(t, q)
            take, swap = _take_swap_at(game, player, p.options, j)
            return Build.trusted(c, sid, card, t if card == JOKER else None, take, swap, r)
        i -= nb
        if i < ni:
            v, k = divmod(i, len(discards))
            return Invest(invests(game, player)[v], discards[k], r)
        i -= ni
        if i < npass:
            return Pass(discards[i], r)
        i -= npass
    raise IndexError("action index out of range")


def _random_turn(game: "Game", player: PlayerName, rnd: _random.Random) -> Action:
    """``action_at(game, player, p, rnd.randrange(p.total))`` for ``p = plan(game,
    player)`` when no dead card may be redrawn (one block), counted and drawn in
    one pass: the hot path of ``random_action``.  The draws after a BUILD are
    counted from the face-up share kinds (``_display_draws``, kept per set of
    kinds) without a list of ``Take``, and only when a BUILD is possible; the swaps are
    counted from the kinds of shares held, and only the drawn one is named
    (``_swap_at``).  Consumes exactly the random numbers ``randrange`` would."""
    hand = game.track_hands[player]
    shares = game.share_hands[player]
    network = game.network
    tot = network.placement_totals()
    fits, discards = _FITS.get(tuple(hand)) or _hand_fits(hand)
    w = 0
    for t, _cs, m in fits:
        w += tot[t] * m
    kinds = None  # the kinds of shares held, when a swap may follow the draw
    if w:
        up = game.up_pile
        shown = frozenset(game.display)  # the kinds face up (and None for an empty place)
        got = _DISPLAY_DRAWS.get(shown) or _display_draws(shown)
        stack = 1 if game.stack else 0
        if up <= 0:  # no swap: one pair per draw, the draws of ``share_options``
            takes = got[1 + stack]
            per_build = len(takes)
        else:
            draws = got[0]
            kinds = set(shares)
            k = len(kinds)
            per_build = (2 + k) * len(draws) + stack * (1 + k) - len(kinds & shown)
            if not game.options["up_only_by_swap"]:
                per_build += 1 if up <= 1 else 2 + k - (UP in kinds)
            elif not per_build:  # only "take none", with a swap
                per_build = 1 + k
        nb = w * per_build
    else:
        nb = 0
    nd = len(discards)
    if shares:
        k = len(kinds if kinds is not None else set(shares))
        ni = (len(shares) + k * (k - 1) // 2) * nd
        total = nb + ni
    else:
        ni = 0
        total = nb or nd
    if type(rnd) is _Random:  # ``rnd.randrange(total)``: the same numbers, without its checks
        bits = total.bit_length()
        i = rnd.getrandbits(bits)
        while i >= total:
            i = rnd.getrandbits(bits)
    else:
        i = rnd.randrange(total)
    if i < nb:
        w = i // per_build
        j = i - w * per_build
        for t, cs, m in fits:
            n = tot[t] * m
            if w < n:
                if m == 1:
                    q = w
                    card, space = cs[0]
                else:
                    q = w >> 1
                    card, space = cs[w & 1]
                break
            w -= n
        company, sid = network.placement_at(t, q)
        if kinds is None:
            return _build(company, sid, card, space, takes[j], None, None)
        take, swap = _swap_at(draws, stack, up, game.options["up_only_by_swap"], kinds, j)
        return _build(company, sid, card, space, take, swap, None)
    i -= nb
    if i < ni:
        v = i // nd
        return Invest.trusted(_invest_at(shares, v), discards[i - v * nd], None)
    return Pass(discards[i - ni], None)


_Random = _random.Random
_build = Build.trusted

_FITS: dict[tuple[str, ...], tuple[tuple[tuple[str, tuple[tuple[str, str | None], ...], int], ...],
                                   tuple[str | None, ...]]] = {}
"""``_hand_fits`` of each hand seen (at most 4096, then cleared)."""


def _hand_fits(hand: list[str]) -> tuple[tuple[tuple[str, tuple[tuple[str, str | None], ...], int], ...],
                                         tuple[str | None, ...]]:
    """For the track cards ``hand``: ``((type, ((card, space), ...), number of
    cards), ...)`` over ``TRACK_TYPES`` in order, only the types some card builds
    on: the cards that build on the type (the type itself first, then a joker)
    with the ``space`` a ``Build`` names for them (None, or the type for a
    joker); and the discard choices (the kinds held, sorted, or ``(None,)`` for
    no card).  Kept per hand (bounded)."""
    key = tuple(hand)
    got = _FITS.get(key)
    if got is None:
        joker = JOKER in hand
        fits = []
        for t in TRACK_TYPES:
            cs = (((t, None), (JOKER, t)) if joker else ((t, None),)) if t in hand else (((JOKER, t),) if joker else ())
            if cs:
                fits.append((t, cs, len(cs)))
        if len(_FITS) >= 4096:
            _FITS.clear()
        got = _FITS[key] = (tuple(fits), tuple(sorted(set(hand))) or (None,))
    return got


_STACK = Take("stack")
_UP = Take("up")
_NONE = Take("none")  # the draw when no share can be drawn
_DISPLAY_TAKE = {c: Take("display", c) for c in SHARE_COMPANIES}
"""The draw of each face-up share kind (one object each)."""

_DISPLAY_DRAWS: dict[frozenset[ShareKind | None], tuple[tuple[Take, ...], tuple[Take, ...], tuple[Take, ...]]] = {}
"""``_display_draws`` of each set of face-up share kinds seen (at most 2 * 561: up
to four of the eleven kinds, with or without an empty place)."""


def _display_draws(shown: frozenset[ShareKind | None]) -> tuple[tuple[Take, ...], tuple[Take, ...],
                                                                tuple[Take, ...]]:
    """The draws from a display showing the share kinds ``shown`` (None for an
    empty place): one ``Take`` per kind, sorted (``Game.share_options``'s first
    ones); then ``share_options`` when no UP can be drawn, with an empty stack
    (those draws, or "take none" alone) and with a stack (those and the stack's).
    Kept per set of kinds."""
    draws = tuple(_DISPLAY_TAKE[c] for c in sorted(c for c in shown if c))
    got = _DISPLAY_DRAWS[shown] = (draws, draws or (_NONE,), draws + (_STACK,))
    return got


def _swap_at(draws: tuple[Take, ...], stack: int, up: int, up_only_by_swap: bool, kinds: set[str],
             j: int) -> tuple[Take, str | None]:
    """The ``j``-th (draw, swap) pair of ``take_swaps`` when the UP pile ``up`` is
    not empty: ``draws`` from the display (``_display_draws``), then the stack's
    if ``stack``, then UP's unless ``up_only_by_swap``, or "take none" when there
    is no other; ``kinds`` the share kinds held (a set this changes).  IndexError
    out of range."""
    k = len(kinds)
    for take in draws:
        company = take.company
        n = 1 + k if company in kinds else 2 + k
        if j < n:
            if j == 0:
                return take, None
            kinds.add(company)
            return take, sorted(kinds)[j - 1]
        j -= n
    if stack:
        if j <= k:
            return (_STACK, None) if j == 0 else (_STACK, sorted(kinds)[j - 1])
        j -= 1 + k
    elif not draws and up_only_by_swap:
        if j <= k:
            return (_NONE, None) if j == 0 else (_NONE, sorted(kinds)[j - 1])
        j -= 1 + k
    if not up_only_by_swap:
        if j == 0:
            return _UP, None
        if up > 1:
            kinds.add(UP)
            if j <= len(kinds):
                return _UP, sorted(kinds)[j - 1]
    raise IndexError("draw index out of range")


def _invest_at(shares: list[ShareKind], v: int) -> tuple[ShareKind, ...]:
    """``invests(...)[v]`` for the share hand ``shares``, without listing them:
    the first ``len(shares)`` are each number of shares of one kind (kinds
    sorted), one per card of the sorted hand; then the pairs of kinds in order.
    IndexError out of range."""
    s = sorted(shares)
    if v < len(s):
        a = s[v]
        return (a,) * (v - s.index(a) + 1)
    for pair in _islice(_combinations(dict.fromkeys(s), 2), v - len(s), None):
        return pair
    raise IndexError("investment index out of range")


def _take_swap_at(game: "Game", player: PlayerName, options: list[Take], j: int) -> tuple[Take, str | None]:
    """The ``j``-th (draw, swap) pair of ``take_swaps(game, player)`` (``options``:
    ``game.share_options(player)``), without listing the others' swaps."""
    up = game.up_pile
    kinds = set(game.share_hands[player])
    for take in options:
        source = take.source
        if up - (source == "up") <= 0:
            if j == 0:
                return take, None
            j -= 1
            continue
        extra = take.company if source == "display" else (UP if source == "up" else None)
        n = 2 + len(kinds) - (extra in kinds) if extra is not None else 1 + len(kinds)
        if j < n:
            if j == 0:
                return take, None
            if extra is not None:
                kinds.add(extra)
            return take, sorted(kinds)[j - 1]
        j -= n
    raise IndexError("draw index out of range")


class LegalActions:
    """The complete legal actions of ``player`` in ``game`` now: a live view (it
    follows the game as it changes), in a stable order.

    Initial phase: ``Start`` for each share kind in hand (not UP in the second
    edition).  Play phase, for the player on move, for no redraw and then each
    dead card (option dead_track_redraw): every BUILD (placement x track card x
    draw x optional swap), every INVEST x discard, or, only when neither is
    possible, ``Pass`` x discard.  Empty for anyone else.  Exactly the actions
    ``Game.resolve`` returns unchanged.

    Compares equal to a list of the same actions in the same order; indexing
    (``legal[0]``, ``legal[-1]``) lists them first."""

    __slots__ = ("game", "player")

    def __init__(self, game: "Game", player: PlayerName) -> None:
        self.game = game
        self.player = player

    def _on_move(self) -> bool:
        g = self.game
        return g.phase == "play" and self.player == g.to_move

    def __iter__(self) -> Iterator[Action]:
        g, player = self.game, self.player
        if g.phase == "initial":
            yield from starts(g, player)
            return
        if not self._on_move():
            return
        p = plan(g, player)
        all_invests = invests(g, player)
        network = g.network
        for r, builds, _nb, _ni, npass, discards in p.blocks:
            cards_for = {t: cl for t, cl, _n in builds}
            for c in COMPANIES:
                for sid, t in network.placements(c):
                    for card in cards_for.get(t, ()):
                        space = t if card == JOKER else None
                        for take, swaps in p.takes:
                            for s in swaps:
                                yield Build(c, sid, card, space, take, s, r)
            for shares in all_invests:
                for d in discards:
                    yield Invest(shares, d, r)
            if npass:
                for d in discards:
                    yield Pass(d, r)

    def __contains__(self, action: object) -> bool:
        """Whether ``action`` is one of the legal actions: ``Game.resolve`` accepts
        it and returns it unchanged (complete).  Nothing is listed."""
        try:
            return self.game.resolve(self.player, action) == action  # type: ignore[arg-type]
        except IllegalAction:
            return False

    def count(self) -> int:
        """The number of legal actions, counted without listing them."""
        g = self.game
        if g.phase == "initial":
            return len(starts(g, self.player))
        if not self._on_move():
            return 0
        return plan(g, self.player).total

    def __len__(self) -> int:
        return self.count()

    def __bool__(self) -> bool:
        return self.count() > 0

    def random(self, rng: _random.Random | None = None) -> Action | None:
        """A uniformly random legal action drawn with ``rng`` (``random.Random``;
        the module generator if None), or None when there is none.  Cheap: the
        combinations are counted, not listed (one ``randrange`` per call)."""
        rnd = rng or _random
        g = self.game
        if g.phase == "initial":  # only the drawn ``Start`` is made
            kinds = _start_kinds(g, self.player)
            return Start(kinds[rnd.randrange(len(kinds))]) if kinds else None
        if not self._on_move():
            return None
        if not g.options["dead_track_redraw"] or not g.dead_cards(self.player):
            return _random_turn(g, self.player, rnd)
        p = plan(g, self.player)
        return action_at(g, self.player, p, rnd.randrange(p.total))

    def __getitem__(self, index: int) -> Action:
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LegalActions, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<LegalActions of {self.player!r}: {self.count()} actions>"
