"""Benchmark of orders in advance (issue 30): how long whole games last when the
players answer after realistic delays, with and without ``next:`` orders.

    python benchmarks/bench_advance.py [N] [--quick] [--planners P] [--median H] [--sigma S] [--seed S]

Plays N (default 24; ``--quick``: 6) seeded games of 3, 4 and 5 players in turn
(first edition, no options), every seat the built-in player
(``moderator.players.choose``, its own seeded generator), on the rules engine
directly: no mail, no moderator, so it runs in seconds.  Each game is played
twice from the same seed: without orders in advance and with them.

The players' timing (documented model):

- a player answers the status mail that makes it their move after a delay drawn
  from a lognormal distribution with median ``--median`` hours (default 10) and
  shape ``--sigma`` (default 1.0: the middle half of the answers between 5.1 and
  19.6 hours, one in ten after 36 hours); an answer later than the deadline (72
  hours, the default) is the built-in player's move at the deadline, as the
  moderator's policy ``bot`` does;
- the moderator's cycle runs every 5 minutes: an order is applied up to 300
  seconds after it arrives (uniform), and the next player's status mail leaves
  then;
- with orders in advance, a share ``--planners`` (default 0.5) of the seats are
  planners: when a player's turn begins, the planner who moves after them reads
  that status mail after a delay of their own (the same distribution); if they
  read it before their own turn comes, they queue ``next: ORDER``: the built-in
  player's choice for the position they expect (the player on move playing the
  built-in player's choice), with the alternative ``or take stack`` after a
  take from the display.  When their turn comes the first legal choice is
  played in the same cycle (the engine's ``resolve``, as the moderator does);
  none legal: the order is dropped and they answer after a new delay from then.
  The initial investments are made at once by everyone (no queue).

Prints per game count, then ``NAME: VALUE`` lines: ``days_without_advance`` and
``days_with_advance`` (the median game length in days: the last move's time),
``days_ratio`` (with / without, medians), ``queued_share`` (of all the orders of
the games with orders in advance, the share played from a queue),
``queued_dropped_share`` (of the queued orders, the share dropped as not legal
when the turn came), ``orders_per_game`` (median).
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.players import choose  # noqa: E402
from moderator.rules.actions import Build, Take  # noqa: E402
from moderator.rules.board import Board  # noqa: E402
from moderator.rules.engine import Game, IllegalAction  # noqa: E402

HOUR = 3600.0
DEADLINE = 72 * HOUR
CYCLE = 300.0
_BOARD: Board | None = None


def board() -> Board:
    global _BOARD
    if _BOARD is None:
        _BOARD = Board.default()
    return _BOARD


def delay(rng: random.Random, median_h: float, sigma: float) -> float:
    """Seconds until a player answers: lognormal (median ``median_h`` hours,
    shape ``sigma``), the deadline at most; plus the cycle's wait (0-300 s)."""
    answer = min(rng.lognormvariate(math.log(median_h * HOUR), sigma), DEADLINE)
    return answer + rng.uniform(0, CYCLE)


def planned(game: Game, mover: str, planner: str, rng: random.Random) -> list:
    """The order ``planner`` queues while ``mover`` is on move: the built-in
    player's choice for the position after ``mover`` plays the built-in player's
    choice (as the planner expects), with ``or take stack`` after a display take."""
    guess = game.copy()
    guess.push(mover, choose(guess, mover, random.Random(rng.random())))
    if guess.phase != "play" or guess.to_move != planner:
        return []
    first = choose(guess, planner, random.Random(rng.random()))
    out = [first]
    if isinstance(first, Build) and first.take is not None and first.take.source == "display":
        out.append(replace(first, take=Take("stack")))
    return out


