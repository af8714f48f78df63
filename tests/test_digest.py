"""The daily digest and List-Unsubscribe (issue 28; moderation/digest.py,
moderation/unsubscribe.py, mail/unsubscribe.py, bookkeeping schema 6): three
games sharing two players over the real Dovecot and aiosmtpd (the fixture of
tests/test_person.py), a simulated day and a half of play across a DST
change, crashes of the digest stage, the unsubscribe mails and ``pbem
unsubscribe``; the pool offer's headers on Maildirs (tests/test_pool.py)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.config import load_config
from moderator.doctor import check_spool
from moderator.moderation import digest as digest_mod
from moderator.moderation.cycle import Moderator
from moderator.moderation.digest import due_now, hour_of, parse_hour
from moderator.moderation import deadlines
from moderator.render.events import english
from moderator.render.when import format_when
from moderator.store.gamefile import GameStore
from browser import needs_chromium
from phone_game import an_order
from test_person import ANN, ANN2, BOB, Table, _body, _to

START = datetime(2026, 10, 31, 12, 0, tzinfo=timezone.utc)  # a Saturday; New York leaves DST on Sunday 1 Nov
GAMES = ("lake", "pass", "ridge")
SEAT = {"ridge": "Ann", "lake": "Ann", "pass": "Annie"}  # Ann's seat in each game
DIGEST_SUBJECT = "pbem: your daily digest"


class Crash(BaseException):
    """A kill of the process at a fault point (no handler catches it)."""


@pytest.fixture
def day(tmp_path, dovecot, smtp_sink, monkeypatch):
    """The three games of tests/test_person.py started at ``START``; Ann (New
    York time) asks for ``digest daily`` in her person thread."""
    t = Table(tmp_path, dovecot, smtp_sink, monkeypatch)
    t.now[0] = START
    settings = {"deadline": 86400, "on_missed": "bot", "abandon_after": 9, "grace": 0, "language": "en"}
    t.m.create_game("ridge", [("Ann", ANN), ("Bob", BOB)], seed=1, settings=settings)
    t.m.create_game("lake", [("Bob", BOB), ("Ann", ANN), ("Cy", "cy@d.example")], seed=2, settings=settings)
    t.m.create_game("pass", [("Annie", ANN), ("Bob", BOB), ("Ann", ANN2)], seed=3, settings=settings)
    t.collect()
    t.reply(t.last[(ANN, "ridge")], f"Ann <{ANN}>", "me")
    (me,) = t.cycle()
    t.reply(me, f"Ann <{ANN}>", "timezone America/New_York\ndigest daily")
    (answer,) = t.cycle()
    assert _body(answer) == (
        "Your time zone is now America/New_York (it is 2026-10-31 08:00 EDT there). It now applies in: lake, pass, "
        "ridge.\n\nYour digest setting is now 'daily', for all your games. One digest a day comes at the first "
        "cycle after 18:00 in your time zone (America/New_York), with the news of the games where no move of "
        "yours is due; your moves still come at once.\n")
    assert t.m.bk.setting(ANN, "digest") == "daily"
    t.told = {g: [] for g in GAMES}  # the event lines Ann was told per game, from now on
    t.start_log = {g: t.store.load(g).notified for g in GAMES}
    t.digests = []
    t.turn = 0
    return t


def _happened(text: str) -> list[str]:
    """The ``- `` lines under WHAT HAPPENED of a status mail's text."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.strip() == "WHAT HAPPENED":
            inside = True
            continue
        if inside:
            if not line.strip():
                break
            lines.append(line.strip()[2:])
    return lines


