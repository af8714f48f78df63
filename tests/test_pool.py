"""The substitute pool on local Maildirs, the clock set per cycle (as ``pbem run
--now``): the commands' words, the schema 4 migration from a frozen schema 3
database, refusals listing what is legal, 'substitute off', the pool in the
answer to 'games', the daily limit and machine mail, who is offered a seat
first, a resignation and a policy of none, a seat filled by hand stopping its
offers, the doctor's lines, and `pbem new --substitutes`."""
from __future__ import annotations

import sqlite3
from datetime import timedelta
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid

import pytest
from click.testing import CliRunner

import pbem
from moderator.moderation import create, pool, signup
from moderator.store.bookkeeping import SCHEMA_VERSION, Bookkeeping
from moderator.store.gamefile import GameStore
from test_deadlines import deliver
from test_signup import D, H, T0, Lobby, body, to

R = pool.Request


def confirm_pool(lobby, address, line="substitute on all", name=None):
    """``address`` sends ``line`` and confirms by reply; returns the answer to the confirmation."""
    lobby.send(address, line, name=name)
    (conf,) = [m for m in lobby.cycle() if to(m) == address]
    assert any(f"'{w}'" in body(conf) for w in ("confirm", "confirmar", "bestätigen")), body(conf)
    lobby.send(address, "confirm", reply_to=conf)
    (done,) = [m for m in lobby.cycle() if to(m) == address]
    return done


def new_game(lobby, gid="ridge", substitutes=None, **settings):
    players = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.org")]
    base = {"deadline": 72 * 3600, "language": "en", **settings}
    if substitutes:
        base["substitutes"] = substitutes
    record = lobby.mod.create_game(gid, players, 5, settings=base, gm="gm@example.org")
    lobby.cycle()  # the welcomes
    return record


def test_read_request():
    assert pool.read_request(["substitute on all"]) == R("on", "*")
    assert pool.read_request(["Substitute on"]) == R("on", "*")
    assert pool.read_request(["Hi,", "substitute on Ridge."], ["greeting", "text"]) == R("on", "Ridge")
    assert pool.read_request(["substitute off"]) == R("off")
    assert pool.read_request(["suplente activar todas"]) == R("on", "*", "es")
    assert pool.read_request(["Ersatz an ridge"]) == R("on", "ridge", "de")
    assert pool.read_request(["náhradník vypnout"]) == R("off", language="cs")
    assert pool.read_request(["替补 开 全部"]) == R("on", "*", "zh")
    assert pool.read_request(["substitute maybe"]) == R("usage")
    assert pool.read_request(["substitute on ridge please now"]) == R("usage")
    assert pool.read_request(["take ridge"]) == R("take", "ridge")
    assert pool.read_request(["Take!"]) == R("take")
    assert pool.read_request(["tomar ridge"]) == R("take", "ridge", "es")
    assert pool.read_request(["approve"]) == R("approve")
    assert pool.read_request(["veto"]) == R("veto")
    # an order with 'take' after a build is no take (the first word counts, two words at most)
    assert pool.read_request(["take stack and build"]) is None
    assert pool.read_request(["build DM a1"]) is None
    assert pool.read_request([]) is None


def test_round_seconds():
    class G:
        def __init__(self, deadline):
            self.settings = {"deadline": deadline}

    assert pool.round_seconds(G(24 * 3600)) == 24 * 3600
    assert pool.round_seconds(G(7 * 86400)) == pool.ROUND_SECONDS == 48 * 3600
    assert pool.round_seconds(G(None)) == 48 * 3600


def test_a_frozen_schema_3_database_migrates_keeping_its_people(tmp_path):
    from moderator.store import bookkeeping

    path = tmp_path / "pbem.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    for script in (bookkeeping._V1, bookkeeping._V2, bookkeeping._V3):
        for stmt in bookkeeping._statements(script):
            db.execute(stmt)
    db.execute("PRAGMA user_version = 3")
    db.execute("INSERT INTO people(address, name, language, confirmed, seen) VALUES "
               "('ann@example.org', 'Ann', 'es', '2026-11-01T00:00:00.000000+00:00', "
               "'2026-11-02T00:00:00.000000+00:00')")
    db.close()
    with pytest.raises(Exception, match="open it read-write to migrate"):
        Bookkeeping(path, readonly=True, legacy=None)
    with Bookkeeping(path, legacy=None) as bk:
        assert bk.schema_version == SCHEMA_VERSION == 6
        ann = bk.person("ann@example.org")
        assert (ann["name"], ann["language"], ann["pool"], ann["used"]) == ("Ann", "es", [], None)
        bk.pool_join("ann@example.org", "ridge", T0)
        bk.pool_join("ann@example.org", "plains", T0)
        assert bk.pool_of("ann@example.org") == ["plains", "ridge"]
        bk.pool_join("ann@example.org", "*", T0)  # all holds the single games
        assert bk.pool_of("ann@example.org") == ["*"]
        bk.pool_join("ann@example.org", "ridge", T0)
        assert bk.pool_of("ann@example.org") == ["*"]
        assert bk.vacancies() == [] and bk.offers("ridge") == []


