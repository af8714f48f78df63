"""The rules engine: a game of Union Pacific as a pure state machine.

No I/O, no clock; the only randomness comes from generators seeded by the game's
seed (``random.Random(f"{seed}/{purpose}/{n}")``, its shuffles made by ``_Shuffler``:
the same permutations), so a game is a replayable list of actions, like a chess game
is a list of moves.  Typical use::

    game = Game.new(Board.default(), ["Ann", "Bob", "Cy"], seed=7)
    for player in game.waiting_for():
        game.push(player, Start("KCC"))          # initial investments
    game.legal_actions(game.to_move)             # every complete legal action
    game.random_action(game.to_move, rng)        # one of them, uniformly at random
    game.push(game.to_move, parse_turn(["build KCC DEN-KCY black", "take stack"], board))

Money is in millions of dollars.  Rules references ("rules: BUILD, step 2") name
the sections of the game's rules (the rules reference of the project); docs/rules.md
lists every PBEM decision and open point as implemented here.

Speed: the networks of the companies and the spaces each company may build on are
derived caches of the rail network (``Game.network``, ``moderator.rules.network``:
bit sets over the board's sections and cities), updated incrementally when a train
is placed and never saved; ``invalidate()`` drops them after a direct change of
``placed`` or ``box``.  Counting and sampling legal actions (``action_count``,
``random_action``) never materialises the thousands of BUILD x take x swap
combinations; ``legal_actions`` lists them all.  The action ``random_action`` drew
is pushed without being resolved again while the position is unchanged.
"""
from __future__ import annotations

import copy as _copy
import marshal as _marshal
import random
import types
import typing
from bisect import insort
from collections import Counter
from dataclasses import MISSING, dataclass, field, fields
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

from .actions import DRAWN, Action, Build, Invest, Pass, Start, Take
from .board import Board
from .components import (
    COMPANIES,
    DIVIDEND,
    DIVIDEND_CARDS,
    JOKER,
    SHARE_COMPANIES,
    TRACK_CARD_COUNTS,
    TRACK_TYPES,
    UP,
    UP_SHARES,
    CompanyId,
    PlayerName,
    SectionId,
    ShareKind,
    TrackType,
    company_value,
)
from .dividends import company_payout, up_payout
from .errors import IllegalAction, LegalSummary  # noqa: F401 (re-exported)
from .events import (
    Event, Built, BuiltJoker, DeadCard, DividendAnnounced, DividendHidden, DividendPaid, DividendUnused,
    DoubleDividend, DrewNone, FaceUp, FourOfAKind, GameOver, ImaginaryTakes, InitialChosen, InitialRevealed,
    Invested, InvestedDiscarding, NoTrackLeft, Passes, PassesDiscarding, PlaceEmpty, ReplacedBy, Reshuffled,
    SetUp, SeveralDividends, StackEmpty, Stalled, Starts, SwapNotMade, SwappedUnseen, TookFaceUp, TookStack,
    TookUp,
)
from .history import History
from .legal import (_DISPLAY_DRAWS, _DISPLAY_TAKE, _NONE, _STACK, _UP, LegalActions, _display_draws,
                    _random_turn, starts as _starts, without as _without)
from .network import Network
from .options import IMAGINARY, OPTIONS, RULESETS, check_setup, ruleset as _ruleset  # noqa: F401 (re-exported)

_TRAINS = {abbr: c.trains for abbr, c in COMPANIES.items()}
"""Each company's trains in all (``Company.trains``)."""
_WORTH = {abbr: {box: company_value(n - box) for box in range(n + 1)} for abbr, n in _TRAINS.items()}
"""A company's dividend value after a BUILD by company and trains left in the box
(a lookup in the hot path)."""
_COMPANY_IDS = tuple(COMPANIES)
_TRAINS_AND_STATION = {abbr: 1 + c.trains for abbr, c in COMPANIES.items()}
"""Each company's dividend value with every train on the board: the value is this
minus the trains in the box (``company_value``)."""


class _Shuffler:
    """``random.Random(f"{seed}/{purpose}/{n}").shuffle`` of one list or several in
    turn, the same permutations from the same words of the generator, made faster.

    ``random.shuffle`` draws ``j = randbelow(i + 1)`` for ``i`` from ``len - 1`` down
    to 1 and swaps ``x[i]`` and ``x[j]``; ``randbelow(m)`` takes ``getrandbits(k)``
    with ``k = m.bit_length()`` (the top ``k`` bits of one 32-bit word of the
    Mersenne Twister) until it is below ``m``.  Here the words are drawn in bulk
    (``getrandbits(32 * w)``: the first word in the low bits) and only their top
    bytes kept, read in turn by one iterator across the runs of ``i`` drawing the
    same ``k``.  Lists of at most 255 items (the top byte holds ``k`` <= 8 bits);
    ValueError for longer ones."""

    __slots__ = ("_bits", "_tops")

    def __init__(self, seed: int, purpose: str, n: int = 0):
        self._bits = random.Random(f"{seed}/{purpose}/{n}").getrandbits
        self._tops: Any = iter(b"")  # the top bytes of the words drawn and not used yet

    def shuffle(self, x: list[Any]) -> None:
        """Shuffle ``x`` in place, as ``random.Random.shuffle`` does."""
        i = len(x) - 1
        if i >= 255:
            raise ValueError(f"at most 255 items are shuffled here, not {len(x)}")
        tops = self._tops
        while i > 0:
            k = (i + 1).bit_length()
            s = 8 - k
            low = (1 << (k - 1)) - 1 or 1  # the last ``i`` drawing ``k`` bits
            for t in tops:
                j = t >> s
                if j <= i:  # else ``randbelow`` draws again
                    x[i], x[j] = x[j], x[i]
                    i -= 1
                    if i < low:
                        break
            else:  # every word drawn is used: draw more
                m = i + (i >> 1) + 8
                tops = self._tops = iter(self._bits(32 * m).to_bytes(4 * m, "little")[3::4])


_TRACK_DECK = tuple(kind for kind, count in TRACK_CARD_COUNTS.items() for _ in range(count))
"""The 40 track cards before the shuffle (rules: Components)."""
_SHARE_DECK = tuple(c.abbr for c in COMPANIES.values() for _ in range(c.shares))
"""The 98 company shares before the shuffle (rules: Components)."""
_REPLACED_BY = {c: ReplacedBy((c,)) for c in COMPANIES}
"""The event of a face-up place filled with each share: made once (events are
immutable values; the common events of a turn cost a lookup, not a new object)."""
_ANNOUNCED = {n: DividendAnnounced((n,)) for n in range(1, DIVIDEND_CARDS + 1)}
"""The announcement of each dividend, made once (as ``_REPLACED_BY``)."""
_TOOK_STACK: dict[str, Event] = {}
_SWAPPED: dict[str, Event] = {}
_CHOSEN: dict[str, Event] = {}
_TOOK_FACE_UP: dict[tuple[str, str], Event] = {}
"""The events of one player (and share) the engine emits most, by player (and
share), made once and shared (see ``_REPLACED_BY``); each emptied when it holds
``_SHARED_MAX`` of them (a process that saw that many player names)."""
_SHARED_MAX = 4096


def _shared(cache: dict[Any, Event], key: Any, cls: type[Event], values: tuple[Any, ...]) -> Event:
    """The shared event ``cls(values)``, kept in ``cache`` under ``key`` (see
    ``_TOOK_STACK``), made on first use."""
    if len(cache) >= _SHARED_MAX:
        cache.clear()
    ev = cache[key] = cls(values)
    return ev


_TAKES: dict[tuple[str, str | None], Take] = {
    **{("display", c): _DISPLAY_TAKE[c] for c in SHARE_COMPANIES},
    ("stack", None): _STACK,
    ("up", None): _UP,
    ("none", None): _NONE,
}
"""Shared immutable draws (building a frozen dataclass is slow in the hot path):
the random draw's own (``legal``), by ``(source, company)``."""


def turn_order(players: list[PlayerName], seed: int) -> list[PlayerName]:
    """A random turn order drawn from the game's seed (rules: Setup 8, PBEM
    decision: the table rule "youngest starts" cannot be checked by mail).  Pass the
    result to ``Game.new`` when the players did not agree on an order."""
    order = list(players)
    _Shuffler(seed, "order").shuffle(order)
    return order


def _same(value: Any) -> Any:
    """Copy of an immutable value (or of the board, which is never changed): itself."""
    return value