def _sections(text: str) -> dict[str, list[str]]:
    """A digest's sections: ``{game id: [event lines]}``."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        head = re.fullmatch(r"(\w+) \(as \w+\):", line)
        if head:
            assert head.group(1) not in out, f"game {head.group(1)} twice in one digest"
            current = out.setdefault(head.group(1), [])
        elif current is not None and line.startswith("  - "):
            current.append(line[4:])
        elif not line.strip():
            current = None
    return out


def _game_of(msg) -> str | None:
    mid = str(msg["Message-ID"])
    return mid.rpartition(".pbem.")[2].partition("@")[0] if ".pbem." in mid else None


def _start_order(rec, name):
    return f"start {sorted(rec.game.share_hands[name])[0]}"


def _held_games(t) -> set[str]:
    return {e.meta["game"] for e in digest_mod.held(t.m.spool).get(ANN, [])}


def settle(t, when):
    """Cycles every 5 minutes from ``when`` until lake and pass both hold news
    for Ann (her move is not due there: someone moved after her); a game that
    holds some is left alone meanwhile.  Returns the time of the last cycle."""
    for _ in range(12):
        if {"lake", "pass"} <= _held_games(t):
            return when
        step(t, when, frozen=_held_games(t) & {"lake", "pass"})
        when += timedelta(minutes=5)
    raise AssertionError(f"no news held in lake and pass by {when}: {_held_games(t)}")


def step(t, when, ann_plays=True, frozen=()):
    """At ``when``: every human seat on move in each game orders (Ann only when
    ``ann_plays``), one cycle; Ann's mails sorted (game mails' events into
    ``t.told``, digests into ``t.digests``).  Asserts that a move of Ann's
    that became due in this cycle was mailed to her in it.  Returns Ann's mails."""
    t.now[0] = when
    before = {}
    for gid in GAMES:
        rec = t.store.load(gid)
        waiting = set(rec.game.waiting_for())
        before[gid] = SEAT[gid] in waiting
        if gid in frozen:  # nobody plays there in this cycle
            continue
        for p in rec.players:
            if p.name not in waiting or not p.address or (p.address == ANN and not ann_plays):
                continue
            t.turn += 1
            order = _start_order(rec, p.name) if rec.game.phase == "initial" else an_order(rec.game, p.name, t.turn)
            t.reply(t.last[(p.address, gid)], p.address, order)
    mails = t.cycle()
    mine = [m for m in mails if _to(m) == ANN]
    got = {gid: [] for gid in GAMES}
    for m in mine:
        gid = _game_of(m)
        if gid in got:
            got[gid].append(m)
            t.told[gid] += _happened(_body(m))
        elif m["Subject"] == DIGEST_SUBJECT:
            t.digests.append((when, m))
            for gid, lines in _sections(_body(m)).items():
                t.told[gid] += lines
    for gid in GAMES:
        rec = t.store.load(gid)
        if SEAT[gid] in rec.game.waiting_for() and not before[gid]:
            assert got[gid], f"Ann's move in {gid} at {when} was not mailed at once"
            assert "IT IS YOUR" in _body(got[gid][-1])
    return mine


def _expected(t) -> dict[str, Counter]:
    """Every event of each game since Ann asked for the digest, in English (from the game files)."""
    out = {}
    for gid in GAMES:
        rec = t.store.load(gid)
        out[gid] = Counter(english(rec.game.events[t.start_log[gid]:rec.notified]))
    return out


def _told(t) -> dict[str, Counter]:
    exp = _expected(t)
    return {gid: Counter(line for line in t.told[gid] if line in exp[gid]) for gid in GAMES}


