"""The engine's cost counted in CPU instructions: repeatable on a shared machine.

    python benchmarks/bench_engine_instructions.py [N] [--players P]

Timings on a machine shared with other work move by 10-30 % from run to run;
the instructions a process executes do not.  This runs valgrind's callgrind
(Debian's ``valgrind``) on this Python twice: once playing N whole random games
(as ``bench_engine.py`` plays them: ``Game.random_action`` then ``Game.push``
until the game is over, seeds 0 to N-1, after one warm-up game) and once
playing none, with ``PYTHONHASHSEED=0``; the difference divided by the games
played is the instructions per game.  Ends with ``NAME: VALUE`` lines:
``minstr_per_game`` (millions of instructions per game) and
``ns_per_instruction``: the CPU time per game of one run of ``--timing-games``
games outside valgrind divided by the count, to turn the count into time on
this machine (as noisy as any timing).

Instructions are not time (a cache miss costs more than an addition), but a
change that removes a tenth of the instructions removes about a tenth of the
time of this pure-Python loop; compare two trees by running this in each.
Exit status 2 when valgrind is missing.

    python benchmarks/bench_engine_instructions.py --bytecodes [N]

counts instead, without valgrind, the Python bytecodes each function executes
over N games (``sys.settrace`` with opcode events; much slower than the
games), per game, with the calls per game: where the interpreter's work goes.
Ends with ``bytecodes_per_game`` and ``python_calls_per_game``.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

PLAY = """\
import random, sys
sys.path.insert(0, {root!r})
from moderator.rules.board import Board
from moderator.rules.engine import Game
board = Board.default()
players = [f"P{{i + 1}}" for i in range({players})]
def play(seed):
    g = Game.new(board, players, seed, "first-edition")
    rng = random.Random(seed)
    while g.phase != "over":
        p = g.waiting_for()[0]
        g.push(p, g.random_action(p, rng))
n = int(sys.argv[1])
if n:
    play(-1)
    for i in range(n):
        play(i)
"""


def count(script: str, games: int) -> int:
    """Instructions callgrind counted for ``python script games`` (the whole process)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             os.path.realpath(sys.executable), script, str(games)],
            env=env, capture_output=True, text=True, check=True)
    m = re.search(r"Collected\s*:\s*([\d,]+)", out.stderr)
    if not m:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def bytecodes(games: int, players: int) -> int:
    """Print the bytecodes executed per game by each function over ``games``
    games (after a warm-up game), most first; return 0."""
    import collections
    import random

    sys.path.insert(0, str(ROOT))
    from moderator.rules.board import Board
    from moderator.rules.engine import Game

    board = Board.default()
    names = [f"P{i + 1}" for i in range(players)]

    def play(seed: int) -> None:
        g = Game.new(board, names, seed, "first-edition")
        rng = random.Random(seed)
        while g.phase != "over":
            p = g.waiting_for()[0]
            g.push(p, g.random_action(p, rng))

    play(-1)
    ops: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        key = (Path(frame.f_code.co_filename).name, frame.f_code.co_qualname)
        calls[key] += 1

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode":
                ops[key] += 1
            return local
        return local

    sys.settrace(tracer)
    try:
        for i in range(games):
            play(i)
    finally:
        sys.settrace(None)
    print(f"{games} games of {players} players (first edition): bytecodes per game by function")
    for (name, func), n in ops.most_common(25):
        print(f"{n / games:9.0f}  {calls[name, func] / games:7.1f} calls  {name}:{func}")
    print(f"bytecodes_per_game: {sum(ops.values()) / games:.0f}")
    print(f"python_calls_per_game: {sum(calls.values()) / games:.0f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="?", type=int, default=40, help="number of games (default 40)")
    ap.add_argument("--players", type=int, default=4, help="players per game (default 4)")
    ap.add_argument("--timing-games", type=int, default=300,
                    help="games of the timing outside valgrind (default 300)")
    ap.add_argument("--bytecodes", action="store_true",
                    help="count Python bytecodes per function instead (no valgrind)")
    args = ap.parse_args(argv)
    if args.bytecodes:
        return bytecodes(args.games, args.players)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "play.py")
        Path(script).write_text(PLAY.format(root=str(ROOT), players=args.players))
        base = count(script, 0)
        full = count(script, args.games)
        per_game = (full - base) / (args.games + 1)  # the warm-up game is played too
        env = dict(os.environ, PYTHONHASHSEED="0")
        t = time.perf_counter()
        cpu0 = os.times()
        subprocess.run([sys.executable, script, str(args.timing_games)], env=env, check=True)
        cpu1 = os.times()
        wall = time.perf_counter() - t
        cpu_empty0 = os.times()
        subprocess.run([sys.executable, script, "0"], env=env, check=True)
        cpu_empty1 = os.times()
    cpu = (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system)
    cpu_empty = ((cpu_empty1.children_user + cpu_empty1.children_system)
                 - (cpu_empty0.children_user + cpu_empty0.children_system))
    print(f"{args.games} games of {args.players} players (first edition), one warm-up game")
    print(f"instructions: {full:,} with the games, {base:,} without (start-up and imports)")
    print(f"per game: {per_game / 1e6:.3f} million instructions")
    ms_per_game = max(cpu - cpu_empty, 0) * 1000 / (args.timing_games + 1)
    print(f"one timing of {args.timing_games} games (the first seeds) outside valgrind: "
          f"{ms_per_game:.2f} ms CPU per game ({wall:.2f} s wall)")
    print(f"minstr_per_game: {per_game / 1e6:.3f}")
    if cpu > cpu_empty:
        print(f"ns_per_instruction: {ms_per_game * 1e6 / per_game:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
