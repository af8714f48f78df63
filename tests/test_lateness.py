"""Lateness is judged by when a mail reached the moderator's mailbox (issue 23).

Timelines through ``pbem new/run --now`` on the Maildir default (each mail
dropped into the inbox with its delivery time set: the file's modification
time) and through a real Dovecot (IMAP APPEND with an explicit INTERNALDATE):

- an order that arrived before its deadline is on time even when the cycle that
  reads it runs after the deadline (also when the inbox could not be read in
  the cycle at the deadline: the clock waits for the mails it could not read);
- one that arrived after it is taken with ``--grace`` covering it;
- without grace the built-in player moves for the player as of the deadline,
  and the late order gets an answer (when it arrived, the deadline, the move
  made, what the game waits for now), in the player's language;
- the history keeps each order's ``arrived``; the sender's ``Date`` header
  (years in the past or the future) plays no part.

Expected texts and times are written out by hand from the timeline; the
automatic move is checked against ``heuristic.choose`` on the replayed position
with the documented generator (``bot_rng``).
"""
from __future__ import annotations

import mailbox
import os
import random
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.config import Config, load_config
from moderator.mail.transport.maildir import MaildirInbox
from moderator.moderation.deadlines import bot_rng
from moderator.players.heuristic import choose
from moderator.rules.board import Board
from moderator.rules.engine import Game
from moderator.store.gamefile import GameRecord, GameStore
from test_deadlines import deliver
from outbox import unseen_mails

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
DUE = T0 + timedelta(hours=48)  # the first deadline: 2026-03-03 12:00 UTC
M = timedelta(minutes=1)
PLAYERS = (("Ann", "ann@example.org"), ("Bob", "bob@example.org"))
PAST = datetime(1999, 1, 1, 0, 0, tzinfo=timezone.utc)
FUTURE = datetime(2031, 6, 1, 0, 0, tzinfo=timezone.utc)


def iso(when: datetime) -> str:
    return when.isoformat(timespec="seconds")


class Table:
    """A game run with the command line (``pbem new/run --now``) in ``tmp_path``;
    ``deliver`` puts a mail into the inbox as it would arrive at a given time."""

    def __init__(self, tmp_path: Path, monkeypatch, *extra: str, config: Path | None = None,
                 deliver=None, sent=None):
        monkeypatch.chdir(tmp_path)
        self.tmp = tmp_path
        if config is None:
            config = tmp_path / "pbem.yaml"
            config.write_text(yaml.safe_dump({"operator": "op@example.com"}))
        self.args = ["--config", str(config)]
        self.config = load_config(str(config), passwords=False)
        self._deliver = deliver or self._maildir
        self._sent = sent or self._outbox
        self.seen: set[str] = set()
        r = self.cli("new", "ridge", "--seed", "7", "--deadline", "48h", "--now", iso(T0),
                     *[x for n, a in PLAYERS for x in ("--player", f"{n}={a}")], *extra)
        assert r.exit_code == 0, r.output
        self.sent()  # the welcomes

    def cli(self, *args: str):
        return CliRunner().invoke(pbem.main, [*self.args, *args], catch_exceptions=False)

    def run(self, at: datetime):
        r = self.cli("run", "--now", iso(at))
        assert r.exit_code == 0, r.output
        return r

    def load(self) -> GameRecord:
        return GameStore(self.config.games_dir).load("ridge")

    def order(self, name: str) -> str:
        """A legal order of ``name`` now, in the notation (one action per line)."""
        rec = self.load()
        return str(choose(rec.game, name, random.Random(11))).replace("; ", "\n")

    def mail(self, name: str, body: str, arrived: datetime, date: datetime | None = None) -> None:
        """``name`` (a seat) mails ``body`` from its address; it reaches the
        mailbox at ``arrived``; its ``Date`` header says ``date`` (default:
        ``arrived``)."""
        rec = self.load()
        msg = EmailMessage(policy=policy.default)
        msg["From"] = rec.player_by_name(name).address
        msg["To"] = self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:ridge:{rec.player_by_name(name).secret}] Union Pacific ridge"
        msg["Date"] = format_datetime(date or arrived)
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(body + "\n")
        self._deliver(msg.as_bytes(), arrived)

    def _maildir(self, raw: bytes, when: datetime) -> None:
        deliver(mailbox.Maildir(str(self.config.maildir_inbox), create=True), raw, when)

    def _outbox(self):
        box = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        return unseen_mails(box, self.seen)

    def sent(self):
        return self._sent()


