"""Load benchmark: a busy moderator on the real path, against the raw transport.

    python benchmarks/bench_load.py [--games 1000] [--rates 0.5,1,2,3,4,6,8,12,16] [--phase 120]
                                    [--quick] [--seed 1] [--no-archive] [--code DIR] [--profile FILE]

``--quick``: 100 games, rates 1, 2, 4, 8 for 20 s each (about 3 minutes);
``--code DIR``: the loop runs another checkout's ``pbem.py`` (the code before a
change, measured in the same minutes); ``--profile FILE``: the loop's cProfile
statistics; ``--no-archive``: the loop without ``--archive DIR``.  The memory run
of issue 31: ``--rates R --phase 1800`` with R half the saturation rate.

1. A private Dovecot (IMAP, ``tests/servers.py``) holds the moderator's mailbox;
   an aiosmtpd server on loopback in a process of its own (``sink_worker``,
   keeping the instant each mail was accepted: the SMTP acceptance the latency
   ends at) takes its outgoing mail.  (Postfix would put its own queue between
   the moderator's acceptance and the measuring point; the moderator's path
   ends at the SMTP server's ``250``.)
2. ``--games`` running games (default 1,000; ``--quick`` 100) of 2 to 6 seats,
   a tenth with a seat of the built-in player and a tenth finished, at every
   stage (from the initial investments to late in play: each played for a
   random number of turns by the engine's random legal play, ``Game.random_action``,
   the last move by the built-in player, ``moderator.players.heuristic.choose``,
   and saved through ``GameStore``), each with a deadline of one or
   two days; one game in fifty with its deadline already passed, so that the
   clock stage sends reminders and makes automatic moves during the run.
3. ``pbem run --loop --interval 300 --archive DIR`` as a process of its own
   (IMAP IDLE wakes it); the site built once before it starts, as it stands on
   a moderator that has run for a while.
4. The injector: orders at a Poisson rate R (``--rates``, each for ``--phase``
   seconds, stopping after the first rate whose p99 passes 10 s), each a reply
   to the mover's latest status mail (In-Reply-To, References, Subject) written
   as the built-in player writes it (its choice from the game's state), APPENDed
   into the moderator's INBOX; at most one order in flight per game.  Stray mail
   at R/10: out-of-office replies (machine mail), strangers, a player's order
   when it is not their move (each must get exactly one refusal).
5. Per order: the latency from its APPEND to the last mail of its game accepted
   by SMTP in the cycle that answered it (the loop prints one line per cycle,
   after its mails are sent); p50/p90/p99/max per rate, throughput, the
   moderator process's CPU per order (``/proc/PID/stat``) and its RSS sampled
   every second.
6. The raw transport of the same mails in a process of its own, right after:
   the same order mails fetched and moved over one IMAP connection (imapclient)
   and the same status mails sent over one SMTP connection (aiosmtplib), as fast
   as they go: its orders per second (wall) and CPU per order.
   ``load_saturation_vs_transport`` is the moderator's saturation rate (the R
   at which p99 passes 10 s; the highest rate run when none did, given as a
   lower bound ``>=``) over that raw rate.
7. Checks by the injector: lost (an order neither applied nor answered, a wrong
   order without its refusal, mail left in the inbox) and doubled (an order
   applied twice, a Message-ID accepted by SMTP twice, a mail answered twice).

It ends with lines ``NAME: VALUE``.  Loopback only; every loop bounded; the
servers and the moderator are stopped at the end.  The machine is shared:
the load average is printed with the figures.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime, make_msgid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

SATURATED_P99 = 10.0  # seconds: the definition of saturation
HEADERS = BytesParser(policy=policy.default)
NAMES = ["Ada", "Brunel", "Cugnot", "Dodge", "Eiffel", "Fulton"]


# ------------------------------------------------------------------ the sink
class StampedSink:
    """aiosmtpd on 127.0.0.1 in a process of its own (``sink_worker``), keeping
    each accepted mail with the instant (``time.time()``) of its ``250``:
    ``mails`` is a deque of (time, raw), filled by a thread reading the
    worker's pipe.  A process of its own, as a real SMTP server is: in the
    injector's process its answers waited for the injector's own work (the
    game files it loads, the built-in player's choices, the mails it reads)
    under one GIL, and every such wait was counted against the moderator."""

    def __init__(self) -> None:
        from servers import LOOPBACK, free_port

        self.host, self.port = LOOPBACK, free_port()
        self.mails: deque = deque()
        self.proc: subprocess.Popen | None = None
        self._ready = threading.Event()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            head = out.read(12)
            if len(head) < 12:
                return
            t, n = struct.unpack(">dI", head)
            if n == 0:  # the worker listens (no mail is empty)
                self._ready.set()
                continue
            self.mails.append((t, out.read(n)))

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, __file__, "--sink-worker", f"{self.host}:{self.port}"],
                                     stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(30):
            self.proc.kill()
            raise SystemExit("the SMTP sink did not start")
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def sink_worker(where: str) -> int:
    """In a process of its own: an aiosmtpd server on ``HOST:PORT`` writing each
    accepted mail to standard output as ``>dI`` (the instant of its ``250``,
    its length) and its bytes; a first record ``(0.0, 0)`` once it listens.
    Stops on SIGTERM."""
    from aiosmtpd.controller import Controller

    host, _, port = where.rpartition(":")
    out = sys.stdout.buffer
    lock = threading.Lock()

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            raw = bytes(envelope.original_content)
            with lock:
                out.write(struct.pack(">dI", time.time(), len(raw)) + raw)
                out.flush()
            return "250 Message accepted for delivery"

    controller = Controller(Handler(), hostname=host, port=int(port))
    controller.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with lock:
        out.write(struct.pack(">dI", 0.0, 0))
        out.flush()
    stop.wait()
    controller.stop()
    return 0


# ------------------------------------------------------------------ the games
def make_games(config, n: int, seed: int, now: datetime) -> dict[str, dict]:
    """``n`` games saved through the moderator's ``GameStore`` (indexed as the
    moderator indexes its saves), no mail sent: returns ``{game_id: {"humans":
    {name: address}}}``.  Sizes 2-6, a tenth with a built-in seat, a tenth
    played to the end, the others to a random turn; deadlines of 1-2 days, one
    game in fifty already past its deadline."""
    from moderator.moderation import create
    from moderator.moderation.cycle import Moderator
    from moderator.players.heuristic import choose

    mod = Moderator(config, clock=lambda: now)
    rng = random.Random(seed)
    games: dict[str, dict] = {}
    for g in range(n):
        gid = f"g{g:04d}"
        seats = 2 + g % 5
        bots = [NAMES[seats - 1]] if g % 10 == 3 and seats > 2 else []
        humans = [(name, f"{name.lower()}.{gid}@players.example") for name in NAMES[:seats] if name not in bots]
        overdue = g % 50 == 7
        created = now - timedelta(days=3) if overdue else now - timedelta(hours=rng.uniform(0, 20))
        settings = {"deadline": rng.choice([86400, 172800]), "on_missed": "bot"}
        record = create.new_game(mod.store, gid, humans, seed=seed * 100_000 + g, created=created,
                                 settings=settings, bots=bots)
        turns = 10_000 if g % 10 == 5 else rng.choice([0, 1, 3, 10, 30, 60, 100, 150])
        move_rng = random.Random(g)
        stamp = created.isoformat(timespec="seconds")
        for _ in range(turns):  # by random legal play (the engine's, fast), the last by the built-in player
            if record.game.phase == "over":
                break
            name = move_rng.choice(record.game.waiting_for())
            action = record.game.random_action(name, move_rng) if turns == 10_000 or _ < turns - 1 \
                else choose(record.game, name, move_rng)
            record.apply(name, action, None, stamp, by="bot" if name in bots else None)
        record.notified = len(record.game.events)  # these moves were mailed long ago
        mod.store.save(record)
        games[gid] = {"humans": dict(humans)}
    mod.close()
    return games


def first_statuses(config, games: dict[str, dict], now: datetime) -> dict[str, EmailMessage]:
    """For every player whose move it is, the mail they reply to: one as the
    moderator's composer makes it (``Post.message``: the thread's Subject, a
    Message-ID with the game and the player's token), without the status
    text and board map (rendering them for 1,000 games would take the setup
    minutes; the moderator never reads the quoted text): ``{address: message}``."""
    from moderator.moderation.cycle import Moderator
    from moderator.moderation.send import thread_of

    mod = Moderator(config, clock=lambda: now)
    post = mod._post()
    out: dict[str, EmailMessage] = {}
    for gid, info in games.items():
        record = mod.store.load(gid)
        if record.game.phase == "over":
            continue
        for name in record.game.waiting_for():
            if name in info["humans"]:
                thread = thread_of(record, record.player_by_name(name))
                out[info["humans"][name]] = post.message(gid, info["humans"][name], thread.subject,
                                                         "IT IS YOUR MOVE\n", token=thread.token,
                                                         auto="auto-generated")
    mod.close()
    return out


# ------------------------------------------------------------------ the injector
@dataclass
class Order:
    game: str
    player: str
    message_id: str
    t0: float
    rate: float
    answered: float | None = None  # when the mover's answer (In-Reply-To) was accepted
    done: float | None = None  # when the last mail of its cycle was accepted
    refused: bool = False
    raw: bytes = b""
    mails: list = field(default_factory=list)  # (time, raw) of its game's mails after t0


@dataclass
class Stray:
    kind: str  # machine, stranger, wrong
    message_id: str
    answers: int = 0


def reply(original: EmailMessage | bytes, name: str, address: str, lines: list[str], moderator: str,
          n: int) -> EmailMessage:
    """A reply to ``original`` with ``lines`` on top of the quoted text, as a
    mail client writes it (``moderator.demo.Bot.reply``'s form); ``original``
    may be its bytes."""
    if isinstance(original, bytes):
        original = HEADERS.parsebytes(original)
    msg = EmailMessage(policy=policy.default)
    msg["From"] = f"{name} <{address}>"
    msg["To"] = moderator
    subject = str(original["Subject"])
    msg["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    msg["Date"] = format_datetime(datetime.now(timezone.utc))
    msg["Message-ID"] = make_msgid(idstring=f"load.{n}", domain="players.example")
    orig = str(original["Message-ID"])
    msg["In-Reply-To"] = orig
    msg["References"] = " ".join(str(original.get("References", "")).split() + [orig])
    body = original.get_body(("plain",)) if original.is_multipart() else original
    quoted = "\n".join("> " + line for line in (body.get_content() if body else "").splitlines()[:40])
    msg.set_content("\n".join(lines) + "\n\n" + f"On {original['Date']}, the moderator wrote:\n" + quoted + "\n")
    return msg


def game_of(message_id: str) -> str | None:
    """The game id in one of our Message-IDs (``<RANDOM[.TOKEN].pbem.GAME@domain>``)."""
    left = message_id.strip("<> ").partition("@")[0]
    head, sep, gid = left.rpartition(".pbem.")
    return gid if sep else None


class Injector:
    """Delivers the orders and stray mail, follows the sink and the loop's cycle
    lines, and keeps what the checks need."""

    def __init__(self, config, imap, games, latest, sink: StampedSink, seed: int):
        from moderator.store.gamefile import GameStore

        self.config, self.imap, self.games, self.latest, self.sink = config, imap, games, latest, sink
        self.store = GameStore(config.games_dir)
        self.rng = random.Random(seed)
        self.in_flight: dict[str, Order] = {}
        self.orders: list[Order] = []
        self.strays: dict[str, Stray] = {}
        self.by_reply: dict[str, int] = {}  # In-Reply-To -> answers
        self.seen_ids: dict[str, int] = {}
        self.cycles: deque = deque()  # instants the loop printed a cycle's line
        self.cycle_count = 0
        self.n = 0
        self.skipped = 0
        self.address_of = {a: (g, name) for g, info in games.items() for name, a in info["humans"].items()}

    # -- what came back
    def follow(self) -> None:
        """Read the sink's new mails and the loop's new cycle lines; complete the
        orders whose cycle ended."""
        ended = len(self.cycles)  # lines printed after their cycle's mails, all in the sink now
        while self.sink.mails:
            t, raw = self.sink.mails.popleft()
            msg = HEADERS.parsebytes(raw, headersonly=True)  # the body only for an order's answer
            mid = str(msg["Message-ID"] or "")
            self.seen_ids[mid] = self.seen_ids.get(mid, 0) + 1
            irt = str(msg["In-Reply-To"] or "").strip()
            if irt:
                self.by_reply[irt] = self.by_reply.get(irt, 0) + 1
                if irt in self.strays:
                    self.strays[irt].answers += 1
            to = msg["To"].addresses[0].addr_spec if msg["To"] and msg["To"].addresses else ""
            gid = game_of(mid)
            if to in self.address_of:
                self.latest[to] = raw  # parsed whole only when replied to (``reply``)
            order = self.in_flight.get(gid) if gid else None
            if order is not None and t >= order.t0:
                order.mails.append((t, raw if len(self.orders) <= 400 else b""))
                if irt == order.message_id:
                    order.answered = t
                    body = HEADERS.parsebytes(raw).get_body(("plain",))
                    first = (body.get_content() if body else "").partition("\n")[0]
                    order.refused = "order refused" in first or "refused" in str(msg["Subject"])
        for _ in range(ended):
            tc = self.cycles.popleft()
            for gid, order in list(self.in_flight.items()):
                if order.answered is not None and order.answered <= tc:
                    order.done = max(t for t, _ in order.mails if t <= tc)
                    del self.in_flight[gid]

    # -- what goes in
    def append(self, raw: bytes) -> None:
        self.imap.append("INBOX", raw)

    def order(self, rate: float) -> bool:
        """One order to a random game that waits for a human's move and has none
        in flight; False when no game is ready."""
        from moderator.players.heuristic import choose

        ready = [a for a, m in self.latest.items()
                 if self.address_of[a][0] not in self.in_flight]
        self.rng.shuffle(ready)
        for address in ready[:20]:
            gid, name = self.address_of[address]
            try:
                record = self.store.load(gid, check=False)
            except Exception:  # noqa: BLE001 - read while being replaced: another game
                continue
            if record.game.phase == "over" or name not in record.game.waiting_for():
                self.latest.pop(address, None)  # no longer their move: wait for the next status
                continue
            action = choose(record.game, name, random.Random(self.rng.random()))
            self.n += 1
            msg = reply(self.latest.pop(address), name, address, str(action).split("; "),
                        self.config.moderator_address, self.n)
            raw = msg.as_bytes()
            self.append(raw)
            o = Order(gid, name, str(msg["Message-ID"]), time.time(), rate, raw=raw if self.n <= 400 else b"")
            self.in_flight[gid] = o
            self.orders.append(o)
            return True
        self.skipped += 1
        return False

    def stray(self) -> None:
        """One stray mail: machine mail, a stranger, or a wrong order."""
        kind = ("machine", "stranger", "wrong")[self.n % 3]
        self.n += 1
        msg = EmailMessage(policy=policy.default)
        msg["To"] = self.config.moderator_address
        msg["Date"] = format_datetime(datetime.now(timezone.utc))
        msg["Message-ID"] = make_msgid(idstring=f"stray.{self.n}", domain="elsewhere.example")
        idle = [a for a in self.address_of if a not in self.latest
                and self.address_of[a][0] not in self.in_flight]
        if kind == "stranger" or not idle:
            kind = "stranger"
            msg["From"] = f"Stranger {self.n} <stranger{self.n}@elsewhere.example>"
            msg["Subject"] = "how do I play?"
            msg.set_content("Hello, I saw your moderator mentioned. How do I join a game?\n")
        else:
            address = self.rng.choice(idle)
            gid, name = self.address_of[address]
            msg["From"] = f"{name} <{address}>"
            if kind == "machine":
                msg["Auto-Submitted"] = "auto-replied"
                msg["Subject"] = f"Out of office: Re: [{gid}] Union Pacific"
                msg.set_content("I am away until Monday and will read your mail then.\n")
            else:
                msg["Subject"] = f"Re: [{gid}] Union Pacific"
                msg.set_content("build 3 Chicago-Omaha\n")
        self.strays[str(msg["Message-ID"])] = Stray(kind, str(msg["Message-ID"]))
        self.append(msg.as_bytes())


def read_cycles(proc: subprocess.Popen, injector: Injector, log: list[str]) -> None:
    """The loop's standard output: a cycle's line is printed after its mails were sent."""
    for line in proc.stdout:
        if " mail(s): " in line:
            injector.cycles.append(time.time())
            injector.cycle_count += 1
        log.append(line)


class ProcWatch:
    """CPU (utime+stime with its waited-for children's, seconds) and RSS (kB)
    of one process from /proc; RSS sampled every second in a thread."""

    def __init__(self, pid: int):
        self.pid = pid
        self.rss: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def cpu(self) -> float:
        """utime + stime of the process and of its children it has waited for
        (the archive site's builds, ``SiteSchedule``), in seconds; the last
        value read once the process is gone (the figures are still printed)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            return getattr(self, "_last_cpu", 0.0)
        self._last_cpu = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        return self._last_cpu

    def _sample(self) -> None:
        while not self._stop.wait(1.0):
            try:
                for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        self.rss.append((time.time(), int(line.split()[1])))
            except OSError:
                return

    def stop(self) -> None:
        self._stop.set()


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) by the nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))]


