"""The built-in player's strategy: a one-move heuristic over expected dividends.

``choose(game, player, rng)`` returns one legal action for ``player``.  It first
determinises the game (``moderator.players.hidden.determinise``: whatever the seat
cannot see is drawn again with ``rng``), then scores each candidate move on that
copy with ``Position``, an estimate of every player's money at the end of the game:

- money so far (the seat's own when the option hidden_money hides the others');
- each dividend still to come pays the invested shares at the companies' present
  values (primary / secondary, UP by its table: ``moderator.rules.dividends``);
- the seat's shares in hand count for a part ``alpha`` of what they would add if
  invested: the dividends expected before the seat's next turn (from the dividend
  cards left in the stack and where they can be) are lost to them, and investing
  costs a turn.

The score is the seat's money less the mean of the best opponent's and the
opponents' average.  A BUILD raises its company's value by one (good when the seat
leads it, bad when an opponent does) and draws a share (a face-up one, the stack's
expected card, or UP); an UP swap returns the share worth least; an INVEST moves
shares from the hand (worth ``alpha``) to the table (worth all).  Track cards: a
joker is kept when a card of the type fits, the card discarded is the least
useful, a dead card is redrawn (option dead_track_redraw).  Ties are broken with
``rng``.  Cost: a few hundred payout sums, a few milliseconds a move.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Iterable

from ..rules.actions import Action, Build, Invest, Pass, Start, Take
from ..rules.components import COMPANIES, JOKER, TRACK_TYPES, UP, UP_SHARES, PlayerName
from ..rules.dividends import company_payout, up_payout
from ..rules.engine import Game
from ..rules.legal import invests
from .hidden import determinise, dividend_outlook

DRAWS_PER_TURN = 0.75
"""Share-stack cards drawn per turn on average (a BUILD draws one, from the stack or
as the refill of a face-up share; an INVEST or a UP draw none)."""
HAND_KEEP = 0.8
"""What a share in hand is worth, at most, of the same share invested: investing it
costs a turn."""
JOKER_COST = 0.6
EXTEND_BONUS = 0.15
_KINDS = (*COMPANIES, UP)


class Position:
    """Money estimates for one game seen by ``me``: ``score(invested, hand,
    values)`` is the seat's expected final money less its opponents'."""

    def __init__(self, game: Game, me: PlayerName, alpha: float | None = None):
        self.game = game
        self.me = me
        self.players = list(game.players)
        self.others = [p for p in self.players if p != me]
        hidden = game.options.get("hidden_money") and game.phase != "over"
        own = game.money.get(me, 0)
        self.money = {p: (own if hidden and p != me else game.money.get(p, 0)) for p in self.players}
        self.remaining = list(range(game.dividends_paid + 1, game.final_dividend + 1))
        self.d = len(self.remaining)
        self.values = {c: game.value(c) for c in COMPANIES}
        self.invested = {p: dict(game.invested[p]) for p in self.players}
        self.hand = Counter(game.share_hands[me])
        self.alpha = self._alpha() if alpha is None else alpha
        self._cache: dict[tuple, float] = {}
        self._parts: dict[tuple, tuple[float, ...]] = {}
        self.evaluations = 0
        """Positions scored (each is a few payout sums): the work done."""

    def _alpha(self) -> float:
        if not self.d:
            return 0.0
        if self.game.phase == "initial":
            return HAND_KEEP
        expected = dividend_outlook(self.game, DRAWS_PER_TURN * len(self.players))
        return HAND_KEEP * max(0.0, self.d - expected) / self.d

    # ------------------------------------------------------------ money
    def _part(self, kind: str, n: int, value: int) -> tuple[float, ...]:
        """What share kind ``kind`` pays each player (in ``players`` order) over the
        dividends to come when the seat has ``n`` of it invested (the others as
        now) and the company is worth ``value``; cached."""
        key = (kind, n, value)
        got = self._parts.get(key)
        if got is not None:
            return got
        holdings = {p: h[kind] for p, h in self.invested.items() if p != self.me and h.get(kind)}
        if n > 0:
            holdings[self.me] = n
        paid: dict[str, float] = {}
        if holdings:
            if kind == UP:
                for number in self.remaining:
                    for p, amount in up_payout(holdings, number).items():
                        paid[p] = paid.get(p, 0) + amount
            else:
                for p, amount in company_payout(holdings, value).items():
                    paid[p] = amount * self.d
        got = tuple(paid.get(p, 0) for p in self.players)
        self._parts[key] = got
        return got

    def totals(self, mine: dict[str, int], values: dict[str, int]) -> dict[str, float]:
        """Expected final money of each player when the seat has ``mine``
        invested (the others as now) and the companies are worth ``values``."""
        tot = [self.money[p] for p in self.players]
        if self.d:
            for kind in _KINDS:
                part = self._part(kind, mine.get(kind, 0), values.get(kind, 0))
                for i, amount in enumerate(part):
                    if amount:
                        tot[i] += amount
        return dict(zip(self.players, tot))

    def relative(self, tot: dict[str, float]) -> float:
        if not self.others:
            return tot[self.me]
        theirs = [tot[p] for p in self.others]
        return tot[self.me] - 0.5 * max(theirs) - 0.5 * sum(theirs) / len(theirs)

    def score(self, mine: dict[str, int], hand: Counter, values: dict[str, int]) -> float:
        """The seat's position: invested shares ``mine`` counted whole, ``hand``
        counted at ``alpha``."""
        key = (tuple(sorted(mine.items())), tuple(sorted(hand.items())), tuple(values.values()))
        got = self._cache.get(key)
        if got is not None:
            return got
        self.evaluations += 1
        now = self.relative(self.totals(mine, values))
        if hand and self.alpha > 0:
            allin = dict(mine)
            for k, n in hand.items():
                if n > 0:
                    allin[k] = allin.get(k, 0) + n
            later = self.relative(self.totals(allin, values))
            now += self.alpha * (later - now)
        self._cache[key] = now
        return now


def _plus(c: Counter, kind: str | None, n: int = 1) -> Counter:
    out = Counter(c)
    if kind is not None:
        out[kind] += n
    return out


class _Chooser:
    def __init__(self, game: Game, me: PlayerName, rng: random.Random):
        self.game = game
        self.me = me
        self.rng = rng
        self.pos = Position(game, me)

    # ------------------------------------------------------------ track cards
    def card_keep(self, kinds: Iterable[str]) -> dict[str, float]:
        """How much each track card kind held is worth keeping (joker most, dead
        types nothing)."""
        net = self.game.network
        totals = net.placement_totals()
        counts = Counter(self.game.track_hands[self.me])
        out = {}
        for k in kinds:
            if k == JOKER:
                out[k] = 3.0
            else:
                out[k] = min(1.0, totals.get(k, 0) / 6) + 0.2 * (net.free_spaces(k) > 0) - 0.3 * (counts[k] - 1)
        return out

    def discard(self, cards: list[str], avoid: str | None = None) -> str | None:
        held = list(cards)
        if avoid is not None and avoid in held:
            held.remove(avoid)
        if not held:
            return None
        keep = self.card_keep(set(held))
        low = min(keep.values())
        return self.rng.choice(sorted(k for k, v in keep.items() if v == low))

    # ------------------------------------------------------------ choices
    def start(self) -> Action:
        summary = self.game.legal_summary(self.me)
        hand = Counter(self.game.share_hands[self.me])
        choices = [a for a in summary.starts if a.share != UP] or list(summary.starts)
        best = max((hand[a.share], COMPANIES[a.share].trains if a.share in COMPANIES else 0)
                   for a in choices)
        tops = [a for a in choices if (hand[a.share], COMPANIES[a.share].trains if a.share in COMPANIES else 0) == best]
        return self.rng.choice(tops)

    def turn(self) -> Action:
        game, me, pos = self.game, self.me, self.pos
        summary = game.legal_summary(me)
        redraw = summary.redraw[0] if summary.redraw else None
        cards = list(game.track_hands[me])
        if redraw is not None:
            cards.remove(redraw)
        if summary.passes:
            return Pass(self.discard(cards), redraw)
        mine = pos.invested[me]
        hand = pos.hand
        values = pos.values
        base = pos.score(mine, hand, values)
        candidates: list[tuple[float, float, Action]] = []
        # INVEST
        if summary.invest:
            for shares in invests(game, me):
                m2 = dict(mine)
                h2 = Counter(hand)
                for s in shares:
                    m2[s] = m2.get(s, 0) + 1
                    h2[s] -= 1
                h2 = +h2
                gain = pos.score(m2, h2, values) - base
                candidates.append((gain, self.rng.random(), Invest(shares, None, redraw)))
        # BUILD: the best company, its draw and swap
        if summary.builds:
            takes = list(summary.takes)
            stack_mix = self.stack_mix()
            for company, sections in summary.builds.items():
                v2 = dict(values)
                v2[company] += 1
                best_take, take_gain = None, float("-inf")
                for take in takes:
                    g = self.take_value(take, mine, hand, v2, stack_mix)
                    if g > take_gain:
                        best_take, take_gain = take, g
                gain = take_gain - base
                section, card, space, extra = self.pick_section(company, sections)
                candidates.append((gain + extra, self.rng.random(),
                                   Build(company, section, card, space, best_take, None, redraw)))
        if not candidates:  # nothing scored: any legal action
            return game.random_action(me, self.rng)
        candidates.sort(key=lambda t: (t[0], t[1]), reverse=True)
        action = candidates[0][2]
        if isinstance(action, Invest):
            return Invest(action.shares, self.discard(cards), redraw)
        if isinstance(action, Build):
            swap = self.pick_swap(action, summary)
            if swap is not None:
                action = Build(action.company, action.section, action.card, action.space, action.take, swap, redraw)
        return action

    def stack_mix(self) -> list[tuple[str, float]]:
        """The unseen company shares (the stack's expected card), as fractions."""
        game = self.game
        unseen = Counter({c: COMPANIES[c].shares for c in COMPANIES})
        unseen.subtract(game.share_hands[self.me])
        unseen.subtract(game.returned[self.me])
        for p in game.players:
            unseen.subtract({k: n for k, n in game.invested[p].items() if k != UP})
        unseen.subtract(c for c in game.display if c)
        unseen.subtract(game.removed)
        unseen = +unseen
        total = sum(unseen.values())
        return [(c, n / total) for c, n in sorted(unseen.items())] if total else []

    def take_value(self, take: Take, mine, hand: Counter, values, stack_mix) -> float:
        pos = self.pos
        if take.source == "display":
            return pos.score(mine, _plus(hand, take.company), values)
        if take.source == "up":
            return pos.score(mine, _plus(hand, UP), values)
        if take.source == "stack" and stack_mix:
            return sum(f * pos.score(mine, _plus(hand, c), values) for c, f in stack_mix)
        return pos.score(mine, hand, values)

    def pick_section(self, company: str, sections) -> tuple[str, str, str | None, float]:
        """A section, card and space type for a BUILD of ``company``: no joker
        when a card of the type fits; a section reaching a city new to the company
        preferred."""
        net = self.game.network
        reach = net.network_cities(company)
        board = self.game.board
        best, best_key = None, None
        for sid, fits in sections.items():
            new_city = any(c not in reach for c in board.sections[sid].cities)
            for t, card in fits:
                key = (-JOKER_COST if card == JOKER else 0.0) + (EXTEND_BONUS if new_city else 0.0)
                tie = self.rng.random()
                if best_key is None or (key, tie) > best_key:
                    best_key = (key, tie)
                    best = (sid, card, t if card == JOKER else None, key)
        return best  # type: ignore[return-value]

    def pick_swap(self, build: Build, summary) -> str | None:
        choices = summary.swaps.get(build.take, ())
        if not choices:
            return None
        pos = self.pos
        v2 = dict(pos.values)
        v2[build.company] += 1
        hand = Counter(pos.hand)
        if build.take.source == "display":
            hand[build.take.company] += 1
        elif build.take.source == "up":
            hand[UP] += 1
        now = pos.score(pos.invested[self.me], hand, v2)
        best, best_gain = None, 0.05
        for s in choices:
            if s == UP or hand[s] <= 0:
                continue
            h2 = Counter(hand)
            h2[s] -= 1
            h2[UP] += 1
            gain = pos.score(pos.invested[self.me], +h2, v2) - now
            if gain > best_gain:
                best, best_gain = s, gain
        return best


def choose(game: Game, player: PlayerName, rng: random.Random, budget_ms: float | None = None,
           stats: dict | None = None) -> Action:
    """The built-in player's move for ``player`` (on move) in ``game``: a legal
    action, chosen from what ``player`` may see only (the game is determinised with
    ``rng`` first).  The same game, seat and ``rng`` state give the same action.
    ``budget_ms`` is accepted for callers that set one; the heuristic stays far
    below any sensible budget (a few milliseconds).  ``stats``, when given, receives
    ``evaluations``: the positions scored, a few hundred at most (the work done).
    ValueError when ``player`` has no move to make."""
    if player not in game.waiting_for():
        raise ValueError(f"{player!r} has no move to make now")
    seen = determinise(game, player, rng)
    chooser = _Chooser(seen, player, rng)
    if seen.phase == "initial":
        action = chooser.start()
    else:
        action = game.resolve(player, chooser.turn())
    if stats is not None:
        stats["evaluations"] = chooser.pos.evaluations
    return action
