"""Benchmark of the rules engine: whole games of random legal play.

    python benchmarks/bench_engine.py [N] [--players P] [--seed S] [--ruleset R]

plays N (default 200) whole games on the default board, each player choosing a
uniformly random legal action (``Game.random_action``), and reports games/s,
actions/s and the median CPU time per game (``time.process_time``) in ms.  The
target is a median under 10 ms per 4-player game.
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
from moderator.rules.engine import RULESETS, Game  # noqa: E402


def play(board: Board, players: list[str], seed: int, ruleset: str) -> int:
    """Play one whole game by random legal actions; return the number of actions."""
    game = Game.new(board, players, seed, ruleset)
    rng = random.Random(seed)
    n = 0
    while game.phase != "over":
        player = game.waiting_for()[0]
        game.push(player, game.random_action(player, rng))
        n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("games", nargs="?", type=int, default=200, help="number of games (default 200)")
    ap.add_argument("--players", type=int, default=4, help="players per game (default 4)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--ruleset", choices=RULESETS, default="first-edition")
    args = ap.parse_args(argv)
    board = Board.default()
    players = [f"P{i + 1}" for i in range(args.players)]
    play(board, players, -1, args.ruleset)  # warm up (board adjacency, imports)
    times: list[float] = []
    actions = 0
    wall = time.perf_counter()
    cpu = time.process_time()
    for i in range(args.games):
        t = time.process_time()
        actions += play(board, players, args.seed + i, args.ruleset)
        times.append(time.process_time() - t)
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    med = statistics.median(times) * 1000
    print(f"{args.games} games of {args.players} players ({args.ruleset}), {actions} actions")
    print(f"games/s:   {args.games / cpu:10.1f}  (CPU time; wall {wall:.2f} s)")
    print(f"actions/s: {actions / cpu:10.0f}  ({actions / args.games:.1f} actions per game)")
    print(f"median CPU ms per game: {med:.2f}  (mean {cpu / args.games * 1000:.2f}, "
          f"max {max(times) * 1000:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
