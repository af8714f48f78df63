"""The words of the order language, and the one lookup of cities, companies and cards.

:mod:`moderator.orders.parser` turns order lines into actions with a grammar; every
word that grammar knows lives here: the verbs of each order, the words for track
cards, the mail commands, fillers, connectors, greetings and politeness, numbers,
company names and the city lookup. All word sets are lower case.

Every city a mail names is looked up by :meth:`CityIndex.find` (through
:func:`city_index`): ids and full names as the board writes them (the same
matching as :meth:`moderator.rules.board.Board.find_city`), common short names
(:data:`CITY_ALIASES`: LA, KC, NY ...) and the first word(s) of a name that only
one city's name starts with (``"Salt Lake"``).
"""
from __future__ import annotations

import functools
import re
from collections import OrderedDict

from ..rules.board import Board
from ..rules.components import COMPANIES, JOKER, TRACK_TYPES, UP, company_abbr

# ============================================================== commands

COMMANDS = ("help", "status", "history", "rules", "legal", "hint")
"""Mail commands that are not moves (answered by the moderator loop)."""

COMMAND_ALIASES = {"?": "help", "rule": "rules", "log": "history", "suggest": "hint",
                   "suggestion": "hint"}

ARG_COMMANDS = {"timezone": "timezone", "tz": "timezone", "vacation": "vacation", "holiday": "vacation",
                "language": "language", "lang": "language", "idioma": "language", "sprache": "language",
                "jazyk": "language", "语言": "language"}
"""Mail commands with one argument (``timezone Europe/Madrid``, ``vacation 5d``,
``vacation off``, ``language cs``; ``language`` also alone): the first word, in
any case, and the command it names."""
"""Other words for a command."""

COMMAND_FILLERS = {"send", "show", "the", "a", "game"}
"""Words around a command that change nothing ("send the status")."""

# ============================================================== orders

CARDS = TRACK_TYPES + (JOKER,)
"""Every kind of track card, as written in canonical orders."""

CARD_WORDS = {
    "plain": "plain", "p": "plain", "nostripe": "plain", "unstriped": "plain",
    "black-white": "black-white", "blackwhite": "black-white", "bw": "black-white",
    "b/w": "black-white", "b-w": "black-white", "b&w": "black-white", "b+w": "black-white",
    "black/white": "black-white", "black&white": "black-white", "black+white": "black-white",
    "black": "black", "b": "black", "blk": "black",
    "white": "white", "w": "white", "wht": "white",
    "joker": JOKER, "jokers": JOKER, "wild": JOKER, "wildcard": JOKER, "j": JOKER,
    "jolly": JOKER,
}
"""Every word for a track card (lower case) to the card kind; see :func:`card_word`."""

BUILD_VERBS = {"build", "bld", "place", "lay", "put"}
TAKE_VERBS = {"take", "draw", "get", "pick", "grab"}
SWAP_VERBS = {"swap", "exchange", "trade", "return", "switch"}
SWAP_DRAWN = {"drawn": {"just", "newly", "drawn"}}
"""``swap drawn``: the word for the share just drawn from the stack (``DRAWN``), with
the words that may stand beside it ("swap the share just drawn")."""
INVEST_VERBS = {"invest", "inv"}
DISCARD_VERBS = {"discard", "drop"}
PASS_VERBS = {"pass", "skip"}
START_VERBS = {"start", "initial", "choose"}
REDRAW_VERBS = {"redraw"}
VERBS = (
    BUILD_VERBS | TAKE_VERBS | SWAP_VERBS | INVEST_VERBS | DISCARD_VERBS
    | PASS_VERBS | START_VERBS | REDRAW_VERBS
)
"""Every verb; the ``*_VERBS`` sets above are the verbs of each order."""

SPLIT_VERBS = {"build", "take", "draw", "swap", "exchange", "invest", "discard", "pass", "redraw"}
"""Verbs that start a new order in the middle of a line ("..., take stack")."""

NEGATIONS = {"no", "don't", "dont", "not", "without"}
"""Words that turn an order off ("no swap", "don't swap")."""

CONNECTORS = {",", "and", "then", "&", "+", "also", "plus", "-"}
"""Words joining two orders on one line; dropped before a verb."""