def _dict_of_lists(d: dict[str, list[Any]]) -> dict[str, list[Any]]:
    return {k: list(v) for k, v in d.items()}


def _dict_of_dicts(d: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {k: dict(v) for k, v in d.items()}


def _load_placed(saved: dict[SectionId, list[CompanyId | None]], board: Board) -> dict[SectionId, list[CompanyId | None]]:
    """``placed`` rebuilt from its saved form (only the rows holding a train): a row
    of empty spaces for every other section of ``board``, in board order.  Raises
    ValueError for an unknown section or a row of the wrong length."""
    unknown = sorted(set(saved) - set(board.sections))
    if unknown:
        raise ValueError(f"state 'placed': no section {unknown[0]!r} on the board")
    out: dict[SectionId, list[CompanyId | None]] = {}
    for sid, sec in board.sections.items():
        row = saved.get(sid)
        if row is None:
            out[sid] = [None] * len(sec.spaces)
        elif len(row) != len(sec.spaces):
            raise ValueError(
                f"state 'placed': section {sid} has {len(sec.spaces)} neutral spaces, not {len(row)}")
        else:
            out[sid] = list(row)
    return out


def _plain_copy(value: Any) -> Any:
    """A deep copy of plain data (dicts, lists, text, numbers), as
    ``copy.deepcopy`` makes it, in a fraction of its time (a ``marshal`` round
    trip, which builds exactly these types again); any other object (a
    ``Counter``, an action) is copied by ``copy.deepcopy``."""
    try:
        return _marshal.loads(_marshal.dumps(value))
    except ValueError:  # not plain data: part by part
        return _plain_parts(value)


def _plain_parts(value: Any) -> Any:
    t = type(value)
    if t is dict:
        return {k: _plain_parts(v) for k, v in value.items()}
    if t is list:
        return [_plain_parts(v) for v in value]
    if t is str or t is int or value is None or t is bool or t is float:
        return value
    return _copy.deepcopy(value)


_FITS: dict[Any, Any] = {}


def _classes(tp: Any) -> tuple[type, ...] | None:
    """The classes ``cs`` such that ``_fits(tp)(v)`` is ``isinstance(v, cs)``: for
    a plain class other than ``int`` (a bool is not an int here), ``None`` and
    unions of them (``str | None``); None for any other hint."""
    if tp is None or tp is type(None):
        return (type(None),)
    if isinstance(tp, type) and tp is not int and not typing.get_args(tp):
        return (tp,)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        out: tuple[type, ...] = ()
        for a in typing.get_args(tp):
            cs = _classes(a)
            if cs is None:
                return None
            out += cs
        return out
    return None


class _Chained:
    """The items of every list in ``rows``, one after the other, as often as
    iterated (``itertools.chain`` goes once)."""

    __slots__ = ("rows",)

    def __init__(self, rows: Any):
        self.rows = rows

    def __iter__(self) -> Any:
        return chain.from_iterable(self.rows)


def _instances(items: Any, classes: tuple[type, ...]) -> bool:
    """Whether every item of ``items`` (iterable more than once) is an instance of
    ``classes``, tested in C at the cost of a few ns an item: text by one
    ``str.join`` (which takes exactly the instances of str), any other classes by
    the set of the items' types (a handful: each tested once); when that fails,
    item by item with ``isinstance`` (the exact answer).  Long lists grow with the
    game (the log, the trains on the board), so their check must stay cheap."""
    try:
        if classes == (str,):
            "".join(items)
            return True
        if all(issubclass(t, classes) for t in set(map(type, items))):
            return True
    except TypeError:
        pass
    return all(map(isinstance, items, repeat(classes)))


def _fits(tp: Any) -> Any:
    """A fast test ``value -> bool`` of the shape ``_check_shape`` checks (built
    once per type hint)."""
    test = _FITS.get(tp)
    if test is not None:
        return test
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        def test(v: Any) -> bool:
            return True
    elif origin in (typing.Union, types.UnionType) and all(
            isinstance(a, type) and a not in (int, bool, type(None)) and not typing.get_args(a) for a in args):
        classes = tuple(args)  # a union of plain classes (an Action): one isinstance

        def test(v: Any) -> bool:
            return isinstance(v, classes)
    elif origin in (typing.Union, types.UnionType):
        alts = [_fits(a) for a in args]

        def test(v: Any) -> bool:
            return any(t(v) for t in alts)
    elif origin is list and _classes(args[0]) is not None:
        item_classes = _classes(args[0])  # the items tested in C (long lists: the log)

        def test(v: Any) -> bool:
            return isinstance(v, list) and _instances(v, item_classes)
    elif origin is list:
        item = _fits(args[0])

        def test(v: Any) -> bool:
            return isinstance(v, list) and all(map(item, v))
    elif origin is tuple:
        parts = [_fits(a) for a in args]

        def test(v: Any) -> bool:
            return isinstance(v, tuple) and len(v) == len(parts) and all(t(x) for t, x in zip(parts, v))
    elif origin is dict and args[1] is Any and args[0] is str:
        def test(v: Any) -> bool:  # the common plain record: only the keys to test
            return isinstance(v, dict) and all(type(k) is str for k in v)
    elif origin is dict and _classes(args[0]) is not None and typing.get_origin(args[1]) is list and \
            _classes(typing.get_args(args[1])[0]) is not None:
        # rows of plain items (``placed``: a row per section): every row's items at once, in C
        key_classes, item_classes = _classes(args[0]), _classes(typing.get_args(args[1])[0])

        def test(v: Any) -> bool:
            if not isinstance(v, dict) or not all(map(isinstance, v, repeat(key_classes))):
                return False
            rows = v.values()
            return all(map(isinstance, rows, repeat(list))) and _instances(_Chained(rows), item_classes)
    elif origin is dict and _classes(args[0]) is not None:
        key_classes, val = _classes(args[0]), _fits(args[1])

        def test(v: Any) -> bool:
            return isinstance(v, dict) and all(map(isinstance, v, repeat(key_classes))) and all(
                map(val, v.values()))
    elif origin is dict:
        key, val = _fits(args[0]), _fits(args[1])

        def test(v: Any) -> bool:
            return isinstance(v, dict) and all(key(k) and val(x) for k, x in v.items())
    elif tp is type(None) or tp is None:
        def test(v: Any) -> bool:
            return v is None
    elif tp is int:
        def test(v: Any) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)
    else:
        def test(v: Any) -> bool:
            return isinstance(v, tp)
    _FITS[tp] = test
    return test


def _check_shape(value: Any, tp: Any, where: str) -> None:
    """Raise ValueError unless ``value`` has the shape of the type hint ``tp``
    (``int``, ``str``, ``bool``, ``None``, ``list[X]``, ``tuple[X, Y]``,
    ``dict[K, V]``, unions, classes, ``Any``); ``where`` names it in the message
    (the first part that does not fit).  A bool is not an int here."""
    if _fits(tp)(value):
        return
    _shape_error(value, tp, where)
    raise ValueError(f"{where}: {value!r} is not a {_type_name(tp)}")  # pragma: no cover


