"""Benchmark of the moderation cycle on the embedded default (local Maildirs).

    python benchmarks/bench_cycle.py [--games N] [--seed S]

plays N (default 2) whole 3-player games with the built-in players, every order a
real mail through ``Moderator.run_cycle`` (read, route, authenticate, parse, apply,
save the game file atomically, render and spool the status mails, deliver them to the
outbox Maildir), and reports the median and 90th percentile wall time of a cycle that
handles one order mail, and the share of it spent in the game file (load + save).
Machines here are shared and noisy: compare medians, and ratios between runs.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.store import gamefile as store_module  # noqa: E402
from moderator.config import Config  # noqa: E402
from moderator.moderation.cycle import Moderator  # noqa: E402
from moderator.demo import DEMO_PLAYERS, Bot, MaildirReader  # noqa: E402


def one_game(seed: int) -> tuple[list[float], float, int]:
    """Play one game; return cycle times (s), time in game-file load+save (s), orders."""
    import mailbox

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        config = Config(games_dir=d / "games", maildir_inbox=d / "mail" / "inbox",
                        maildir_outbox=d / "mail" / "outbox", spool_dir=d / "spool")
        mod = Moderator(config)
        mod.create_game("bench", DEMO_PLAYERS, seed=seed)
        (d / "mail").mkdir(exist_ok=True)
        inbox = mailbox.Maildir(str(config.maildir_inbox), create=True)
        reader = MaildirReader(config.maildir_outbox)
        rng = random.Random(seed)
        bots = {a: Bot(n, a, config.moderator_address, random.Random(rng.random())) for n, a in DEMO_PLAYERS}
        store_time = [0.0]
        orig_load, orig_save = store_module.GameStore.load, store_module.GameStore.save

        def timed(fn):
            def wrapper(*a, **k):
                t = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    store_time[0] += time.perf_counter() - t
            return wrapper

        store_module.GameStore.load, store_module.GameStore.save = timed(orig_load), timed(orig_save)
        times: list[float] = []
        try:
            while mod.store.read_data("bench")["state"]["phase"] != "over":
                mails: dict[str, list] = {}
                for m in reader():
                    mails.setdefault(m["To"].addresses[0].addr_spec, []).append(m)
                for addr, msgs in mails.items():
                    order = bots[addr].receive(msgs)
                    if order is not None:
                        inbox.add(order.as_bytes())
                t = time.perf_counter()
                report = mod.run_cycle()
                dt = time.perf_counter() - t
                if report.applied == 1:
                    times.append(dt)
        finally:
            store_module.GameStore.load, store_module.GameStore.save = orig_load, orig_save
        return times, store_time[0], len(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="moderation cycle benchmark")
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    all_times: list[float] = []
    store_total = 0.0
    orders = 0
    for i in range(args.games):
        times, st, n = one_game(args.seed + i)
        all_times += times
        store_total += st
        orders += n
    all_times.sort()
    med = statistics.median(all_times)
    p90 = all_times[int(0.9 * (len(all_times) - 1))]
    print(f"{args.games} game(s), {orders} order mails, one cycle per order")
    print(f"cycle with one order: median {med * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms")
    print(f"game file load+save: {store_total / sum(all_times) * 100:.0f}% of cycle time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