PREAMBLE = {
    "please", "pls", "plz", "i", "i'll", "ill", "i'd", "we", "we'll", "will", "would",
    "like", "to", "want", "let", "let's", "lets", "me", "now", "then", "and", "also",
    "ok", "okay", "so", "my", "our", "order", "orders", "move", "moves", "turn",
    "action", "is", "here", "here's", "heres", "are", "first", "next", "finally",
}
"""Words before the verb that say nothing ("please", "I'll", "my move:")."""

GREETINGS = {
    "hi", "hello", "hey", "dear", "hallo", "hola", "salut", "moin", "greetings",
    "thanks", "thank", "thx", "ty", "cheers", "regards", "best", "bye", "ciao",
    "sincerely", "yours", "cu", "cya", "good", "kind", "love", "gl", "hf",
}
"""First words of a greeting or sign-off line, which is ignored if it holds no verb."""

SIGN_OFFS = {"thanks", "thank", "thx", "ty", "cheers", "regards", "best", "bye", "ciao",
             "sincerely", "yours", "cu", "cya", "kind", "love"}
"""After a sign-off line, lines that do not start with a verb (a name) are ignored."""

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10,
}
"""Numbers written as words (``"two shares"``)."""

ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4,
    "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
}
"""Places of the face-up display as ordinals (``"take the second"``)."""

FILLERS = {"a", "an", "the", "my", "of", "share", "shares", "card", "cards"}
"""Words without meaning inside an order ("a share of", "the card")."""

BUILD_FILLERS = {"on", "at", "with", "using", "use", "a", "an", "the", "card", "cards",
                 "track", "space", "train", "in", "playing", "play", "stripe", "striped",
                 "of", "type", "by", "company", "one", "my", "section", "route", "line", "for"}
"""Words that may stand around the section and card of a build ("on", "using a")."""

CARDISH = {"as"}
"""Words that belong to the card of a build ("joker as white")."""

POLITE = {"please", "pls", "plz", "thanks", "thx", "ty", "thank", "you", "cheers", "merci",
          "danke", "gracias", "bitte"}
"""Words of politeness at the end of an order ("start EPRG, thanks"), dropped."""

ORDER_WORDS = {"stack", "up", "display", "top", "pile", "joker", "wild", "none", "as"}
"""Words that make a line an attempted order even without a verb ("stack", "joker")."""

CITY_ALIASES = {
    "la": "Los Angeles", "sf": "San Francisco", "frisco": "San Francisco",
    "kc": "Kansas City", "ny": "New York", "newyorkcity": "New York",
    "dc": "Washington", "washingtondc": "Washington", "slc": "Salt Lake City",
    "stl": "St. Louis", "saintlouis": "St. Louis", "nola": "New Orleans",
}
"""Common short names of cities, used when the board has a city of that name and
no city with that id or name."""


def card_word(word: str) -> str | None:
    """Track card kind for ``word`` (``"BW"`` → ``"black-white"``, ``"wild"`` →
    ``"joker"``), or None."""
    return CARD_WORDS.get(word.lower().strip(".,;:!?()"))


# ============================================================== companies

def companies_at(tokens: list[str], i: int) -> list[tuple[str, int]]:
    """Companies named by a run of tokens starting at ``i``: ``(abbr, tokens used)``,
    longest first.  A run stops at ``,`` and ``+``."""
    out = []
    limit = i
    while limit < len(tokens) and limit - i < 6 and tokens[limit] not in (",", "+"):
        limit += 1
    for j in range(limit, i, -1):
        abbr = company_of(" ".join(tokens[i:j]))
        if abbr:
            out.append((abbr, j - i))
    return out


@functools.lru_cache(maxsize=8192)
def company_of(text: str) -> str | None:
    """The abbreviation of the company ``text`` names (``"ep&rg"``, ``"Union
    Pacific"``, ``"kcc"``), or None; :func:`moderator.rules.components.company_abbr`
    with a cache.  None when ``text`` holds a letter or digit that no company's
    name has (``"两 EPRG"``, ``"几 EPRG"``): such a word is never dropped silently
    as if it were punctuation, so an unread count is refused, not read as 1."""
    if not text.isascii() and any(c.isalnum() and not c.isascii() for c in text):
        return None
    return company_abbr(text)


def company_names() -> dict[str, str]:
    """Every company's abbreviation and full name, lower case, to its
    abbreviation (``{"kcc": "KCC", "kansas city central": "KCC", "up": "UP", ...}``);
    what suggestions ("did you mean KCC?") are chosen from."""
    names = {}
    for c in COMPANIES.values():
        names[c.abbr.lower()] = c.abbr
        names[c.name.lower()] = c.abbr
    names["up"] = UP
    names["union pacific"] = UP
    return names


