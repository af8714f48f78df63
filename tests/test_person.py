"""One person across games (issue 28): ``me``, the person thread, person-level
settings, the vacation bank and the record (moderation/people.py,
archive/records.py, bookkeeping schema 5)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import pytest
import yaml

from moderator.config import load_config
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
ANN, BOB, ANN2 = "ann@a.example", "bob@b.example", "ann@c.example"


def _body(msg):
    return msg.get_body(preferencelist=("plain",)).get_content()


def _to(msg):
    return msg["To"].addresses[0].addr_spec


class Table:
    """Three games sharing Ann and Bob over a real Dovecot and aiosmtpd."""

    def __init__(self, tmp_path, dovecot, smtp_sink, monkeypatch):
        monkeypatch.setenv("E2E_IMAP_PASSWORD", dovecot.password)
        cfg = tmp_path / "pbem.yaml"
        cfg.write_text(yaml.safe_dump({
            "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
            "games_dir": "games", "operator": "op@up.example",
            "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                     "username": dovecot.username, "password_env": "E2E_IMAP_PASSWORD"},
            "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
        }))
        (tmp_path / "games").mkdir()
        self.config = load_config(cfg)
        self.cfg = cfg
        self.now = [T0]
        self.dovecot, self.sink = dovecot, smtp_sink
        self.seen = 0
        self.m = Moderator(self.config, clock=lambda: self.now[0])
        self.store = GameStore(self.config.games_dir)
        self.last: dict[tuple[str, str], EmailMessage] = {}

    def collect(self):
        new = self.sink.messages[self.seen:]
        self.seen += len(new)
        mails = [m.message for m in new]
        for msg in mails:
            mid = str(msg["Message-ID"])
            game = mid.rpartition(".pbem.")[2].partition("@")[0] if ".pbem." in mid else "me"
            self.last[(_to(msg), game)] = msg
        return mails

    def cycle(self):
        report = self.m.run_cycle()
        assert report.ok, report.errors
        return self.collect()

    def reply(self, original, sender, text):
        msg = EmailMessage(policy=policy.default)
        msg["From"] = sender
        msg["To"] = "moderator@up.example"
        msg["Subject"] = "Re: " + str(original["Subject"])
        msg["Date"] = format_datetime(self.now[0])
        msg["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2])
        msg["In-Reply-To"] = str(original["Message-ID"])
        msg["References"] = " ".join(str(original.get("References", "")).split() + [str(original["Message-ID"])])
        msg.set_content(text + "\n")
        self.dovecot.append(msg.as_bytes(), msg_time=self.now[0])


@pytest.fixture
def table(tmp_path, dovecot, smtp_sink, monkeypatch):
    t = Table(tmp_path, dovecot, smtp_sink, monkeypatch)
    day = {"deadline": 86400, "on_missed": "bot", "abandon_after": 9, "grace": 0, "language": "en"}
    t.m.create_game("ridge", [("Ann", ANN), ("Bob", BOB)], seed=1, settings=day)
    t.m.create_game("lake", [("Bob", BOB), ("Ann", ANN), ("Cy", "cy@d.example")], seed=2, settings=day)
    t.m.create_game("pass", [("Annie", ANN), ("Bob", BOB), ("Ann", ANN2)], seed=3, settings=day)
    t.collect()
    return t


def test_one_person_across_three_games_over_imap_and_smtp(table):
    """Ann and Bob share three games (Ann is 'Annie' in one, beside another Ann of
    another address).  Ann's 'me', her person-level time zone (overridden in one
    game by that game's own command), a person-level vacation paid from her bank,
    and the bank's accrual over days of play."""
    t = table
    t.now[0] = T0 + timedelta(hours=1)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "start BNL")
    t.cycle()
    t.now[0] = T0 + timedelta(hours=3)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (me,) = t.cycle()
    assert _to(me) == ANN and me["Subject"] == "pbem: your games and settings"
    assert ".pbem-me@up.example>" in me["Message-ID"] and ".pbem." not in me["Message-ID"]
    assert _body(me) == (
        "Your games, settings, vacation bank and record, across all your games.\n\n"
        "Your games:\n"
        "- lake (as Ann): your move, due by 2026-11-03 09:00 UTC.\n"
        "- pass (as Annie): your move, due by 2026-11-03 09:00 UTC.\n"
        "- ridge (as Ann): no move of yours is due.\n\n"
        "Your settings for all your games:\n"
        "- time zone: not set (each game's own, else UTC)\n"
        "- language: not set (each game's own)\n"
        "- digest: off\n- calendar: on\n- substitute: off\n\n"
        "Vacation bank: 7 days left (7 days earned, 0 days spent). You start with 7 days and earn one day "
        "for every 8 days of play, at most 30 days in all.\n\n"
        "Record: games played 3, finished 0, won 0; average rank -; moves in time 1, missed 0; "
        "median time to move 1 hour.\n\n"
        "Reply to this mail to change a setting in all your games: 'timezone Europe/Madrid', 'language de', "
        "'digest daily' or 'digest off', 'calendar on' or 'calendar off', 'substitute on' or 'substitute off', "
        "'vacation 5d' or 'vacation off', 'me'. The same command in a game's own thread applies to that game "
        "only, and wins there.\n")
    html = me.get_body(preferencelist=("html",)).get_content()  # text and HTML, as every answer
    assert "Vacation bank: 7 days left" in html and ANN not in html
    # Ann had never signed up (games of `pbem new`): registered by her 'me'
    assert t.m.bk.person(ANN)["name"] == "Ann"
    # the person thread: a time zone for every game; a bad value refused, nothing changed
    t.reply(me, f"Ann <{ANN}>", "timezon Europe/Madrid\nblah blah")  # a typo gets the nearest command
    (answer,) = t.cycle()
    assert _body(answer) == (
        "'timezon Europe/Madrid' is no command of your person thread; nothing was changed for it. Write one of: "
        "me, timezone ZONE, language CODE, digest daily|off, calendar on|off, substitute on|off, vacation 5d|off. "
        "Did you mean 'timezone'?\n\n"
        "'blah blah' is no command of your person thread; nothing was changed for it. Write one of: "
        "me, timezone ZONE, language CODE, digest daily|off, calendar on|off, substitute on|off, vacation 5d|off.\n")
    t.reply(me, f"Ann <{ANN}>", "timezone Europe/Prague\ndigest daily\ncalendar maybe")
    (answer,) = t.cycle()
    assert _body(answer) == (
        "Your time zone is now Europe/Prague (it is 2026-11-02 13:00 CET there). It now applies in: lake, pass, "
        "ridge.\n\nYour digest setting is now 'daily', for all your games. One digest a day comes at the first "
        "cycle after 18:00 in your time zone (Europe/Prague), with the news of the games where no move of yours "
        "is due; your moves still come at once.\n\n"
        "'maybe' is no value of calendar; nothing was changed. Write calendar on | off.\n")
    assert me["Message-ID"] in str(answer["References"]).split()  # in her person thread
    assert t.m.bk.settings_of(ANN) == {"timezone": "Europe/Prague", "digest": "daily"}
    # the game's own command wins in that game only
    t.reply(t.last[(ANN, "lake")], f"Ann <{ANN}>", "timezone America/New_York")
    (answer,) = t.cycle()
    assert "Your time zone is now America/New_York" in _body(answer)
    assert "This applies in lake only." in _body(answer)
    for game, shown in (("pass", "2026-11-03 10:00 CET, Europe/Prague"),
                        ("lake", "2026-11-03 04:00 EST, America/New_York")):
        t.reply(t.last[(ANN, game)], f"Ann <{ANN}>", "status")
        (status,) = t.cycle()
        assert f"Your move is due by 2026-11-03 09:00 UTC ({shown})." in _body(status), game
    # Bob is untouched: no zone of Ann's in his games
    assert [p.get("timezone") for p in t.store.read_data("ridge")["players"]] == ["Europe/Prague", None]
    # the person thread again: a vacation of 3 days in every game, paid from the bank
    t.now[0] = T0 + timedelta(hours=4)
    t.reply(t.last[(ANN, "me")], f"Ann <{ANN}>", "vacation 3d")
    mails = t.cycle()
    told = sorted((_to(m), str(m["Message-ID"]).rpartition(".pbem.")[2].partition("@")[0]) for m in mails
                  if _to(m) != ANN)
    assert told == [(ANN2, "pass"), (BOB, "lake"), (BOB, "pass"), (BOB, "ridge"), ("cy@d.example", "lake")]
    (mine,) = [m for m in mails if _to(m) == ANN]
    assert _body(mine) == ("Your vacation has begun in your running games: your clock stands still until "
                           "2026-11-05 14:00 CET (3 days). Left in your vacation bank: 4 days. Write 'vacation "
                           "off' in reply to this mail when you are back early. It now applies in: lake, pass, "
                           "ridge.\n"  # the deadlines it moved, each in that game's zone for her
                           "lake: Your move is now due by 2026-11-06 09:00 UTC (2026-11-06 04:00 EST, "
                           "America/New_York).\n"
                           "pass: Your move is now due by 2026-11-06 09:00 UTC (2026-11-06 10:00 CET, "
                           "Europe/Prague).\n")
    for game in ("ridge", "lake", "pass"):
        seat = [p for p in t.store.read_data(game)["players"] if p["address"] == ANN][0]
        assert seat["vacation_until"] == "2026-11-05T13:00:00+00:00" and seat["vacation_used"] == 0
    # a second one while the first runs everywhere: told so (not that the bank's 4 days are too few)
    t.reply(t.last[(ANN, "me")], f"Ann <{ANN}>", "vacation 5d")
    (refusal,) = t.cycle()
    assert _body(refusal) == "On vacation there already, unchanged: lake, pass, ridge.\n"
    # back a day later: two days go back to the bank
    t.now[0] = T0 + timedelta(days=1, hours=4)
    t.reply(t.last[(ANN, "me")], f"Ann <{ANN}>", "vacation off")
    (mine,) = [m for m in t.cycle() if _to(m) == ANN and ".pbem-me@" in m["Message-ID"]]
    # the others' deadlines passed meanwhile: the built-in player moved for them, and each wait
    # restarted at that move (the cycle's time), so Ann's next deadline is a day from then
    assert _body(mine) == ("Your vacation is over: your clock runs again. Left in your vacation bank: 6 days. "
                           "It now applies in: lake, pass, ridge.\n"
                           "lake: Your move is now due by 2026-11-04 13:00 UTC (2026-11-04 08:00 EST, "
                           "America/New_York).\n"
                           "pass: Your move is now due by 2026-11-04 13:00 UTC (2026-11-04 14:00 CET, "
                           "Europe/Prague).\n"
                           "ridge: Your move is now due by 2026-11-04 13:00 UTC (2026-11-04 14:00 CET, "
                           "Europe/Prague).\n")
    assert [e["seconds"] for e in t.m.bk.vacation_ledger(ANN)] == [3 * 86400, -2 * 86400]
    # sixteen days of play: two days more in the bank (one a day for every eight)
    for day in range(2, 17):
        t.now[0] = T0 + timedelta(days=day)
        t.cycle()
    t.reply(t.last[(ANN, "me")], f"Ann <{ANN}>", "me")
    (again,) = t.cycle()
    assert ("Vacation bank: 8 days left (9 days earned, 1 day spent). You start with 7 days and earn one day "
            "for every 8 days of play, at most 30 days in all.") in _body(again)
    assert "- time zone: Europe/Prague\n" in _body(again) and "- digest: daily\n" in _body(again)
    assert "- in lake your time zone is America/New_York, set in that game's own thread: it wins there\n" \
        in _body(again)
    # the archive's statistics from these game files: one row per person, never an address
    import html5lib

    from moderator.archive.site import build_site

    site = t.config.games_dir.parent / "site"
    build_site(t.store, site)
    tree = html5lib.parse((site / "stats.html").read_bytes(), namespaceHTMLElements=False)
    rows = {r[0]: r for r in ([" ".join("".join(td.itertext()).split()) for td in tr.iter("td")]
                              for tr in tree.iter("tr")) if len(r) == 8}
    assert sorted(rows) == ["Ann (2)", "Ann also Annie", "Bob", "Cy"]
    assert rows["Ann also Annie"][1] == "3" and rows["Ann (2)"][1] == "1" and rows["Bob"][1] == "3"
    assert not any(a in (site / "stats.html").read_text() + (site / "manifest.json").read_text()
                   for a in (ANN, BOB, ANN2))
    # the operator's `pbem show`: every seat's bank, across the person's games
    from click.testing import CliRunner

    import pbem

    t.m.close()
    r = CliRunner().invoke(pbem.main, ["--config", str(t.cfg), "show", "pass", "--now", t.now[0].isoformat()],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert ("Vacation banks (across each person's games): Annie 8 days left (9 days earned, 1 day spent); "
            "Bob 9 days left (9 days earned, 0 days spent); Ann 9 days left (9 days earned, 0 days spent)\n") \
        in r.output
    # nobody's mail names another person's address
    everyone = {ANN, BOB, ANN2, "cy@d.example"}
    for m in t.sink.messages:
        rcpt = _to(m.message)
        assert not any(a in m.message.as_string() for a in everyone - {rcpt}), rcpt


# ------------------------------------------------------------------ the record, from game files alone
def _games():
    a = {"game": "a", "created": "2026-11-01T00:00:00+00:00",
         "players": [{"name": "Ann", "address": "ann@a.example"}, {"name": "Bob", "address": "bob@b.example"}],
         "history": [
             {"player": "Ann", "order": "start UP", "received": "2026-11-01T02:00:00+00:00",
              "arrived": "2026-11-01T02:00:00+00:00"},
             {"player": "Bob", "order": "start KCC", "received": "2026-11-02T00:00:00+00:00", "by": "bot",
              "due": "2026-11-02T00:00:00+00:00"},
             {"player": "Ann", "order": "take stack", "received": "2026-11-02T05:00:30+00:00",
              "arrived": "2026-11-02T05:00:00+00:00"},
             {"player": "Bob", "order": "take stack", "received": "2026-11-02T06:00:00+00:00"}],
         "state": {"phase": "over", "money": {"Ann": 10, "Bob": 10}}}
    b = {"game": "b", "created": "2026-11-03T00:00:00+00:00",
         "players": [{"name": "Annie", "address": "Ann@A.example"}, {"name": "Ann", "address": "ann@c.example"}],
         "history": [
             {"player": "Ann", "order": "start UP", "received": "2026-11-03T01:00:00+00:00"},
             {"player": "Annie", "order": "start MS", "received": "2026-11-03T04:00:00+00:00"},
             {"player": "Annie", "order": "take stack", "received": "2026-11-03T10:00:00+00:00"}],
         "state": {"phase": "play", "money": {"Annie": 0, "Ann": 0}}}
    c = {"game": "c", "created": "2026-11-04T00:00:00+00:00",
         "players": [{"name": "Ann", "address": "ann@a.example"}, {"name": "Bob", "address": "bob@b.example"}],
         "history": [], "state": {"phase": "over", "money": {"Ann": 5, "Bob": 9}}}
    return [a, b, c]


def test_records_per_person_across_games():
    from moderator.archive.records import person_records

    recs = person_records(_games())
    assert sorted(recs) == ["ann@a.example", "ann@c.example", "bob@b.example"]
    ann = recs["ann@a.example"]  # one address, two seat names: one person
    assert (ann.names, ann.played, ann.finished, ann.won, ann.ranks) == (["Ann", "Annie"], 3, 2, 1, [1, 2])
    assert ann.average_rank == 1.5
    # 2 h (initial, from the start), 5 h (from the bot's move), 4 h (initial in b), 6 h
    assert (ann.in_time, ann.missed, sorted(ann.times)) == (4, 0, [7200.0, 14400.0, 18000.0, 21600.0])
    assert ann.median_seconds == 16200.0 and ann.reliability == 1.0
    bob = recs["bob@b.example"]  # a tie for first place is a win for each tied
    assert (bob.played, bob.finished, bob.won, bob.ranks, bob.in_time, bob.missed, bob.times) == \
        (2, 2, 2, [1, 1], 1, 1, [3600.0])
    assert bob.reliability == 0.5
    other = recs["ann@c.example"]  # another Ann: another person
    assert (other.names, other.played, other.finished, other.ranks, other.in_time, other.times) == \
        (["Ann"], 1, 0, [], 1, [3600.0])
    assert other.average_rank is None


def test_play_days_count_overlapping_games_once():
    from moderator.archive.records import play_seconds
    from moderator.moderation.people import earned

    now = datetime(2026, 11, 10, tzinfo=timezone.utc)
    # a: 11-01 00:00 to its last move 11-02 06:00; b: 11-03 to now; c: 11-04 to now (inside b)
    assert play_seconds(_games(), "ann@a.example", now) == 30 * 3600 + 7 * 86400
    assert play_seconds(_games(), "nobody@x.example", now) == 0
    assert earned(0) == 7 * 86400 and earned(8 * 86400 - 1) == 7 * 86400 and earned(8 * 86400) == 8 * 86400
    assert earned(10 * 365 * 86400) == 30 * 86400  # at most 30 days in all


def test_statistics_tell_two_anns_apart_and_keep_one_persons_two_names():
    from moderator.archive.records import person_key, seat_rows
    from moderator.archive.site import statistics

    summaries = [{"id": d["game"], "created": d["created"], "phase": d["state"]["phase"], "paid": [],
                  "values": {}, "people": seat_rows(d, "salt")} for d in _games()]
    rows = {p["name"]: p for p in statistics(summaries)["players"]}
    # ann@a.example played as Ann (a, c) and Annie (b): one person, under her latest game's name (c: Ann)
    assert rows["Ann"] == {"name": "Ann", "also": ["Annie"], "games": 3, "finished": 2, "wins": 1,
                           "avg_rank": "1.50", "avg_rank_value": 1.5, "in_time": 4, "missed": 0,
                           "in_time_share": 100.0, "median": "4 hours, 30 minutes"}
    # ann@c.example, another Ann, first seen later: told apart
    assert rows["Ann (2)"] == {"name": "Ann (2)", "also": [], "games": 1, "finished": 0, "wins": 0,
                               "avg_rank": None, "avg_rank_value": None, "in_time": 1, "missed": 0,
                               "in_time_share": 100.0, "median": "1 hour"}
    assert rows["Bob"]["wins"] == 2 and rows["Bob"]["missed"] == 1
    assert set(rows) == {"Ann", "Ann (2)", "Bob"}
    # the manifest keeps keys, never addresses; the key needs the archive's secret
    assert all("@" not in str(r) for s in summaries for r in s["people"])
    assert person_key("Ann@A.example", "salt") == person_key("ann@a.example", "salt") != \
        person_key("ann@a.example", "other")


def test_an_open_game_with_min_reliability_refuses_the_unreliable_and_admits_the_new(table):
    from moderator.moderation import signup

    t = table
    t.now[0] = T0 + timedelta(hours=1)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "start BNL")
    t.cycle()
    t.now[0] = T0 + timedelta(days=1, minutes=1)  # every other deadline passed: the built-in player moved
    t.cycle()
    setup = {"seats": [3, 3], "starts": "full", "invite": [], "seat_order": "joined", "expire": 30 * 86400,
             "substitutes": "auto", "seed": 7, "ruleset": "first-edition", "options": {}, "board": None,
             "settings": {"deadline": 86400, "on_missed": "bot", "abandon_after": 3, "language": "en",
                          "grace": 0}, "gm": None, "observers": [], "min_reliability": 0.9}
    signup.open_game(t.m.bk, t.m.store, "hill", setup, t.now[0])

    def join(address):
        msg = EmailMessage(policy=policy.default)
        msg["From"], msg["To"], msg["Subject"] = address, "moderator@up.example", "join"
        msg["Date"] = format_datetime(t.now[0])
        msg["Message-ID"] = make_msgid(domain=address.rpartition("@")[2])
        msg.set_content("join hill\n")
        t.dovecot.append(msg.as_bytes(), msg_time=t.now[0])

    for address in (ANN, BOB, "dan@e.example"):
        join(address)
    answers = {_to(m): _body(m) for m in t.cycle()}
    # Ann: 1 move in time, 2 missed (lake, pass); Bob: 3 missed
    assert answers[ANN] == ("Game hill admits players who made at least 0.90 of their moves in time; your record "
                            "says 0.33. You were not signed up.\n")
    assert answers[BOB] == ("Game hill admits players who made at least 0.90 of their moves in time; your record "
                            "says 0.00. You were not signed up.\n")
    assert "signed up for the game hill" in answers["dan@e.example"]  # no record yet: admitted
    assert [r["address"] for r in t.m.bk.signups("hill")] == ["dan@e.example"]


