"""The clock tells the truth, as a property (hypothesis): over random timelines of
cycles, orders, vacations, pauses, resumes, extends, deadline changes, outages,
replacements and undos, in a game whose players are in zones that change their
offset (America/New_York on 2027-03-14, Europe/Madrid on 2027-03-28):

- after every step (a cycle, a game master's command), each player the game
  waits for with a deadline running was last told exactly the deadline the game
  file holds in force (``deadlines.due``): no change goes untold (a later mail
  of one cycle may tell a change that a later mail of that cycle made); in a
  step that starts no new wait, the last "NAME's move is now due by" any reader
  got is NAME's deadline in force (a new wait is told to the player waited for,
  as status mails show only the reader's own deadline); while no deadline runs,
  no mail names one;
- every printed deadline's local time is that instant in the reader's zone
  (zoneinfo);
- no automatic move for a player happens before the deadline they were last
  told, and after every cycle no deadline in force lies in the past.

The moderator runs in-process on Maildirs with the clock the test sets (as
``pbem run --now`` does); the game master's commands go through
``Moderator.manage`` (``pbem gm``)."""
from __future__ import annotations

import mailbox
import random
import re
import tempfile
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from moderator.config import Config
from moderator.moderation.cycle import Moderator
from moderator.moderation.deadlines import due
from moderator.moderation.gm import GmError
from moderator.players.heuristic import choose
from moderator.store.gamefile import GameStore
from outbox import unseen_mails

T0 = datetime(2027, 3, 10, 9, 0, tzinfo=timezone.utc)
ZONES = {"Ann": None, "Bob": "America/New_York", "Cy": "Europe/Madrid"}
STAMP = r"(\d{4}-\d\d-\d\d \d\d:\d\d) UTC(?: \((\d{4}-\d\d-\d\d \d\d:\d\d) (\S+), ([\w/]+)\))?"
OWN = re.compile(r"(?:Your move is (?:now )?due by|It is due by|The next missed move is counted at|"
                 r"waiting for your move, due by) " + STAMP)
OTHER = re.compile(r"(\w+)'s move is now due by " + STAMP)
AUTOMATIC = re.compile(r"Your deadline of " + STAMP + r" passed without an order from you, so the built-in player "
                       r"moved for you")


def _instant(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc)


