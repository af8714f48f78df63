"""Sign-up by mail on local Maildirs, the clock set per cycle (as ``pbem run
--now``): `pbem open`, 'games', 'join', confirmation by reply, name refusals,
the waiting list, a freed seat offered and lapsing, 'leave', the start at a
date or when full, the expiry, the rate limit, and the game file's record of
who joined when."""
from __future__ import annotations

import mailbox
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid

import pytest
from click.testing import CliRunner

import pbem
from moderator.config import Config
from moderator.mail.threads import thread_token
from moderator.moderation import signup
from moderator.moderation.cycle import Moderator
from moderator.store.bookkeeping import SCHEMA_VERSION, Bookkeeping
from moderator.store.gamefile import GameStore
from outbox import unseen_mails
from test_deadlines import deliver

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
D = timedelta(days=1)


def setup_of(**changes):
    base = {"seats": [2, 3], "starts": "full", "invite": [], "seat_order": "joined", "expire": 30 * 86400,
            "substitutes": "auto", "seed": 7, "ruleset": "first-edition", "options": {}, "board": None,
            "settings": {"deadline": 72 * 3600, "on_missed": "bot", "abandon_after": 3, "language": "en",
                         "grace": 0}, "gm": "gm@example.org", "observers": []}
    return {**base, **changes}


class Lobby:
    """A moderator on Maildirs with open games; the test sets ``now``."""

    def __init__(self, tmp_path):
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                             maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool",
                             operator="op@example.org")
        self.config.games_dir.mkdir(parents=True)
        (tmp_path / "mail").mkdir()
        self.now = T0
        self.mod = Moderator(self.config, clock=lambda: self.now)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()

    def open(self, gid="ridge", **changes):
        return signup.open_game(self.mod.bk, self.mod.store, gid, setup_of(**changes), self.now)

    def send(self, sender, body, reply_to=None, name=None, subject="hello"):
        msg = EmailMessage(policy=policy.default)
        msg["From"] = f"{name} <{sender}>" if name else sender
        msg["To"] = self.config.moderator_address
        msg["Subject"] = ("Re: " + str(reply_to["Subject"])) if reply_to is not None else subject
        msg["Message-ID"] = make_msgid(domain="example.net")
        if reply_to is not None:
            msg["In-Reply-To"] = reply_to["Message-ID"]
            msg["References"] = reply_to["Message-ID"]
        msg.set_content(body + "\n")
        deliver(self.inbox, msg.as_bytes(), self.now)

    def cycle(self):
        report = self.mod.run_cycle()
        assert report.ok, report.errors
        return [m for m in unseen_mails(self.outbox, self.seen)]

    def rows(self, gid="ridge"):
        return [(r["name"], r["address"], r["state"]) for r in self.mod.bk.signups(gid)]


def body(msg):
    return msg.get_body(preferencelist=("plain",)).get_content()


def to(msg):
    return msg["To"].addresses[0].addr_spec


def join_and_confirm(lobby, address, line, name=None):
    lobby.send(address, line, name=name)
    (conf,) = lobby.cycle()
    assert to(conf) == address and "reply to this mail with the word 'confirm'" in body(conf)
    lobby.send(address, "confirm", reply_to=conf)
    return lobby.cycle()


def test_the_schema_has_the_registry(tmp_path):
    with Bookkeeping(tmp_path / "pbem.sqlite3") as bk:
        assert bk.schema_version == SCHEMA_VERSION
        assert bk.people() == []
        bk.register_person("Ann@Example.org", "Ann", T0, "es")
        assert bk.person("ann@example.org")["name"] == "Ann"
        assert bk.person("ann@example.org")["language"] == "es"


