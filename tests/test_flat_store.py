"""The game store's flat cost: a save reuses the text of the unchanged entries of
the growing lists and still writes exactly the bytes of a whole dump; a trusted
load reads the snapshot instead of parsing YAML, and never a stale one."""
from __future__ import annotations

import marshal
import random
import shutil
import zlib
from pathlib import Path

import pytest
import yaml

from moderator.rules.actions import Invest
from moderator.rules.board import Board
from moderator.rules.engine import Game
from moderator.store import gamefile
from moderator.store.gamefile import GameRecord, GameStore, Player, StoreError

FIXTURES = Path(__file__).parent / "fixtures" / "games" / "v1"
NAMES = ["Ann", "Bob", "Cy", "Dee"]


def record(seed: int, orders: int) -> GameRecord:
    game = Game.new(Board.default(), NAMES, seed, "first-edition")
    rec = GameRecord("g", game, [Player(n, f"{n.lower()}@example.org", "abcdefgh") for n in NAMES],
                     "default", created="2026-01-01T00:00:00+00:00")
    rng = random.Random(seed)
    for i in range(orders):
        if game.phase == "over":
            break
        p = game.waiting_for()[0]
        rec.apply(p, game.random_action(p, rng), f"<o{i}@example.org>", "2026-01-01T12:00:00+00:00")
    rec.threads = {n: f"<t-{n}@pbem.localhost>" for n in NAMES}
    return rec


def parsed(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=gamefile.SafeLoader)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_saves_reusing_texts_are_byte_identical_to_a_whole_dump(tmp_path, seed):
    rng = random.Random(seed)
    store = GameStore(tmp_path)
    rec = record(seed, rng.randrange(0, 60))
    saved = store.write(rec)
    steps = 0
    while rec.game.phase != "over" and steps < 400:
        # sometimes a new process (a cold store, the snapshot), sometimes the same store
        if rng.random() < 0.3:
            store = GameStore(tmp_path)
            rec = store.load("g", trusted_digest=saved.digest)
        for _ in range(rng.randrange(1, 4)):
            if rec.game.phase == "over":
                break
            p = rec.game.waiting_for()[0]
            rec.apply(p, rec.game.random_action(p, rng), f"<n{steps}@example.org>", "2026-01-02T00:00:00+00:00")
            steps += 1
        if rng.random() < 0.2:
            rec.notified = len(rec.game.events)
        saved = store.write(rec)
        text = saved.path.read_text(encoding="utf-8")
        assert text == gamefile._dump(rec.to_data())
        assert parsed(saved.path) == saved.data
        # the snapshot, its delta frames applied, is what the parse gives
        assert gamefile.read_snapshot(store.snapshot_path("g").read_bytes())[:2] == (saved.digest, saved.data)
    assert steps > 20


def test_a_changed_earlier_entry_is_dumped_again(tmp_path):
    store = GameStore(tmp_path)
    rec = record(5, 30)
    store.write(rec)
    rec.history[3]["received"] = "changed: yes"
    rec.history[4]["message_id"] = None
    saved = store.write(rec)
    assert saved.path.read_text(encoding="utf-8") == gamefile._dump(rec.to_data())
    assert parsed(saved.path)["history"][3]["received"] == "changed: yes"


def test_empty_lists_and_an_unusual_key_order(tmp_path):
    store = GameStore(tmp_path)
    rec = record(6, 0)
    saved = store.write(rec)
    assert saved.path.read_text(encoding="utf-8") == gamefile._dump(rec.to_data())
    text, texts = store._dump_reusing(saved.path, {"b": 1, "history": [], "log": []}, None)
    assert texts is None and text == gamefile._dump({"b": 1, "history": [], "log": []})


