"""Benchmark of the archive site's build (``pbem archive --force``), e.g. before
and after the charts (issue 28).

    python benchmarks/bench_site.py [N] [--rounds R] [--code DIR]

builds the site of the frozen game files (``tests/fixtures/games/v1``: five games,
316 orders, 15 dividends) from scratch N times (default 5) in a child process per
round, and prints the median wall time of one whole build (every game replayed,
its pages and board pictures written, the index and the statistics) and the bytes
of the game pages.  With ``--code DIR`` (another checkout, e.g. the code before a
change) the rounds alternate between that checkout and this one, so that both
are measured in the same minutes on a shared machine, and the ratio of the
medians is printed (``site_build_vs_code``).  Prints ``NAME: VALUE`` lines.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
FIXTURES = HERE / "tests" / "fixtures" / "games" / "v1"


def worker(root: str, n: int) -> None:
    """In a child: build the site with the code of ``root`` ``n`` times; print
    the times (s) and the game pages' bytes as JSON."""
    sys.path.insert(0, root)
    import shutil

    from moderator.archive.site import build_site
    from moderator.store.gamefile import GameStore

    with tempfile.TemporaryDirectory() as tmp:
        games = Path(tmp) / "games"
        shutil.copytree(FIXTURES, games)
        times = []
        for i in range(n):
            t = time.perf_counter()
            report = build_site(GameStore(games), Path(tmp) / "site", force=True)
            times.append(time.perf_counter() - t)
            assert not report.errors, report.errors
        size = sum(p.stat().st_size for p in (Path(tmp) / "site" / "games").glob("*/index.html"))
        stats = (Path(tmp) / "site" / "stats.html").stat().st_size
    print(json.dumps({"times": times, "game_pages_bytes": size, "stats_bytes": stats}))


def run(root: Path, n: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", str(root), str(n)], capture_output=True,
                         text=True, check=True, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="?", type=int, default=5, help="builds per round (default 5)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (a child process each; default 3)")
    ap.add_argument("--code", help="another checkout to measure in alternate rounds (the code before)")
    ap.add_argument("--worker", nargs=2, metavar=("ROOT", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return 0
    trees = {"this": HERE}
    if args.code:
        trees["code"] = Path(args.code).resolve()
    results: dict[str, dict] = {k: {"times": []} for k in trees}
    for _ in range(args.rounds):
        for key, root in trees.items():
            r = run(root, args.builds)
            results[key]["times"] += r["times"][1:] if args.builds > 1 else r["times"]  # the first warms up
            results[key].update(game_pages_bytes=r["game_pages_bytes"], stats_bytes=r["stats_bytes"])
    for key, r in results.items():
        name = "site_build" if key == "this" else "site_build_code"
        print(f"{name}_median_s: {statistics.median(r['times']):.3f}")
        print(f"{name}_game_pages_bytes: {r['game_pages_bytes']}")
        print(f"{name}_stats_bytes: {r['stats_bytes']}")
    if args.code:
        ratio = statistics.median(results["this"]["times"]) / statistics.median(results["code"]["times"])
        print(f"site_build_vs_code: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
