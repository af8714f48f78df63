"""The game's events as values: what happened, never how it is said.

``Game.events`` holds one immutable value per event, in order; ``Game.push``
returns the events one action caused.  Each kind of event is one small class (a
tuple subclass: immutable, hashable, cheap to make) holding the values its
sentence needs; ``kind`` names it (the macro of ``templates/words/events.txt``
that words it, and the ``kind`` key of its mapping in a game file, format 4).
Values are plain: player names, company and share ids, section ids, track card
types, numbers (money in millions of dollars); sequences are tuples.

``audience`` says who may read the event: ``None`` for every player and observer
(every event the engine emits today is public: rules, What each player may know).

The model is python-chess's moves and the typed actions of 18xx.games: a sentence
is made when someone reads it (``moderator.render.events.event_text``, the Jinja
filter ``event``, in the reader's language).  ``to_data``/``from_data`` give the
mapping a game file keeps (``docs/game-file.md``, "Events").
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any, ClassVar

__all__ = ["Event", "KINDS", "events_from_data", "from_data", "to_data"]


class Event(tuple):
    """One event: a tuple of the values named by ``fields`` (see the module).

    Made from the sequence of its values in the order of ``fields``, as
    ``os.stat_result`` and ``time.struct_time`` are: ``Built(("Ann", "KCC",
    "DEN-KCY", "plain", 4))`` (one C call: the engine's hot path; the engine
    always gives every value), or by name with ``of``: ``Built.of(player="Ann",
    ...)`` (checked).  Two events are equal when they are of the same kind with
    equal values; ``values()`` gives ``{field: value}``."""

    __slots__ = ()
    kind: ClassVar[str] = ""
    fields: ClassVar[tuple[str, ...]] = ()
    audience: ClassVar[str | None] = None

    @classmethod
    def of(cls, **values: Any) -> "Event":
        """The event with these values, by field name.  Raises TypeError for a
        missing or unknown field."""
        if set(values) != set(cls.fields):
            raise TypeError(f"{cls.__name__} takes the values {', '.join(cls.fields) or '(none)'}, "
                            f"not {', '.join(values) or '(none)'}")
        return cls(values[f] for f in cls.fields)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and tuple.__eq__(self, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__

    def values(self) -> dict[str, Any]:
        """``{field: value}`` in the order of ``fields``."""
        return dict(zip(self.fields, self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in zip(self.fields, self))})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), tuple(self))


KINDS: dict[str, type[Event]] = {}
"""Every event class by its ``kind``."""
_SEQUENCES = frozenset({"players", "shares", "choices", "standings", "paid"})
"""The fields whose values are sequences (tuples in an event, lists in a file)."""


def _kind(kind: str, name: str, fields: str, doc: str) -> type[Event]:
    names = tuple(fields.split())
    ns: dict[str, Any] = {"__slots__": (), "kind": kind, "fields": names, "__doc__": doc,
                          "__module__": __name__, "_keys": ("kind", *names),
                          "_sequences": tuple(f for f in names if f in _SEQUENCES)}
    for i, f in enumerate(names):
        ns[f] = property(itemgetter(i))
    cls = type(name, (Event,), ns)
    KINDS[kind] = cls
    return cls


SetUp = _kind("set_up", "SetUp", "players ruleset",
              "The game was set up: ``players`` (tuple, turn order), ``ruleset`` (rules: Setup).")
FourOfAKind = _kind("four_of_a_kind", "FourOfAKind", "company",
                    "Four face-up shares of ``company``: removed and replaced (rules: Four of a kind).")
FaceUp = _kind("face_up", "FaceUp", "shares",
               "The face-up display now: ``shares``, four share ids or None for an empty place.")
InitialChosen = _kind("initial_chosen", "InitialChosen", "player",
                      "``player`` chose an initial investment (hidden until all chose; rules: Setup 5).")
Passes = _kind("passes", "Passes", "player",
               "``player`` passed: no BUILD or INVEST was possible (rules: No legal action).")
PassesDiscarding = _kind("passes_discarding", "PassesDiscarding", "player card",
                         "``player`` passes, discarding a track card of type ``card``.")
InitialRevealed = _kind("initial_revealed", "InitialRevealed", "choices",
                        "The initial investments: ``choices``, ``(player, share)`` pairs in turn order.")
Starts = _kind("starts", "Starts", "player", "``player`` takes the first turn.")
Reshuffled = _kind("reshuffled", "Reshuffled", "count",
                   "The empty track deck was made anew from ``count`` discards (rules: Setup 2).")
NoTrackLeft = _kind("no_track_left", "NoTrackLeft", "player",
                    "No track card was left for ``player`` to draw.")
DeadCard = _kind("dead_card", "DeadCard", "player card",
                 "``player`` showed a dead track card of type ``card`` and drew another "
                 "(option dead_track_redraw).")
DividendUnused = _kind("dividend_unused", "DividendUnused", "number final",
                       "The ``number``-th dividend card was drawn and not used: the game ends with "
                       "dividend ``final``.")
DividendAnnounced = _kind("dividend_announced", "DividendAnnounced", "number",
                          "A dividend card was drawn: dividend ``number`` announced (rules: Dividends).")
Built = _kind("built", "Built", "player company section card value",
              "``player`` built ``company`` on ``section`` with a ``card`` track card; ``value``: the "
              "company's dividend value now (rules: A turn, BUILD).")
BuiltJoker = _kind("built_joker", "BuiltJoker", "player company section card value",
                   "As ``Built``, with a joker played as ``card`` track.")
TookFaceUp = _kind("took_face_up", "TookFaceUp", "player share", "``player`` took the face-up ``share``.")
PlaceEmpty = _kind("place_empty", "PlaceEmpty", "", "The face-up place stays empty: the stack is out of shares.")
ReplacedBy = _kind("replaced_by", "ReplacedBy", "share", "The face-up place is filled with ``share``.")
TookStack = _kind("took_stack", "TookStack", "player", "``player`` drew the stack's top share (unseen by the others).")
StackEmpty = _kind("stack_empty", "StackEmpty", "", "The stack held no more share: nothing was drawn.")
SwappedUnseen = _kind("swapped_unseen", "SwappedUnseen", "player",
                      "``player`` returned a share unseen and took a UP share (the UP swap).")
TookUp = _kind("took_up", "TookUp", "player", "``player`` took a UP share.")
DrewNone = _kind("drew_none", "DrewNone", "player", "``player`` could draw no share.")
SwapNotMade = _kind("swap_not_made", "SwapNotMade", "player",
                    "The game ended before ``player``'s UP swap: it is not made.")
Invested = _kind("invested", "Invested", "player shares",
                 "``player`` invested ``shares``: ``(count, company)`` pairs (rules: A turn, INVEST).")
InvestedDiscarding = _kind("invested_discarding", "InvestedDiscarding", "player shares card",
                           "As ``Invested``, discarding a track card of type ``card``.")
DoubleDividend = _kind("double_dividend", "DoubleDividend", "count",
                       "Two dividend cards in one draw: ``count`` (2) dividends are paid in turn.")
SeveralDividends = _kind("several_dividends", "SeveralDividends", "count",
                         "``count`` (3 or more) dividend cards in one draw: as many dividends are paid.")
GameOver = _kind("game_over", "GameOver", "standings",
                 "The game is over: ``standings``, ``(place, player, money in millions)`` richest first.")
Stalled = _kind("stalled", "Stalled", "",
                "Nobody can build or invest again: the remaining dividends are paid now (PBEM decision).")
ImaginaryTakes = _kind("imaginary_takes", "ImaginaryTakes", "shares",
                       "Two players: the imaginary third player takes ``shares``, ``(count, company)`` "
                       "pairs, companies sorted (rules: Two players).")
DividendHidden = _kind("dividend_hidden", "DividendHidden", "number",
                       "Dividend ``number`` paid, amounts hidden (option hidden_money).")
DividendPaid = _kind("dividend_paid", "DividendPaid", "number paid",
                     "Dividend ``number`` paid: ``paid``, ``(player, money in millions)`` pairs.")


def to_data(event: Event) -> dict[str, Any]:
    """The mapping a game file keeps: ``{"kind": kind, field: value, ...}``
    (tuples as lists)."""
    cls = type(event)
    out = dict(zip(cls._keys, (cls.kind, *event)))  # type: ignore[attr-defined]
    for k in cls._sequences:  # type: ignore[attr-defined]
        out[k] = _plain(out[k])
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _frozen(value: Any) -> Any:
    """``value`` with its lists, at any depth, as tuples."""
    if type(value) is not list:
        return value
    t = tuple(value)
    if list in set(map(type, t)):  # pairs, triples: their lists too
        return tuple(map(_frozen, t))
    return t


_READERS: dict[str, tuple[type[Event], Any, int, bool]] = {
    kind: (cls, itemgetter(*cls.fields) if cls.fields else None, len(cls.fields) + 1,
           bool(_SEQUENCES & set(cls.fields)))
    for kind, cls in KINDS.items()}
"""Per kind: the class, the getter of its values from a mapping, the number of
keys, whether a value is a sequence (``from_data``: a lookup and one C call for
the common events; a game file of turn 150 holds about 500)."""


def events_from_data(log: list[dict[str, Any]]) -> list[Event]:
    """``[from_data(d) for d in log]``, the common events (of values that are no
    sequences) read inline: a game file's whole log on every trusted load.
    Raises ValueError as ``from_data``."""
    out: list[Event] = []
    append = out.append
    readers = _READERS
    for d in log:
        r = readers.get(d.get("kind")) if type(d) is dict else None  # type: ignore[arg-type]
        if r is not None and not r[3] and r[1] is not None and len(d) == r[2]:
            try:
                v = r[1](d)
            except KeyError:
                pass
            else:
                append(r[0]((v,) if r[2] == 2 else v))
                continue
        append(from_data(d))
    return out


def from_data(data: dict[str, Any]) -> Event:
    """The event of a mapping ``to_data`` made.  Raises ValueError for an
    unknown kind, a missing or unknown key."""
    try:
        cls, get, n, nested = _READERS[data["kind"]]
        if len(data) != n:
            raise KeyError
        if get is None:
            return cls()
        values = get(data)
    except (KeyError, TypeError, IndexError):
        what = KINDS.get(data.get("kind")) if isinstance(data, dict) and isinstance(data.get("kind"), str) else None
        if what is None:
            raise ValueError(f"not an event: {data!r}") from None
        raise ValueError(f"event {what.kind} needs the keys {', '.join(what.fields) or '(none)'}: {data!r}") from None
    if n == 2:
        values = (values,)
    if nested:
        values = tuple(map(_frozen, values))
    return cls(values)