def test_refusals_list_what_is_legal(tmp_path):
    lobby = Lobby(tmp_path)
    new_game(lobby)
    lobby.open("plains")
    lobby.send("zoe@example.net", "substitute on nowhere")
    (no,) = lobby.cycle()
    assert "There is no running or open game 'nowhere'. Write 'substitute on all', or 'substitute on GAME' " \
        "with one of: plains, ridge." in body(no)
    lobby.send("zoe@example.net", "substitute please")
    (usage,) = lobby.cycle()
    assert "Write 'substitute on all' (every game), 'substitute on GAME' (one game) or 'substitute off'." \
        in body(usage)
    lobby.send("zoe@example.net", "substitute off")
    (nothing,) = lobby.cycle()
    assert "You are not in the substitute pool." in body(nothing)
    # a confirmation forged from another address, and a stale one, change nothing
    lobby.send("zoe@example.net", "substitute on Ridge")
    (conf,) = lobby.cycle()
    assert "the substitute pool of the game ridge of Union Pacific" in body(conf)
    lobby.send("mallory@example.com", "confirm", reply_to=conf)
    (forged,) = lobby.cycle()
    assert to(forged) == "mallory@example.com"
    assert "Nothing of the substitute pool waits for a confirmation from this address" in body(forged)
    lobby.send("zoe@example.net", "no thanks", reply_to=conf)
    (guided,) = lobby.cycle()
    assert "To confirm, reply to the moderator's mail with just the word 'confirm'. Nothing was changed in the " \
        "substitute pool." in body(guided)
    assert lobby.mod.bk.pool_addresses() == [] and lobby.mod.bk.person("zoe@example.net") is None
    lobby.send("zoe@example.net", "", reply_to=conf)  # an empty reply confirms
    (done,) = lobby.cycle()
    assert "You are in the substitute pool of these games: ridge." in body(done)
    assert lobby.mod.bk.person("zoe@example.net")["pool"] == ["ridge"]


def test_substitute_off_and_the_answer_to_games(tmp_path):
    lobby = Lobby(tmp_path)
    lobby.open()
    lobby.send("zoe@example.net", "games")
    (listing,) = lobby.cycle()
    assert "You are not in the substitute pool. Send 'substitute on all'" in body(listing)
    done = confirm_pool(lobby, "zoe@example.net", name="Zoë Q")
    assert "You are in the substitute pool of every game. Send 'substitute off' to leave it." in body(done)
    assert lobby.mod.bk.person("zoe@example.net")["name"] == "Zoë Q"
    lobby.send("zoe@example.net", "games")
    (listing,) = lobby.cycle()
    assert "You are in the substitute pool of every game." in body(listing)
    done = confirm_pool(lobby, "zoe@example.net", "substitute off")
    assert "You left the substitute pool: no seat will be offered to you." in body(done)
    assert lobby.mod.bk.pool_addresses() == []
    assert lobby.mod.bk.person("zoe@example.net") is not None  # the registry keeps the person
    # in Spanish: the answers in Spanish
    done = confirm_pool(lobby, "ana@example.es", "suplente activar todas")
    assert "Estás en la reserva de suplentes de todas las partidas." in body(done)


def test_machine_mail_and_the_daily_limit(tmp_path):
    lobby = Lobby(tmp_path)
    msg = EmailMessage(policy=policy.default)
    msg["From"] = "robot@example.com"
    msg["To"] = lobby.config.moderator_address
    msg["Subject"] = "Out of office"
    msg["Auto-Submitted"] = "auto-replied"
    msg["Message-ID"] = make_msgid()
    msg.set_content("substitute on all\n")
    deliver(lobby.inbox, msg.as_bytes(), lobby.now)
    assert lobby.cycle() == []
    for _ in range(signup.PER_ADDRESS_PER_DAY + 3):
        lobby.send("eve@example.com", "substitute on all")
    assert len(lobby.cycle()) == signup.PER_ADDRESS_PER_DAY
    # the sign-up answers and the pool's share one daily count
    lobby.send("eve@example.com", "games")
    assert lobby.cycle() == []
    lobby.now += D
    lobby.send("eve@example.com", "substitute off")
    assert len(lobby.cycle()) == 1