# ------------------------------------------------------------------ raw transport
def transport_worker(spec_path: str) -> int:
    """In a process of its own: fetch and move each order mail over one IMAP
    connection and send its status mails over one SMTP connection, as fast as
    they go; prints JSON ``{"orders", "wall_s", "cpu_s"}``."""
    import aiosmtplib
    import imapclient

    spec = json.loads(Path(spec_path).read_text())
    d = Path(spec["dir"])
    orders = sorted(d.glob("order-*.eml"))
    client = imapclient.IMAPClient(spec["host"], port=spec["port"], ssl=False, timeout=30)
    client.login(spec["user"], spec["password"])
    for p in orders:  # delivery is not the transport's cost
        client.append("INBOX", p.read_bytes())
    if not client.folder_exists("Processed"):
        client.create_folder("Processed")
    client.logout()

    async def run() -> tuple[float, float]:
        t, c = time.perf_counter(), time.process_time()
        imap = imapclient.IMAPClient(spec["host"], port=spec["port"], ssl=False, timeout=30)
        imap.login(spec["user"], spec["password"])
        imap.select_folder("INBOX")
        smtp = aiosmtplib.SMTP(hostname=spec["smtp_host"], port=spec["smtp_port"], use_tls=False,
                               start_tls=False)
        await smtp.connect()
        uids = imap.search(["UNDELETED"])
        for i, uid in enumerate(uids):
            imap.fetch([uid], ["BODY.PEEK[]", "RFC822.SIZE", "INTERNALDATE"])
            imap.move([uid], "Processed")
            for p in sorted(d.glob(f"status-{i:04d}-*.eml")):
                raw = p.read_bytes()
                msg = HEADERS.parsebytes(raw)
                await smtp.sendmail(spec["from"], [msg["To"].addresses[0].addr_spec], raw)
        await smtp.quit()
        imap.logout()
        return time.perf_counter() - t, time.process_time() - c

    wall, cpu = asyncio.run(run())
    print(json.dumps({"orders": len(orders), "wall_s": wall, "cpu_s": cpu}))
    return 0


