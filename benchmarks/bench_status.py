"""Benchmark of building status mails, and the check that a change leaves them byte for byte (issue 31).

    python benchmarks/bench_status.py [--games 40] [--rounds 3] [--code DIR] [--seed 1]

1. ``--games`` running games made as ``bench_load.py`` makes them (2-6 seats,
   every stage, seeded, ``make_games``), saved and loaded through ``GameStore``;
   every seat's secret set to a fixed text and its language set, so that the
   mails depend on nothing random but their Message-ID, Date and boundaries.
2. For every game, one status mail (``notify.status_mail``: text, HTML part,
   board map, the whole ``EmailMessage``) to each seat with an address, of
   the game's last six events, as a cycle builds them after an order; once
   to warm the caches a long-running loop has warm, then timed (CPU,
   ``time.process_time``): the CPU per status mail, and its parts (``status_text``,
   ``mail_map``, ``to_html``, ``build_message``; ``flatten``, the bytes spooled).
   Twice: every reader of a game in one language (``one``: English, as in
   ``bench_load.py``), and the readers of a game in different languages (``mixed``:
   en, es, de, cs, zh in turn), where nothing of a position is shared.
3. ``--code DIR``: the same in another checkout (the code before a change), the
   two run in turn in processes of their own, ``--rounds`` times, so that a busy
   machine slows them alike; the medians and their ratio
   ``status_mail_vs_code_one`` / ``_mixed``, and each part's
   (``status_mail_mail_map_vs_code_one``: the board map alone); and ``status_mails_identical``: 1 when
   every mail of both codes is the same bytes once its Date, Message-IDs,
   Content-IDs and multipart boundaries are masked (``masked``), else 0 and
   the first mail that differs.

It ends with lines ``NAME: VALUE``.  No server, no network.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ["en", "es", "de", "cs", "zh"]
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def masked(raw: bytes) -> bytes:
    """A flattened mail with what differs between two builds of the same mail
    masked: the Date and Message-ID lines, every ``<id@domain>`` (In-Reply-To,
    References, Content-ID), ``cid:`` references and multipart boundaries."""
    raw = re.sub(rb"={15}[0-9a-f]+==", b"BOUNDARY", raw)
    raw = re.sub(rb"^(Date|Message-ID): .*$", rb"\1: X", raw, flags=re.M)
    raw = re.sub(rb"<[^<>@\s]+@[^<>\s]+>", b"<ID>", raw)
    return re.sub(rb"cid:[^\"\s]+", b"cid:X", raw)


def worker(code: Path, games: int, seed: int, mixed: bool, save: Path | None) -> dict:
    """Build the status mails with the checkout ``code``: returns ``{"per_mail_ms",
    "parts": {name: ms per mail}, "mails"}``; ``save``: the masked mails written there."""
    sys.path[:0] = [str(code), str(code / "benchmarks"), str(code / "tests"), str(ROOT / "benchmarks")]
    from moderator.config import load_config
    from moderator.mail import compose
    from moderator.moderation import notify, send
    from moderator.moderation.cycle import Moderator
    from moderator.render import board_map
    import bench_load

    tmp = Path(tempfile.mkdtemp(prefix="bench-status-"))
    (tmp / "pbem.yaml").write_text("moderator: {address: moderator@up.example, name: UP moderator}\n"
                                   "games_dir: games\n")
    config = load_config(tmp / "pbem.yaml")
    made = bench_load.make_games(config, games, seed, NOW)
    mod = Moderator(config, clock=lambda: NOW)
    post = mod._post()
    records = []
    for gid in made:
        record = mod.store.load(gid)
        for i, p in enumerate(record.players):
            p.language = LANGUAGES[(i + int(gid[1:])) % 5] if mixed else "en"
            p.secret = f"s{i}{gid[1:]}xy"
        records.append(record)

    spent: dict[str, float] = defaultdict(float)

    def timed(module, name):
        fn = getattr(module, name)

        def wrapper(*a, **k):
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += time.process_time() - t
        setattr(module, name, wrapper)

    for module, name in ((notify, "status_text"), (board_map, "mail_map"), (send, "to_html"),
                         (send, "build_message")):
        timed(module, name)

    def build():
        return [notify.status_mail(post, r, p, r.game.events[-6:], drawn=[], boards={})
                for r in records for p in r.players if p.address]

    build()  # the caches a running loop has warm (templates, fonts, catalogues)
    spent.clear()
    t = time.process_time()
    mails = build()
    total = time.process_time() - t
    t = time.process_time()
    flat = [compose.flatten(m) for m in mails]
    spent["flatten"] = time.process_time() - t
    mod.close()
    if save is not None:
        save.write_bytes(b"\n=====\n".join(masked(raw) for raw in flat))
    n = len(mails)
    return {"per_mail_ms": total * 1000 / n, "mails": n,
            "parts": {k: v * 1000 / n for k, v in spent.items()}}


def run(code: Path, games: int, seed: int, mixed: bool, save: Path | None) -> dict:
    """``worker`` in a process of its own (a fresh interpreter: no cache of the other code)."""
    cmd = [sys.executable, __file__, "--worker", str(code), "--games", str(games), "--seed", str(seed)]
    if mixed:
        cmd.append("--mixed")
    if save is not None:
        cmd += ["--save", str(save)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=1800)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--code", type=Path, help="another checkout, measured in turn with this one")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--mixed", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--save", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.games, args.seed, args.mixed, args.save)))
        return 0
    codes = {"this": ROOT} | ({"code": args.code.resolve()} if args.code else {})
    results: dict[tuple[str, str], list[dict]] = defaultdict(list)
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmpdir:
        for r in range(args.rounds):
            for kind in ("one", "mixed"):
                for label, code in codes.items():
                    save = Path(tmpdir) / f"{label}-{kind}.eml" if r == 0 else None
                    results[label, kind].append(run(code, args.games, args.seed, kind == "mixed", save))
            load.append(os.getloadavg()[0])
        for kind in ("one", "mixed"):
            med = {label: statistics.median(x["per_mail_ms"] for x in results[label, kind]) for label in codes}
            print(f"status_mails_{kind}: {results['this', kind][0]['mails']}")
            print(f"status_mail_cpu_ms_{kind}: {med['this']:.2f}")
            parts = results["this", kind][0]["parts"]
            for name in sorted(parts):
                median = statistics.median(x["parts"].get(name, 0) for x in results["this", kind])
                print(f"status_mail_{name}_ms_{kind}: {median:.2f}")
            if args.code:
                print(f"status_mail_cpu_ms_{kind}_code: {med['code']:.2f}")
                print(f"status_mail_vs_code_{kind}: {med['this'] / med['code']:.3f}")
                for name in sorted(parts):  # each part against the other code's
                    here, there = (statistics.median(x["parts"].get(name, 0) for x in results[label, kind])
                                   for label in ("this", "code"))
                    print(f"status_mail_{name}_ms_{kind}_code: {there:.2f}")
                    print(f"status_mail_{name}_vs_code_{kind}: {here / there if there else 0:.3f}")
        if args.code:
            same = True
            for kind in ("one", "mixed"):
                a = (Path(tmpdir) / f"this-{kind}.eml").read_bytes().split(b"\n=====\n")
                b = (Path(tmpdir) / f"code-{kind}.eml").read_bytes().split(b"\n=====\n")
                if a != b:
                    same = False
                    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                    print(f"# {kind}: mail {first} differs (of {len(a)} against {len(b)})")
            print(f"status_mails_identical: {int(same)}")
    print(f"load_average: {min(load):.1f}-{max(load):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
