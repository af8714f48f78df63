"""Benchmark of the rail network's calls in whole random games, per call.

    python benchmarks/bench_network.py [N] [--rounds R]

plays N (default 300) random 4-player games as ``bench_engine.py`` does (same
seeds), recording every ``Network.place``, ``Network.placement_at`` and
``Network.placement_totals`` call with its arguments, then replays the recorded
calls of each game on a new game's network, timing the CPU time
(``time.process_time``) of whole replays: only ``Network.new_game``; the
places; the places and totals; everything.  The cost of one call is the
difference between replays divided by the number of calls (the replay loop's
own cost is measured with do-nothing calls and subtracted), the median over R
rounds (default 7).  Ends with lines ``NAME: VALUE`` in µs: ``place_us``,
``placement_at_us``, ``placement_totals_us``, ``new_game_us`` and
``network_us_per_game``.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.rules.board import Board  # noqa: E402
from moderator.rules.components import COMPANIES  # noqa: E402
from moderator.rules.engine import Game  # noqa: E402
from moderator.rules.network import Network  # noqa: E402

Op = tuple  # ("p", company, section, type) | ("a", type, q) | ("t",)


def record(board: Board, games: int) -> list[list[Op]]:
    """The network calls of ``games`` random games (seeds 0, 1, ...), in order."""
    calls: list[Op] = []
    place, at, totals = Network.place, Network.placement_at, Network.placement_totals

    def rec_place(self, company, sid, space):  # type: ignore[no-untyped-def]
        calls.append(("p", company, sid, space))
        return place(self, company, sid, space)

    def rec_at(self, track_type, q):  # type: ignore[no-untyped-def]
        calls.append(("a", track_type, q))
        return at(self, track_type, q)

    def rec_totals(self):  # type: ignore[no-untyped-def]
        calls.append(("t",))
        return totals(self)

    out = []
    Network.place, Network.placement_at, Network.placement_totals = rec_place, rec_at, rec_totals
    try:
        for seed in range(games):
            calls = []
            game = Game.new(board, ["P1", "P2", "P3", "P4"], seed)
            rng = random.Random(seed)
            while game.phase != "over":
                player = game.waiting_for()[0]
                game.push(player, game.random_action(player, rng))
            out.append(calls)
    finally:
        Network.place, Network.placement_at, Network.placement_totals = place, at, totals
    return out


class _Idle:
    """Do-nothing calls: the replay loop's own cost."""

    @classmethod
    def new_game(cls, board, placed, box):  # type: ignore[no-untyped-def]
        return cls()

    def place(self, company, sid, space):  # type: ignore[no-untyped-def]
        pass

    def placement_at(self, track_type, q):  # type: ignore[no-untyped-def]
        pass

    def placement_totals(self):  # type: ignore[no-untyped-def]
        pass


def replay(cls, board: Board, trace: list[list[Op]], kinds: str) -> float:
    """CPU seconds of replaying the calls of ``kinds`` (letters of p, a, t) of
    every game of ``trace`` on new networks of ``cls``."""
    placed0 = {sid: [None] * len(s.spaces) for sid, s in board.sections.items()}
    box0 = {a: c.trains - (len(board.companies[a].starts) if a in board.companies else 0)
            for a, c in COMPANIES.items()}
    games = [[op for op in ops if op[0] in kinds] for ops in trace]
    total = 0.0
    for ops in games:
        placed = {sid: list(row) for sid, row in placed0.items()}
        box = dict(box0)
        t = time.process_time()
        n = cls.new_game(board, placed, box)
        place, at, totals = n.place, n.placement_at, n.placement_totals
        for op in ops:
            k = op[0]
            if k == "p":
                place(op[1], op[2], op[3])
            elif k == "a":
                at(op[1], op[2])
            else:
                totals()
        total += time.process_time() - t
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("games", nargs="?", type=int, default=300, help="number of games (default 300)")
    ap.add_argument("--rounds", type=int, default=7, help="replays of every kind (default 7)")
    args = ap.parse_args(argv)
    board = Board.default()
    trace = record(board, args.games)
    count = {k: sum(op[0] == k for ops in trace for op in ops) for k in "pat"}
    modes = ("", "p", "pt", "pat")
    times: dict[tuple[str, str], list[float]] = {(c, m): [] for c in ("net", "idle") for m in modes}
    for r in range(args.rounds):
        for m in modes:
            for name, cls in (("net", Network), ("idle", _Idle)):
                times[name, m].append(replay(cls, board, trace, m))
    cost = {m: statistics.median(times["net", m]) - statistics.median(times["idle", m]) for m in modes}
    g = args.games
    new_game = cost[""] / g
    place = (cost["p"] - cost[""]) / count["p"]
    totals = (cost["pt"] - cost["p"]) / count["t"]
    at = (cost["pat"] - cost["pt"]) / count["a"]
    print(f"{g} games: {count['p'] / g:.1f} place, {count['a'] / g:.1f} placement_at, "
          f"{count['t'] / g:.1f} placement_totals calls per game; medians of {args.rounds} replays")
    print(f"place_us: {place * 1e6:.2f}")
    print(f"placement_at_us: {at * 1e6:.2f}")
    print(f"placement_totals_us: {totals * 1e6:.3f}")
    print(f"new_game_us: {new_game * 1e6:.2f}")
    print(f"network_us_per_game: {cost['pat'] / g * 1e6:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
