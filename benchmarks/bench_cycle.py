"""Benchmark of the moderation cycle on the embedded default (local Maildirs).

    python benchmarks/bench_cycle.py [--games N] [--seed S] [--idle-games N] [--repeats R]

1. plays N (default 2) whole 3-player games with the built-in players, every order a
   real mail through ``Moderator.run_cycle`` (read, route, authenticate, parse,
   apply, save the game file atomically, render and spool the status mails, deliver
   them to the outbox Maildir), and reports the median and 90th percentile wall time
   of a cycle that handles one order mail, the share of it spent in the game file
   (load + save), and the fsyncs per order: ``os.fsync`` calls (atomic writes of game
   files and spool entries, directory syncs) plus the bookkeeping database's commits
   that wrote something (WAL, ``synchronous=FULL``: one fsync each; WAL checkpoints,
   every 1,000 pages, are not counted);
2. the idle poll: ``Moderator(config).run_cycle()`` on an empty Maildir inbox (what
   one ``pbem run`` does after its imports) with ``--idle-games`` (default 10,000)
   game files in ``games/`` (copies, with new ids, of the frozen files in
   ``tests/fixtures/games/v1/``: three finished games and two running) against one
   game file; medians (wall and CPU: the wall time is mostly the fsyncs of two
   small commits and of the WAL checkpoint when the database is closed, noisy on a
   shared disk) of ``--repeats`` runs of each, alternated, in this one run;
   and the peak of Python's allocations (``tracemalloc``) during one idle poll of
   each.  The games index of the big directory is filled as ``sync_games`` fills it
   for files copied in by hand (flagged ``needs_check``), without parsing 10,000
   copies of five files; what that parse costs per file is measured on a few
   hundred (``index_build_ms_per_file``).

3. the cost per order against the transport (``--transport``, default 1,10,50):
   ``transport_ratios`` runs N games of 3 built-in players against a real Dovecot
   and aiosmtpd sink on loopback (``tests/servers.py``; Dovecot must be installed)
   so that each cycle fetches N order mails and sends 3 N status mails, and
   divides the median CPU of such a cycle end to end by the median CPU of the raw
   transport of the same mails (imapclient fetch, aiosmtplib send) in this
   process: ``per_order_vs_transport_N``.

The garbage collector is set as ``pbem run`` sets it (``moderator.runtime.tune_gc``);
``--default-gc`` keeps Python's defaults.

It ends with lines ``NAME: VALUE``.  Machines here are shared and noisy: compare
medians, and ratios measured side by side in one run.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.store import gamefile as store_module  # noqa: E402
from moderator.config import Config  # noqa: E402
from moderator.moderation.cycle import Moderator  # noqa: E402
from moderator.demo import DEMO_PLAYERS, Bot, MaildirReader  # noqa: E402
from moderator.store.bookkeeping import Bookkeeping  # noqa: E402
from moderator.store.gamefile import FileStamp, GameStore  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "games" / "v1"


class FsyncCounter:
    """Counts ``os.fsync`` calls and the bookkeeping commits that wrote something
    while ``counting`` is set (installed for the whole benchmark)."""

    def __init__(self):
        self.counting = False
        self.fsyncs = 0
        self.commits = 0
        self._fsync = os.fsync
        self._transaction = Bookkeeping.transaction
        counter = self

        def fsync(fd):
            if counter.counting:
                counter.fsyncs += 1
            return counter._fsync(fd)

        @contextlib.contextmanager
        def transaction(bk):
            outer = not bk.in_transaction
            before = bk._db.total_changes
            with counter._transaction(bk):
                yield bk
            if outer and counter.counting and bk._db.total_changes != before:
                counter.commits += 1

        os.fsync = fsync
        Bookkeeping.transaction = transaction

    @property
    def total(self) -> int:
        return self.fsyncs + self.commits


COUNTER = FsyncCounter()


def one_game(seed: int) -> tuple[list[float], float, int, int]:
    """Play one game; return cycle times (s), time in game-file load+save (s),
    orders, and fsyncs (``FsyncCounter.total``) in the cycles with one order."""
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
        fsyncs = 0
        try:
            while mod.store.read_data("bench")["state"]["phase"] != "over":
                mails: dict[str, list] = {}
                for m in reader():
                    mails.setdefault(m["To"].addresses[0].addr_spec, []).append(m)
                for addr, msgs in mails.items():
                    order = bots[addr].receive(msgs)
                    if order is not None:
                        inbox.add(order.as_bytes())
                before = COUNTER.total
                COUNTER.counting = True
                t = time.perf_counter()
                report = mod.run_cycle()
                dt = time.perf_counter() - t
                COUNTER.counting = False
                if report.applied == 1:
                    times.append(dt)
                    fsyncs += COUNTER.total - before
        finally:
            store_module.GameStore.load, store_module.GameStore.save = orig_load, orig_save
            mod.close()
        return times, store_time[0], len(times), fsyncs


# ------------------------------------------------------------------ the idle poll
def idle_config(root: Path) -> Config:
    return Config(games_dir=root / "games", maildir_inbox=root / "mail" / "inbox",
                  maildir_outbox=root / "mail" / "outbox", spool_dir=root / "spool")


def fill_games(root: Path, n: int) -> Config:
    """``root`` with ``n`` game files (copies of the fixtures with new ids), indexed
    as ``sync_games`` indexes files copied in (flagged ``needs_check``), and one
    idle cycle run (the inbox and spool made)."""
    config = idle_config(root)
    config.games_dir.mkdir(parents=True)
    sources = sorted(FIXTURES.glob("*.yaml"))
    texts = [(p.stem, p.read_text(encoding="utf-8")) for p in sources]
    parsed = {stem: GameStore(FIXTURES).read_data(stem) for stem, _ in texts}
    with Bookkeeping.in_spool(config.spool_dir) as bk, bk.transaction():
        for i in range(n):
            stem, text = texts[i % len(texts)]
            gid = f"g{i:05d}"
            path = config.games_dir / f"{gid}.yaml"
            path.write_text(text.replace(f"game: {stem}\n", f"game: {gid}\n", 1), encoding="utf-8")
            data = dict(parsed[stem], game=gid)
            bk.record_game(gid, data, FileStamp.of(os.stat(path)), None, needs_check=True)
    old = time.time() - 60  # not "racy": the directory changed a while ago
    os.utime(config.games_dir, (old, old))
    mod = Moderator(config)
    assert mod.run_cycle().ok  # the first poll scans the directory in full
    mod.close()
    return config


def idle_poll(config: Config) -> tuple[float, float]:
    """One idle ``pbem run`` after its imports: (wall, CPU) seconds."""
    t, c = time.perf_counter(), time.process_time()
    mod = Moderator(config)
    report = mod.run_cycle()
    mod.close()
    dt, dc = time.perf_counter() - t, time.process_time() - c
    assert report.ok and report.fetched == 0, report.errors
    return dt, dc


def idle_memory(config: Config) -> int:
    """Peak bytes allocated by Python during one idle poll (``tracemalloc``)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        idle_poll(config)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def index_build_ms(tmp: Path, n: int) -> float:
    """Milliseconds per file for ``sync_games`` to index ``n`` files copied in by hand."""
    config = idle_config(tmp)
    config.games_dir.mkdir(parents=True)
    sources = sorted(FIXTURES.glob("*.yaml"))
    for i in range(n):
        src = sources[i % len(sources)]
        (config.games_dir / f"c{i:05d}.yaml").write_text(
            src.read_text(encoding="utf-8").replace(f"game: {src.stem}\n", f"game: c{i:05d}\n", 1))
    with Bookkeeping.in_spool(config.spool_dir) as bk:
        t = time.perf_counter()
        found = bk.sync_games(GameStore(config.games_dir))
        dt = time.perf_counter() - t
    assert len(found.added) == n
    return dt / n * 1000


