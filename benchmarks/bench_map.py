"""Benchmark of the board map (moderator/render/board_map.py).

    python benchmarks/bench_map.py [N] [--seed S]

renders the map of a 4-player game on the default board N times (default 30) at
the start of play and late in play (after random legal play, before the end), as
one player sees it, PNG encoding included, and prints the median wall time of one
render in ms (target: at most 150 ms), the PNG sizes, and the one-off layout of the
board (computed once per board and cached), and the CPU of the three readers'
maps of each new position of a game in play (what a cycle draws after each
order: ``render_new_position_3_readers_cpu_ms``; a map drawn again for the same
position and reader is mostly kept pieces).  Prints ``NAME: VALUE`` lines.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.render import board_map  # noqa: E402
from moderator.rules.board import Board  # noqa: E402
from moderator.rules.engine import Game  # noqa: E402

PLAYERS = ["P1", "P2", "P3", "P4"]


def played(board: Board, actions: int, seed: int) -> Game:
    """A game after up to ``actions`` random legal actions, stopped before its end."""
    g = Game.new(board, PLAYERS, seed)
    rng = random.Random(seed)
    for _ in range(actions):
        p = g.waiting_for()[0]
        nxt = g.copy()
        nxt.push(p, nxt.random_action(p, rng))
        if nxt.phase == "over":
            break
        g = nxt
    return g


def median_ms(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("renders", nargs="?", type=int, default=30, help="renders per position (default 30)")
    ap.add_argument("--seed", type=int, default=3, help="seed of the game (default 3)")
    args = ap.parse_args(argv)
    board = Board.default()
    start = played(board, len(PLAYERS), args.seed)
    late = played(board, 10_000, args.seed)
    t = time.perf_counter()
    board_map.render_map(start, "P1")  # the first map of a process: fonts, layout
    first_ms = (time.perf_counter() - t) * 1000
    layouts = []
    for _ in range(5):
        board_map._LAYOUTS.clear()
        t = time.perf_counter()
        board_map.layout(board)
        layouts.append(time.perf_counter() - t)
    print(f"first_render_in_process_ms: {first_ms:.1f}")
    print(f"layout_once_per_board_median_ms: {statistics.median(layouts) * 1000:.1f}")
    for name, g in (("start", start), ("late", late)):
        on_board = sum(board_map.COMPANIES[c].trains - g.box[c] for c in g.box)
        ms = median_ms(lambda: board_map.render_map(g, "P1"), args.renders)
        print(f"render_{name}_median_ms: {ms:.1f}")
        print(f"render_{name}_trains_on_board: {on_board}")
        print(f"render_{name}_png_bytes: {len(board_map.render_map(g, 'P1'))}")
    ms = median_ms(lambda: board_map.board_text(late), args.renders)
    print(f"text_late_median_ms: {ms:.2f}")
    # what a cycle does after each order: every reader's map of a new position
    positions = [played(board, n, args.seed + 1) for n in range(8, 8 + 3 * args.renders, 3)]
    readers = ["P1", "P2", "P3"]
    for g in positions[:3]:  # the layout, fonts and texts of the board once
        board_map.render_map(g, "P1")
    times = []
    for g in positions:
        c = time.process_time()
        for reader in readers:
            board_map.render_map(g, reader)
        times.append(time.process_time() - c)
    print(f"render_new_position_3_readers_cpu_ms: {statistics.median(times) * 1000:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