def test_read_request():
    R = signup.Request
    assert signup.read_request(["games"]) == R("games")
    assert signup.read_request(["Hi,", "join ridge as Ann Smith"], ["greeting", "text"]) == \
        R("join", "ridge", "Ann Smith")
    assert signup.read_request(["join ridge"]) == R("join", "ridge", None)
    assert signup.read_request(["Join Ridge Ann"]) == R("join", "Ridge", "Ann")
    assert signup.read_request(["unirse ridge como Ana"]) == R("join", "ridge", "Ana", "es")
    assert signup.read_request(["leave ridge"]) == R("leave", "ridge")
    assert signup.read_request(["Confirm."]) == R("confirm")
    assert signup.read_request(["bestätigen"]) == R("confirm", language="de")
    assert signup.read_request(["build DM a1"]) is None
    assert signup.read_request([]) is None


def test_what_confirms():
    for yes in ("confirm", "Confirm.", "I confirm", "Yes, please", "yes!", "Sí, confirmo", "Ja, bestätigen",
                "ano", "确认"):
        assert signup.confirms(yes), yes
    for no in ("no, not me", "I did not ask for this", "don't confirm", "nein", "who is this?", "不 确认"):
        assert not signup.confirms(no), no


def test_names_refused_with_a_suggestion():
    assert signup.check_name("Ann", ["ann"]) == "name_taken"
    assert signup.suggest_name("Ann", ["ann"]) == "Ann 2"
    assert signup.check_name("x" * 41, []) == "name_long"
    assert signup.suggest_name("x" * 41, []) == "x" * 40
    assert signup.check_name("A\x07nn", []) == "name_control"
    assert signup.suggest_name("A\x07nn", []) == "Ann"
    assert signup.check_name("ann@example.org", []) == "name_address"
    assert signup.check_name("Ánn", ["ann"]) == "name_taken"  # folded, as the engine compares
    assert signup.check_name("Bob", ["ann"]) is None
    assert signup.parse_seats("3-5") == (3, 5) and signup.parse_seats("4") == (4, 4)
    for bad in ("1-3", "3-7", "5-3", "x"):
        with pytest.raises(ValueError):
            signup.parse_seats(bad)