def test_who_is_offered_first(tmp_path):
    """The game's language first, then the longest unused (never first); not those in the game."""
    lobby = Lobby(tmp_path)
    record = new_game(lobby)
    bk = lobby.mod.bk
    people = [("de1@x.org", "de", None), ("en-old@x.org", None, T0 - 9 * D), ("en-new@x.org", "en", T0 - D),
              ("en-never@x.org", "en", None), ("ann@example.org", "en", None), ("gm@example.org", None, None)]
    for address, lang, used in people:
        bk.register_person(address, address.split("@")[0], T0, lang)
        if used:
            bk.mark_used(address, used)
        bk.pool_join(address, "*", T0)
    got = [p["address"] for p in pool.candidates(bk, record, "Bob", lobby.config)]
    assert got == ["en-never@x.org", "en-old@x.org", "en-new@x.org", "de1@x.org"]


def test_a_resignation_is_offered_and_a_policy_of_none_is_not(tmp_path):
    lobby = Lobby(tmp_path)
    new_game(lobby)
    new_game(lobby, "plains", substitutes="none")
    assert "substitutes" not in GameStore(lobby.config.games_dir).read_data("ridge")["settings"]
    assert GameStore(lobby.config.games_dir).read_data("plains")["settings"]["substitutes"] == "none"
    confirm_pool(lobby, "zoe@example.net")
    lobby.mod.manage("plains", "eject Ann")
    assert lobby.mod.bk.vacancies(("open", "gm", "closed", "filled")) == []
    assert not [m for m in lobby.cycle() if to(m) == "zoe@example.net"]
    # Bob resigns in ridge (asked, then confirmed in a later mail)
    store = GameStore(lobby.config.games_dir)
    lobby.now += H
    tag = f"Re: [pbem:ridge:{store.load('ridge').player_by_name('Bob').secret}] Union Pacific ridge"
    lobby.send("bob@example.org", "resign", subject=tag)
    (asked,) = [m for m in lobby.cycle() if to(m) == "bob@example.org"]
    assert "resign confirm" in body(asked)
    lobby.now += H
    lobby.send("bob@example.org", "resign confirm", subject=tag)
    mails = lobby.cycle()
    (offer,) = [m for m in mails if to(m) == "zoe@example.net"]
    assert "The seat Bob in the game ridge of Union Pacific needs a new player: its player resigned." in body(offer)
    assert lobby.mod.bk.vacancy("ridge", "Bob")["why"] == "resigned"
    # the game master fills the seat by hand: the offer stops, a late take is told the seat is taken
    lobby.now += H
    lobby.mod.manage("ridge", "replace Bob Dora=dora@example.org")
    assert lobby.mod.bk.vacancy("ridge", "Bob")["state"] == "closed"
    assert [o["state"] for o in lobby.mod.bk.offers("ridge")] == ["lost"]
    lobby.send("zoe@example.net", "take ridge", reply_to=offer)
    (gone,) = [m for m in lobby.cycle() if to(m) == "zoe@example.net"]
    assert "The seat in game ridge is taken already" in body(gone)
    assert store.load("ridge").player_by_name("Bob").address == "dora@example.org"
    # no round follows a closed vacancy
    lobby.now += 3 * D
    assert not [m for m in lobby.cycle() if to(m) == "zoe@example.net"]


def test_a_take_that_is_no_pool_mail_is_routed_as_any(tmp_path):
    """'take stack' (a draw) from anyone, and 'take ridge' from a player of ridge, are no pool mail;
    'take ridge' from a stranger without an offer is refused by the pool."""
    from moderator.mail.read import read_mail

    lobby = Lobby(tmp_path)
    new_game(lobby)
    post = lobby.mod._post()
    report = pool.CycleReport()
    store = lobby.mod.store

    def mail(sender, text):
        msg = EmailMessage(policy=policy.default)
        msg["From"], msg["To"], msg["Subject"] = sender, lobby.config.moderator_address, "x"
        msg["Message-ID"] = make_msgid()
        msg.set_content(text + "\n")
        return read_mail(msg.as_bytes(), own_address=lobby.config.moderator_address)

    assert pool.handle(mail("zoe@example.net", "take stack"), "k1", post, store, report, T0) is None
    assert pool.handle(mail("ann@example.org", "take ridge"), "k2", post, store, report, T0) is None
    assert pool.handle(mail("ann@example.org", "take"), "k3", post, store, report, T0) is None
    assert pool.handle(mail("zoe@example.net", "take ridge"), "k4", post, store, report, T0) == "processed"
    (refusal,) = [e for e in post.spool.entries() if e.meta.get("kind") == "signup"]
    assert lobby.mod.bk.answered("k4") and not lobby.mod.bk.answered("k1")