def text(msg) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def to(mails, address):
    return [m for m in mails if str(m["To"]) == address]


def automatic_moves_checked(rec: GameRecord) -> list[dict]:
    """The history's automatic moves, each checked to be the built-in player's
    choice on the replayed position (``bot_rng``)."""
    game = Game.new(Board.default(), [p.name for p in rec.players], rec.game.seed, rec.game.ruleset,
                    rec.game.options)
    shadow = GameRecord(id=rec.id, game=game, players=rec.players, board_ref="default")
    found = []
    from moderator.rules.notation import parse_action

    for e in rec.history:
        if e.get("by") == "bot":
            assert str(choose(game, e["player"], bot_rng(shadow))) == e["order"]
            found.append(e)
        game.push(e["player"], parse_action(e["order"]))
    return found


# ------------------------------------------------------------------ Maildir
def test_an_order_that_arrived_before_the_deadline_is_on_time_when_read_later(tmp_path, monkeypatch):
    t = Table(tmp_path, monkeypatch)
    t.run(DUE - timedelta(hours=20))  # a cycle that finds nothing (and succeeds: no outage after it)
    ann, bob = t.order("Ann"), t.order("Bob")
    # Ann's Date header says 2031, Bob's 1999: neither counts
    t.mail("Ann", ann, DUE - 2 * M, date=FUTURE)
    t.mail("Bob", bob, DUE - M, date=PAST)
    t.run(DUE + 5 * M)  # the first cycle after the deadline reads them
    rec = t.load()
    assert [(h["player"], h.get("by"), h["received"], h["arrived"]) for h in rec.history] == [
        ("Ann", None, "2026-03-03T12:05:00+00:00", "2026-03-03T11:58:00+00:00"),
        ("Bob", None, "2026-03-03T12:05:00+00:00", "2026-03-03T11:59:00+00:00"),
    ]
    assert rec.player_by_name("Ann").missed == rec.player_by_name("Bob").missed == 0
    assert not [m for m in t.sent() if "automatic move" in text(m).partition("\n")[0]]


def test_the_clock_waits_for_mails_the_inbox_could_not_give(tmp_path, monkeypatch):
    t = Table(tmp_path, monkeypatch)
    t.run(DUE - timedelta(hours=20))  # the last cycle that read the whole inbox (less than a day ago: no outage)
    t.mail("Ann", t.order("Ann"), DUE - 10 * M)
    t.mail("Bob", t.order("Bob"), DUE - 9 * M)
    inbox = Path(t.config.maildir_inbox)
    inbox.rename(tmp_path / "away")
    inbox.write_text("not a Maildir")  # the inbox cannot be opened in the cycle after the deadline
    r = CliRunner().invoke(pbem.main, [*t.args, "run", "--now", iso(DUE + 5 * M)], catch_exceptions=False)
    assert "cannot open the inbox" in r.output
    rec = t.load()
    assert rec.history == [] and rec.player_by_name("Ann").missed == 0  # no move made for them
    inbox.unlink()
    (tmp_path / "away").rename(inbox)
    t.run(DUE + 10 * M)
    rec = t.load()
    assert [(h["player"], h.get("by"), h["arrived"]) for h in rec.history] == [
        ("Ann", None, "2026-03-03T11:50:00+00:00"), ("Bob", None, "2026-03-03T11:51:00+00:00")]


def test_a_late_order_within_the_grace_is_taken(tmp_path, monkeypatch):
    t = Table(tmp_path, monkeypatch, "--grace", "10m")
    assert t.load().settings["grace"] == 600
    t.mail("Bob", t.order("Bob"), DUE - 3 * M)
    t.run(DUE + 5 * M)  # within the grace: no move for Ann yet
    assert [h["player"] for h in t.load().history] == ["Bob"]
    t.mail("Ann", t.order("Ann"), DUE + 8 * M, date=PAST)
    t.run(DUE + 12 * M)  # read after the grace ended: it arrived within it
    rec = t.load()
    assert [(h["player"], h.get("by"), h["arrived"]) for h in rec.history] == [
        ("Bob", None, "2026-03-03T11:57:00+00:00"), ("Ann", None, "2026-03-03T12:08:00+00:00")]
    assert rec.player_by_name("Ann").missed == 0