def raw_transport(dovecot, sink: StampedSink, orders: list[Order], moderator: str, tmp: Path) -> dict:
    """The raw transport of the first complete orders' mails (``transport_worker``)."""
    d = tmp / "raw"
    d.mkdir()
    i = 0
    for o in orders:
        if o.done is None or not o.raw or not o.mails or any(not raw for _, raw in o.mails):
            continue
        (d / f"order-{i:04d}.eml").write_bytes(o.raw)
        for j, (_, raw) in enumerate(o.mails):
            (d / f"status-{i:04d}-{j:02d}.eml").write_bytes(raw)
        i += 1
        if i >= 300:
            break
    if not i:
        raise SystemExit("no complete order to measure the raw transport with")
    spec = {"dir": str(d), "host": dovecot.host, "port": dovecot.port, "user": dovecot.new_user("raw"),
            "password": dovecot.password, "smtp_host": sink.host, "smtp_port": sink.port, "from": moderator}
    (tmp / "raw.json").write_text(json.dumps(spec))
    out = subprocess.run([sys.executable, __file__, "--transport-worker", str(tmp / "raw.json")],
                         capture_output=True, text=True, timeout=600, check=True)
    sink.mails.clear()
    return json.loads(out.stdout.strip().splitlines()[-1])


def profile_worker(out: str, argv: list[str]) -> int:
    """Run the script ``argv[0]`` with its arguments under cProfile; on SIGTERM
    write the statistics to ``out`` and exit."""
    import cProfile
    import runpy

    profile = cProfile.Profile()

    def stop(*_):
        profile.disable()
        profile.dump_stats(out)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    sys.argv = list(argv)
    sys.path[0] = str(Path(argv[0]).parent)
    profile.enable()
    runpy.run_path(argv[0], run_name="__main__")
    return 0


