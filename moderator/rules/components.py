"""The game's components: companies, shares, trains, track cards, dividend cards.

Everything here is fixed by the rules (rules: Components) and shared by the board,
the engine and the order language.  Money is counted in millions of dollars.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Names as types: plain strings, named for the reader of a signature.
CompanyId = str
"""A company's abbreviation, as in orders and files: ``"KCC"`` (``UP`` only where a
share kind is meant)."""
ShareKind = str
"""A kind of share card: a company abbreviation or ``"UP"``."""
TrackType = str
"""A track type of a space or a track card: one of ``TRACK_TYPES``; a card may
also be ``JOKER``."""
SectionId = str
"""A section's id: its two city ids, sorted, joined by ``-``: ``"DEN-KCY"``."""
CityId = str
"""A city's short id: ``"DEN"``."""
PlayerName = str
"""A player's name as given to ``Game.new``."""

TRACK_TYPES: tuple[str, ...] = ("plain", "black-white", "black", "white")
"""The four track types of board spaces and track cards (rules: Components)."""

JOKER = "joker"
"""A track card that matches any track type."""

TRACK_CARD_COUNTS: dict[str, int] = {
    "plain": 14,
    "black-white": 9,
    "black": 7,
    "white": 6,
    JOKER: 4,
}
"""Number of track cards of each kind; 40 in all (rules: Components)."""

UP = "UP"
"""Abbreviation of Union Pacific, the company without trains."""

UP_SHARES = 20
DIVIDEND_CARDS = 4
DIVIDEND = "DIV"
"""How a dividend card is written in the share stack."""


@dataclass(frozen=True)
class Company:
    """One railway company of the game.

    ``abbr`` is the short name used in orders and files, ``trains`` the number of
    trains it owns in all (including the one or two on its starting spaces), and
    ``shares`` the number of its share cards (rules: Components).
    """

    abbr: str
    name: str
    colour: str
    trains: int
    shares: int
    aliases: tuple[str, ...] = ()


COMPANIES: dict[str, Company] = {
    c.abbr: c
    for c in (
        Company("WW", "Wyoming & Western", "grey", 7, 6, ("W&W", "WYOMING")),
        Company("MRR", "Marquette Rocky Road", "blue", 8, 6, ("MARQUETTE",)),
        Company("KCC", "Kansas City Central", "brown", 9, 7, ("KANSAS",)),
        Company("ESL", "Empire State Line", "orange", 10, 7, ("EMPIRE",)),
        Company("UMR", "United Mexican Railways", "white", 11, 8, ("MEXICAN",)),
        Company("SFRB", "Sioux Falls Royal Blue", "purple", 13, 9, ("SIOUX", "SFRB")),
        Company("DM", "Denver Midland", "black", 14, 10, ("DENVER",)),
        Company("MS", "Miami Southern", "yellow", 17, 12, ("MIAMI",)),
        Company("BNL", "Billings Northern Light", "red", 19, 15, ("BILLINGS",)),
        Company("EPRG", "El Paso & Rio Grande", "green", 23, 18, ("EP&RG", "EL PASO", "EPRG")),
    )
}
"""The ten companies that build track, in order of size (rules: Components)."""

SHARE_COMPANIES: tuple[str, ...] = tuple(COMPANIES) + (UP,)
"""Every kind of share card: the ten companies and Union Pacific."""

COMPANY_SHARES = sum(c.shares for c in COMPANIES.values())  # 98
TOTAL_TRAINS = sum(c.trains for c in COMPANIES.values())  # 131


def _key(text: str) -> str:
    """Normalise a company name for lookup: upper case, '&' as 'AND', no punctuation."""
    text = text.upper().replace("&", " AND ")
    return re.sub(r"[^A-Z0-9]+", "", text)


_COMPANY_KEYS: dict[str, str] = {}
for _c in COMPANIES.values():
    for _name in (_c.abbr, _c.name, *_c.aliases):
        _COMPANY_KEYS[_key(_name)] = _c.abbr
_COMPANY_KEYS[_key("Union Pacific")] = UP
_COMPANY_KEYS[_key("UP")] = UP
_COMPANY_KEYS[_key("U.P.")] = UP


def company_abbr(text: str) -> str | None:
    """Return the abbreviation for a company named by ``text``, or None.

    Accepts abbreviations and full names in any case, '&' or 'and', with or without
    punctuation: ``"ep&rg"``, ``"El Paso and Rio Grande"`` and ``"EPRG"`` all give
    ``"EPRG"``; ``"union pacific"`` gives ``"UP"``.
    """
    return _COMPANY_KEYS.get(_key(text))


def company_value(trains_on_board: int) -> int:
    """Dividend value of a company in millions: home station (1) + its trains on the
    board (rules: Company dividends)."""
    return 1 + trains_on_board


UP_TABLE: dict[int, tuple[int, int, int, int, int]] = {
    1: (0, 0, 0, 0, 0),
    2: (10, 8, 6, 4, 2),
    3: (15, 12, 9, 6, 3),
    4: (20, 16, 12, 8, 4),
}
"""Union Pacific payout by dividend number (1-4) for ranks 1-5, in millions
(rules: Union Pacific dividends, table from the second-edition text)."""