def test_grace_counts_for_the_clock_too(tmp_path, monkeypatch):
    t = Table(tmp_path, monkeypatch, "--grace", "10m")
    t.mail("Bob", t.order("Bob"), DUE - 3 * M)
    t.run(DUE + 9 * M)
    assert t.load().player_by_name("Ann").missed == 0
    t.run(DUE + 10 * M)  # the grace is over: the built-in player moves for Ann
    rec = t.load()
    assert [(h["player"], h.get("by"), h["received"], h.get("due")) for h in rec.history] == [
        ("Bob", None, "2026-03-03T12:09:00+00:00", None),
        ("Ann", "bot", "2026-03-03T12:10:00+00:00", "2026-03-03T12:00:00+00:00")]
    assert rec.player_by_name("Ann").missed == 1


def test_grace_is_a_duration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(pbem.main, ["new", "ridge", "--grace", "soon", "--player", "Ann=ann@example.org",
                                       "--player", "Bob=bob@example.org"])
    assert r.exit_code == 2
    assert "'soon' is not a duration: write minutes, hours or days, e.g. 90m, 48h, 3d, or 0" in r.output
    assert not (tmp_path / "games" / "ridge.yaml").exists()


LATE_EN = ("Your order reached the moderator's mailbox at 2026-03-03 12:02:00 UTC, after your deadline of "
           "2026-03-03 12:00:00 UTC. The built-in player had moved for you at 2026-03-03 12:00:00 UTC: {order}. "
           "Your order was not applied. The game now waits for your next move (the position is below): "
           "send your order for it.")
LATE_ES = ("Tu orden llegó al buzón del moderador el mar, 3 mar 2026, 12:02:00 UTC, después de que venciera tu "
           "plazo, el mar, 3 mar 2026, 12:00:00 UTC. El jugador automático ya había jugado por ti el mar, 3 mar 2026, "
           "12:00:00 UTC: {order}. Tu orden no se aplicó. La partida espera ahora tu próxima jugada (la "
           "posición está abajo): envía tu orden para ella.")


@pytest.mark.parametrize("language,expected,title", [("en", LATE_EN, "order too late"),
                                                     ("es", LATE_ES, "orden demasiado tarde")])
def test_a_late_order_without_grace_is_answered(tmp_path, monkeypatch, language, expected, title):
    t = Table(tmp_path, monkeypatch, "--player-language", f"Ann={language}")
    ann, bob = t.order("Ann"), t.order("Bob")
    t.mail("Bob", bob, DUE - 30 * M, date=FUTURE)
    t.mail("Ann", ann, DUE + 2 * M, date=PAST)  # its Date says 1999: it arrived two minutes late
    t.run(DUE + 5 * M)
    rec = t.load()
    assert [(h["player"], h.get("by"), h["received"], h.get("due"), h.get("arrived")) for h in rec.history] == [
        ("Bob", None, "2026-03-03T12:05:00+00:00", None, "2026-03-03T11:30:00+00:00"),
        # moved as of the deadline, before Ann's mail was judged
        ("Ann", "bot", "2026-03-03T12:00:00+00:00", "2026-03-03T12:00:00+00:00", None),
    ]
    [auto] = automatic_moves_checked(rec)
    assert rec.player_by_name("Ann").missed == 1
    assert rec.game.phase == "play"
    assert rec.game.waiting_for() == ["Ann"]  # Ann starts the play phase (seed 7)
    [answer] = [m for m in to(t.sent(), "ann@example.org") if title in text(m).partition("\n")[0]]
    shown = auto["order"] if language == "en" else None
    body = text(answer)
    if shown is None:  # the order as Ann's language writes it: the same text as in the automatic-move mail
        from moderator import i18n
        from moderator.render.orders import localize

        with i18n.speaking(language):
            shown = localize(auto["order"])
    assert expected.format(order=shown) in " ".join(body.split())
    assert answer["In-Reply-To"]  # answers Ann's mail, in her thread
    # the game file keeps no order of Ann's mail
    assert all(h.get("message_id") is None for h in rec.history if h["player"] == "Ann")


LATE_CS_PRAGUE = ("Váš příkaz dorazil do schránky moderátora út 3. 3. 2026 12:02:00 UTC (út 3. 3. 2026 13:02:00 SEČ), "
                  "až po vašem termínu út 3. 3. 2026 12:00:00 UTC (út 3. 3. 2026 13:00:00 SEČ). Automatický hráč "
                  "za vás už táhl út 3. 3. 2026 12:00:00 UTC (út 3. 3. 2026 13:00:00 SEČ): {order}. Váš příkaz "
                  "nebyl proveden. Hra teď čeká na váš další tah (pozice je níže): pošlete na něj svůj příkaz.")