class Timeline:
    def __init__(self, root: Path, deadline: int, on_missed: str):
        self.config = Config(games_dir=root / "games", maildir_inbox=root / "mail" / "inbox",
                             maildir_outbox=root / "mail" / "outbox", spool_dir=root / "spool",
                             operator="gm@example.org")
        self.now = T0
        self.mod = Moderator(self.config, clock=lambda: self.now)
        self.mod.create_game("ridge", [("Ann", "ann@example.org"), ("Bob", "bob@example.org"),
                                       ("Cy", "cy@example.org")], seed=11,
                             settings={"deadline": deadline, "on_missed": on_missed, "abandon_after": 3})
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()
        self.told: dict[str, datetime] = {}
        rec = self.load()
        self.seats = {p.address: p.name for p in rec.players}
        self.replaced = 0
        self.check(after_cycle=False)  # the welcome mails (in UTC: no zone set yet)
        for p in rec.players:  # as if each had written 'timezone ZONE'
            p.timezone = ZONES[p.name]
        GameStore(self.config.games_dir).save(rec)

    def load(self):
        return GameStore(self.config.games_dir).load("ridge")

    def mail(self, name: str, text: str) -> None:
        rec = self.load()
        p = rec.player_by_name(name)
        if p.bot or not p.address:
            return
        msg = EmailMessage(policy=policy.default)
        msg["From"] = p.address
        msg["To"] = self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:ridge:{p.secret}] Union Pacific ridge"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(text + "\n")
        self.inbox.add(msg.as_bytes())

    def move(self, name: str, seed: int) -> None:
        rec = self.load()
        if name not in rec.game.waiting_for() or rec.game.phase == "over":
            return
        action = choose(rec.game, name, random.Random(seed))
        self.mail(name, str(action).replace("; ", "\n"))

    def gm(self, line: str) -> None:
        try:
            self.mod.manage("ridge", line)
        except GmError:
            return  # refused: the game is unchanged
        if line.startswith("replace"):
            self.seats.update({p.address: p.name for p in self.load().players})
        self.check(after_cycle=False)

    def run(self, minutes: int) -> None:
        self.now += timedelta(minutes=minutes)
        before = self.load()
        humans = {p.name for p in before.players if not p.bot}
        report = self.mod.run_cycle()
        assert report.ok, report.errors
        rec = self.load()
        missed = [h for h in rec.history[len(before.history):] if h.get("by") == "bot" and h["player"] in humans]
        # a new wait (a move made) is told to the player waited for, not to the others
        same_wait = len(rec.history) == len(before.history) and rec.clock.get("since") == before.clock.get("since")
        self.check(after_cycle=True, missed=[h["player"] for h in missed], same_wait=same_wait)

    def mails(self) -> list:
        return unseen_mails(self.outbox, self.seen)

    def check(self, after_cycle: bool, missed: tuple | list = (), same_wait: bool = True) -> None:
        rec = self.load()
        waiting = {n for n in rec.game.waiting_for() if not rec.player_by_name(n).bot} \
            if rec.ended is None else set()
        force = {n: due(rec, rec.player_by_name(n)) for n in waiting}
        moved_for = []
        others: dict[tuple[str, str], datetime] = {}  # (reader, player) -> the last told in this step
        told_now: set[str] = set()
        for msg in self.mails():  # in the order sent: a later mail may tell a later change
            name = self.seats.get(str(msg["To"]))
            if name is None:
                continue  # the game master, an observer
            text = " ".join(msg.get_body(preferencelist=("plain",)).get_content().split())
            zone = rec.player_by_name(name).timezone
            # first the automatic move (a line of their status mail, naming the deadline that passed: the
            # one last told or, with policy wait, a later one of the waits the same cycle restarted), then
            # the deadline of the wait that follows, which the same mail may give
            for m in AUTOMATIC.finditer(text):
                moved_for.append(name)
                assert name in self.told and self.now >= self.told[name], (name, self.told.get(name), self.now)
                passed = self._stamp(m.groups(), zone)
                assert self.told[name] <= passed <= self.now, (name, m.group(0), self.told[name])
            for m in OWN.finditer(text):
                self.told[name] = self._stamp(m.groups(), zone)
                told_now.add(name)
            for m in OTHER.finditer(text):
                others[(name, m.group(1))] = self._stamp(m.groups()[1:], zone)
        # one mail per player moved for (an abandoned seat's later moves in the cycle are the built-in player's)
        assert sorted(moved_for) == sorted({n for n in missed if rec.player_by_name(n).address}), (moved_for, missed)
        for (reader, other), when in others.items():
            if other in force and same_wait:
                assert force[other] == when, (reader, other, when, force[other])
        for name, when in force.items():
            if when is None:  # no deadline runs (paused, none): no mail of this step names one
                assert name not in told_now, (name, self.told.get(name))
            if when is None or not rec.player_by_name(name).address:
                continue
            assert self.told.get(name) == when, (name, self.told.get(name), when)
            if after_cycle:
                assert when > self.now

    @staticmethod
    def _stamp(groups, zone: str | None) -> datetime:
        """The instant of a printed deadline; its local part checked against zoneinfo."""
        utc, local, label, named = groups
        when = _instant(utc)
        if zone is not None:
            assert named == zone, groups
            there = when.astimezone(ZoneInfo(zone))
            assert (local, label) == (there.strftime("%Y-%m-%d %H:%M"), there.tzname()), groups
        else:
            assert local is None, groups
        return when


NAMES = st.sampled_from(["Ann", "Bob", "Cy"])
STEP = st.one_of(
    st.tuples(st.just("run"), st.integers(10, 60 * 60)),  # up to 60 h: some are outages (over 24 h)
    st.tuples(st.just("move"), NAMES, st.integers(0, 10 ** 6)),
    st.tuples(st.just("status"), NAMES),
    st.tuples(st.just("vacation"), NAMES, st.integers(1, 96)),
    st.tuples(st.just("vacation off"), NAMES),
    st.tuples(st.just("pause")),
    st.tuples(st.just("resume")),
    st.tuples(st.just("extend"), NAMES, st.integers(1, 48)),
    st.tuples(st.just("deadline"), st.sampled_from([None, 6, 24, 48, 72])),
    st.tuples(st.just("replace"), NAMES),
    st.tuples(st.just("undo")),
)


@settings(max_examples=30, deadline=None)
@given(deadline=st.sampled_from([6, 20, 48, 72]), on_missed=st.sampled_from(["bot", "wait"]),
       steps=st.lists(STEP, min_size=4, max_size=18))
def test_every_printed_deadline_is_the_one_in_force(deadline, on_missed, steps):
    with tempfile.TemporaryDirectory() as root:
        t = Timeline(Path(root), deadline * 3600, on_missed)
        for step in steps:
            kind = step[0]
            if kind == "run":
                t.run(step[1])
            elif kind == "move":
                t.move(step[1], step[2])
            elif kind == "status":
                t.mail(step[1], "status")
            elif kind == "vacation":
                t.mail(step[1], f"vacation {step[2]}h")
            elif kind == "vacation off":
                t.mail(step[1], "vacation off")
            elif kind in ("pause", "resume", "undo"):
                t.gm("undo 1" if kind == "undo" else kind)
            elif kind == "extend":
                t.gm(f"extend {step[1]} {step[2]}h")
            elif kind == "deadline":
                t.gm("deadline " + ("none" if step[1] is None else f"{step[1]}h"))
            elif kind == "replace":
                t.replaced += 1
                t.gm(f"replace {step[1]} New{t.replaced}=new{t.replaced}@example.org")
        t.run(60)  # the mails of the last steps read