def test_one_digest_a_day_at_her_hour_across_dst_each_event_once(day):
    t = day
    # day 1 (EDT, UTC-4): play every half hour from 12:00 to 20:30 UTC, then until lake and pass hold news
    when = START
    while when < START.replace(hour=21):
        step(t, when)
        when += timedelta(minutes=30)
    settle(t, START.replace(hour=21))
    assert t.digests == []  # none before 18:00 New York
    held = digest_mod.held(t.m.spool)[ANN]
    assert all(e.meta["kind"] == "status" for e in held)
    (line,) = [c for c in check_spool(t.config, t.now[0]) if c.subject == "spool"]
    assert line.status == "OK" and f"; {len(held)} held for a daily digest (sent with it" in line.text
    events_day = sum(len(t.store.load(g).game.events) - t.start_log[g] for g in GAMES)
    assert events_day >= 20, events_day
    # 22:00 UTC = 18:00 EDT: the digest, once (nobody plays in this cycle)
    step(t, START.replace(hour=22), frozen=GAMES)
    assert [w for w, _ in t.digests] == [START.replace(hour=22)]
    _, msg = t.digests[0]
    assert msg["Subject"] == DIGEST_SUBJECT and _to(msg) == ANN
    assert ".pbem-me@up.example>" in str(msg["Message-ID"])  # in her person thread: 'digest off' by reply
    text = _body(msg)
    html = msg.get_body(preferencelist=("html",)).get_content()  # text and HTML, as every mail
    assert "lake (as Ann):" in html and ANN not in html and BOB not in html
    assert text.startswith("Your daily digest\n\nThe news of your games where no move of yours is due, once a day after 18:00 "
                           "(America/New_York). A move of yours still comes at once, in its game's own mail, "
                           "with your hand.\n\n")
    assert text.endswith("Reply 'digest off' to this mail to get every mail at once again, or 'digest daily 7' "
                         "for another hour of your time zone.\n")
    sections = _sections(text)
    assert set(sections) == {"lake", "pass"} and all(sections.values())
    # every event of every game told to Ann exactly once: in her game mails or in the digest
    assert _told(t) == _expected(t)
    assert digest_mod.held(t.m.spool).get(ANN) is None  # all in the digest
    # the state in short: who is on move, the deadline in New York time
    for gid in sections:
        rec = t.store.load(gid)
        others = [n for n in rec.game.waiting_for() if n != SEAT[gid]]
        due = min(d for d in (deadlines.due(rec, p) for p in rec.players if p.name in others) if d)
        assert f"  On move now: {', '.join(others)}, due by {format_when(due, 'America/New_York')}." in text
        assert format_when(due, "America/New_York").endswith(" EST")  # due tomorrow, after the change
    # nothing of a hand: no 'Shares:' line (a hand), no other player's hand line
    assert "Shares:" not in text
    for (addr, g), m in t.last.items():
        if g in GAMES and addr != ANN:
            hand = [line.strip() for line in _body(m).splitlines() if line.strip().startswith("Shares:")]
            assert hand and not any(h in text for h in hand)
    # more play the same evening: held, no second digest that day
    for minute in (10, 40):
        step(t, START.replace(hour=22, minute=minute))
    settle(t, START.replace(hour=23))
    assert len(t.digests) == 1
    # day 2, Sunday 1 Nov: New York is on EST (UTC-5) since 02:00; 18:00 is 23:00 UTC
    d2 = START + timedelta(days=1)
    for hour in (12, 14, 16, 20):
        step(t, d2.replace(hour=hour))
    settle(t, d2.replace(hour=21))
    step(t, d2.replace(hour=22), frozen=GAMES)
    assert len(t.digests) == 1  # not at 22:00 UTC (17:00 EST)
    step(t, d2.replace(hour=23), frozen=GAMES)
    assert [w for w, _ in t.digests] == [START.replace(hour=22), d2.replace(hour=23)]
    assert _told(t) == _expected(t)
    # digest off (a reply to the digest): the held news and later mails come at once again
    settle(t, d2.replace(hour=23, minute=5))
    t.reply(t.digests[-1][1], f"Ann <{ANN}>", "digest off")
    mine = step(t, d2.replace(hour=23, minute=50), frozen=GAMES)
    assert any(m["Subject"] == "pbem: your games and settings" and
               "Your digest setting is now 'off'" in _body(m) for m in mine)
    assert {_game_of(m) for m in mine} >= {"lake", "pass"}  # the held ones, sent now
    assert digest_mod.held(t.m.spool).get(ANN) is None
    step(t, d2.replace(hour=23, minute=55), frozen={"ridge"})
    assert digest_mod.held(t.m.spool).get(ANN) is None
    assert [w for w, _ in t.digests] == [START.replace(hour=22), d2.replace(hour=23)]
    assert _told(t) == _expected(t)