def test_a_volunteer_gets_the_offer_and_the_welcome_in_their_language(tmp_path):
    lobby = Lobby(tmp_path)
    new_game(lobby)
    done = confirm_pool(lobby, "greta@example.de", "ersatz an alle", name="Greta")
    assert "Du bist im Ersatzspieler-Pool aller Partien." in body(done)
    lobby.mod.manage("ridge", "eject Ann")
    (offer,) = [m for m in lobby.cycle() if to(m) == "greta@example.de"]
    assert "Der Platz Ann in der Partie ridge von Union Pacific braucht einen neuen Spieler: die Spielleitung " \
        "hat ihn seinem Spieler genommen." in body(offer)
    assert "Die Stellung jetzt, wie alle sie sehen:" in body(offer)
    lobby.now += H
    lobby.send("greta@example.de", "nehmen ridge", reply_to=offer)
    mails = [m for m in lobby.cycle() if to(m) == "greta@example.de"]
    record = GameStore(lobby.config.games_dir).load("ridge")
    ann = record.player_by_name("Ann")
    assert ann.address == "greta@example.de" and ann.language == "de"
    (welcome,) = [m for m in mails if ann.secret in body(m)]
    assert "Dein Geheimcode für diese Partie" in body(welcome)
    # the pool took the seat, not the game master (a new user's check: "Der Spielleiter hat ... gegeben")
    assert "Greta aus dem Ersatzspieler-Pool hat den Platz von Ann übernommen; der Platz behält in der " \
        "Partie den Namen Ann." in " ".join(body(welcome).split())
    assert "Spielleiter hat den Platz" not in body(welcome)
    # her 'take' again in the offer's thread: told the seat is hers, not that it is taken, nor
    # refused for a missing secret (a new user's check); her other mail there is the game's
    lobby.now += H
    lobby.send("greta@example.de", "nehmen ridge", reply_to=offer)
    (later,) = [m for m in lobby.cycle() if to(m) == "greta@example.de"]
    assert "Der Platz Ann in der Partie ridge gehört dir schon." in body(later)
    assert "schon vergeben" not in body(later)
    lobby.now += H
    lobby.send("greta@example.de", "status", reply_to=offer)
    later = [m for m in lobby.cycle() if to(m) == "greta@example.de"]
    assert later and not any("gehört dir schon" in body(m) for m in later)


def test_the_doctor_names_the_pool(tmp_path):
    from moderator.doctor import check_open_games

    lobby = Lobby(tmp_path)
    new_game(lobby)
    confirm_pool(lobby, "zoe@example.net")
    lobby.mod.manage("ridge", "eject Ann")
    lobby.cycle()
    lines = [c.line() for c in check_open_games(lobby.config, lobby.now + H)]
    assert any("NOTE" in l and "substitute pool: 1 volunteer(s); 1 seat(s) waiting for a substitute; ridge Ann "
               "(open, round 1)" in l for l in lines), lines
    late = [c for c in check_open_games(lobby.config, lobby.now + timedelta(hours=50))
            if c.status == "FAIL"]
    assert len(late) == 1 and "the offers of ridge Ann lapsed over an hour ago" in late[0].line()


def test_pbem_new_keeps_the_substitutes_setting(tmp_path):
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text("moderator:\n  address: moderator@up.example\ngames_dir: games\n"
                   "maildir:\n  inbox: mail/inbox\n  outbox: mail/outbox\nspool_dir: spool\n")
    (tmp_path / "games").mkdir()
    run = CliRunner()
    for gid, extra in (("ridge", ["--substitutes", "gm"]), ("plains", [])):
        r = run.invoke(pbem.main, ["--config", str(cfg), "new", gid, "--player", "Ann=ann@example.org",
                                   "--player", "Bob=bob@example.org", "--seed", "3", *extra])
        assert r.exit_code == 0, r.output
    store = GameStore(tmp_path / "games")
    assert store.read_data("ridge")["settings"]["substitutes"] == "gm"
    assert "substitutes" not in store.read_data("plains")["settings"]  # auto: not written
    assert pool.policy(store.load("ridge")) == "gm" and pool.policy(store.load("plains")) == "auto"
    r = run.invoke(pbem.main, ["--config", str(cfg), "new", "forest", "--player", "Ann=ann@example.org",
                               "--player", "Bob=bob@example.org", "--substitutes", "maybe"])
    assert r.exit_code == 2 and "maybe" in r.output
    with pytest.raises(ValueError, match="substitutes is 'maybe'; choose auto, gm or none"):
        create.new_game(store, "forest", [("Ann", "a@x.org"), ("Bob", "b@x.org")], 1, T0,
                        settings={"substitutes": "maybe"})