def test_a_schema_3_database_migrates_to_the_person_tables(tmp_path):
    import sqlite3

    from moderator.store import bookkeeping as bkmod

    path = tmp_path / "pbem.sqlite3"
    db = sqlite3.connect(path)
    for step in (bkmod._V1, bkmod._V2, bkmod._V3):  # a database of schema 3, as pbem wrote it before
        for stmt in bkmod._statements(step):
            db.execute(stmt)
    db.execute("INSERT INTO people VALUES ('ann@a.example', 'Ann', 'de', '2026-11-01T00:00:00.000000+00:00', "
               "'2026-11-01T00:00:00.000000+00:00')")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    with bkmod.Bookkeeping(path, legacy=None) as bk:
        assert bk.schema_version == bkmod.SCHEMA_VERSION == 6
        assert bk.person("ann@a.example")["language"] == "de"
        assert bk.settings_of("ann@a.example") == {} and bk.vacation_ledger("ann@a.example") == []
        when = datetime(2026, 12, 1, tzinfo=timezone.utc)
        bk.set_setting("Ann@A.example", "calendar", "on", when)
        bk.set_game_override("ann@a.example", "ridge", "timezone", "Europe/Prague", when)
        bk.add_vacation("ann@a.example", 86400, ["ridge", "lake"], when)
        assert bk.open_person_thread("ann@a.example", "s1", when)["secret"] == "s1"
        assert bk.open_person_thread("ann@a.example", "s2", when)["secret"] == "s1"  # kept once opened
    with bkmod.Bookkeeping(path, legacy=None) as bk:  # committed
        from moderator.moderation.people import person_setting, setting_in_game

        assert person_setting(bk, "ann@a.example", "calendar") == "on"
        assert person_setting(bk, "ann@a.example", "digest") is None
        assert setting_in_game(bk, "ann@a.example", "ridge", "timezone") == "Europe/Prague"
        assert setting_in_game(bk, "ann@a.example", "lake", "timezone") is None
        assert bk.vacation_ledger("ann@a.example") == [{"at": when, "seconds": 86400, "games": ["ridge", "lake"]}]