def _token(msg) -> str:
    value = str(msg["List-Unsubscribe"]).strip()  # folded before the long URI: unfolding leaves a space
    found = re.fullmatch(r"<mailto:moderator@up\.example\?subject=unsubscribe%20([A-Za-z0-9_-]{24})>", value)
    assert found, value
    return found.group(1)


def _mail(t, sender, subject, text="This message was automatically generated by Gmail."):
    msg = EmailMessage(policy=policy.default)
    msg["From"] = sender
    msg["To"] = "moderator@up.example"
    msg["Subject"] = subject
    msg["Date"] = format_datetime(t.now[0])
    msg["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2])
    msg.set_content(text + "\n")
    t.dovecot.append(msg.as_bytes(), msg_time=t.now[0])


def _first_digest(t):
    """Play from 12:00 UTC, news held in lake and pass, the digest at 22:00 UTC (18:00 EDT)."""
    when = START
    while when < START.replace(hour=21):
        step(t, when)
        when += timedelta(hours=1)
    settle(t, START.replace(hour=21))
    step(t, START.replace(hour=22), frozen=GAMES)
    (when, msg), = t.digests
    return msg


def test_list_unsubscribe_headers_and_the_unsubscribe_mail(day):
    t = day
    msg = _first_digest(t)
    token = _token(msg)  # parsed by email's policy.default (the sink's message)
    assert msg["List-Unsubscribe-Post"] is None  # no https URL configured: mailto only
    assert t.m.bk.unsubscribe_owner(token) == (ANN, "digest")
    # a wrong token from a stranger: nothing changed, one answer that names no address, then silence
    t.now[0] += timedelta(minutes=5)
    _mail(t, "eve@e.example", "unsubscribe " + token[:-1] + ("A" if token[-1] != "A" else "B"))
    (answer,) = t.cycle()
    assert _to(answer) == "eve@e.example" and answer["Subject"] == "pbem: unsubscribe not done"
    assert "@" not in _body(answer) and "@" not in str(answer["Subject"])
    assert _body(answer) == ("This unsubscribe request names no token the moderator gave; nothing was changed. "
                             "Use the unsubscribe link of the mail itself, or write 'me' in a game's thread to see "
                             "your settings.\n")
    _mail(t, "eve@e.example", "unsubscribe " + "x" * 24)
    assert t.cycle() == []
    assert t.m.bk.setting(ANN, "digest") == "daily"
    # her mail program's unsubscribe mail (the mailto URI's Subject): the digest off, no confirmation round
    t.now[0] += timedelta(minutes=5)
    _mail(t, f"Ann <{ANN}>", "unsubscribe " + token)
    mails = t.cycle()
    (answer,) = [m for m in mails if m["Subject"] == "pbem: unsubscribed"]
    assert _to(answer) == ANN and ANN not in _body(answer)
    assert _body(answer) == ("Your daily digest is off: the mails of your games come at once again. Write "
                             "'digest daily' in reply to the answer to 'me' to have it again.\n")
    assert t.m.bk.setting(ANN, "digest") == "off"
    assert digest_mod.held(t.m.spool).get(ANN) is None
    # the same request again (a second click): answered once a day only, still off
    _mail(t, f"Ann <{ANN}>", "Unsubscribe " + token)
    assert [m for m in t.cycle() if _to(m) == ANN and m["Subject"] == "pbem: unsubscribed"] == []
    assert t.m.bk.setting(ANN, "digest") == "off"


def test_one_click_url_and_pbem_unsubscribe(day, monkeypatch):
    t = day
    data = yaml.safe_load(t.cfg.read_text())
    data["unsubscribe_url"] = "https://up.example/u?list=pbem"
    t.cfg.write_text(yaml.safe_dump(data))
    t.m.close()
    t.config = load_config(t.cfg)
    t.m = Moderator(t.config, clock=lambda: t.now[0])
    msg = _first_digest(t)
    value = str(msg["List-Unsubscribe"]).strip()
    token = t.m.bk.unsubscribe_token(ANN, "digest", t.now[0])
    assert value == (f"<https://up.example/u?list=pbem&t={token}>, "
                     f"<mailto:moderator@up.example?subject=unsubscribe%20{token}>")
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    # the operator's web hook: `pbem unsubscribe TOKEN`
    t.m.close()
    runner = CliRunner()
    bad = runner.invoke(pbem.main, ["--config", str(t.cfg), "unsubscribe", "nope" * 6])
    assert bad.exit_code == 1 and "unknown unsubscribe token: nothing changed" in bad.output
    done = runner.invoke(pbem.main, ["--config", str(t.cfg), "unsubscribe", token])
    assert done.exit_code == 0, done.output
    assert done.output == "The daily digest of the token's owner is off.\n" and "@" not in done.output
    t.m = Moderator(t.config, clock=lambda: t.now[0])
    assert t.m.bk.setting(ANN, "digest") == "off"
    with pytest.raises(Exception):
        load_config_bad = dict(data, unsubscribe_url="http://up.example/u")
        t.cfg.write_text(yaml.safe_dump(load_config_bad))
        load_config(t.cfg)


@pytest.mark.parametrize("point", ["after_mark", "after_spool"])
def test_a_crash_in_the_digest_stage_loses_nothing_and_doubles_nothing(day, monkeypatch, point):
    t = day
    when = START
    while when < START.replace(hour=21):
        step(t, when)
        when += timedelta(minutes=30)
    settle(t, START.replace(hour=21))
    real = digest_mod.run

    def crashing(post, store, report, **_):
        def boom():
            raise Crash(point)
        return real(post, store, report, **{point: boom})

    monkeypatch.setattr(digest_mod, "run", crashing)
    t.now[0] = START.replace(hour=22)
    with pytest.raises(Crash):
        t.m.run_cycle()
    monkeypatch.setattr(digest_mod, "run", real)
    t.m.close()
    t.m = Moderator(t.config, clock=lambda: t.now[0])  # the next process
    for hour, minute in ((22, 10), (22, 40), (23, 30)):  # nobody plays: the held news stay held
        step(t, START.replace(hour=hour, minute=minute), frozen=GAMES)
    if point == "after_spool":  # spooled before the kill: sent by the next cycle, the held mails dropped
        assert len(t.digests) == 1
    else:  # the day was marked, the digest not spooled: the news wait for the next day's digest
        assert t.digests == []
        assert digest_mod.held(t.m.spool).get(ANN)
        # before the deadlines of Sunday evening (the built-in player's moves would fold them into her mails)
        t.reply(t.last[(ANN, "me")], f"Ann <{ANN}>", "digest daily 7")
        step(t, START.replace(hour=23, minute=40), frozen=GAMES)
        step(t, datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc), frozen=GAMES)  # 07:00 EST
        assert len(t.digests) == 1
    assert _told(t) == _expected(t)  # each event told once, none lost