def test_the_late_answer_gives_the_times_in_the_players_zone_too(tmp_path, monkeypatch):
    from moderator import i18n
    from moderator.render.orders import localize

    t = Table(tmp_path, monkeypatch, "--player-language", "Ann=cs")
    t.mail("Ann", "timezone Europe/Prague", T0 + timedelta(hours=1))
    t.run(T0 + timedelta(hours=2))
    assert t.load().player_by_name("Ann").timezone == "Europe/Prague"
    t.run(DUE - timedelta(hours=20))  # the reminder; less than a day before the next cycle (no outage)
    t.mail("Bob", t.order("Bob"), DUE - 30 * M)
    t.mail("Ann", t.order("Ann"), DUE + 2 * M)
    t.sent()
    t.run(DUE + 5 * M)
    rec = t.load()
    auto = rec.history[-1]
    assert (auto["player"], auto["by"], auto["due"]) == ("Ann", "bot", "2026-03-03T12:00:00+00:00")
    [answer] = [m for m in to(t.sent(), "ann@example.org") if "příkaz přišel pozdě" in text(m).partition("\n")[0]]
    with i18n.speaking("cs"):
        shown = localize(auto["order"])
    assert LATE_CS_PRAGUE.format(order=shown) in " ".join(text(answer).split())


def test_a_late_order_under_the_wait_policy_is_taken_for_the_wait_that_follows(tmp_path, monkeypatch):
    """With ``--on-missed wait`` no move is made: at the deadline the miss is
    counted, the game master told, and the wait starts again from the deadline;
    an order that arrived after it is the move that wait asks for."""
    t = Table(tmp_path, monkeypatch, "--on-missed", "wait")
    t.mail("Bob", t.order("Bob"), DUE - 30 * M)
    t.mail("Ann", t.order("Ann"), DUE + 2 * M)
    t.run(DUE + 5 * M)
    rec = t.load()
    assert [(h["player"], h.get("by"), h["arrived"]) for h in rec.history] == [
        ("Bob", None, "2026-03-03T11:30:00+00:00"), ("Ann", None, "2026-03-03T12:02:00+00:00")]
    assert rec.player_by_name("Ann").missed == 0  # her own move ends the run of misses
    told = [m for m in to(t.sent(), "op@example.com") if "missed" in str(m["Subject"])]
    assert len(told) == 1 and "Ann" in str(told[0]["Subject"])
    assert "2026-03-03 12:00 UTC" in text(told[0])


def test_a_late_order_for_the_next_move_is_judged_as_that_move(tmp_path, monkeypatch):
    """Ann missed; the built-in player moved; once the game waits for her again,
    an order that arrives after that wait started is taken as on time."""
    t = Table(tmp_path, monkeypatch)
    t.mail("Bob", t.order("Bob"), DUE - 30 * M)
    t.run(DUE + 5 * M)  # Ann's initial investment by the built-in player
    rec = t.load()
    assert rec.history[-1]["by"] == "bot"
    first = rec.game.waiting_for()[0]
    t.mail(first, t.order(first), DUE + 20 * M)
    t.run(DUE + 30 * M)
    rec = t.load()
    assert rec.history[-1]["player"] == first and rec.history[-1].get("by") is None
    assert rec.history[-1]["arrived"] == "2026-03-03T12:20:00+00:00"


def test_the_automatic_move_of_a_seat_s_previous_player_makes_no_order_late(tmp_path, monkeypatch):
    """Bob missed; the game master gave his seat to Dora; an order of Dora's out
    of turn is refused as any such order, not as late (the miss was Bob's)."""
    t = Table(tmp_path, monkeypatch)
    t.mail("Ann", t.order("Ann"), DUE - 30 * M)
    t.run(DUE + 5 * M)  # Bob's initial investment by the built-in player
    assert t.load().history[-1]["player"] == "Bob" and t.load().history[-1]["by"] == "bot"
    r = t.cli("gm", "ridge", "replace", "Bob", "Dora=dora@example.org", "--now", iso(DUE + 10 * M))
    assert r.exit_code == 0, r.output
    t.sent()
    t.mail("Bob", "start KCC", DUE + 20 * M)  # from Dora, out of turn
    t.run(DUE + 25 * M)
    titles = [text(m).partition("\n")[0] for m in to(t.sent(), "dora@example.org")]
    assert titles == ["Union Pacific, game ridge: order refused"]


