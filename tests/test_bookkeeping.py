"""The bookkeeping database (``moderator.store.bookkeeping``): schema and pragmas,
answered keys, alerts, bounces, the inbox memory, the import of the old
``moderator.yaml``, the games index kept in step with the games directory, loads
trusting the digest the moderator wrote, and durability under kill -9."""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from moderator.store import bookkeeping as bkmod
from moderator.store import gamefile
from moderator.store.bookkeeping import Bookkeeping, BookkeepingError, GameRef
from moderator.store.gamefile import FileStamp, GameStore, StoreError
from moderator.store.state import ModeratorState

REPO = Path(__file__).resolve().parent.parent
V1 = REPO / "tests" / "fixtures" / "games" / "v1"
T0 = datetime(2026, 11, 29, 14, 2, 11, tzinfo=timezone.utc)


@pytest.fixture()
def bk(tmp_path):
    b = Bookkeeping(tmp_path / "spool" / "pbem.sqlite3", clock=lambda: T0)
    yield b
    b.close()


@pytest.fixture()
def games(tmp_path):
    """A games directory with copies of every frozen v1 game file."""
    d = tmp_path / "games"
    d.mkdir()
    for f in V1.glob("*.yaml"):
        shutil.copy(f, d / f.name)
    return d


# ------------------------------------------------------------------ the file
def test_schema_pragmas_and_default_place(tmp_path):
    with Bookkeeping.in_spool(tmp_path / "spool") as b:
        assert b.path == tmp_path / "spool" / "pbem.sqlite3"
        assert b.schema_version == bkmod.SCHEMA_VERSION == len(bkmod.MIGRATIONS) >= 1
        assert b._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert b._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    # reopening applies nothing and keeps the version
    with Bookkeeping.in_spool(tmp_path / "spool") as b:
        assert b.schema_version == bkmod.SCHEMA_VERSION


def test_migrations_are_applied_in_order(tmp_path, monkeypatch):
    path = tmp_path / "pbem.sqlite3"
    Bookkeeping(path).close()
    seen = []

    def v2(db):
        seen.append(db.execute("PRAGMA user_version").fetchone()[0])
        db.execute("ALTER TABLE games ADD COLUMN language TEXT")

    base = len(bkmod.MIGRATIONS)
    monkeypatch.setattr(bkmod, "MIGRATIONS", [*bkmod.MIGRATIONS, v2, "CREATE TABLE x (y INTEGER); CREATE INDEX x_y ON x(y)"])
    monkeypatch.setattr(bkmod, "SCHEMA_VERSION", base + 2)
    with Bookkeeping(path) as b:
        assert b.schema_version == base + 2 and seen == [base]
        assert b._db.execute("SELECT COUNT(*) FROM x").fetchone()[0] == 0
        cols = [r[1] for r in b._db.execute("PRAGMA table_info(games)")]
        assert "language" in cols


