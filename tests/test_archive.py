"""The frozen game files (tests/fixtures/games/v*/) keep loading, forever.

Each file was written by pbem 0.1.0 through real mail cycles (see
tests/fixtures/README.md).  Every one must load with the full replay and comparison,
through the store and through ``pbem replay``, and give the facts written below,
which were read from the files themselves (their recorded ``state``), not from a
replay.  The documented format (docs/game-file.md) must name every key they hold.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.rules.options import OPTIONS
from moderator.store.gamefile import FORMAT, GameStore

ROOT = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "games"
FILES = sorted(FIXTURES.glob("v*/*.yaml"))
DOC = ROOT / "docs" / "game-file.md"

V1_OPTIONS = ("spread_dividends", "up_only_by_swap", "hidden_money", "dead_track_redraw")
NO_OPTIONS = {k: False for k in V1_OPTIONS}
ALL_OPTIONS = {k: True for k in V1_OPTIONS}
NO_OPTIONS_V2 = {k: False for k in OPTIONS}
"""The options as a file of each format writes them (format 2 added ``hints``;
a format-1 file loads with ``hints`` off)."""

# id -> facts read from the file: players, ruleset, options, board ("default" or
# "custom"), phase, history entries, turn, dividends paid, money (the standings of a
# finished game: richest first), winners.
EXPECTED = {
    "v1-custom-board-3p": dict(
        players=["Ann", "Bob", "Cy"], ruleset="first-edition", options=NO_OPTIONS, board="custom",
        phase="play", history=32, turn=29, dividends_paid=2,
        money={"Ann": 20, "Bob": 10, "Cy": 10}, winners=[],
    ),
    "v1-first-3p-finished": dict(
        players=["Ann", "Bob", "Cy"], ruleset="first-edition", options=NO_OPTIONS, board="default",
        phase="over", history=88, turn=85, dividends_paid=4,
        money={"Cy": 112, "Ann": 98, "Bob": 91}, winners=["Cy"],
    ),
    "v1-mid-game-5p": dict(
        players=["Ann", "Bob", "Cy", "Dee", "Eve"], ruleset="second-edition",
        options={**NO_OPTIONS, "dead_track_redraw": True}, board="default",
        phase="play", history=44, turn=39, dividends_paid=2,
        money={"Ann": 2, "Bob": 9, "Cy": 11, "Dee": 2, "Eve": 11}, winners=[],
    ),
    "v1-second-options-4p": dict(
        players=["Ann", "Bob", "Cy", "Dee"], ruleset="second-edition", options=ALL_OPTIONS,
        board="default", phase="over", history=82, turn=78, dividends_paid=4,
        money={"Dee": 132, "Cy": 93, "Ann": 83, "Bob": 23}, winners=["Dee"],
    ),
    "v1-two-player": dict(
        players=["Ann", "Bob"], ruleset="first-edition", options=NO_OPTIONS, board="default",
        phase="over", history=75, turn=73, dividends_paid=3,
        money={"(imaginary player)": 75, "Ann": 56, "Bob": 28}, winners=["(imaginary player)"],
    ),
    # format 2: written by the clock (tests/fixtures/make_v2_games.py)
    "v2-solo-bots-finished": dict(
        players=["Ann", "Bella", "Bert"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="over", history=123, turn=120, dividends_paid=4,
        money={"Ann": 207, "Bert": 176, "Bella": 138}, winners=["Ann"],
        bot_moves=123, bots=["Ann", "Bella", "Bert"],
    ),
    "v2-deadlines-3p": dict(
        players=["Ann", "Bob", "Cy"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="play", history=30, turn=27, dividends_paid=1,
        money={"Ann": 17, "Bob": 16, "Cy": 14}, winners=[],
        bot_moves=5, bots=[],
    ),
    # format 3: with languages (tests/fixtures/make_v3_games.py)
    "v3-spanish-bots-finished": dict(
        players=["Ana", "Beto", "Carla"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="over", history=120, turn=117, dividends_paid=4,
        money={"Carla": 161, "Beto": 144, "Ana": 140}, winners=["Carla"],
        bot_moves=80, bots=["Beto", "Carla"], language="es", languages=[None, None, None],
    ),
    "v3-languages-4p": dict(
        players=["Ana", "Bob", "Jana", "Dee"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="play", history=28, turn=24, dividends_paid=0,
        money={"Ana": 0, "Bob": 0, "Jana": 0, "Dee": 0}, winners=[],
        bot_moves=6, bots=["Dee"], language="de", languages=["es", "zh", "cs", None],
    ),
    # format 4: the log as events (tests/fixtures/make_v4_games.py)
    "v4-two-player-hidden-finished": dict(
        players=["Ann", "Bob"], ruleset="first-edition",
        options={**NO_OPTIONS_V2, "hidden_money": True, "spread_dividends": True}, board="default",
        phase="over", history=101, turn=99, dividends_paid=3,
        money={"Bob": 141, "Ann": 136, "(imaginary player)": 37}, winners=["Bob"],
        bot_moves=50, bots=["Bob"], language="en", languages=[None, None],
    ),
    "v4-czech-redraw-4p": dict(
        players=["Ann", "Bob", "Jana", "Dee"], ruleset="second-edition",
        options={**NO_OPTIONS_V2, "dead_track_redraw": True}, board="default",
        phase="play", history=40, turn=36, dividends_paid=1,
        money={"Ann": 21, "Bob": 5, "Jana": 12, "Dee": 5}, winners=[],
        bot_moves=9, bots=["Dee"], language="cs", languages=[None, None, None, None],
    ),
    # format 5: sign-up, press, proposals, orders in advance (tests/fixtures/make_v5_games.py)
    "v5-signup-press-queued": dict(
        players=["Ada", "Brunel", "Crocker"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="play", history=9, turn=6, dividends_paid=0,
        money={"Ada": 0, "Brunel": 0, "Crocker": 0}, winners=[],
        bot_moves=0, bots=[], language="en", languages=[None, None, None],
    ),
    "v5-takeback-public": dict(
        players=["Ann", "Bob", "Jana", "Dee"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="play", history=12, turn=8, dividends_paid=0,
        money={"Ann": 0, "Bob": 0, "Jana": 0, "Dee": 0}, winners=[],
        bot_moves=0, bots=[], language="en", languages=[None, None, None, None],
    ),
    # format 6: the substitute pool, the deadlines in the calendar (tests/fixtures/make_v6_games.py)
    "v6-substitute-gm-calendar": dict(
        players=["Ann", "Bob", "Cy"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="play", history=12, turn=9, dividends_paid=0,
        money={"Ann": 0, "Bob": 0, "Cy": 0}, winners=[],
        bot_moves=0, bots=[], language="en", languages=[None, None, None],
    ),
    "v6-no-substitutes-finished": dict(
        players=["Ann", "Bella", "Bert"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="over", history=100, turn=97, dividends_paid=4,
        money={"Ann": 168, "Bert": 155, "Bella": 152}, winners=["Ann"],
        bot_moves=66, bots=["Bella", "Bert"], language="en", languages=[None, None, None],
    ),
    # format 7: the last cancellation of a seat's calendar event; a finished game whose
    # human player was forgotten (tests/fixtures/make_v7_games.py)
    "v7-calendar-cancelled": dict(
        players=["Ann", "Bob", "Bella"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="play", history=10, turn=7, dividends_paid=0,
        money={"Ann": 0, "Bob": 0, "Bella": 0}, winners=[],
        bot_moves=3, bots=["Bella"], language="en", languages=[None, None, None],
    ),
    "v7-forgotten-finished": dict(
        players=["Player 1", "Bella", "Bert"], ruleset="first-edition", options=NO_OPTIONS_V2, board="default",
        phase="over", history=113, turn=110, dividends_paid=4,
        money={"Player 1": 167, "Bella": 164, "Bert": 149}, winners=["Player 1"],
        bot_moves=75, bots=["Bella", "Bert"], language="en", languages=[None, None, None],
    ),
}

# format 5's own keys, as the files hold them (what a load must keep)
V5_KEYS = {
    "v5-signup-press-queued": dict(
        joined=["2026-12-01T13:00:00+00:00", "2026-12-01T15:00:00+00:00", "2026-12-01T17:00:00+00:00"],
        signup={"seats": [3, 3], "starts": "full", "invite": 0, "seat_order": "joined", "expire": 2592000,
                "substitutes": "auto", "opened": "2026-12-01T12:00:00+00:00",
                "started": "2026-12-01T17:00:00+00:00"},
        press=[("Ada", "all", "good luck, everyone!"), ("Ada", ["Brunel"], "shall we share the west?")],
        muted=[], proposals=[(1, "Brunel", "deadline", "accepted")],
        queued={"Brunel": ["invest EPRG; discard plain or black or white or black-white"]},
        standing={"Crocker": ["take stack"]}, press_rule=("private", "after-end"), from_queue=0,
    ),
    "v5-takeback-public": dict(
        joined=[None, None, None, None], signup=None,
        press=[("Jana", "all", "dobrý den!")], muted=["Dee"],
        proposals=[(1, "Ann", "takeback", "accepted"), (2, "Bob", "pause", "rejected")],
        queued={}, standing={}, press_rule=("public", "always"), from_queue=1,
    ),
}


@pytest.mark.parametrize("gid", sorted(V5_KEYS))
def test_format_5_keys_load_and_save_unchanged(gid, tmp_path):
    """The keys of sign-up, press, proposals and orders in advance survive a load
    (with full replay) and a save: an older pbem would have dropped them."""
    facts = V5_KEYS[gid]
    src = FIXTURES / "v5" / f"{gid}.yaml"
    record = GameStore(src.parent).load(gid, check=True)
    assert [p.joined for p in record.players] == facts["joined"]
    assert record.signup == facts["signup"]
    assert [(e["from"], e["to"], e["text"]) for e in record.press] == facts["press"]
    assert record.muted == facts["muted"]
    assert [(p["id"], p["by"], p["what"], p["outcome"]) for p in record.proposals] == facts["proposals"]
    assert {n: [q["order"] for q in qs] for n, qs in record.queued.items()} == facts["queued"]
    assert record.standing == facts["standing"]
    assert (record.settings["press"], record.settings["press_archive"]) == facts["press_rule"]
    assert sum(bool(h.get("queued")) for h in record.history) == facts["from_queue"]
    shutil.copy(src, tmp_path / src.name)
    store = GameStore(tmp_path)
    store.save(store.load(gid))
    again = yaml.safe_load((tmp_path / src.name).read_text(encoding="utf-8"))
    original = yaml.safe_load(src.read_text(encoding="utf-8"))
    for key in ("signup", "press", "muted", "proposals", "queued", "standing", "players", "settings", "history"):
        assert again.get(key) == original.get(key), key


# format 6's own keys, as the files hold them
V6_KEYS = {
    "v6-substitute-gm-calendar": dict(
        substitutes="gm", calendar_off=["Bob"],
        calendar={"Ann": (5, "2026-12-04T05:00:00+00:00", 0, True), "Bob": (3, "2026-12-03T20:00:00+00:00", 1, False),
                  "Cy": (4, "2026-12-04T04:00:00+00:00", 1, False)},
        replaced=("Cy", "Walt", "walt@pool.example", "cy@example.net"),
    ),
    "v6-no-substitutes-finished": dict(
        substitutes="none", calendar_off=[], calendar={"Ann": (34, "2026-12-03T22:00:00+00:00", 1, False)},
        replaced=None,
    ),
}


@pytest.mark.parametrize("gid", sorted(V6_KEYS))
def test_format_6_keys_load_and_save_unchanged(gid, tmp_path):
    """The substitute pool's setting, the calendar's keys and the take-over's
    record survive a load (with full replay) and a save."""
    facts = V6_KEYS[gid]
    src = FIXTURES / "v6" / f"{gid}.yaml"
    record = GameStore(src.parent).load(gid, check=True)
    assert record.settings.get("substitutes", "auto") == facts["substitutes"]
    assert record.calendar_off == facts["calendar_off"]
    assert {n: (e["move"], e["due"], e["sequence"], e["open"]) for n, e in record.calendar.items()} == \
        facts["calendar"]
    took = [e for e in record.gm_log if e["command"].startswith("replace ")]
    if facts["replaced"] is None:
        assert took == []
    else:
        (entry,) = took
        assert (entry["player"], entry["name"], entry["address"], entry["old_address"]) == facts["replaced"]
        assert record.player_by_name(entry["player"]).address == entry["address"]
    shutil.copy(src, tmp_path / src.name)
    store = GameStore(tmp_path)
    store.save(store.load(gid))
    again = yaml.safe_load((tmp_path / src.name).read_text(encoding="utf-8"))
    original = yaml.safe_load(src.read_text(encoding="utf-8"))
    for key in ("calendar_off", "calendar", "gm_log", "players", "settings", "history"):
        assert again.get(key) == original.get(key), key


def _id(path: Path) -> str:
    return path.stem


def test_every_fixture_has_its_facts_written_down():
    assert sorted(_id(p) for p in FILES) == sorted(EXPECTED)
    assert {p.parent.name for p in FILES} == {f"v{n}" for n in range(1, FORMAT + 1)}


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_the_file_says_what_we_expect(path):
    """The facts are the file's own (guards against a fixture edited by mistake)."""
    facts = EXPECTED[_id(path)]
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["format"] == int(path.parent.name[1:])
    assert data["game"] == _id(path)
    assert [p["name"] for p in data["players"]] == facts["players"]
    assert data["ruleset"] == facts["ruleset"]
    assert data["options"] == facts["options"]
    assert (data["board"] if data["board"] == "default" else "custom") == facts["board"]
    assert len(data["history"]) == facts["history"]
    state = data["state"]
    assert state["phase"] == facts["phase"]
    assert state["turn"] == facts["turn"]
    assert state["dividends_paid"] == facts["dividends_paid"]
    assert state["money"] == facts["money"]
    if facts["phase"] == "over":
        top = max(state["money"].values())
        assert [p for p, m in state["money"].items() if m == top] == facts["winners"]
        assert sorted(state["money"].values(), reverse=True) == list(facts["money"].values())
    assert data["log_length"] == data["notified"]
    if data["format"] >= 2:
        assert sum(h.get("by") == "bot" for h in data["history"]) == facts["bot_moves"]
        assert [p["name"] for p in data["players"] if p["bot"]] == facts["bots"]
        assert all(h["message_id"] is None for h in data["history"] if h.get("by") == "bot")
    if data["format"] >= 3:
        assert data["settings"]["language"] == facts["language"]
        assert [p["language"] for p in data["players"]] == facts["languages"]


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_the_store_loads_with_full_replay_and_comparison(path):
    facts = EXPECTED[_id(path)]
    record = GameStore(path.parent).load(_id(path), check=True)
    game = record.game
    assert record.id == _id(path)
    assert [p.name for p in record.players] == facts["players"]
    assert game.ruleset == facts["ruleset"]
    assert game.options == {**NO_OPTIONS_V2, **facts["options"]}
    assert game.phase == facts["phase"]
    assert game.turn == facts["turn"]
    assert game.dividends_paid == facts["dividends_paid"]
    assert len(record.history) == len(game.history) == facts["history"]
    assert [str(a) for _p, a in game.history] == [h["order"] for h in record.history]
    assert game.money == facts["money"]
    assert game.winners() == facts["winners"]
    if facts["phase"] == "over":
        assert [(p, m) for _place, p, m in game.standings()] == list(facts["money"].items())
    assert record.unnotified == []
    assert (record.board_ref == "default") == (facts["board"] == "default")
    # format 3 keeps the languages; older files were played in English
    assert record.language == facts.get("language", "en")
    assert [record.language_of(p) for p in record.players] == \
        [own or record.language for own in facts.get("languages", [None] * len(record.players))]