def test_a_kill_after_news_are_held_before_the_game_is_saved(day, monkeypatch):
    """The held status mail is spooled, then the process dies before the game
    file is saved: the next process drops it (``notify.sweep``), applies the
    order mail again and holds its news anew: one digest, each event once."""
    t = day
    real_holds, real_save = digest_mod.holds, GameStore.save
    armed = {"on": False, "done": False}

    def holds(*args, **kwargs):
        held = real_holds(*args, **kwargs)
        if held and not armed["done"]:
            armed["on"] = True
        return held

    def save(self, record, *args, **kwargs):
        if armed["on"] and not armed["done"]:
            armed["done"] = True
            raise Crash("killed after the held mail was spooled, before the save")
        return real_save(self, record, *args, **kwargs)

    monkeypatch.setattr(digest_mod, "holds", holds)
    monkeypatch.setattr(GameStore, "save", save)
    when = START
    with pytest.raises(Crash):
        while when < START.replace(hour=21):
            step(t, when)
            when += timedelta(minutes=30)
    monkeypatch.setattr(digest_mod, "holds", real_holds)
    monkeypatch.setattr(GameStore, "save", real_save)
    t.m.close()
    t.m = Moderator(t.config, clock=lambda: t.now[0])  # the next process
    when += timedelta(minutes=10)
    while when < START.replace(hour=21):
        step(t, when)
        when += timedelta(minutes=30)
    settle(t, START.replace(hour=21))
    step(t, START.replace(hour=22), frozen=GAMES)
    assert len(t.digests) == 1
    assert _told(t) == _expected(t)


