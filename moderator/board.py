"""The board: cities, track sections with their train spaces, home stations.

The board is data (a YAML file), never code (rules: The board).  The default board
``moderator/boards/north-america.yaml`` is this project's own, modelled on public
descriptions of the printed one; see ``check_board`` for the constraints any board
must meet (shared/rules/board-facts.md).

File format::

    name: North America (pbem)
    cities:
      - {id: DEN, name: Denver, lat: 39.74, lon: -104.99}
    companies:
      DM: {home: DEN, types: [plain, black]}
    sections:
      - {between: [DEN, OMA], spaces: [plain, black-white]}
      - {between: [DEN, CHY], spaces: [plain], starts: [DM]}

``spaces`` lists the neutral train spaces of a section by track type; ``starts``
lists the companies whose coloured starting space lies on that section (each holds
that company's train from the start).  A section's capacity is
``len(spaces) + len(starts)`` and must be 1-4.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .components import COMPANIES, TRACK_TYPES

DEFAULT_BOARD_PATH = Path(__file__).with_name("boards") / "north-america.yaml"


class BoardError(ValueError):
    """A board file that cannot be read or names unknown cities/companies."""


@dataclass(frozen=True)
class City:
    """A city of the board: short ``id`` used in orders (e.g. ``DEN``), full ``name``,
    approximate latitude and longitude in degrees."""

    id: str
    name: str
    lat: float
    lon: float


@dataclass(frozen=True)
class Section:
    """A track section joining two cities.

    ``id`` is ``"A-B"`` with the two city ids in sorted order; ``spaces`` holds the
    track type of each neutral train space; ``starts`` the companies whose starting
    space is on this section (rules: The board)."""

    id: str
    cities: tuple[str, str]
    spaces: tuple[str, ...]
    starts: tuple[str, ...] = ()

    @property
    def capacity(self) -> int:
        """Number of train spaces on the section, starting spaces included."""
        return len(self.spaces) + len(self.starts)

    def other(self, city: str) -> str:
        """The city at the other end from ``city``."""
        a, b = self.cities
        return b if city == a else a


@dataclass(frozen=True)
class CompanyRoute:
    """Where a company stands on the board: its ``home`` station city, the track
    ``types`` it may use, and the ids of the sections holding its starting space(s)."""

    home: str
    types: frozenset[str]
    starts: tuple[str, ...]


def section_id(a: str, b: str) -> str:
    """Canonical id of the section between cities ``a`` and ``b`` (sorted, ``A-B``)."""
    x, y = sorted((a, b))
    return f"{x}-{y}"


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


@dataclass
class Board:
    """A whole board.  ``cities`` and ``sections`` are keyed by id, ``companies`` by
    company abbreviation.  ``source`` is the parsed YAML mapping (for validation)."""

    name: str
    cities: dict[str, City]
    sections: dict[str, Section]
    companies: dict[str, CompanyRoute]
    source: dict[str, Any] = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- loading
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Board":
        """Build a board from the parsed YAML mapping.

        Raises BoardError when the structure is unusable (missing keys, wrong types,
        a section naming an unknown city, a duplicate id).  Rule constraints (counts,
        types, reachability) are checked separately by ``check_board``."""
        if not isinstance(data, dict):
            raise BoardError("a board file must be a mapping with cities, companies and sections")
        try:
            cities: dict[str, City] = {}
            for c in data["cities"]:
                cid = str(c["id"]).upper()
                if cid in cities:
                    raise BoardError(f"city id {cid} appears twice")
                cities[cid] = City(cid, str(c["name"]), float(c["lat"]), float(c["lon"]))
            sections: dict[str, Section] = {}
            starts_of: dict[str, list[str]] = {}
            for s in data["sections"]:
                a, b = (str(x).upper() for x in s["between"])
                for x in (a, b):
                    if x not in cities:
                        raise BoardError(f"section {a}-{b} names unknown city {x}")
                if a == b:
                    raise BoardError(f"section {a}-{b} joins a city to itself")
                sid = section_id(a, b)
                if sid in sections:
                    raise BoardError(f"section {sid} appears twice")
                spaces = tuple(str(t) for t in s.get("spaces") or ())
                starts = tuple(str(x).upper() for x in s.get("starts") or ())
                sections[sid] = Section(sid, tuple(sorted((a, b))), spaces, starts)  # type: ignore[arg-type]
                for co in starts:
                    starts_of.setdefault(co, []).append(sid)
            companies: dict[str, CompanyRoute] = {}
            for abbr, c in (data.get("companies") or {}).items():
                abbr = str(abbr).upper()
                home = str(c["home"]).upper()
                companies[abbr] = CompanyRoute(
                    home, frozenset(str(t) for t in c["types"]), tuple(starts_of.get(abbr, ()))
                )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, BoardError):
                raise
            raise BoardError(f"malformed board file: {exc!r}") from exc
        return cls(str(data.get("name", "unnamed board")), cities, sections, companies, data)

    @classmethod
    def load(cls, path: str | Path) -> "Board":
        """Read a board YAML file (safe loader).  Raises BoardError, OSError."""
        with open(path, encoding="utf-8") as fh:
            try:
                data = yaml.safe_load(fh)
            except yaml.YAMLError as exc:
                raise BoardError(f"{path}: not valid YAML: {exc}") from exc
        return cls.from_dict(data)

    @classmethod
    def default(cls) -> "Board":
        """The board shipped with pbem (``moderator/boards/north-america.yaml``)."""
        return cls.load(DEFAULT_BOARD_PATH)

    # ---------------------------------------------------------------- lookups
    def sections_at(self, city: str) -> list[Section]:
        """Sections touching ``city``, sorted by id."""
        return [s for s in self.sections.values() if city in s.cities]

    def find_city(self, text: str) -> str | None:
        """City id for ``text``: an id or a full name, case- and punctuation-
        insensitive (``"den"``, ``"Denver"``, ``"kansas city"``).  None if unknown."""
        key = _norm(text)
        for c in self.cities.values():
            if key in (_norm(c.id), _norm(c.name)):
                return c.id
        return None

    def find_section(self, text: str) -> str | None:
        """Section id for ``"CITY-CITY"`` in either order, cities by id or name
        (``"Omaha-Denver"``, ``"den-oma"``).  None if no such section."""
        parts = [p.strip() for p in re.split(r"\s*[-–—/]\s*|\s+to\s+", text.strip()) if p.strip()]
        if len(parts) != 2:
            # names with a hyphen inside are not used on our boards; try every split
            return None
        a, b = (self.find_city(p) for p in parts)
        if a is None or b is None:
            return None
        sid = section_id(a, b)
        return sid if sid in self.sections else None

    def section_name(self, sid: str) -> str:
        """Human name of a section: ``"Denver-Omaha"``."""
        a, b = self.sections[sid].cities
        return f"{self.cities[a].name}-{self.cities[b].name}"
