"""What a new user found playing a game by hand on the embedded default (local
Maildirs), each with the real mail that showed it: raw RFC 5322 replies as mail
programs write them (In-Reply-To the moderator's mail, quoted history), dropped
into the inbox Maildir, handled by real moderator cycles."""
from __future__ import annotations

import email
import mailbox
from datetime import datetime, timedelta, timezone
from email import policy

import pytest

from moderator.config import Config
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore
from moderator.mail.transport.maildir import delivery_order
from test_deadlines import deliver

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]
OPERATOR = "op@example.com"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)



class Table:
    """A game on local Maildirs with a settable clock; players reply to the
    moderator's latest mail to them with raw RFC 5322 messages."""

    def __init__(self, tmp_path):
        self.now = T0
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                             maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool",
                             operator=OPERATOR)
        self.mod = Moderator(self.config, clock=lambda: self.now)
        self.mod.create_game("ridge", PLAYERS, seed=42)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.all: list = []
        self.seen: set[str] = set()
        self.count = 0

    def load(self):
        return GameStore(self.config.games_dir).load("ridge")

    @property
    def path(self):
        return self.mod.store.path("ridge")

    def sent(self):
        """The mails the moderator sent since the last call, oldest first."""
        out = []
        for key in sorted(self.outbox.keys(), key=delivery_order):
            if key in self.seen:
                continue
            self.seen.add(key)
            with self.outbox.get_file(key) as fh:
                out.append(email.message_from_binary_file(fh, policy=policy.default))
        self.all += out
        return out

    def last_to(self, address):
        self.sent()
        return [m for m in self.all if str(m["To"]).lower() == address][-1]

    def reply(self, name, body, content_type="text/plain; charset=UTF-8", cte="8bit", extra=""):
        """``name`` hits Reply on the moderator's latest mail to them and writes
        ``body`` (str, or bytes already encoded) on top, Thunderbird-style."""
        address = dict(PLAYERS)[name]
        last = self.last_to(address)
        self.count += 1
        head = (f"From: {name} Example <{address}>\r\n"
                f"To: Union Pacific moderator <{self.config.moderator_address}>\r\n"
                f"Subject: Re: {last['Subject']}\r\n"
                f"Date: Tue, 1 Dec 2026 10:{self.count:02d}:00 +0100\r\n"
                f"Message-ID: <{self.count}.{name.lower()}@client.example>\r\n"
                f"In-Reply-To: {last['Message-ID']}\r\nReferences: {last['Message-ID']}\r\n"
                f"MIME-Version: 1.0\r\n{extra}"
                f"Content-Type: {content_type}\r\nContent-Transfer-Encoding: {cte}\r\n\r\n").encode()
        if isinstance(body, str):
            body = body.replace("\n", "\r\n").encode("utf-8")
        deliver(self.inbox, head + body, self.now)  # it arrives at the simulated time

    def run(self, minutes=5):
        self.now += timedelta(minutes=minutes)
        return self.mod.run_cycle()


def text_of(msg):
    return msg.get_body(preferencelist=("plain",)).get_content()


def to(mails, address):
    return [m for m in mails if str(m["To"]).lower() == address]


@pytest.fixture
def t(tmp_path):
    return Table(tmp_path)


def start_all(t):
    rec = t.load()
    for name, _ in PLAYERS:
        t.reply(name, f"start {sorted(rec.game.share_hands[name])[0]}\n")
    report = t.run()
    assert report.applied == 3, report.summary()
    t.sent()



def _gm_mail(t, secret, command, hhmm, local_id):
    """The game master's mail (from the operator's address, with the game and
    secret lines) carrying ``command``, dated 1 Dec 2026 at ``hhmm`` +0100."""
    t.inbox.add((f"From: Game Master <{OPERATOR}>\r\nTo: {t.config.moderator_address}\r\n"
                 f"Subject: ridge\r\nDate: Tue, 1 Dec 2026 {hhmm}:00 +0100\r\nMessage-ID: <{local_id}@example.com>\r\n"
                 "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"
                 f"game: ridge\r\nsecret: {secret}\r\n{command}\r\n").encode())