@pytest.fixture()
def cli_home(tmp_path):
    """A minimal configuration naming a games directory, for ``pbem --config``."""
    games = tmp_path / "games"
    games.mkdir()
    config = tmp_path / "pbem.yaml"
    config.write_text("games_dir: games\nspool_dir: spool\n", encoding="utf-8")
    return config, games


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_pbem_replay_loads_each_fixture(path, cli_home):
    config, games = cli_home
    shutil.copy(path, games / path.name)
    before = (games / path.name).read_bytes()
    gid = _id(path)
    result = CliRunner().invoke(pbem.main, ["--config", str(config), "replay", gid])
    assert result.exit_code == 0, result.output
    n = EXPECTED[gid]["history"]
    first, *rest = result.output.splitlines()
    assert first == f"Game {gid}: {n} orders replayed; the state matches the file."
    # then one line per game-master (or agreed) command of gm_log, and who played a seat that changed hands
    gm_log = yaml.safe_load(path.read_text(encoding="utf-8")).get("gm_log") or []
    changed = [e for e in gm_log if e["command"].startswith("replace ")]
    assert len(rest) == len(gm_log) + (1 + len({e["player"] for e in changed}) if changed else 0)
    if gid == "v6-substitute-gm-calendar":
        assert rest[-2:] == ["Seats that changed hands:", "  seat Cy: moves 1-2 by Cy; moves 3-4 by Walt"]
    assert (games / path.name).read_bytes() == before  # replay never rewrites a file

    result = CliRunner().invoke(pbem.main, ["--config", str(config), "rules", gid])
    assert result.exit_code == 0, result.output
    assert EXPECTED[gid]["ruleset"] in result.output


