"""The rail network: the trains on the board and what they connect.

``Network`` owns the placements of the trains on the neutral spaces of the board
(``placed``) and the trains left in the box (``box``) and answers the questions of
rules: BUILD, step 2 (which cities a company's network reaches, where a train may
go, why it may not) and of option dead_track_redraw (free spaces per track type).
The 18xx.games ``Graph`` is the model: the game asks, the network keeps derived
caches (``_Derived``) up to date incrementally when a train is placed and drops
them on ``invalidate()`` after a direct change of ``placed`` or ``box``.

``Game`` keeps one ``Network`` over its own ``placed`` and ``box`` dicts (the same
objects, which the game file saves) and places every train through ``place``.
"""
from __future__ import annotations

from bisect import insort
from typing import Any

from .board import Board, Section
from .components import COMPANIES, TRACK_TYPES, CityId, CompanyId, SectionId, TrackType


class _Derived:
    """Caches derived from the board, ``placed`` and ``box`` (rules: BUILD, step
    2), updated incrementally by ``Network.place``, never saved.

    ``adj`` city -> touching sections; ``types`` company -> track types it may use;
    ``secs`` company -> sections holding its trains (starting spaces included);
    ``net`` company -> network cities; ``pset`` company -> every ``(section,
    type)`` it may build on, ignoring its box; ``lists`` company -> {type: sorted
    section ids} (the same placements); ``tot`` type -> placements of that type
    over the companies with trains in the box; ``free`` type -> empty neutral
    spaces on the board."""

    __slots__ = ("adj", "types", "secs", "net", "pset", "lists", "tot", "free")

    adj: dict[str, tuple[Section, ...]]
    types: dict[str, frozenset[str]]
    secs: dict[str, set[str]]
    net: dict[str, set[str]]
    pset: dict[str, set[tuple[str, str]]]
    lists: dict[str, dict[str, list[str]]]
    tot: dict[str, int]
    free: dict[str, int]

    def copy(self) -> "_Derived":
        """An independent copy (the board-derived ``adj`` and ``types`` shared)."""
        e = _Derived()
        e.adj, e.types = self.adj, self.types
        e.secs = {c: set(v) for c, v in self.secs.items()}
        e.net = {c: set(v) for c, v in self.net.items()}
        e.pset = {c: set(v) for c, v in self.pset.items()}
        e.lists = {c: {t: list(l) for t, l in v.items()} for c, v in self.lists.items()}
        e.tot = dict(self.tot)
        e.free = dict(self.free)
        return e


_DISTINCT: dict[tuple[str, ...], tuple[str, ...]] = {}


def _distinct(spaces: tuple[str, ...]) -> tuple[str, ...]:
    """The distinct track types of a section's spaces, in order (memoised)."""
    out = _DISTINCT.get(spaces)
    if out is None:
        out = _DISTINCT[spaces] = tuple(dict.fromkeys(spaces))
    return out