def play(seed: int, n: int, planners: float, median_h: float, sigma: float) -> dict:
    """One game of ``n`` seats (seed ``seed``); ``planners``: the share of seats
    that queue orders (0: none).  Returns its length in seconds and the counts."""
    players = [f"P{k + 1}" for k in range(n)]
    game = Game.new(board(), players, seed, "first-edition", {})
    move_rng = {p: random.Random(f"{seed}/move/{p}") for p in players}
    time_rng = {p: random.Random(f"{seed}/time/{p}") for p in players}
    plan_rng = {p: random.Random(f"{seed}/plan/{p}") for p in players}
    plans = set(random.Random(f"{seed}/planners").sample(players, round(planners * n)))
    now = 0.0
    # the initial investments: everyone at once, the phase over at the last one
    ends = []
    for p in players:
        ends.append(delay(time_rng[p], median_h, sigma))
        game.push(p, choose(game, p, move_rng[p]))
    now = max(ends)
    orders = queued_played = queued_dropped = 0
    queue: dict[str, list] = {}
    while game.phase == "play":
        p = game.to_move
        if p in queue:  # their order in advance: played in the cycle their turn came
            options, done = queue.pop(p), None
            for action in options:
                try:
                    game.resolve(p, action)
                except IllegalAction:
                    continue
                done = action
                break
            if done is not None:
                game.push(p, done)
                orders += 1
                queued_played += 1
                _plan_next(game, p, plans, queue, plan_rng, time_rng, now, now, median_h, sigma)
                continue
            queued_dropped += 1
        answer = now + delay(time_rng[p], median_h, sigma)
        _plan_next(game, p, plans, queue, plan_rng, time_rng, now, answer, median_h, sigma)
        game.push(p, choose(game, p, move_rng[p]))
        orders += 1
        now = answer
    return {"seconds": now, "orders": orders, "queued_played": queued_played, "queued_dropped": queued_dropped}


def _plan_next(game: Game, mover: str, plans: set, queue: dict, plan_rng: dict, time_rng: dict,
               start: float, moved: float, median_h: float, sigma: float) -> None:
    """The planner after ``mover`` (whose turn began at ``start`` and whose move
    comes at ``moved``) queues an order when they read the status mail before
    that move."""
    if game.phase != "play":
        return
    order = game.players
    nxt = order[(order.index(mover) + 1) % len(order)]
    if nxt not in plans or nxt in queue or nxt == mover:
        return
    if start + delay(time_rng[nxt], median_h, sigma) >= moved:
        return  # they read it only after their turn came: they answer as usual
    options = planned(game, mover, nxt, plan_rng[nxt])
    if options:
        queue[nxt] = options


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("games", nargs="?", type=int, default=24, help="games (default 24)")
    ap.add_argument("--quick", action="store_true", help="6 games")
    ap.add_argument("--planners", type=float, default=0.5, help="share of seats that queue (default 0.5)")
    ap.add_argument("--median", type=float, default=10.0, help="median answer delay in hours (default 10)")
    ap.add_argument("--sigma", type=float, default=1.0, help="lognormal shape (default 1.0)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    args = ap.parse_args(argv)
    n = 6 if args.quick else args.games
    wall = time.perf_counter()
    without, with_ = [], []
    for i in range(n):
        seats = 3 + i % 3
        without.append(play(args.seed + i, seats, 0.0, args.median, args.sigma))
        with_.append(play(args.seed + i, seats, args.planners, args.median, args.sigma))
    wall = time.perf_counter() - wall
    print(f"{n} games of 3, 4 and 5 seats, first edition, each played without and with orders in advance; "
          f"answers lognormal median {args.median:g} h, sigma {args.sigma:g}, deadline 72 h, cycle 5 min; "
          f"planners {args.planners:g} of the seats; wall {wall:.1f} s")
    for seats in (3, 4, 5):
        a = [r["seconds"] / 86400 for i, r in enumerate(without) if 3 + i % 3 == seats]
        b = [r["seconds"] / 86400 for i, r in enumerate(with_) if 3 + i % 3 == seats]
        if a:
            print(f"    {seats} seats: {statistics.median(a):.1f} days without, {statistics.median(b):.1f} with "
                  f"({len(a)} games)")
    days_a = statistics.median(r["seconds"] / 86400 for r in without)
    days_b = statistics.median(r["seconds"] / 86400 for r in with_)
    orders = sum(r["orders"] for r in with_)
    played = sum(r["queued_played"] for r in with_)
    dropped = sum(r["queued_dropped"] for r in with_)
    print(f"days_without_advance: {days_a:.1f}")
    print(f"days_with_advance: {days_b:.1f}")
    print(f"days_ratio: {days_b / days_a:.3f}")
    print(f"queued_share: {played / orders:.3f}")
    print(f"queued_dropped_share: {dropped / max(1, played + dropped):.3f}")
    print(f"orders_per_game: {statistics.median(r['orders'] for r in with_):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