def test_me_in_german_and_a_person_thread_reply_from_another_address(table):
    """A German player's 'ich' is answered in German; a reply naming Ann's person
    thread from Bob's address is no person mail (routed as any other: Bob's own game
    mail), and changes nothing of Ann's."""
    t = table
    t.reply(t.last[(BOB, "ridge")], f"Bob <{BOB}>", "language de")
    t.cycle()
    t.reply(t.last[(BOB, "ridge")], f"Bob <{BOB}>", "ich")
    (me,) = t.cycle()
    text = _body(me)
    assert me["Subject"] == "pbem: deine Partien und Einstellungen"
    assert text.startswith("Deine Partien, Einstellungen, dein Urlaubskonto und deine Bilanz, über all deine "
                           "Partien.\n\nDeine Partien:\n")
    assert "- lake (als Bob): du bist am Zug, fällig bis " in text
    assert "- in ridge ist deine Sprache Deutsch, im Thread dieser Partie gesetzt: dort hat sie Vorrang\n" in text
    # Ann's person thread, and Bob replying to it
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (ann_me,) = t.cycle()
    t.reply(ann_me, f"Bob <{BOB}>", "timezone Asia/Tokyo")
    t.cycle()
    assert t.m.bk.settings_of(ANN) == {} and t.m.bk.settings_of(BOB) == {}
    assert all(p.get("timezone") is None for g in ("ridge", "lake", "pass")
               for p in t.store.read_data(g)["players"])


