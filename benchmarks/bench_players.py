"""Benchmark of the built-in player: win rates and time per move.

    python benchmarks/bench_players.py [N] [--quick] [--jobs J] [--seed S]

plays N (default 1000) seeded games of the built-in player (``moderator.players.choose``)
against random legal players (``random_rule``) and N more against the demo's decision
rule (``demo_rule``, the choice rule of ``moderator.demo.Bot.decide`` on the engine);
``--quick`` is N = 100.  Game i has 3 players when i is even, else 4; the first
edition for i // 2 even, else the second; the built-in player sits at seat
(i // 4) mod players (rotated); each opponent has its own seeded generator.  No
options.  Prints ``win_rate_vs_random``, ``win_rate_vs_demo``: the share of games
in which the built-in player is among the winners (a shared win, equal money,
counts as a win for each winner; the ties are counted apart too), then
``ms_per_move_median`` and ``ms_per_move_max``: CPU time (``time.process_time``,
one process per core) of each of the built-in player's moves.  ``--jobs`` spreads
the games over processes.  Targets (issue 16): 90% against random, 75% against the
demo, 200 ms median and 1 s at worst per move.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.players import choose, demo_rule, random_rule  # noqa: E402
from moderator.rules.board import Board  # noqa: E402
from moderator.rules.engine import Game  # noqa: E402

RULES = {"random": random_rule, "demo": demo_rule}
EDITIONS = ("first-edition", "second-edition")
_BOARD: Board | None = None


def setup(i: int) -> tuple[int, str, int]:
    """Game ``i``'s number of players, ruleset and the built-in player's seat."""
    n = 3 if i % 2 == 0 else 4
    return n, EDITIONS[(i // 2) % 2], (i // 4) % n


def play(job: tuple[str, int, int]) -> dict:
    """Play game ``i`` (seed ``base + i``) against ``opponent``; return the result
    and the CPU seconds of each of the built-in player's moves."""
    global _BOARD
    opponent, base, i = job
    if _BOARD is None:
        _BOARD = Board.default()
    n, ruleset, seat = setup(i)
    seed = base + i
    players = [f"P{k + 1}" for k in range(n)]
    me = players[seat]
    game = Game.new(_BOARD, players, seed, ruleset)
    rngs = {p: random.Random(f"{seed}/{p}/{opponent}") for p in players}
    rule = RULES[opponent]
    times: list[float] = []
    while game.phase != "over":
        p = game.waiting_for()[0]
        if p == me:
            t = time.process_time()
            action = choose(game, p, rngs[p])
            times.append(time.process_time() - t)
        else:
            action = rule(game, p, rngs[p])
        game.push(p, action)
    winners = game.winners()
    return {"opponent": opponent, "i": i, "players": n, "ruleset": ruleset,
            "win": me in winners, "shared": me in winners and len(winners) > 1,
            "times": times}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("games", nargs="?", type=int, default=1000,
                    help="games against each opponent (default 1000)")
    ap.add_argument("--quick", action="store_true", help="100 games against each opponent")
    ap.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--only", choices=sorted(RULES), help="one opponent only")
    args = ap.parse_args(argv)
    n = 100 if args.quick else args.games
    opponents = [args.only] if args.only else ["random", "demo"]
    jobs = [(o, args.seed, i) for o in opponents for i in range(n)]
    wall = time.perf_counter()
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            results = pool.map(play, jobs, chunksize=4)
    else:
        results = [play(j) for j in jobs]
    wall = time.perf_counter() - wall
    times = [t for r in results for t in r["times"]]
    print(f"{len(results)} games ({n} against each of: {', '.join(opponents)}), "
          f"3 and 4 players, both editions, seats rotated; wall {wall:.0f} s")
    for o in opponents:
        mine = [r for r in results if r["opponent"] == o]
        wins = sum(r["win"] for r in mine)
        shared = sum(r["shared"] for r in mine)
        print(f"win_rate_vs_{o}: {wins / len(mine):.3f}  ({wins}/{len(mine)} games won, "
              f"{shared} of them shared wins counted as wins)")
        for players in (3, 4):
            for ed in EDITIONS:
                part = [r for r in mine if r["players"] == players and r["ruleset"] == ed]
                if part:
                    print(f"    {players} players, {ed}: {sum(r['win'] for r in part) / len(part):.3f}"
                          f" of {len(part)}")
    print(f"ms_per_move_median: {statistics.median(times) * 1000:.1f}  ({len(times)} moves, CPU time)")
    print(f"ms_per_move_max: {max(times) * 1000:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
