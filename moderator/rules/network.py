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

from typing import Any

from .board import Board
from .components import COMPANIES, TRACK_TYPES, CityId, CompanyId, SectionId, TrackType


class _Tables:
    """A board's sections and cities as small integers, computed once per board
    (``tables(board)``): the network's caches are bit sets over them.

    ``sids`` the section ids, sorted (bit ``i`` of a section set is ``sids[i]``, so
    a set read from its lowest bit gives sorted ids); ``index`` id -> bit;
    ``city_ids`` and ``cindex`` the same for cities; ``at`` city bit -> set of the
    sections touching it; ``links`` city bit -> ``((section bit, other city bit),
    ...)``, sections by id; ``ends`` section bit -> its two city bits and
    ``esum`` their sum (a section's other end is ``esum[i] - city``); ``spaces``
    section id -> its neutral spaces' track types (``Section.spaces``); ``sec``
    section id -> ``(section bit, 1 << section bit, city bit, other city bit,
    {type: the indices of its neutral spaces of that type})`` (what
    ``Network.place`` reads); ``types`` company -> the track types it may use
    (``TRACK_TYPES`` order first); ``users`` track type -> the companies that
    may use it; ``umask`` the same as a company set (bit ``k``: company
    ``cos[k]``, ``cos`` the companies in table order, ``cbit`` company -> its
    bit); ``home`` company -> its home city's bit (None for a company the board
    does not list)."""

    __slots__ = ("sids", "index", "city_ids", "cindex", "at", "links", "ends", "esum", "spaces", "sec", "types",
                 "users", "umask", "cos", "cbit", "home", "memo", "start")

    def __init__(self, board: Board) -> None:
        self.sids = tuple(sorted(board.sections))
        self.index = {sid: i for i, sid in enumerate(self.sids)}
        cities = dict.fromkeys(board.cities)
        for sid in self.sids:
            cities.update(dict.fromkeys(board.sections[sid].cities))
        for route in board.companies.values():
            cities.setdefault(route.home)
        self.city_ids = tuple(cities)
        self.cindex = {c: i for i, c in enumerate(self.city_ids)}
        at = [0] * len(self.city_ids)
        links: list[list[tuple[int, int]]] = [[] for _ in self.city_ids]
        ends = []
        for i, sid in enumerate(self.sids):
            a, b = (self.cindex[c] for c in board.sections[sid].cities)
            ends.append((a, b))
            at[a] |= 1 << i
            at[b] |= 1 << i
            links[a].append((i, b))
            links[b].append((i, a))
        self.at = tuple(at)
        self.links = tuple(tuple(x) for x in links)
        self.ends = tuple(ends)
        self.esum = tuple(a + b for a, b in ends)
        self.spaces = {sid: tuple(board.sections[sid].spaces) for sid in self.sids}
        self.sec: dict[str, tuple[int, int, int, int, dict[str, tuple[int, ...]]]] = {}
        for i, sid in enumerate(self.sids):
            slots: dict[str, tuple[int, ...]] = {}
            for k, t in enumerate(self.spaces[sid]):
                slots[t] = slots.get(t, ()) + (k,)
            self.sec[sid] = (i, 1 << i, ends[i][0], ends[i][1], slots)
        self.types: dict[str, tuple[str, ...]] = {}
        self.home: dict[str, int | None] = {}
        for c in COMPANIES:
            route = board.companies.get(c)
            kinds = route.types if route else frozenset()
            self.types[c] = tuple(t for t in TRACK_TYPES if t in kinds) + tuple(sorted(kinds - set(TRACK_TYPES)))
            self.home[c] = self.cindex[route.home] if route else None
        kinds = dict.fromkeys(TRACK_TYPES)
        for sec in board.sections.values():
            kinds.update(dict.fromkeys(sec.spaces))
        for own in self.types.values():
            kinds.update(dict.fromkeys(own))
        self.users = {t: tuple(c for c, own in self.types.items() if t in own) for t in kinds}
        self.cos = tuple(COMPANIES)
        self.cbit = {c: 1 << k for k, c in enumerate(self.cos)}
        self.umask = {t: sum(self.cbit[c] for c in users) for t, users in self.users.items()}
        self.memo: dict[int, tuple[str, ...]] = {}
        self.start: _Derived | None = None  # the caches of a new game (``Network.new_game``)

    def ids(self, mask: int) -> tuple[str, ...]:
        """The section ids of the section set ``mask``, sorted (memoised)."""
        out = self.memo.get(mask)
        if out is None:
            sids, found, m = self.sids, [], mask
            while m:
                low = m & -m
                found.append(sids[low.bit_length() - 1])
                m ^= low
            if len(self.memo) >= 4096:  # bounded (about 1 MB): a moderator sees many positions
                self.memo.clear()
            out = self.memo[mask] = tuple(found)
        return out

    def cities(self, mask: int) -> set[str]:
        """The city ids of the city set ``mask``."""
        ids, out = self.city_ids, set()
        while mask:
            low = mask & -mask
            out.add(ids[low.bit_length() - 1])
            mask ^= low
        return out


