"""Benchmark: the cost of one order late in a game against early in it.

    python benchmarks/bench_turns.py [RUNS] [--turn T] [--seed S]

Makes two game files in a temporary games directory by random legal play (4
players, first edition, the default board; investing preferred when possible, so
that the game lasts): one at turn 1 and one at turn T (default 150).  Each is
written by ``GameStore.write``, as the moderator writes it, and its digest is the
trusted one.  Then, RUNS times (default 30) for each file, from the same bytes
every time (the file is put back and a fresh ``GameStore`` used, so no parse cache
helps): one order cycle = a trusted load (``GameStore.load(trusted_digest=...)``),
one random legal order applied (``GameRecord.apply``; the order is chosen
before the clock starts, as a player's mail brings it) and a save
(``GameStore.write``: dump, atomic write with fsync).  The CPU time
(``time.process_time``) of each step is measured by timing the same functions
the store calls, one after the other; the figures are medians in ms.

Ends with lines ``NAME: VALUE``: ``turn150_vs_turn1`` (the ratio of the median
cycle CPU times, the target is at most 1.2) and the breakdown per file
(``parse``: YAML parse, or with the snapshot ``GameStore.read_file`` (``marshal`` and
the texts of the list entries); ``copy``: the copy ``read_file`` hands out; ``restore``:
``restore_game`` (``Game.from_dict``; the orders' strict notation is read on first use); ``apply``
(judging and applying the order);
``to_data``; ``dump``: the YAML dump, with unchanged list entries reused;
``write``: the atomic write; ``snapshot``: writing the snapshot), plus the
file sizes.  ``--no-snapshot`` measures the store as it was before the snapshot
(a parse and a whole dump every time).  ``--replay`` also times the full replay and comparison (``pbem replay``,
hand-edited files) for comparison.  ``--consecutive N`` also plays up to N orders
one after the other on each file (a fresh ``GameStore`` for each, as one process per
mail; the snapshot as the saves before left it: whole, or with delta frames) and
prints ``consecutive_mean_ms_turnT``, the mean CPU per order, and the orders played.
The garbage collector is set as ``pbem run`` sets it (``moderator.runtime.tune_gc``);
``--default-gc`` keeps Python's defaults.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml  # noqa: E402

from moderator.rules.actions import Invest  # noqa: E402
from moderator.rules.board import Board  # noqa: E402
from moderator.rules.engine import Game  # noqa: E402
from moderator.runtime import tune_gc  # noqa: E402
from moderator.store import gamefile  # noqa: E402
from moderator.store.files import atomic_write  # noqa: E402
from moderator.store.gamefile import GameRecord, GameStore, Player  # noqa: E402

PLAYERS = ["Ann", "Bob", "Cy", "Dee"]


def make_record(board: Board, seed: int, turn: int, invest_bias: float = 0.9) -> GameRecord:
    """A record of a random legal game stopped when ``turn`` play turns were taken
    (each order with a Message-ID and a time, as mail gives them)."""
    game = Game.new(board, PLAYERS, seed, "first-edition")
    players = [Player(n, f"{n.lower()}@example.org", "abcdefgh") for n in PLAYERS]
    rec = GameRecord("g", game, players, "default", created="2026-01-01T00:00:00+00:00")
    rng = random.Random(seed)
    i = 0
    while game.phase == "initial" or (game.phase == "play" and game.turn < turn):
        p = game.waiting_for()[0]
        if game.phase == "play" and game.share_hands[p] and rng.random() < invest_bias:
            action = rng.choice([a for a in game.legal_actions(p) if isinstance(a, Invest)])
        else:
            action = game.random_action(p, rng)
        rec.apply(p, action, f"<order-{i}.{seed}@example.org>", "2026-01-01T12:00:00+00:00")
        i += 1
    if game.phase != "play":
        raise SystemExit(f"seed {seed}: the game ended at turn {game.turn}; try another --seed")
    rec.notified = len(game.events)
    rec.threads = {p: f"<thread-{p}@pbem.localhost>" for p in PLAYERS}
    return rec


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def put_back(directory: Path, base: bytes, snap: bytes | None) -> None:
    """The game file ``base`` and its snapshot ``snap`` as ``GameStore.write`` left them."""
    (directory / "g.yaml").write_bytes(base)
    snap_path = GameStore(directory).snapshot_path("g")
    if snap is None:
        snap_path.unlink(missing_ok=True)
    else:
        snap_path.write_bytes(snap)


def one_cycle(directory: Path, base: bytes, digest: str, rng: random.Random,
              snap: bytes | None = None) -> dict[str, float]:
    """One order on the game file ``base`` (bytes), step by step, as
    ``GameStore.load`` + ``GameRecord.apply`` + ``GameStore.write`` do it; returns
    the CPU seconds of each step and their total (``cycle``), and checks that the
    whole load gives the same record."""
    path = directory / "g.yaml"
    put_back(directory, base, snap)
    t: dict[str, float] = {}
    # the order, as a player's mail brings it: chosen before the clock starts
    # (choosing is the player's work; the moderator judges and applies it)
    game = GameStore(directory).load("g", trusted_digest=digest).game
    p = game.waiting_for()[0]
    action = game.random_action(p, rng)
    put_back(directory, base, snap)
    store = GameStore(directory)
    t0 = time.process_time()
    record = store.load("g", trusted_digest=digest)
    record.apply(p, action, "<new@example.org>", "2026-01-02T00:00:00+00:00")
    store.write(record)
    t["cycle"] = time.process_time() - t0

    # the same steps one by one (the functions the store calls)
    put_back(directory, base, snap)
    store = GameStore(directory)
    raw, t["read"] = timed(path.read_bytes)
    if snap is None:
        data, t["parse"] = timed(lambda: yaml.load(raw.decode("utf-8"), Loader=gamefile.SafeLoader))
        data, t["copy"] = timed(lambda: copy.deepcopy(data))
    else:  # read_file: the digest, the snapshot (JSON) and the texts of the list entries
        store._trusting["g"] = digest
        data, t["parse"] = timed(lambda: store.read_file("g").data)
        t["copy"] = 0.0
    board, t["board"] = timed(lambda: gamefile.load_board_ref(data["board"]))
    game, t["restore"] = timed(lambda: gamefile.restore_game(data, board, owned=True))
    assert game == record.game or len(game.history) + 1 == len(record.game.history)
    rec2 = GameRecord("g", game, record.players, data["board"], history=[dict(h) for h in data["history"]],
                      log_memo=(list(game.events), data["log"]))  # as ``GameStore.load`` makes it
    _, t["apply"] = timed(lambda: rec2.apply(p, action, "<x@y>"))
    out, t["to_data"] = timed(rec2.to_data)
    texts = None
    if snap is None:
        text, t["dump"] = timed(lambda: gamefile._dump(out))
    else:  # unchanged list entries keep their text
        (text, texts), t["dump"] = timed(lambda: store._dump_reusing(path, out, digest))
    _, t["write"] = timed(lambda: atomic_write(path, text.encode("utf-8")))
    if snap is not None:
        _, t["snapshot"] = timed(lambda: store._write_snapshot("g", digest, out, texts))
    _, t["sha256"] = timed(lambda: hashlib.sha256(raw).hexdigest())
    return t


def one_replay(directory: Path, base: bytes) -> float:
    (directory / "g.yaml").write_bytes(base)
    _, t = timed(lambda: GameStore(directory).load("g"))
    return t


def consecutive(directory: Path, base: bytes, digest: str, snap: bytes | None, n: int,
                rng: random.Random) -> list[float]:
    """Up to ``n`` orders one after the other on the game file ``base`` (until the
    game ends), each a trusted load, apply and save with a fresh store; the CPU
    seconds of each."""
    put_back(directory, base, snap)
    times = []
    for i in range(n):
        game = GameStore(directory).load("g", trusted_digest=digest).game
        if game.phase != "play":
            break
        p = game.waiting_for()[0]
        invest = [a for a in game.legal_actions(p) if isinstance(a, Invest)] if game.share_hands[p] else []
        action = rng.choice(invest) if invest and rng.random() < 0.9 else game.random_action(p, rng)
        store = GameStore(directory)
        t0 = time.process_time()
        record = store.load("g", trusted_digest=digest)
        record.apply(p, action, f"<next-{i}@example.org>", "2026-01-02T00:00:00+00:00")
        digest = store.write(record).digest
        times.append(time.process_time() - t0)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("runs", nargs="?", type=int, default=30, help="cycles per file (default 30)")
    ap.add_argument("--turn", type=int, default=150, help="the late turn (default 150)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the games (default 0)")
    ap.add_argument("--replay", action="store_true", help="also time the full replay and comparison")
    ap.add_argument("--consecutive", type=int, default=0, metavar="N",
                    help="also play up to N orders one after the other on each file")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="as a moderator without the snapshot: YAML parse and whole dump every time")
    ap.add_argument("--default-gc", action="store_true",
                    help="keep Python's default collector settings (pbem run sets its own: moderator/runtime.py)")
    args = ap.parse_args(argv)
    if not args.default_gc:
        tune_gc()  # as ``pbem run`` does after its imports
    board = Board.default()
    print(f"libyaml: loader {gamefile.SafeLoader.__name__}, dumper {gamefile.SafeDumper.__name__}")
    with tempfile.TemporaryDirectory() as tmp:
        files: dict[int, tuple[Path, bytes, str, bytes | None]] = {}
        for turn in (1, args.turn):
            d = Path(tmp) / f"turn{turn}"
            store = GameStore(d)
            saved = store.write(make_record(board, args.seed, turn))
            snap = store.snapshot_path("g")
            files[turn] = (d, saved.path.read_bytes(), saved.digest,
                           None if args.no_snapshot or not snap.exists() else snap.read_bytes())
        results: dict[int, dict[str, list[float]]] = {t: {} for t in files}
        replays: dict[int, list[float]] = {t: [] for t in files}
        rng = random.Random(args.seed)
        for _ in range(3):  # warm up
            for turn, (d, base, digest, snap) in files.items():
                one_cycle(d, base, digest, rng, snap)
        for _ in range(args.runs):  # interleaved: both files see the same machine
            for turn, (d, base, digest, snap) in files.items():
                for k, v in one_cycle(d, base, digest, rng, snap).items():
                    results[turn].setdefault(k, []).append(v)
                if args.replay:
                    replays[turn].append(one_replay(d, base))
        med = {t: {k: statistics.median(v) * 1000 for k, v in r.items()} for t, r in results.items()}
        late = args.turn
        print(f"{args.runs} cycles per file; CPU ms, medians; history entries: "
              + ", ".join(f"turn {t}: {len(yaml.load(files[t][1], Loader=gamefile.SafeLoader)['history'])}"
                          for t in files))
        steps = [k for k in med[1] if k != "cycle"]
        print(f"{'step':10} {'turn 1':>9} {f'turn {late}':>9}")
        for k in ["cycle"] + steps:
            print(f"{k:10} {med[1][k]:9.2f} {med[late][k]:9.2f}")
        for t in files:
            print(f"file_bytes_turn{t}: {len(files[t][1])}")
            for k in ["cycle"] + steps:
                print(f"{k}_ms_turn{t}: {med[t][k]:.2f}")
            if args.replay:
                print(f"full_replay_load_ms_turn{t}: {statistics.median(replays[t]) * 1000:.2f}")
        if args.consecutive:
            for turn, (d, base, digest, snap) in files.items():
                times = consecutive(d, base, digest, snap, args.consecutive, random.Random(args.seed))
                print(f"consecutive_orders_turn{turn}: {len(times)}")
                print(f"consecutive_mean_ms_turn{turn}: {statistics.mean(times) * 1000:.2f}")
        print(f"turn{late}_vs_turn1: {med[late]['cycle'] / med[1]['cycle']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