def test_pbem_replay_refuses_a_damaged_fixture(cli_home):
    config, games = cli_home
    src = FIXTURES / "v1" / "v1-two-player.yaml"
    text = src.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    first = data["history"][0]["order"]
    assert first.startswith("start ")
    damaged = text.replace(f"order: {first}\n", f"order: {first.upper()}\n", 1)
    assert damaged != text
    (games / src.name).write_text(damaged, encoding="utf-8")
    result = CliRunner().invoke(pbem.main, ["--config", str(config), "replay", "v1-two-player"])
    assert result.exit_code == 1
    assert "history entry 1" in result.output and "does not apply" in result.output


def _documented() -> set[str]:
    return set(re.findall(r"`([A-Za-z_0-9]+)`", DOC.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_every_key_of_the_fixtures_is_documented(path):
    documented = _documented()
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    keys = set(data)
    keys |= set(data["state"])
    keys |= {k for h in data["history"] for k in h}
    keys |= {k for p in data["players"] for k in p}
    keys |= {k for p in data["state"]["payouts"] for k in p}
    missing = sorted(keys - documented)
    assert not missing, f"not documented in {DOC.name}: {missing}"


def test_the_documented_notation_is_the_module_grammar():
    """docs/game-file.md copies the grammar of moderator/rules/notation.py."""
    from moderator.rules import notation

    doc = DOC.read_text(encoding="utf-8")
    grammar = notation.__doc__.split("Grammar", 1)[1].split("::", 1)[1].split("\n\n")[1]
    for line in grammar.splitlines():
        assert line.strip() in doc, line


# format 7's own key, as the files hold it: seat -> (move, due, sequence, open, cancelled)
V7_CALENDAR = {
    "v7-calendar-cancelled": {
        "Ann": (4, "2026-12-03T18:00:00+00:00", 1, False, {"move": 3, "due": "2026-12-03T16:00:00+00:00", "sequence": 1}),
        "Bob": (4, "2026-12-03T19:00:00+00:00", 0, True, {"move": 3, "due": "2026-12-03T17:00:00+00:00", "sequence": 1}),
    },
    "v7-forgotten-finished": {
        "Player 1": (38, "2026-12-04T02:00:00+00:00", 1, False,
                     {"move": 37, "due": "2026-12-04T01:00:00+00:00", "sequence": 1}),
    },
}


@pytest.mark.parametrize("gid", sorted(V7_CALENDAR))
def test_format_7_keys_load_and_save_unchanged(gid, tmp_path):
    """The calendar's last cancellation (``calendar.SEAT.cancelled``) survives a
    load (with full replay) and a save; the forgotten player's game holds neither
    their name nor their address, and still replays."""
    src = FIXTURES / "v7" / f"{gid}.yaml"
    record = GameStore(src.parent).load(gid, check=True)
    assert {n: (e["move"], e["due"], e["sequence"], e["open"], e.get("cancelled"))
            for n, e in record.calendar.items()} == V7_CALENDAR[gid]
    shutil.copy(src, tmp_path / src.name)
    store = GameStore(tmp_path)
    store.save(store.load(gid))
    again = yaml.safe_load((tmp_path / src.name).read_text(encoding="utf-8"))
    original = yaml.safe_load(src.read_text(encoding="utf-8"))
    for key in ("calendar", "players", "settings", "history"):
        assert again.get(key) == original.get(key), key
    if gid == "v7-forgotten-finished":
        text = src.read_text(encoding="utf-8")
        assert "ann@example.org" not in text.lower() and "Ann" not in text
        assert [p.address for p in record.players][0] == ""
