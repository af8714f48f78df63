"""What one seat may know, and a game rebuilt from it: determinisation.

``determinise(game, player, rng)`` returns a copy of ``game`` in which every part
``player`` cannot see is thrown away and drawn again at random (with ``rng``),
consistently with what the seat sees: the other players' track cards and shares
(their sizes are public), their pending initial choices, the shares they returned
in UP swaps (how many: the public log), the track deck order and the share stack
order, dividend cards included (where they can still be, from the stack's known
structure: rules Setup 7 and the option spread_dividends).  Public fields and the
seat's own (``Game.fields_visible``) are kept.  Anything computed from the result
depends on the hidden information only through ``rng``: two games that differ only
in what the seat cannot see give the same determinisation for the same ``rng``
state (tested in tests/test_players.py).

``dividend_outlook(game)`` gives, from public information only, the expected
number of dividend cards among the next draws of the share stack.
"""
from __future__ import annotations

import random
from collections import Counter

from ..rules.components import (
    COMPANIES,
    DIVIDEND,
    DIVIDEND_CARDS,
    TRACK_CARD_COUNTS,
    UP,
    UP_SHARES,
    PlayerName,
)
from ..rules.engine import Game
from ..rules.events import FaceUp, FourOfAKind, SwappedUnseen
from ..rules.options import ruleset as _ruleset

def _setup_removed(events: list) -> int:
    """Four-of-a-kind removals while the display was first laid out (public
    events, ``Game.events``)."""
    n = 0
    for e in events:
        if type(e) is FaceUp:
            return n
        if type(e) is FourOfAKind:
            n += 1
    return n


def stack_segments(game: Game) -> list[tuple[int, int]]:
    """The share stack as it was laid out, top first, as ``(cards, dividend cards)``
    piles (rules: Setup 7; option spread_dividends), from public information only:
    the players, the ruleset, the options and the setup's four-of-a-kind removals.
    Empty before the display is laid out."""
    if game.phase == "initial":
        return []
    dealt = _ruleset(game.ruleset).shares_dealt
    rest = sum(c.shares for c in COMPANIES.values()) - dealt * len(game.players)
    rest -= 4 * (1 + _setup_removed(game.events))
    rest = max(rest, 0)
    if game.options.get("spread_dividends"):
        q, r = divmod(max(rest - 24, 0), 4)
        larger = [q + (1 if j < r else 0) for j in range(4)]
        sixes = [min(6, max(rest - 6 * i, 0)) for i in range(4)]
        out = []
        for six, big in zip(sixes, larger):
            if game.ruleset == "first-edition":
                out += [(six, 0), (big + 1, 1)]
            else:
                out += [(big, 0), (six + 1, 1)]
        return out
    if game.ruleset == "first-edition":
        return [(min(rest, 6), 0), (min(max(rest - 6, 0), 18) + 1, 1), (max(rest - 24, 0) + 3, 3)]
    return [(min(rest, 6), 0), (min(max(rest - 12, 0), 18) + 1, 1), (max(rest - 30, 0) + 3, 3),
            (min(max(rest - 6, 0), 6), 0)]


def _remaining_segments(game: Game) -> list[tuple[int, int]]:
    """The undrawn part of each pile, top first, as ``(cards, dividend cards)``,
    with the dividend cards already drawn taken from the topmost piles; sized to the
    public stack size."""
    segs = stack_segments(game)
    size = len(game.stack)
    total = sum(n for n, _ in segs)
    drawn = max(total - size, 0)
    divs_drawn = min(game.dividends_drawn, DIVIDEND_CARDS)
    out = []
    for n, d in segs:
        take = min(drawn, n)
        drawn -= take
        used = min(divs_drawn, d)
        divs_drawn -= used
        left_n, left_d = n - take, d - used
        if left_n > 0:
            out.append((left_n, min(left_d, left_n)))
    # keep the sizes consistent with the public stack size whatever happened
    have = sum(n for n, _ in out)
    divs_left = max(DIVIDEND_CARDS - game.dividends_drawn, 0)
    if have != size or sum(d for _, d in out) != min(divs_left, size):
        return [(size, min(divs_left, size))] if size else []
    return out


