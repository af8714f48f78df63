"""The rules engine: a game of Union Pacific as a pure state machine.

No I/O, no clock; the only randomness comes from generators seeded by the game's
seed (``random.Random(f"{seed}/{purpose}/{n}")``), so a game is a replayable list of
actions, like a chess game is a list of moves.  Typical use::

    game = Game.new(Board.default(), ["Ann", "Bob", "Cy"], seed=7)
    for player in game.waiting_for():
        game.push(player, Start("KCC"))          # initial investments
    game.legal_actions(game.to_move)             # every complete legal action
    game.push(game.to_move, parse_turn(["build KCC DEN-KCY black", "take stack"], board))

Money is in millions of dollars.  Rules references name the sections of
shared/rules/union-pacific.md.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from .actions import Action, Build, Invest, Pass, Start, Take
from .board import Board
from .components import (
    COMPANIES,
    DIVIDEND,
    DIVIDEND_CARDS,
    JOKER,
    TRACK_CARD_COUNTS,
    TRACK_TYPES,
    UP,
    UP_SHARES,
    company_value,
)
from .dividends import company_payout, up_payout

RULESETS = ("first-edition", "second-edition")
"""first-edition: 4 company shares dealt, stack 6 / 18+1 / rest+3 (rules: Setup).
second-edition: 5 company shares dealt, UP not allowed as the initial investment,
stack 6 / 18+1 / rest+3 / 6."""

OPTIONS = {
    "spread_dividends": False,
    "up_only_by_swap": False,
    "hidden_money": False,
    "dead_track_redraw": False,
}
"""Rule options and their defaults (rules: Setup step 7, BUILD step 3, What each
player may know, No legal action)."""

IMAGINARY = "(imaginary player)"
"""Name of the imaginary third player of a two-player game (rules: Two players)."""


class IllegalAction(ValueError):
    """An action that the rules do not allow now.

    ``reason`` says what is wrong in plain words; ``legal`` lists order texts (or
    short descriptions) of what would be legal instead."""

    def __init__(self, reason: str, legal: list[str] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.legal = legal or []


def _rng(seed: int, purpose: str, n: int = 0) -> random.Random:
    return random.Random(f"{seed}/{purpose}/{n}")


def _track_deck() -> list[str]:
    return [kind for kind, count in TRACK_CARD_COUNTS.items() for _ in range(count)]


def _share_deck() -> list[str]:
    return [c.abbr for c in COMPANIES.values() for _ in range(c.shares)]


@dataclass
class Game:
    """The whole state of one game.

    Public attributes are plain data (lists, dicts, ints, strings) so that
    ``to_dict`` is a direct copy.  Card lists are ordered top first.  ``history`` is
    the list of ``(player, action)`` pushed so far; ``log`` the public events.
    """

    board: Board
    players: list[str]
    seed: int
    ruleset: str = "first-edition"
    options: dict[str, bool] = field(default_factory=lambda: dict(OPTIONS))
    phase: str = "initial"  # "initial" | "play" | "over"
    current: int = 0  # index into players of the player on move
    turn: int = 0  # number of turns taken in the play phase
    placed: dict[str, list[str | None]] = field(default_factory=dict)  # section -> space occupants
    box: dict[str, int] = field(default_factory=dict)  # company -> trains left in the box
    track_deck: list[str] = field(default_factory=list)
    track_discards: list[str] = field(default_factory=list)
    reshuffles: int = 0
    track_hands: dict[str, list[str]] = field(default_factory=dict)
    share_hands: dict[str, list[str]] = field(default_factory=dict)
    invested: dict[str, dict[str, int]] = field(default_factory=dict)
    initial_choice: dict[str, str] = field(default_factory=dict)  # secret until all chose
    display: list[str | None] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)
    up_pile: int = 0
    removed: list[str] = field(default_factory=list)  # four-of-a-kind cards, public
    returned: dict[str, list[str]] = field(default_factory=dict)  # UP swaps, secret to each
    dividends_paid: int = 0
    dividends_pending: int = 0
    money: dict[str, int] = field(default_factory=dict)
    payouts: list[dict[str, Any]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    history: list[tuple[str, Action]] = field(default_factory=list)

    # ================================================================= setup
    @classmethod
    def new(
        cls,
        board: Board,
        players: list[str],
        seed: int,
        ruleset: str = "first-edition",
        options: dict[str, bool] | None = None,
    ) -> "Game":
        """Set up a new game (rules: Setup, steps 1-4; the display and stack are laid
        out when the initial investments are revealed).

        ``players`` in turn order (PBEM decision: the order given).  Raises
        ValueError for 1 or 7+ players, duplicate names, an unknown ruleset or option.
        """
        if not 2 <= len(players) <= 6:
            raise ValueError(f"Union Pacific is for 2-6 players, not {len(players)}")
        if len(set(players)) != len(players):
            raise ValueError("player names must be different")
        if ruleset not in RULESETS:
            raise ValueError(f"unknown ruleset {ruleset!r}; choose one of {', '.join(RULESETS)}")
        opts = dict(OPTIONS)
        for key, value in (options or {}).items():
            if key not in OPTIONS:
                raise ValueError(f"unknown option {key!r}; options are {', '.join(OPTIONS)}")
            opts[key] = bool(value)
        g = cls(board=board, players=list(players), seed=int(seed), ruleset=ruleset, options=opts)
        # 1. starting trains
        g.placed = {sid: [None] * len(s.spaces) for sid, s in board.sections.items()}
        g.box = {abbr: c.trains - len(board.companies[abbr].starts) for abbr, c in COMPANIES.items()}
        # 2. track cards
        deck = _track_deck()
        _rng(seed, "track").shuffle(deck)
        for p in players:
            g.track_hands[p], deck = deck[:3], deck[3:]
        g.track_deck = deck
        # 3. one UP share each
        g.up_pile = UP_SHARES - len(players)
        # 4. company shares
        shares = _share_deck()
        _rng(seed, "shares").shuffle(shares)
        n = 4 if ruleset == "first-edition" else 5
        for p in players:
            g.share_hands[p] = sorted(shares[:n]) + [UP]
            shares = shares[n:]
            g.invested[p] = {}
            g.money[p] = 0
            g.returned[p] = []
        g.stack = shares  # shuffled remainder; the display and stack are built at reveal
        g.log.append(
            f"Game set up: {len(players)} players ({', '.join(players)}), ruleset {ruleset}."
        )
        return g

    def _build_stack(self) -> None:
        """Turn up the display and build the share stack with the dividend cards
        (rules: Setup, steps 6-7)."""
        rest = self.stack
        self.display, rest = list(rest[:4]), rest[4:]
        rng = _rng(self.seed, "stack")

        def with_dividends(pile: list[str], k: int) -> list[str]:
            pile = pile + [DIVIDEND] * k
            rng.shuffle(pile)
            return pile

        def split(cards: list[str], k: int) -> list[list[str]]:
            q, r = divmod(len(cards), k)
            out, i = [], 0
            for j in range(k):
                size = q + (1 if j < r else 0)
                out.append(cards[i : i + size])
                i += size
            return out

        if self.options["spread_dividends"]:
            sixes = [rest[i * 6 : (i + 1) * 6] for i in range(4)]
            larger = split(rest[24:], 4)
            stack: list[str] = []
            if self.ruleset == "first-edition":
                # from the top: 6, rest/4+1, 6, rest/4+1, ... (a 6-pile ends on top)
                for six, big in zip(sixes, larger):
                    stack += six + with_dividends(big, 1)
            else:
                # from the top: rest/4, 6+1, rest/4, 6+1, ... (a larger pile on top)
                for six, big in zip(sixes, larger):
                    stack += big + with_dividends(six, 1)
        elif self.ruleset == "first-edition":
            stack = rest[:6] + with_dividends(rest[6:24], 1) + with_dividends(rest[24:], 3)
        else:
            stack = (
                rest[:6]
                + with_dividends(rest[12:30], 1)
                + with_dividends(rest[30:], 3)
                + rest[6:12]
            )
        self.stack = stack
        assert stack.count(DIVIDEND) == DIVIDEND_CARDS
        self._four_of_a_kind()

    # ================================================================= queries
    @property
    def to_move(self) -> str | None:
        """The player whose turn it is in the play phase, else None."""
        return self.players[self.current] if self.phase == "play" else None

    def waiting_for(self) -> list[str]:
        """Players from whom an order is awaited: those who have not yet made their
        initial investment, or the player on move; empty when the game is over."""
        if self.phase == "initial":
            return [p for p in self.players if p not in self.initial_choice]
        if self.phase == "play":
            return [self.players[self.current]]
        return []

    @property
    def final_dividend(self) -> int:
        """The dividend after which the game ends: 4, or 3 with two players
        (rules: Game end; Two players)."""
        return 3 if len(self.players) == 2 else 4

    def trains_on_board(self, company: str) -> int:
        """Trains of ``company`` on the board, starting spaces included."""
        return COMPANIES[company].trains - self.box[company]

    def value(self, company: str) -> int:
        """Dividend value of ``company`` in millions (rules: Company dividends)."""
        return company_value(self.trains_on_board(company))

    def companies_on(self, sid: str) -> set[str]:
        """Companies with a train on section ``sid`` (starting spaces included)."""
        return set(self.board.sections[sid].starts) | {c for c in self.placed[sid] if c}

    def network_cities(self, company: str) -> set[str]:
        """Cities in ``company``'s network: its home station and every city reached
        from it through sections holding its trains (rules: BUILD, step 2)."""
        home = self.board.companies[company].home
        seen = {home}
        todo = [home]
        while todo:
            city = todo.pop()
            for s in self.board.sections_at(city):
                if company in self.companies_on(s.id):
                    other = s.other(city)
                    if other not in seen:
                        seen.add(other)
                        todo.append(other)
        return seen

    def free_space_types(self, sid: str) -> list[str]:
        """Track types of the empty neutral spaces on section ``sid`` (with repeats)."""
        sec = self.board.sections[sid]
        return [t for t, occ in zip(sec.spaces, self.placed[sid]) if occ is None]

    def placements(self, company: str) -> list[tuple[str, str]]:
        """Every ``(section, space track type)`` where a train of ``company`` may be
        placed now, whatever track card is held (rules: BUILD, step 2), sorted."""
        if self.box.get(company, 0) <= 0:
            return []
        types = self.board.companies[company].types
        net = self.network_cities(company)
        out: set[tuple[str, str]] = set()
        for city in net:
            for s in self.board.sections_at(city):
                if company in self.companies_on(s.id):
                    continue
                for t in self.free_space_types(s.id):
                    if t in types:
                        out.add((s.id, t))
        return sorted(out)

    def _why_not_placement(self, company: str, sid: str, space: str) -> str | None:
        """Reason a train of ``company`` may not go on a ``space``-type space of
        ``sid``, or None if it may."""
        sec = self.board.sections[sid]
        name = self.board.section_name(sid)
        if self.box[company] <= 0:
            return f"{company} has no trains left in the box"
        if company in self.companies_on(sid):
            return f"{company} already has a train on {sid} ({name})"
        types = self.board.companies[company].types
        if space not in types:
            return f"{company} may not use {space} track (it may use {', '.join(sorted(types))})"
        if space not in sec.spaces:
            kinds = ", ".join(sorted(set(sec.spaces))) or "none"
            return f"{sid} ({name}) has no {space} space (its neutral spaces are: {kinds})"
        if space not in self.free_space_types(sid):
            return f"every {space} space on {sid} ({name}) is taken"
        net = self.network_cities(company)
        if not set(sec.cities) & net:
            return (
                f"{sid} ({name}) does not touch {company}'s network "
                f"(home station {self.board.companies[company].home}; "
                f"network cities {', '.join(sorted(net))})"
            )
        return None

    def share_options(self, player: str | None = None) -> list[Take]:
        """The draws possible after a BUILD now (rules: BUILD, step 3; option
        up_only_by_swap).  ``[Take("none")]`` when no share can be drawn."""
        out = [Take("display", c) for c in sorted({c for c in self.display if c})]
        if self.stack:
            out.append(Take("stack"))
        if self.up_pile > 0 and not self.options["up_only_by_swap"]:
            out.append(Take("up"))
        return out or [Take("none")]

    def has_legal_build(self, player: str) -> bool:
        """Whether ``player`` holds a track card that some company can use now."""
        cards = set(self.track_hands[player])
        for company in COMPANIES:
            for _sid, t in self.placements(company):
                if t in cards or JOKER in cards:
                    return True
        return False

    def legal_actions(self, player: str) -> list[Action]:
        """Every complete legal action of ``player`` now, in a stable order.

        Initial phase: ``Start`` for each share kind in hand.  Play phase, for the
        player on move: every BUILD (placement x track card x draw x optional swap),
        every INVEST x discard, or, only when neither is possible, ``Pass`` x
        discard.  Empty for anyone else."""
        return list(self._iter_legal(player))

    def _iter_legal(self, player: str) -> Iterator[Action]:
        if self.phase == "initial":
            if player in self.players and player not in self.initial_choice:
                for s in sorted(set(self.share_hands[player])):
                    if s == UP and self.ruleset == "second-edition":
                        continue
                    yield Start(s)
            return
        if self.phase != "play" or player != self.to_move:
            return
        cards = sorted(set(self.track_hands[player]))
        hand = self.share_hands[player]
        any_build = False
        for company in COMPANIES:
            for sid, t in self.placements(company):
                for card in cards:
                    if card != t and card != JOKER:
                        continue
                    any_build = True
                    for take in self.share_options(player):
                        yield from self._builds(player, company, sid, card, t, take)
        counts = Counter(hand)
        discards = cards or [None]
        for a in sorted(counts):
            for n in range(1, counts[a] + 1):
                for d in discards:
                    yield Invest((a,) * n, d)
        kinds = sorted(counts)
        for i, a in enumerate(kinds):
            for b in kinds[i + 1 :]:
                for d in discards:
                    yield Invest((a, b), d)
        if not any_build and not hand:
            for d in discards:
                yield Pass(d)

    def _builds(self, player, company, sid, card, t, take) -> Iterator[Build]:
        space = t if card == JOKER else None
        base = Build(company, sid, card, space, take)
        yield base
        # the hand after the draw: a drawn share from the stack is unknown to the
        # enumerator; any share then held may be returned
        up_left = self.up_pile - (1 if take.source == "up" else 0)
        if up_left <= 0:
            return
        hand = set(self.share_hands[player])
        if take.source == "display":
            hand.add(take.company)  # type: ignore[arg-type]
        elif take.source == "up":
            hand.add(UP)
        for s in sorted(hand):
            yield replace(base, swap=s)

    # ================================================================= resolve
    def resolve(self, player: str, action: Action) -> Action:
        """Fill in what a forgiving order left out, when only one choice fits, and
        check legality.  Returns the complete action to push.

        Raises IllegalAction (reason + what is legal) when the action is not legal
        for ``player`` now: not their turn, game over, card not in hand, a placement
        condition failing, and so on (rules: A turn)."""
        if self.phase == "over":
            raise IllegalAction("the game is over; no more orders are accepted")
        if player not in self.players:
            raise IllegalAction(f"{player} is not a player of this game")
        if self.phase == "initial":
            if isinstance(action, Invest) and len(action.shares) == 1 and action.discard is None:
                action = Start(action.shares[0])
            if not isinstance(action, Start):
                raise IllegalAction(
                    "the game is waiting for the initial investments: choose one share "
                    "from your hand",
                    [str(a) for a in self._iter_legal(player)],
                )
            return self._check_start(player, action)
        if isinstance(action, Start):
            raise IllegalAction("the initial investments have all been made already")
        if player != self.to_move:
            raise IllegalAction(f"it is not your turn; it is {self.to_move}'s turn")
        if isinstance(action, Build):
            return self._resolve_build(player, action)
        if isinstance(action, Invest):
            return self._resolve_invest(player, action)
        if isinstance(action, Pass):
            return self._resolve_pass(player, action)
        raise IllegalAction(f"unknown action {action!r}")

    def _check_start(self, player: str, action: Start) -> Start:
        if player in self.initial_choice:
            raise IllegalAction(
                f"you have already chosen your initial investment ({self.initial_choice[player]})"
            )
        legal = [str(a) for a in self._iter_legal(player)]
        if action.share == UP and self.ruleset == "second-edition":
            raise IllegalAction(
                "in the second edition the UP share may not be the initial investment", legal
            )
        if action.share not in self.share_hands[player]:
            raise IllegalAction(f"you hold no {action.share} share", legal)
        return action

    def _discard_choice(self, player: str, discard: str | None, what: str) -> str | None:
        hand = self.track_hands[player]
        if discard is None:
            kinds = sorted(set(hand))
            if len(kinds) <= 1:
                return kinds[0] if kinds else None
            raise IllegalAction(
                f"say which track card to discard {what}",
                [f"discard {k}" for k in kinds],
            )
        if discard not in hand:
            raise IllegalAction(
                f"you hold no {discard} track card",
                [f"discard {k}" for k in sorted(set(hand))],
            )
        return discard

    def _resolve_invest(self, player: str, action: Invest) -> Invest:
        hand = Counter(self.share_hands[player])
        need = Counter(action.shares)
        kinds = sorted(need)
        examples = [str(a) for a in self._iter_legal(player) if isinstance(a, Invest)]
        if not action.shares:
            raise IllegalAction("name the shares to invest", examples[:12])
        if len(kinds) > 2 or (len(kinds) == 2 and len(action.shares) != 2):
            raise IllegalAction(
                "invest any number of shares of ONE company, or exactly one share each of "
                "TWO companies",
                examples[:12],
            )
        for k in kinds:
            if hand[k] < need[k]:
                have = hand[k]
                raise IllegalAction(
                    f"you hold {have} {k} share{'s' if have != 1 else ''}, not {need[k]}",
                    examples[:12],
                )
        discard = self._discard_choice(player, action.discard, "after investing")
        return Invest(tuple(sorted(action.shares)), discard)

    def _resolve_pass(self, player: str, action: Pass) -> Pass:
        if self.has_legal_build(player) or self.share_hands[player]:
            legal = self._summary_legal(player)
            raise IllegalAction(
                "you may pass only when you can neither build nor invest", legal
            )
        return Pass(self._discard_choice(player, action.discard, "to pass"))

    def _summary_legal(self, player: str) -> list[str]:
        """A short list of legal order examples for replies (not every combination)."""
        out: list[str] = []
        cards = set(self.track_hands[player])
        builds = []
        for company in COMPANIES:
            for sid, t in self.placements(company):
                card = t if t in cards else (JOKER if JOKER in cards else None)
                if card:
                    builds.append(str(Build(company, sid, card, t if card == JOKER else None)))
        if builds:
            out.append("build one of: " + ", ".join(builds[:40]) + (" ..." if len(builds) > 40 else ""))
            out.append(
                "then take one of: " + ", ".join(str(t) for t in self.share_options(player))
            )
        hand = sorted(set(self.share_hands[player]))
        if hand:
            out.append("or invest shares you hold: " + ", ".join(hand))
        if not builds and not hand:
            out.append("pass; discard one of: " + ", ".join(sorted(cards)))
        return out

    def _resolve_build(self, player: str, action: Build) -> Build:
        company, sid = action.company, action.section
        if company not in COMPANIES:
            raise IllegalAction(f"{company} builds no track (Union Pacific has no trains)")
        if sid not in self.board.sections:
            raise IllegalAction(f"there is no section {sid} on this board")
        hand = self.track_hands[player]
        card, space = action.card, action.space
        if card is not None and card not in hand:
            raise IllegalAction(
                f"you hold no {card} track card (you hold: {', '.join(sorted(hand)) or 'none'})",
                self._summary_legal(player),
            )
        if card is not None and card != JOKER:
            if space is not None and space != card:
                raise IllegalAction(f"a {card} card builds only on {card} track")
            space = card
        # the candidate space types: fixed by the card, or by the order, or open
        if card is not None and card != JOKER:
            candidates = [card]
        elif space is not None:
            candidates = [space]
        else:
            candidates = list(TRACK_TYPES)
        if card is None:  # only types for which a card is held
            candidates = [t for t in candidates if t in hand or JOKER in hand]
        fitting = [t for t in candidates if self._why_not_placement(company, sid, t) is None]
        if not fitting:
            if space is not None:
                reason = self._why_not_placement(company, sid, space)
            else:
                reasons = {self._why_not_placement(company, sid, t) for t in TRACK_TYPES}
                if None in reasons:  # a space fits, but no card in hand for it
                    free = sorted({t for t in self.free_space_types(sid)
                                   if self._why_not_placement(company, sid, t) is None})
                    reason = (
                        f"it needs a {' or '.join(free)} track card and you hold "
                        f"{', '.join(sorted(hand)) or 'none'}"
                    )
                else:
                    reason = "; ".join(sorted(r for r in reasons if r))
            raise IllegalAction(
                f"you cannot build {company} on {sid}: {reason}", self._summary_legal(player)
            )
        if len(fitting) > 1:
            raise IllegalAction(
                f"say which track card to play for {company} on {sid}",
                [str(Build(company, sid, t if t in hand else JOKER, None if t in hand else t))
                 for t in fitting],
            )
        space = fitting[0]
        if card is None:
            card = space if space in hand else JOKER
        take = self._resolve_take(player, action.take)
        swap = action.swap
        if swap is not None:
            after = list(self.share_hands[player])
            if take.source == "display":
                after.append(take.company)  # type: ignore[arg-type]
            elif take.source == "up":
                after.append(UP)
            up_left = self.up_pile - (1 if take.source == "up" else 0)
            if up_left <= 0:
                raise IllegalAction("the UP pile is empty: no UP swap is possible")
            if swap not in after:
                raise IllegalAction(
                    f"you will hold no {swap} share to return in the swap "
                    f"(you will hold: {', '.join(sorted(after)) or 'none'})"
                )
        return Build(company, sid, card, space if card == JOKER else None, take, swap)

    def _resolve_take(self, player: str, take: Take | None) -> Take:
        options = self.share_options(player)
        legal = [str(t) for t in options]
        if take is None:
            if options == [Take("none")]:
                return Take("none")
            raise IllegalAction("after building, say which share to take", legal)
        if take.source == "display" and take.company is None:
            if take.place is None or not 1 <= take.place <= len(self.display):
                raise IllegalAction(f"the face-up display has places 1-{len(self.display)}", legal)
            company = self.display[take.place - 1]
            if company is None:
                raise IllegalAction(f"face-up place {take.place} is empty", legal)
            take = Take("display", company)
        if take.source == "up" and self.options["up_only_by_swap"]:
            raise IllegalAction(
                "with the option up_only_by_swap, UP shares come only by the swap", legal
            )
        if take.source == "up" and self.up_pile <= 0:
            raise IllegalAction("the UP pile is empty", legal)
        if take.source == "stack" and not self.stack:
            raise IllegalAction("the share stack is empty", legal)
        if take.source == "display" and take.company not in self.display:
            shown = ", ".join(c for c in self.display if c) or "nothing"
            raise IllegalAction(f"no {take.company} share is face up (the display shows {shown})", legal)
        if take.source == "none" and options != [Take("none")]:
            raise IllegalAction("a share must be drawn while one can be", legal)
        return Take(take.source, take.company)

    # ================================================================= push
    def push(self, player: str, action: Action) -> list[str]:
        """Apply ``action`` by ``player`` (after ``resolve``) and return the public
        event lines it caused (dividends included).

        Raises IllegalAction, leaving the game unchanged, when the action is illegal.
        """
        action = self.resolve(player, action)
        start = len(self.log)
        if isinstance(action, Start):
            self.initial_choice[player] = action.share
            self.log.append(f"{player} has chosen an initial investment.")
            if len(self.initial_choice) == len(self.players):
                self._reveal()
        else:
            self.turn += 1
            if isinstance(action, Build):
                self._apply_build(player, action)
            elif isinstance(action, Invest):
                self._apply_invest(player, action)
            else:
                self._discard(player, action.discard)
                self.log.append(f"{player} can neither build nor invest and passes.")
            self._pay_pending()
            if self.phase == "play" and self._stalled():
                self._finish_stalled()
            if self.phase == "play":
                self.current = (self.current + 1) % len(self.players)
                self._draw_track(self.players[self.current])
        self.history.append((player, action))
        return self.log[start:]

    def _reveal(self) -> None:
        for p in self.players:
            share = self.initial_choice[p]
            self.share_hands[p].remove(share)
            self.invested[p][share] = self.invested[p].get(share, 0) + 1
        shown = ", ".join(f"{p} {self.initial_choice[p]}" for p in self.players)
        self.log.append(f"Initial investments revealed: {shown}.")
        self.phase = "play"
        self._build_stack()
        self._pay_pending()  # a dividend can only come up in a four-of-a-kind refill
        if self.phase == "play":
            self._draw_track(self.players[self.current])

    def _draw_track(self, player: str) -> None:
        """Draw the track card that starts a turn (PBEM decision: the moderator
        draws it); reshuffle the discards when the deck is empty (rules: Setup 2)."""
        if not self.track_deck and self.track_discards:
            self.reshuffles += 1
            self.track_deck = self.track_discards
            self.track_discards = []
            _rng(self.seed, "reshuffle", self.reshuffles).shuffle(self.track_deck)
            self.log.append(
                f"The track deck was empty: the {len(self.track_deck)} discards were shuffled into a new deck."
            )
        if self.track_deck:
            self.track_hands[player].append(self.track_deck.pop(0))
        else:
            self.log.append(f"No track card is left for {player} to draw.")

    def _discard(self, player: str, card: str | None) -> None:
        if card is not None:
            self.track_hands[player].remove(card)
            self.track_discards.insert(0, card)

    def _draw_stack(self) -> str | None:
        """Top share of the stack; dividend cards met on the way are laid open and
        counted, and the next card is drawn in their place (rules: Dividends)."""
        while self.stack:
            card = self.stack.pop(0)
            if card == DIVIDEND:
                self.dividends_pending += 1
                self.log.append(
                    f"A dividend card is drawn: dividend {self.dividends_paid + self.dividends_pending} is announced."
                )
                continue
            return card
        return None

    def _four_of_a_kind(self) -> None:
        """Remove four face-up shares of one company and turn up four more, as often
        as it happens (rules: Four of a kind)."""
        while len(self.display) == 4 and None not in self.display and len(set(self.display)) == 1:
            company = self.display[0]
            self.removed.extend(self.display)  # type: ignore[arg-type]
            self.log.append(f"Four {company} shares face up: removed from the game and replaced.")
            self.display = [self._draw_stack() for _ in range(4)]

    def _apply_build(self, player: str, a: Build) -> None:
        self.track_hands[player].remove(a.card)  # type: ignore[arg-type]
        self.track_discards.insert(0, a.card)  # type: ignore[arg-type]
        space = a.space or a.card
        sec = self.board.sections[a.section]
        idx = next(
            i for i, (t, occ) in enumerate(zip(sec.spaces, self.placed[a.section]))
            if t == space and occ is None
        )
        self.placed[a.section][idx] = a.company
        self.box[a.company] -= 1
        card = f"joker as {space}" if a.card == JOKER else a.card
        text = f"{player} built {a.company} on {a.section} ({card} track)"
        take = a.take
        assert take is not None
        got: str | None = None
        if take.source == "display":
            i = self.display.index(take.company)
            got = take.company
            self.display[i] = self._draw_stack()
            refill = self.display[i] or "nothing (the stack is empty)"
            text += f", took the face-up {got} share (replaced by {refill})"
            self._four_of_a_kind()
        elif take.source == "stack":
            got = self._draw_stack()
            text += ", took the top share of the stack" if got else ", found the stack empty"
        elif take.source == "up":
            got = UP
            self.up_pile -= 1
            text += ", took a UP share"
        if got is not None:
            self.share_hands[player].append(got)
        if a.swap is not None:
            if a.swap in self.share_hands[player] and self.up_pile > 0:
                self.share_hands[player].remove(a.swap)
                self.returned[player].append(a.swap)
                self.share_hands[player].append(UP)
                self.up_pile -= 1
                text += ", returned a share to the box and took a UP share"
            else:
                text += f" (the swap of {a.swap} was not possible: not in hand after the draw)"
        self.share_hands[player].sort()
        self.log.append(text + ".")

    def _apply_invest(self, player: str, a: Invest) -> None:
        for s in a.shares:
            self.share_hands[player].remove(s)
            self.invested[player][s] = self.invested[player].get(s, 0) + 1
        self._discard(player, a.discard)
        counts = Counter(a.shares)
        what = " and ".join(f"{n} {c}" for c, n in sorted(counts.items()))
        self.log.append(f"{player} invested {what}.")

    # ================================================================= dividends
    def _pay_pending(self) -> None:
        while self.dividends_pending and self.phase != "over":
            self.dividends_pending -= 1
            self.dividends_paid += 1
            self._pay_dividend(self.dividends_paid)
            if self.dividends_paid >= self.final_dividend:
                self.phase = "over"
                self.dividends_pending = 0
                self.log.append("The game is over. " + self.standings_text())

    def _stalled(self) -> bool:
        """True when the game can never change again: no company can place a train on
        any space whatever the card, and no player holds a share to invest."""
        if any(self.share_hands[p] for p in self.players):
            return False
        return not any(self.placements(c) for c in COMPANIES)

    def _finish_stalled(self) -> None:
        """PBEM decision (stalled game): when nobody can ever build or invest again,
        the remaining dividends are paid at once, in order, and the game ends."""
        self.log.append(
            "No company can build any more and nobody holds a share: the remaining "
            "dividends are paid now."
        )
        self.dividends_pending = self.final_dividend - self.dividends_paid
        self._pay_pending()

    def investors(self) -> dict[str, dict[str, int]]:
        """Invested shares per player (``{player: {company: n}}``), with the imaginary
        third player of a two-player game at its final dividend."""
        inv = {p: dict(self.invested[p]) for p in self.players}
        return inv

    def _imaginary_holdings(self) -> dict[str, int]:
        """Shares of the imaginary third player (rules: Two players): the display,
        the stack and the UP pile."""
        held = Counter(c for c in self.display if c)
        held.update(c for c in self.stack if c != DIVIDEND)
        if self.up_pile:
            held[UP] += self.up_pile
        return dict(held)

    def _pay_dividend(self, number: int) -> None:
        """Pay the ``number``-th dividend (rules: Company dividends; Union Pacific
        dividends; Two players)."""
        holdings = self.investors()
        if len(self.players) == 2 and number == self.final_dividend:
            holdings[IMAGINARY] = self._imaginary_holdings()
            self.money.setdefault(IMAGINARY, 0)
        paid: dict[str, dict[str, int]] = {}
        for company in COMPANIES:
            value = self.value(company)
            pay = company_payout({p: h.get(company, 0) for p, h in holdings.items()}, value)
            if pay:
                paid[company] = pay
        pay_up = up_payout({p: h.get(UP, 0) for p, h in holdings.items()}, number)
        if pay_up:
            paid[UP] = pay_up
        totals: Counter[str] = Counter()
        for pay in paid.values():
            totals.update(pay)
        for p, amount in totals.items():
            self.money[p] = self.money.get(p, 0) + amount
        self.payouts.append({
            "dividend": number,
            "values": {c: self.value(c) for c in COMPANIES},
            "holdings": {p: dict(sorted(h.items())) for p, h in holdings.items()},
            "paid": paid,
            "totals": dict(sorted(totals.items())),
        })
        parts = ", ".join(f"{p} +{totals.get(p, 0)}" for p in holdings)
        self.log.append(f"Dividend {number} paid: {parts} (millions).")

    def standings(self) -> list[tuple[int, str, int]]:
        """``(place, player, money)`` sorted richest first; equal money shares a place
        (open point: a tie is a shared win).  Includes the imaginary player when it
        took part."""
        ranked = sorted(self.money.items(), key=lambda kv: (-kv[1], kv[0]))
        out, place = [], 0
        for i, (p, m) in enumerate(ranked):
            if i == 0 or m != ranked[i - 1][1]:
                place = i + 1
            out.append((place, p, m))
        return out

    def winners(self) -> list[str]:
        """Players in first place (several on a tie); empty before the end."""
        if self.phase != "over":
            return []
        return [p for place, p, _ in self.standings() if place == 1]

    def standings_text(self) -> str:
        """One-line standings, e.g. ``"1. Ann 42, 2. Bob 40"``."""
        return ", ".join(f"{place}. {p} {m}" for place, p, m in self.standings())

    # ================================================================= views
    def public_view(self) -> dict[str, Any]:
        """What every player may know (rules: What each player may know): board
        occupancy, trains left and values, display, invested shares, hand sizes,
        deck/stack/pile sizes, top discard, removed cards, dividends, money (unless
        hidden_money and the game is not over), whose turn it is, the log."""
        hide_money = self.options["hidden_money"] and self.phase != "over"
        return {
            "phase": self.phase,
            "ruleset": self.ruleset,
            "options": dict(self.options),
            "turn": self.turn,
            "to_move": self.to_move,
            "waiting_for": self.waiting_for(),
            "players": [
                {
                    "name": p,
                    "invested": dict(sorted(self.invested[p].items())),
                    "track_cards": len(self.track_hands[p]),
                    "shares_in_hand": len(self.share_hands[p]),
                    "money": None if hide_money else self.money[p],
                    "chosen": p in self.initial_choice,
                }
                for p in self.players
            ],
            "companies": [
                {
                    "abbr": c.abbr,
                    "name": c.name,
                    "home": self.board.companies[c.abbr].home,
                    "types": sorted(self.board.companies[c.abbr].types),
                    "on_board": self.trains_on_board(c.abbr),
                    "in_box": self.box[c.abbr],
                    "value": self.value(c.abbr),
                    "sections": sorted(s for s in self.placed if c.abbr in self.companies_on(s)),
                }
                for c in COMPANIES.values()
            ],
            "display": list(self.display),
            "stack_size": len(self.stack),
            "track_deck_size": len(self.track_deck),
            "track_discard_top": self.track_discards[0] if self.track_discards else None,
            "up_pile": self.up_pile,
            "removed": list(self.removed),
            "dividends_paid": self.dividends_paid,
            "final_dividend": self.final_dividend,
            "standings": self.standings() if self.phase == "over" else None,
            "log": list(self.log),
        }

    def view(self, player: str) -> dict[str, Any]:
        """``public_view()`` plus ``player``'s own secrets under ``"you"``: their
        track cards, share hand, pending initial choice, shares returned in UP swaps,
        and their money even when hidden_money hides others'."""
        v = self.public_view()
        v["you"] = {
            "name": player,
            "track_cards": sorted(self.track_hands[player]),
            "shares": sorted(self.share_hands[player]),
            "initial_choice": self.initial_choice.get(player) if self.phase == "initial" else None,
            "returned": list(self.returned[player]),
            "money": self.money[player],
            "on_move": player in self.waiting_for(),
        }
        return v

    def to_dict(self) -> dict[str, Any]:
        """The full state as plain data (secrets included) for the game file."""
        return {
            "phase": self.phase,
            "current": self.current,
            "turn": self.turn,
            "placed": {s: list(v) for s, v in self.placed.items() if any(v)},
            "box": dict(self.box),
            "track_deck": list(self.track_deck),
            "track_discards": list(self.track_discards),
            "reshuffles": self.reshuffles,
            "track_hands": {p: list(v) for p, v in self.track_hands.items()},
            "share_hands": {p: list(v) for p, v in self.share_hands.items()},
            "invested": {p: dict(v) for p, v in self.invested.items()},
            "initial_choice": dict(self.initial_choice),
            "display": list(self.display),
            "stack": list(self.stack),
            "up_pile": self.up_pile,
            "removed": list(self.removed),
            "returned": {p: list(v) for p, v in self.returned.items()},
            "dividends_paid": self.dividends_paid,
            "money": dict(self.money),
            "payouts": self.payouts,
        }

    def copy(self) -> "Game":
        """An independent copy (for trying an action without changing this game)."""
        import copy as _copy

        return _copy.deepcopy(self)
