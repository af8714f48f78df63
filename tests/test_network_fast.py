"""The rail network's incremental caches (``Network.place``) against plain
definitions, on seeded games of random legal play (default and mini board, 2-6
players, both rulesets):

- after every train placed, every cache equals the one computed from scratch
  (``Network._compute``), ``placement_at(type, q)`` for every ``q`` is the
  ``q``-th placement of the plain enumeration (companies with trains in the box
  in table order, each one's sections sorted) and IndexError at the total,
  ``free_spaces`` counts the empty spaces and ``network_cities`` is a plain
  search from the home station;
- ``memos()`` keeps a company's dict exactly as long as its placements (by
  type, ignoring its box) stay the same;
- ``place`` on a section no network touches, on a full space and on a type the
  section lacks.
"""
from __future__ import annotations

import random

import pytest

from game_helpers import default_board, mini_board, new_game
from moderator.rules.actions import Build
from moderator.rules.components import COMPANIES, TRACK_TYPES
from moderator.rules.engine import RULESETS, Game
from moderator.rules.network import Network
from test_properties import plain_placements

CACHES = ("secs", "near", "csec", "cnet", "avail", "extra", "cnt", "live", "lmask", "tot")


def make(seed: int) -> Game:
    """A new game whose board, players and ruleset the seed chooses."""
    rng = random.Random(seed)
    board = mini_board() if seed % 3 == 2 else default_board()
    names = [f"P{i + 1}" for i in range(rng.randint(2, 6))]
    return Game.new(board, names, seed, rng.choice(RULESETS))


def plain_order(g: Game, t: str) -> list[tuple[str, str]]:
    """The placements on a ``t`` space in ``placement_at`` order, by the plain
    definition: companies in table order, each one's sections sorted."""
    return [(c, sid) for c in COMPANIES if c in g.board.companies
            for sid, kind in plain_placements(g, c) if kind == t]


def plain_network(g: Game, company: str) -> set[str]:
    """The cities reached from ``company``'s home station through its trains."""
    route = g.board.companies[company]
    own = [sec.cities for sid, sec in g.board.sections.items()
           if company in sec.starts or company in g.placed[sid]]
    net, todo = {route.home}, [route.home]
    while todo:
        city = todo.pop()
        for a, b in own:
            for x, y in ((a, b), (b, a)):
                if x == city and y not in net:
                    net.add(y)
                    todo.append(y)
    return net


def check(g: Game) -> None:
    """Every cache and answer of ``g.network`` against the plain definitions."""
    net = g.network
    fresh = Network(g.board, g.placed, g.box)._compute()
    for name in CACHES:
        assert getattr(net._d, name) == getattr(fresh, name), name
    for t in TRACK_TYPES:
        order = plain_order(g, t)
        assert net.placement_totals()[t] == len(order)
        assert [net.placement_at(t, q) for q in range(len(order))] == order
        with pytest.raises(IndexError):
            net.placement_at(t, len(order))
        empty = sum(1 for sid, sec in g.board.sections.items()
                    for kind, occ in zip(sec.spaces, g.placed[sid]) if kind == t and occ is None)
        assert net.free_spaces(t) == empty
    for c in g.board.companies:
        assert net.network_cities(c) == plain_network(g, c)


@pytest.mark.parametrize("seed", range(12))
def test_caches_equal_a_fresh_computation_after_every_train(seed):
    g = make(seed)
    rng = random.Random(seed)
    trains = shared = 0  # trains placed; on a section with another empty space of the type
    while g.phase != "over":
        player = g.waiting_for()[0]
        action = g.random_action(player, rng)
        if isinstance(action, Build):
            space = action.space or action.card
            shared += [t for t, occ in zip(g.board.sections[action.section].spaces, g.placed[action.section])
                       if occ is None].count(space) > 1
        g.push(player, action)
        if isinstance(action, Build):
            trains += 1
            check(g)
    assert trains > 20
    if g.board is default_board():
        assert shared > 0  # the branch for a section with two spaces of a type was taken


def masks(g: Game) -> dict[str, dict[str, int]]:
    return {c: g.network.placement_masks(c) for c in COMPANIES}


@pytest.mark.parametrize("seed", range(4))
def test_memos_are_kept_exactly_while_the_placements_stay(seed):
    g = make(seed)
    rng = random.Random(seed)
    while g.phase != "over":
        player = g.waiting_for()[0]
        action = g.random_action(player, rng)
        memos = g.network.memos()
        before = {c: memos[c] for c in COMPANIES}
        for c in COMPANIES:
            memos[c]["mark"] = c
        old = masks(g)
        g.push(player, action)
        now = g.network.memos()
        changed = masks(g)
        for c in COMPANIES:
            if changed[c] == old[c]:
                assert now[c] is before[c] and now[c]["mark"] == c
            else:
                assert now[c] == {}


def test_place_on_a_section_no_network_touches():
    """``place`` needs no rules check to keep its caches right: a train on a
    section touching none of the company's network cities joins nothing."""
    g = new_game(["Ann", "Bob", "Cy"], seed=3)
    net = g.network
    cities = net.network_cities("KCC")
    sid = next(sid for sid, sec in sorted(g.board.sections.items())
               if not set(sec.cities) & cities and "plain" in sec.spaces and "KCC" not in sec.starts)
    before = dict(g.box)
    net.place("KCC", sid, "plain")
    assert g.box["KCC"] == before["KCC"] - 1
    assert net.network_cities("KCC") == cities
    assert sid in net.company_sections("KCC")
    fresh = Network(g.board, g.placed, g.box)._compute()
    for name in CACHES:
        assert getattr(net._d, name) == getattr(fresh, name), name


def test_place_needs_an_empty_space_of_the_type():
    g = new_game(["Ann", "Bob", "Cy"], seed=3)
    net = g.network
    sid, sec = next((sid, sec) for sid, sec in sorted(g.board.sections.items()) if len(sec.spaces) == 1)
    t = sec.spaces[0]
    other = next(x for x in TRACK_TYPES if x != t)
    user = next(c for c in COMPANIES if t in g.board.companies[c].types)
    with pytest.raises(AssertionError, match=f"no empty {other} space on {sid}"):
        net.place(user, sid, other)
    net.place(user, sid, t)
    with pytest.raises(AssertionError, match=f"no empty {t} space on {sid}"):
        net.place(user, sid, t)