def test_a_person_level_vacation_never_lands_on_a_move_already_overdue(table):
    """Ann's 'vacation 2d' arrives after her deadline in every game passed (the
    clock has not run yet): each game's clock first makes the missed move, as
    before any mail of that game; the vacation then stops the clock of her next
    move only."""
    t = table
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me\nvacation 30m")  # ridge's own limit: 30 minutes used
    (me,) = [m for m in t.cycle() if _to(m) == ANN and ".pbem-me@" in m["Message-ID"]]
    t.now[0] = T0 + timedelta(hours=23)
    t.cycle()  # the reminders; the moderator ran an hour before the deadlines
    t.now[0] = T0 + timedelta(days=1, hours=1)  # every initial investment overdue by an hour
    t.reply(me, f"Ann <{ANN}>", "vacation 2d")
    t.cycle()
    for game in ("ridge", "lake", "pass"):
        data = t.store.read_data(game)
        seat = [p for p in data["players"] if p["address"] == ANN][0]
        mine = [h for h in data["history"] if h["player"] == seat["name"] and h.get("by") == "bot"]
        assert [h["due"] for h in mine] == ["2026-11-03T09:30:00+00:00" if game == "ridge" else
                                            "2026-11-03T09:00:00+00:00"], game
        seat = [p for p in data["players"] if p["address"] == ANN][0]
        assert (seat["vacation_from"], seat["vacation_until"]) == (
            "2026-11-03T10:00:00+00:00", "2026-11-05T10:00:00+00:00"), game
    assert [e["seconds"] for e in t.m.bk.vacation_ledger(ANN)] == [2 * 86400]
    # back early in one game only, in that game's thread: the other games keep the vacation, and
    # the game's own limit is not credited with the bank's days
    t.now[0] = T0 + timedelta(days=1, hours=2)
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "vacation off")
    t.cycle()
    seats = {g: [p for p in t.store.read_data(g)["players"] if p["address"] == ANN][0]
             for g in ("ridge", "lake", "pass")}
    assert seats["ridge"]["vacation_until"] == "2026-11-03T11:00:00+00:00"
    assert seats["ridge"]["vacation_used"] == 1800  # its own 30 minutes, nothing taken off for the bank's days
    assert seats["lake"]["vacation_until"] == seats["pass"]["vacation_until"] == "2026-11-05T10:00:00+00:00"