def tables(board: Board) -> _Tables:
    """The integer tables of ``board`` (computed once per board and kept on it;
    boards are never changed once loaded)."""
    t = board.__dict__.get("_tables")
    if t is None:
        t = board.__dict__["_tables"] = _Tables(board)
    return t


class _Derived:
    """Caches derived from the board, ``placed`` and ``box`` (rules: BUILD, step
    2), updated incrementally by ``Network.place``, never saved; section and city
    sets are bit sets over ``_Tables``, company sets bit sets over
    ``_Tables.cos``.

    ``secs`` company -> sections holding its trains (starting spaces included);
    ``net`` company -> network cities; ``near`` company -> sections touching a
    network city that hold none of its trains; ``csec`` section bit -> the
    companies with a train on it and ``cnet`` city bit -> the companies whose
    network holds it (the same facts by section and city); ``avail`` type
    (every type of ``tables.users``) -> sections with an empty neutral space of
    that type; ``free`` type -> empty neutral spaces on the board; ``cnt`` type
    (every type of ``tables.users``) -> company (each of its users) -> its
    placements of that type ignoring its box (the bits of ``near &
    avail[type]``); ``live`` type -> its users with trains in the box, in table
    order; ``tot`` type -> placements of that type over the companies with
    trains in the box (``cnt[type]`` summed over ``live[type]``).  A company may
    build on ``(section, type)`` when the type is one of its own and the section
    is in ``near & avail[type]``.  ``lists`` the placements by company and type
    as sorted section ids, made on demand (None until asked, dropped by
    ``place``); ``memo`` company -> answers its callers derived from its
    placements alone (``Network.memo``), dropped when they change."""

    __slots__ = ("secs", "net", "near", "csec", "cnet", "avail", "free", "cnt", "live", "tot", "lists", "memo")

    secs: dict[str, int]
    net: dict[str, int]
    near: dict[str, int]
    csec: list[int]
    cnet: list[int]
    avail: dict[str, int]
    free: dict[str, int]
    cnt: dict[str, dict[str, int]]
    live: dict[str, tuple[str, ...]]
    tot: dict[str, int]
    lists: dict[str, dict[str, tuple[str, ...]]] | None
    memo: dict[str, dict[Any, Any]]

    def copy(self) -> "_Derived":
        """An independent copy."""
        e = _Derived()
        e.secs, e.net, e.near = dict(self.secs), dict(self.net), dict(self.near)
        e.csec, e.cnet = list(self.csec), list(self.cnet)
        e.avail, e.free, e.tot = dict(self.avail), dict(self.free), dict(self.tot)
        e.cnt = {t: dict(n) for t, n in self.cnt.items()}
        e.live = dict(self.live)  # tuples: replaced, never changed
        e.lists = self.lists  # never changed in place: dropped and made anew
        e.memo = {c: dict(m) for c, m in self.memo.items()}
        return e