def test_trusted_load_uses_the_snapshot_and_gives_what_the_parse_gives(tmp_path, monkeypatch):
    store = GameStore(tmp_path)
    saved = store.write(record(7, 80))
    blob = store.snapshot_path("g").read_bytes()
    digest, data, lens, starts, layout = gamefile.read_snapshot(blob)
    assert digest == saved.digest and data == parsed(saved.path)
    assert list(layout) == list(data["state"])
    # the length of each entry's YAML text, from where the list's entries start
    yaml_text = saved.path.read_text(encoding="utf-8")
    start = yaml_text.index("\nhistory:\n") + len("\nhistory:\n")
    assert starts["history"] == start and len(lens["history"]) == len(data["history"])
    assert yaml_text[start:start + sum(lens["history"])] == gamefile._dump(
        {"history": data["history"]})[len("history:\n"):]
    calls = []
    real = yaml.load
    monkeypatch.setattr(gamefile.yaml, "load", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    fresh = GameStore(tmp_path)
    rec = fresh.load("g", trusted_digest=saved.digest)
    assert calls == [] and not rec.checked
    assert rec.to_data() == saved.data
    # the next save from the snapshot's texts is a whole dump's bytes
    p = rec.game.waiting_for()[0]
    rec.apply(p, rec.game.random_action(p, random.Random(1)), "<y@example.org>", "")
    assert fresh.write(rec).path.read_text(encoding="utf-8") == gamefile._dump(rec.to_data())
    # without the trusted digest (pbem replay, doctor, a file not known): parsed, checked
    rec2 = GameStore(tmp_path).load("g")
    assert calls == [1] and rec2.checked and rec2.game == rec.game


def test_hand_edited_file_never_uses_the_snapshot(tmp_path):
    store = GameStore(tmp_path)
    saved = store.write(record(8, 40))
    path = saved.path
    data = parsed(path)
    data["state"]["money"]["Ann"] += 7
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    # even a digest the bookkeeping trusted: the bytes differ, so they are parsed and checked
    with pytest.raises(StoreError, match="money"):
        GameStore(tmp_path).load("g", trusted_digest=saved.digest)
    # and a snapshot made to claim the new bytes is still not used without a trusted digest
    gf = GameStore(tmp_path).read_file("g")
    assert gf.data["state"]["money"]["Ann"] == data["state"]["money"]["Ann"]


HEAD = 22
"""Before a whole snapshot's payload: 14 bytes of magic, then its frame's CRC-32 and
length, 4 bytes each (snapshot format 4)."""


def _frame(payload: bytes) -> bytes:
    """One frame: the CRC-32 of the payload and its length, big-endian, then the payload."""
    return zlib.crc32(payload).to_bytes(4, "big") + len(payload).to_bytes(4, "big") + payload


def _sealed(payload: bytes) -> bytes:
    """A snapshot file's bytes around a marshal payload: magic and one frame (so
    that a changed payload is read, and judged, by its content)."""
    return b"pbem-snapshot\x00" + _frame(payload)


@pytest.mark.parametrize("damage", ["torn", "stale", "other-dumper", "missing", "garbage", "moved-texts",
                                    "zeroed-middle", "one-bit"])
def test_a_damaged_or_stale_snapshot_is_ignored(tmp_path, damage):
    store = GameStore(tmp_path)
    saved = store.write(record(9, 50))
    snap_path = store.snapshot_path("g")
    blob = snap_path.read_bytes()
    assert blob[:HEAD] == _sealed(blob[HEAD:])[:HEAD]
    snap = list(marshal.loads(blob[HEAD:]))
    assert snap[0] == gamefile.SNAPSHOT_FORMAT == 5
    if damage == "torn":
        snap_path.write_bytes(blob[: len(blob) // 2])
    elif damage == "zeroed-middle":
        # a crash that left the file its length but zeros inside (delayed allocation)
        mid = len(blob) // 2
        snap_path.write_bytes(blob[:mid] + b"\x00" * 4096 + blob[mid + 4096:])
    elif damage == "one-bit":
        i = len(blob) - 40
        snap_path.write_bytes(blob[:i] + bytes([blob[i] ^ 1]) + blob[i + 1:])
    elif damage in ("stale", "other-dumper", "moved-texts"):
        if damage == "stale":
            snap[2] = "0" * 64
        elif damage == "other-dumper":
            snap[1] = "another"
            snap[3]["state"]["money"]["Ann"] += 1
        else:
            snap[5]["history"] += 1
        snap_path.write_bytes(_sealed(marshal.dumps(tuple(snap))))
    elif damage == "missing":
        snap_path.unlink()
    else:
        snap_path.write_bytes(b"\x00" * 100)
    fresh = GameStore(tmp_path)
    rec = fresh.load("g", trusted_digest=saved.digest)
    assert rec.to_data() == saved.data
    # the next save is still a whole dump's bytes, and refreshes the snapshot
    p = rec.game.waiting_for()[0]
    rec.apply(p, rec.game.random_action(p, random.Random(0)), "<x@example.org>", "")
    again = fresh.write(rec)
    assert again.path.read_text(encoding="utf-8") == gamefile._dump(rec.to_data())
    assert gamefile.read_snapshot(snap_path.read_bytes())[0] == again.digest


def test_a_format_3_snapshot_is_ignored_and_rewritten(tmp_path, monkeypatch):
    """A snapshot an earlier pbem wrote (format 3: BLAKE2b-128 after the magic) is
    not read: the file is parsed, and the next save writes a snapshot of today's format."""
    import hashlib

    store = GameStore(tmp_path)
    saved = store.write(record(11, 40))
    snap_path = store.snapshot_path("g")
    snap = list(marshal.loads(snap_path.read_bytes()[HEAD:]))
    snap[0] = 3
    payload = marshal.dumps(tuple(snap), 4)
    snap_path.write_bytes(b"pbem-snapshot\x00" + hashlib.blake2b(payload, digest_size=16).digest() + payload)
    calls = []
    real = yaml.load
    monkeypatch.setattr(gamefile.yaml, "load", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    fresh = GameStore(tmp_path)
    rec = fresh.load("g", trusted_digest=saved.digest)
    assert calls == [1] and rec.to_data() == saved.data
    again = fresh.write(rec)
    blob = snap_path.read_bytes()
    assert blob[:HEAD] == _sealed(blob[HEAD:])[:HEAD] and marshal.loads(blob[HEAD:])[0] == 5
    assert gamefile.read_snapshot(blob)[0] == again.digest


def test_a_format_4_snapshot_is_ignored_and_rewritten(tmp_path, monkeypatch):
    """A snapshot of snapshot format 4 (the layout of today, holding a format-3
    game file whose log is sentences) is not read: the file is parsed, and the
    next save writes a format-5 snapshot (issue 25)."""
    store = GameStore(tmp_path)
    saved = store.write(record(11, 40))
    snap_path = store.snapshot_path("g")
    snap = list(marshal.loads(snap_path.read_bytes()[HEAD:]))
    snap[0] = 4
    snap_path.write_bytes(b"pbem-snapshot\x00" + gamefile._snapshot_frame(marshal.dumps(tuple(snap), 4)))
    assert gamefile.read_snapshot(snap_path.read_bytes()) is None
    calls = []
    real = yaml.load
    monkeypatch.setattr(gamefile.yaml, "load", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    fresh = GameStore(tmp_path)
    rec = fresh.load("g", trusted_digest=saved.digest)
    assert calls == [1] and rec.to_data() == saved.data
    again = fresh.write(rec)
    blob = snap_path.read_bytes()
    assert marshal.loads(blob[HEAD:])[0] == 5 and gamefile.read_snapshot(blob)[0] == again.digest


def test_a_snapshot_is_written_over_a_longer_one_and_cut_to_its_length(tmp_path):
    """The snapshot is overwritten in place, then cut: a longer file left there (an
    earlier, longer snapshot, or junk) leaves no tail behind."""
    store = GameStore(tmp_path)
    saved = store.write(record(12, 40))
    snap_path = store.snapshot_path("g")
    size = snap_path.stat().st_size
    snap_path.write_bytes(b"\xff" * (size + 5000))
    store.write(store.load("g", trusted_digest=saved.digest))  # the same game: the same digest
    # a tail left behind would be part of the payload and fail its checksum
    assert snap_path.stat().st_size < size + 5000
    assert gamefile.read_snapshot(snap_path.read_bytes())[:2] == (saved.digest, saved.data)
    shutil.rmtree(snap_path.parent)  # the directory is made again when missing
    store.write(store.load("g", trusted_digest=saved.digest))
    assert gamefile.read_snapshot(snap_path.read_bytes())[:2] == (saved.digest, saved.data)


def frames(store: GameStore) -> list[int]:
    """The end of each frame of game g's snapshot (the first: the whole snapshot's)."""
    ends: list[int] = []
    assert gamefile._read_frames(store.snapshot_path("g").read_bytes(), ends) is not None
    return ends


def test_saves_append_delta_frames_then_a_whole_snapshot_again(tmp_path):
    """Each save appends a delta frame to the snapshot it read or wrote (the
    snapshot file grows by less than a whole one), at most SNAPSHOT_DELTAS of them
    within the whole snapshot's size; then a whole snapshot again.  Every snapshot,
    deltas applied, is what the YAML parse of the file gives, and a cold trusted
    load from it gives the same record, without a parse.  A history cut short (as
    ``gm undo`` cuts it) is a delta too; an entry changed in place is not."""
    rng = random.Random(4)
    store = GameStore(tmp_path)
    rec = record(4, 40)
    saved = store.write(rec)
    counts = []
    for i in range(40):
        if i % 3 == 0:  # a new process now and then: the snapshot read back
            store = GameStore(tmp_path)
            rec = store.load("g", trusted_digest=saved.digest)
            assert rec.to_data() == saved.data
        if i == 20:
            rec.history = rec.history[:-2]
        elif i == 30:
            rec.history[0]["received"] = "2026-01-01T13:00:00+00:00"
        else:
            p = rec.game.waiting_for()[0]
            invest = [a for a in rec.game.legal_actions(p) if isinstance(a, Invest)]  # the game lasts
            action = rng.choice(invest) if invest else rec.game.random_action(p, rng)
            rec.apply(p, action, f"<d{i}@example.org>", "2026-01-02T00:00:00+00:00")
        if i == 19:  # a whole snapshot before the cut, so that the deltas have room (their sizes vary)
            store.snapshot_path("g").unlink()
            store.snapshot_path("g").write_bytes(b"")
        before = store.snapshot_path("g").stat().st_size
        saved = store.write(rec)
        ends = frames(store)
        counts.append(len(ends) - 1)
        assert gamefile.read_snapshot(store.snapshot_path("g").read_bytes())[:2] == (saved.digest, parsed(saved.path))
        if len(ends) > 1:  # appended: the bytes before the new frame are the old file's
            assert ends[-2] == before and ends[-1] - before < ends[0] / 2
            assert ends[-1] - ends[0] <= ends[0] - len(gamefile._SNAPSHOT_MAGIC)
    assert counts[19] == 0 and counts[20] == 1  # the cut history: a delta
    assert counts[30] == 0  # an entry changed in place: a whole snapshot
    assert max(counts) <= GameStore.SNAPSHOT_DELTAS and counts.count(0) >= 3
    assert sorted(set(counts)) == list(range(max(counts) + 1)) and max(counts) >= 3
    calls = []
    real = yaml.load
    try:
        gamefile.yaml.load = lambda *a, **k: (calls.append(1), real(*a, **k))[1]
        again = GameStore(tmp_path).load("g", trusted_digest=saved.digest)
    finally:
        gamefile.yaml.load = real
    assert calls == [] and again.to_data() == saved.data


def test_a_torn_delta_frame_is_ignored(tmp_path, monkeypatch):
    """A crash while a delta frame was appended leaves the snapshot torn at its
    end: not read back (the file is parsed; the record is the same), and the next
    save writes a whole snapshot."""
    store = GameStore(tmp_path)
    rec = record(13, 40)
    store.write(rec)
    p = rec.game.waiting_for()[0]
    rec.apply(p, rec.game.random_action(p, random.Random(0)), "<t@example.org>", "")
    saved = store.write(rec)
    ends = frames(store)
    assert len(ends) == 2
    snap_path = store.snapshot_path("g")
    blob = snap_path.read_bytes()
    calls = []
    real = yaml.load
    monkeypatch.setattr(gamefile.yaml, "load", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    for cut in (ends[0] + 3, (ends[0] + ends[1]) // 2, ends[1] - 1):
        snap_path.write_bytes(blob[:cut])
        fresh = GameStore(tmp_path)
        assert fresh.load("g", trusted_digest=saved.digest).to_data() == saved.data
    assert calls == [1, 1, 1]
    # a torn frame in the file's own length: zeros over the end of the delta
    snap_path.write_bytes(blob[:ends[1] - 100] + b"\x00" * 100)
    fresh = GameStore(tmp_path)
    rec = fresh.load("g", trusted_digest=saved.digest)
    assert calls == [1, 1, 1, 1] and rec.to_data() == saved.data
    again = fresh.write(rec)
    assert len(frames(fresh)) == 1
    assert gamefile.read_snapshot(snap_path.read_bytes())[0] == again.digest


def test_a_snapshot_written_meanwhile_by_another_process_is_not_appended_to(tmp_path):
    """A store appends only to the snapshot file it read or wrote itself (the same
    inode, size and modification time): when another process wrote it since, the
    save writes a whole snapshot."""
    store = GameStore(tmp_path)
    rec = record(14, 40)
    saved = store.write(rec)
    rec = store.load("g", trusted_digest=saved.digest)  # its texts stay remembered
    snap_path = store.snapshot_path("g")
    blob = snap_path.read_bytes()
    snap_path.unlink()
    snap_path.write_bytes(blob)  # the same bytes, another file
    p = rec.game.waiting_for()[0]
    rec.apply(p, rec.game.random_action(p, random.Random(2)), "<w@example.org>", "")
    again = store.write(rec)
    assert len(frames(store)) == 1
    assert gamefile.read_snapshot(snap_path.read_bytes())[:2] == (again.digest, parsed(again.path))


def test_a_snapshot_rewritten_in_place_within_one_clock_tick_is_not_appended_to(tmp_path):
    """Inode, size and modification time cannot tell apart a snapshot another
    process rewrote in place to the same size within one tick of a coarse clock:
    the last frame's checksum, read back before appending, does."""
    import os

    store = GameStore(tmp_path)
    rec = record(15, 40)
    saved = store.write(rec)
    snap_path = store.snapshot_path("g")
    st = snap_path.stat()
    blob = bytearray(snap_path.read_bytes())
    blob[14] ^= 0xFF  # the whole snapshot's checksum: another snapshot's bytes
    with open(snap_path, "r+b") as fh:  # in place: the same inode and size
        fh.write(blob)
    os.utime(snap_path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same time
    assert (snap_path.stat().st_ino, snap_path.stat().st_size, snap_path.stat().st_mtime_ns) == \
        (st.st_ino, st.st_size, st.st_mtime_ns)
    p = rec.game.waiting_for()[0]
    rec.apply(p, rec.game.random_action(p, random.Random(3)), "<c@example.org>", "")
    again = store.write(rec)
    assert len(frames(store)) == 1  # a whole snapshot, not a delta on bytes it did not write
    assert gamefile.read_snapshot(snap_path.read_bytes())[:2] == (again.digest, parsed(again.path))


def test_fixture_files_load_and_save_as_a_whole_dump(tmp_path):
    for src in sorted(FIXTURES.glob("*.yaml")):
        shutil.copy(src, tmp_path / src.name)
        store = GameStore(tmp_path)
        rec = store.load(src.stem)
        saved = store.write(rec)
        assert saved.path.read_text(encoding="utf-8") == gamefile._dump(rec.to_data())
        again = GameStore(tmp_path).load(src.stem, trusted_digest=saved.digest)
        assert again.to_data() == rec.to_data()
        assert GameStore(tmp_path).write(again).digest == saved.digest


def test_snapshot_is_not_written_for_data_the_parse_would_not_give_back(tmp_path):
    store = GameStore(tmp_path)
    rec = record(10, 30)
    saved = store.write(rec)
    assert store.snapshot_path("g").exists()
    rec.history[-1]["by"] = ("a", "tuple")  # the YAML parse gives back a list
    data = rec.to_data()
    text, texts = store._dump_reusing(saved.path, data, saved.digest)
    assert not texts["plain"]
    store._write_snapshot("g", "1" * 64, data, texts)
    assert not store.snapshot_path("g").exists()
    # nor for a tuple deep in the state, dumped anew
    rec.history[-1]["by"] = "bot"
    saved = store.write(rec)
    assert store.snapshot_path("g").exists()
    data = rec.to_data()
    data["state"]["money"] = dict(data["state"]["money"], Ann=(1, 2))
    text, texts = store._dump_reusing(saved.path, data, saved.digest)
    assert not texts["plain"]
    assert gamefile._plain(rec.to_data()) and not gamefile._plain({"a": {(1, 2): 3}})


def test_a_snapshot_of_an_older_formats_file_is_parsed_and_migrated(tmp_path, monkeypatch):
    """A snapshot written by the pbem before an upgrade (its mapping of format 5,
    here made by a store whose FORMAT is 5) is not handed out as a mapping of the
    current format: the file is parsed and migrated, and the next save writes the
    current format."""
    monkeypatch.setattr(gamefile, "FORMAT", 5)
    saved = GameStore(tmp_path).write(record(9, 30))
    assert parsed(saved.path)["format"] == 5
    assert gamefile.read_snapshot(GameStore(tmp_path).snapshot_path("g").read_bytes())[1]["format"] == 5
    monkeypatch.setattr(gamefile, "FORMAT", 6)
    calls = []
    real = yaml.load
    monkeypatch.setattr(gamefile.yaml, "load", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    store = GameStore(tmp_path)
    rec = store.load("g", trusted_digest=saved.digest)
    assert calls == [1]  # the snapshot was not used
    assert rec.to_data()["format"] == 6
    store.write(rec)
    assert parsed(saved.path)["format"] == 6