class Network:
    """The trains of the ten companies on ``board`` and the networks they form.

    ``placed`` maps each section id to the occupants of its neutral spaces, in the
    order of ``Section.spaces`` (a company abbreviation or None for an empty
    space); the trains on the coloured starting spaces are the board's
    (``Section.starts``).  ``box`` maps each company to its trains not yet on the
    board.  Both dicts are shared with the ``Game`` that saves them; ``place`` is
    the one way the rules change them.  Callers that change them directly call
    ``invalidate()``."""

    __slots__ = ("board", "placed", "box", "_d")

    def __init__(self, board: Board, placed: dict[SectionId, list[CompanyId | None]],
                 box: dict[CompanyId, int]) -> None:
        self.board = board
        self.placed = placed
        self.box = box
        self._d: _Derived | None = None

    def copy(self, placed: dict[SectionId, list[CompanyId | None]], box: dict[CompanyId, int]) -> "Network":
        """A network over ``placed`` and ``box`` (copies of this one's) with copies of
        this one's caches, so a copied game need not recompute them."""
        n = Network(self.board, placed, box)
        if self._d is not None:
            n._d = self._d.copy()
        return n

    # ================================================================= caches
    def invalidate(self) -> None:
        """Drop the derived caches (networks, placements, free spaces); they are
        recomputed on the next question."""
        self._d = None

    def _derived(self) -> _Derived:
        d = self._d
        if d is None:
            d = self._d = self._compute()
        return d

    def _compute(self) -> _Derived:
        """The caches computed from scratch (rules: BUILD, step 2)."""
        d = _Derived()
        board = self.board
        d.adj = board.adjacency()
        d.types = {
            c: (board.companies[c].types if c in board.companies else frozenset())
            for c in COMPANIES
        }
        d.secs = {c: set() for c in COMPANIES}
        d.free = {t: 0 for t in TRACK_TYPES}
        for sid, sec in board.sections.items():
            for c in sec.starts:
                if c in d.secs:
                    d.secs[c].add(sid)
            occupants = self.placed.get(sid) or [None] * len(sec.spaces)
            for t, occ in zip(sec.spaces, occupants):
                if occ is None:
                    d.free[t] = d.free.get(t, 0) + 1
                elif occ in d.secs:
                    d.secs[occ].add(sid)
        d.net = {c: self._search(c, d) for c in COMPANIES}
        d.pset, d.lists = {}, {}
        d.tot = {t: 0 for t in TRACK_TYPES}
        placed = self.placed
        for c in COMPANIES:
            types, secs = d.types[c], d.secs[c]
            found = set()
            for city in d.net[c]:
                for s in d.adj.get(city, ()):
                    if s.id not in secs:
                        for t, occ in zip(s.spaces, placed[s.id]):
                            if occ is None and t in types:
                                found.add((s.id, t))
            lists: dict[str, list[str]] = {}
            for sid, t in sorted(found):
                lists.setdefault(t, []).append(sid)
            d.pset[c], d.lists[c] = found, lists
            if self.box[c] > 0:
                for t, sids in lists.items():
                    d.tot[t] += len(sids)
        return d

    def _search(self, company: str, d: _Derived) -> set[str]:
        """The cities reached from ``company``'s home station through sections
        holding its trains (a depth-first search)."""
        route = self.board.companies.get(company)
        if route is None:
            return set()
        secs = d.secs[company]
        seen = {route.home}
        todo = [route.home]
        while todo:
            city = todo.pop()
            for s in d.adj.get(city, ()):
                if s.id in secs:
                    other = s.other(city)
                    if other not in seen:
                        seen.add(other)
                        todo.append(other)
        return seen

    # ================================================================= change
    def place(self, company: CompanyId, sid: SectionId, space: TrackType) -> None:
        """Put a train of ``company`` from the box on the first empty ``space``-type
        neutral space of section ``sid`` (no rules check: ``Game.resolve`` did it)
        and update the caches incrementally: the company's network grows from the
        section's far end (and on through its other trains); the section's last
        free space of that type is no longer a placement for anyone; the company may
        not build on the section again; the sections at its new network cities
        become placements for it.  AssertionError when no such space is empty."""
        sec = self.board.sections[sid]
        row = self.placed[sid]
        for idx, t in enumerate(sec.spaces):
            if t == space and row[idx] is None:
                break
        else:
            raise AssertionError(f"no empty {space} space on {sid}")
        row[idx] = company
        d = self._d
        if d is not None and self.box[company] == 1:  # its last train: no more placements
            for t, sids in d.lists[company].items():
                d.tot[t] -= len(sids)
        self.box[company] -= 1
        if d is None:
            return
        d.free[space] -= 1
        secs = d.secs[company]
        secs.add(sid)
        net = d.net[company]
        added: list[str] = []
        todo = [c for c in sec.cities if c not in net]
        for c in todo:
            net.add(c)
            added.append(c)
        adj = d.adj
        while todo:
            city = todo.pop()
            for s in adj.get(city, ()):
                if s.id in secs:
                    other = s.other(city)
                    if other not in net:
                        net.add(other)
                        added.append(other)
                        todo.append(other)
        # the section lost one free ``space``-type space: when none is left, nobody
        # may build there on that type any more; the company itself may not build
        # on the section at all now
        for t, occ in zip(sec.spaces, row):
            if occ is None and t == space:
                break
        else:
            key = (sid, space)
            for c, pset in d.pset.items():
                if key in pset:
                    self._drop(c, key, d)
        pset = d.pset[company]
        for t in _distinct(sec.spaces):
            if (sid, t) in pset:
                self._drop(company, (sid, t), d)
        # the company's network reached new cities: the sections there join its
        # placements (adding only; nothing else changed on them)
        if added:
            types = d.types[company]
            lists = d.lists[company]
            live = self.box[company] > 0
            placed = self.placed
            for city in added:
                for s in adj.get(city, ()):
                    sid2 = s.id
                    if sid2 in secs:
                        continue
                    for t, occ in zip(s.spaces, placed[sid2]):
                        if occ is None and t in types and (sid2, t) not in pset:
                            pset.add((sid2, t))
                            insort(lists.setdefault(t, []), sid2)
                            if live:
                                d.tot[t] += 1

    def _drop(self, company: str, key: tuple[str, str], d: _Derived) -> None:
        d.pset[company].discard(key)
        d.lists[company][key[1]].remove(key[0])
        if self.box[company] > 0:
            d.tot[key[1]] -= 1

    # ================================================================= questions
    def companies_on(self, sid: SectionId) -> set[CompanyId]:
        """Companies with a train on section ``sid`` (starting spaces included).
        KeyError for an unknown section."""
        return set(self.board.sections[sid].starts) | {c for c in self.placed[sid] if c}

    def network_cities(self, company: CompanyId) -> set[CityId]:
        """City ids in ``company``'s network: its home station and every city
        reached from it through sections holding its trains (rules: BUILD, step
        2); a new set.  KeyError for an unknown company."""
        return set(self._derived().net[company])

    def company_sections(self, company: CompanyId) -> list[SectionId]:
        """Ids (sorted) of the sections holding a train of ``company``, starting
        spaces included."""
        return sorted(self._derived().secs[company])

    def free_space_types(self, sid: SectionId) -> list[TrackType]:
        """Track types of the empty neutral spaces on section ``sid`` (with repeats,
        in the order of the section's spaces)."""
        sec = self.board.sections[sid]
        return [t for t, occ in zip(sec.spaces, self.placed[sid]) if occ is None]

    def free_spaces(self, track_type: TrackType) -> int:
        """Empty neutral spaces of ``track_type`` on the whole board (0 for an
        unknown type)."""
        return self._derived().free.get(track_type, 0)

    def full_track_types(self) -> list[TrackType]:
        """Track types every space of which is full (their cards are dead; option
        dead_track_redraw), in the order of TRACK_TYPES."""
        free = self._derived().free
        return [t for t in TRACK_TYPES if free.get(t, 0) == 0]

    def placements(self, company: CompanyId) -> list[tuple[SectionId, TrackType]]:
        """Every ``(section id, space track type)`` where a train of ``company`` may
        be placed now, whatever track card is held (rules: BUILD, step 2), sorted;
        empty when its box is empty or the name is unknown."""
        if self.box.get(company, 0) <= 0:
            return []
        return sorted(self._derived().pset[company])

    def placement_lists(self) -> dict[CompanyId, dict[TrackType, list[SectionId]]]:
        """Each company's placements ignoring its box, by track type: ``{company:
        {type: sorted section ids}}`` (the cache itself: do not change it)."""
        return self._derived().lists

    def placement_totals(self) -> dict[TrackType, int]:
        """Placements of each track type summed over the companies with trains in
        the box: ``{type: count}`` (the cache itself: do not change it).  A type
        with a nonzero count can be built on with a card of that type or a joker."""
        return self._derived().tot

    def can_place(self, company: CompanyId, sid: SectionId, space: TrackType) -> bool:
        """Whether a train of ``company`` may go on a ``space``-type space of
        section ``sid`` now (rules: BUILD, step 2), whatever card is held."""
        d = self._d or self._derived()
        return self.box.get(company, 0) > 0 and (sid, space) in d.pset[company]

    def why_not(self, company: CompanyId, sid: SectionId, space: TrackType) -> dict[str, Any] | None:
        """Why a train of ``company`` may not go on a ``space``-type space of section
        ``sid``, or None if it may (rules: BUILD, step 2, in the order listed there
        after the box: trains left, one train per section, company's types, the
        section's neutral spaces, empty space, touching the network).

        The reason is a dict: ``"code"`` (``no_trains_left``,
        ``already_on_section``, ``type_not_used``, ``no_neutral_space``,
        ``no_such_space``, ``spaces_taken``, ``not_connected``) and the values its
        wording needs (``templates/words/illegal.txt``, macro ``cannot_build``):
        ``company``, ``section`` (id), ``name`` (the section's city names),
        ``space``, ``trains``, ``types``/``kinds`` (sorted track types), ``home``,
        ``network`` (sorted city ids)."""
        sec = self.board.sections[sid]
        name = self.board.section_name(sid)
        if self.box[company] <= 0:
            return {"code": "no_trains_left", "company": company, "trains": COMPANIES[company].trains}
        if sid in self._derived().secs[company]:
            return {"code": "already_on_section", "company": company, "section": sid, "name": name}
        route = self.board.companies.get(company)
        types = route.types if route else frozenset()
        if space not in types:
            return {"code": "type_not_used", "company": company, "space": space, "types": sorted(types)}
        if not sec.spaces:
            return {"code": "no_neutral_space", "section": sid, "name": name}
        if space not in sec.spaces:
            return {"code": "no_such_space", "section": sid, "name": name, "space": space,
                    "kinds": sorted(set(sec.spaces))}
        if space not in self.free_space_types(sid):
            return {"code": "spaces_taken", "section": sid, "name": name, "space": space}
        net = self._derived().net[company]
        if not set(sec.cities) & net:
            return {"code": "not_connected", "section": sid, "name": name, "company": company,
                    "home": route.home if route else "?", "network": sorted(net)}
        return None