def test_resign_confirm_in_the_cycle_of_another_players_order_gets_no_status_mail(t):
    """Cy confirms a resignation in the cycle that also applies Ann's order
    (Ann's mail first): Cy's status mail about Ann's move, spooled before the
    resignation took effect, is not sent; Cy gets only the answer "You resigned."."""
    start_all(t)
    rec = t.load()
    assert rec.game.to_move == "Ann"
    t.reply("Cy", "resign\n")
    t.run()
    assert [str(m["To"]) for m in t.sent()] == ["cy@example.net"]  # the question
    legal = str(rec.game.legal_actions("Ann")[0])
    t.reply("Ann", f"{legal}\n\nOn Tue, Dec 1, 2026 at 10:00 AM moderator wrote:\n> IT IS YOUR TURN\n")
    t.reply("Cy", "resign confirm\n")
    report = t.run()
    assert report.applied == 1, report.summary()
    assert t.load().resigned == ["Cy"]
    mails = to(t.sent(), "cy@example.net")
    assert [text_of(m).strip() for m in mails] == ["You resigned. Thank you for playing; you will get the final result."]
    # later moves: still nothing to Cy
    rec = t.load()
    who = rec.game.to_move
    assert who == "Bob"
    t.reply(who, f"{rec.game.legal_actions(who)[0]}\n")
    assert t.run().applied == 1
    assert to(t.sent(), "cy@example.net") == []


def test_eject_in_the_cycle_of_another_players_order_stops_the_status_mail(t):
    """The game master's "eject Cy" (their reply, in the cycle that applies Ann's
    order, after it) gives Cy's seat to the built-in player: Cy gets none of the
    cycle's status mails (no mail at all: "they get no more mail but the final
    result", gm_help.txt), while Bob gets his."""
    start_all(t)
    t.sent()
    rec = t.load()
    t.reply("Ann", f"{rec.game.legal_actions('Ann')[0]}\n")
    secret = rec.game_master["secret"]
    _gm_mail(t, secret, "eject Cy", "10:30", "gm.1")
    report = t.run()
    assert report.applied == 1, report.summary()
    assert t.load().resigned == ["Cy"] and t.load().player_by_name("Cy").bot
    mails = t.sent()
    assert to(mails, "cy@example.net") == []
    assert any("It is your turn." in text_of(m) or "IT IS YOUR TURN" in text_of(m) for m in to(mails, "bob@example.org"))


PGP_SIGNATURE = """-----BEGIN PGP SIGNATURE-----

iHUEARYKAB0WIQTm0hFvXQ3n3Jk2a5b8b8N8sWj2eAUCZ2xAbQAKCRC8b8N8sWj2
eIzuAP9a0Zz3rmA+f0lQ4qTAbcdEfGhIjKlMnOpQrStUvWxYzAEAyXwq7fYtVb0
=AbCd
-----END PGP SIGNATURE-----
"""


def test_pgp_clearsigned_order_is_read(t):
    """Mutt / Enigmail "inline PGP": the order inside an OpenPGP cleartext
    signature (armor header, dash-escaped signature separator, quoted history
    signed with it) is read and applied; it was refused as "no orders found"
    (the BEGIN line was taken for an "-----Original Message-----" separator)."""
    start_all(t)
    rec = t.load()
    order = str(rec.game.legal_actions("Ann")[0])
    t.reply("Ann", "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"
                   f"{order}\n\nOn Tue, Dec 01, 2026 at 09:05:00AM +0000, Union Pacific moderator wrote:\n"
                   "> IT IS YOUR TURN.\n> build WW BIL-BIS black; take stack\n\n- -- \nAnn, with a key\n"
                   + PGP_SIGNATURE)
    report = t.run()
    assert report.applied == 1 and report.refused == 0, report.summary()
    assert t.load().history[-1]["order"] == order
    # nothing left unread to complain about: no second answer to Ann beyond her status mail
    (ann,) = to(t.sent(), "ann@example.org")
    assert "WHAT HAPPENED" in text_of(ann)


def test_a_very_long_line_is_not_mailed_back_whole(t):
    """A 150,000-character line (a pasted blob, under max_size) under an illegal
    order: the refusal quotes the lines, the long one cut at 200 characters with
    "…"; the answer was over 300 kB (the line in the text and the HTML part)."""
    start_all(t)
    before = t.path.read_bytes()
    blob = "x" * 150_000
    t.reply("Ann", f"invest 5 BNL; discard black\n{blob}\n")
    report = t.run()
    assert report.refused == 1, report.summary()
    assert t.path.read_bytes() == before
    (reply,) = to(t.sent(), "ann@example.org")
    text = text_of(reply)
    assert f"You wrote:\n  > invest 5 BNL; discard black\n  > {'x' * 199}\u2026\n\nOrder not legal:" in text
    assert len(reply.as_bytes()) < 60_000


