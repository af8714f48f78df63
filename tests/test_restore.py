"""The game file keeps the public log (``log``), checked against the replay."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from game_helpers import default_board
from moderator.rules.engine import Game
from moderator.store import gamefile
from moderator.store.gamefile import GameRecord, GameStore, Player, StoreError

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
    rec.notified = len(g.log) - 2
    store.save(rec)
    return store, rec


def test_the_file_keeps_the_public_log(tmp_path):
    store, rec = _record(tmp_path)
    data = yaml.safe_load(store.path("ridge").read_text(encoding="utf-8"))
    assert data["log"] == rec.game.log and data["log_length"] == len(rec.game.log)
    keys = list(data)
    assert keys.index("history") < keys.index("log") < keys.index("state")


@pytest.mark.parametrize("change, where", [
    (lambda log: log.__setitem__(5, log[5] + " (edited)"), "entry 6"),
    (lambda log: log.pop(), "entry"),
    (lambda log: log.append("Something else happened."), "entry"),
])
def test_the_full_check_compares_the_recorded_log(tmp_path, change, where):
    store, rec = _record(tmp_path)
    data = store.read_data("ridge")
    change(data["log"])
    store.path("ridge").write_text(gamefile._dump(data), encoding="utf-8")
    with pytest.raises(StoreError, match=f"recorded log differs .* at {where}"):
        store.load("ridge")


def test_check_log_names_the_first_differing_entry():
    with pytest.raises(StoreError, match=r"at entry 2: recorded 'b', replayed 'c'"):
        gamefile.check_log(["a", "b", "x"], ["a", "c", "y"])
    with pytest.raises(StoreError, match=r"at entry 3: it has 2 entries, the replay gives 3"):
        gamefile.check_log(["a", "b"], ["a", "b", "c"])
    with pytest.raises(StoreError, match="not a list"):
        gamefile.check_log("a", ["a"])
    gamefile.check_log(["a"], ["a"])