# ------------------------------------------------------------------ the run
def run(args) -> dict:
    import imapclient

    from moderator.config import load_config
    from servers import Dovecot

    started = time.time()
    load_before = os.getloadavg()
    dovecot = Dovecot()
    dovecot.start()
    proc = None
    watch = None
    try:
        with StampedSink() as sink, tempfile.TemporaryDirectory() as tmpdir:
            tmp = Path(tmpdir)
            user = dovecot.new_user("moderator")
            os.environ["BENCH_IMAP_PASSWORD"] = dovecot.password
            (tmp / "pbem.yaml").write_text(
                "moderator: {address: moderator@up.example, name: UP moderator}\n"
                "games_dir: games\n"
                f"imap: {{host: {dovecot.host}, port: {dovecot.port}, security: none, "
                f"username: {user}, password_env: BENCH_IMAP_PASSWORD}}\n"
                f"smtp: {{host: {sink.host}, port: {sink.port}, security: none}}\n")
            config = load_config(tmp / "pbem.yaml")
            now = datetime.now(timezone.utc)
            t = time.perf_counter()
            games = make_games(config, args.games, args.seed, now)
            latest = first_statuses(config, games, now)
            if args.archive:  # the site as it stands before the run (the loop updates it)
                from moderator.archive.site import build_site
                from moderator.store.gamefile import GameStore

                build_site(GameStore(config.games_dir), tmp / "site")
            setup_s = time.perf_counter() - t
            print(f"{len(games)} games made, {len(latest)} players to move, in {setup_s:.0f} s", flush=True)
            imap = imapclient.IMAPClient(dovecot.host, port=dovecot.port, ssl=False, timeout=30)
            imap.login(user, dovecot.password)
            injector = Injector(config, imap, games, latest, sink, args.seed)
            cmd = [sys.executable, str(Path(args.code or ROOT) / "pbem.py"), "--config", str(tmp / "pbem.yaml"), "run", "--loop",
                   "--interval", "300"]
            if args.archive:
                cmd += ["--archive", str(tmp / "site")]
            if args.profile:  # cProfile around the loop, written when it is stopped
                cmd[1:1] = [__file__, "--profile-worker", str(Path(args.profile).absolute())]
            env = dict(os.environ, PYTHONUNBUFFERED="1")
            proc = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=open(tmp / "loop.err", "w"),
                                    text=True, env=env)
            lines: list[str] = []
            threading.Thread(target=read_cycles, args=(proc, injector, lines), daemon=True).start()
            watch = ProcWatch(proc.pid)
            # the first cycle: the overdue games' reminders and automatic moves
            end = time.time() + 600
            while injector.cycle_count < 1 and time.time() < end and proc.poll() is None:
                time.sleep(0.1)
            warm = time.time() + 3
            while time.time() < warm:
                injector.follow()
                time.sleep(0.05)
            phases = []
            measuring = time.time()  # RSS from here: after the start and the first cycle
            for _ in range(3):  # one stray mail of each kind, whatever the rate
                injector.stray()
            for rate in args.rates:
                cpu0, t0, n0 = watch.cpu(), time.time(), len(injector.orders)
                rng, srng = random.Random(f"{args.seed}:{rate}"), random.Random(f"{args.seed}:{rate}:stray")
                next_order = t0 + rng.expovariate(rate)
                next_stray = t0 + srng.expovariate(rate / 10)
                stop = t0 + args.phase
                while time.time() < stop and proc.poll() is None:
                    injector.follow()
                    now_t = time.time()
                    if now_t >= next_order:
                        injector.order(rate)
                        next_order += rng.expovariate(rate)
                    if now_t >= next_stray:
                        injector.stray()
                        next_stray += srng.expovariate(rate / 10)
                    time.sleep(0.005)
                # drain this rate's orders (bounded) before the next rate
                # at most 5 minutes: an order a 30-minute phase leaves unanswered would hold the run as long again
                drain = time.time() + max(60.0, min(args.phase, 300.0))
                while injector.in_flight and time.time() < drain and proc.poll() is None:
                    injector.follow()
                    time.sleep(0.05)
                mine = [o for o in injector.orders[n0:]]
                cpu = watch.cpu() - cpu0
                lat = [o.done - o.t0 for o in mine if o.done is not None]
                wall = time.time() - t0
                ph = {"rate": rate, "orders": len(mine), "done": len(lat), "wall_s": wall,
                      "throughput": len(lat) / args.phase, "cpu_per_order_ms": cpu / max(1, len(lat)) * 1000,
                      "load": os.getloadavg()[0]}
                if lat:
                    ph.update(p50=percentile(lat, .5), p90=percentile(lat, .9), p99=percentile(lat, .99),
                              max=max(lat))
                else:
                    ph.update(p50=float("inf"), p90=float("inf"), p99=float("inf"), max=float("inf"))
                for gid, o in injector.in_flight.items():  # named, so that a lost answer can be looked for
                    print(f"# still in flight after the drain: game {gid}, {o.player}, {o.message_id}", flush=True)
                if len(lat) < len(mine):  # still waiting after the drain: saturated
                    ph["p99"] = ph["max"] = float("inf")
                phases.append(ph)
                print(f"rate {rate:g}/s: {len(mine)} orders, {len(lat)} answered; latency p50 {ph['p50']:.2f} s, "
                      f"p90 {ph['p90']:.2f} s, p99 {ph['p99']:.2f} s, max {ph['max']:.2f} s; "
                      f"{ph['cpu_per_order_ms']:.0f} ms CPU per order; load {ph['load']:.1f}", flush=True)
                if ph["p99"] > SATURATED_P99:
                    break
            # the end: every mail handled, then the loop stopped
            end = time.time() + 120
            while time.time() < end and (injector.in_flight or dovecot_unseen(imap)):
                injector.follow()
                time.sleep(0.2)
            time.sleep(1.0)
            injector.follow()
            left_in_inbox = dovecot_unseen(imap)
            imap.logout()
            watch.stop()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
            checks = check(injector, config, left_in_inbox)
            raw = raw_transport(dovecot, sink, injector.orders, config.moderator_address, tmp)
            errors = (tmp / "loop.err").read_text()
            return {"phases": phases, "checks": checks, "raw": raw, "setup_s": setup_s,
                    "rss": [(t, kb) for t, kb in watch.rss if t >= measuring],
                    "cycles": injector.cycle_count, "skipped": injector.skipped, "strays": len(injector.strays),
                    "wall_s": time.time() - started, "load_before": load_before, "load_after": os.getloadavg(),
                    "errors": [l for l in errors.splitlines() if "ERROR" in l or "error" in l][:10],
                    "games": len(games)}
    finally:
        if watch is not None:
            watch.stop()
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        dovecot.cleanup()


