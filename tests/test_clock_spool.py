"""The clock stage keeps the promise of order mails, and an undo swallows nothing.

Each cycle runs as its own ``pbem run --now`` process on local Maildirs, as
from cron.  A run killed (``$PBEM_FAULT``, SIGKILL) at any step of the clock
stage, then run again at the same time, must leave the players and the game
master exactly the mails and the game file of the same timeline run without
a kill: the clock's reminders and notices are spooled in one batch with the
save that records them (a kill before the save: ``sweep`` drops the batch and
the clock makes it anew; after it: the batch is sent), never saved without
them.

An order saved by a cycle killed before its status mails went out, then taken
back by the game master (``pbem gm GAME undo 1``): every player still gets
that move's status mail exactly as without the kill (the mover's private draw
line to the mover only), then the undo's notice; the order mail left in the
inbox is not applied again.
"""
from __future__ import annotations

import mailbox
import os
import random
import shutil
import signal
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
import yaml

from moderator.config import load_config
from moderator.mail.transport import TransportError
from moderator.moderation.cycle import Moderator
from moderator.players.heuristic import choose
from moderator.rules.actions import Build
from moderator.rules.notation import public_order
from moderator.store.gamefile import GameStore, StoreError
from servers import SmtpSink, _SinkHandler
from outbox import unseen_mails

REPO = Path(__file__).resolve().parent.parent
PBEM = REPO / "pbem.py"
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
GM = "gm@example.org"
THREE = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]
KILLED = -signal.SIGKILL


class Root:
    """A moderator's directory (``pbem.yaml``, ``games/``, ``spool/``, Maildirs
    ``mail/inbox`` and ``mail/outbox``) driven by ``pbem`` processes."""

    def __init__(self, path: Path):
        self.path = path
        self.cfg = path / "pbem.yaml"
        if not self.cfg.exists():
            path.mkdir(parents=True, exist_ok=True)
            self.cfg.write_text(yaml.safe_dump({
                "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
                "operator": GM, "games_dir": "games", "spool_dir": "spool",
                "maildir": {"inbox": "mail/inbox", "outbox": "mail/outbox"},
                "outage_after": 30 * 86400}))  # cycles days apart are no outage here
        self.config = load_config(self.cfg)
        self.seen: set[str] = set()

    def copy(self, path: Path) -> "Root":
        shutil.copytree(self.path, path)
        other = Root(path)
        other.seen = set(self.seen)
        return other

    def pbem(self, *args: str, fault: str | None = None) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "PBEM_FAULT"}
        if fault:
            env["PBEM_FAULT"] = fault
        return subprocess.run([sys.executable, str(PBEM), "--config", str(self.cfg), *args], cwd=self.path,
                              env=env, capture_output=True, text=True, timeout=300)

    def run(self, at: datetime, fault: str | None = None) -> subprocess.CompletedProcess:
        return self.pbem("run", "--now", at.isoformat(), fault=fault)

    def store(self) -> GameStore:
        return GameStore(self.config.games_dir)

    def mail(self, game: str, name: str, body: str) -> None:
        """``name`` mails ``body`` to ``game`` (their secret in the Subject)."""
        rec = self.store().load(game)
        p = rec.player_by_name(name)
        msg = EmailMessage(policy=policy.default)
        msg["From"] = p.address
        msg["To"] = self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:{game}:{p.secret}] Union Pacific {game}"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(body + "\n")
        mailbox.Maildir(str(self.config.maildir_inbox), create=True).add(msg.as_bytes())

    def sent(self) -> list[EmailMessage]:
        """The mails delivered to the outbox since the last call, in delivery order."""
        box = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        return unseen_mails(box, self.seen)

    def spooled(self) -> list[Path]:
        return sorted(self.config.spool_dir.glob("*.eml"))


