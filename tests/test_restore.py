"""Restoring a game without replaying it: ``Game.from_dict`` (the inverse of
``to_dict``) and the trusted load of a game file (``restore_game``).

Property: for random games (2-6 players, both rulesets, every option, default and
mini board) stopped at random points, the restored game has the same saved state
(byte for byte in YAML, so the key order too), the same views and legal actions,
and the same future: the next 20 random legal actions drawn from equally seeded
generators give the same states and logs (reshuffles of the track deck included).
"""
from __future__ import annotations

import copy
import random
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import test_properties as tp
from game_helpers import default_board, freeze
from moderator.rules.engine import Game, _check_shape, _plain_copy
from moderator.rules.history import History
from moderator.store import gamefile
from moderator.store.gamefile import GameRecord, GameStore, Player, StoreError
from moderator.rules import events as E
from moderator.rules.events import to_data

FIXTURES = Path(__file__).parent / "fixtures" / "games"


def restored(g: Game, state: dict | None = None, owned: bool = False) -> Game:
    return Game.from_dict(
        g.to_dict() if state is None else state, board=g.board, players=g.players, seed=g.seed,
        ruleset=g.ruleset, options=g.options, events=g.events, history=g.history, owned=owned,
    )


def dump(value) -> str:
    return yaml.safe_dump(value, sort_keys=False)


def play(g: Game, rng: random.Random, n: int, invest_bias: float = 0.0) -> int:
    done = 0
    while done < n and g.phase != "over":
        p = g.waiting_for()[0]
        g.push(p, tp.choose(g, p, rng, invest_bias))
        done += 1
    return done


def assert_same(g: Game, h: Game) -> None:
    assert h.to_dict() == g.to_dict()
    assert dump(h.to_dict()) == dump(g.to_dict())  # the same key order: the same file
    assert h.events == g.events and h.history == g.history
    assert h == g
    for p in g.players:
        assert h.view(p) == g.view(p)
        assert h.legal_actions(p).count() == g.legal_actions(p).count()


# ------------------------------------------------------------------ the property
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tp.games, st.integers(0, 400), st.integers(0, 10**6))
def test_from_dict_restores_state_views_and_future(params, stop, salt):
    g = tp.make(params)
    play(g, random.Random(params["seed"]), stop, params["invest_bias"])
    before = freeze(g.to_dict())
    h = restored(g)
    assert freeze(g.to_dict()) == before  # pure
    assert_same(g, h)
    tp.check_caches(h)
    # the same future from equally seeded generators
    rg, rh = random.Random(salt), random.Random(salt)
    for _ in range(20):
        if g.phase == "over":
            break
        p = g.waiting_for()[0]
        assert h.waiting_for()[0] == p
        a = tp.choose(g, p, rg, params["invest_bias"])
        b = tp.choose(h, p, rh, params["invest_bias"])
        assert a == b
        assert g.push(p, a) == h.push(p, b)
    assert h.to_dict() == g.to_dict() and h.events == g.events
    tp.check_after_action(h)


def _before_a_reshuffle(seed: int) -> Game | None:
    """A game stopped just before its track deck runs out a second time (so the
    next reshuffle is drawn from the saved counter), or None."""
    g = Game.new(default_board(), ["A", "B", "C", "D"], seed, "first-edition",
                 {"dead_track_redraw": True})
    rng = random.Random(seed)
    while g.phase != "over":
        if g.reshuffles >= 1 and g.phase == "play" and len(g.track_deck) == 1:
            return g
        p = g.waiting_for()[0]
        g.push(p, g.random_action(p, rng))
    return None