def test_an_order_after_resigning_is_not_invited_again(t):
    """Cy resigned, then sends an order (Czech Outlook style, quoted-printable):
    the answer says the moderator takes no more orders from Cy, and no longer
    ends with "Send a corrected order when ready." (there is none to send)."""
    start_all(t)
    t.reply("Cy", "resign\n")
    t.run()
    t.reply("Cy", "resign confirm\n")
    t.run()
    t.sent()
    before = t.path.read_bytes()
    t.reply("Cy", b"build KCC DEN-KCY white; take stack\r\n\r\nS pozdravem\r\nCy\r\n\r\n"
                  b"-----Original Message-----\r\nFrom: Union Pacific moderator\r\n", cte="quoted-printable")
    report = t.run()
    assert report.refused == 1, report.summary()
    assert t.path.read_bytes() == before
    (reply,) = to(t.sent(), "cy@example.net")
    assert text_of(reply) == (
        "Union Pacific, game ridge: you resigned\n\n"
        "You left this game (you resigned, or the game master gave your seat to the built-in player): "
        "the moderator takes no more orders from you.\n")


def test_pbem_gm_help_names_every_game_master_command():
    """``pbem gm --help`` named 5 of the 10 commands (no pause, resume, deadline,
    extend, eject), while the README and the guide list them all."""
    from click.testing import CliRunner

    import pbem
    from moderator.moderation.gm import GM_COMMANDS

    out = CliRunner().invoke(pbem.main, ["gm", "--help"]).output
    words = set(out.replace(",", " ").replace(";", " ").split())
    assert [c for c in GM_COMMANDS if c not in words] == []


def test_the_readme_mail_to_try_a_game_by_hand_is_applied(tmp_path, monkeypatch):
    """The README's example of a player's mail dropped into the inbox Maildir by
    hand (section "Trying a game by hand"), with the welcome mail's Message-ID
    filled in and the share Ann holds, is applied by ``pbem run``."""
    import re
    from pathlib import Path

    from click.testing import CliRunner

    import pbem

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    section = readme.split("### Trying a game by hand, without a mail server", 1)[1]
    example = re.search(r"```\n(From: Ann.*?)```", section, re.S).group(1)
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    out = runner.invoke(pbem.main, ["new", "ridge", "--player", "Ann=ann@example.org",
                                    "--player", "Bob=bob@example.org", "--seed", "7"])
    assert out.exit_code == 0, out.output
    welcome = next(m for m in (email.message_from_bytes(p.read_bytes(), policy=policy.default)
                               for p in Path("mail/outbox/new").iterdir()) if "ann@" in m["To"])
    assert "\n  start UP\n" in text_of(welcome)  # seed 7: Ann may start with UP, as the example does
    raw = example.replace("<MESSAGE-ID OF THE WELCOME MAIL TO ANN>", welcome["Message-ID"].strip())
    Path("mail/inbox/tmp/hand").write_text(raw.replace("\n", "\r\n"))
    Path("mail/inbox/tmp/hand").rename("mail/inbox/new/hand")
    out = runner.invoke(pbem.main, ["run", "--now", "2026-12-02T10:00:00+00:00"])
    assert out.exit_code == 0, out.output
    assert "1 order(s) applied" in out.output
    assert list(Path("mail/inbox/.processed/cur").iterdir()) or list(Path("mail/inbox/.processed/new").iterdir())


def test_status_mails_name_the_seats_of_the_built_in_player(t):
    """After Cy resigned, the built-in player moves for Cy at once; the status
    mails listed Cy like any player, so the others could not tell who plays the
    seat.  Now a line below the players table (text and HTML part) names it."""
    start_all(t)
    rec = t.load()
    ann_before = text_of(to(t.all, "ann@example.org")[-1])
    assert "built-in player" not in ann_before
    t.reply("Cy", "resign\n")
    t.run()
    t.reply("Cy", "resign confirm\n")
    t.run()
    t.sent()
    rec = t.load()
    t.reply("Ann", f"{rec.game.legal_actions('Ann')[0]}\n")
    assert t.run().applied == 1
    (ann,) = [m for m in to(t.sent(), "ann@example.org") if "WHAT HAPPENED" in text_of(m)]
    text = text_of(ann)
    players = text[text.index("PLAYERS (in turn order"):text.index("COMPANIES (value")]
    assert players.splitlines()[-2:] == ["  Played by the built-in player: Cy.", ""]
    html = ann.get_body(preferencelist=("html",)).get_content()
    assert '<p class="small">Played by the built-in player: Cy.</p>' in html