def test_the_game_threads_digest_command_wins_in_that_game(day):
    t = day
    t.reply(t.last[(ANN, "lake")], f"Ann <{ANN}>", "digest off")
    t.now[0] = START + timedelta(minutes=10)
    t.cycle()
    assert t.m.bk.game_override(ANN, "lake", "digest") == "off"
    for k in range(6):
        step(t, START + timedelta(minutes=30 * (k + 1)))
    held = digest_mod.held(t.m.spool).get(ANN, [])
    assert "lake" not in {e.meta["game"] for e in held}
    assert Counter(line for line in t.told["lake"] if line in _expected(t)["lake"]) == _expected(t)["lake"]


def test_digest_hours_and_dst():
    assert hour_of("daily") == 18 and hour_of("daily 7") == 7 and hour_of("off") is None and hour_of(None) is None
    assert hour_of("daily 24") is None
    assert [parse_hour(x) for x in ("7", "07", "18:00", "18h", "25", "7:30", "x")] == [7, 7, 18, 18, None, None, None]
    ny = "America/New_York"
    # Saturday 31 Oct 2026, EDT: 18:00 is 22:00 UTC
    assert due_now(datetime(2026, 10, 31, 21, 59, tzinfo=timezone.utc), ny, 18, None) is None
    assert due_now(datetime(2026, 10, 31, 22, 0, tzinfo=timezone.utc), ny, 18, None) == "2026-10-31"
    assert due_now(datetime(2026, 10, 31, 23, 0, tzinfo=timezone.utc), ny, 18, "2026-10-31") is None
    # Sunday 1 Nov, EST since 02:00: 18:00 is 23:00 UTC
    assert due_now(datetime(2026, 11, 1, 22, 30, tzinfo=timezone.utc), ny, 18, "2026-10-31") is None
    assert due_now(datetime(2026, 11, 1, 23, 0, tzinfo=timezone.utc), ny, 18, "2026-10-31") == "2026-11-01"
    # Prague, Sunday 28 Mar 2027: 02:00 does not exist (CET -> CEST): the first cycle after the gap
    pr = "Europe/Prague"
    assert due_now(datetime(2027, 3, 28, 0, 59, tzinfo=timezone.utc), pr, 2, "2027-03-27") is None
    assert due_now(datetime(2027, 3, 28, 1, 0, tzinfo=timezone.utc), pr, 2, "2027-03-27") == "2027-03-28"


def test_person_thread_digest_with_an_hour(day):
    t = day
    t.now[0] = START + timedelta(minutes=5)
    t.reply(t.last[(ANN, "me")], f"Ann <{ANN}>", "digest daily 7\ndigest daily 25")
    (answer,) = t.cycle()
    assert _body(answer) == (
        "Your digest setting is now 'daily 7', for all your games. One digest a day comes at the first cycle "
        "after 07:00 in your time zone (America/New_York), with the news of the games where no move of yours is "
        "due; your moves still come at once.\n\n"
        "'daily 25' is no value of digest; nothing was changed. Write digest daily | daily 7 | off.\n")
    assert t.m.bk.setting(ANN, "digest") == "daily 7"