def test_a_person_level_zone_and_language_apply_to_a_later_game(table):
    t = table
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (me,) = t.cycle()
    quoted = "\n".join("> " + l for l in _body(me).splitlines())  # as Thunderbird replies
    t.reply(me, f"Ann <{ANN}>", f"timezone Asia/Tokyo\nlanguage cs\n\nAnn\n\nOn {me['Date']}, UP moderator "
                                f"wrote:\n{quoted}")
    (answer,) = t.cycle()
    assert _body(answer) == (  # 'language cs' first: the whole answer in Czech
        "Tvůj jazyk je nyní Čeština. Nyní platí v: lake, pass, ridge.\n\n"
        "Tvoje časové pásmo je nyní Asia/Tokyo (je tam po 2. 11. 2026 18:00 (Asia/Tokyo)). Nyní platí v: lake, "
        "pass, ridge.\n")
    t.m.create_game("dale", [("Ann", ANN), ("Bob", BOB)], seed=4,
                    settings={"deadline": 86400, "on_missed": "bot", "abandon_after": 9, "grace": 0})
    seats = {p["name"]: p for p in t.store.read_data("dale")["players"]}
    assert (seats["Ann"]["timezone"], seats["Ann"]["language"]) == ("Asia/Tokyo", "cs")
    assert (seats["Bob"]["timezone"], seats["Bob"]["language"]) == (None, None)
    welcome = [m for m in t.collect() if _to(m) == ANN]
    assert len(welcome) == 1 and "(út 3. 11. 2026 18:00 (Asia/Tokyo))" in _body(welcome[0]), _body(welcome[0])


