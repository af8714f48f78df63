"""Property tests: whole games of random legal play over random seeds, 2-6 players,
both rulesets and every option, on the default and the mini board.

After every action: every card is in exactly one place, trains on the board plus in
the box make each company's total, money equals the payouts received, the game ends
exactly on the right dividend, the derived caches equal a fresh computation, and no
view shows another player's secrets.  At the end: replaying seed + history gives the
same state.  At sampled positions: ``legal_actions`` is exactly what ``resolve``
accepts (every listed action resolves to itself; random other actions are refused
with a reason or resolve to a listed action), ``random_action`` indexes the list
one-to-one, and ``action_count`` is its length.
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game_helpers import check_invariants, default_board, freeze, mini_board
from moderator.rules.actions import Build, Invest, Pass, Start, Take
from moderator.rules.components import COMPANIES, JOKER, SHARE_COMPANIES, TRACK_TYPES, UP
from moderator.render.words import reason
from moderator.rules.network import Network
from moderator.rules.legal import action_at, plan as legal_plan
from moderator.rules.engine import OPTIONS, RULESETS, Game, IllegalAction

SECRET_KEYS = {"track_hands", "share_hands", "stack", "track_deck", "returned", "initial_choice"}

games = st.fixed_dictionaries({
    "seed": st.integers(0, 2**32 - 1),
    "players": st.integers(2, 6),
    "ruleset": st.sampled_from(RULESETS),
    "options": st.fixed_dictionaries({k: st.booleans() for k in OPTIONS}),
    "board": st.sampled_from(["default", "default", "mini"]),
    "invest_bias": st.sampled_from([0.0, 0.3, 0.7]),
})


def make(params: dict) -> Game:
    board = default_board() if params["board"] == "default" else mini_board()
    names = [f"P{i + 1}" for i in range(params["players"])]
    return Game.new(board, names, params["seed"], params["ruleset"], params["options"])


def choose(g: Game, player: str, rng: random.Random, invest_bias: float):
    """A legal action: uniformly random (mostly builds: they are most of the legal
    actions), or with probability ``invest_bias`` an investment when one is possible."""
    if g.phase == "play" and g.share_hands[player] and rng.random() < invest_bias:
        invests = [a for a in g.legal_actions(player) if isinstance(a, Invest)]
        return rng.choice(invests)
    return g.random_action(player, rng)


# ------------------------------------------------------------------ checks
def check_caches(g: Game) -> None:
    d = g.network._d
    if d is None:
        return
    fresh_network = Network(g.board, g.placed, g.box)
    fresh = fresh_network._derived()
    for name in ("secs", "near", "csec", "cnet", "avail", "extra", "cnt", "live", "lmask", "tot"):
        assert getattr(d, name) == getattr(fresh, name), name
    assert g.network.placement_lists() == fresh_network.placement_lists()
    for c in COMPANIES:
        assert g.network.placements(c) == plain_placements(g, c)
    if g.phase == "play":  # the summary's builds kept per company equal a fresh summary's
        fresh_game = g.copy()
        fresh_game.invalidate()
        for p in g.players:
            assert g.legal_summary(p) == fresh_game.legal_summary(p)
            hand = g.track_hands[p]
            assert g.legal_summary(p, hand[1:]) == fresh_game.legal_summary(p, hand[1:])


def plain_placements(g: Game, company: str) -> list[tuple[str, str]]:
    """The placements of ``company`` by the plain definition (rules: BUILD, step 2):
    a depth-first search of its network from its home station through the
    sections holding its trains, then every empty neutral space of one of its
    track types on a section touching the network that holds none of its trains."""
    if g.box[company] <= 0:
        return []
    route = g.board.companies[company]
    own = {sid for sid, sec in g.board.sections.items()
           if company in sec.starts or company in g.placed[sid]}
    net, todo = {route.home}, [route.home]
    while todo:
        city = todo.pop()
        for sid in own:
            a, b = g.board.sections[sid].cities
            if city in (a, b):
                other = b if city == a else a
                if other not in net:
                    net.add(other)
                    todo.append(other)
    return sorted({(sid, t) for sid, sec in g.board.sections.items()
                   if sid not in own and set(sec.cities) & net
                   for t, occ in zip(sec.spaces, g.placed[sid]) if occ is None and t in route.types})


def check_views(g: Game) -> None:
    public = g.public_view()
    assert not SECRET_KEYS & set(public)
    for entry in public["players"]:
        assert set(entry) == {"name", "invested", "track_cards", "shares_in_hand", "money", "chosen"}
        assert isinstance(entry["track_cards"], int) and isinstance(entry["shares_in_hand"], int)
    for p in g.players:
        v = g.view(p)
        assert set(v) == set(public) | {"you"}
        you = v["you"]
        assert you["name"] == p
        assert you["track_cards"] == sorted(g.track_hands[p])
        assert you["shares"] == sorted(g.share_hands[p])
        assert you["returned"] == g.returned[p]
        rest = {k: x for k, x in v.items() if k != "you"}
        assert rest == public  # everything else is the same for everyone
    if g.options["hidden_money"] and g.phase != "over":
        assert all(e["money"] is None for e in public["players"])


def check_after_action(g: Game) -> None:
    check_invariants(g)
    check_caches(g)
    check_views(g)
    for p in g.players:
        assert g.share_hands[p] == sorted(g.share_hands[p])


def random_other_action(g: Game, rng: random.Random):
    """A well-formed action with random fields (legal or not)."""
    kind = rng.random()
    cards = list(TRACK_TYPES) + [JOKER]
    redraw = rng.choice([None] * 4 + list(TRACK_TYPES) + [JOKER])
    if kind < 0.6:
        sids = list(g.board.sections)
        company = rng.choice(list(COMPANIES) + [UP])
        if rng.random() < 0.5:  # near the company's network: more often legal
            near = [s for s in sids if set(g.board.sections[s].cities) & g.network.network_cities(company)] \
                if company in COMPANIES else []
            sids = near or sids
        take = rng.choice([
            None, Take("stack"), Take("up"), Take("none"),
            Take("display", rng.choice(list(SHARE_COMPANIES))),
            Take("display", place=rng.randint(0, 5)),
        ])
        card = rng.choice(cards + [None])
        space = rng.choice([None, None] + list(TRACK_TYPES))
        swap = rng.choice([None, None] + list(SHARE_COMPANIES))
        return Build(company, rng.choice(sids), card, space, take, swap, redraw)
    if kind < 0.9:
        n = rng.randint(0, 3)
        pool = list(SHARE_COMPANIES)
        if g.to_move and g.share_hands[g.to_move]:
            pool += g.share_hands[g.to_move] * 3
        shares = tuple(sorted(rng.choice(pool) for _ in range(n)))
        return Invest(shares, rng.choice(cards + [None]), redraw)
    if kind < 0.97:
        return Pass(rng.choice(cards + [None]), redraw)
    return Start(rng.choice(list(SHARE_COMPANIES)))


def check_legal_agrees(g: Game, player: str, rng: random.Random, samples: int = 150) -> None:
    view = g.legal_actions(player)
    legal = list(view)
    legal_set = set(legal)
    assert len(legal_set) == len(legal) == g.action_count(player) == len(view)
    assert bool(view) == bool(legal)
    if g.phase == "play":
        plan = legal_plan(g, player)
        assert plan.total == len(legal)
        assert {action_at(g, player, plan, i) for i in range(plan.total)} == legal_set
    before = g.to_dict()
    for a in rng.sample(legal, min(samples, len(legal))):
        assert g.resolve(player, a) == a
        assert a in view  # checked by resolve, without listing
    for _ in range(samples):
        a = random_other_action(g, rng)
        assert (a in view) == (a in legal_set)
        try:
            done = g.resolve(player, a)
        except IllegalAction as exc:
            assert reason(exc) and isinstance(reason(exc), str)
            assert a not in legal_set
            continue
        assert done in legal_set, (a, done)
        assert g.resolve(player, done) == done
    for other in g.players:
        if other not in g.waiting_for():
            assert g.legal_actions(other) == [] and g.random_action(other, rng) is None
    assert g.to_dict() == before  # resolve never changes the game


# ------------------------------------------------------------------ the properties
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_random_whole_games_keep_the_invariants(params):
    g = make(params)
    rng = random.Random(params["seed"])
    check_after_action(g)
    n = 0
    while g.phase != "over":
        p = g.waiting_for()[0]
        before = g.dividends_paid
        g.push(p, choose(g, p, rng, params["invest_bias"]))
        n += 1
        check_after_action(g)
        if g.phase == "over":
            assert g.dividends_paid == g.final_dividend
            assert before < g.final_dividend
        assert n < 3000
    assert g.winners() and g.standings()
    if len(g.players) == 2:
        assert "(imaginary player)" in g.money
    # replaying seed + history reproduces the state
    again = Game.new(g.board, g.players, g.seed, g.ruleset, g.options)
    for player, action in g.history:
        again.push(player, action)
    assert freeze(again.to_dict()) == freeze(g.to_dict())
    assert again.events == g.events
    # the history holds complete actions: each replays unchanged
    assert all(not isinstance(a, Build) or (a.card and a.take) for _, a in g.history)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games, st.integers(0, 10**6))
def test_legal_actions_are_exactly_what_resolve_accepts(params, salt):
    g = make(params)
    rng = random.Random(salt)
    check_legal_agrees(g, g.players[0], rng, samples=40)
    stops = sorted(rng.sample(range(1, 120), 3))
    n = 0
    while g.phase != "over" and stops:
        p = g.waiting_for()[0]
        if n == stops[0]:
            stops.pop(0)
            check_legal_agrees(g, p, rng)
        g.push(p, choose(g, p, rng, params["invest_bias"]))
        n += 1


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(RULESETS))
def test_copy_is_independent(seed, ruleset):
    g = Game.new(default_board(), ["a", "b", "c"], seed, ruleset)
    rng = random.Random(seed)
    for _ in range(30):
        p = g.waiting_for()[0]
        g.push(p, g.random_action(p, rng))
    h = g.copy()
    state = g.to_dict()
    while h.phase != "over":
        p = h.waiting_for()[0]
        h.push(p, h.random_action(p, rng))
    assert g.to_dict() == state
    check_caches(g)
    check_caches(h)