def test_transport_arrival_maildir(tmp_path):
    """A Maildir mail's arrival is the delivery time of its unique name (kept by a
    copy that rewrites the file's time, e.g. a backup restored); the file's
    modification time only for a name not in the SECONDS.UNIQUE.HOST form."""
    box = mailbox.Maildir(str(tmp_path / "in"), create=True)
    raw = b"From: a@example.org\nDate: Fri, 1 Jan 1999 00:00:00 +0000\n\nhi\n"
    when = datetime(2026, 3, 3, 11, 58, 7, 400000, tzinfo=timezone.utc)
    named = deliver(box, raw, when)
    later = (when + timedelta(days=30)).timestamp()
    os.utime(Path(box._path) / "new" / named, (later, later))  # restored from a backup a month later
    odd = Path(box._path) / "cur" / "restored-mail:2,S"  # a name of no delivery time
    odd.write_bytes(raw)
    os.utime(odd, (when.timestamp() + 60, when.timestamp() + 60))
    inbox = MaildirInbox(tmp_path / "in")
    expected = {named: datetime(2026, 3, 3, 11, 58, 7, tzinfo=timezone.utc),
                "restored-mail": datetime(2026, 3, 3, 11, 59, 7, tzinfo=timezone.utc)}
    assert {m.key: m.arrived for m in inbox.stream()} == expected
    assert {m.key: m.arrived for m in inbox.fetch()} == expected


# ------------------------------------------------------------------ Dovecot
@pytest.fixture(params=["dovecot", "courier"])
def server(request):
    return request.getfixturevalue(request.param)


def test_transport_arrival_imap(server):
    from moderator.mail.transport.imap import ImapInbox

    when = datetime(2026, 3, 3, 11, 58, 7, tzinfo=timezone(timedelta(hours=-5)))
    server.append(b"From: a@example.org\r\nDate: Fri, 1 Jan 1999 00:00:00 +0000\r\n\r\nhi\r\n", msg_time=when)
    with ImapInbox(**server.inbox_kwargs()) as inbox:
        [m] = list(inbox.stream())
        assert m.arrived == datetime(2026, 3, 3, 16, 58, 7, tzinfo=timezone.utc)
        [m] = inbox.fetch()
        assert m.arrived == datetime(2026, 3, 3, 16, 58, 7, tzinfo=timezone.utc)


def _dovecot_table(dovecot, smtp_sink, tmp_path, monkeypatch, *extra):
    monkeypatch.setenv("LATE_IMAP_PASSWORD", dovecot.password)
    (tmp_path / "games").mkdir()
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
        "operator": "op@example.com", "games_dir": "games",
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "LATE_IMAP_PASSWORD", "timeout": 10},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none", "timeout": 10},
    }))
    seen = [0]

    def sent():
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        return [m.message for m in new]

    # the simulated times are in the past: Dovecot takes an INTERNALDATE up to now
    return Table(tmp_path, monkeypatch, *extra, config=cfg,
                 deliver=lambda raw, when: dovecot.append(raw, msg_time=when), sent=sent)


def test_late_and_on_time_through_dovecot(dovecot, smtp_sink, tmp_path, monkeypatch):
    t = _dovecot_table(dovecot, smtp_sink, tmp_path, monkeypatch)
    t.mail("Bob", t.order("Bob"), DUE - M, date=FUTURE)   # on time, read after the deadline
    t.mail("Ann", t.order("Ann"), DUE + 2 * M, date=PAST)  # two minutes late
    t.run(DUE + 5 * M)
    rec = t.load()
    assert [(h["player"], h.get("by"), h["received"], h.get("arrived"), h.get("due")) for h in rec.history] == [
        ("Bob", None, "2026-03-03T12:05:00+00:00", "2026-03-03T11:59:00+00:00", None),
        ("Ann", "bot", "2026-03-03T12:00:00+00:00", None, "2026-03-03T12:00:00+00:00")]
    [auto] = automatic_moves_checked(rec)
    [answer] = [m for m in to(t.sent(), "ann@example.org") if "order too late" in text(m).partition("\n")[0]]
    assert LATE_EN.format(order=auto["order"]) in " ".join(text(answer).split())
    assert dovecot.messages() == []  # both handled and moved
    r = t.cli("replay", "ridge")  # the new keys change nothing of a replay
    assert r.exit_code == 0 and r.output == "Game ridge: 2 orders replayed; the state matches the file.\n"