def test_the_answers_to_a_person_are_limited_per_day(table, monkeypatch):
    from moderator.moderation import people

    monkeypatch.setattr(people, "PER_ADDRESS_PER_DAY", 2)
    t = table
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (me,) = t.cycle()
    t.reply(me, f"Ann <{ANN}>", "digest daily")
    assert len(t.cycle()) == 1
    t.reply(me, f"Ann <{ANN}>", "calendar on")  # the third answer of the day: filed unanswered, nothing done
    assert t.cycle() == [] and t.m.bk.settings_of(ANN) == {"digest": "daily"}
    t.reply(t.last[(ANN, "lake")], f"Ann <{ANN}>", "me")
    assert t.cycle() == []
    assert t.dovecot.messages("INBOX") == []  # handled, not left to come back
    t.now[0] = T0 + timedelta(days=1)  # the next UTC day
    t.reply(me, f"Ann <{ANN}>", "calendar on")
    (answer,) = [m for m in t.cycle() if ".pbem-me@" in m["Message-ID"]]
    assert _body(answer) == "Your calendar setting is now 'on', for all your games.\n"


def test_a_person_level_vacation_off_leaves_a_games_own_vacation(table):
    t = table
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "vacation 1d")  # ridge's own, from its limit
    t.cycle()
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (me,) = t.cycle()
    t.reply(me, f"Ann <{ANN}>", "vacation off\nvacation 2d")
    (answer,) = [m for m in t.cycle() if _to(m) == ANN]
    assert _body(answer).startswith(
        "You are not on vacation; nothing was changed.\n\nYour vacation has begun in your running games: your "
        "clock stands still until 2026-11-04 09:00 UTC (2 days). Left in your vacation bank: 5 days. Write "
        "'vacation off' in reply to this mail when you are back early. It now applies in: lake, pass. On "
        "vacation there already, unchanged: ridge.\n")
    ridge = [p for p in t.store.read_data("ridge")["players"] if p["address"] == ANN][0]
    assert (ridge["vacation_until"], ridge["vacation_used"]) == ("2026-11-03T09:00:00+00:00", 86400)
    assert t.m.bk.vacation_ledger(ANN)[0]["games"] == ["lake", "pass"]