def test_a_pool_offer_carries_list_unsubscribe_and_its_token_leaves_the_pool(tmp_path):
    from test_pool import Lobby, body, confirm_pool, new_game, to
    from test_signup import H

    lobby = Lobby(tmp_path)
    new_game(lobby)
    confirm_pool(lobby, "zoe@example.net")
    store = GameStore(lobby.config.games_dir)
    lobby.now += H
    tag = f"Re: [pbem:ridge:{store.load('ridge').player_by_name('Bob').secret}] Union Pacific ridge"
    lobby.send("bob@example.org", "resign", subject=tag)
    lobby.cycle()
    lobby.now += H
    lobby.send("bob@example.org", "resign confirm", subject=tag)
    (offer,) = [m for m in lobby.cycle() if to(m) == "zoe@example.net"]
    found = re.fullmatch(r"<mailto:moderator@([\w.-]+)\?subject=unsubscribe%20([A-Za-z0-9_-]{24})>",
                         str(offer["List-Unsubscribe"]).strip())
    assert found and found.group(1) == lobby.config.moderator_address.partition("@")[2]
    token = found.group(2)
    assert lobby.mod.bk.unsubscribe_owner(token) == ("zoe@example.net", "pool")
    assert lobby.mod.bk.pool_of("zoe@example.net")
    lobby.send("zoe@example.net", "This message was automatically generated by Gmail.",
               subject="unsubscribe " + token)
    (answer,) = [m for m in lobby.cycle() if to(m) == "zoe@example.net"]
    assert body(answer) == ("You are out of the substitute pool: no more offers of seats. Write 'substitute on' "
                            "to the moderator to join again.\n")
    assert not lobby.mod.bk.pool_of("zoe@example.net")
    assert lobby.mod.bk.setting("zoe@example.net", "substitute") == "off"


_HELP_PERSON_LINES = {
    "me": "me          one mail with all your games, the moves due, your\n                  settings, vacation bank and record; a reply to it with\n                  one of the commands above applies to all your games",
    "digest daily 18": "digest daily 18\n                  in a reply to \"me\": one mail a day, at 18:00 your\n                  time, with the news of your games; your moves still\n                  come at once (digest off: every mail again)",
    "export me": "export me   a mail with your data across your games, as a file",
    "forget me": "forget me   your address and name removed everywhere (you are\n                  asked to confirm first)",
}


@pytest.mark.parametrize("language", ["en", "es", "de", "cs", "zh"])
def test_the_guides_person_commands_are_understood_as_written(language):
    """The mailed guide (templates/help.txt) shows ``me``, ``digest daily 18``,
    ``export me`` and ``forget me`` in each language; the command as a
    translation writes it (before its explanation) is read as that command in
    the person thread (``people.person_command``), the digest's word for
    ``daily`` too (``resumen diario``, ``Sammelmail täglich``, ``souhrn denně``,
    ``摘要 每天``)."""
    import re

    from moderator import i18n
    from moderator.moderation.people import person_command

    tr = i18n.translations(language)
    for expected, msgid in _HELP_PERSON_LINES.items():
        text = tr.gettext(msgid)
        assert language == "en" or text != msgid, (language, expected)
        written = re.split(r" {2,}|\n", text, maxsplit=1)[0]
        assert person_command(written, language) == expected, (language, written)
        help_text = (Path(__file__).resolve().parents[1] / "templates" / "help.txt").read_text("utf-8")
        assert msgid in help_text


@pytest.mark.parametrize("line,language,expected", [
    ("resumen diario 7", "es", "digest daily 7"), ("Resumen diario", "es", "digest daily"),
    ("Sammelmail täglich", "de", "digest daily"), ("zusammenfassung taglich 20", "de", "digest daily 20"),
    ("souhrn denně 6", "cs", "digest daily 6"), ("摘要 每日", "zh", "digest daily"),
    ("resumen desactivar", "es", "digest off"), ("digest daily", "es", "digest daily"),
])
def test_digest_daily_in_every_language(line, language, expected):
    from moderator.moderation.people import person_command

    assert person_command(line, language) == expected