def idle(n: int, repeats: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        t = time.perf_counter()
        big, one = fill_games(d / "big", n), fill_games(d / "one", 1)
        setup = time.perf_counter() - t
        idle_poll(big), idle_poll(one)  # warm: imports, templates, the first full scan
        times_big, times_one = [], []
        for i in range(repeats):  # alternated, each first in turn
            for which, times in ((one, times_one), (big, times_big))[::1 if i % 2 else -1]:
                times.append(idle_poll(which))
        mem_one, mem_big = idle_memory(one), idle_memory(big)
        # the hourly full scan (and the first poll after a save): every file stat'ed
        saved = Bookkeeping.FULL_SCAN_EVERY
        Bookkeeping.FULL_SCAN_EVERY = 0.0
        try:
            full = statistics.median(idle_poll(big)[0] for _ in range(max(3, repeats // 2)))
        finally:
            Bookkeeping.FULL_SCAN_EVERY = saved
        build = index_build_ms(d / "build", 200)
    med_big, med_one = (statistics.median(t for t, _ in times_big),
                        statistics.median(t for t, _ in times_one))
    cpu_big, cpu_one = (statistics.median(c for _, c in times_big),
                        statistics.median(c for _, c in times_one))
    return {"setup_s": setup, "big_ms": med_big * 1000, "one_ms": med_one * 1000,
            "ratio": med_big / med_one, "cpu_big_ms": cpu_big * 1000, "cpu_one_ms": cpu_one * 1000,
            "cpu_ratio": cpu_big / cpu_one, "mem_big": mem_big, "mem_one": mem_one,
            "full_ms": full * 1000, "build": build}


# ------------------------------------------------- per order against the transport
def transport_ratios(sizes: list[int], cycles: int) -> dict[int, dict[str, float]]:
    """For each ``n`` of ``sizes``: ``n`` games of 3 built-in players on a real
    Dovecot (IMAP) and aiosmtpd sink (SMTP), both on loopback (``tests/servers.py``),
    each game's mover answering every turn, so that each cycle fetches ``n`` order
    mails and sends ``3 n`` status mails.  For ``cycles`` such cycles: the CPU
    (``time.process_time``: this process, with the sink's thread) of
    ``Moderator.run_cycle`` end to end, and the CPU of the raw transport for the
    same mails, right after it: imapclient (login, select, search, fetch of the
    same ``n`` order mails from another account) and aiosmtplib (one connection,
    the same ``3 n`` mails sent).  Returns medians (ms) and their ratio."""
    import asyncio

    import aiosmtplib
    import imapclient

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from servers import Dovecot, SmtpSink  # noqa: E402 - the tests' servers

    from moderator.config import load_config

    out: dict[int, dict[str, float]] = {}
    dovecot = Dovecot()
    dovecot.start()
    try:
        with SmtpSink() as sink, tempfile.TemporaryDirectory() as tmp:
            os.environ["BENCH_IMAP_PASSWORD"] = dovecot.password
            for n in sizes:
                user = dovecot.new_user("bench")
                floor_user = dovecot.new_user("floor")
                d = Path(tmp) / f"n{n}"
                d.mkdir()
                (d / "pbem.yaml").write_text(
                    "moderator: {address: moderator@up.example, name: UP moderator}\n"
                    "games_dir: games\n"
                    f"imap: {{host: {dovecot.host}, port: {dovecot.port}, security: none, "
                    f"username: {user}, password_env: BENCH_IMAP_PASSWORD}}\n"
                    f"smtp: {{host: {sink.host}, port: {sink.port}, security: none}}\n")
                config = load_config(d / "pbem.yaml")
                mod = Moderator(config)
                rng = random.Random(n)
                seen = len(sink.messages)  # the welcomes are the bots' first mails
                bots = {}
                for g in range(n):
                    players = [(name, f"{name.lower()}{g}@players.example") for name, _ in DEMO_PLAYERS]
                    mod.create_game(f"g{g}", players, seed=g + 1)
                    for name, addr in players:
                        bots[addr] = Bot(name, addr, config.moderator_address, random.Random(rng.random()))
                cycle_cpu: list[float] = []
                floor_cpu: list[float] = []
                carry: list = []  # the cycle's mails, received before the floor's copies
                for _ in range(cycles * 4 + 20):
                    new = carry + sink.messages[seen:]
                    seen += len(new) - len(carry)
                    carry = []
                    mails: dict[str, list] = {}
                    for m in new:
                        mails.setdefault(m.message["To"].addresses[0].addr_spec, []).append(m.message)
                    orders = []
                    for addr, msgs in mails.items():
                        order = bots[addr].receive(msgs)
                        if order is not None:
                            orders.append(order.as_bytes())
                    for raw in orders:
                        dovecot.append(raw, username=user)
                    c = time.process_time()
                    report = mod.run_cycle()
                    dc = time.process_time() - c
                    assert report.ok, report.errors
                    if report.fetched != n or report.applied != n:
                        continue  # the initial investments (3 per game), a refusal, the end
                    carry = sink.messages[seen:]
                    seen += len(carry)
                    sent = [m.message for m in carry]
                    if len(sent) != 3 * n:
                        continue
                    for raw in orders:
                        dovecot.append(raw, username=floor_user)
                    c = time.process_time()
                    client = imapclient.IMAPClient(dovecot.host, port=dovecot.port, ssl=False, timeout=10)
                    client.login(floor_user, dovecot.password)
                    client.select_folder("INBOX")
                    uids = client.search("ALL")
                    fetched = client.fetch(uids, ["BODY.PEEK[]"])
                    client.add_flags(uids, [imapclient.DELETED], silent=True)
                    client.expunge()
                    client.logout()

                    async def send_all():
                        smtp = aiosmtplib.SMTP(hostname=sink.host, port=sink.port, use_tls=False,
                                               start_tls=False)
                        await smtp.connect()
                        for msg in sent:
                            await smtp.send_message(msg)
                        await smtp.quit()

                    asyncio.run(send_all())
                    floor_cpu.append(time.process_time() - c)
                    cycle_cpu.append(dc)
                    assert len(fetched) == n
                    seen = len(sink.messages)  # the floor's copies are no bot's mail
                    if len(cycle_cpu) >= cycles:
                        break
                mod.close()
                if not cycle_cpu:
                    raise SystemExit(f"no cycle with {n} orders")
                cyc, flo = statistics.median(cycle_cpu) * 1000, statistics.median(floor_cpu) * 1000
                out[n] = {"cycle_ms": cyc, "floor_ms": flo, "ratio": cyc / flo, "cycles": len(cycle_cpu)}
    finally:
        dovecot.cleanup()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="moderation cycle benchmark")
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--idle-games", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--transport", default="1,10,50",
                    help="order mails per cycle against Dovecot and aiosmtpd (default 1,10,50; '' skips)")
    ap.add_argument("--transport-cycles", type=int, default=7, help="cycles measured per size")
    ap.add_argument("--default-gc", action="store_true",
                    help="keep Python's garbage collector settings (default: as pbem run sets them)")
    args = ap.parse_args(argv)
    if not args.default_gc:
        from moderator.runtime import tune_gc

        tune_gc()  # as ``pbem run`` does after its imports
    all_times: list[float] = []
    store_total = 0.0
    orders = 0
    fsyncs = 0
    for i in range(args.games):
        times, st, n, fs = one_game(args.seed + i)
        all_times += times
        store_total += st
        orders += n
        fsyncs += fs
    all_times.sort()
    med = statistics.median(all_times)
    p90 = all_times[int(0.9 * (len(all_times) - 1))]
    print(f"{args.games} game(s), {orders} order mails, one cycle per order")
    print(f"cycle with one order: median {med * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms")
    print(f"game file load+save: {store_total / sum(all_times) * 100:.0f}% of cycle time")
    sizes = [int(x) for x in args.transport.split(",") if x.strip()]
    ratios = transport_ratios(sizes, args.transport_cycles) if sizes else {}
    for k, r in ratios.items():
        print(f"{k} order mail(s) per cycle over IMAP/SMTP, medians of {r['cycles']}: cycle CPU "
              f"{r['cycle_ms']:.1f} ms, raw transport CPU {r['floor_ms']:.1f} ms")
    n = args.idle_games
    found = idle(n, args.repeats) if n else None
    print(f"cycle_one_order_ms: {med * 1000:.1f}")
    print(f"fsyncs_per_order: {fsyncs / orders:.1f}")
    for k, r in ratios.items():
        print(f"per_order_vs_transport_{k}: {r['ratio']:.2f}")
    if found is None:
        return 0
    print(f"idle poll, medians of {args.repeats}: {n} game files {found['big_ms']:.1f} ms, "
          f"1 game file {found['one_ms']:.1f} ms (setup {found['setup_s']:.0f} s); every {Bookkeeping.FULL_SCAN_EVERY:.0f} s "
          f"(and after a game was saved) a full scan of the directory: {found['full_ms']:.1f} ms")
    print(f"idle poll peak Python allocations: {n} files {found['mem_big'] / 1024:.0f} KiB, "
          f"1 file {found['mem_one'] / 1024:.0f} KiB")
    print(f"idle_poll_{n}_ms: {found['big_ms']:.1f}")
    print(f"idle_poll_1_ms: {found['one_ms']:.1f}")
    print(f"idle_poll_{n}_vs_1: {found['ratio']:.2f}")
    print(f"idle_poll_cpu_{n}_ms: {found['cpu_big_ms']:.1f}")
    print(f"idle_poll_cpu_1_ms: {found['cpu_one_ms']:.1f}")
    print(f"idle_poll_cpu_{n}_vs_1: {found['cpu_ratio']:.2f}")
    print(f"idle_poll_full_scan_{n}_ms: {found['full_ms']:.1f}")
    print(f"idle_poll_memory_{n}_kib: {found['mem_big'] / 1024:.0f}")
    print(f"idle_poll_memory_1_kib: {found['mem_one'] / 1024:.0f}")
    print(f"idle_poll_memory_{n}_vs_1: {found['mem_big'] / found['mem_one']:.2f}")
    print(f"index_build_ms_per_file: {found['build']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
