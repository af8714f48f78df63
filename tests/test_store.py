"""The store: format versions and migrations, replay with the strict notation only,
durable writes, and the old import paths of moved names."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from moderator.store import files, gamefile, spool, state
from moderator.store.gamefile import FORMAT, MIGRATIONS, GameStore, StoreError, migrate

V1 = Path(__file__).parent / "fixtures" / "games" / "v1"
GAME = "v1-two-player"


@pytest.fixture()
def games(tmp_path):
    """A games directory holding a copy of one frozen v1 file."""
    shutil.copy(V1 / f"{GAME}.yaml", tmp_path / f"{GAME}.yaml")
    return tmp_path


def _rewrite(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


# ------------------------------------------------------------------ migrations
def test_format_is_7_and_format_1_migrates_to_it():
    assert FORMAT == 7
    assert sorted(MIGRATIONS) == [1, 2, 3, 4, 5, 6]
    data = {"format": 1, "game": "x", "created": "2026-11-30T12:00:00+00:00",
            "options": {"hidden_money": True},
            "players": [{"name": "Ann", "address": "a@example.org", "secret": "abcdefgh"}],
            "threads": {}, "notified": 0, "log_length": 0, "reply_to": {}, "history": [], "state": {}}
    out = migrate(data)
    assert list(out) == ["format", "game", "created", "options", "players", "settings", "clock",
                         "threads", "notified", "log_length", "reply_to", "game_master", "observers", "digest",
                         "resigned", "resigning", "ended", "gm_log", "history", "state"]
    assert out["format"] == 7
    # the operator is the game master, without a secret until `pbem gm GAME secret`
    assert out["game_master"] == {"address": None, "secret": None}
    assert (out["observers"], out["digest"], out["resigned"], out["resigning"], out["ended"], out["gm_log"]) == \
        ([], [], [], {}, None, [])
    assert out["options"] == {"hidden_money": True, "hints": False}
    assert out["players"] == [{"name": "Ann", "address": "a@example.org", "secret": "abcdefgh",
                               "timezone": None, "bot": False, "abandoned": False, "missed": 0,
                               "vacation_used": 0, "vacation_from": None, "vacation_until": None,
                               "language": None}]
    # a game created before deadlines keeps waiting: no deadline; it was played in English
    assert out["settings"] == {"deadline": None, "on_missed": "bot", "abandon_after": 3,
                               "vacation_limit": 14 * 86400, "paused": None, "language": "en"}
    assert out["clock"] == {"since": "2026-11-30T12:00:00+00:00", "shift": 0, "reminded": False,
                            "reminded_at": None, "overdue_told": False}


def test_format_3_to_4_reads_the_log_sentences_into_events_once():
    """Format 3 → 4 (issue 25): the log's English sentences become event
    mappings; a log that does not read whole is left out (the loader replays)."""
    head = {"format": 3, "players": [{"name": "Ann"}, {"name": "Bob"}], "log_length": 2}
    out = migrate({**head, "log": ["Game set up: 2 players (Ann, Bob), ruleset first-edition.",
                                   "Bob took the face-up KCC share."], "state": {}})
    assert out["format"] == 7 and out["log_length"] == 2  # then 4 -> 5 -> 6 -> 7, which change nothing
    assert out["log"] == [{"kind": "set_up", "players": ["Ann", "Bob"], "ruleset": "first-edition"},
                          {"kind": "took_face_up", "player": "Bob", "share": "KCC"}]
    out = migrate({**head, "log": ["Game set up: 2 players (Ann, Bob), ruleset first-edition.",
                                   "Something an older pbem wrote."], "state": {}})
    assert "log" not in out and "log_length" not in out and list(out) == ["format", "players", "state"]
    assert "log" not in migrate({"format": 3, "players": [], "state": {}})


@pytest.mark.parametrize("data,message", [
    ({"game": "x"}, "no format version"),
    ({"format": None}, "no format version"),
    ({"format": "1"}, "unknown format version '1'"),
    ({"format": 1.0}, "unknown format version 1.0"),
    ({"format": True}, "unknown format version True"),
    ({"format": 0}, "unknown format version 0"),
    ({"format": -3}, "unknown format version -3"),
    ({"format": 8}, "written by a newer pbem (format 8); this version reads up to format 7"),
    ({"format": 17}, "written by a newer pbem (format 17); this version reads up to format 7"),
])
def test_migrate_refuses_unknown_missing_and_newer_formats(data, message):
    with pytest.raises(StoreError) as info:
        migrate(data)
    assert message in str(info.value)


def test_a_newer_file_is_refused_clearly(games):
    _rewrite(games / f"{GAME}.yaml", lambda d: d.update(format=8))
    with pytest.raises(StoreError) as info:
        GameStore(games).load(GAME)
    assert str(info.value).endswith(
        "written by a newer pbem (format 8); this version reads up to format 7")
    assert f"{GAME}.yaml" in str(info.value)


def test_a_file_without_a_format_is_refused(games):
    _rewrite(games / f"{GAME}.yaml", lambda d: d.pop("format"))
    with pytest.raises(StoreError, match="no format version"):
        GameStore(games).read_data(GAME)


def test_a_missing_migration_step_is_refused(games, monkeypatch):
    monkeypatch.setattr(gamefile, "FORMAT", 8)
    with pytest.raises(StoreError, match="no migration from format 7 to format 8"):
        GameStore(games).load(GAME)


def _v4_rename(data):
    """A pretend format 4: ``history`` was renamed ``orders``."""
    data["orders"] = data.pop("history")
    return data


def _v5_rename_back(data):
    """A pretend format 5: ``orders`` is ``history`` again (so today's loader reads it)."""
    data["history"] = data.pop("orders")
    return data


def test_a_v1_file_loads_through_registered_migrations(games, monkeypatch):
    """The path a real format change takes: FORMAT raised, one step per format, each
    applied in turn on read; the file is rewritten in the new format only on save."""
    direct = GameStore(games).load(GAME)
    seen = []
    monkeypatch.setattr(gamefile, "FORMAT", 5)
    monkeypatch.setitem(MIGRATIONS, 3, lambda d: (seen.append(("3->4", d["format"])), _v4_rename(d))[1])
    monkeypatch.setitem(MIGRATIONS, 4, lambda d: (seen.append(("4->5", d["format"])), _v5_rename_back(d))[1])
    store = GameStore(games)
    data = store.read_data(GAME)
    assert data["format"] == 5
    assert "orders" not in data and len(data["history"]) == len(direct.history)
    assert seen == [("3->4", 3), ("4->5", 4)]
    record = store.load(GAME, check=True)
    assert record.game.to_dict() == direct.game.to_dict()
    assert record.history == direct.history
    # reading never rewrites the file; saving writes the current format
    on_disk = yaml.safe_load((games / f"{GAME}.yaml").read_text(encoding="utf-8"))
    assert on_disk["format"] == 1
    store.save(record)
    on_disk = yaml.safe_load((games / f"{GAME}.yaml").read_text(encoding="utf-8"))
    assert on_disk["format"] == 5 and "history" in on_disk
    seen.clear()
    assert GameStore(games).load(GAME).game.to_dict() == direct.game.to_dict()
    assert seen == []  # a current file needs no migration


def test_a_migration_that_adds_a_key(games, monkeypatch):
    """A pretend format 4 that adds a key today's loader ignores."""
    monkeypatch.setattr(gamefile, "FORMAT", 4)
    monkeypatch.setitem(MIGRATIONS, 3, lambda d: {**d, "colour": "green"})
    data = GameStore(games).read_data(GAME)
    assert data["format"] == 4 and data["colour"] == "green"
    assert GameStore(games).load(GAME).game.phase == "over"


def test_a_failing_migration_is_a_store_error(games, monkeypatch):
    monkeypatch.setattr(gamefile, "FORMAT", 2)
    monkeypatch.setitem(MIGRATIONS, 1, lambda d: d["no such key"])
    with pytest.raises(StoreError, match="cannot be migrated to format 2"):
        GameStore(games).load(GAME)


# ------------------------------------------------------------------ strict replay
@pytest.mark.parametrize("change", [
    lambda o: o.upper(),
    lambda o: o.replace(" ", "  ", 1),
    lambda o: o + ";",
    lambda o: o.replace("start ", "Start "),
])
def test_replay_reads_orders_with_the_strict_notation_only(games, change):
    """An order the mail parser would read, but not in the strict notation, stops the
    load and names the entry."""
    def damage(d):
        d["history"][0]["order"] = change(d["history"][0]["order"])
    _rewrite(games / f"{GAME}.yaml", damage)
    with pytest.raises(StoreError, match=r"history entry 1 \(Ann: .*\) does not apply"):
        GameStore(games).load(GAME)


def test_replay_does_not_use_the_mail_parser(games, monkeypatch):
    import moderator.orders.parser as parser

    def refuse(*args, **kwargs):
        raise AssertionError("the mail parser was used to replay a game file")

    monkeypatch.setattr(parser, "parse_turn", refuse)
    assert GameStore(games).load(GAME).game.phase == "over"


def test_a_changed_state_is_refused(games):
    _rewrite(games / f"{GAME}.yaml", lambda d: d["state"]["money"].update(Ann=1))
    with pytest.raises(StoreError, match="differs in: money"):
        GameStore(games).load(GAME)


def test_a_changed_board_digest_is_refused(games):
    _rewrite(games / f"{GAME}.yaml", lambda d: d.update(board_sha256="0" * 64))
    with pytest.raises(StoreError, match="board has changed"):
        GameStore(games).load(GAME)


# ------------------------------------------------------------------ durable writes
def test_atomic_write_replaces_whole_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "f.txt"
    files.atomic_write(target, b"one")
    files.atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    files.atomic_write(target, b"old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        files.atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_fsync_dir_never_raises(tmp_path):
    files.fsync_dir(tmp_path)
    files.fsync_dir(tmp_path / "missing")


# ------------------------------------------------------------------ module layout
def test_moved_names_stay_importable_from_their_old_modules():
    assert gamefile.atomic_write is files.atomic_write
    assert gamefile.fsync_dir is files.fsync_dir
    assert spool.ModeratorState is state.ModeratorState
    assert not hasattr(spool.Spool, "take_status")


def test_moderator_state_round_trip(tmp_path):
    path = tmp_path / "spool" / "moderator.yaml"
    s = state.ModeratorState.load(path)
    assert s.answered == [] and s.last_success is None
    s.answered.append("<a@b>")
    s.inbox = {"mailbox": "INBOX", "uidvalidity": 7, "last_uid": 3}
    s.save()
    t = state.ModeratorState.load(path)
    assert t.answered == ["<a@b>"] and t.inbox["last_uid"] == 3
    path.write_text(": not yaml [", encoding="utf-8")
    assert state.ModeratorState.load(path).answered == []