def _shape_error(value: Any, tp: Any, where: str) -> None:
    if tp is Any:
        return
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        for alt in args:
            try:
                _check_shape(value, alt, where)
                return
            except ValueError:
                pass
        raise ValueError(f"{where}: {value!r} is not a {_type_name(tp)}")
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            _check_shape(item, args[0], f"{where}[{i}]")
        return
    if origin is tuple:
        if not isinstance(value, tuple) or len(value) != len(args):
            raise ValueError(f"{where}: expected a pair, got {value!r}")
        for i, (item, t) in enumerate(zip(value, args)):
            _check_shape(item, t, f"{where}[{i}]")
        return
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected a mapping, got {type(value).__name__}")
        for k, v in value.items():
            _check_shape(k, args[0], f"{where} key")
            _check_shape(v, args[1], f"{where}[{k!r}]")
        return
    if tp is type(None) or tp is None:
        ok = value is None
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, tp)
    if not ok:
        raise ValueError(f"{where}: {value!r} is not a {_type_name(tp)}")


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _state(default: Any = MISSING, *, factory: Any = MISSING, copy: Any = _same,
           save: bool | Any = True, load: Any = None, adopt: Any = None, visible: str = "public") -> Any:
    """A field of ``Game``, declared once with what the generic code needs:

    - ``copy``: how ``Game.copy`` copies the value (``_same`` for immutable values
      and the board, ``list``, ``dict``, ``_dict_of_lists``, ``_dict_of_dicts``,
      ``copy.deepcopy``);
    - ``save``: whether ``Game.to_dict`` (the game file's ``state``) holds it, in
      declaration order: True (saved as ``copy`` copies it), False, or a function
      giving the saved form;
    - ``load``: for a saved field whose saved form is not the value itself, the
      function ``(saved, board) -> value`` that ``Game.from_dict`` uses to rebuild
      it (the inverse of ``save``); by default the saved form copied with ``copy``;
    - ``adopt``: how ``Game.from_dict(owned=True)`` takes the saved form the
      caller hands over instead (by default as ``load``): ``list`` for a list of
      records the engine never changes once added (``payouts``), so that only
      the list is new;
    - ``visible``: who may see it (rules: What each player may know): ``"public"``
      (everyone; ``public_view`` shows it or what follows from it), ``"own"``
      (each player only their own entry: ``view(player)["you"]``) or ``"hidden"``
      (nobody: deck and stack order, the history with its secret swaps; sizes
      only are public).  Documentation for the views, checked by a test."""
    load = load or (lambda value, board: copy(value))
    metadata = {"copy": copy, "save": (copy if save is True else save) or None,
                "load": load, "adopt": (lambda value, board: adopt(value)) if adopt else load,
                "visible": visible}
    if factory is not MISSING:
        return field(default_factory=factory, metadata=metadata)
    if default is not MISSING:
        return field(default=default, metadata=metadata)
    return field(metadata=metadata)


def _copy_history(history: Any) -> Any:
    """A copy of a game's history: a list, or a ``History`` (kept unread)."""
    return history.copy() if isinstance(history, History) else list(history)