# ============================================================== cities

_NON_ALNUM_RE = re.compile(r"[^a-z0-9]+")
_SAINT_RE = re.compile(r"\bsaint\b", re.IGNORECASE)


def norm(text: str) -> str:
    """``text`` lower case without anything but letters and digits
    (``"St. Louis"`` → ``"stlouis"``): the key cities are compared by."""
    return _NON_ALNUM_RE.sub("", text.lower())


class CityIndex:
    """The city lookup of one board (build it with :func:`city_index`).

    ``names`` maps the board's ids and full names (by :func:`norm`) to ids;
    ``aliases`` the :data:`CITY_ALIASES` the board has a city for (and no city
    of that id or name); ``prefix`` the first word(s) of each name to the ids
    whose names start so; ``full`` the names (by :func:`norm`) to the names as
    written, ``words`` every lower-case word of a name (``el``, ``paso``).
    ``parts`` is a cache the parser keeps its readings of
    order parts on this board in (they depend on the words and the board only).
    """

    def __init__(self, board: Board):
        self.board = board
        self.names: dict[str, str] = {}
        for c in board.cities.values():
            self.names.setdefault(norm(c.name), c.id)
        for c in board.cities.values():
            self.names[norm(c.id)] = c.id
        by_name = {norm(c.name): c.id for c in board.cities.values()}
        self.aliases: dict[str, str] = {
            alias: by_name[norm(name)] for alias, name in CITY_ALIASES.items()
            if alias not in self.names and norm(name) in by_name
        }
        self.prefix: dict[str, set[str]] = {}
        for c in board.cities.values():
            words = [w for w in (norm(w) for w in c.name.split()) if w]
            for k in range(1, len(words)):
                self.prefix.setdefault("".join(words[:k]), set()).add(c.id)
        self.full: dict[str, str] = {norm(c.name): c.name for c in board.cities.values()}
        self.words: frozenset[str] = frozenset(
            w for c in board.cities.values() for w in re.split(r"[^a-z0-9]+", c.name.lower()) if w)
        self.cache: dict[str, tuple[str | None, list[str]]] = {}
        self.parts: dict[tuple[str, ...], list[tuple[str, object]]] = {}

    def find(self, text: str, short: bool = True) -> tuple[str | None, list[str]]:
        """The city ``text`` names: ``(city id, [])``, or ``(None, ids it could
        be)`` when it is the start of several names (``"San"``), or ``(None,
        [])`` when unknown.

        With ``short`` (the default), ``text`` may be an id, a full name
        (``"saint"`` read as ``"st"``), a common short name (``"LA"``) or the
        first word(s) of one city's name (``"Salt Lake"``). Without it only ids
        and full names count, matched as :meth:`Board.find_city
        <moderator.rules.board.Board.find_city>` matches them: what tells a
        line of plain words from an order ("a little late" names no city).
        Never raises.
        """
        if not short:
            cid = self.names.get(norm(text))
            return (cid, []) if cid else (None, [])
        hit = self.cache.get(text)
        if hit is None:
            key = norm(_SAINT_RE.sub("st", text))
            if not key:
                hit = (None, [])
            elif key in self.names or key in self.aliases:
                hit = (self.names.get(key) or self.aliases[key], [])
            else:
                ids = sorted(self.prefix.get(key, ()))
                hit = (ids[0], []) if len(ids) == 1 else (None, ids)
            if len(self.cache) < 20000:
                self.cache[text] = hit
        return hit


_BOARD_CITIES: "OrderedDict[int, tuple[Board, CityIndex]]" = OrderedDict()
_MAX_BOARDS = 8


def city_index(board: Board) -> CityIndex:
    """The :class:`CityIndex` of ``board``, kept for the few boards used most
    recently (so its caches live as long as the board is in use)."""
    hit = _BOARD_CITIES.get(id(board))
    if hit is None or hit[0] is not board:
        hit = (board, CityIndex(board))
        _BOARD_CITIES[id(board)] = hit
        while len(_BOARD_CITIES) > _MAX_BOARDS:
            _BOARD_CITIES.popitem(last=False)
    else:
        _BOARD_CITIES.move_to_end(id(board))
    return hit[1]