def test_a_reshuffle_after_the_restore_draws_from_the_saved_counter():
    found = [g for g in map(_before_a_reshuffle, range(40)) if g is not None]
    assert found, "no game ran through its track deck twice"
    for g in found[:5]:
        h = restored(g)
        assert h.reshuffles == g.reshuffles >= 1
        rg, rh = random.Random(1), random.Random(1)
        n = g.reshuffles
        while g.reshuffles == n and g.phase != "over":
            p = g.waiting_for()[0]
            g.push(p, g.random_action(p, rg))
            h.push(p, h.random_action(p, rh))
        assert g.reshuffles == n + 1
        assert_same(g, h)


def test_from_dict_is_pure_and_independent():
    g = Game.new(default_board(), ["Ann", "Bob", "Cy"], 3, "second-edition")
    play(g, random.Random(3), 40)
    state, log, history, players = g.to_dict(), list(g.events), list(g.history), list(g.players)
    frozen = copy.deepcopy(state)
    h = Game.from_dict(state, board=g.board, players=players, seed=g.seed, ruleset=g.ruleset,
                       options=g.options, events=log, history=history)
    assert state == frozen
    play(h, random.Random(4), 10)
    assert state == frozen and log == g.events and history == g.history and players == g.players
    assert g.to_dict() == frozen
    # the lists of the state are not shared with the game
    h2 = Game.from_dict(state, board=g.board, players=players, seed=g.seed, ruleset=g.ruleset,
                        options=g.options, events=log, history=history)
    h2.track_deck.clear()
    h2.money["Ann"] += 1
    assert state == frozen


def test_a_new_game_round_trips():
    for n in range(2, 7):
        g = Game.new(default_board(), [f"P{i}" for i in range(n)], n, "first-edition")
        assert_same(g, restored(g))


# ------------------------------------------------------------------ malformed states
def _mid_game() -> Game:
    g = Game.new(default_board(), ["Ann", "Bob", "Cy"], 11, "first-edition")
    play(g, random.Random(11), 30)
    assert g.phase == "play"
    return g


def _changed(state: dict, change) -> dict:
    state = copy.deepcopy(state)
    change(state)
    return state


BAD_STATES = {
    "missing key": lambda s: s.pop("box"),
    "unknown key": lambda s: s.update(colour="red"),
    "int as text": lambda s: s.update(turn="3"),
    "bool as int": lambda s: s.update(up_pile=True),
    "list as text": lambda s: s.update(track_deck="plain"),
    "card not text": lambda s: s["stack"].append(3),
    "unknown section": lambda s: s["placed"].update({"XX-YY": ["KCC"]}),
    "short row": lambda s: s["placed"].update({k: v[:-1] for k, v in list(s["placed"].items())[:1]}),
    "unknown phase": lambda s: s.update(phase="lunch"),
    "current out of range": lambda s: s.update(current=3),
    "negative count": lambda s: s.update(dividends_paid=-1),
    "hand of a stranger": lambda s: s["track_hands"].update(Zed=[]),
    "hand missing": lambda s: s["share_hands"].pop("Bob"),
    "track card lost": lambda s: s["track_deck"].pop(),
    "unknown track card": lambda s: s["track_deck"].append("purple"),
    "train lost": lambda s: s["box"].update(KCC=s["box"]["KCC"] + 1),
    "unknown share": lambda s: s["display"].__setitem__(0, "XYZ"),
    "money of a stranger": lambda s: s["money"].update(Zed=3),
    "payout not a mapping": lambda s: s["payouts"].append(["KCC", 3]),
    "payout key not text": lambda s: s["payouts"].append({1: "KCC"}),
    "train not text": lambda s: _first_row(s).__setitem__(0, 3),
    "train a list": lambda s: _first_row(s).__setitem__(0, ["KCC"]),
    "train a bool": lambda s: _first_row(s).__setitem__(-1, False),
    "row not a list": lambda s: s["placed"].update({k: tuple(v) for k, v in list(s["placed"].items())[:1]}),
    "unknown company on a space": lambda s: _first_row(s).__setitem__(0, "XYZ"),
    "not a mapping": None,
}


def _first_row(state: dict) -> list:
    return next(iter(state["placed"].values()))