def dividend_outlook(game: Game, draws: float) -> float:
    """Expected number of dividend cards among the next ``draws`` cards of the share
    stack (public information only: the stack's structure and size, the dividend
    cards drawn so far)."""
    expected = 0.0
    left = draws
    for n, d in _remaining_segments(game):
        if left <= 0:
            break
        part = min(left, n)
        expected += d * part / n
        left -= part
    return expected


def _returned_counts(game: Game) -> dict[PlayerName, int]:
    counts = {p: 0 for p in game.players}
    for e in game.events:
        if type(e) is SwappedUnseen and e.player in counts:
            counts[e.player] += 1
    return counts


def determinise(game: Game, player: PlayerName, rng: random.Random) -> Game:
    """A copy of ``game`` with everything ``player`` cannot see drawn again with
    ``rng``, consistently with ``player``'s view (see the module)."""
    g = game.copy()
    others = [p for p in game.players if p != player]
    g.history = []
    # ---- track cards: unseen = all - own hand - discards - removed
    unseen_track = Counter(TRACK_CARD_COUNTS)
    unseen_track.subtract(game.track_hands[player])
    unseen_track.subtract(game.track_discards)
    unseen_track.subtract(game.track_removed)
    pool = sorted(unseen_track.elements())
    rng.shuffle(pool)
    for p in others:
        n = len(game.track_hands[p])
        g.track_hands[p], pool = sorted(pool[:n]), pool[n:]
    g.track_deck = pool[: len(game.track_deck)]
    # ---- shares: unseen = all - own hand - own returned - invested - display - removed
    unseen = Counter({c: COMPANIES[c].shares for c in COMPANIES})
    unseen[UP] = UP_SHARES - game.up_pile
    unseen.subtract(game.share_hands[player])
    unseen.subtract(game.returned[player])
    for p in game.players:
        for kind, n in game.invested[p].items():
            unseen[kind] -= n
    unseen.subtract(c for c in game.display if c)
    unseen.subtract(game.removed)
    ups = max(unseen.pop(UP, 0), 0)
    companies = sorted(Counter({k: v for k, v in unseen.items() if v > 0}).elements())
    divs_left = 0 if game.phase == "initial" else max(DIVIDEND_CARDS - game.dividends_drawn, 0)
    divs_left = min(divs_left, len(game.stack))
    stack_shares = len(game.stack) - divs_left
    returned = _returned_counts(game)
    slots = [(p, "hand") for p in others for _ in range(len(game.share_hands[p]))]
    slots += [(p, "returned") for p in others for _ in range(returned[p])]
    # consistency with the public counts (the log could be incomplete): fit the
    # returned shares to what is unseen
    surplus = len(companies) + ups - stack_shares - len(slots)
    while surplus > 0 and others:
        slots.append((others[0], "returned"))
        surplus -= 1
    while surplus < 0 and any(kind == "returned" for _, kind in slots):
        i = max(i for i, (_, kind) in enumerate(slots) if kind == "returned")
        slots.pop(i)
        surplus += 1
    up_slots = set(rng.sample(range(len(slots)), min(ups, len(slots))))
    rng.shuffle(companies)
    hands = {p: [] for p in others}
    rets = {p: [] for p in others}
    for i, (p, kind) in enumerate(slots):
        card = UP if i in up_slots else (companies.pop() if companies else UP)
        (hands if kind == "hand" else rets)[p].append(card)
    for p in others:
        g.share_hands[p] = sorted(hands[p])
        g.returned[p] = rets[p]
    shares = companies[:stack_shares]
    # ---- the stack: dividend cards where they can still be
    stack: list[str] = []
    if game.phase == "initial":
        stack = shares
    else:
        for n, d in _remaining_segments(game):
            pile = shares[: n - d] + [DIVIDEND] * d
            shares = shares[n - d:]
            rng.shuffle(pile)
            stack += pile
        stack += shares
    g.stack = stack
    # ---- pending initial choices of the others
    if game.phase == "initial":
        up_ok = _ruleset(game.ruleset).up_may_start
        for p in others:
            if p in game.initial_choice:
                kinds = sorted({s for s in g.share_hands[p] if up_ok or s != UP}) or sorted(set(g.share_hands[p]))
                if kinds:
                    g.initial_choice[p] = rng.choice(kinds)
                else:
                    g.initial_choice.pop(p, None)
    return g
