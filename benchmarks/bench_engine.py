"""Benchmark of the rules engine: whole games of random legal play.

    python benchmarks/bench_engine.py [N] [--players P] [--seed S] [--ruleset R]

plays N (default 200) whole games on the default board, each player choosing a
uniformly random legal action (``Game.random_action``), and reports games/s,
actions/s and the median CPU time per game (``time.process_time``) in ms; then
``Game.legal_summary`` (the structured summary of legal builds a status mail
shows) for the player on move after every action of ``--summary-games`` further
games, each timed once on the fresh position (as the moderator renders it), the
median in µs.  Ends with lines ``NAME: VALUE``: ``ms_per_game`` (the target is at
most 1 ms per 4-player game) and ``legal_summary_us`` (target at most 50 µs).
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


def summary_times(board: Board, players: list[str], seed: int, ruleset: str) -> list[float]:
    """One game by random legal actions; after every action the CPU seconds of one
    ``legal_summary`` of the player on move (play phase)."""
    game = Game.new(board, players, seed, ruleset)
    rng = random.Random(seed)
    out = []
    while game.phase != "over":
        player = game.waiting_for()[0]
        if game.phase == "play":
            t = time.process_time()
            game.legal_summary(player)
            out.append(time.process_time() - t)
        game.push(player, game.random_action(player, rng))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("games", nargs="?", type=int, default=200, help="number of games (default 200)")
    ap.add_argument("--players", type=int, default=4, help="players per game (default 4)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--ruleset", choices=RULESETS, default="first-edition")
    ap.add_argument("--summary-games", type=int, default=50, help="games for legal_summary (default 50)")
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
    summaries: list[float] = []
    for i in range(args.summary_games):
        summaries += summary_times(board, players, args.seed + 10_000 + i, args.ruleset)
    print(f"legal_summary of the player on move, {len(summaries)} positions: median "
          f"{statistics.median(summaries) * 1e6:.1f} µs, 90th percentile "
          f"{sorted(summaries)[int(0.9 * (len(summaries) - 1))] * 1e6:.1f} µs")
    print(f"ms_per_game: {med:.2f}")
    print(f"legal_summary_us: {statistics.median(summaries) * 1e6:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
