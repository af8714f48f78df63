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
    section id -> its neutral spaces' track types (``Section.spaces``); ``slots``
    section id -> {type: indices of its neutral spaces of that type}; ``sec``
    section id -> what ``Network.place`` reads: ``(i, 1 << i, ~(1 << i), a, b,
    one)`` for its bit ``i``, its city bits ``a`` and ``b`` and ``one`` {type:
    the index of its one neutral space of that type, or -1 when it has several};
    ``types`` company -> the track types it may use (``TRACK_TYPES`` order
    first); ``users`` track type -> the companies that may use it; ``cos`` the
    companies in table order (bit ``k`` of a company set is ``cos[k]``);
    ``umask`` track type -> its users as a company set; ``toff`` track type ->
    its offset in a list by type and company (``toff[type] + k`` for company
    ``cos[k]``); ``co`` company -> ``(its company bit as a set, ((type, its
    index in such a list), ...) for its types)``; ``home`` company -> its home
    city's bit (None for a company the board does not list)."""

    __slots__ = ("sids", "index", "city_ids", "cindex", "at", "links", "ends", "esum", "spaces", "slots", "sec",
                 "types", "users", "cos", "umask", "toff", "co", "home", "memo", "start")

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
        self.slots: dict[str, dict[str, tuple[int, ...]]] = {}
        self.sec: dict[str, tuple[int, int, int, int, int, dict[str, int]]] = {}
        for i, sid in enumerate(self.sids):
            slots: dict[str, tuple[int, ...]] = {}
            for k, t in enumerate(self.spaces[sid]):
                slots[t] = slots.get(t, ()) + (k,)
            self.slots[sid] = slots
            one = {t: ks[0] if len(ks) == 1 else -1 for t, ks in slots.items()}
            self.sec[sid] = (i, 1 << i, ~(1 << i), *ends[i], one)
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
        self.toff = {t: j * len(self.cos) for j, t in enumerate(self.users)}
        self.co = {c: (1 << k, tuple((t, self.toff[t] + k) for t in self.types[c])) for k, c in enumerate(self.cos)}
        self.umask = {t: sum(self.co[c][0] for c in users) for t, users in self.users.items()}
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
    sets are bit sets over ``_Tables``, company sets over ``_Tables.cos``.

    ``secs`` company -> sections holding its trains (starting spaces included);
    ``near`` company -> sections touching a network city that hold none of its
    trains; ``csec`` section bit -> the companies with a train on it; ``cnet``
    city bit -> the companies whose network holds the city (home station and
    every city reached from it through sections holding their trains); ``avail``
    type (every type of ``tables.users``) -> sections with an empty neutral
    space of that type; ``extra`` type -> empty neutral spaces of that type
    beyond one on each section of ``avail[type]`` (so the free spaces are
    ``avail[type].bit_count() + extra[type]``); ``cnt`` a list by type (every
    type of ``tables.users``) and company (``tables.toff``): the company's
    placements of that type ignoring its box (the bits of ``near &
    avail[type]``, 0 for a type it does not use); ``live`` type -> ``((company,
    its index in cnt), ...)`` for its users with trains in the box, in table
    order, and ``lmask`` the companies with trains in the box; ``tot`` type ->
    placements of that type over the companies with trains in the box (``cnt``
    summed over ``live[type]``).  A company may build on
    ``(section, type)`` when the type is one of its own and the section is in
    ``near & avail[type]``.  ``lists`` the placements by company and type as
    sorted section ids, made on demand (None until asked, dropped by
    ``place``); ``memo`` company -> answers its callers derived from its
    placements alone (``Network.memos``), dropped when they change.  ``parts``
    the caches ``place`` changes, in one tuple: ``(secs, near, csec, cnet,
    avail, extra, cnt, tot, memo)`` (the same objects)."""

    __slots__ = ("secs", "near", "csec", "cnet", "avail", "extra", "cnt", "live", "lmask", "tot", "lists", "memo",
                 "parts")

    secs: dict[str, int]
    near: dict[str, int]
    csec: list[int]
    cnet: list[int]
    avail: dict[str, int]
    extra: dict[str, int]
    cnt: list[int]
    live: dict[str, tuple[tuple[str, int], ...]]
    lmask: int
    tot: dict[str, int]
    lists: dict[str, dict[str, tuple[str, ...]]] | None
    memo: dict[str, dict[Any, Any]]
    parts: tuple[Any, ...]

    def seal(self) -> "_Derived":
        """Set ``parts`` from the caches; return self."""
        self.parts = (self.secs, self.near, self.csec, self.cnet, self.avail, self.extra, self.cnt, self.tot,
                      self.memo)
        return self

    def copy(self) -> "_Derived":
        """An independent copy."""
        e = _Derived()
        e.secs, e.near = dict(self.secs), dict(self.near)
        e.csec, e.cnet = list(self.csec), list(self.cnet)
        e.avail, e.extra, e.tot = dict(self.avail), dict(self.extra), dict(self.tot)
        e.cnt = list(self.cnt)
        e.live = dict(self.live)  # tuples: replaced, never changed
        e.lmask = self.lmask
        e.lists = self.lists  # never changed in place: dropped and made anew
        e.memo = {c: dict(m) for c, m in self.memo.items()}
        return e.seal()


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
        d.csec = [0] * len(T.sids)
        free = dict.fromkeys(TRACK_TYPES, 0)  # empty spaces by type
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
                    free[t] = free.get(t, 0) + 1
                    d.avail[t] = d.avail.get(t, 0) | bit
                elif occ in d.secs:
                    d.secs[occ] |= bit
        d.extra = {t: n - d.avail[t].bit_count() for t, n in free.items()}
        d.near = {}
        d.cnet = [0] * len(T.city_ids)
        d.tot = dict.fromkeys(free, 0)
        d.cnt = [0] * (len(T.users) * len(T.cos))
        box = self.box
        d.live = {t: tuple((c, T.toff[t] + T.cos.index(c)) for c in users if box[c] > 0)
                  for t, users in T.users.items()}
        d.lmask = sum(cb for c, (cb, _) in T.co.items() if box[c] > 0)
        for c in COMPANIES:
            secs = d.secs[c]
            net = reach = 0
            home = T.home[c]
            if home is not None:
                net = 1 << home
                todo = [home]
                while todo:
                    x = todo.pop()
                    reach |= T.at[x]
                    for j, y in T.links[x]:
                        if secs >> j & 1 and not net >> y & 1:
                            net |= 1 << y
                            todo.append(y)
            near = d.near[c] = reach & ~secs
            cb, own = T.co[c]
            for bits, by in ((secs, d.csec), (net, d.cnet)):
                while bits:
                    low = bits & -bits
                    by[low.bit_length() - 1] |= cb
                    bits ^= low
            for t, j in own:
                n = d.cnt[j] = (near & d.avail[t]).bit_count()
                if box[c] > 0:
                    d.tot[t] = d.tot.get(t, 0) + n
        d.lists = None
        d.memo = {c: {} for c in COMPANIES}
        return d.seal()

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
        i, bit, nbit, a, b, one = T.sec[sid]
        row = self.placed[sid]
        try:
            k = one[space]
        except KeyError:
            raise AssertionError(f"no empty {space} space on {sid}") from None
        if k >= 0 and row[k] is None:  # the usual section: one space of that type
            more = False  # another empty ``space``-type space is left on the section
        else:
            empty = [k for k in T.slots[sid][space] if row[k] is None]
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
        secs_, near_, csec, cnet, avail, extra, cnt, tot, memo = d.parts
        cb, own = T.co[company]
        csec[i] |= cb
        secs = secs_[company] | bit
        secs_[company] = secs
        near = near_[company] & nbit
        if cnet[a] & cb:  # the network grows at the far end when that city is new to it
            x = -1 if cnet[b] & cb else b
        else:
            x = a if cnet[b] & cb else -1  # neither end: the section is not connected
        if x >= 0:
            cnet[x] |= cb
            ax = T.at[x]
            mine = ax & secs
            near |= ax ^ mine
            if mine != bit:  # and on through the company's other sections at x
                at, esum = T.at, T.esum
                todo = [(x, mine ^ bit)]
                while todo:
                    x, m = todo.pop()
                    while m:
                        low = m & -m
                        y = esum[low.bit_length() - 1] - x
                        if not cnet[y] & cb:
                            cnet[y] |= cb
                            near |= at[y] & ~secs
                            todo.append((y, at[y] & secs))
                        m ^= low
        near_[company] = near
        if more:  # one empty space of that type is left beyond the first
            extra[space] -= 1
        else:  # the section's last empty space of that type: a placement of nobody now
            avail[space] &= nbit
            hit = (cnet[a] | cnet[b]) & T.umask[space] & ~csec[i]  # the other users it was one of
            if hit:
                tot[space] -= (hit & d.lmask).bit_count()
                j = T.toff[space]
                cos = T.cos
                while hit:
                    low = hit & -hit
                    k = low.bit_length() - 1
                    cnt[j + k] -= 1
                    memo[cos[k]] = {}
                    hit ^= low
        if had > 1:  # trains left in the box: the company's placements change in the totals
            for t, j in own:
                k = (near & avail[t]).bit_count()
                tot[t] += k - cnt[j]
                cnt[j] = k
        else:  # its last train (its placements leave the totals) or none left
            live = d.live
            for t, j in own:
                if had > 0:
                    tot[t] -= cnt[j]
                    live[t] = tuple(e for e in live[t] if e[0] != company)
                cnt[j] = (near & avail[t]).bit_count()
            if had > 0:
                d.lmask &= ~cb
        memo[company] = {}
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
        cnet, cb = self._derived().cnet, self._t.co[company][0]
        return {c for c, m in zip(self._t.city_ids, cnet) if m & cb}

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
        d = self._derived()
        return d.avail.get(track_type, 0).bit_count() + d.extra.get(track_type, 0)

    def full_track_types(self) -> list[TrackType]:
        """Track types every space of which is full (their cards are dead; option
        dead_track_redraw), in the order of TRACK_TYPES."""
        free = self.free_spaces
        return [t for t in TRACK_TYPES if free(t) == 0]

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
        cnt = d.cnt
        for c, j in d.live.get(track_type, ()):
            k = cnt[j]
            if q < k:
                m = d.near[c] & d.avail[track_type]
                while q:
                    m &= m - 1
                    q -= 1
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