def test_pbem_replay_names_a_resignation_the_players(t):
    """``pbem replay`` listed Cy's own "resign" as "game master: ... cy@...: resign";
    it is the player's, the game master's commands keep their label."""
    from click.testing import CliRunner

    import pbem

    start_all(t)
    t.reply("Cy", "resign\n")
    t.run()
    t.reply("Cy", "resign confirm\n")
    t.run()
    t.mod.manage("ridge", "pause tea break", by="op@example.com")
    at = t.load().gm_log[0]["at"]
    cfg = t.config.games_dir.parent / "pbem.yaml"
    cfg.write_text(f"games_dir: {t.config.games_dir}\nspool_dir: {t.config.spool_dir}\n"
                   f"maildir: {{inbox: {t.config.maildir_inbox}, outbox: {t.config.maildir_outbox}}}\n")
    out = CliRunner().invoke(pbem.main, ["--config", str(cfg), "replay", "ridge"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[1] == f"  player: {at} cy@example.net: resign"
    assert lines[2].startswith("  game master: ") and lines[2].endswith(": pause (tea break)")


def test_a_mail_of_many_short_lines_is_refused_unread(t):
    """A 90 kB mail: a legal order, then 30,000 lines "2" (a pasted column of
    numbers).  Reading a turn from each run of lines from the top, longest first,
    parsed every run: the square of the lines (minutes of CPU for a 256 kB mail,
    every other game waiting).  The runs tried were then bounded
    (``MAX_TURN_LINES``); now a mail of more than ``MAX_ORDER_LINES`` (300)
    order lines is refused unread, with how many it had, and the game is
    unchanged (test_linecap.py: the 256 kB mail of "hi")."""
    import time

    start_all(t)
    rec = t.load()
    before = t.path.read_bytes()
    order = str(rec.game.legal_actions("Ann")[0])
    t.reply("Ann", order + "\n" + "2\n" * 30_000)
    cpu = time.process_time()
    report = t.run()
    cpu = time.process_time() - cpu
    assert report.refused == 1 and report.applied == 0, report.summary()
    assert t.path.read_bytes() == before
    (note,) = to(t.sent(), "ann@example.org")
    assert text_of(note).startswith(
        "Union Pacific, game ridge: too many lines\n\nYour mail has 30,001 lines of orders; the moderator "
        "reads at most 300, so it read none of them. Send your turn alone: one order per line, on top of "
        "the reply.\n")
    assert cpu < 5, cpu  # about 0.3 s; the square of the lines took about 35 s


def test_an_eject_after_the_last_move_keeps_the_final_result(t):
    """The game master ejects Cy in the cycle of the move that ends the game:
    the eject comes after the end and is refused (``gm_game_over``), and Cy
    still gets the final result (nothing is dropped once the game is over)."""
    import random

    start_all(t)
    rng = random.Random(3)
    while True:
        rec = t.load()
        who = rec.game.to_move
        action = rec.game.random_action(who, rng)
        after = rec.game.copy()
        after.push(who, action)
        t.reply(who, f"{action}\n")
        if after.phase == "over":
            break
        assert t.run(minutes=1).applied == 1
    t.sent()
    secret = rec.game_master["secret"]
    _gm_mail(t, secret, "eject Cy", "23:30", "gm.end")
    report = t.run()
    assert t.load().game.phase == "over" and not t.load().player_by_name("Cy").bot, report.summary()
    sent = t.sent()
    (answer,) = to(sent, OPERATOR)
    assert 'The game is over (the final dividend is paid): "eject" would change nothing now.' in \
        " ".join(text_of(answer).split())
    (final,) = to(sent, "cy@example.net")
    assert text_of(final).startswith("Union Pacific, game ridge: game over\n\nTHE GAME IS OVER.\n")