def text(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def what(msg: EmailMessage) -> tuple[str, str, str]:
    """A mail as a reader tells it from another: recipient, Subject, text (the
    Message-ID and Date differ between two runs of the same timeline)."""
    return str(msg["To"]), str(msg["Subject"]), text(msg)


def title(msg: EmailMessage) -> str:
    return text(msg).partition("\n")[0]


# ------------------------------------------------------------------ the clock
def clock_root(path: Path) -> Root:
    """Two games created at T0 with a 48 h deadline and no move made:
    ``bot`` (the built-in player moves for a silent player, the seat abandoned
    after 2 missed moves) and ``wait`` (policy wait: the game master is told)."""
    root = Root(path)
    mod = Moderator(root.config, clock=lambda: T0)
    settings = {"deadline": 48 * 3600, "abandon_after": 2, "on_missed": "bot"}
    mod.create_game("bot", THREE, seed=11, settings=settings, gm=GM)
    mod.create_game("wait", THREE, seed=12, settings={**settings, "on_missed": "wait", "abandon_after": 3},
                    gm=GM)
    mod.close()
    root.sent()  # the welcomes
    return root


# the cycles and what each owes (derived from the settings: a reminder 24 h
# before the deadline, the deadline 48 h after the wait started)
CYCLES = [T0 + 25 * H,   # reminders to all three of both games (initial investments)
          T0 + 49 * H,   # missed: bot moves for all three (automatic moves, status mails);
                         # wait: the game master told of three missed moves
          T0 + 74 * H,   # bot: the reminder to the first player of the turn; wait: the daily reminders
          T0 + 98 * H]   # bot: the 2nd miss in a row: the seat abandoned, everyone and the game master told
CLOCK_POINTS = ["clock-tick", "clock-spooled", "clock-saved", "clock-committed",
                "clock-spooled:2", "clock-saved:2"]  # :2 the second game's: the first's is done


@pytest.fixture(scope="module")
def clock_reference(tmp_path_factory):
    """The timeline run without faults: the games as created, and per cycle
    the mails delivered and the game files after it."""
    base = clock_root(tmp_path_factory.mktemp("clock") / "base")
    ref = base.copy(base.path.parent / "reference")
    cycles = []
    for at in CYCLES:
        p = ref.run(at)
        assert p.returncode == 0, p.stderr
        cycles.append(([what(m) for m in ref.sent()], {g: ref.store().read_data(g) for g in ("bot", "wait")}))
    return base, cycles


def _owed_by_hand() -> list[Counter]:
    """What each cycle of ``CYCLES`` owes, ``(recipient, first line)``, derived
    from the settings: a reminder 24 h before a deadline; at the deadline of
    ``bot`` the built-in player moves (each reader's one status mail tells the
    moves: one mail per player per cycle), of ``wait`` the game master is told of each miss, the
    player reminded at once (the wait's new deadline) and the wait starts again
    at the deadline (reminded a day later); the 2nd miss in a row abandons Ann's
    seat in ``bot``."""
    ann, bob, cy = (a for _, a in THREE)

    def heads(game, to, *titles):
        return [(to, f"Union Pacific, game {game}: {t}") for t in titles]

    reminded = "reminder: your move is due"
    overdue = "reminder: your deadline has passed"  # the wait game's reminders after a miss
    c1 = [x for a in (ann, bob, cy) for g in ("bot", "wait") for x in heads(g, a, reminded)]
    c2 = heads("bot", ann, "your turn (turn 1)") + heads("bot", bob, "Ann to move (turn 1)") + \
        heads("bot", cy, "Ann to move (turn 1)")
    c2 += [(GM, f"Game wait: {n} missed the deadline of 2026-12-03 12:00 UTC (1 in a row). The game's policy "
                "is to wait: no move was made; the player is reminded now and then once a day.")
           for n in ("Ann", "Bob", "Cy")]
    c2 += [x for a in (ann, bob, cy) for x in heads("wait", a, overdue)]
    c3 = [x for a in (ann, bob, cy) for x in heads("wait", a, overdue)] + heads("bot", ann, reminded)
    c4 = [(GM, f"Game wait: {n} missed the deadline of 2026-12-05 12:00 UTC (2 in a row). The game's policy "
               "is to wait: no move was made; the player is reminded now and then once a day.")
          for n in ("Ann", "Bob", "Cy")]
    c4 += [x for a in (ann, bob, cy) for x in heads("wait", a, overdue)]
    # the seat abandoned and the automatic move: lines of each player's one status mail
    c4 += [(GM, "Game bot: Ann missed 2 moves in a row, and the seat is marked abandoned. The built-in player "
                "keeps the seat meanwhile; the seat is offered to the substitute pool, and you are told when a "
                "volunteer takes it (or, with substitutes gm, asked to approve them). To give it to someone "
                "yourself, send 'replace Ann NAME=ADDRESS'.")]
    c4 += heads("bot", ann, "Bob to move (turn 2)") + heads("bot", bob, "your turn (turn 2)") + \
        heads("bot", cy, "Bob to move (turn 2)")
    return [Counter(c) for c in (c1, c2, c3, c4)]


def test_the_timeline_owes_every_kind_of_clock_notice(clock_reference):
    """The reference timeline makes each notice of the clock stage (reminder,
    automatic moves, the game master's missed move, abandoned seat, the game
    master's abandoned seat) to the readers derived by hand: what the kill
    tests compare against."""
    _, cycles = clock_reference
    got = [Counter((to, body.partition("\n")[0]) for to, _subject, body in mails) for mails, _ in cycles]
    assert got == _owed_by_hand()
    data = cycles[-1][1]["bot"]
    assert [(p["name"], p["missed"], p["abandoned"], p["bot"]) for p in data["players"]] == \
        [("Ann", 2, True, True), ("Bob", 1, False, False), ("Cy", 1, False, False)]
    # a batch per cycle with notices mailed on their own (the reminders, the game master's): the
    # automatic moves of the second cycle are lines of the status mails, which tell log entries
    assert data["clock"]["reminded"] is False and data["mail_batch"] == 3


@pytest.mark.parametrize("point", CLOCK_POINTS)
def test_a_kill_at_each_step_of_the_clock_stage_loses_and_doubles_nothing(clock_reference, tmp_path, point):
    base, cycles = clock_reference
    root = base.copy(tmp_path / "faulted")
    for at, (owed, files) in zip(CYCLES, cycles):
        killed = root.run(at, fault=point)
        assert killed.returncode == KILLED, (point, at, killed.returncode, killed.stderr[-2000:])
        after_kill = [what(m) for m in root.sent()]
        again = root.run(at)
        assert again.returncode == 0, again.stderr
        got = after_kill + [what(m) for m in root.sent()]
        # every mail the cycle owes, each once (a doubled mail only when a kill
        # falls between the server's acceptance and the spool's removal)
        assert Counter(got) == Counter(owed), (point, at)
        assert root.spooled() == []
        for game, data in files.items():
            assert root.store().read_data(game) == data, (point, at, game)
            root.store().load(game, check=True)  # replays to the same state


def test_a_batch_spooled_before_a_save_that_did_not_happen_is_swept_with_a_true_log_line(
        clock_reference, tmp_path):
    base, cycles = clock_reference
    root = base.copy(tmp_path / "faulted")
    killed = root.run(CYCLES[0], fault="clock-spooled")
    assert killed.returncode == KILLED
    # the first game's reminders are in the spool; its file does not record them
    assert len(root.spooled()) == 3
    assert "mail_batch" not in root.store().read_data("bot")
    again = root.pbem("-v", "run", "--now", CYCLES[0].isoformat())
    assert again.returncode == 0, again.stderr
    lines = [line for line in again.stderr.splitlines() if "dropped the reminder mail" in line]
    assert len(lines) == 3, again.stderr
    assert all("spooled with a save that did not happen (batch 1; the game file's last is 0); "
               "the clock owes it again" in line for line in lines)
    assert Counter(what(m) for m in root.sent()) == Counter(cycles[0][0])
    assert root.store().read_data("bot")["mail_batch"] == 1


# ------------------------------------------------------------------ undo
def _take_stack(game, name: str):
    """A legal turn of ``name`` that draws from the share stack."""
    for seed in range(2000):
        action = game.random_action(name, random.Random(seed))
        if isinstance(action, Build) and action.take is not None and action.take.source == "stack":
            return action
    raise AssertionError("no turn drawing from the stack")


@pytest.fixture
def drawn_move(tmp_path):
    """A game in play whose player on move mailed a turn that draws from the
    stack, not yet handled: ``(root, mover, other players, the order)``."""
    root = Root(tmp_path / "base")
    mod = Moderator(root.config, clock=lambda: T0)
    mod.create_game("ridge", THREE, seed=21, settings={"deadline": None}, gm=GM)
    mod.close()
    at = T0
    for name, _ in THREE:  # the initial investments, one cycle each
        rec = root.store().load("ridge")
        root.mail("ridge", name, str(choose(rec.game, name, random.Random(3))).replace("; ", "\n"))
        at += H
        assert root.run(at).returncode == 0
    rec = root.store().load("ridge")
    assert rec.game.phase == "play"
    mover = rec.game.waiting_for()[0]
    order = str(_take_stack(rec.game, mover))
    root.mail("ridge", mover, order.replace("; ", "\n"))
    root.sent()
    return root, mover, [n for n, _ in THREE if n != mover], order


def test_undo_after_a_killed_cycle_delivers_the_moves_mails_then_the_undo(drawn_move, tmp_path):
    root, mover, others, order = drawn_move
    address = dict(THREE)
    at = T0 + 10 * H
    # the reference: the cycle as it runs without a kill
    ref = root.copy(tmp_path / "reference")
    assert ref.run(at).returncode == 0
    owed = ref.sent()
    assert sorted(str(m["To"]) for m in owed) == sorted(address.values())
    drew = [m for m in owed if "from the stack (only you see this)" in text(m)]
    assert [str(m["To"]) for m in drew] == [address[mover]]  # the private line: the mover's only
    before = root.store().load("ridge")

    killed = root.run(at, fault="after-save")  # saved, the status mails spooled, none sent
    assert killed.returncode == KILLED
    assert root.sent() == [] and len(root.spooled()) == 3
    assert len(root.store().load("ridge").history) == len(before.history) + 1
    undo = root.pbem("-v", "gm", "ridge", "undo", "1", "--now", (at + H).isoformat())
    assert undo.returncode == 0, undo.stderr
    assert "3 status mail(s) not yet sent" in undo.stderr and "are sent as they are, then the undo's notice" \
        in undo.stderr
    assert "did not happen" not in undo.stderr
    again = root.pbem("-v", "run", "--now", (at + 2 * H).isoformat())
    assert again.returncode == 0, again.stderr
    assert "did not happen" not in again.stderr
    got = root.sent()
    assert root.spooled() == []
    for name, addr in address.items():
        mine = [m for m in got if str(m["To"]) == addr]
        assert len(mine) == 2, (name, [title(m) for m in mine])
        # first the move's status mail exactly as without the kill, then the undo
        assert what(mine[0]) == what(next(m for m in owed if str(m["To"]) == addr))
        assert ("from the stack (only you see this)" in text(mine[0])) == (name == mover)
        assert "from the stack" not in text(mine[1])
        public = public_order(order, True)
        assert f"The game master took back the last 1 action ({mover}: {public}). The game goes on from " \
               "the position before them." in " ".join(text(mine[1]).split())
    # the undo stands: the order mail left in the inbox was not applied again
    after = root.store().load("ridge", check=True)
    assert after.history == before.history
    assert after.game.to_dict() == before.game.to_dict()
    assert [e["undone"][0]["order"] for e in after.gm_log] == [order]


class Refusing(_SinkHandler):
    """The sink's handler answering every DATA ``421`` while ``refusing``."""

    def __init__(self, sink):
        super().__init__(sink)
        self.refusing = False

    async def handle_DATA(self, server, session, envelope):
        if self.refusing:
            return "421 4.3.2 Service not available, try again later"
        return await super().handle_DATA(server, session, envelope)


def test_undo_while_the_smtp_server_refuses_delivers_the_moves_mails_then_the_undo(drawn_move, tmp_path):
    """The move's status mails deferred by a 421, then ``undo 1``: once the
    server takes mail again each player gets that move's mail as without the
    421, then the undo's notice; nothing else."""
    root, mover, others, order = drawn_move
    address = dict(THREE)
    at = T0 + 10 * H
    ref = root.copy(tmp_path / "reference")
    assert ref.run(at).returncode == 0
    owed = {str(m["To"]): what(m) for m in ref.sent()}
    with SmtpSink() as sink:
        handler = Refusing(sink)
        sink.controller.handler = handler
        cfg = yaml.safe_load(root.cfg.read_text())
        cfg["smtp"] = {"host": sink.host, "port": sink.port, "security": "none", "timeout": 10}
        root.cfg.write_text(yaml.safe_dump(cfg))
        now = [at]
        mod = Moderator(load_config(root.cfg), clock=lambda: now[0])
        handler.refusing = True
        report = mod.run_cycle()
        assert report.applied == 1 and report.errors  # saved; the status mails wait in the spool
        assert len(root.spooled()) == 3 and sink.messages == []
        now[0] = at + H
        with pytest.raises(TransportError):  # the undo is saved; its mails wait too
            mod.manage("ridge", "undo 1")
        assert len(root.spooled()) == 6
        handler.refusing = False
        now[0] = at + 3 * H
        report = mod.run_cycle()
        assert report.ok, report.errors
        mod.close()
        got = [m.message for m in sink.messages]
    assert root.spooled() == []
    for name, addr in address.items():
        mine = [m for m in got if str(m["To"]) == addr]
        assert len(mine) == 2, (name, [title(m) for m in mine])
        assert what(mine[0]) == owed[addr]
        assert ("from the stack (only you see this)" in text(mine[0])) == (name == mover)
        assert "The game master took back the last 1 action" in " ".join(text(mine[1]).split())
    after = root.store().load("ridge", check=True)
    assert [e["undone"][0]["order"] for e in after.gm_log] == [order]
    assert len(after.history) == len(THREE)  # the three initial investments: the turn is undone


@pytest.mark.parametrize("value", [-1, "2", 1.5, True])
def test_a_game_file_with_a_bad_mail_batch_is_refused_naming_it(tmp_path, value):
    root = Root(tmp_path)
    Moderator(root.config, clock=lambda: T0).create_game("ridge", THREE, seed=3)
    store = root.store()
    path = store.path("ridge")
    data = yaml.safe_load(path.read_text())
    assert "mail_batch" not in data  # absent until a batch of notices was saved
    data = {**{k: v for k, v in data.items() if k not in ("history", "log", "state")}, "mail_batch": value,
            "history": data["history"], "log": data["log"], "state": data["state"]}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(StoreError, match=f"mail_batch must be a whole number >= 0, not {value!r}"):
        GameStore(root.config.games_dir).load("ridge")


# ------------------------------------------- a game master's command, a vacation
def test_a_game_masters_command_killed_before_its_save_announces_nothing(tmp_path):
    """``pbem gm GAME pause`` killed after its announcements were spooled and
    before the save (``gm-spooled``): the game is not paused, and the next run
    sends no "paused" mail (``sweep`` drops the batch: it names a save that did
    not happen); the same command run again is announced once to each player."""
    root = clock_root(tmp_path / "root")
    at = T0 + 2 * H
    killed = root.pbem("gm", "bot", "pause", "--reason", "holiday", "--now", at.isoformat(), fault="gm-spooled")
    assert killed.returncode == KILLED, killed.stderr
    assert len(root.spooled()) == 3  # one announcement to each player, not sent
    assert root.store().load("bot").settings.get("paused") in (None, False)
    assert root.store().load("bot").gm_log == []
    ran = root.pbem("-v", "run", "--now", (at + H).isoformat())
    assert ran.returncode == 0, ran.stderr
    assert "spooled with a save that did not happen" in ran.stderr
    assert root.sent() == [] and root.spooled() == []
    again = root.pbem("gm", "bot", "pause", "--reason", "holiday", "--now", (at + 2 * H).isoformat())
    assert again.returncode == 0, again.stderr
    got = root.sent()
    assert sorted(str(m["To"]) for m in got) == sorted(a for _, a in THREE)
    assert all("holiday" in text(m) for m in got)
    assert root.store().load("bot").settings.get("paused")


def test_a_vacation_killed_before_its_save_is_announced_once_when_read_again(tmp_path):
    """A player's ``vacation 3d`` whose run is killed after the announcements to
    the other players were spooled and before the save (``vacation-spooled``):
    the mail stays in the inbox, the next run reads it again, and each other
    player gets the announcement exactly once (the killed run's copy is swept)."""
    root = clock_root(tmp_path / "root")
    at = T0 + 2 * H
    root.mail("bot", "Ann", "vacation 3d")
    killed = root.run(at, fault="vacation-spooled")
    assert killed.returncode == KILLED, killed.stderr
    assert root.sent() == []
    assert root.store().load("bot").player_by_name("Ann").vacation_until is None
    ran = root.run(at + H)
    assert ran.returncode == 0, ran.stderr
    got = root.sent()
    announced = Counter(str(m["To"]) for m in got if "Ann" in title(m) and "vacation" in text(m).lower())
    assert announced == Counter({"bob@example.org": 1, "cy@example.net": 1})
    assert [str(m["To"]) for m in got].count("ann@example.org") == 1  # the answer to Ann, once
    assert root.store().load("bot").player_by_name("Ann").vacation_until == (at + H + 3 * 24 * H).isoformat()