def test_a_seat_that_changed_hands_credits_each_move_to_who_made_it():
    """The frozen format-6 game where the substitute pool gave Cy's seat to Walt
    (``gm_log``: ``replace Cy Walt=walt@pool.example``, old address
    cy@example.net): Cy's first two moves are cy@example.net's, the next two
    Walt's, as ``pbem replay`` says ("seat Cy: moves 1-2 by Cy; moves 3-4 by
    Walt"); each played the game, Walt under his own name (a new user's check:
    every move of the seat was Walt's, shown as "Cy")."""
    from pathlib import Path

    import yaml

    from moderator.archive.records import person_records

    path = Path(__file__).parent / "fixtures" / "games" / "v6" / "v6-substitute-gm-calendar.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    seat_moves = [h for h in data["history"] if h["player"] == "Cy"]
    assert len(seat_moves) == 4 and all(h.get("by") != "bot" for h in seat_moves)
    recs = person_records([data])
    assert set(recs) == {"ann@example.org", "bob@example.org", "cy@example.net", "walt@pool.example"}
    walt, cy = recs["walt@pool.example"], recs["cy@example.net"]
    assert (walt.names, walt.played, walt.in_time, walt.missed) == (["Walt"], 1, 2, 0)
    assert (cy.names, cy.played, cy.in_time, cy.missed) == (["Cy"], 1, 2, 0)