def test_a_digest_turned_on_after_its_hour_first_comes_the_next_day(day):
    """Ann turns her digest off, then on again for 07:00 at 08:05 New York time
    (12:05 UTC): that day counts as done, so the news held from then on wait
    for 07:00 the next day instead of coming with the next cycle (a new user's
    check: the first digest came at once, with one event)."""
    t = day
    t.now[0] = START + timedelta(minutes=1)
    t.reply(t.last[(ANN, "me")], f"Ann <{ANN}>", "digest off")
    t.cycle()
    t.now[0] = START + timedelta(minutes=5)
    t.reply(t.last[(ANN, "me")], f"Ann <{ANN}>", "digest daily 7")
    t.cycle()
    assert t.m.bk.setting(ANN, "digest") == "daily 7"
    assert t.m.bk.digest_day(ANN) == "2026-10-31"  # 08:05 EDT: today's 07:00 is past
    when = START + timedelta(minutes=10)
    for _ in range(6):  # an hour and more of play: news held, no digest that day
        step(t, when)
        when += timedelta(minutes=15)
    assert _held_games(t) and t.digests == []
    # the next day (New York left DST in the night: 07:00 EST is 12:00 UTC) it is due
    assert digest_mod.due_now(datetime(2026, 11, 1, 11, 59, tzinfo=timezone.utc), "America/New_York", 7,
                              "2026-10-31") is None
    assert digest_mod.due_now(datetime(2026, 11, 1, 12, 5, tzinfo=timezone.utc), "America/New_York", 7,
                              "2026-10-31") == "2026-11-01"
    step(t, datetime(2026, 11, 1, 12, 5, tzinfo=timezone.utc), frozen=GAMES)
    assert len(t.digests) == 1


@needs_chromium
def test_the_digest_reads_on_a_phone_in_every_language(day, tmp_path):
    """The digest's HTML part in each of the five languages, in headless
    Chromium at 390 and 1280 px, light and dark: nothing beyond the viewport,
    every game's section there; screenshots (390 px) in
    ``tests/artifacts/digest/`` to be looked at."""
    from browser import run_chromium
    from test_mail_phone import frame_file, measure

    t = day
    step(t, START)  # a round of play: every game has news
    post = t.m._post()
    parts = []
    for gid in GAMES:
        rec = t.store.load(gid)
        parts.append((rec, rec.player_by_name(SEAT[gid]), list(rec.game.events[-3:])))
    mails = {lang: digest_mod.digest_mail(post, ANN, parts, "America/New_York", 18, lang)
             for lang in ("en", "es", "de", "cs", "zh")}
    for lang, m in mails.items():
        html = m.get_body(preferencelist=("html",))
        assert html is not None, lang
        text = html.get_content()
        assert all(gid in text for gid in GAMES), lang
    artifacts = Path(__file__).parent / "artifacts" / "digest"
    artifacts.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        sub = tmp_path / scheme
        sub.mkdir()
        results = measure(mails, sub, dark=scheme == "dark")
        for key, r in results.items():
            width = int(key.split("@")[1])
            assert "error" not in r, (key, r)
            assert r["scrollWidth"] <= width and r["tooWide"] == [], (key, r)
        pages = sub / "shots"
        pages.mkdir()
        for lang, m in mails.items():
            page = pages / frame_file(m, pages, lang)
            shot = artifacts / f"{lang}-390-{scheme}.png"
            shot.unlink(missing_ok=True)
            flags = ["--force-dark-mode"] if scheme == "dark" else []
            run_chromium("--hide-scrollbars", *flags, f"--screenshot={shot}", "--window-size=390,1200",
                         page.as_uri(), tmp=tmp_path)
            assert shot.is_file(), lang