def test_pbem_signup_people_shows_the_pool(tmp_path):
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text("moderator:\n  address: moderator@up.example\ngames_dir: games\n"
                   "maildir:\n  inbox: mail/inbox\n  outbox: mail/outbox\nspool_dir: spool\n")
    (tmp_path / "games").mkdir()
    (tmp_path / "spool").mkdir()
    with Bookkeeping.in_spool(tmp_path / "spool") as bk:
        bk.register_person("ann@example.org", "Ann", T0)
        bk.register_person("zoe@example.net", "Zoë", T0 + H)
        bk.pool_join("zoe@example.net", "ridge", T0 + H)
        bk.pool_join("zoe@example.net", "plains", T0 + H)
        bk.mark_used("zoe@example.net", T0 + D)
    r = CliRunner().invoke(pbem.main, ["--config", str(cfg), "signup", "people"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        "ann@example.org  Ann  since 2026-12-01T12:00+00:00  games: -  substitute pool: -",
        "zoe@example.net  Zoë  since 2026-12-01T13:00+00:00  games: -  substitute pool: plains, ridge "
        "(last took a seat 2026-12-02T12:00+00:00)"]


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=4))
def test_any_text_is_read_without_a_crash(lines):
    got = pool.read_request(lines)
    assert got is None or got.kind in ("on", "off", "usage", "take", "approve", "veto")
    try:
        signup.read_extend(lines[0] if lines else "")
    except ValueError:
        pass


def test_pool_mails_name_no_game_without_a_stray_space(tmp_path):
    """A mail of the pool that names no game: "Union Pacific: ...", not
    "Union Pacific : ..." (a new user's check)."""
    lobby = Lobby(tmp_path)
    new_game(lobby)
    lobby.send("zoe@example.net", "substitute on all")
    (conf,) = lobby.cycle()
    lobby.send("zoe@example.net", "substitute please")
    (usage,) = lobby.cycle()
    subjects = [str(conf["Subject"]), str(usage["Subject"])]
    assert all(s.startswith("Union Pacific: ") for s in subjects), subjects


def test_substitute_on_below_other_lines_of_a_players_mail_is_done_and_answered(tmp_path):
    """Bob writes in his game's thread 'calendar off' then 'substitute on all':
    the game answers the first, and the pool takes him in at once (his game's
    thread token and registered address confirm the address) and says so; a
    stranger's same lines in no game's thread change nothing (a new user's
    check: the line was dropped without a word)."""
    lobby = Lobby(tmp_path)
    record = new_game(lobby)
    bob = record.player_by_name("Bob")
    lobby.send("bob@example.org", "calendar off\nsubstitute on all",
               subject=f"Re: [pbem:ridge:{bob.secret}] Union Pacific ridge")
    mails = [m for m in lobby.cycle() if to(m) == "bob@example.org"]
    (answer,) = [m for m in mails if "substitute pool" in body(m)]
    assert body(answer) == "You are in the substitute pool of every game. Send 'substitute off' to leave it.\n"
    assert lobby.mod.bk.pool_of("bob@example.org") == ["*"]
    assert lobby.mod.bk.person("bob@example.org")["name"] == "Bob"
    assert GameStore(lobby.config.games_dir).load("ridge").calendar_off == ["Bob"]
    lobby.send("bob@example.org", "calendar on\nsubstitute off",
               subject=f"Re: [pbem:ridge:{bob.secret}] Union Pacific ridge")
    mails = [m for m in lobby.cycle() if to(m) == "bob@example.org"]
    assert lobby.mod.bk.pool_of("bob@example.org") == []
    assert any("substitute pool" in body(m) for m in mails)
    lobby.send("bob@example.org", "status\nsubstitute on nowhere",
               subject=f"Re: [pbem:ridge:{bob.secret}] Union Pacific ridge")
    mails = [m for m in lobby.cycle() if to(m) == "bob@example.org"]
    assert any("There is no running or open game 'nowhere'." in body(m) for m in mails)
    assert lobby.mod.bk.pool_of("bob@example.org") == []
    # a wrong secret: not authenticated, not done
    lobby.send("bob@example.org", "status\nsubstitute on all", subject="Re: [pbem:ridge:wrongwrong] Union Pacific ridge")
    lobby.cycle()
    assert lobby.mod.bk.pool_of("bob@example.org") == []