def test_a_median_under_a_minute_is_said_in_seconds():
    """The demo's built-in players answer at once: the statistics said "0 days"."""
    from moderator import i18n
    from moderator.archive.site import _median_words

    assert (_median_words(0), _median_words(42.9), _median_words(4.5 * 3600)) == \
        ("0 seconds", "42 seconds", "4 hours, 30 minutes")
    with i18n.speaking("de"):
        assert _median_words(42) == "42 Sekunden"


def test_a_person_thread_reply_in_the_language_of_a_seat(table):
    """A reply to the ``me`` answer is read in the languages of the person's
    seats too, not in the person-level language (or English) alone, and answered
    in the language it was written in; a ``language`` line anywhere in the mail
    comes first, so the whole answer is in one language (a new user's checks:
    Dora of a German game replied ``Sammelmail täglich 7`` to her ``ich`` answer
    and was told it was no command; three lines with ``language de`` in the
    middle were answered half in English)."""
    t = table
    t.reply(t.last[(BOB, "ridge")], f"Bob <{BOB}>", "language de")
    t.cycle()
    t.reply(t.last[(BOB, "ridge")], f"Bob <{BOB}>", "ich")
    (me,) = t.cycle()
    t.reply(me, f"Bob <{BOB}>", "Sammelmail täglich 7")
    (answer,) = [m for m in t.cycle() if _to(m) == BOB]
    assert t.m.bk.settings_of(BOB) == {"digest": "daily 7"}
    text = _body(answer)
    assert "keine Anweisung" not in text and "no command" not in text
    assert text.startswith("Deine Sammelmail-Einstellung ist jetzt 'daily 7', für all deine Partien. "), text
    # Ann (English seats) writes three lines, 'language es' in the middle: one Spanish answer
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (ann_me,) = [m for m in t.cycle() if _to(m) == ANN]
    t.reply(ann_me, f"Ann <{ANN}>", "calendar off\ndigest daily 7\nlanguage es\ntimezone Europe/Madrid")
    (answer,) = [m for m in t.cycle() if _to(m) == ANN]
    assert t.m.bk.settings_of(ANN) == {"calendar": "off", "language": "es", "digest": "daily 7",
                                       "timezone": "Europe/Madrid"}
    text = _body(answer)
    assert text.startswith("Tu idioma es ahora Español. Ahora se aplica en: lake, pass, ridge.\n\n"
                           "Tu zona horaria es ahora Europe/Madrid"), text
    assert "\n\nTu ajuste de calendario es ahora 'off', para todas tus partidas.\n\n" \
           "Tu ajuste de resumen es ahora 'daily 7', para todas tus partidas. " in text, text
    # the digest's sentence names the zone set in the same mail (a line after it)
    assert "07:00 en tu zona horaria (Europe/Madrid)" in text, text


def test_digest_daily_in_a_games_thread_is_the_persons(table):
    """``digest daily 7`` written in a game's thread (as the README lists it
    among the commands) sets the person's daily digest, answered in the person
    thread, not refused as no order (a new user's check); in German too."""
    t = table
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "digest daily 7")
    mails = [m for m in t.cycle() if _to(m) == ANN]
    assert t.m.bk.settings_of(ANN) == {"digest": "daily 7"}
    (answer,) = [m for m in mails if ".pbem-me@" in m["Message-ID"]]
    assert _body(answer).startswith("Your digest setting is now 'daily 7', for all your games. ")
    assert not any("not understood" in _body(m) for m in mails)
    # 'language de' in the same game-thread mail: the digest's answer in German too
    t.reply(t.last[(BOB, "ridge")], f"Bob <{BOB}>", "Sammelmail täglich\nlanguage de")
    mails = [m for m in t.cycle() if _to(m) == BOB]
    assert t.m.bk.settings_of(BOB) == {"digest": "daily"}
    (answer,) = [m for m in mails if ".pbem-me@" in m["Message-ID"]]
    assert _body(answer).startswith("Deine Sammelmail-Einstellung ist jetzt 'daily', für all deine Partien. ")
