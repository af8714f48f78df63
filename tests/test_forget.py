"""A person's own data (issue 28): ``export me`` and ``forget me`` by mail over
the real servers, and the operator's ``pbem export ADDRESS`` / ``pbem forget
ADDRESS`` (moderation/privacy.py)."""
from __future__ import annotations

import base64
import json
import quopri
from datetime import timedelta
from email.header import Header

import pytest
from click.testing import CliRunner

from test_person import ANN, T0, Table, _body, _to  # the table of test_person.py, with Bjørn

BJ, BJN = "bjorn@b.example", "Bjørn"  # a name that no Message-ID, token or digest can hold


@pytest.fixture
def table(tmp_path, dovecot, smtp_sink, monkeypatch):
    """Three games sharing Ann and Bjørn (Bjørn second in ridge, first in lake,
    second in pass); pass will be finished."""
    t = Table(tmp_path, dovecot, smtp_sink, monkeypatch)
    day = {"deadline": 86400, "on_missed": "bot", "abandon_after": 9, "grace": 0, "language": "en"}
    t.m.create_game("ridge", [("Ann", ANN), (BJN, BJ)], seed=1, settings=day)
    t.m.create_game("lake", [(BJN, BJ), ("Ann", ANN), ("Cy", "cy@d.example")], seed=2, settings=day)
    t.m.create_game("pass", [("Ann", ANN), (BJN, BJ)], seed=3, settings=day)
    t.collect()
    return t


