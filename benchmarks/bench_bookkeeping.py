"""Benchmark of the bookkeeping database (``moderator.store.bookkeeping``).

Measures, in one run (medians of several repeats, wall time on a temporary
directory of the local disk):

- an answered-key lookup and a ``mark_answered`` (one commit, fsynced: what one
  mail costs) with 5,000 and 100,000 keys kept, against today's
  ``ModeratorState.save`` with its 5,000 answered ids (rewritten per mail);
- ``stale_games`` over 10,000 small game files against 1: the full scan (one
  ``os.scandir`` + a stat per file, no parsing) and the idle poll's quick path
  (the directory unchanged since the last full scan: one ``stat``); and the idle
  poll's index work (``sync_games`` + ``games_owing_mail`` + ``games_of``).

Prints ``NAME: VALUE`` lines (times in microseconds or milliseconds, ratios
without unit)::

    python3 benchmarks/bench_bookkeeping.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.store.bookkeeping import Bookkeeping  # noqa: E402
from moderator.store.gamefile import FileStamp, GameStore  # noqa: E402
from moderator.store.state import ModeratorState  # noqa: E402

NOW = datetime(2026, 11, 29, tzinfo=timezone.utc)


def median_time(fn, repeats: int, number: int = 1) -> float:
    """Median over ``repeats`` of the seconds one call of ``fn`` takes (each
    repeat times ``number`` calls)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t) / number)
    return statistics.median(times)


def fill(bk: Bookkeeping, n: int) -> None:
    with bk.transaction():
        bk._db.executemany("INSERT INTO answered(key, game, at) VALUES (?, ?, ?)",
                           ((f"<{i}.{i * 7919 % 100003}@players.example>", "g", NOW.isoformat())
                            for i in range(n)))


def bench_answered(tmp: Path, n: int, repeats: int) -> dict[str, float]:
    path = tmp / f"answered{n}.sqlite3"
    bk = Bookkeeping(path, legacy=None)
    fill(bk, n)
    keys = [f"<{i}.{i * 7919 % 100003}@players.example>" for i in range(0, n, max(1, n // 500))]
    miss = [f"<new{i}@players.example>" for i in range(500)]

    def lookups():
        for k in keys:
            bk.answered(k)
        for k in miss:
            bk.answered(k)

    lookup = median_time(lookups, repeats) / (len(keys) + len(miss))
    counter = iter(range(10**9))

    def insert():  # one mail: its own transaction, committed (fsync)
        bk.mark_answered(f"<bench{next(counter)}@players.example>", "g", NOW)

    insert_one = median_time(insert, repeats, number=20)

    def grouped():  # one cycle of 10 mails: one transaction
        with bk.transaction():
            for _ in range(10):
                bk.mark_answered(f"<bench{next(counter)}@players.example>", "g", NOW)

    insert_grouped = median_time(grouped, repeats, number=3) / 10
    bk.close()
    return {f"answered_lookup_{n}_us": lookup * 1e6,
            f"answered_insert_commit_{n}_us": insert_one * 1e6,
            f"answered_insert_in_cycle_of_10_{n}_us": insert_grouped * 1e6}


def bench_yaml_state(tmp: Path, repeats: int) -> float:
    state = ModeratorState.load(tmp / "moderator.yaml")
    state.answered = [f"<{i}.{i * 7919 % 100003}@players.example>" for i in range(ModeratorState.KEEP)]
    state.inbox = {"mailbox": "INBOX", "uidvalidity": 1700000000, "last_uid": 4711}
    counter = iter(range(10**9))

    def save():  # today: one answered mail = the whole list rewritten
        state.answered.append(f"<yaml{next(counter)}@players.example>")
        state.save()

    return median_time(save, repeats)


GAME_FILE = """format: 1
game: {gid}
players:
- {{name: Ann, address: ann{i}@players.example, secret: k3x9p2qa}}
- {{name: Bob, address: bob{i}@players.example, secret: m4r8t2wc}}
notified: 3
log_length: 3
history: []
state: {{phase: over}}
"""


def make_games(directory: Path, n: int) -> None:
    directory.mkdir()
    for i in range(n):
        gid = f"g{i:05d}"
        (directory / f"{gid}.yaml").write_text(GAME_FILE.format(gid=gid, i=i))
        (directory / f"{gid}.yaml.lock").write_text("")  # as the real directory has them


def index_games(bk: Bookkeeping, directory: Path) -> None:
    with bk.transaction():
        for entry in os.scandir(directory):
            if entry.name.endswith(".yaml"):
                gid = entry.name[:-5]
                i = int(gid[1:])
                bk.record_game(gid, {"players": [{"name": "Ann", "address": f"ann{i}@players.example"},
                                                 {"name": "Bob", "address": f"bob{i}@players.example"}],
                                     "notified": 3, "log_length": 3, "state": {"phase": "over"}},
                               FileStamp.of(entry.stat()), "0" * 64)


def bench_stale(tmp: Path, n: int, repeats: int) -> tuple[float, float]:
    directory = tmp / f"games{n}"
    make_games(directory, n)
    bk = Bookkeeping(tmp / f"stale{n}.sqlite3", legacy=None)
    index_games(bk, directory)
    past = time.time_ns() - 3600 * 10**9  # an idle directory: last changed an hour ago
    os.utime(directory, ns=(past, past))
    assert bk.stale_games(directory) == []
    full = median_time(lambda: bk.stale_games(directory, full=True), repeats)
    stale = median_time(lambda: bk.stale_games(directory), repeats)
    store = GameStore(directory)
    sync = median_time(lambda: bk.sync_games(store), repeats)  # nothing stale: = stale_games
    owing = median_time(bk.games_owing_mail, repeats)
    route = median_time(lambda: bk.games_of(f"ann{n // 2}@players.example"), repeats)
    bk.close()
    return full, stale, sync + owing + route


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and 20,000 keys instead of 100,000")
    args = ap.parse_args()
    repeats = 5 if args.quick else 15
    big = 20_000 if args.quick else 100_000
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir=os.environ.get("PBEM_BENCH_DIR")) as d:
        tmp = Path(d)
        yaml_save = bench_yaml_state(tmp, max(3, repeats // 2))
        out["yaml_state_save_5000_ms"] = yaml_save * 1e3
        for n in (5_000, big):
            out.update(bench_answered(tmp, n, repeats))
        out["yaml_save_vs_sqlite_insert_commit_5000"] = yaml_save / (out["answered_insert_commit_5000_us"] / 1e6)
        out[f"yaml_save_vs_sqlite_insert_commit_{big}"] = yaml_save / (out[f"answered_insert_commit_{big}_us"] / 1e6)
        out[f"sqlite_lookup_{big}_vs_5000"] = out[f"answered_lookup_{big}_us"] / out["answered_lookup_5000_us"]
        one_full, one, one_idle = bench_stale(tmp, 1, repeats * 4)
        many_full, many, many_idle = bench_stale(tmp, 10_000, repeats)
        out["stale_games_full_scan_1_ms"] = one_full * 1e3
        out["stale_games_full_scan_10000_ms"] = many_full * 1e3
        out["stale_games_full_scan_10000_vs_1"] = many_full / one_full
        out["stale_games_1_ms"] = one * 1e3
        out["stale_games_10000_ms"] = many * 1e3
        out["stale_games_10000_vs_1"] = many / one
        out["index_idle_1_ms"] = one_idle * 1e3
        out["index_idle_10000_ms"] = many_idle * 1e3
    for name, value in out.items():
        print(f"{name}: {value:.3f}" if value < 100 else f"{name}: {value:.1f}")


if __name__ == "__main__":
    main()