@dataclass
class Game:
    """The whole state of one game.

    Public attributes are plain data (lists, dicts, ints, strings) so that
    ``to_dict`` is a direct copy.  Card lists are ordered top first.  ``history`` is
    the list of ``(player, action)`` pushed so far; ``events`` the public events
    (``moderator.rules.events`` values, in order).
    """

    board: Board = _state(copy=_same, save=False)
    players: list[PlayerName] = _state(copy=list, save=False)
    seed: int = _state(copy=_same, save=False)
    ruleset: str = _state("first-edition", copy=_same, save=False)
    options: dict[str, bool] = _state(factory=lambda: dict(OPTIONS), copy=dict, save=False)
    phase: str = _state("initial")  # "initial" | "play" | "over"
    current: int = _state(0)  # index into players of the player on move
    turn: int = _state(0)  # number of turns taken in the play phase
    # section -> neutral space occupants (the game file keeps the rows with a train)
    placed: dict[SectionId, list[CompanyId | None]] = _state(
        factory=dict, copy=_dict_of_lists, save=lambda v: {s: list(r) for s, r in v.items() if any(r)},
        load=lambda v, board: _load_placed(v, board))
    box: dict[CompanyId, int] = _state(factory=dict, copy=dict)  # company -> trains left in the box
    track_deck: list[str] = _state(factory=list, copy=list, visible="hidden")
    track_discards: list[str] = _state(factory=list, copy=list)
    track_removed: list[str] = _state(factory=list, copy=list)  # dead cards shown (dead_track_redraw)
    reshuffles: int = _state(0)
    track_hands: dict[PlayerName, list[str]] = _state(factory=dict, copy=_dict_of_lists, visible="own")
    share_hands: dict[PlayerName, list[ShareKind]] = _state(factory=dict, copy=_dict_of_lists, visible="own")
    invested: dict[PlayerName, dict[ShareKind, int]] = _state(factory=dict, copy=_dict_of_dicts)
    initial_choice: dict[PlayerName, ShareKind] = _state(factory=dict, copy=dict, visible="own")  # until all chose
    display: list[ShareKind | None] = _state(factory=list, copy=list)
    stack: list[str] = _state(factory=list, copy=list, visible="hidden")
    up_pile: int = _state(0)
    removed: list[ShareKind] = _state(factory=list, copy=list)  # four-of-a-kind cards
    returned: dict[PlayerName, list[ShareKind]] = _state(factory=dict, copy=_dict_of_lists, visible="own")  # UP swaps
    dividends_drawn: int = _state(0)  # dividend cards drawn from the stack so far
    dividends_paid: int = _state(0)
    dividends_pending: int = _state(0, save=False)  # announced, not yet paid (only inside an action)
    money: dict[str, int] = _state(factory=dict, copy=dict)  # millions; option hidden_money hides it
    # one record per dividend paid, never changed once added: saved and adopted
    # as a new list of the same records (``to_dict``, ``from_dict(owned=True)``)
    payouts: list[dict[str, Any]] = _state(factory=list, copy=_plain_copy, save=list, adopt=list)
    events: list[Event] = _state(factory=list, copy=list, save=False)
    # a list, or a ``History`` (a restored game: the recorded entries read on first use)
    history: list[tuple[PlayerName, Action]] = _state(factory=list, copy=_copy_history, save=False,
                                                      visible="hidden")
    _network: Network | None = field(default=None, init=False, repr=False, compare=False)
    # ``(player, action, len(events))`` of the action ``random_action`` drew last: it is
    # complete and legal while the position is the same, so ``push`` need not check it
    _drawn: tuple[PlayerName, Action, int] | None = field(default=None, init=False, repr=False, compare=False)

    # ================================================================= setup
    @classmethod
    def new(
        cls,
        board: Board,
        players: list[PlayerName],
        seed: int,
        ruleset: str = "first-edition",
        options: dict[str, bool] | None = None,
    ) -> "Game":
        """Set up a new game (rules: Setup, steps 1-4; the display and stack are laid
        out when the initial investments are revealed, steps 6-7).

        ``players`` in turn order (PBEM decision: the order given; ``turn_order``
        draws one from the seed).  Raises ValueError for 1 or 7+ players, duplicate
        names, an unknown ruleset or option."""
        opts = check_setup(players, ruleset, options)
        # 1. starting trains (on the coloured starting spaces, which the board lists
        #    per section apart from the neutral spaces)
        rows, sids, empty, box = _empty_board(board)
        placed = rows.copy()
        placed.update(zip(sids, map(list.copy, empty)))
        box = box.copy()
        # 2. track cards
        deck = list(_TRACK_DECK)
        _Shuffler(seed, "track").shuffle(deck)
        n = len(players)
        track_hands = {p: sorted(deck[3 * i : 3 * i + 3]) for i, p in enumerate(players)}
        # 4. company shares
        shares = list(_SHARE_DECK)
        _Shuffler(seed, "shares").shuffle(shares)
        k = _ruleset(ruleset).shares_dealt
        share_hands = {}
        for i, p in enumerate(players):
            hand = shares[k * i : k * i + k]
            hand.append(UP)
            hand.sort()
            share_hands[p] = hand
        g = cls(
            board=board, players=list(players), seed=int(seed), ruleset=ruleset, options=opts,
            placed=placed, box=box, track_deck=deck[3 * n :], track_hands=track_hands,
            share_hands=share_hands, invested={p: {} for p in players}, money=dict.fromkeys(players, 0),
            returned={p: [] for p in players},
            stack=shares[k * n :],  # shuffled remainder; display and stack are laid out at reveal
            up_pile=UP_SHARES - n,  # 3. one UP share each
            events=[SetUp((tuple(players), ruleset))],
        )
        g._network = Network.new_game(board, placed, box)
        return g

    def _lay_out_shares(self) -> None:
        """Turn up the display (four of a kind replaced from the remaining shares,
        before any dividend card is among them), then build the share stack with the
        dividend cards (rules: Setup, steps 6-7)."""
        pile = self.stack
        display, pile = pile[:4], pile[4:]
        while len(display) == 4 and len(set(display)) == 1:
            self.removed.extend(display)
            self.events.append(FourOfAKind((display[0],)))
            display, pile = pile[:4], pile[4:]
        self.display = list(display) + [None] * (4 - len(display))
        self.stack = self._stack_with_dividends(pile)
        self.events.append(FaceUp((tuple(self.display),)))

    def _stack_with_dividends(self, rest: list[str]) -> list[str]:
        """The share stack, top first, from the shares ``rest`` left after the
        display (rules: Setup, step 7; option spread_dividends)."""
        shuffle = _Shuffler(self.seed, "stack").shuffle

        def with_dividends(pile: list[str], k: int) -> list[str]:
            pile = pile + [DIVIDEND] * k
            shuffle(pile)
            return pile

        if self.options["spread_dividends"]:
            sixes = [rest[i * 6 : (i + 1) * 6] for i in range(4)]
            larger = _split(rest[24:], 4)
            stack: list[str] = []
            if self.ruleset == "first-edition":
                # 000: from the bottom dividend pile, 6-pile, dividend pile, ...; so
                # from the top: 6, rest/4+1, 6, rest/4+1, ... (a 6-pile on top)
                for six, big in zip(sixes, larger):
                    stack += six + with_dividends(big, 1)
            else:
                # 002: each larger pile on a 6-pile holding a dividend card; from the
                # top: rest/4, 6+1, rest/4, 6+1, ... (a larger pile on top)
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
        assert stack.count(DIVIDEND) == DIVIDEND_CARDS
        return stack

    # ================================================================= the network
    @property
    def network(self) -> Network:
        """The rail network over this game's ``placed`` and ``box`` (rules: BUILD,
        step 2): connectivity, placements, free spaces.  Made on first use and
        again when ``placed`` or ``box`` was replaced by another dict."""
        n = self._network
        if n is None or n.placed is not self.placed or n.box is not self.box:
            n = self._network = Network(self.board, self.placed, self.box)
        return n

    def invalidate(self) -> None:
        """Drop the network's derived caches (networks, placements, free spaces).
        Needed only after changing ``placed``, ``board`` or ``box`` directly, as
        tests do; it also forgets the action ``random_action`` drew last (checked
        again by ``push``)."""
        self._network = None
        self._drawn = None

    def placements(self, company: CompanyId) -> list[tuple[SectionId, TrackType]]:
        """Every ``(section id, space track type)`` where a train of ``company`` may
        be placed now, whatever track card is held (rules: BUILD, step 2), sorted:
        ``Network.placements``."""
        return self.network.placements(company)

    # ================================================================= queries
    @property
    def to_move(self) -> PlayerName | None:
        """The player whose turn it is in the play phase, else None."""
        return self.players[self.current] if self.phase == "play" else None

    def waiting_for(self) -> list[PlayerName]:
        """Players from whom an order is awaited: those who have not yet made their
        initial investment, or the player on move; empty when the game is over."""
        phase = self.phase
        if phase == "play":
            return [self.players[self.current]]
        if phase == "initial":
            return [p for p in self.players if p not in self.initial_choice]
        return []

    @property
    def final_dividend(self) -> int:
        """The dividend after which the game ends: 4, or 3 with two players
        (rules: Game end; Two players)."""
        return 3 if len(self.players) == 2 else 4

    def trains_on_board(self, company: CompanyId) -> int:
        """Trains of ``company`` on the board, starting spaces included (rules:
        Company dividends).  KeyError for an unknown company."""
        return COMPANIES[company].trains - self.box[company]

    def value(self, company: CompanyId) -> int:
        """Dividend value of ``company`` in millions of dollars: 1 for the home
        station + 1 per train on the board (rules: Company dividends)."""
        return company_value(self.trains_on_board(company))

    def share_options(self, player: PlayerName | None = None) -> list[Take]:
        """The draws possible after a BUILD now (rules: BUILD, step 3; option
        up_only_by_swap).  ``[Take("none")]`` when no share can be drawn."""
        shown = frozenset(self.display)
        out = list((_DISPLAY_DRAWS.get(shown) or _display_draws(shown))[0])  # kept per set of kinds shown
        if self.stack:
            out.append(_STACK)
        if self.up_pile > 0 and not self.options["up_only_by_swap"]:
            out.append(_UP)
        return out or [_NONE]

    def _can_build(self, cards: list[str]) -> bool:
        kinds = set(cards)
        joker = JOKER in kinds
        if not kinds:
            return False
        for t, n in self.network.placement_totals().items():
            if n and (joker or t in kinds):
                return True
        return False

    def has_legal_build(self, player: PlayerName) -> bool:
        """Whether ``player`` holds a track card that some company can use now."""
        return self._can_build(self.track_hands[player])

    def dead_cards(self, player: PlayerName) -> list[TrackType]:
        """Kinds of track card ``player`` may show and redraw now (option
        dead_track_redraw: every space of that type is full; never a joker)."""
        if not self.options["dead_track_redraw"]:
            return []
        free = self.network.free_spaces
        return sorted({k for k in self.track_hands[player] if k in TRACK_TYPES and free(k) == 0})

    # ================================================================= legal actions
    def legal_actions(self, player: PlayerName) -> LegalActions:
        """Every complete legal action of ``player`` now, as a live view
        (``moderator.rules.legal.LegalActions``): iterate it, ``in``, ``len``,
        ``random(rng)``; in a stable order.  Empty for a player not on move."""
        return LegalActions(self, player)

    def action_count(self, player: PlayerName) -> int:
        """``len(legal_actions(player))`` without listing them."""
        return LegalActions(self, player).count()

    def random_action(self, player: PlayerName, rng: random.Random | None = None) -> Action | None:
        """A uniformly random member of ``legal_actions(player)`` drawn with ``rng``
        (``random.Random``; the module generator if None), or None when ``player``
        has nothing to do now.  Cheap: the combinations are counted, not listed.

        The action drawn is legal in this position by construction: pushed next,
        unchanged and by ``player``, it is applied without being resolved again
        (changing the game's fields directly in between needs ``invalidate()``)."""
        if self.phase == "play" and player == self.players[self.current] and not self.options["dead_track_redraw"]:
            action = _random_turn(self, player, rng or random)  # ``LegalActions.random``, the common case
        else:
            action = LegalActions(self, player).random(rng)
        self._drawn = (player, action, len(self.events)) if action is not None else None
        return action

    def legal_summary(self, player: PlayerName, cards: list[TrackType] | None = None) -> LegalSummary:
        """The short structured summary of what ``player`` may order now
        (``moderator.rules.legal.LegalSummary``); ``cards`` replaces the track cards
        held (the hand left after a redraw)."""
        return LegalSummary.of(self, player, cards)

    # ================================================================= resolve
    def resolve(self, player: PlayerName, action: Action) -> Action:
        """Fill in what a forgiving order left out, when only one choice fits, and
        check legality.  Returns the complete action to push.

        Raises IllegalAction (``code`` + values, worded by
        ``templates/words/illegal.txt``; ``legal``: what is legal instead) when the
        action is not legal for ``player`` now: not their turn (``not_your_turn``),
        game over (``game_over``), card not in hand (``no_track_card``), a placement
        condition failing (``cannot_build``), and so on (rules: A turn; BUILD, steps
        1-4; INVEST; No legal action; Setup, step 5)."""
        if self.phase == "over":
            raise IllegalAction("game_over")
        if player not in self.players:
            raise IllegalAction("not_a_player", player=player)
        if self.phase == "initial":
            if (
                isinstance(action, Invest) and len(action.shares) == 1
                and action.discard is None and action.redraw is None
            ):
                action = Start(action.shares[0])
            if not isinstance(action, Start):
                raise IllegalAction("initial_investment_awaited", [str(a) for a in _starts(self, player)])
            return self._check_start(player, action)
        if isinstance(action, Start):
            raise IllegalAction("initial_investments_made")
        if player != self.to_move:
            raise IllegalAction("not_your_turn", to_move=self.to_move)
        if not isinstance(action, (Build, Invest, Pass)):
            raise IllegalAction("unknown_action", action=repr(action))
        cards = self._check_redraw(player, action.redraw)
        if isinstance(action, Build):
            return self._resolve_build(player, action, cards)
        if isinstance(action, Invest):
            return self._resolve_invest(player, action, cards)
        return self._resolve_pass(player, action, cards)

    def _check_start(self, player: PlayerName, action: Start) -> Start:
        if player in self.initial_choice:
            raise IllegalAction("already_chosen", share=self.initial_choice[player])
        legal = [str(a) for a in _starts(self, player)]
        if action.share == UP and not _ruleset(self.ruleset).up_may_start:
            raise IllegalAction("up_may_not_start", legal)
        if action.share not in self.share_hands[player]:
            raise IllegalAction("no_such_share", legal, share=action.share)
        return action

    def _check_redraw(self, player: PlayerName, redraw: str | None) -> list[str]:
        """The track cards left for the rest of the turn after showing ``redraw``
        (option dead_track_redraw; rules: No legal action)."""
        hand = self.track_hands[player]
        if redraw is None:
            return hand
        if not self.options["dead_track_redraw"]:
            raise IllegalAction("redraw_not_in_game")
        if redraw == JOKER:
            raise IllegalAction("joker_never_dead")
        if redraw not in TRACK_TYPES:
            raise IllegalAction("not_a_track_type", name=redraw, types=list(TRACK_TYPES))
        if redraw not in hand:
            raise IllegalAction("no_card_to_redraw", card=redraw, hand=sorted(hand))
        free = self.network.free_spaces(redraw)
        if free:
            raise IllegalAction(
                "card_not_dead", [f"redraw {k}" for k in self.dead_cards(player)], card=redraw, free=free
            )
        return _without(hand, redraw)

    def _discard_choice(self, player: PlayerName, discard: str | None, what: str, cards: list[str], redraw: str | None) -> str | None:
        if discard is None:
            kinds = sorted(set(cards))
            if len(kinds) <= 1:
                return kinds[0] if kinds else None
            raise IllegalAction("which_discard", [f"discard {k}" for k in kinds], action=what)
        if discard not in cards:
            legal = [f"discard {k}" for k in sorted(set(cards))]
            if redraw is not None and discard == redraw and discard in self.track_hands[player]:
                raise IllegalAction("discard_is_redrawn", legal, card=discard)
            raise IllegalAction("no_track_card", legal, card=discard)
        return discard

    def _resolve_invest(self, player: PlayerName, action: Invest, cards: list[str]) -> Invest:
        hand = Counter(self.share_hands[player])
        need = Counter(action.shares)
        kinds = sorted(need)

        def summary() -> LegalSummary:
            return self.legal_summary(player, cards)

        if not action.shares:
            raise IllegalAction("no_shares_named", summary=summary())
        for k in kinds:
            if k not in SHARE_COMPANIES:
                raise IllegalAction("not_a_company", summary=summary(), name=k)
        if len(kinds) > 2 or (len(kinds) == 2 and len(action.shares) != 2):
            raise IllegalAction("invest_one_or_two_companies", summary=summary())
        for k in kinds:
            if hand[k] < need[k]:
                raise IllegalAction("too_few_shares", summary=summary(), company=k, have=hand[k], need=need[k])
        discard = self._discard_choice(player, action.discard, "invest", cards, action.redraw)
        return Invest(tuple(sorted(action.shares)), discard, action.redraw)

    def _resolve_pass(self, player: PlayerName, action: Pass, cards: list[str]) -> Pass:
        shares = self.share_hands[player]
        if shares:
            raise IllegalAction(
                "pass_holding_shares", summary=self.legal_summary(player, cards), shares=sorted(set(shares))
            )
        if self._can_build(cards):
            raise IllegalAction("pass_can_build", summary=self.legal_summary(player, cards))
        return Pass(self._discard_choice(player, action.discard, "pass", cards, action.redraw), action.redraw)

    def _resolve_build(self, player: PlayerName, action: Build, hand: list[str]) -> Build:
        company, sid = action.company, action.section
        if company == UP:
            raise IllegalAction("up_builds_no_track")
        if company not in COMPANIES:
            raise IllegalAction("not_a_building_company", company=company)
        if sid not in self.board.sections:
            raise IllegalAction("no_such_section", section=sid)
        card, space = action.card, action.space
        if space is not None and space not in TRACK_TYPES:
            raise IllegalAction("not_a_track_type", name=space, types=list(TRACK_TYPES))
        if card is not None and card not in hand:
            legal = self.legal_summary(player, hand)
            if action.redraw is not None and card == action.redraw and card in self.track_hands[player]:
                raise IllegalAction("card_is_redrawn", summary=legal, first=company, card=card)
            raise IllegalAction("no_track_card", summary=legal, first=company, card=card, hand=sorted(hand))
        if card is not None and card != JOKER:
            if space is not None and space != card:
                raise IllegalAction("card_builds_its_type", card=card, space=space)
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
        can_place = self.network.can_place
        fitting = [t for t in candidates if can_place(company, sid, t)]
        if not fitting:
            legal = self.legal_summary(player, hand)
            if space is not None:
                why = [self.network.why_not(company, sid, space)]
                if why[0] is None:  # the space is free, but no card in hand for it
                    raise IllegalAction("build_needs_card", summary=legal, first=company,
                                        company=company, section=sid, types=[space], hand=sorted(hand))
            else:
                reasons = {t: self.network.why_not(company, sid, t) for t in TRACK_TYPES}
                ok = [t for t, r in reasons.items() if r is None]
                if ok:  # a space fits, but no card in hand for it
                    raise IllegalAction("build_needs_card", summary=legal, first=company,
                                        company=company, section=sid, types=ok, hand=sorted(hand))
                unique: dict[str, dict[str, Any]] = {}
                for r in reasons.values():
                    if r:
                        unique.setdefault(repr(r), r)
                why = list(unique.values())
            raise IllegalAction("cannot_build", summary=legal, first=company, company=company, section=sid,
                                why=why)
        if len(fitting) > 1:
            raise IllegalAction(
                "which_card",
                [str(Build(company, sid, t if t in hand else JOKER, None if t in hand else t))
                 for t in fitting],
                company=company, section=sid,
            )
        space = fitting[0]
        if card is None:
            card = space if space in hand else JOKER
        take = self._resolve_take(player, action.take,
                                  Build(company, sid, card, space if card == JOKER else None,
                                        redraw=action.redraw))
        swap = action.swap
        if swap == DRAWN:  # rules: BUILD, step 4 ("even the one just drawn")
            if take.source != "stack":
                raise IllegalAction("swap_drawn_needs_stack", take=str(take))
            if self.stack_share() is None:
                raise IllegalAction("swap_drawn_stack_empty")
            if self.up_pile <= 0:
                raise IllegalAction("up_pile_empty_no_swap")
        elif swap is not None:
            after = list(self.share_hands[player])
            if take.source == "display":
                after.append(take.company)  # type: ignore[arg-type]
            elif take.source == "up":
                after.append(UP)
            if self.up_pile <= 0:
                raise IllegalAction("up_pile_empty_no_swap")
            if take.source == "up" and self.up_pile <= 1:
                raise IllegalAction("last_up_no_swap")
            if swap not in after:
                raise IllegalAction(
                    "no_share_to_swap", share=swap, after=sorted(after), unseen=take.source == "stack"
                )
        space = space if card == JOKER else None
        if card == action.card and space == action.space and take == action.take:
            return action  # already complete (the common case: no new object)
        return Build(company, sid, card, space, take, swap, action.redraw)

    def _resolve_take(self, player: PlayerName, take: Take | None, build: Build | None = None) -> Take:
        """The draw ``take`` after ``build`` resolved (None: the only one, no draw,
        when no share can be drawn).  Raises IllegalAction whose legal list holds
        complete lines, ``build KCC DEN-KCY white; take stack`` (a draw alone is no
        order: rules: BUILD, step 3)."""
        def legal() -> list[str]:
            prefix = f"{build}; " if build is not None else ""
            return [prefix + str(t) for t in self.share_options(player)]

        if take is None:
            if self.share_options(player) == [_NONE]:
                return _NONE
            raise IllegalAction("which_take", legal())
        source = take.source
        if source == "display":
            company = take.company
            if company is None:
                if take.place is None or not 1 <= take.place <= len(self.display):
                    raise IllegalAction("no_display_place", legal(), places=len(self.display))
                company = self.display[take.place - 1]
                if company is None:
                    raise IllegalAction("display_place_empty", legal(), place=take.place)
            if company not in self.display:
                raise IllegalAction(
                    "not_face_up", legal(), company=company, display=[c for c in self.display if c]
                )
            return _TAKES["display", company]
        if source == "stack":
            if not self.stack:
                raise IllegalAction("stack_empty", legal())
        elif source == "up":
            if self.options["up_only_by_swap"]:
                raise IllegalAction("up_only_by_swap", legal())
            if self.up_pile <= 0:
                raise IllegalAction("up_pile_empty", legal())
        elif source == "none":
            if self.share_options(player) != [_NONE]:
                raise IllegalAction("must_take", legal())
        else:
            raise IllegalAction("unknown_share_source", legal(), source=source)
        return _TAKES[source, None]

    # ================================================================= push
    def push(self, player: PlayerName, action: Action) -> list[Event]:
        """Apply ``action`` by ``player`` (after ``resolve``) and return the public
        events it caused (dividends included; ``moderator.rules.events``).
        ``history`` records the resolved (complete) action.

        Raises IllegalAction, leaving the game unchanged, when the action is illegal.
        The action ``random_action`` just drew for ``player`` in this position is
        legal and complete already: it is not resolved again.
        """
        log = self.events
        start = len(log)
        drawn = self._drawn
        if drawn is None or drawn[1] is not action or drawn[0] != player or drawn[2] != start:
            action = self.resolve(player, action)
        self._drawn = None
        if type(action) is Build:  # the common case first (it pays the dividends it draws)
            self.turn += 1
            if action.redraw is not None:
                self._apply_redraw(player, action.redraw)
            self._apply_build(player, action)
        elif isinstance(action, Start):
            self.initial_choice[player] = action.share
            ev = _CHOSEN.get(player)
            log.append(ev if ev is not None else _shared(_CHOSEN, player, InitialChosen, (player,)))
            if len(self.initial_choice) == len(self.players):
                self._reveal()
            self.history.append((player, action))
            return log[start:]
        else:
            self.turn += 1
            if action.redraw is not None:
                self._apply_redraw(player, action.redraw)
            if isinstance(action, Build):
                self._apply_build(player, action)
            elif isinstance(action, Invest):
                self._apply_invest(player, action)
            else:
                discard = action.discard
                self._discard(player, discard)
                log.append(PassesDiscarding((player, discard)) if discard else Passes((player,)))
            if self.dividends_pending:  # announced by a dividend card drawn
                self._pay_pending()
        if self.phase == "play":
            players = self.players
            if not self.share_hands[player] and self._stalled():  # the player who acted holds shares, mostly
                # nobody holds a share and no company can build: the game ends
                self._finish_stalled()
                self.history.append((player, action))
                return log[start:]
            current = self.current = (self.current + 1) % len(players)
            deck = self.track_deck
            if deck:  # ``_draw_track``, the common case inline (a hand is kept sorted)
                insort(self.track_hands[players[current]], deck.pop(0))
            else:
                self._draw_track(players[current])
        self.history.append((player, action))
        return log[start:]

    def _reveal(self) -> None:
        for p in self.players:
            share = self.initial_choice[p]
            self.share_hands[p].remove(share)
            self.invested[p][share] = self.invested[p].get(share, 0) + 1
        self.events.append(InitialRevealed((tuple((p, self.initial_choice[p]) for p in self.players),)))
        self.phase = "play"
        self._lay_out_shares()
        self.events.append(Starts((self.players[self.current],)))
        self._draw_track(self.players[self.current])

    def _draw_track(self, player: PlayerName) -> None:
        """Draw one track card for ``player``: the card that starts a turn (PBEM
        decision: the moderator draws it) or a redraw's replacement.  When the deck
        is empty the discards are shuffled into a new deck first (rules: Setup 2);
        with no discards either, nothing is drawn."""
        if not self.track_deck and self.track_discards:
            self.reshuffles += 1
            self.track_deck = self.track_discards
            self.track_discards = []
            _Shuffler(self.seed, "reshuffle", self.reshuffles).shuffle(self.track_deck)
            self.events.append(Reshuffled((len(self.track_deck),)))
        if self.track_deck:
            self.track_hands[player].append(self.track_deck.pop(0))
            self.track_hands[player].sort()
        else:
            self.events.append(NoTrackLeft((player,)))

    def _discard(self, player: PlayerName, card: str | None) -> None:
        if card is not None:
            self.track_hands[player].remove(card)
            self.track_discards.insert(0, card)

    def _apply_redraw(self, player: PlayerName, card: str) -> None:
        self.track_hands[player].remove(card)
        self.track_removed.append(card)
        self.events.append(DeadCard((player, card)))
        self._draw_track(player)

    def stack_share(self) -> ShareKind | None:
        """The share a take from the stack would draw now: the first card of the
        stack that is no dividend card (those are laid open on the way, rules:
        Dividends), or None when the stack holds no more share.  Hidden
        information (the stack order): for the referee and the drawing player's own
        confirmation only."""
        return next((c for c in self.stack if c != DIVIDEND), None)

    def stack_draws(self, since_log: int = 0) -> list[tuple[int, PlayerName, ShareKind, bool]]:
        """Every share drawn by a ``take stack`` in the actions whose events start at
        log index ``since_log`` or later: ``(log index of the action's first event,
        player, share, returned by swap drawn)``, in order.  Hidden information:
        each player may be shown only their own (rules: What each player may know).
        Replays ``history`` from the seed (the game is unchanged); pure."""
        g = Game.new(self.board, list(self.players), self.seed, self.ruleset, dict(self.options))
        out = []
        for player, action in self.history:
            start = len(g.events)
            drawn = None
            if isinstance(action, Build) and action.take is not None and action.take.source == "stack":
                drawn = g.stack_share()
            g.push(player, action)
            if drawn is not None and start >= since_log:
                out.append((start, player, drawn, action.swap == DRAWN))
        return out

    def _draw_stack(self) -> str | None:
        """Top share of the stack; dividend cards met on the way are laid open and
        announced, and the next card is drawn in their place (rules: Dividends).
        None when the stack holds no more share (open point: a dividend card that is
        the last card of the stack leaves nothing to draw in its place)."""
        stack = self.stack
        while stack:
            card = stack.pop(0)
            if card != DIVIDEND:
                return card
            n = self.dividends_drawn = self.dividends_drawn + 1
            if n > self.final_dividend:
                self.events.append(DividendUnused((n, self.final_dividend)))
            else:
                self.dividends_pending += 1
                self.events.append(_ANNOUNCED.get(n) or DividendAnnounced((n,)))
        return None

    def _four_of_a_kind(self) -> None:
        """Remove four face-up shares of one company and turn up four more, as often
        as it happens (rules: Four of a kind)."""
        d = self.display
        while len(d) == 4 and d[0] is not None and d[0] == d[1] == d[2] == d[3]:
            company = self.display[0]
            self.removed.extend(self.display)  # type: ignore[arg-type]
            self.events.append(FourOfAKind((company,)))
            self.display = [self._draw_stack() for _ in range(4)]
            self.events.append(FaceUp((tuple(self.display),)))
            d = self.display

    def _apply_build(self, player: PlayerName, a: Build) -> None:
        """BUILD (rules: A turn, BUILD): play the card, place the train, draw the
        share (dividends drawn on the way are paid before the swap; a swap after the
        game ended is not made), then the optional UP swap.  The share hand stays
        sorted: a share drawn is inserted in order (``bisect.insort``; every hand
        the engine deals or changes is sorted)."""
        card = a.card
        self.track_hands[player].remove(card)  # the card played: discarded (``_discard``)
        self.track_discards.insert(0, card)
        company = a.company
        section = a.section
        network = self._network  # ``self.network`` inline
        if network is None or network.placed is not self.placed or network.box is not self.box:
            network = self.network
        log = self.events
        space = a.space if card == JOKER else card
        network.place(company, section, space)
        left = self.box[company]
        try:
            worth = _WORTH[company][left]
        except KeyError:  # a box that no legal game holds (changed by hand)
            worth = 1 + _TRAINS[company] - left
        log.append((BuiltJoker if card == JOKER else Built)((player, company, section, space, worth)))
        take = a.take
        source = take.source  # type: ignore[union-attr]
        hand = self.share_hands[player]
        if source == "stack":
            ev = _TOOK_STACK.get(player)
            log.append(ev if ev is not None else _shared(_TOOK_STACK, player, TookStack, (player,)))
            stack = self.stack
            got = stack.pop(0) if stack and stack[0] != DIVIDEND else self._draw_stack()
            if got is None:
                log.append(StackEmpty())
            else:
                insort(hand, got)
        elif source == "display":
            display = self.display
            got = take.company  # type: ignore[union-attr]
            ev = _TOOK_FACE_UP.get((player, got))
            log.append(ev if ev is not None else _shared(_TOOK_FACE_UP, (player, got), TookFaceUp, (player, got)))
            stack = self.stack
            new = stack.pop(0) if stack and stack[0] != DIVIDEND else self._draw_stack()
            display[display.index(got)] = new
            if new is None:
                log.append(PlaceEmpty())
            else:
                log.append(_REPLACED_BY.get(new) or ReplacedBy((new,)))
                if display[0] == display[1] == display[2] == display[3]:
                    self._four_of_a_kind()
            insort(hand, got)  # type: ignore[arg-type]
        elif source == "up":
            got = UP
            self.up_pile -= 1
            log.append(TookUp((player,)))
            insort(hand, UP)
        else:
            got = None
            log.append(DrewNone((player,)))
        if self.dividends_pending:
            self._pay_pending()
        swap = a.swap
        if swap is not None:
            returned = got if swap == DRAWN else swap
            if self.phase == "over":
                log.append(SwapNotMade((player,)))
            else:
                assert returned is not None  # swap drawn: resolve saw a share in the stack
                hand.remove(returned)
                self.returned[player].append(returned)
                insort(hand, UP)
                self.up_pile -= 1
                ev = _SWAPPED.get(player)
                log.append(ev if ev is not None else _shared(_SWAPPED, player, SwappedUnseen, (player,)))

    def _apply_invest(self, player: PlayerName, a: Invest) -> None:
        hand = self.share_hands[player]
        invested = self.invested[player]
        shares = a.shares
        for s in shares:
            hand.remove(s)
            invested[s] = invested.get(s, 0) + 1
        discard = a.discard
        if discard is not None:  # ``_discard``
            self.track_hands[player].remove(discard)
            self.track_discards.insert(0, discard)
        first = shares[0]
        last = shares[-1]
        if first == last:  # one company
            what: tuple[tuple[int, str], ...] = ((len(shares), first),)
        elif first < last:  # two companies, one share each (``resolve``), in order
            what = ((1, first), (1, last))
        else:
            what = ((1, last), (1, first))
        if discard:
            self.events.append(InvestedDiscarding((player, what, discard)))
        else:
            self.events.append(Invested((player, what)))

    # ================================================================= dividends
    def _pay_pending(self, announce: bool = True) -> None:
        """Pay the announced dividends in order; the game ends with the final one
        (rules: Dividends, Game end)."""
        if announce and self.dividends_pending >= 2 and self.phase != "over":
            n = self.dividends_pending
            self.events.append(DoubleDividend((n,)) if n == 2 else SeveralDividends((n,)))
        while self.dividends_pending and self.phase != "over":
            self.dividends_pending -= 1
            self.dividends_paid += 1
            self._pay_dividend(self.dividends_paid)
            if self.dividends_paid >= self.final_dividend:
                self.phase = "over"
                self.dividends_pending = 0
                self.events.append(GameOver((tuple(self.standings()),)))

    def _stalled(self) -> bool:
        """True when the game can never change again: no company can place a train on
        any space whatever the card, and no player holds a share to invest."""
        hands = self.share_hands
        for p in self.players:
            if hands[p]:
                return False
        return not any(self.network.placement_totals().values())

    def _finish_stalled(self) -> None:
        """PBEM decision (stalled game): when nobody can ever build or invest again,
        the remaining dividends are paid at once, in order, and the game ends."""
        self.events.append(Stalled())
        self.dividends_pending = self.final_dividend - self.dividends_paid
        self._pay_pending(announce=False)

    def investors(self) -> dict[PlayerName, dict[ShareKind, int]]:
        """Invested shares per player (``{player: {company: n}}``), a copy."""
        return {p: dict(self.invested[p]) for p in self.players}

    def _imaginary_holdings(self) -> dict[str, int]:
        """Shares of the imaginary third player (rules: Two players): the display,
        the stack and the UP pile at the moment the final dividend is paid."""
        held = Counter(c for c in self.display if c)
        held.update(c for c in self.stack if c != DIVIDEND)
        if self.up_pile:
            held[UP] += self.up_pile
        return dict(held)

    def _pay_dividend(self, number: int) -> None:
        """Pay the ``number``-th dividend (rules: Company dividends; Union Pacific
        dividends; Two players) and keep its record in ``payouts``: ``values`` per
        company, ``holdings`` per investor (shares sorted), ``paid`` per company
        (``company_payout``, then ``up_payout``; companies in their order) and
        ``totals`` per investor (sorted)."""
        players = self.players
        invested = self.invested
        holdings = {p: invested[p] for p in players}  # read here, copied into the record
        money = self.money
        if len(players) == 2 and number == self.final_dividend:
            holdings[IMAGINARY] = self._imaginary_holdings()
            money.setdefault(IMAGINARY, 0)
            self.events.append(ImaginaryTakes((tuple((n, c) for c, n in sorted(holdings[IMAGINARY].items())),)))
        box = self.box
        values = {c: n - box[c] for c, n in _TRAINS_AND_STATION.items()}
        by_company: dict[str, dict[str, int]] = {}
        for p, h in holdings.items():
            for company, n in h.items():
                if n > 0:
                    got = by_company.get(company)
                    if got is None:
                        by_company[company] = {p: n}
                    else:
                        got[p] = n
        paid: dict[str, dict[str, int]] = {}
        totals: dict[str, int] = {}
        for company in _COMPANY_IDS:
            h = by_company.get(company)
            if h is None:
                continue
            if len(h) == 1:  # ``company_payout``'s cases for one and two investors
                value = values[company]
                ((a, _),) = h.items()
                pay = paid[company] = {a: value + value // 2}
            elif len(h) == 2:
                value = values[company]
                (a, na), (b, nb) = h.items()
                if na == nb:
                    each = (value + value // 2) // 2
                    pay = paid[company] = {a: each, b: each} if a < b else {b: each, a: each}
                elif na > nb:
                    pay = paid[company] = {a: value, b: value // 2}
                else:
                    pay = paid[company] = {b: value, a: value // 2}
            else:
                pay = paid[company] = company_payout(h, values[company])
            for p, amount in pay.items():
                totals[p] = totals.get(p, 0) + amount
        h = by_company.get(UP)
        if h is not None:
            pay = paid[UP] = up_payout(h, number)
            for p, amount in pay.items():
                totals[p] = totals.get(p, 0) + amount
        for p, amount in totals.items():
            money[p] = money.get(p, 0) + amount
        self.payouts.append({
            "dividend": number,
            "values": values,
            "holdings": {p: dict(sorted(h.items())) for p, h in holdings.items()},
            "paid": paid,
            "totals": dict(sorted(totals.items())),
        })
        if self.options.get("hidden_money") and self.phase != "over" and number < self.final_dividend:
            # option hidden_money: the public log must not let anyone add up the others' money
            self.events.append(DividendHidden((number,)))
        else:
            self.events.append(DividendPaid((number, tuple([(p, totals.get(p, 0)) for p in holdings]))))

    def standings(self) -> list[tuple[int, PlayerName, int]]:
        """``(place, player, money in millions)`` sorted richest first; equal money shares a place
        (open point: a tie is a shared win).  Includes the imaginary player when it
        took part."""
        ranked = sorted(self.money.items(), key=lambda kv: (-kv[1], kv[0]))
        out, place = [], 0
        for i, (p, m) in enumerate(ranked):
            if i == 0 or m != ranked[i - 1][1]:
                place = i + 1
            out.append((place, p, m))
        return out

    def winners(self) -> list[PlayerName]:
        """Players in first place (several on a tie; possibly the imaginary player);
        empty before the end."""
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
        hidden_money and the game is not over), whose turn it is, the log
        (``log``: the events, ``Game.events``)."""
        hide_money = self.options["hidden_money"] and self.phase != "over"
        network = self.network
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
                    "sections": network.company_sections(c.abbr),
                }
                for c in COMPANIES.values()
            ],
            "display": list(self.display),
            "stack_size": len(self.stack),
            "track_deck_size": len(self.track_deck),
            "track_discard_top": self.track_discards[0] if self.track_discards else None,
            "track_removed": list(self.track_removed),
            "full_track_types": network.full_track_types(),
            "up_pile": self.up_pile,
            "removed": list(self.removed),
            "dividends_paid": self.dividends_paid,
            "final_dividend": self.final_dividend,
            "standings": self.standings() if self.phase == "over" else None,
            "log": list(self.events),
        }

    def view(self, player: PlayerName) -> dict[str, Any]:
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
            "dead_cards": self.dead_cards(player) if player == self.to_move else [],
        }
        return v

    def to_dict(self) -> dict[str, Any]:
        """The full state as plain data (secrets included) for the game file: the
        fields declared saved (``_state(save=...)``), in declaration order.  Every
        list and mapping is new, but the records the engine never changes once
        added (each entry of ``payouts``) are the game's own: read them, do not
        change them."""
        return {f.name: f.metadata["save"](getattr(self, f.name)) for f in _SAVED}

    @classmethod
    def from_dict(
        cls,
        state: dict[str, Any],
        *,
        board: Board,
        players: list[PlayerName],
        seed: int,
        ruleset: str,
        options: dict[str, bool],
        events: list[Event],
        history: list[tuple[PlayerName, Action]] | History,
        owned: bool = False,
    ) -> "Game":
        """The game whose ``to_dict()`` is ``state``, with the fields that
        ``to_dict`` does not save given here: the inverse of ``to_dict``, so that a
        game file is restored without replaying its history.

        Driven by the field declarations: every saved field is read from ``state``
        (rebuilt by its ``_state(load=...)``, else copied as ``copy`` copies it),
        the unsaved ones are the arguments or their defaults (``dividends_pending``
        is 0 between actions); the network's caches are rebuilt lazily.  Pure: the
        arguments are copied, never kept or changed.  With ``owned`` the caller
        hands ``state`` over (a fresh parse or snapshot of a game file, which
        nothing else changes afterwards): the records the engine never changes
        (``payouts``' entries) are kept instead of copied, as declared
        (``_state(adopt=...)``); every other value is copied and everything
        checked as without it.  ``state`` must hold exactly the saved keys.  ``history`` is a list of ``(player, action)`` or a
        ``History`` of strict notation texts, read on first use (its players are
        checked now).

        Raises ValueError for a malformed state or setup: a missing or unknown key,
        a value of the wrong shape (by the field's type), players or ruleset or
        options that ``Game.new`` would refuse, a per-player mapping not keyed by
        the players, an unknown section, company or card, track cards or trains
        that do not add up to the game's, a history entry of an unknown player."""
        if not isinstance(state, dict):
            raise ValueError(f"a game state is a mapping, not {type(state).__name__}")
        names = [f.name for f in _SAVED]
        missing = [k for k in names if k not in state]
        unknown = [k for k in state if k not in names]
        if missing or unknown:
            what = (["missing: " + ", ".join(map(str, missing))] if missing else []) + (
                ["unknown: " + ", ".join(map(str, unknown))] if unknown else [])
            raise ValueError(f"not a game state ({'; '.join(what)})")
        given: dict[str, Any] = {
            "board": board, "players": players, "seed": seed, "ruleset": ruleset,
            "options": options, "events": events, "history": history,
        }
        for name, value in given.items():
            if not (name == "history" and isinstance(value, History)):  # its actions: read on use
                _check_shape(value, _HINTS[name], name)
        opts = check_setup(players, ruleset, options)
        kwargs: dict[str, Any] = {}
        for f in _COPIED:
            if f.name in given:
                kwargs[f.name] = f.metadata["copy"](opts if f.name == "options" else given[f.name])
        how = "adopt" if owned else "load"
        for f in _SAVED:
            value = state[f.name]
            _check_shape(value, _HINTS[f.name], f"state {f.name!r}")
            kwargs[f.name] = f.metadata[how](value, board)
        g = cls(**kwargs)
        g._check_restored()
        return g

    def _check_restored(self) -> None:
        """The consistency ``from_dict`` checks beyond the shapes (ValueError)."""
        players = set(self.players)

        def bad(why: str) -> ValueError:
            return ValueError(f"not a consistent game state: {why}")

        if self.phase not in ("initial", "play", "over"):
            raise bad(f"unknown phase {self.phase!r}")
        if not 0 <= self.current < len(self.players):
            raise bad(f"'current' {self.current} is not a player's index")
        for name in ("turn", "reshuffles", "up_pile", "dividends_drawn", "dividends_paid"):
            if getattr(self, name) < 0:
                raise bad(f"{name!r} is negative")
        for name in ("track_hands", "share_hands", "invested", "returned"):
            if set(getattr(self, name)) != players:
                raise bad(f"{name!r} is not keyed by the players")
        if not set(self.initial_choice) <= players:
            raise bad("'initial_choice' names someone who is not a player")
        if not players <= set(self.money) <= players | {IMAGINARY}:
            raise bad("'money' is not keyed by the players")
        if set(self.box) != set(COMPANIES):
            raise bad("'box' is not keyed by the companies")
        # the trains on the neutral spaces and on the starting spaces, counted in C
        on_board = Counter(chain.from_iterable(self.placed.values()))
        occupants = set(on_board)
        on_board.update(chain.from_iterable(s.starts for s in self.board.sections.values()))
        for abbr, c in COMPANIES.items():
            if self.box[abbr] < 0 or on_board[abbr] + self.box[abbr] != c.trains:
                raise bad(f"the trains of {abbr} do not add up to {c.trains}")
        if not occupants <= _OCCUPANTS:
            raise bad("'placed' holds an unknown company")
        track = Counter(self.track_deck) + Counter(self.track_discards) + Counter(self.track_removed)
        for p in self.players:
            track.update(self.track_hands[p])
        if track != Counter(TRACK_CARD_COUNTS):
            raise bad("the track cards do not add up to the deck")
        shares = set(SHARE_COMPANIES) | {UP}
        held = [s for p in self.players for s in (*self.share_hands[p], *self.returned[p],
                                                    *self.invested[p], *self.initial_choice.values())]
        if not set(held) | set(self.removed) | {c for c in self.display if c} <= shares:
            raise bad("a share is not a company's or UP")
        if not set(self.stack) <= shares | {DIVIDEND} or len(self.display) not in (0, 4):
            raise bad("the stack or the display holds an unknown card")
        history = self.history
        try:  # in C: the history grows with the game
            known = players.issuperset(history.players() if isinstance(history, History)
                                       else map(itemgetter(0), history))
        except TypeError:  # an unhashable name: found below
            known = False
        if not known:
            names = list(history.players() if isinstance(history, History) else (p for p, _a in history))
            for i, player in enumerate(names):
                if player not in players:
                    raise bad(f"history entry {i + 1} is by {player!r}, not a player")

    def copy(self) -> "Game":
        """An independent copy (for trying an action without changing this game):
        every field copied as declared (``_state(copy=...)``); the board is shared
        (it is never changed), the network's caches are copied."""
        g = Game(**{f.name: f.metadata["copy"](getattr(self, f.name)) for f in _COPIED})
        if self._network is not None:
            g._network = self._network.copy(g.placed, g.box)
        return g

    @classmethod
    def fields_visible(cls, visible: str) -> list[str]:
        """Names of the fields declared ``visible`` (``"public"``, ``"own"``,
        ``"hidden"``), in declaration order."""
        return [f.name for f in fields(cls) if f.metadata.get("visible") == visible]


_COPIED = tuple(f for f in fields(Game) if f.init)
"""The fields ``Game.copy`` copies: every field given to ``Game(...)``."""
_SAVED = tuple(f for f in fields(Game) if f.metadata.get("save"))
"""The fields ``Game.to_dict`` saves, in declaration order (the game file's order)."""
_OCCUPANTS = frozenset(COMPANIES) | {None}
"""What a space may hold: a company's train or nothing."""
_HINTS = typing.get_type_hints(Game)
"""The fields' types, resolved: ``Game.from_dict`` checks shapes against them."""


def _empty_board(board: Board) -> tuple[dict[SectionId, list[None]], tuple[SectionId, ...],
                                          tuple[list[None], ...], dict[CompanyId, int]]:
    """What ``Game.new`` copies for each game on ``board``, made once per board (the
    board is never changed once loaded): ``placed`` with no train, its section ids
    and rows apart, and ``box`` (each company's trains but those on its starting
    spaces).  Never hand these out: copy them."""
    made = board.__dict__.get("_empty_game")
    if made is None:
        rows = {sid: [None] * len(s.spaces) for sid, s in board.sections.items()}
        box = {
            abbr: c.trains - (len(board.companies[abbr].starts) if abbr in board.companies else 0)
            for abbr, c in COMPANIES.items()
        }
        made = board.__dict__["_empty_game"] = (rows, tuple(rows), tuple(rows.values()), box)
    return made


def _split(cards: list[str], k: int) -> list[list[str]]:
    """``cards`` cut into ``k`` piles as equal as possible, the larger ones first."""
    q, r = divmod(len(cards), k)
    out, i = [], 0
    for j in range(k):
        size = q + (1 if j < r else 0)
        out.append(cards[i : i + size])
        i += size
    return out