@pytest.mark.parametrize("owned", [False, True])
@pytest.mark.parametrize("case", sorted(BAD_STATES))
def test_a_malformed_state_is_a_value_error(case, owned):
    # a state handed over (owned) is checked as fully as any other
    g = _mid_game()
    change = BAD_STATES[case]
    state = ["not", "a", "state"] if change is None else _changed(g.to_dict(), change)
    with pytest.raises(ValueError):
        restored(g, state, owned)


@pytest.mark.parametrize("value, hint, message", [
    (["a", "b", 3], list[str], r"^x\[2\]: 3 is not a str$"),
    (["a", ["b"]], list[str], r"^x\[1\]: \['b'\] is not a str$"),
    ({"S": ["KCC", None], "T": [None, 2]}, dict[str, list[str | None]], r"^x\['T'\]\[1\]: 2 is not a str \| None$"),
    ({"S": ["KCC", {"a": 1}]}, dict[str, list[str | None]], r"^x\['S'\]\[1\]: .* is not a str \| None$"),
    ({"S": ("KCC",)}, dict[str, list[str | None]], r"^x\['S'\]: expected a list, got tuple$"),
    ({3: ["KCC"]}, dict[str, list[str | None]], r"^x key: 3 is not a str$"),
])
def test_the_shape_checks_of_long_lists_name_the_first_misfit(value, hint, message):
    with pytest.raises(ValueError, match=message):
        _check_shape(value, hint, "x")


def test_the_shape_checks_take_subclasses_and_only_them():
    class Name(str):
        pass

    class Masked:  # an instance of str by its __class__ only: isinstance says yes
        __class__ = str  # type: ignore[assignment]

    for value in (["a", Name("b")], ["a", Masked()], []):
        _check_shape(value, list[str], "x")
    _check_shape({"S": [Name("KCC"), None, Masked()], "T": []}, dict[str, list[str | None]], "x")
    with pytest.raises(ValueError):
        _check_shape({"S": [b"KCC"]}, dict[str, list[str | None]], "x")
    with pytest.raises(ValueError):
        _check_shape(["a", b"b"], list[str], "x")


@pytest.mark.parametrize("setup", [
    dict(players=["Ann", "Ann", "Cy"]),
    dict(players=["Ann", "Bob"]),  # the state's hands name three players
    dict(ruleset="third-edition"),
    dict(options={"no_such_option": True}),
    dict(seed="11"),
    dict(events=["fine", 3]),
    dict(history=[("Zed", None)]),
])
def test_a_malformed_setup_is_a_value_error(setup):
    g = _mid_game()
    args = dict(board=g.board, players=g.players, seed=g.seed, ruleset=g.ruleset,
                options=g.options, events=g.events, history=g.history)
    args.update(setup)
    with pytest.raises(ValueError):
        Game.from_dict(g.to_dict(), **args)


# ------------------------------------------------------------------ the game file
def _record(tmp_path: Path, moves: int = 60, seed: int = 5) -> tuple[GameStore, GameRecord]:
    store = GameStore(tmp_path / "games")
    g = Game.new(default_board(), ["Ann", "Bob", "Cy"], seed, "second-edition",
                 {"spread_dividends": True, "dead_track_redraw": True})
    rec = GameRecord("ridge", g, [Player(n, f"{n.lower()}@x.org", "abcdefgh") for n in g.players], "default")
    rng = random.Random(seed)
    for i in range(moves):
        if g.phase == "over":
            break
        p = g.waiting_for()[0]
        rec.apply(p, g.random_action(p, rng), f"<m{i}@x>", "2026-01-01T00:00:00+00:00")
    rec.notified = len(g.events) - 2
    store.save(rec)
    return store, rec


