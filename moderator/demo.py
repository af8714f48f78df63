"""Built-in players for the demo and the end-to-end tests.

A ``Bot`` plays like a person with a mail client: it reads the status mails the
moderator sends it (plain text, as rendered), and when it is its move it hits
Reply, writes one turn on top of the quoted mail and sends it.  By itself it knows
nothing of the engine: it only reads what the mail says it may do (the "demo
player", a simple rule over the legal lines).  Given a ``strategy`` it writes the
turn that strategy chooses instead: ``run_demo`` (``pbem demo``) gives each seat
the built-in player (``moderator.players.heuristic``), which decides from what the
seat may see only, and still sends every turn as a mail.

``play(moderator, bots, deliver, collect)`` drives a game to its end: it runs
moderator cycles, hands each bot its new mails (``collect``) and puts the bots' order
mails into the moderator's inbox (``deliver``).  ``run_demo`` does this on the
embedded default (local Maildir folders).
"""
from __future__ import annotations

import mailbox
import random
import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime, make_msgid
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from .config import Config
from .moderation.cycle import Moderator
from .mail.read import canonical_address

DEMO_PLAYERS = [("Ada", "ada@demo.example"), ("Brunel", "brunel@demo.example"),
                ("Crocker", "crocker@demo.example")]


def _body(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


def _section(lines: list[str], start: str) -> list[str]:
    """The indented lines after the line starting with ``start``, up to a blank."""
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith(start):
            for nxt in lines[i + 1:]:
                if not nxt.strip():
                    break
                out.append(nxt.strip())
            break
    return out


_GROUPED = re.compile(r"^\s+([A-Z]{2,4}): (.+)$")


def _build_lines(lines: list[str]) -> list[str]:
    """The build orders of a mail's grouped legal builds, one line per company
    (the ``legal`` answer's ``KCC: DEN-KCY, KCY-STL (white); OMA-KCY (joker as
    black, plain)``, each section with each type: ``build KCC DEN-KCY white``;
    the status mail's ``KCC: DEN-KCY white | OMA-KCY plain (+3)``)."""
    out = []
    for line in lines:
        m = _GROUPED.match(line)
        if not m:
            continue
        body = re.sub(r"\s*\(\+\d+\)$", "", m.group(2))
        if " | " in body or re.fullmatch(r"[A-Z]{3}-[A-Z]{3} [a-z][a-z -]*", body):
            # the status mail's few best builds: ``EPRG: ABQ-KCY plain | DAL-ELP plain (+9)``
            for item in body.split(" | "):
                sid, _, kind = item.strip().partition(" ")
                out.append(f"build {m.group(1)} {sid} {kind}")
            continue
        for group in body.split("; "):
            g = re.fullmatch(r"(.+?) \((.+)\)", group.strip())
            if not g:
                continue
            for sid in g.group(1).split(", "):
                for kind in g.group(2).split(", "):
                    out.append(f"build {m.group(1)} {sid} {kind}")
    return out


@dataclass
class Bot:
    """A simple player reading its mails: ``name``, ``address``, and a seeded
    ``rng`` for its choices.  ``moderator`` is the address orders are sent to."""

    name: str
    address: str
    moderator: str
    rng: random.Random
    strategy: Callable[[str], list[str] | None] | None = field(default=None, repr=False)
    sent: int = 0
    refused: int = 0
    last: EmailMessage | None = field(default=None, repr=False)

    def receive(self, msgs: list[EmailMessage]) -> EmailMessage | None:
        """Read this cycle's mails to the bot; return an order mail if the newest
        status says it is the bot's move (or a refusal asks to try again)."""
        statuses = [m for m in msgs if ".pbem." in str(m["Message-ID"] or "")]  # a game's mails
        if not statuses:
            return None
        msg = statuses[-1]
        self.last = msg
        text = _body(msg)
        if "order refused" in text.partition("\n")[0]:
            self.refused += 1
        orders = self.decide(text)
        if orders is None:
            return None
        return self.reply(msg, orders)

    def decide(self, text: str) -> list[str] | None:
        """Order lines for the status ``text``, or None when it is not our move."""
        lines = text.splitlines()
        if self.strategy is not None:
            if "IT IS YOUR MOVE" not in text and "IT IS YOUR TURN" not in text \
                    and "What is legal now:" not in text:
                return None
            return self.strategy(self.name)
        if "IT IS YOUR MOVE" in text:
            starts = [l for l in _section(lines, "Nobody sees the choices") if l.startswith("start ")]
            return [self.rng.choice(starts)] if starts else None
        if "IT IS YOUR TURN" not in text and "What is legal now:" not in text:
            return None
        builds = _build_lines(lines)
        takes_line = next((l for l in lines if l.strip().startswith("Then one of:")
                           or "on the same line, one of:" in l), "")
        takes = [t.strip() for t in takes_line.split(":", 1)[-1].split("|") if t.strip()]
        hand_line = next((l for l in lines if l.strip().startswith("Shares:")), "")
        shares = [s.strip() for s in hand_line.split(":", 1)[-1].split(",") if s.strip() and s.strip() != "none"]
        cards_line = next((l for l in lines if l.strip().startswith("Track cards:")), "")
        cards = [c.strip() for c in cards_line.split(":", 1)[-1].split(",") if c.strip() and c.strip() != "none"]
        passes = [l.strip() for l in lines if l.strip().startswith("pass; discard ")]
        if passes:
            return [passes[0]]
        counts = {s: shares.count(s) for s in set(shares)}
        best = max(sorted(counts), key=lambda s: counts[s]) if counts else None
        invest = best is not None and (
            not builds or counts[best] >= 3 or len(shares) >= 6 or self.rng.random() < 0.15
        )
        if invest and cards:
            n = counts[best]  # type: ignore[index]
            return [f"invest {n} {best}" if n > 1 else f"invest {best}", f"discard {self.rng.choice(cards)}"]
        if builds and takes:
            return [self.rng.choice(builds), self.rng.choice(takes)]
        return None

    def reply(self, original: EmailMessage, orders: list[str]) -> EmailMessage:
        """A reply to ``original`` with ``orders`` written on top of the quoted text,
        as a mail client makes it."""
        msg = EmailMessage(policy=policy.default)
        msg["From"] = f"{self.name} <{self.address}>"
        msg["To"] = str(original["From"])
        subject = str(original["Subject"])
        msg["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        msg["Date"] = format_datetime(datetime.now(timezone.utc))
        msg["Message-ID"] = make_msgid(idstring=f"bot.{self.name.lower()}.{self.sent}",
                                       domain=self.address.split("@")[1])
        orig_id = original["Message-ID"]
        if orig_id:
            msg["In-Reply-To"] = str(orig_id)
            refs = str(original.get("References", "")).split()
            msg["References"] = " ".join(refs + [str(orig_id)])
        quoted = "\n".join("> " + l for l in _body(original).splitlines())
        msg.set_content("\n".join(orders) + "\n\n" + f"On {original['Date']}, the moderator wrote:\n" + quoted + "\n")
        self.sent += 1
        return msg


def play(
    moderator: Moderator,
    bots: list[Bot],
    deliver: Callable[[EmailMessage], None],
    collect: Callable[[], list[EmailMessage]],
    game_over: Callable[[], bool],
    max_cycles: int = 5000,
) -> int:
    """Drive a game with ``bots`` until ``game_over()``: hand each bot its new mails
    (``collect()`` returns mails sent since the last call), ``deliver`` the bots'
    order mails to the moderator's inbox, run a cycle.  Returns the number of cycles.
    Raises RuntimeError when the game does not end within ``max_cycles`` or a cycle
    reports errors."""
    by_address = {b.address: b for b in bots}
    for cycles in range(1, max_cycles + 1):
        mine: dict[str, list[EmailMessage]] = {}
        for msg in collect():
            to = canonical_address(str(msg["To"]))
            mine.setdefault(to, []).append(msg)
        for addr, msgs in mine.items():
            bot = by_address.get(addr)
            if bot is not None:
                order = bot.receive(msgs)
                if order is not None:
                    deliver(order)
        if game_over():
            return cycles
        report = moderator.run_cycle()
        if not report.ok:
            raise RuntimeError("cycle failed: " + "; ".join(report.errors))
    raise RuntimeError(f"the game did not end within {max_cycles} cycles")


class MaildirReader:
    """Reads new mails from a Maildir (the demo's outbox), each once."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.box = mailbox.Maildir(str(path), create=True)
        self.seen: set[str] = set()

    def __call__(self) -> list[EmailMessage]:
        new = []
        keys = [k for k in self.box.keys() if k not in self.seen]
        # delivery order: file time, then key (the key starts with the time)
        keys.sort(key=lambda k: ((self.path / "new" / k).stat().st_mtime_ns
                                 if (self.path / "new" / k).exists() else 0, k))
        for key in keys:
            self.seen.add(key)
            with self.box.get_file(key) as fh:
                new.append(BytesParser(policy=policy.default).parse(fh))
        return new


def sign_up(moderator: Moderator, game_id: str, seed: int, bots: list[Bot],
            deliver: Callable[[EmailMessage], None], collect: Callable[[], list[EmailMessage]]) -> None:
    """Open ``game_id`` for sign-up (``moderation/signup.py``: exactly as many
    seats as ``bots``, starting when full) and let the bots join by mail: each
    sends ``join GAME as NAME``, replies ``confirm`` above the quoted
    confirmation, and the last confirmation starts the game (everyone's
    welcome waits in the outbox for ``play``).  Raises ValueError when the game
    exists, RuntimeError when a cycle fails or the game did not start."""
    from .moderation.signup import open_game

    open_game(moderator.bk, moderator.store, game_id,
              {"seats": [len(bots), len(bots)], "starts": "full", "invite": [], "seat_order": "joined",
               "expire": 86400, "substitutes": "auto", "seed": seed, "ruleset": "first-edition",
               "options": {}, "board": None, "settings": None, "gm": None, "observers": []},
              moderator.clock())
    by_address = {b.address: b for b in bots}
    for b in bots:
        msg = EmailMessage(policy=policy.default)
        msg["From"] = f"{b.name} <{b.address}>"
        msg["To"] = b.moderator
        msg["Subject"] = f"joining {game_id}"
        msg["Date"] = format_datetime(datetime.now(timezone.utc))
        msg["Message-ID"] = make_msgid(idstring=f"bot.{b.name.lower()}.join", domain=b.address.split("@")[1])
        msg.set_content(f"join {game_id} as {b.name}\n")
        deliver(msg)
    for step in ("the join mails", "the confirmations"):
        report = moderator.run_cycle()
        if not report.ok:
            raise RuntimeError(f"cycle failed on {step}: " + "; ".join(report.errors))
        if step == "the join mails":
            for msg in collect():
                bot = by_address.get(canonical_address(str(msg["To"])))
                if bot is not None:
                    deliver(bot.reply(msg, ["confirm"]))
    if not moderator.store.exists(game_id):
        raise RuntimeError(f"the demo game {game_id} did not start after its players confirmed")


def run_demo(directory: str | Path, seed: int = 1, game_id: str = "demo") -> dict:
    """Open a 3-player game in ``directory`` (its own ``games/`` and ``mail/``
    Maildirs, the embedded default transport), let its bots join by mail
    (``sign_up``: ``join``, then ``confirm`` in reply) and play it to the end with bots
    that play as the built-in player (``moderator.players.heuristic``), each turn
    by mail.

    Returns ``{"record": GameRecord, "cycles": int, "game_file": Path, "inbox": Path,
    "outbox": Path}``.  Raises ValueError if the game already exists there."""
    directory = Path(directory).absolute()
    config = Config(
        games_dir=directory / "games",
        maildir_inbox=directory / "mail" / "inbox",
        maildir_outbox=directory / "mail" / "outbox",
        spool_dir=directory / "spool",
    )
    moderator = Moderator(config)
    config.maildir_inbox.parent.mkdir(parents=True, exist_ok=True)
    config.games_dir.mkdir(parents=True, exist_ok=True)  # the game file comes at the start
    inbox = mailbox.Maildir(str(config.maildir_inbox), create=True)
    reader = MaildirReader(config.maildir_outbox)
    rng = random.Random(seed)

    def heuristic(name: str) -> list[str] | None:
        """The built-in player's turn for seat ``name``, as order lines (from the
        seat's view only: ``choose`` redraws what the seat cannot see)."""
        from .players.heuristic import choose

        game = moderator.store.load(game_id).game
        if name not in game.waiting_for():
            return None
        return str(choose(game, name, random.Random(f"{seed}:{len(game.history)}"))).split("; ")

    bots = [Bot(n, a, config.moderator_address, random.Random(rng.random()), strategy=heuristic)
            for n, a in DEMO_PLAYERS]

    def deliver(msg: EmailMessage) -> None:
        inbox.add(msg.as_bytes())

    sign_up(moderator, game_id, seed, bots, deliver, reader)

    def over() -> bool:
        data = moderator.store.read_data(game_id)
        return data["state"]["phase"] == "over"

    cycles = play(moderator, bots, deliver, reader, over)
    return {
        "record": moderator.store.load(game_id),
        "cycles": cycles,
        "game_file": moderator.store.path(game_id),
        "inbox": config.maildir_inbox,
        "outbox": config.maildir_outbox,
        "bots": bots,
    }
