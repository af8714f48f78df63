"""Benchmark of the substitute pool's cost on every mail (issue 27).

    python benchmarks/bench_pool.py [--volunteers N] [--offers M] [--repeat R]

``pool.handle`` runs on every mail that is no sign-up mail, before routing: for
a player's order (a reply in their game's thread) it reads the first line, looks
for offer tokens in the mail's References (one indexed query per referenced
game) and for a waiting pool request of the sender, and returns None.  This
measures that, with a pool of N volunteers (default 500) and M offers (default
300) in the bookkeeping database (a real SQLite file), against the cost of
reading the same mail (``read_mail``), the floor of any mail's handling; and
the pool's clock stage with M vacancies not due.  Medians of R (default 2000)
calls, in microseconds; the machine is shared, so compare the ratio.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.config import Config  # noqa: E402
from moderator.mail.read import read_mail  # noqa: E402
from moderator.mail.threads import new_message_id, thread_token  # noqa: E402
from moderator.moderation import pool  # noqa: E402
from moderator.moderation.report import CycleReport  # noqa: E402
from moderator.moderation.send import Post  # noqa: E402
from moderator.store.bookkeeping import Bookkeeping  # noqa: E402
from moderator.store.gamefile import GameStore  # noqa: E402
from moderator.store.spool import Spool  # noqa: E402

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def median_us(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--volunteers", type=int, default=500)
    ap.add_argument("--offers", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        config = Config(games_dir=tmp / "games", maildir_inbox=tmp / "in", maildir_outbox=tmp / "out",
                        spool_dir=tmp / "spool")
        config.games_dir.mkdir()
        (tmp / "spool").mkdir()
        bk = Bookkeeping.in_spool(tmp / "spool")
        with bk.transaction():
            for i in range(args.volunteers):
                bk.register_person(f"v{i}@pool.example", f"V{i}", T0)
                bk.pool_join(f"v{i}@pool.example", "*", T0)
            for i in range(args.offers):
                game = f"g{i % 30}"
                bk.add_vacancy(game, f"S{i}", "abandoned", T0)
                bk.set_vacancy(game, f"S{i}", round=1, round_ends=T0 + timedelta(days=2))
                bk.add_offer(game, f"S{i}", f"v{i}@pool.example", 1, f"{i:016x}", T0, T0 + timedelta(days=2))
        post = Post(config, Spool(tmp / "spool"), bk, lambda: T0)
        store = GameStore(config.games_dir)
        ours = new_message_id("g7", thread_token("g7", "a player's secret"), "up.example")
        msg = EmailMessage(policy=policy.default)
        msg["From"] = "Ann <ann@example.org>"
        msg["To"] = "moderator@up.example"
        msg["Subject"] = "Re: Union Pacific g7 (Ann)"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg["In-Reply-To"] = ours
        msg["References"] = ours
        msg.set_content("build KCC DEN-KCY white; take stack\n\nOn Tuesday the moderator wrote:\n> your turn\n")
        raw = msg.as_bytes()
        om = read_mail(raw, own_address="moderator@up.example")
        report = CycleReport()
        assert pool.handle(om, "k", post, store, report, T0) is None
        read = median_us(lambda: read_mail(raw, own_address="moderator@up.example"), args.repeat)
        handle = median_us(lambda: pool.handle(om, "k", post, store, report, T0), args.repeat)
        clock = median_us(lambda: pool.run_clock(post, store, T0 + timedelta(hours=1), report), max(50, args.repeat // 20))
        print(f"volunteers {args.volunteers}, offers {args.offers}, repeat {args.repeat}")
        print(f"read_mail of a player's order:          median {read:8.1f} us")
        print(f"pool.handle of it (not pool mail):      median {handle:8.1f} us  ({handle / read:.2f} x read_mail)")
        print(f"pool.run_clock, {args.offers} vacancies not due: median {clock:8.1f} us")
        bk.close()


if __name__ == "__main__":
    main()