def test_the_file_keeps_the_public_log(tmp_path):
    store, rec = _record(tmp_path)
    data = yaml.safe_load(store.path("ridge").read_text(encoding="utf-8"))
    assert data["log"] == [to_data(e) for e in rec.game.events] and data["log_length"] == len(rec.game.events)
    keys = list(data)
    assert keys.index("history") < keys.index("log") < keys.index("state")


def test_a_trusted_load_restores_without_replay(tmp_path, monkeypatch):
    store, rec = _record(tmp_path)
    digest = store.write(rec).digest
    full = store.load("ridge")
    assert full.checked

    def no_replay(*args):
        raise AssertionError("replayed")

    monkeypatch.setattr(gamefile, "replay", no_replay)
    fast = store.load("ridge", trusted_digest=digest)
    assert not fast.checked and fast.source_digest == digest
    assert fast == full and fast.game == full.game == rec.game
    assert fast.history == full.history and fast.notified == full.notified
    assert fast.game.events == rec.game.events and fast.game.history == rec.game.history
    # both go on the same way and write the same bytes
    for r in (fast, full):
        p = r.game.waiting_for()[0]
        r.apply(p, r.game.random_action(p, random.Random(9)), "<next@x>")
    assert store.write(fast).digest == store.write(full).digest


def test_a_trusted_file_without_a_log_is_replayed(tmp_path, monkeypatch):
    """A frozen v1 file (no ``log``) loads by replay even when its digest is trusted."""
    games = tmp_path / "games"
    games.mkdir()
    src = FIXTURES / "v1" / "v1-mid-game-5p.yaml"
    shutil.copy(src, games / src.name)
    store = GameStore(games)
    checked = store.load(src.stem)
    assert "log" not in store.read_data(src.stem)
    calls = []
    real = gamefile.replay
    monkeypatch.setattr(gamefile, "replay", lambda *a: calls.append(1) or real(*a))
    trusted = store.load(src.stem, trusted_digest=checked.source_digest)
    assert calls == [1] and not trusted.checked
    assert trusted == checked


def test_a_trusted_load_reads_orders_strictly_on_first_use(tmp_path):
    # the digest vouches for the bytes, so the orders are read when first needed
    # (strictly: an entry that is not strict notation is named then); any load
    # without that digest reads and replays them at once
    store, rec = _record(tmp_path)
    data = store.read_data("ridge")
    bad = data["history"][3]["order"].upper()
    data["history"][3]["order"] = bad
    store.path("ridge").write_text(gamefile._dump(data), encoding="utf-8")
    digest = store.read_file("ridge").digest
    trusted = store.load("ridge", trusted_digest=digest)
    assert len(trusted.game.history) == len(rec.game.history)
    with pytest.raises(ValueError, match=f"history entry 4 .*{re.escape(repr(bad))}"):
        list(trusted.game.history)
    with pytest.raises(StoreError, match="history entry 4"):
        store.load("ridge")


def test_a_restored_history_reads_its_orders_once_and_keeps_new_moves(tmp_path):
    store, rec = _record(tmp_path)
    data = store.read_data("ridge")
    game = gamefile.restore_game(data, default_board())
    h = game.history
    assert isinstance(h, History) and h._read is None
    assert len(h) == len(rec.game.history) == len(data["history"])
    assert list(h.players()) == [p for p, _a in rec.game.history]
    p = game.waiting_for()[0]
    action = game.random_action(p, random.Random(3))
    game.push(p, action)
    assert h[len(data["history"])] == (p, action) and h[-1] == (p, action)
    assert h._read is None  # the new move and the length needed no parse
    assert h == [*rec.game.history, (p, action)] and h._read is not None
    assert [str(a) for _p, a in h] == [x["order"] for x in data["history"]] + [str(action)]
    c = game.copy()
    c.push(*next((q, c.random_action(q, random.Random(4))) for q in c.waiting_for()))
    assert len(c.history) == len(h) + 1 and len(game.history) == len(h)