def test_fill_start_and_the_game_file(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open(seats=[2, 3])
    lobby.send("zed@example.com", "games")
    (listing,) = lobby.cycle()
    assert "ridge" in body(listing) and "Seats: 0 of 3 taken, 3 free (at least 2 to play)" in body(listing)
    assert "join ridge as YOUR NAME" in body(listing)
    (seated,) = join_and_confirm(lobby, "ann@example.org", "join ridge as Ann")
    assert "You have a seat in game ridge as Ann: 1 of 3 seats are taken." in body(seated)
    # a name taken, with a suggestion; the game unchanged
    lobby.send("bob@example.org", "join ridge as ANN")
    (no,) = lobby.cycle()
    assert "The name 'ANN' is taken in game ridge" in body(no) and "join ridge as ANN 2" in body(no)
    assert [r[0] for r in lobby.rows()] == ["Ann"]
    lobby.now += H
    (seated,) = join_and_confirm(lobby, "bob@example.org", "join ridge", name="Bob Brown")
    assert "as Bob Brown: 2 of 3" in body(seated)
    lobby.now += H
    mails = join_and_confirm(lobby, "cy@example.net", "join ridge as Cy")
    # the third seat starts the game: Cy's answer and the three welcomes
    assert len(mails) == 4
    assert to(mails[0]) == "cy@example.net" and "as Cy: 3 of 3 seats are taken" in body(mails[0])
    data = GameStore(lobby.config.games_dir).read_data("ridge")
    # everyone's welcome, in its thread, with their own secret and token, as `pbem new` sends it
    for p, m in zip(data["players"], mails[1:]):
        assert to(m) == p["address"] and p["secret"] in body(m)
        assert thread_token("ridge", p["secret"]) in m["Message-ID"]
        assert data["threads"][p["name"]] == m["Message-ID"]
    assert [(p["name"], p["address"], p.get("joined")) for p in data["players"]] == [
        ("Ann", "ann@example.org", "2026-12-01T12:00:00+00:00"),
        ("Bob Brown", "bob@example.org", "2026-12-01T13:00:00+00:00"),
        ("Cy", "cy@example.net", "2026-12-01T14:00:00+00:00")]
    assert data["signup"] == {"seats": [2, 3], "starts": "full", "invite": 0, "seat_order": "joined",
                              "expire": 30 * 86400, "substitutes": "auto", "opened": "2026-12-01T12:00:00+00:00",
                              "started": "2026-12-01T14:00:00+00:00"}
    assert data["seed"] == 7
    assert lobby.mod.bk.open_game("ridge")["state"] == "started"
    assert lobby.mod.bk.person("bob@example.org")["games"] == ["ridge"]
    # the started game loads and replays like any other
    GameStore(lobby.config.games_dir).load("ridge", check=True)
    # no mail to a player names another's address
    for m in mails:
        others = {"ann@example.org", "bob@example.org", "cy@example.net"} - {to(m)}
        assert not any(o in m.as_string() for o in others)


def test_waiting_list_leave_offer_and_lapse(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open(seats=[2, 2], starts=(T0 + 10 * D).isoformat())
    join_and_confirm(lobby, "ann@example.org", "join ridge as Ann")
    join_and_confirm(lobby, "bob@example.org", "join ridge as Bob")
    (wait,) = join_and_confirm(lobby, "cy@example.net", "join ridge as Cy")
    assert "Game ridge is full. You are on its waiting list as Cy, in place 1." in body(wait)
    (wait,) = join_and_confirm(lobby, "dee@example.net", "join ridge as Dee")
    assert "in place 2" in body(wait)
    # Bob leaves: confirmed by reply; the seat is offered to Cy
    lobby.send("bob@example.org", "leave ridge")
    (conf,) = lobby.cycle()
    assert "To leave, reply to this mail" in body(conf)
    lobby.send("bob@example.org", "confirm", reply_to=conf)
    left, offer = lobby.cycle()
    assert to(left) == "bob@example.org" and "You left the game ridge" in body(left)
    assert to(offer) == "cy@example.net" and "within 24 hours" in body(offer)
    # Cy lets the day pass: the offer goes to Dee
    lobby.now += D
    lapsed, offer2 = lobby.cycle()
    assert to(lapsed) == "cy@example.net" and "was not confirmed in time" in body(lapsed)
    # titled as what happened (the game is not closed: the seat went to the next in line)
    assert str(lapsed["Subject"]) == "Union Pacific ridge: the seat's offer lapsed"
    assert to(offer2) == "dee@example.net"
    lobby.send("dee@example.net", "yes", reply_to=offer2)
    (seated,) = lobby.cycle()
    assert "You have a seat in game ridge as Dee: 2 of 2 seats are taken." in body(seated)
    assert lobby.rows() == [("Ann", "ann@example.org", "seated"), ("Bob", "bob@example.org", "left"),
                            ("Cy", "cy@example.net", "lapsed"), ("Dee", "dee@example.net", "seated")]
    # the start date: the game starts with Ann and Dee
    lobby.now = T0 + 10 * D
    mails = lobby.cycle()
    assert sorted(to(m) for m in mails) == ["ann@example.org", "dee@example.net"]
    data = GameStore(lobby.config.games_dir).read_data("ridge")
    assert [p["name"] for p in data["players"]] == ["Ann", "Dee"]


def test_start_date_short_of_seats_asks_the_gm_then_expires(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open(seats=[3, 4], starts=(T0 + 2 * D).isoformat(), expire=5 * 86400)
    join_and_confirm(lobby, "ann@example.org", "join ridge as Ann")
    lobby.now = T0 + 2 * D
    (ask,) = lobby.cycle()
    assert to(ask) == "gm@example.org"
    assert "it has only 1 of the 3 players it needs at least" in body(ask)
    assert "pbem signup extend ridge" in body(ask)
    assert lobby.mod.bk.open_game("ridge")["state"] == "extend"
    lobby.now = T0 + 5 * D
    mails = lobby.cycle()
    assert sorted(to(m) for m in mails) == ["ann@example.org", "gm@example.org"]
    assert all("did not start in time and is closed" in body(m) for m in mails)
    assert lobby.mod.bk.open_game("ridge")["state"] == "expired"
    assert not GameStore(lobby.config.games_dir).exists("ridge")
    lobby.send("bob@example.org", "join ridge")
    (no,) = lobby.cycle()
    assert "No game 'ridge' is open for sign-up." in body(no)


def test_the_game_master_answers_extend_or_cancel_by_mail(tmp_path):
    assert signup.read_extend("extend full") == ("extend", "full", None)
    assert signup.read_extend("Extend 2026-12-20T18:00 expire 14d.") == ("extend", "2026-12-20T18:00", 14 * 86400)
    assert signup.read_extend("extend expire 3d") == ("extend", None, 3 * 86400)
    assert signup.read_extend("cancel") == ("cancel", None, None)
    for bad in ("extend", "extend soon", "extend full please", "cancel it now", "yes"):
        with pytest.raises(ValueError):
            signup.read_extend(bad)
    lobby = Lobby(tmp_path)
    lobby.open(seats=[3, 4], starts=(T0 + 2 * D).isoformat(), expire=5 * 86400)
    join_and_confirm(lobby, "ann@example.org", "join ridge as Ann")
    lobby.now = T0 + 2 * D
    (ask,) = lobby.cycle()
    assert "Or reply to this mail with 'extend DATE'" in body(ask)
    # a reply from another address is no answer of the game master's; a bad one is refused
    lobby.send("mallory@example.com", "cancel", reply_to=ask)
    lobby.send("gm@example.org", "extend next week", reply_to=ask)
    forged, refused = lobby.cycle()
    assert to(forged) == "mallory@example.com" and "Nothing of game ridge waits" in body(forged)
    assert to(refused) == "gm@example.org"
    assert "Nothing was changed in game ridge: 'next' is no date" in body(refused)
    assert lobby.mod.bk.open_game("ridge")["state"] == "extend"
    # extend full, closing 10 days from now
    lobby.now = T0 + 2 * D + H
    lobby.send("gm@example.org", "extend full expire 10d", reply_to=ask)
    (done,) = lobby.cycle()
    og = lobby.mod.bk.open_game("ridge")
    assert og["state"] == "open" and og["setup"]["starts"] == "full"
    assert og["expires"] == T0 + 12 * D + H
    assert "Game ridge takes sign-ups again: it starts when all its seats are taken, and closes unstarted at " \
        "2026-12-13 13:00 UTC." in body(done)
    # later the game master cancels it by the same thread: Ann and the game master are told
    lobby.now = T0 + 4 * D
    lobby.send("gm@example.org", "cancel", reply_to=ask)
    mails = lobby.cycle()
    assert sorted(to(m) for m in mails) == ["ann@example.org", "gm@example.org"]
    assert all("was cancelled by its game master" in body(m) for m in mails)
    assert lobby.mod.bk.open_game("ridge")["state"] == "cancelled"


def test_forged_confirmation_and_invitations(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open(invite=["ann@example.org", "bob@example.org"])
    lobby.send("mallory@example.com", "join ridge")
    (no,) = lobby.cycle()
    assert "by invitation only" in body(no)
    lobby.send("ann@example.org", "join ridge as Ann")
    (conf,) = lobby.cycle()
    # Mallory got hold of the confirmation and replies from her own address
    lobby.send("mallory@example.com", "confirm", reply_to=conf)
    (no,) = lobby.cycle()
    assert to(no) == "mallory@example.com" and "Nothing of game ridge waits for a confirmation" in body(no)
    assert lobby.rows() == [("Ann", "ann@example.org", "asked")]
    # the confirmation holds nothing but the confirmation: no quote of the join mail
    assert "join ridge" not in body(conf)


def test_an_invitation_is_accepted_by_replying_yes(tmp_path):
    lobby = Lobby(tmp_path)
    og = lobby.open(invite=["ann@example.org"])
    with lobby.mod.bk.transaction():
        assert signup.invite(lobby.mod._post(), og) == 1
    lobby.mod._flush_now("the invitations")
    (invitation,) = unseen_mails(lobby.outbox, lobby.seen)
    assert "reply to this mail with 'yes'" in body(invitation)
    lobby.send("ann@example.org", "no thanks, not now", reply_to=invitation, name="Ann Lee")
    (no,) = lobby.cycle()
    assert lobby.rows() == []
    lobby.send("ann@example.org", "yes", reply_to=invitation, name="Ann Lee")
    (conf,) = lobby.cycle()
    assert "signed up for the game ridge of Union Pacific as Ann Lee." in body(conf)
    lobby.send("ann@example.org", "confirm", reply_to=conf)
    (seated,) = lobby.cycle()
    assert "You have a seat in game ridge as Ann Lee" in body(seated)
    # a stranger who got hold of the invitation is not invited
    lobby.send("eve@example.com", "yes", reply_to=invitation)
    (no,) = lobby.cycle()
    assert "Nothing of game ridge waits for a confirmation from this address" in body(no)


def test_machine_mail_and_the_daily_limit(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open()
    msg = EmailMessage(policy=policy.default)
    msg["From"] = "robot@example.com"
    msg["To"] = lobby.config.moderator_address
    msg["Subject"] = "Out of office"
    msg["Auto-Submitted"] = "auto-replied"
    msg["Message-ID"] = make_msgid()
    msg.set_content("join ridge\n")
    deliver(lobby.inbox, msg.as_bytes(), lobby.now)
    assert lobby.cycle() == []
    for i in range(signup.PER_ADDRESS_PER_DAY + 3):
        lobby.send("eve@example.com", "games")
    assert len(lobby.cycle()) == signup.PER_ADDRESS_PER_DAY
    lobby.now += D
    lobby.send("eve@example.com", "games")
    assert len(lobby.cycle()) == 1


def test_cli_open_list_show(tmp_path):
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text("moderator:\n  address: moderator@up.example\ngames_dir: games\n"
                   "maildir:\n  inbox: mail/inbox\n  outbox: mail/outbox\nspool_dir: spool\n")
    (tmp_path / "games").mkdir()
    run = CliRunner()
    r = run.invoke(pbem.main, ["--config", str(cfg), "open", "ridge", "--seats", "3-5", "--deadline", "48h",
                               "--expire", "14d", "--now", "2026-12-01T12:00:00", "--seed", "4"])
    assert r.exit_code == 0, r.output
    assert "Opened game ridge for sign-up (first-edition, seats 3-5, seed 4)" in r.output
    assert "closes unstarted at 2026-12-15T12:00+00:00" in r.output
    r = run.invoke(pbem.main, ["--config", str(cfg), "open", "ridge"])
    assert r.exit_code == 1 and "exists already" in r.output
    r = run.invoke(pbem.main, ["--config", str(cfg), "open", "forest", "--seats", "7"])
    assert r.exit_code == 2 and "seats go from 2 to 6" in r.output
    r = run.invoke(pbem.main, ["--config", str(cfg), "list"])
    assert r.exit_code == 0
    assert "ridge  first-edition  open for sign-up (open): seats 0 taken of 3-5, 0 waiting; starts full; " \
           "expires 2026-12-15T12:00+00:00" in r.output
    r = run.invoke(pbem.main, ["--config", str(cfg), "show", "ridge"])
    assert r.exit_code == 0 and r.output.startswith("Open game ridge (open): first-edition, seats 3-5")
    r = run.invoke(pbem.main, ["--config", str(cfg), "signup", "cancel", "ridge"])
    assert r.exit_code == 0, r.output
    r = run.invoke(pbem.main, ["--config", str(cfg), "list"])
    assert "ridge" not in r.output


def test_a_stranger_writing_spanish_is_answered_in_spanish(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open()
    lobby.send("ana@example.es", "Hola,\n\nunirse ridge como Ana")
    (conf,) = lobby.cycle()
    assert "Esta dirección se apuntó a la partida ridge de Union Pacific como Ana." in body(conf)
    assert "confirma, por favor" in str(conf["Subject"])
    lobby.send("ana@example.es", "confirmar", reply_to=conf)
    (seated,) = lobby.cycle()
    assert "Tienes asiento en la partida ridge como Ana: hay 1 de 3 asientos ocupados." in body(seated)
    assert lobby.mod.bk.person("ana@example.es")["language"] == "es"
    # her later 'games' without a language word is answered in the language she signed up in
    lobby.send("ana@example.es", "games")
    (listing,) = lobby.cycle()
    assert "Partidas abiertas para apuntarse:" in body(listing)
    assert "Para unirte, envía: unirse ridge como TU NOMBRE" in body(listing)


def test_doctor_names_the_open_games_and_the_registry(tmp_path):
    from moderator.doctor import check_open_games

    lobby = Lobby(tmp_path)
    assert check_open_games(lobby.config, T0) == []
    lobby.open(seats=[2, 4], expire=2 * 86400)
    join_and_confirm(lobby, "ann@example.org", "join ridge as Ann")
    lines = [c.line() for c in check_open_games(lobby.config, T0 + H)]
    assert any("NOTE" in l and "ridge (open): 1 of 2-4 seats taken, 0 waiting, starts full, expires "
               "2026-12-03T12:00+00:00" in l for l in lines), lines
    assert any("1 address(es) confirmed by a reply" in l for l in lines)
    late = check_open_games(lobby.config, T0 + 3 * D)
    assert late[0].status == "FAIL" and "past its expiry" in late[0].line()


def test_the_game_master_cannot_take_a_seat_and_a_bare_confirm_is_guided(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open()
    lobby.send("gm@example.org", "join ridge as Boss")
    (no,) = lobby.cycle()
    assert "is the game master's or an observer's of game ridge" in body(no)
    assert lobby.rows() == []
    lobby.send("ann@example.org", "join ridge as Ann")
    (first,) = lobby.cycle()
    # a client that drops In-Reply-To and References: told how to confirm, nothing taken
    lobby.send("ann@example.org", "confirm")
    (how,) = lobby.cycle()
    assert "To confirm, reply to the moderator's mail with just the word 'confirm'." in body(how)
    assert lobby.rows() == [("Ann", "ann@example.org", "asked")]
    # a reply that says something else is no confirmation either
    lobby.send("ann@example.org", "join ridge as Ann")
    (conf,) = lobby.cycle()
    lobby.send("ann@example.org", "no, not me", reply_to=conf)
    (how,) = lobby.cycle()
    assert "Nothing was changed in game ridge." in body(how)
    # the first confirmation's token stopped working when a new one was sent
    lobby.send("ann@example.org", "confirm", reply_to=first)
    (no,) = lobby.cycle()
    assert "Nothing of game ridge waits for a confirmation from this address" in body(no)
    # the new one works, with an empty reply too
    lobby.send("ann@example.org", "", reply_to=conf)
    (seated,) = lobby.cycle()
    assert "You have a seat in game ridge as Ann" in body(seated)
    # a stranger's unknown game: the answer does not echo a long text back
    lobby.send("eve@example.com", "join " + "x" * 300)
    (no,) = lobby.cycle()
    assert "x" * 41 not in body(no) and "No game 'xxxxxxxx" in body(no)


def test_cli_invite_and_a_start_date(tmp_path):
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text("moderator:\n  address: moderator@up.example\ngames_dir: games\n"
                   "maildir:\n  inbox: mail/inbox\n  outbox: mail/outbox\nspool_dir: spool\n")
    run = CliRunner()
    r = run.invoke(pbem.main, ["--config", str(cfg), "open", "ridge", "--seats", "2", "--invite",
                               "Ann <ann@example.org>, bob@example.org", "--invite", "cy@example.net",
                               "--starts", "2026-12-05T18:00", "--seat-order", "random",
                               "--now", "2026-12-01T12:00:00", "--language", "de"])
    assert r.exit_code == 0, r.output
    assert "it starts at 2026-12-05T18:00:00+00:00" in r.output
    with Bookkeeping.in_spool(tmp_path / "spool") as bk:
        setup = bk.open_game("ridge")["setup"]
    assert setup["invite"] == ["ann@example.org", "bob@example.org", "cy@example.net"]
    assert setup["seats"] == [2, 2] and setup["seat_order"] == "random"
    assert setup["settings"]["language"] == "de"
    assert "Invitations to 3 address(es): sent." in r.output
    invitations = unseen_mails(mailbox.Maildir(str(tmp_path / "mail" / "outbox")), set())
    assert sorted(to(m) for m in invitations) == ["ann@example.org", "bob@example.org", "cy@example.net"]
    for m in invitations:  # in the game's language, and no one sees who else is invited
        assert "Du bist zur Partie ridge von Union Pacific eingeladen" in body(m)
        assert not any(a in m.as_string() for a in {"ann@example.org", "bob@example.org", "cy@example.net"} - {to(m)})
    r = run.invoke(pbem.main, ["--config", str(cfg), "open", "plains", "--starts", "2026-11-01T00:00",
                               "--now", "2026-12-01T12:00:00"])
    assert r.exit_code == 1 and "is not in the future" in r.output
    r = run.invoke(pbem.main, ["--config", str(cfg), "open", "plains", "--starts", "2027-02-01T00:00",
                               "--now", "2026-12-01T12:00:00"])
    assert r.exit_code == 1 and "comes after the expiry" in r.output
    r = run.invoke(pbem.main, ["--config", str(cfg), "open", "plains", "--ruleset", "third", "--now",
                               "2026-12-01T12:00:00"])
    assert r.exit_code == 2 and "'third'" in r.output


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.lists(st.text(max_size=45), max_size=6))
def test_every_suggestion_is_a_name_the_game_takes(name, taken):
    from moderator.rules.options import check_setup

    suggestion = signup.suggest_name(name, taken)
    assert signup.check_name(suggestion, taken) is None
    other = "Zz other" if suggestion.lower() != "zz other" else "Yy other"
    check_setup([suggestion, other], "first-edition")  # the engine takes it too


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=5))
def test_reading_any_lines_never_raises(lines):
    req = signup.read_request(lines, ["text"] * len(lines))
    assert req is None or req.kind in ("games", "join", "leave", "confirm")


def test_a_schema_2_database_migrates_to_3_keeping_its_rows(tmp_path):
    import sqlite3

    from moderator.store import bookkeeping

    path = tmp_path / "pbem.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    for script in (bookkeeping._V1, bookkeeping._V2):
        for stmt in bookkeeping._statements(script):
            db.execute(stmt)
    db.execute("PRAGMA user_version = 2")
    db.execute("INSERT INTO bounces(address, reason) VALUES ('ann@example.org', '550 no such user')")
    db.close()
    with pytest.raises(Exception, match="open it read-write to migrate"):
        Bookkeeping(path, readonly=True, legacy=None)
    with Bookkeeping(path, legacy=None) as bk:
        assert bk.schema_version == SCHEMA_VERSION
        assert bk.bounces() == {"ann@example.org": "550 no such user"}
        assert bk.open_games() == [] and bk.people() == []


def test_games_words_the_settings(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open(options={"hidden_money": True, "spread_dividends": False},
               settings={"deadline": 48 * 3600, "on_missed": "bot", "abandon_after": 3, "language": "de",
                         "grace": 0})
    lobby.open("plains", starts=(T0 + 3 * D).isoformat(), seats=[3, 5], invite=["x@example.org"])
    lobby.send("zed@example.com", "games")
    (listing,) = lobby.cycle()
    text = body(listing)
    # one line each (a new user's check found them run together: "2 daysSeats: ...")
    assert ("ridge\nRules: first-edition; language: de; time for a move: 2 days\n"
            "Rule options: other players' money is hidden until the end") in text
    assert "Seats: 0 of 3 taken, 3 free (at least 2 to play)\nStarts when all 3 seats are taken.\n" in text
    assert "Closes unstarted at 2026-12-31 12:00 UTC.\nTo join, send: join ridge as YOUR NAME" in text
    # a game by invitation is not shown to a stranger (a new user's check) ...
    assert "plains" not in text and "By invitation only." not in text
    assert "x@example.org" not in text
    # ... but to its invited address
    lobby.send("x@example.org", "games")
    (listing,) = lobby.cycle()
    text = body(listing)
    assert "Starts at 2026-12-04 12:00 UTC with at least 3 players." in text
    assert "By invitation only.\nTo join, send: join plains as YOUR NAME" in text


class Killed(BaseException):
    """The process killed at a fault point (nothing after it runs; no handler catches it)."""


@pytest.mark.parametrize("when", ["a join", "the confirmation that starts the game"])
def test_a_crash_before_the_commit_changes_nothing_in_the_outcome(tmp_path, monkeypatch, when):
    from moderator.moderation import faults

    lobby = Lobby(tmp_path)
    lobby.open(seats=[2, 2])
    join_and_confirm(lobby, "ann@example.org", "join ridge as Ann")
    lobby.send("bob@example.org", "join ridge as Bob")

    def crash_once(point, fired=[]):
        if point == "signup-spooled" and not fired:
            fired.append(point)
            raise Killed(point)

    if when == "a join":
        monkeypatch.setattr(faults, "fault", crash_once)
        with pytest.raises(Killed):
            lobby.mod.run_cycle()
        lobby.mod.close()  # the process is gone; a new one starts
        monkeypatch.setattr(faults, "fault", lambda point: None)
        lobby.mod = Moderator(lobby.config, clock=lambda: lobby.now)
    (conf,) = lobby.cycle()  # one confirmation, whose token works
    lobby.send("bob@example.org", "confirm", reply_to=conf)
    if when != "a join":
        monkeypatch.setattr(faults, "fault", crash_once)
        with pytest.raises(Killed):
            lobby.mod.run_cycle()
        lobby.mod.close()
        monkeypatch.setattr(faults, "fault", lambda point: None)
        lobby.mod = Moderator(lobby.config, clock=lambda: lobby.now)
    mails = lobby.cycle()
    assert sorted(to(m) for m in mails) == ["ann@example.org", "bob@example.org", "bob@example.org"], \
        [(to(m), str(m["Subject"]), body(m)[:80]) for m in mails]
    assert sum("You have a seat in game ridge as Bob" in body(m) for m in mails) == 1
    data = GameStore(lobby.config.games_dir).read_data("ridge")
    assert [p["name"] for p in data["players"]] == ["Ann", "Bob"]
    assert lobby.mod.bk.open_game("ridge")["state"] == "started"
    assert lobby.cycle() == []  # and nothing more later


@pytest.mark.parametrize("name", ["Union Pacific moderator", "Moderator (game hx)", "PBEM", "the Game Master",
                                  "Ann (admin)"])
def test_a_name_that_reads_as_the_moderators_is_refused(name):
    """Relayed press comes from the moderator's address with the sender's name: a
    seat may not be named like the moderator (a new user's check), and the
    suggestion is a name the game takes."""
    assert signup.check_name(name, []) == "name_reserved"
    suggestion = signup.suggest_name(name, [])
    assert signup.check_name(suggestion, []) is None
    assert "moderator" not in suggestion.lower() and "(" not in suggestion


def test_an_expiry_with_nobody_to_tell_is_logged(tmp_path, caplog):
    """An open game without a game master, in a configuration without an operator,
    closes unstarted with a warning in the log (a new user's check: it vanished
    from `pbem list` and nobody was told)."""
    import logging

    lobby = Lobby(tmp_path)
    lobby.config.operator = None
    lobby.open(expire=86400, gm=None)
    lobby.now = T0 + D
    with caplog.at_level(logging.WARNING, logger="pbem"):
        assert lobby.cycle() == []
    assert lobby.mod.bk.open_game("ridge")["state"] == "expired"
    assert "open game ridge closed unstarted (expired); no game master or operator address to tell" in caplog.text