class Network:
    """The trains of the ten companies on ``board`` and the networks they form.

    ``placed`` maps each section id to the occupants of its neutral spaces, in the
    order of ``Section.spaces`` (a company abbreviation or None for an empty
    space); the trains on the coloured starting spaces are the board's
    (``Section.starts``).  ``box`` maps each company to its trains not yet on the
    board.  Both dicts are shared with the ``Game`` that saves them; ``place`` is
    the one way the rules change them.  Callers that change them directly call
    ``invalidate()``."""

    __slots__ = ("board", "placed", "box", "_d", "_t")

    def __init__(self, board: Board, placed: dict[SectionId, list[CompanyId | None]],
                 box: dict[CompanyId, int]) -> None:
        self.board = board
        self.placed = placed
        self.box = box
        self._d: _Derived | None = None
        self._t = tables(board)

    def copy(self, placed: dict[SectionId, list[CompanyId | None]], box: dict[CompanyId, int]) -> "Network":
        """A network over ``placed`` and ``box`` (copies of this one's) with copies of
        this one's caches, so a copied game need not recompute them."""
        n = Network(self.board, placed, box)
        if self._d is not None:
            n._d = self._d.copy()
        return n

    @classmethod
    def new_game(cls, board: Board, placed: dict[SectionId, list[CompanyId | None]],
                 box: dict[CompanyId, int]) -> "Network":
        """The network of a new game (``Game.new``): ``placed`` holds no train and
        ``box`` every company's trains but those on its starting spaces.  Its
        caches are a copy of the ones computed for the board's first new game."""
        n = cls(board, placed, box)
        start = n._t.start
        if start is None:
            start = n._t.start = n._compute()
        n._d = start.copy()
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
        T = self._t
        sections = self.board.sections
        d.secs = dict.fromkeys(COMPANIES, 0)
        d.free = dict.fromkeys(TRACK_TYPES, 0)
        d.avail = dict.fromkeys(T.users, 0)
        for i, sid in enumerate(T.sids):
            bit = 1 << i
            sec = sections[sid]
            for c in sec.starts:
                if c in d.secs:
                    d.secs[c] |= bit
            occupants = self.placed.get(sid) or [None] * len(sec.spaces)
            for t, occ in zip(sec.spaces, occupants):
                if occ is None:
                    d.free[t] = d.free.get(t, 0) + 1
                    d.avail[t] = d.avail.get(t, 0) | bit
                elif occ in d.secs:
                    d.secs[occ] |= bit
        d.net, d.near = {}, {}
        d.csec = [0] * len(T.sids)
        d.cnet = [0] * len(T.city_ids)
        d.tot = dict.fromkeys(d.free, 0)
        d.cnt = {t: {} for t in T.users}
        box = self.box
        d.live = {t: tuple(c for c in users if box[c] > 0) for t, users in T.users.items()}
        for c in COMPANIES:
            net = reach = 0
            home = T.home[c]
            if home is not None:
                secs = d.secs[c]
                net = 1 << home
                todo = [home]
                while todo:
                    x = todo.pop()
                    reach |= T.at[x]
                    for j, y in T.links[x]:
                        if secs >> j & 1 and not net >> y & 1:
                            net |= 1 << y
                            todo.append(y)
            near = reach & ~d.secs[c]
            d.net[c], d.near[c] = net, near
            cb = T.cbit[c]
            for bits, by in ((d.secs[c], d.csec), (net, d.cnet)):
                while bits:
                    low = bits & -bits
                    by[low.bit_length() - 1] |= cb
                    bits ^= low
            for t in T.types[c]:
                n = d.cnt[t][c] = (near & d.avail[t]).bit_count()
                if box[c] > 0:
                    d.tot[t] = d.tot.get(t, 0) + n
        d.lists = None
        d.memo = {c: {} for c in COMPANIES}
        return d

    # ================================================================= change
    def place(self, company: CompanyId, sid: SectionId, space: TrackType) -> None:
        """Put a train of ``company`` from the box on the first empty ``space``-type
        neutral space of section ``sid`` (no rules check: ``Game.resolve`` did it)
        and update the caches incrementally: the company's network grows from the
        section's far end (and on through its other trains); the section's last
        free space of that type is no longer a placement for anyone; the company may
        not build on the section again; the sections at its new network cities
        become placements for it.  AssertionError when no such space is empty."""
        T = self._t
        i, bit, a, b, slots = T.sec[sid]
        row = self.placed[sid]
        ks = slots.get(space, ())
        if len(ks) == 1:  # the usual section: one space of that type
            k = ks[0]
            if row[k] is not None:
                raise AssertionError(f"no empty {space} space on {sid}")
            more = False  # another empty ``space``-type space is left on the section
        else:
            empty = [k for k in ks if row[k] is None]
            if not empty:
                raise AssertionError(f"no empty {space} space on {sid}")
            k = empty[0]
            more = len(empty) > 1
        row[k] = company
        box = self.box
        had = box[company]
        box[company] = had - 1
        d = self._d
        if d is None:
            return
        cb = T.cbit[company]
        csec = d.csec
        csec[i] |= cb
        secs = d.secs[company] | bit
        d.secs[company] = secs
        near = d.near[company] & ~bit
        net = d.net[company]
        if net >> a & 1:  # the network grows at the section's far end when that city is new
            x = -1 if net >> b & 1 else b
        else:
            x = a if net >> b & 1 else -1  # neither end: the section is not connected, nothing grows
        if x >= 0:
            at, cnet = T.at, d.cnet
            net |= 1 << x
            cnet[x] |= cb
            near |= at[x] & ~secs
            m = at[x] & secs & ~bit  # the company's other sections at x: on through them
            if m:
                esum = T.esum
                todo = [(x, m)]
                while todo:
                    x, m = todo.pop()
                    while m:
                        low = m & -m
                        y = esum[low.bit_length() - 1] - x
                        if not net >> y & 1:
                            net |= 1 << y
                            cnet[y] |= cb
                            near |= at[y] & ~secs
                            todo.append((y, at[y] & secs))
                        m ^= low
            d.net[company] = net
        d.near[company] = near
        d.free[space] -= 1
        memo = d.memo
        memo[company] = {}
        avail, cnt, tot = d.avail, d.cnt, d.tot
        if not more:  # the section's last empty space of that type: nobody builds there on it
            avail[space] &= ~bit
            cnet = d.cnet
            hit = (cnet[a] | cnet[b]) & T.umask[space] & ~csec[i]  # the other users it was a placement of
            if hit:
                n = cnt[space]
                cos = T.cos
                while hit:
                    low = hit & -hit
                    c = cos[low.bit_length() - 1]
                    memo[c] = {}
                    n[c] -= 1
                    if box[c] > 0:
                        tot[space] -= 1
                    hit ^= low
        if had > 1:  # trains left in the box: the company's placements change in the totals
            for t in T.types[company]:
                n = cnt[t]
                k = (near & avail[t]).bit_count()
                tot[t] += k - n[company]
                n[company] = k
        else:  # its last train (its placements leave the totals) or none left
            live = d.live
            for t in T.types[company]:
                n = cnt[t]
                if had > 0:
                    tot[t] -= n[company]
                    live[t] = tuple(c for c in live[t] if c != company)
                n[company] = (near & avail[t]).bit_count()
        d.lists = None

    # ================================================================= questions
    def companies_on(self, sid: SectionId) -> set[CompanyId]:
        """Companies with a train on section ``sid`` (starting spaces included).
        KeyError for an unknown section."""
        return set(self.board.sections[sid].starts) | {c for c in self.placed[sid] if c}

    def network_cities(self, company: CompanyId) -> set[CityId]:
        """City ids in ``company``'s network: its home station and every city
        reached from it through sections holding its trains (rules: BUILD, step
        2); a new set.  KeyError for an unknown company."""
        return self._t.cities(self._derived().net[company])

    def company_sections(self, company: CompanyId) -> list[SectionId]:
        """Ids (sorted) of the sections holding a train of ``company``, starting
        spaces included."""
        return list(self._t.ids(self._derived().secs[company]))

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

    def placement_masks(self, company: CompanyId) -> dict[TrackType, int]:
        """``company``'s placements ignoring its box, by track type, as section bit
        sets over ``tables(board)`` (bit ``i``: section ``sids[i]``): ``{type:
        mask}`` for each type the company may use, in ``TRACK_TYPES`` order."""
        d = self._derived()
        near, avail = d.near[company], d.avail
        return {t: near & avail[t] for t in self._t.types[company]}

    def candidates(self) -> tuple[_Tables, dict[CompanyId, int], dict[TrackType, int]]:
        """The placements as bit sets, for callers that combine them fast (the
        legal actions and their summary): ``(tables, near, avail)`` where
        ``near[company]`` holds the sections touching the company's network that
        hold none of its trains and ``avail[type]`` the sections with an empty
        neutral space of that type; ``company`` may build on ``(section, type)``
        when the type is in ``tables.types[company]``, its box is not empty and
        the section is in ``near[company] & avail[type]`` (rules: BUILD, step 2).
        Both are the caches themselves (do not change them)."""
        d = self._derived()
        return self._t, d.near, d.avail

    def memos(self) -> dict[CompanyId, dict[Any, Any]]:
        """Per company, a dict where callers keep answers derived from that
        company's placements alone (by type, ignoring its box) and unchanging
        data, keyed as they choose: kept as long as those placements stay the
        same, a new empty dict when they change (``place``, ``invalidate``).  The
        legal summary keeps its builds per company and held track cards there."""
        return self._derived().memo

    def placement_at(self, track_type: TrackType, q: int) -> tuple[CompanyId, SectionId]:
        """The ``q``-th placement on a ``track_type`` space over the companies with
        trains in the box, companies in table order (``COMPANIES``), each one's
        sections sorted: ``(company, section id)``.  IndexError when ``q`` is not
        below ``placement_totals()[track_type]``."""
        d = self._d or self._derived()
        n = d.cnt.get(track_type)
        if n is not None:
            for c in d.live[track_type]:
                k = n[c]
                if q < k:
                    m = d.near[c] & d.avail[track_type]
                    for _ in range(q):
                        m &= m - 1
                    return c, self._t.sids[(m & -m).bit_length() - 1]
                q -= k
        raise IndexError("placement index out of range")

    def placements(self, company: CompanyId) -> list[tuple[SectionId, TrackType]]:
        """Every ``(section id, space track type)`` where a train of ``company`` may
        be placed now, whatever track card is held (rules: BUILD, step 2), sorted;
        empty when its box is empty or the name is unknown."""
        if self.box.get(company, 0) <= 0:
            return []
        ids = self._t.ids
        return sorted((sid, t) for t, m in self.placement_masks(company).items() for sid in ids(m))

    def placement_lists(self) -> dict[CompanyId, dict[TrackType, tuple[SectionId, ...]]]:
        """Each company's placements ignoring its box, by track type: ``{company:
        {type: sorted section ids}}``, only the types with a placement (made once
        per position: do not change it)."""
        d = self._derived()
        lists = d.lists
        if lists is None:
            ids = self._t.ids
            lists = d.lists = {}
            for c in COMPANIES:
                lists[c] = {t: ids(m) for t, m in self.placement_masks(c).items() if m}
        return lists

    def placement_totals(self) -> dict[TrackType, int]:
        """Placements of each track type summed over the companies with trains in
        the box: ``{type: count}`` (the cache itself: do not change it).  A type
        with a nonzero count can be built on with a card of that type or a joker."""
        return (self._d or self._derived()).tot

    def can_place(self, company: CompanyId, sid: SectionId, space: TrackType) -> bool:
        """Whether a train of ``company`` may go on a ``space``-type space of
        section ``sid`` now (rules: BUILD, step 2), whatever card is held."""
        if self.box.get(company, 0) <= 0 or space not in self._t.types.get(company, ()):
            return False
        d = self._d or self._derived()
        i = self._t.index.get(sid)
        return i is not None and bool((d.near[company] & d.avail[space]) >> i & 1)

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
        if self._derived().secs[company] >> self._t.index[sid] & 1:
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
        net = self.network_cities(company)
        if not set(sec.cities) & net:
            return {"code": "not_connected", "section": sid, "name": name, "company": company,
                    "home": route.home if route else "?", "network": sorted(net)}
        return None