def test_a_trusted_load_refuses_a_log_of_the_wrong_length(tmp_path):
    store, rec = _record(tmp_path)
    data = store.read_data("ridge")
    data["log"].pop()
    store.path("ridge").write_text(gamefile._dump(data), encoding="utf-8")
    with pytest.raises(StoreError, match="log_length"):
        store.load("ridge", trusted_digest=store.read_file("ridge").digest)


def test_a_trusted_load_refuses_a_malformed_state(tmp_path):
    store, rec = _record(tmp_path)
    data = store.read_data("ridge")
    data["state"]["track_deck"].append("purple")
    store.path("ridge").write_text(gamefile._dump(data), encoding="utf-8")
    with pytest.raises(StoreError, match="malformed"):
        store.load("ridge", trusted_digest=store.read_file("ridge").digest)


@pytest.mark.parametrize("change, where", [
    (lambda log: log.__setitem__(5, {**log[5], "kind": "stalled"}), "entry 6"),
    (lambda log: log.pop(), "entry"),
    (lambda log: log.append({"kind": "stalled"}), "entry"),
])
def test_the_full_check_compares_the_recorded_log(tmp_path, change, where):
    store, rec = _record(tmp_path)
    data = store.read_data("ridge")
    change(data["log"])
    store.path("ridge").write_text(gamefile._dump(data), encoding="utf-8")
    with pytest.raises(StoreError, match=f"recorded log differs .* at {where}"):
        store.load("ridge")


def test_check_log_names_the_first_differing_entry():
    a, b, c = E.Starts(("Ann",)), E.Starts(("Bob",)), E.Stalled()
    with pytest.raises(StoreError, match=r"at entry 2: recorded \{'kind': 'starts', 'player': 'Bob'\}, "
                                         r"replayed \{'kind': 'stalled'\}"):
        gamefile.check_log([to_data(a), to_data(b), to_data(a)], [a, c, b])
    with pytest.raises(StoreError, match=r"at entry 3: it has 2 entries, the replay gives 3"):
        gamefile.check_log([to_data(a), to_data(b)], [a, b, c])
    with pytest.raises(StoreError, match="not a list"):
        gamefile.check_log("a", [a])
    gamefile.check_log([to_data(a)], [a])


def test_an_owned_state_keeps_the_payout_records_in_a_new_list():
    # from_dict(owned=True), the store's trusted load: the payouts (never changed
    # once paid) are not copied, but the list the game appends to is its own, and
    # every other value is copied as without it
    g = _mid_game()
    state = g.to_dict()
    assert state["payouts"] and state["payouts"] is not g.payouts
    assert all(a is b for a, b in zip(state["payouts"], g.payouts))  # to_dict: the records shared
    frozen = copy.deepcopy(state)
    h = restored(g, state, owned=True)
    assert h == restored(g, state) and h.to_dict() == frozen
    assert h.payouts is not state["payouts"] and all(a is b for a, b in zip(h.payouts, state["payouts"]))
    play(h, random.Random(8), 200, invest_bias=0.5)  # to the end: more dividends paid
    assert len(h.payouts) > len(frozen["payouts"]) and state == frozen
    h.track_deck.clear()
    h.money["Ann"] += 1
    assert state == frozen


def test_a_restored_game_copies_its_plain_state():
    # the state handed to from_dict is copied, never kept (a marshal round trip
    # for plain data, part by part for anything else)
    g = _mid_game()
    state = g.to_dict()
    h = restored(g, state)
    assert h.payouts == state["payouts"] and h.payouts is not state["payouts"]
    assert state["payouts"]  # the mid game paid a dividend
    state["payouts"][0]["changed"] = True
    assert "changed" not in h.payouts[0]
    mixed = {"a": [1, "x", None, True, 2.5], "c": Counter(k=2)}
    out = _plain_copy(mixed)
    assert out == mixed and type(out["c"]) is Counter and out["a"] is not mixed["a"]
    assert type(out["a"][3]) is bool