def test_a_failing_migration_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "pbem.sqlite3"
    Bookkeeping(path).close()
    base = len(bkmod.MIGRATIONS)
    monkeypatch.setattr(bkmod, "MIGRATIONS", [*bkmod.MIGRATIONS, "CREATE TABLE z (a); SELECT nonsense FROM nowhere"])
    monkeypatch.setattr(bkmod, "SCHEMA_VERSION", base + 1)
    with pytest.raises(BookkeepingError, match="migration failed"):
        Bookkeeping(path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == base
    assert db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'z'").fetchone()[0] == 0
    db.close()


def test_newer_schema_and_damaged_file_are_refused(tmp_path):
    path = tmp_path / "pbem.sqlite3"
    Bookkeeping(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {bkmod.SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(BookkeepingError, match="newer pbem"):
        Bookkeeping(path)
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(BookkeepingError, match="not a usable SQLite database"):
        Bookkeeping(junk)


def test_readonly_changes_nothing(tmp_path):
    with pytest.raises(BookkeepingError, match="no bookkeeping database"):
        Bookkeeping(tmp_path / "none.sqlite3", readonly=True)
    assert not (tmp_path / "none.sqlite3").exists()
    path = tmp_path / "pbem.sqlite3"
    with Bookkeeping(path) as b:
        b.set_bounce("a@x.org", "550 gone")
    (tmp_path / "moderator.yaml").write_text("answered: ['<m@x>']\n")
    with Bookkeeping(path, readonly=True) as r:
        assert r.bounces() == {"a@x.org": "550 gone"}
        assert not r.answered("<m@x>")  # no import when read-only
        with pytest.raises(sqlite3.OperationalError):
            r.set_bounce("b@x.org", "x")
    assert (tmp_path / "moderator.yaml").exists()


# ------------------------------------------------------------------ answered keys
def test_answered_keys(bk):
    assert not bk.answered("<m1@x>")
    assert bk.mark_answered("<m1@x>", "ridge", T0)
    assert not bk.mark_answered("<m1@x>", "other", T0 + timedelta(days=1))  # first kept
    assert bk.answered("<m1@x>") and not bk.answered("<m1@x>#commands")
    bk.mark_answered("<m1@x>#commands", None, T0)
    assert bk.answered_count() == 2
    row = bk._db.execute("SELECT game, at FROM answered WHERE key = '<m1@x>'").fetchone()
    assert row == ("ridge", "2026-11-29T14:02:11.000000+00:00")


def test_answered_lookup_uses_the_index(bk):
    plan = " ".join(r[-1] for r in bk._db.execute(
        "EXPLAIN QUERY PLAN SELECT 1 FROM answered WHERE key = ?", ("k",)))
    assert "USING COVERING INDEX" in plan or "USING INDEX" in plan


def test_prune_by_count_and_by_age(bk):
    with bk.transaction():
        for i in range(50):
            bk.mark_answered(f"<{i}@x>", None, T0 + timedelta(days=i))
    assert bk.prune(T0 + timedelta(days=49), keep=30, max_age=timedelta(days=1000)) == 20
    assert not bk.answered("<19@x>") and bk.answered("<20@x>")
    assert bk.prune(T0 + timedelta(days=49), keep=30, max_age=timedelta(days=10)) == 19  # 20..38 older than day 39
    assert bk.answered_count() == 11 and bk.answered("<39@x>") and not bk.answered("<38@x>")
    assert bk.prune(T0 + timedelta(days=49)) == 0  # the defaults keep the rest


# ------------------------------------------------------------------ the rest of the memory
def test_alerts_are_bounded(bk, monkeypatch):
    assert bk.alert_sent("disk full") is None
    bk.mark_alert("disk full", T0)
    assert bk.alert_sent("disk full") == T0
    local = datetime(2026, 11, 30, 9, 0, tzinfo=timezone(timedelta(hours=2)))
    bk.mark_alert("disk full", local)
    assert bk.alert_sent("disk full") == local  # the same instant, given back in UTC
    assert bk.alert_sent("disk full").tzinfo == timezone.utc
    monkeypatch.setattr(Bookkeeping, "ALERTS_KEEP", 3)
    for i in range(5):
        bk.mark_alert(f"problem {i}", T0 + timedelta(hours=i))
    assert sorted(bk.alerts()) == ["disk full", "problem 3", "problem 4"]


def test_bounces_inbox_pending_moves_and_times(bk):
    bk.set_bounce("ann@x.org", "550 no such user")
    assert bk.bounce("ann@x.org") == "550 no such user" and bk.bounce("bob@x.org") is None
    bk.clear_bounce("ann@x.org")
    bk.clear_bounce("ann@x.org")
    assert bk.bounces() == {}

    assert bk.inbox() is None
    assert not bk.advance_uid(7, 3)
    bk.set_inbox("INBOX", 7)
    assert bk.advance_uid(7, 3) and not bk.advance_uid(7, 2) and not bk.advance_uid(8, 9)
    assert bk.inbox() == bkmod.InboxMemory("INBOX", 7, 3)
    bk.set_inbox("INBOX", 8)  # renumbered
    assert bk.inbox().last_uid == 0

    for k in ("7:1", "7:2", "7:3", "7:2"):
        bk.add_pending_move(k)
    assert bk.pending_moves() == ["7:1", "7:2", "7:3"]
    bk.remove_pending_move("7:1")
    assert bk.keep_pending_moves({"7:3", "7:9"}) == ["7:3"] and bk.pending_moves() == ["7:3"]

    assert bk.last_success() is None and bk.smtp_failing_since() is None
    bk.set_last_success(T0)
    bk.set_smtp_failing_since(T0.replace(tzinfo=None))  # naive: taken as UTC
    assert bk.last_success() == T0 and bk.smtp_failing_since() == T0
    bk.set_smtp_failing_since(None)
    assert bk.smtp_failing_since() is None


def test_transaction_groups_and_rolls_back(bk, tmp_path):
    with pytest.raises(RuntimeError):
        with bk.transaction():
            bk.mark_answered("<a@x>", None, T0)
            bk.set_bounce("a@x.org", "x")
            raise RuntimeError("die")
    assert not bk.answered("<a@x>") and bk.bounces() == {}
    with bk.transaction():
        bk.mark_answered("<a@x>", None, T0)
        with pytest.raises(RuntimeError):
            with bk.transaction():  # nested: a savepoint
                bk.mark_answered("<b@x>", None, T0)
                raise RuntimeError("inner")
        assert bk.in_transaction
        # another connection sees nothing before the commit
        other = sqlite3.connect(bk.path)
        assert other.execute("SELECT COUNT(*) FROM answered").fetchone()[0] == 0
    assert bk.answered("<a@x>") and not bk.answered("<b@x>")
    assert other.execute("SELECT COUNT(*) FROM answered").fetchone()[0] == 1
    other.close()


# ------------------------------------------------------------------ the old YAML state
OLD_STATE = """\
last_success: '2026-11-28T10:15:00+00:00'
answered:
- <order-1@players.example>
- <order-1@players.example>#commands
- sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
pending_moves:
- '1700000000:41'
bounces:
  gone@players.example: '550 5.1.1 <gone@players.example>: Recipient address rejected'
alerts:
  'pbem: game file problem: game ridge: replaying the history does not give the recorded state (differs in: money)': '2026-11-28T09:00:00+00:00'
smtp_failing_since: '2026-11-28T11:00:00+01:00'
inbox:
  mailbox: INBOX
  uidvalidity: 1700000000
  last_uid: 41
"""


def test_import_of_a_real_old_state_file(tmp_path):
    spool = tmp_path / "spool"
    spool.mkdir()
    (spool / "moderator.yaml").write_text(OLD_STATE, encoding="utf-8")
    old = ModeratorState.load(spool / "moderator.yaml")  # what today's code reads
    assert len(old.answered) == 3
    with Bookkeeping.in_spool(spool, clock=lambda: T0) as b:
        assert not (spool / "moderator.yaml").exists()
        assert (spool / "moderator.yaml.migrated").read_text(encoding="utf-8") == OLD_STATE
        assert all(b.answered(k) for k in old.answered) and b.answered_count() == 3
        assert [r[0] for r in b._db.execute("SELECT key FROM answered ORDER BY seq")] == old.answered
        assert b.pending_moves() == ["1700000000:41"]
        assert b.bounces() == old.bounces
        (text, when), = b.alerts().items()
        assert text.startswith("pbem: game file problem") and when == datetime(2026, 11, 28, 9, tzinfo=timezone.utc)
        assert b.inbox() == bkmod.InboxMemory("INBOX", 1700000000, 41)
        assert b.last_success() == datetime(2026, 11, 28, 10, 15, tzinfo=timezone.utc)
        assert b.smtp_failing_since() == datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)
        assert b.migrated_from().startswith(str(spool / "moderator.yaml"))
    # reopening imports nothing more
    with Bookkeeping.in_spool(spool) as b:
        assert b.answered_count() == 3


def test_import_written_by_todays_state_class_and_idempotent(tmp_path):
    """A file as ``ModeratorState.save`` writes it, imported twice (a crash between
    the commit and the rename), gives the same database."""
    spool = tmp_path / "spool"
    s = ModeratorState.load(spool / "moderator.yaml")
    s.answered = [f"<{i}@x>" for i in range(6000)]  # cut to 5000 on save
    s.bounces = {"a@x.org": "550"}
    s.inbox = {"mailbox": "INBOX", "uidvalidity": 5, "last_uid": 9}
    s.save()
    saved = (spool / "moderator.yaml").read_bytes()
    with Bookkeeping(spool / "pbem.sqlite3", legacy=None) as b:
        assert b.import_legacy(spool / "moderator.yaml", rename=False)
        assert b.import_legacy(spool / "moderator.yaml", rename=False)
        assert b.answered_count() == 5000 and b.answered("<1000@x>") and not b.answered("<999@x>")
        assert b.bounces() == {"a@x.org": "550"} and b.inbox().last_uid == 9
    assert (spool / "moderator.yaml").read_bytes() == saved
    with Bookkeeping.in_spool(spool) as b:  # the ordinary open imports and renames
        assert b.answered_count() == 5000
    assert not (spool / "moderator.yaml").exists() and (spool / "moderator.yaml.migrated").exists()


def test_import_of_an_unreadable_old_state_imports_nothing(tmp_path):
    (tmp_path / "moderator.yaml").write_text(": not yaml [", encoding="utf-8")
    with Bookkeeping(tmp_path / "pbem.sqlite3") as b:
        assert b.answered_count() == 0 and b.inbox() is None
    assert (tmp_path / "moderator.yaml.migrated").exists()


# ------------------------------------------------------------------ the games index
def _addresses(path: Path) -> dict[str, list[str]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {p["address"].lower(): p["name"] for p in data["players"]}


def test_sync_indexes_files_copied_in_by_hand(bk, games):
    store = GameStore(games)
    ids = store.ids()
    assert bk.stale_games(games) == ids  # nothing indexed yet
    report = bk.sync_games(store)
    assert report.added == ids and report.flagged == ids and not report.unreadable
    assert bk.stale_games(games) == [] and bk.game_ids() == ids
    assert bk.games_to_check() == ids  # not written by the moderator: replay fully first
    assert all(bk.trusted_digest(g) is None for g in ids)
    # routing without opening files
    for gid in ids:
        data = store.read_data(gid)
        entry = bk.game(gid)
        assert entry.phase == data["state"]["phase"]
        assert entry.owes_mail == (data["notified"] < data["log_length"])
        for p in data["players"]:
            refs = bk.games_of(p["address"].lower())
            assert gid in [r.game_id for r in refs]
            assert bk.is_player(p["address"].lower())
    finished = [g for g in ids if bk.game(g).phase == "over"]
    assert finished
    for gid in finished:
        addr = bk.game(gid).addresses[0]
        assert gid not in [r.game_id for r in bk.games_of(addr, active_only=True)]
    assert bk.games_of("stranger@x.org") == [] and not bk.is_player("stranger@x.org")
    assert bk.games_owing_mail() == sorted(g for g in ids if bk.game(g).owes_mail)


def test_games_of_gives_names_and_phase(bk, tmp_path):
    data = {"players": [{"name": "Ann", "address": "Ann <ANN@x.org>", "secret": "s"},
                        {"name": "Bob", "address": "bob@x.org", "secret": "t"},
                        {"name": "Ann2", "address": "ann@x.org", "secret": "u"}],
            "notified": 2, "log_length": 5, "state": {"phase": "play"}}
    bk.record_game("ridge", data, FileStamp(10, 20, 30), "d" * 64)
    assert bk.games_of("ann@x.org") == [GameRef("ridge", "play", ("Ann", "Ann2"), False)]
    assert bk.games_owing_mail() == ["ridge"]
    bk.record_game("ridge", {**data, "notified": 5}, FileStamp(10, 21, 30), "e" * 64)
    assert bk.games_owing_mail() == [] and bk.trusted_digest("ridge") == "e" * 64
    assert bk.set_deadline("ridge", T0) and not bk.set_deadline("nope", T0)
    bk.record_game("ridge", data, FileStamp(10, 22, 30), "e" * 64)  # keeps the deadline
    assert bk.next_deadline() == T0
    assert bk.games_due(T0 - timedelta(seconds=1)) == [] and bk.games_due(T0) == ["ridge"]
    bk.forget_game("ridge")
    assert bk.game("ridge") is None and bk.games_of("ann@x.org") == []


def test_saves_are_trusted_and_hand_edits_flagged(bk, games, monkeypatch):
    store = GameStore(games, on_save=bk.record_saved)
    bk.sync_games(store)
    gid = "v1-mid-game-5p"
    rec = store.load(gid, trusted_digest=bk.trusted_digest(gid))
    assert rec.checked  # flagged: fully replayed
    assert bk.mark_checked(gid, rec.source_digest)
    assert bk.trusted_digest(gid) == rec.source_digest
    saved = store.write(rec)  # the moderator's save: recorded through on_save
    assert bk.trusted_digest(gid) == saved.digest == rec.source_digest
    assert bk.game(gid).stamp == FileStamp.of(os.stat(games / f"{gid}.yaml"))
    assert bk.stale_games(games) == []

    # an unchanged file the moderator wrote: no replay, no comparison
    calls = []
    real_replay = gamefile.replay
    monkeypatch.setattr(gamefile, "replay", lambda *a: calls.append(a) or real_replay(*a))
    rec2 = store.load(gid, trusted_digest=bk.trusted_digest(gid))
    assert not rec2.checked and rec2.source_digest == saved.digest
    assert rec2.game.to_dict() == rec.game.to_dict()
    assert calls == []

    # a hand edit: the file's bytes differ from the digest the moderator wrote
    path = games / f"{gid}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["state"]["turn"] += 1
    data["players"][0]["address"] = "new@x.org"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert bk.stale_games(games) == [gid]
    report = bk.sync_games(store)
    assert report.changed == [gid] and report.flagged == [gid]
    assert bk.trusted_digest(gid) is None and gid in bk.games_to_check()
    assert gid in [r.game_id for r in bk.games_of("new@x.org")]
    # a load with the recorded (now wrong) digest replays and compares anyway
    with pytest.raises(StoreError, match="does not give the recorded state"):
        store.load(gid, trusted_digest=saved.digest)


def test_touched_removed_and_unreadable_files(bk, games):
    store = GameStore(games, on_save=bk.record_saved)
    bk.sync_games(store)
    gid = "v1-two-player"
    rec = store.load(gid)
    bk.mark_checked(gid, rec.source_digest)
    digest = bk.trusted_digest(gid)
    # same bytes, new inode and time (copied back from a backup): trust kept
    path = games / f"{gid}.yaml"
    raw = path.read_bytes()
    path.unlink()
    path.write_bytes(raw)
    os.utime(path, ns=(1, 1))
    report = bk.sync_games(store)
    assert report.touched == [gid] and bk.trusted_digest(gid) == digest
    # removed
    (games / "v1-second-options-4p.yaml").unlink()
    assert bk.sync_games(store).removed == ["v1-second-options-4p"]
    # kept, marked missing (its mail waits in the inbox) until forgotten on purpose
    assert bk.missing_games() == ["v1-second-options-4p"]
    assert bk.broken_games()["v1-second-options-4p"].startswith("file missing: ")
    assert bk.sync_games(store, full=True).removed == []  # reported once
    bk.forget_game("v1-second-options-4p")
    assert "v1-second-options-4p" not in bk.game_ids() and bk.missing_games() == []
    # unreadable: indexed with its error, not read again until it changes
    (games / "broken.yaml").write_text("format: 1\nplayers: [\n", encoding="utf-8")
    (games / "notagame.txt").write_text("x")
    (games / ".hidden.yaml.tmp").write_text("x")
    report = bk.sync_games(store)
    assert list(report.unreadable) == ["broken"]
    assert "cannot be read" in bk.broken_games()["broken"]
    assert bk.stale_games(games) == []
    assert bk.sync_games(store).flagged == []
    (games / "broken.yaml").write_text((V1 / "v1-two-player.yaml").read_text().replace(
        "game: v1-two-player", "game: broken"))
    assert bk.sync_games(store).changed == ["broken"] and bk.broken_games() == {}
    # a missing directory: everything is gone
    assert bk.stale_games(games.parent / "nowhere") == bk.game_ids()


def _age(directory: Path, seconds: float = 60) -> None:
    past = time.time_ns() - int(seconds * 1e9)
    os.utime(directory, ns=(past, past))


def test_an_unchanged_directory_is_not_scanned(bk, games, monkeypatch):
    store = GameStore(games)
    bk.sync_games(store)
    assert bk.stale_games(games) == []  # racy: the directory just changed, scanned again
    assert bk._meta(bk._dir_key(games)) is None
    _age(games)
    assert bk.stale_games(games) == []
    assert bk._meta(bk._dir_key(games)) is not None
    scans = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p: scans.append(p) or real(p))
    assert bk.stale_games(games) == [] and bk.sync_games(store).flagged == [] and scans == []
    # an edit in place does not change the directory: seen by a full scan
    gid = "v1-two-player"
    with open(games / f"{gid}.yaml", "a", encoding="utf-8") as fh:
        fh.write("# edited by hand\n")
    assert bk.stale_games(games) == [] and scans == []
    assert bk.stale_games(games, full=True) == [gid]
    monkeypatch.setattr(Bookkeeping, "FULL_SCAN_EVERY", 0.0)  # ... or once the last scan is old
    assert bk.stale_games(games) == [gid]
    monkeypatch.setattr(Bookkeeping, "FULL_SCAN_EVERY", 3600.0)
    assert bk.sync_games(store).changed == [gid]
    # adding, removing or replacing a file changes the directory
    _age(games)
    assert bk.stale_games(games) == []
    scans.clear()
    shutil.copy(games / f"{gid}.yaml", games / "copy.yaml")
    assert bk.stale_games(games) == ["copy"] and scans
    assert bk.sync_games(store).added == ["copy"]
    _age(games)
    bk.stale_games(games)
    (games / "copy.yaml").unlink()
    assert bk.sync_games(store).removed == ["copy"]


def test_a_crash_between_the_save_and_the_record_is_noticed(bk, games):
    """The game file is written first, the index after: a crash in between leaves a
    stale stamp, and the file (whose digest the index does not know) is replayed."""
    store = GameStore(games)  # no on_save: the record never reaches the index
    bk.sync_games(store)
    gid = "v1-two-player"
    rec = store.load(gid)
    bk.mark_checked(gid, rec.source_digest)
    rec.notified = max(rec.notified - 1, 0)  # any change to the bytes
    store.save(rec)
    assert bk.stale_games(games) == [gid]
    assert bk.sync_games(store).changed == [gid] and bk.trusted_digest(gid) is None


def test_parse_cache_is_bounded(games, monkeypatch):
    monkeypatch.setattr(GameStore, "PARSE_CACHE", 2)
    store = GameStore(games)
    for gid in store.ids():
        store.read_data(gid)
    assert len(store._parsed) == 2


def test_write_returns_the_digest_of_the_bytes(games):
    import hashlib
    store = GameStore(games)
    rec = store.load("v1-two-player")
    saved = store.write(rec)
    assert saved.digest == hashlib.sha256(saved.path.read_bytes()).hexdigest()
    assert store.read_file("v1-two-player").digest == saved.digest
    assert store.save(rec) == saved.path


# ------------------------------------------------------------------ kill -9
WRITER = textwrap.dedent("""
    import sys, os
    from datetime import datetime, timezone
    sys.path.insert(0, {repo!r})
    from moderator.store.bookkeeping import Bookkeeping
    from moderator.store.gamefile import FileStamp
    b = Bookkeeping({db!r}, legacy=None)
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    n = 0
    while True:
        with b.transaction():
            # one cycle's writes: several keys, a game row, the inbox position
            for j in range(5):
                b.mark_answered(f"<{{n}}.{{j}}@x>", "g", now)
            b.record_game("g", {{"players": [{{"name": "A", "address": "a@x.org"}}],
                                "notified": n, "log_length": n + 1,
                                "state": {{"phase": "play"}}}}, FileStamp(n, n, n), None)
            b.set_inbox("INBOX", 1, n)
        # committed: tell the parent (after the commit, never before)
        os.write(1, f"{{n}}\\n".encode())
        n += 1
""")


@pytest.mark.parametrize("delay", [0.3, 0.7])
def test_kill_9_in_the_middle_of_transactions(tmp_path, delay):
    db = tmp_path / "pbem.sqlite3"
    Bookkeeping(db, legacy=None).close()
    proc = subprocess.Popen([sys.executable, "-c", WRITER.format(repo=str(REPO), db=str(db))],
                            stdout=subprocess.PIPE)
    committed = []
    deadline = time.monotonic() + delay
    os.set_blocking(proc.stdout.fileno(), False)
    buf = b""
    while time.monotonic() < deadline or len(committed) < 3:
        chunk = proc.stdout.read() or b""
        buf += chunk
        *lines, buf = buf.split(b"\n")
        committed += [int(x) for x in lines]
        time.sleep(0.005)
        assert proc.poll() is None, "the writer died by itself"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    buf += proc.stdout.read() or b""
    committed += [int(x) for x in buf.split(b"\n") if x]
    last = committed[-1]

    with Bookkeeping(db, legacy=None) as b:
        assert b._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n_keys = b.answered_count()
        # whole transactions only: 5 keys each
        assert n_keys % 5 == 0
        done = n_keys // 5
        # every reported commit is there (one more may have committed unreported)
        assert done in (last + 1, last + 2)
        assert all(b.answered(f"<{n}.{j}@x>") for n in range(done) for j in range(5))
        assert not b.answered(f"<{done}.0@x>")
        entry = b.game("g")
        assert entry.notified == done - 1 and entry.stamp == FileStamp(done - 1, done - 1, done - 1)
        assert b.inbox().last_uid == done - 1


def test_schema_1_database_migrates_to_daily_counts(tmp_path):
    """A database of schema 1 (before the daily counts) gets the table and keeps its rows."""
    path = tmp_path / "pbem.sqlite3"
    db = sqlite3.connect(path)
    for stmt in bkmod._statements(bkmod._V1):
        db.execute(stmt)
    db.execute("INSERT INTO answered(key, game, at) VALUES ('<a@x>', 'ridge', '2031-03-01T00:00:00.000000+00:00')")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    when = datetime(2031, 3, 1, 12, tzinfo=timezone.utc)
    with Bookkeeping(path) as b:
        assert b.schema_version == bkmod.SCHEMA_VERSION >= 2
        assert b.answered("<a@x>")
        assert b.count_today("orderless:ridge:ann@example.org", when) == 0
        assert [b.bump_count("orderless:ridge:ann@example.org", when) for _ in range(3)] == [1, 2, 3]
        assert b.count_today("orderless:ridge:ann@example.org", when + timedelta(days=1)) == 0
        b.bump_count("orderless:ridge:ann@example.org", when + timedelta(days=1))
        assert b.prune_counts(when + timedelta(days=2)) == 1  # the first day's row
        assert b.count_today("orderless:ridge:ann@example.org", when + timedelta(days=1)) == 1
    with Bookkeeping(path) as b:  # counts are durable
        assert b.count_today("orderless:ridge:ann@example.org", when + timedelta(days=1)) == 1