def test_late_within_the_grace_through_dovecot(dovecot, smtp_sink, tmp_path, monkeypatch):
    t = _dovecot_table(dovecot, smtp_sink, tmp_path, monkeypatch, "--grace", "1h")
    t.mail("Bob", t.order("Bob"), DUE - M)
    t.mail("Ann", t.order("Ann"), DUE + 59 * M, date=PAST)
    t.run(DUE + 65 * M)
    rec = t.load()
    assert [(h["player"], h.get("by"), h["arrived"]) for h in rec.history] == [
        ("Bob", None, "2026-03-03T11:59:00+00:00"), ("Ann", None, "2026-03-03T12:59:00+00:00")]
    assert not [m for m in t.sent() if "order too late" in text(m).partition("\n")[0]]


def test_only_an_order_written_for_the_missed_move_is_late(tmp_path, monkeypatch):
    """Bob missed his initial investment and the built-in player made it; the
    play phase waits for Ann.  A mistyped command of Bob's (``statsu``) is no
    order: refused as the command it is close to; a turn's action out of turn
    was not written for the missed initial investment: refused as out of turn;
    only an initial investment of his is answered as too late (found by a new
    user's check: every mail of Bob's was answered 'order too late')."""
    t = Table(tmp_path, monkeypatch)
    t.mail("Ann", t.order("Ann"), DUE - 30 * M)
    t.run(DUE + 5 * M)  # Bob's initial investment by the built-in player
    rec = t.load()
    assert (rec.history[-1]["player"], rec.history[-1]["by"]) == ("Bob", "bot")
    assert rec.game.waiting_for() == ["Ann"]
    t.sent()
    heads = {}
    turn = t.order("Ann")  # a whole turn's action, legal for the player on move
    for n, body in enumerate(("statsu", turn, "start KCC")):
        t.mail("Bob", body, DUE + (20 + n) * M)
        t.run(DUE + (25 + n) * M)
        [answer] = to(t.sent(), "bob@example.org")
        heads[body] = (text(answer).partition("\n")[0], " ".join(text(answer).split()))
    assert heads["statsu"][0] == "Union Pacific, game ridge: order refused"
    assert "did you mean 'status'?" in heads["statsu"][1]
    assert heads[turn][0] == "Union Pacific, game ridge: order refused"
    assert "not your turn" in heads[turn][1].lower()
    assert heads["start KCC"][0] == "Union Pacific, game ridge: order too late"
    assert t.load().history == rec.history  # nothing applied


def test_an_arrival_before_the_last_cycle_counts_as_that_cycle(tmp_path, monkeypatch):
    """A mail whose store time is older than the last successful cycle (a file
    copied into the Maildir by hand, as the README's by-hand game does; an IMAP
    APPEND with an old date) was not there when that cycle read the inbox: it
    arrived after it.  So the order for the player's move after an automatic one
    is not judged late for the missed move (a new user's check: "arrived 2 Dec
    2026 after your deadline of 8 Jan 2027")."""
    t = Table(tmp_path, monkeypatch)
    for name, _ in PLAYERS:
        t.mail(name, t.order(name), T0 + 60 * M)
    t.run(T0 + 2 * 60 * M)  # both initial investments: the first turn's wait starts
    rec = t.load()
    (first,) = rec.game.waiting_for()
    due = T0 + 2 * 60 * M + timedelta(hours=48)
    for hours in (20, 40):  # cycles less than a day apart (a longer gap is an outage)
        t.run(T0 + timedelta(hours=hours))
    t.run(due + 5 * M)  # the first player missed: the built-in player moved for them
    rec = t.load()
    assert [(h["player"], h.get("by")) for h in rec.history[2:]] == [(first, "bot")], rec.history
    (other,) = rec.game.waiting_for()
    t.mail(other, t.order(other), due + 10 * M)
    t.run(due + 15 * M)  # the other player's move: the first player's turn again
    assert t.load().game.waiting_for() == [first]
    t.sent()
    # their order, dropped in with the file time of a week before
    t.mail(first, t.order(first), T0 - timedelta(days=7))
    t.run(due + 30 * M)
    rec = t.load()
    assert rec.history[-1]["player"] == first and rec.history[-1].get("by") is None
    assert rec.history[-1]["arrived"] == (due + 15 * M).isoformat()  # the last cycle's time
    assert not any("too late" in text(m) for m in t.sent())
