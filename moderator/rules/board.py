"""The board: cities, track sections with their train spaces, home stations.

The board is data (a YAML file), never code (rules: The board).  The default board
``moderator/boards/north-america.yaml`` is this project's own, modelled on public
descriptions of the printed one; see ``check_board`` for the constraints any board
must meet (listed for authors in docs/board.md).

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

import importlib.resources
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .components import COMPANIES, TRACK_TYPES

#: The board shipped with pbem: the package data ``moderator/boards/north-america.yaml``,
#: found through ``importlib.resources`` (a ``pathlib.Path`` in every install mode:
#: venv, ``--user``, pipx, wheel, editable, and in a source tree).
DEFAULT_BOARD_PATH: Path = importlib.resources.files("moderator").joinpath(  # type: ignore[assignment]
    "boards", "north-america.yaml")


_DEFAULT_BOARD: "Board | None" = None


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
                data = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            except yaml.YAMLError as exc:
                raise BoardError(f"{path}: not valid YAML: {exc}") from exc
        return cls.from_dict(data)

    @classmethod
    def default(cls) -> "Board":
        """The board shipped with pbem (``moderator/boards/north-america.yaml``).

        Loaded once and shared: boards are never modified after loading."""
        global _DEFAULT_BOARD
        if _DEFAULT_BOARD is None:
            _DEFAULT_BOARD = cls.load(DEFAULT_BOARD_PATH)
        return _DEFAULT_BOARD

    # ---------------------------------------------------------------- lookups
    def adjacency(self) -> dict[str, tuple[Section, ...]]:
        """``{city: sections touching it, sorted by id}`` for every city, computed
        once per board and cached (the engine's network searches use it).  The board
        is treated as immutable once loaded; ``Board.from_dict`` builds a new one."""
        cached = self.__dict__.get("_adjacency")
        if cached is None:
            at: dict[str, list[Section]] = {cid: [] for cid in self.cities}
            for s in sorted(self.sections.values(), key=lambda s: s.id):
                for c in s.cities:
                    at.setdefault(c, []).append(s)
            cached = {c: tuple(v) for c, v in at.items()}
            self.__dict__["_adjacency"] = cached
        return cached

    def sections_at(self, city: str) -> list[Section]:
        """Sections touching ``city``, sorted by id (from the cached adjacency)."""
        return list(self.adjacency().get(city, ()))

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


# ------------------------------------------------------------------ validation
#
# The constraints below come from the project's board facts ("What an authored
# board must satisfy") and the rules (The board, Components).  They are documented
# for board authors in docs/board.md.

MIN_CITIES, MAX_CITIES = 35, 45
"""About 40 cities are joined by the network (docs/board.md)."""

MIN_SPACES, MAX_SPACES = 1, 4
"""Train spaces per section, starting spaces included (rules: The board)."""

LAT_RANGE: tuple[float, float] = (14.0, 72.0)
LON_RANGE: tuple[float, float] = (-170.0, -50.0)
"""A box around North America; every city must lie inside it."""

ALL_TYPES_COMPANY = "EPRG"
"""The one company that may use all four track types and has two starting spaces."""

STARTING_SPACES = len(COMPANIES) + 1
"""Starting spaces on the board: one per company, two for EPRG (11)."""

ALL_TRAINS = sum(c.trains for c in COMPANIES.values())
"""Trains of all companies together (131)."""

MIN_NEUTRAL_SPACES = ALL_TRAINS - STARTING_SPACES
"""Neutral spaces needed at the very least: every train not on a starting space
(131 - 11 = 120) must have a space to go to."""

MIN_CONTESTED_SECTIONS = 5
"""Sections of 1-2 spaces (where companies block each other) a board should have."""

WARNING_PREFIX = "warning: "
"""``check_board`` messages starting with this flag a board that is legal but plays
poorly; every other message is a violated constraint."""

_SHARE_ORDER: tuple[str, ...] = ("plain", "black-white", "black", "white")
"""Track types from most to least common, as the track card counts 14:9:7:6."""


def _starts_of(board: Board, abbr: str) -> list[str]:
    """Ids of the sections holding starting spaces of company ``abbr``, one entry per
    starting space (a section listing the company twice appears twice)."""
    return [sid for sid, s in board.sections.items() for co in s.starts if co == abbr]


def _components(board: Board) -> list[set[str]]:
    """The connected parts of the network as sets of city ids, in the order of their
    first city in the file."""
    parts: list[set[str]] = []
    placed: set[str] = set()
    for start in board.cities:
        if start in placed:
            continue
        part = {start}
        frontier = [start]
        while frontier:
            city = frontier.pop()
            for s in board.sections_at(city):
                other = s.other(city)
                if other not in part:
                    part.add(other)
                    frontier.append(other)
        placed |= part
        parts.append(part)
    return parts


def reachable_sections(board: Board, abbr: str) -> list[str]:
    """Ids (sorted) of the sections company ``abbr`` could ever build on, ignoring
    other companies' trains: breadth-first from its home station, through sections
    it can use.  A section is usable if it has a neutral space of a track type the
    company may use, or holds that company's starting space; a usable section is
    reachable once one of its cities is reached, and traversing it reaches the other.

    Returns [] for a company the board does not list or whose home is not a city."""
    route = board.companies.get(abbr)
    if route is None or route.home not in board.cities:
        return []
    usable = {
        sid
        for sid, s in board.sections.items()
        if abbr in s.starts or any(t in route.types for t in s.spaces)
    }
    seen = {route.home}
    frontier = [route.home]
    reached: set[str] = set()
    while frontier:
        city = frontier.pop()
        for s in board.sections_at(city):
            if s.id not in usable:
                continue
            reached.add(s.id)
            other = s.other(city)
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    return sorted(reached)


def neutral_space_counts(board: Board) -> dict[str, int]:
    """Number of neutral spaces of each track type, in the order of TRACK_TYPES, then
    any unknown types found on the board."""
    counts = {t: 0 for t in TRACK_TYPES}
    for s in board.sections.values():
        for t in s.spaces:
            counts[t] = counts.get(t, 0) + 1
    return counts


def check_board(board: Board) -> list[str]:
    """Check ``board`` against every constraint an authored board must satisfy
    (listed for authors in docs/board.md).

    Returns a list of plain-English messages, one per violated constraint, each
    naming the constraint and the offending city, section, company or track type,
    e.g. ``"section DEN-OMA has 5 spaces; a section has 1-4"``.  An empty list means
    the board is valid.  Messages starting with WARNING_PREFIX (``"warning: "``)
    flag a board that is legal but plays poorly (too few contested sections).

    Never raises for a board built by ``Board.from_dict``; structural errors (unknown
    cities in sections, duplicate ids, missing keys) are raised there as BoardError,
    which ``check_board_file`` turns into a message.

    Checks, in order: city count (35-45); city positions inside North America (lat
    14..72, lon -170..-50); short city ids; city names and ids naming one city only;
    no '-' or '/' in city names; section size 1-4; known track types; every track type
    occurring and the shares following the card counts (plain > black-white > black >
    white); a connected network; unknown and missing companies; 1-3 track types per
    company (EPRG all 4); home stations being cities; starting spaces (EPRG exactly
    two, every other company one, each on a section touching the home station, at most
    one per company and section); each company reaching through its usable sections
    at least as many sections as it has trains; at least 120 neutral spaces; and (as
    a warning) at least 5 contested sections of 1-2 spaces.
    """
    msgs: list[str] = []
    type_list = ", ".join(TRACK_TYPES)

    # ---- cities
    n = len(board.cities)
    if not MIN_CITIES <= n <= MAX_CITIES:
        msgs.append(f"city count {n} outside {MIN_CITIES}-{MAX_CITIES}")
    for c in board.cities.values():
        if not (LAT_RANGE[0] <= c.lat <= LAT_RANGE[1] and LON_RANGE[0] <= c.lon <= LON_RANGE[1]):
            msgs.append(
                f"city {c.id} ({c.name}) lies at lat {c.lat:g}, lon {c.lon:g}, outside North America "
                f"(lat {LAT_RANGE[0]:g}..{LAT_RANGE[1]:g}, lon {LON_RANGE[0]:g}..{LON_RANGE[1]:g})"
            )
        if not re.fullmatch(r"[A-Z][A-Z0-9]{1,4}", c.id):
            msgs.append(f"city id {c.id!r} is not a short id (2-5 letters or digits, starting with a letter)")
        if re.search(r"[-/–—]", c.name):
            msgs.append(
                f"city name {c.name!r} contains '-' or '/'; sections are named 'City-City', "
                "so city names must not"
            )
    owner: dict[str, str] = {_norm(c.id): c.id for c in board.cities.values()}
    for c in board.cities.values():
        label = _norm(c.name)
        if not label:
            msgs.append(f"city {c.id} has an empty name")
            continue
        other = owner.setdefault(label, c.id)
        if other != c.id:
            msgs.append(
                f"city name {c.name!r} of {c.id} is also a name or id of {other}; "
                "each name and id must identify one city"
            )

    # ---- sections and track types
    for s in board.sections.values():
        if not MIN_SPACES <= s.capacity <= MAX_SPACES:
            msgs.append(f"section {s.id} has {s.capacity} spaces; a section has {MIN_SPACES}-{MAX_SPACES}")
        for t in dict.fromkeys(s.spaces):
            if t not in TRACK_TYPES:
                msgs.append(f"section {s.id} has a space of unknown track type {t!r}; track types are {type_list}")
    counts = neutral_space_counts(board)
    for t in TRACK_TYPES:
        if counts[t] == 0:
            msgs.append(f"track type {t} has no neutral space; every track type must occur on the board")
    for more, less in zip(_SHARE_ORDER, _SHARE_ORDER[1:]):
        if counts[less] >= counts[more] and counts[less] > 0:
            relation = "more" if counts[less] > counts[more] else "as many"
            msgs.append(
                f"track type {less} has {relation} neutral spaces ({counts[less]}) "
                f"{'than' if relation == 'more' else 'as'} {more} ({counts[more]}); shares should "
                "follow the card counts plain > black-white > black > white"
            )

    # ---- one connected network
    parts = _components(board)
    if len(parts) > 1:
        main = max(parts, key=len)  # the first of the largest parts, in file order
        lost = [cid for cid in board.cities if cid not in main]
        first = next(cid for cid in board.cities if cid in main)
        msgs.append(f"the network is not connected: {', '.join(lost)} cannot be reached from {first}")

    # ---- companies
    for abbr in board.companies:
        if abbr not in COMPANIES:
            msgs.append(f"company {abbr} is not a company of the game; companies are {', '.join(COMPANIES)}")
    for s in board.sections.values():
        for co in dict.fromkeys(s.starts):
            if co not in COMPANIES:
                msgs.append(f"section {s.id} holds a starting space of unknown company {co}")
            elif s.starts.count(co) > 1:
                msgs.append(
                    f"section {s.id} holds {s.starts.count(co)} starting spaces of {co}; "
                    "a company may have only one train per section"
                )
    raw_companies = board.source.get("companies") if isinstance(board.source, dict) else None
    for abbr, company in COMPANIES.items():
        route = board.companies.get(abbr)
        if route is None:
            msgs.append(f"company {abbr} is missing from companies; every company needs a home station and track types")
            continue
        raw = raw_companies.get(abbr) if isinstance(raw_companies, dict) else None
        if isinstance(raw, dict) and not isinstance(raw.get("types"), list):
            msgs.append(f"company {abbr}: types must be a list of track types, e.g. [plain, black]")
        for t in sorted(route.types):
            if t not in TRACK_TYPES:
                msgs.append(f"company {abbr} may use unknown track type {t!r}; track types are {type_list}")
        k = len(route.types)
        if abbr == ALL_TYPES_COMPANY:
            if set(route.types) != set(TRACK_TYPES):
                msgs.append(f"company {abbr} may use {k} track types; {abbr} may use all {len(TRACK_TYPES)}")
        elif not 1 <= k <= 3:
            msgs.append(f"company {abbr} may use {k} track types; every company but {ALL_TYPES_COMPANY} may use 1-3")
        home_ok = route.home in board.cities
        if not home_ok:
            msgs.append(f"company {abbr}'s home station {route.home} is not a city of the board")
        starts = _starts_of(board, abbr)
        want = 2 if abbr == ALL_TYPES_COMPANY else 1
        if len(starts) != want:
            noun = "starting space" if len(starts) == 1 else "starting spaces"
            if abbr == ALL_TYPES_COMPANY:
                rule = f"{abbr} has exactly {want}"
            else:
                rule = f"every company but {ALL_TYPES_COMPANY} has exactly {want}"
            msgs.append(f"company {abbr} has {len(starts)} {noun}; {rule}")
        if home_ok:
            for sid in dict.fromkeys(starts):
                if route.home not in board.sections[sid].cities:
                    msgs.append(
                        f"starting space of {abbr} on section {sid} does not touch its home station {route.home}"
                    )
            reach = len(reachable_sections(board, abbr))
            if reach < company.trains:
                msgs.append(
                    f"company {abbr} can reach only {reach} section{'' if reach == 1 else 's'} through its track types "
                    f"from {route.home}; it has {company.trains} trains"
                )

    # ---- capacity
    neutral = sum(len(s.spaces) for s in board.sections.values())
    if neutral < MIN_NEUTRAL_SPACES:
        msgs.append(
            f"the board has {neutral} neutral spaces; it needs at least {MIN_NEUTRAL_SPACES} "
            f"({ALL_TRAINS} trains, {STARTING_SPACES} of them on starting spaces)"
        )
    contested = sum(1 for s in board.sections.values() if 1 <= s.capacity <= 2)
    if contested < MIN_CONTESTED_SECTIONS:
        msgs.append(
            f"{WARNING_PREFIX}only {contested} sections have 1-2 spaces; at least "
            f"{MIN_CONTESTED_SECTIONS} contested sections are expected where companies block each other"
        )
    return msgs


def check_board_file(path: str | Path) -> list[str]:
    """Load the board file at ``path`` and check it (the constraints of docs/board.md).

    Returns ``check_board``'s messages for a readable board, or a one-element list
    naming the file and the problem when it cannot be read (missing file, no
    permission, not UTF-8, not YAML, not a board mapping, unknown city in a section,
    duplicate ids, missing keys).  Never raises for a bad file: a board author gets a
    message, not a traceback."""
    try:
        board = Board.load(path)
    except OSError as exc:
        return [f"cannot read board file {path}: {exc.strerror or exc}"]
    except BoardError as exc:
        text = str(exc)
        return [text if text.startswith(str(path)) else f"{path}: {text}"]
    except UnicodeDecodeError as exc:
        return [f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})"]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        return [f"{path}: malformed board file: {exc!r}"]
    return check_board(board)