def dovecot_unseen(imap) -> int:
    """Mails still in the moderator's INBOX (not flagged deleted)."""
    return int(imap.folder_status("INBOX", [b"MESSAGES"])[b"MESSAGES"])


def check(injector: Injector, config, left_in_inbox: int) -> dict:
    """Lost and doubled, from the game files and the mails the sink accepted."""
    from moderator.store.gamefile import GameStore

    store = GameStore(config.games_dir)
    histories: dict[str, dict[str, int]] = {}
    for gid in {o.game for o in injector.orders}:
        counts: dict[str, int] = {}
        for h in store.load(gid).history:
            if h.get("message_id"):
                counts[h["message_id"]] = counts.get(h["message_id"], 0) + 1
        histories[gid] = counts
    lost = doubled = refused = 0
    for o in injector.orders:
        applied = histories[o.game].get(o.message_id, 0)
        answers = injector.by_reply.get(o.message_id, 0)
        if applied == 0 and answers == 0:
            lost += 1
        if applied > 1 or answers > 1:
            doubled += 1
        if applied == 0 and answers:
            refused += 1
    stray_lost = sum(1 for s in injector.strays.values() if s.kind == "wrong" and s.answers == 0)
    stray_doubled = sum(1 for s in injector.strays.values() if s.answers > 1 or
                        (s.kind == "machine" and s.answers))
    twice = sum(1 for n in injector.seen_ids.values() if n > 1)
    return {"lost": lost + stray_lost + left_in_inbox, "doubled": doubled + stray_doubled + twice,
            "refused": refused, "orders": len(injector.orders), "left_in_inbox": left_in_inbox,
            "stray_lost": stray_lost, "stray_doubled": stray_doubled, "message_id_twice": twice}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="load benchmark: pbem run --loop on Dovecot and SMTP")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--rates", default="0.5,1,2,3,4,6,8,12,16",
                    help="orders per second, each for --phase seconds, until p99 passes 10 s")
    ap.add_argument("--phase", type=float, default=120.0, help="seconds per rate")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="100 games, rates 1,2,4,8 for 20 s each (about 3 min)")
    ap.add_argument("--code", help="the checkout whose pbem.py runs the loop (default: this one), to "
                    "measure a change against the code before it in one run")
    ap.add_argument("--no-archive", dest="archive", action="store_false",
                    help="run the loop without --archive (the site rebuilt after every cycle)")
    ap.add_argument("--profile", metavar="FILE", help="write the loop process's cProfile statistics to FILE "
                    "(read with python -m pstats FILE)")
    ap.add_argument("--transport-worker", help=argparse.SUPPRESS)
    ap.add_argument("--sink-worker", help=argparse.SUPPRESS)
    if argv is None and sys.argv[1:2] == ["--profile-worker"]:
        return profile_worker(sys.argv[2], sys.argv[3:])
    args = ap.parse_args(argv)
    if args.transport_worker:
        return transport_worker(args.transport_worker)
    if args.sink_worker:
        return sink_worker(args.sink_worker)
    if args.quick:
        args.games, args.rates, args.phase = min(args.games, 100), "1,2,4,8", 20.0
    args.rates = [float(r) for r in str(args.rates).split(",") if r.strip()]
    r = run(args)
    phases, checks, raw = r["phases"], r["checks"], r["raw"]
    raw_rate = raw["orders"] / raw["wall_s"]
    raw_cpu = raw["cpu_s"] / raw["orders"] * 1000
    saturated = next((p["rate"] for p in phases if p["p99"] > SATURATED_P99), None)
    sat = saturated if saturated is not None else phases[-1]["rate"]
    at1 = next((p for p in phases if p["rate"] == 1.0), phases[0])
    done = [p for p in phases if p["p99"] <= SATURATED_P99] or phases
    cpu_order = statistics.median(p["cpu_per_order_ms"] for p in done)
    rss = [kb for _, kb in r["rss"]]
    third = max(1, len(rss) // 3)
    rss_first, rss_last = statistics.median(rss[:third]), statistics.median(rss[-third:])
    print(f"{r['games']} games, {checks['orders']} orders ({checks['refused']} refused), {r['strays']} stray mails, "
          f"{r['cycles']} cycles, {r['skipped']} order slots with no game ready; setup {r['setup_s']:.0f} s, "
          f"run {r['wall_s']:.0f} s; load average {r['load_before'][0]:.1f} before, {r['load_after'][0]:.1f} after")
    print(f"raw transport of {raw['orders']} orders' mails: {raw_rate:.1f} orders/s, {raw_cpu:.1f} ms CPU per order")
    print(f"moderator RSS: {rss_first / 1024:.1f} MB (first third) -> {rss_last / 1024:.1f} MB (last third), "
          f"max {max(rss) / 1024:.1f} MB")
    for e in r["errors"]:
        print("loop stderr:", e)
    print(f"load_games: {r['games']}")
    print(f"load_orders: {checks['orders']}")
    print(f"load_answered: {sum(p['done'] for p in phases)}")
    print(f"load_refused: {checks['refused']}")
    print(f"load_strays: {r['strays']}")
    print(f"load_strays_answered_wrongly: {checks['stray_lost'] + checks['stray_doubled']}")
    for p in phases:
        print(f"load_p99_s_at_{p['rate']:g}ps: {p['p99']:.2f}")
    first = f"{at1['rate']:g}"  # the lowest rate run: 1/s unless --rates left it out (then named as run)
    print(f"load_p50_s_at_{first}ps: {at1['p50']:.2f}")
    print(f"load_p90_s_at_{first}ps: {at1['p90']:.2f}")
    if at1["rate"] == 1.0:
        print(f"load_p99_s_at_1ps: {at1['p99']:.2f}")
    print(f"load_max_s_at_{first}ps: {at1['max']:.2f}")
    print(f"load_order_slots_without_game: {r['skipped']}")  # > 0: too few games for the rate offered
    print(f"load_throughput_max_per_s: {max(p['throughput'] for p in phases):.2f}")
    print(f"load_cpu_per_order_ms: {cpu_order:.1f}")
    print(f"load_cpu_vs_transport: {cpu_order / raw_cpu:.2f}")
    print(f"load_transport_rate_per_s: {raw_rate:.1f}")
    print(f"load_saturation_per_s: {'' if saturated is not None else '>='}{sat:g}")
    print(f"load_saturation_vs_transport: {'' if saturated is not None else '>='}{sat / raw_rate:.2f}")
    print(f"load_rss_mb: {rss_last / 1024:.1f}")
    print(f"load_rss_growth: {rss_last / rss_first:.3f}")
    print(f"load_lost: {checks['lost']}")
    print(f"load_doubled: {checks['doubled']}")
    print(f"load_average: {r['load_after'][0]:.1f}")
    print(f"load_code: {args.code or ROOT}")
    return 0 if checks["lost"] == 0 and checks["doubled"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