def _forms(text: str) -> list[bytes]:
    """``text`` as it can stand in a file: its bytes (searched lower-cased), as
    quoted-printable, as RFC 2047 words, and its base64 at each of the three
    alignments (the whole groups only)."""
    raw = text.encode("utf-8")
    out = [raw.lower(), quopri.encodestring(raw).rstrip(b"=\n").lower(),
           Header(text, "utf-8").encode().encode().lower()]
    for shift in range(3):  # the groups made of its bytes only
        b64 = base64.b64encode(b"\0" * shift + raw)
        out.append(b64[4 if shift else 0:4 * ((shift + len(raw)) // 3)])
    return [f for f in out if len(f) >= 6]  # shorter base64 pieces could be chance bytes


def _traces(t, *texts: str) -> list[str]:
    """Every file under games/ and the spool (the database and its -wal,
    -journal included) holding one of ``texts`` in one of its ``_forms``."""
    found = []
    roots = [t.config.games_dir, t.config.spool_dir]
    forms = [(x, f) for x in texts for f in _forms(x)]
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            data = path.read_bytes()
            low = data.lower()
            for x, f in forms:
                if f in low or f in data:
                    found.append(f"{path.relative_to(root.parent)}: {x!r} as {f!r}")
    return found


def _play_pass_to_the_end(t):
    """Game pass ends: the game master's 'end' (from the command line)."""
    t.m.manage("pass", "end")
    t.collect()


def test_export_me_then_forget_me_over_imap_and_smtp(table):
    t = table
    t.now[0] = T0 + timedelta(hours=1)
    t.reply(t.last[(BJ, "ridge")], f"{BJN} <{BJ}>", "start BNL")
    t.reply(t.last[(BJ, "lake")], f"{BJN} <{BJ}>", "me\nstart UP")
    t.cycle()
    t.now[0] = T0 + timedelta(hours=2)
    me = t.last[(BJ, "me")]
    t.reply(me, f"{BJN} <{BJ}>", "timezone Europe/Oslo\ndigest daily")
    t.cycle()
    _play_pass_to_the_end(t)
    # export me, in a game's thread
    t.now[0] = T0 + timedelta(hours=3)
    t.reply(t.last[(BJ, "ridge")], f"{BJN} <{BJ}>", "export me")
    (mail,) = t.cycle()
    assert _to(mail) == BJ and mail["Subject"] == "pbem: your data"
    assert ".pbem-me@up.example>" in mail["Message-ID"]
    (part,) = [p for p in mail.iter_attachments()]
    assert part.get_filename() == "pbem-export.json" and part.get_content_type() == "application/json"
    data = json.loads(part.get_content())
    assert data["version"] == 1 and data["address"] == BJ and data["name"] == BJN
    assert data["settings"] == {"digest": "daily", "timezone": "Europe/Oslo"}
    assert data["overrides"] == [] and data["vacation_ledger"] == [] and data["pool"] == []
    assert [(s["game"], s["seat"], s["phase"], s["ended"]) for s in data["seats"]] == [
        ("lake", BJN, "initial", False), ("pass", BJN, "initial", True), ("ridge", BJN, "initial", False)]
    lake, _, ridge = data["seats"]
    assert ridge["orders"] == []  # his 'start BNL' was not applied
    assert lake["orders"] == [{"order": "start UP", "received": "2026-11-02T10:00:00+00:00",
                               "arrived": "2026-11-02T10:00:00+00:00"}]
    assert (ridge["joined"], ridge["left"]) == ("2026-11-02T09:00:00+00:00", None)
    assert data["record"]["played"] == 3 and data["record"]["in_time"] == 1
    text = part.get_content().decode("utf-8")
    assert ANN not in text and "cy@d.example" not in text and "secret" not in text
    # the search finds them before: in the game files and the database at least
    before = _traces(t, BJ, BJN)
    assert any(f.startswith("games/ridge.yaml") for f in before) and any("pbem.sqlite3" in f for f in before)
    # forget me, in the person thread: a question first, nothing changed
    t.reply(me, f"{BJN} <{BJ}>", "forget me")
    (question,) = t.cycle()
    assert question["Subject"] == "pbem: forget you?" and "Reply 'confirm' to this mail by " in _body(question)
    assert t.m.bk.person(BJ) is not None
    # a forged confirmation: Ann answering it, and Bjørn with a made-up token
    t.reply(question, f"Ann <{ANN}>", "confirm")
    forged = question.__class__(policy=question.policy)
    forged["Subject"] = question["Subject"]
    forged["Message-ID"] = "<aaaaaaaaaaaaa.abcdefghijklmnop.pbem-me@up.example>"
    t.reply(forged, f"{BJN} <{BJ}>", "confirm")
    t.cycle()
    assert t.m.bk.person(BJ) is not None and t.store.read_data("ridge")["players"][1]["address"] == BJ
    # a volunteer of the substitute pool, for every game
    t.m.bk.register_person("dan@e.example", "Dan", t.now[0])
    t.m.bk.pool_join("dan@e.example", "*", t.now[0])
    # the confirmation
    t.now[0] = T0 + timedelta(hours=4)
    t.reply(question, f"{BJN} <{BJ}>", "confirm")
    mails = t.cycle()
    (last,) = [m for m in mails if _to(m) == BJ]
    assert last["Subject"] == "pbem: you are forgotten"
    assert _body(last) == ("You are forgotten: your address and name are gone from the registry, from the game "
                           "files (lake, pass, ridge) and from the moderator's records. This is the last mail you "
                           "get from this moderator. Mail already delivered to other players cannot be recalled.\n")
    told = sorted((_to(m), m["Subject"]) for m in mails if _to(m) != BJ)
    assert ("ann@a.example", "Re: ridge: Player 2 is vacant") in told or \
        any(_to(m) == ANN and "Player 2 is vacant" in _body(m) for m in mails)
    assert any(_to(m) == "cy@d.example" and "Player 1 is vacant" in _body(m) for m in mails)
    assert not any(BJ in m.as_string() or BJN in _body(m) for m in mails if _to(m) != BJ)
    offers = sorted(str(m["Subject"]) for m in mails if _to(m) == "dan@e.example")
    assert len(offers) == 2 and "lake" in offers[0] and "ridge" in offers[1], offers
    assert [(o["seat"], o["address"]) for o in t.m.bk.offers("ridge")] == [("Player 2", "dan@e.example")]
    # no trace anywhere: game files, snapshots, spool, the database and its -wal (open, and closed)
    assert (t.config.spool_dir / "pbem.sqlite3-wal").exists()
    assert _traces(t, BJ, BJN) == []
    t.m.close()
    assert _traces(t, BJ, BJN) == []
    # the finished game still replays; the running ones go on with the vacant seat offered
    from moderator.store.gamefile import GameStore

    store = GameStore(t.config.games_dir)
    for gid in ("ridge", "lake", "pass"):
        record = store.load(gid)  # replayed and compared in full
        assert BJN not in [p.name for p in record.players]
    ridge = store.load("ridge")
    seat = ridge.player_by_name("Player 2")
    assert (seat.address or None, seat.bot, "Player 2" in ridge.resigned) == (None, True, True)
    assert [(h["player"], h.get("by")) for h in ridge.history] == [("Player 2", "bot")]  # at once: a choice
    assert "Player 1" in store.load("lake").resigned
    assert not store.load("pass").player_by_name("Player 2").address
    from moderator.store.bookkeeping import Bookkeeping

    with Bookkeeping.in_spool(t.config.spool_dir) as bk:
        assert bk.person(BJ) is None and bk.games_of(BJ) == [] and bk.settings_of(BJ) == {}
        assert sorted((v["game"], v["seat"], v["state"]) for v in bk.vacancies(("open",))) == [
            ("lake", "Player 1", "open"), ("ridge", "Player 2", "open")]
    # the running game goes on: Ann's start, then the built-in player's for the vacant seat
    from moderator.moderation.cycle import Moderator

    t.m = Moderator(t.config, clock=lambda: t.now[0])
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "start UP")
    t.cycle()
    ridge = GameStore(t.config.games_dir).load("ridge")
    assert [(h["player"], h.get("by")) for h in ridge.history] == [("Player 2", "bot"), ("Ann", None)]
    # a later mail from the address is a stranger's: it plays in no game
    t.reply(t.last[(BJ, "ridge")], f"{BJN} <{BJ}>", "status")
    assert t.cycle() == []  # nothing more goes to the address
    assert t.m.bk.person(BJ) is None and t.m.bk.games_of(BJ) == []


def test_a_late_or_declined_confirmation_changes_nothing(table):
    t = table
    t.reply(t.last[(BJ, "ridge")], f"{BJN} <{BJ}>", "forget me")
    (question,) = t.cycle()
    t.reply(question, f"{BJN} <{BJ}>", "no, keep me")
    (answer,) = t.cycle()
    assert _body(answer) == ("You did not confirm: nothing was removed. Write 'forget me' again if you change "
                             "your mind.\n")
    t.reply(t.last[(BJ, "ridge")], f"{BJN} <{BJ}>", "forget me")
    (question,) = t.cycle()
    t.now[0] = T0 + timedelta(days=3)
    t.reply(question, f"{BJN} <{BJ}>", "confirm")
    answers = [m for m in t.cycle() if _to(m) == BJ and m["Subject"] == "pbem: forget you?"]
    assert [_body(m) for m in answers] == [
        "This confirmation came too late: nothing was removed. Write 'forget me' again to be asked anew.\n"]
    assert t.store.read_data("ridge")["players"][1]["address"] == BJ


def test_the_answers_to_export_and_forget_are_limited_per_day(table, monkeypatch):
    from moderator.moderation import privacy

    monkeypatch.setattr(privacy, "PER_DAY", 2)
    t = table
    for _ in range(3):
        t.reply(t.last[(BJ, "ridge")], f"{BJN} <{BJ}>", "export me")
    t.reply(t.last[(BJ, "lake")], f"{BJN} <{BJ}>", "forget me")
    mails = [m for m in t.cycle() if _to(m) == BJ]
    assert len(mails) == 2 and all(m["Subject"] == "pbem: your data" for m in mails)
    assert t.m.bk.setting(BJ, privacy.FORGET_KEY) is None  # not asked: no secret kept


def test_the_operators_export_and_forget(table):
    import pbem

    t = table
    t.reply(t.last[(BJ, "ridge")], f"{BJN} <{BJ}>", "start BNL")
    t.cycle()
    t.m.close()
    r = CliRunner().invoke(pbem.main, ["--config", str(t.cfg), "export", BJ.upper()], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["address"] == BJ and [s["game"] for s in data["seats"]] == ["lake", "pass", "ridge"]
    r = CliRunner().invoke(pbem.main, ["--config", str(t.cfg), "forget", BJ], catch_exceptions=False)
    assert r.exit_code == 0 and "Nothing changed" in r.output, r.output
    assert t.store.read_data("ridge")["players"][1]["address"] == BJ
    at = "2026-11-20T10:00:00+00:00"
    r = CliRunner().invoke(pbem.main, ["--config", str(t.cfg), "forget", BJ, "--yes", "--now", at],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "games rewritten: lake, pass, ridge" in r.output
    assert "now have neutral names" in r.output  # three seats
    # the resignation in each running game is dated by --now, not by the wall clock
    for gid in ("ridge", "lake"):
        entries = [e for e in t.store.read_data(gid)["gm_log"] if e.get("by") == "forget me"]
        assert entries and {str(e["at"]) for e in entries} == {at}, (gid, entries)
    sent = [m.message for m in t.sink.messages[t.seen:]]
    assert sent and BJ not in [_to(m) for m in sent]  # the others told; nothing to the address
    assert _traces(t, BJ, BJN) == []
    from moderator.store.gamefile import GameStore

    for gid in ("ridge", "lake", "pass"):
        GameStore(t.config.games_dir).load(gid)
    # an address pbem does not know (now also the forgotten one) is an error, and changes nothing
    for args in (["export", BJ], ["forget", BJ, "--yes"], ["forget", "nobody@example.org", "--yes"],
                 ["export", "nobody@example.org", "--now", "2026-12-05T12:00:00Z"]):
        r = CliRunner().invoke(pbem.main, ["--config", str(t.cfg), *args], catch_exceptions=False)
        assert r.exit_code == 1 and "is not known here" in r.output, (args, r.output)


def test_the_confirmation_words_are_those_of_the_sign_up():
    from moderator.moderation import privacy, signup

    lines = ["confirm", "Yes, please", "I confirm", "ja", "确认", "no", "no, keep me", "nein danke", "ok", "",
             "please do not", "potvrzuji", "well maybe later yes"]
    assert [privacy._confirms(x) for x in lines] == [signup.confirms(x) for x in lines]
    assert privacy._YES == set(signup.WORDS["confirm"])


def test_a_game_file_without_the_person_still_replays(tmp_path):
    """The frozen format-6 game whose seat Cy went from cy@example.net to Walt
    (walt@pool.example) by the pool, with press added: forgetting Walt renames
    the seat Player 3 everywhere, drops the press he sent, keeps the press to
    him with the name replaced, and the file replays and compares in full."""
    from pathlib import Path

    import yaml

    from moderator.moderation.privacy import scrub_game
    from moderator.store.gamefile import GameStore, _dump

    path = Path(__file__).parent / "fixtures" / "games" / "v6" / "v6-substitute-gm-calendar.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["game"] = "g"
    data["press"] = [
        {"key": "<a@x>", "from": "Cy", "to": "all", "at": "2026-12-01T20:00:00+00:00", "text": "I am Cy."},
        {"key": "<b@x>", "from": "Ann", "to": ["Cy"], "at": "2026-12-01T21:00:00+00:00",
         "text": "Cy, write to walt@pool.example? Cyan is no name.", "mids": {"Cy": "<m1@x>"}}]
    out, names = scrub_game(data, "walt@pool.example")
    assert names == {"Cy": "Player 3"}
    assert [p["name"] for p in out["players"]] == ["Ann", "Bob", "Player 3"]
    assert (out["players"][2]["address"], out["players"][2]["secret"] != data["players"][2]["secret"]) == (None, True)
    assert out["press"] == [{"key": "<b@x>", "from": "Ann", "to": ["Player 3"], "at": "2026-12-01T21:00:00+00:00",
                             "text": "Player 3, write to [forgotten]? Cyan is no name.",
                             "mids": {"Player 3": "<m1@x>"}}]
    assert out["gm_log"][1]["command"] == "replace Player 3 Player 3=[forgotten]"  # Walt's name too
    assert out["gm_log"][1]["name"] == "Player 3"
    assert out["gm_log"][1]["address"] == "[forgotten]" and out["gm_log"][1]["old_address"] == "cy@example.net"
    assert [h["player"] for h in out["history"]].count("Player 3") == 4
    assert all("message_id" not in h for h in out["history"] if h["player"] == "Player 3")
    assert set(out["threads"]) == {"Ann", "Bob", "Player 3"} and "Player 3" in out["calendar"]
    text = _dump(out)
    assert "walt" not in text.lower() and "Cy:" not in text and "- Cy" not in text
    store = GameStore(tmp_path)
    (tmp_path / "g.yaml").write_text(text, encoding="utf-8")
    record = store.load("g")  # replayed and compared in full: the state and log agree
    assert record.checked and [p.name for p in record.players] == ["Ann", "Bob", "Player 3"]


def test_export_me_in_the_person_thread_in_german(table):
    """In the person thread, in the person's language: the export alone (no
    empty answer beside it), its words in German."""
    t = table
    t.reply(t.last[(BJ, "ridge")], f"{BJN} <{BJ}>", "me")
    (me,) = t.cycle()
    t.reply(me, f"{BJN} <{BJ}>", "language de")
    t.cycle()
    t.reply(me, f"{BJN} <{BJ}>", "export me")
    (mail,) = t.cycle()
    assert mail["Subject"] == "pbem: deine Daten" and me["Message-ID"] in str(mail["References"])
    assert _body(mail).startswith("Im Anhang sind deine Daten aus all deinen Partien")
    (part,) = mail.iter_attachments()
    data = json.loads(part.get_content())
    assert data["settings"] == {"language": "de"} and len(data["seats"]) == 3


def test_a_game_played_to_its_end_without_the_person_still_replays(tmp_path):
    """The frozen format-6 game played to the end (phase over): Ann forgotten,
    the seat is Player 1 in every entry and the file replays in full."""
    from pathlib import Path

    import yaml

    from moderator.moderation.privacy import scrub_game
    from moderator.store.gamefile import GameStore, _dump

    path = Path(__file__).parent / "fixtures" / "games" / "v6" / "v6-no-substitutes-finished.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["game"] = "f"
    before = sum(1 for h in data["history"] if h["player"] == "Ann")
    out, names = scrub_game(data, "ANN@example.org")
    assert names == {"Ann": "Player 1"} and out["state"]["phase"] == "over"
    assert sum(1 for h in out["history"] if h["player"] == "Player 1") == before > 0
    text = _dump(out)
    assert "ann@example.org" not in text.lower() and "Ann" not in text
    (tmp_path / "f.yaml").write_text(text, encoding="utf-8")
    record = GameStore(tmp_path).load("f")
    assert record.checked and record.game.phase == "over"
    assert [p.name for p in record.players] == ["Player 1", "Bella", "Bert"]


def test_a_forgotten_game_master_or_observer():
    from pathlib import Path

    import yaml

    from moderator.moderation.privacy import scrub_game

    path = Path(__file__).parent / "fixtures" / "games" / "v6" / "v6-substitute-gm-calendar.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["observers"] = ["Obs@example.org", "other@example.org"]
    out, names = scrub_game(data, "gm@example.org")
    assert names == {} and out["game_master"] == {"address": None, "secret": None}
    assert out["gm_log"][1]["by"] == "[forgotten]" and out["players"] == data["players"]
    out, _ = scrub_game(data, "obs@example.org")
    assert out["observers"] == ["other@example.org"] and out["game_master"] == data["game_master"]


def test_the_purge_reaches_every_table_with_an_address_also_the_digests(tmp_path):
    """Every bookkeeping table with an ``address`` column is purged, the schema 6
    tables of the digest and List-Unsubscribe among them (read from the schema,
    not from a list a later table could miss)."""
    from moderator.moderation.privacy import _address_tables, purge_bookkeeping
    from moderator.store.bookkeeping import Bookkeeping

    with Bookkeeping(tmp_path / "pbem.sqlite3", clock=lambda: T0) as bk:
        tables = _address_tables(bk._db)
        assert {"people", "person_settings", "unsubscribe_tokens", "digests"} <= set(tables)
        bk.unsubscribe_token("bjorn@b.example", "digest", T0)
        bk.unsubscribe_token("ann@a.example", "pool", T0)
        bk.set_digest_day("bjorn@b.example", "2026-12-01", T0)
        purge_bookkeeping(bk, "bjorn@b.example")
        db = bk._db
        assert db.execute("SELECT count(*) FROM unsubscribe_tokens WHERE address = 'bjorn@b.example'").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM digests").fetchone() == (0,)
        assert db.execute("SELECT address, kind FROM unsubscribe_tokens").fetchall() == [("ann@a.example", "pool")]
