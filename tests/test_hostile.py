"""Hostile and real-world mail through whole cycles on Maildirs (issue 12, the
moderation half): the duplicate key, the duplicate record of authenticated mails
only, orders with unreadable lines, loops, one game's error, a new user's findings."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid

from test_cycle import PLAYERS, Harness, text_of, thread_subject, title_of
from moderator.mail.threads import thread_token

CASES = Path(__file__).with_name("mail") / "cases2"


@pytest.fixture
def h(tmp_path):
    return Harness(tmp_path)


def ann_start(h) -> str:
    """A start legal for Ann in the harness's game."""
    return f"start {sorted(h.load().game.share_hands['Ann'])[0]}"


def case(h, name: str, n: int = 0) -> list[bytes]:
    """The mails of a case file of tests/mail/cases2, filled in for Ann of ``h``'s
    game (its ``start EPRG`` made a start legal for her)."""
    rec = h.load()
    raw = (CASES / name).read_bytes()
    raw = raw.replace(b"{{SECRET}}", rec.player_by_name("Ann").secret.encode())
    raw = raw.replace(b"{{THREAD}}", rec.threads["Ann"].encode())
    raw = raw.replace(b"{{N}}", str(n).encode())
    raw = raw.replace(b"start EPRG", ann_start(h).encode())
    return re.split(rb"\r?\n%%NEXT%%\r?\n", raw)


def deliver(h, raw: bytes) -> None:
    h.inbox.add(raw)


def message(h, sender, body, message_id=None, secret=None, subject=None, **headers):
    """A mail to the moderator (not yet delivered)."""
    msg = EmailMessage(policy=policy.default)
    msg["From"] = sender
    msg["To"] = h.config.moderator_address
    msg["Subject"] = subject if subject is not None else f"Re: [pbem:ridge:{secret}] Union Pacific ridge: your turn"
    msg["Message-ID"] = message_id or make_msgid(domain="example.org")
    for k, v in headers.items():
        msg[k.replace("_", "-")] = v
    msg.set_content(body)
    return msg


def with_id(h, sender, body, message_id, secret):
    msg = message(h, sender, body, message_id, secret)
    h.inbox.add(msg.as_bytes())
    return msg


# ------------------------------------------------------------------ 1. the duplicate key

def test_duplicate_delivery_without_message_id_applied_once_answered_never(h):
    h.sent()
    first, second = case(h, "09_duplicate_delivery_no_message_id.eml")
    deliver(h, first)
    report = h.run()
    assert report.applied == 1, report.summary()
    applied = h.load().history
    assert len(applied) == 1
    h.sent()
    before = h.path.read_bytes()
    deliver(h, second)
    report = h.run()
    assert report.applied == 0 and report.refused == 0 and report.duplicates == 1, report.summary()
    assert h.path.read_bytes() == before
    assert h.sent() == []  # neither applied nor answered
    assert not list(h.inbox.keys())


def test_duplicate_delivery_in_the_same_cycle(h):
    h.sent()
    for raw in case(h, "09_duplicate_delivery_no_message_id.eml"):
        deliver(h, raw)
    report = h.run()
    assert (report.applied, report.refused, report.duplicates) == (1, 0, 1), report.summary()
    assert len(h.load().history) == 1
    assert [m for m in h.sent() if "Ann" in text_of(m) and "order" in title_of(m)] == []


# ------------------------------------------------------------------ 2. only authenticated mails are duplicates

def test_forged_mail_with_a_wrong_secret_does_not_block_the_real_players_message_id(h):
    h.sent()
    mid = "<stolen-1@example.org>"
    with_id(h, "ann@example.org", ann_start(h), mid, secret="zzzzzzzz")
    report = h.run()
    assert report.refused == 1 and report.applied == 0
    (r,) = h.sent()
    assert title_of(r).endswith("secret missing or wrong")
    # the same forged mail again: answered once only
    with_id(h, "ann@example.org", ann_start(h), mid, secret="zzzzzzzz")
    report = h.run()
    assert report.refused == 0 and report.duplicates == 1 and h.sent() == []
    # the real player's order with the same Message-ID is applied
    with_id(h, "ann@example.org", ann_start(h), mid, secret=h.secret("Ann"))
    report = h.run()
    assert report.applied == 1, report.summary()
    assert len(h.load().history) == 1


def test_stranger_with_a_players_secret_does_not_block_the_players_message_id(h):
    h.sent()
    mid = "<stolen-2@example.org>"
    with_id(h, "mallory@evil.example", ann_start(h), mid, secret=h.secret("Ann"))
    report = h.run()
    assert report.ignored == 1
    (warning,) = h.sent()
    assert str(warning["To"]) == "ann@example.org"
    assert title_of(warning).endswith("a mail in your name was refused")
    with_id(h, "ann@example.org", ann_start(h), mid, secret=h.secret("Ann"))
    report = h.run()
    assert report.applied == 1, report.summary()


def test_an_authenticated_refusal_still_makes_its_message_id_a_duplicate(h):
    h.sent()
    mid = "<mine-3@example.org>"
    with_id(h, "ann@example.org", "fly to the moon", mid, secret=h.secret("Ann"))
    assert h.run().refused == 1
    h.sent()
    with_id(h, "ann@example.org", ann_start(h), mid, secret=h.secret("Ann"))
    report = h.run()
    assert report.duplicates == 1 and report.applied == 0 and h.sent() == []


# ------------------------------------------------------------------ 3. a complete turn above unreadable lines

def start_all(h):
    from test_cycle import start_all as start
    return start(h)


def applied_case(h, name: str) -> list:
    """Deliver the one mail of case ``name``; it must be applied (Ann's start).
    Returns the mails sent."""
    h.sent()
    [raw] = case(h, name)
    deliver(h, raw)
    report = h.run()
    assert (report.applied, report.refused) == (1, 0), report.summary()
    assert h.load().history[0]["player"] == "Ann"
    return h.sent()


def test_signature_without_delimiter_start_applied_and_signature_listed(h):
    mails = applied_case(h, "04_signature_no_delimiter_phone.eml")
    (note,) = [m for m in mails if "not read" in title_of(m)]
    assert str(note["Subject"]) == thread_subject("Ann") and title_of(note) == "applied; lines not read"
    body = text_of(note)
    assert f"Your order was applied: {ann_start(h)}." in body
    assert "  > not read (signature)  Ann Example\n" in body
    assert "  > not read (signature)  Office +1 555 0100 | Mobile +1 555 0199\n" in body
    assert "Nothing was changed" not in body
    assert "Welcome to Union Pacific" not in body  # the quoted original is not quoted back


def test_outlook_ru_header_block_start_applied_without_a_note(h):
    mails = applied_case(h, "02_outlook_ru_header.eml")
    assert not [m for m in mails if "not read" in title_of(m) or "refused" in title_of(m)]


def test_iso2022jp_start_applied_nothing_garbled_quoted_back(h):
    mails = applied_case(h, "06_iso2022jp_body.eml")
    for m in mails:
        assert "\x1b" not in text_of(m) and "$B" not in text_of(m)


def _invest(rec):
    mover = rec.game.to_move
    return mover, f"invest {sorted(rec.game.share_hands[mover])[0]}\ndiscard {rec.game.track_hands[mover][0]}"


@pytest.mark.parametrize("tail,note", [
    ("Take care,\nBob", True),                # a new user's real mail: "'care' is not a company"
    ("Mach's gut\nJörg", False),              # the order parser skips it by itself
    ("Greetings from the Rockies!\nPS: KCC to Denver next time, Ann - Team UP 2026", True),  # no table knows it
    ("This e-mail is confidential. If you received it in error, delete it.", False),
])
def test_a_complete_turn_is_applied_above_a_sign_off(h, tail, note):
    rec = start_all(h)
    mover, turn = _invest(rec)
    h.sent()
    h.order(mover, f"{turn}\n\n{tail}")
    report = h.run()
    assert (report.applied, report.refused) == (1, 0), report.summary()
    assert h.load().history[-1]["player"] == mover
    notes = [m for m in h.sent() if "not read" in title_of(m)]
    assert len(notes) == int(note)
    if note:
        body = text_of(notes[0])
        assert "Your order was applied: invest " in body
        for line in tail.splitlines()[-1:]:  # the line the turn could not be read with
            assert re.search(rf"  > not read( \(\S+\))?  {re.escape(line)}\n", body), body


@pytest.mark.parametrize("tail,failed", [
    ("redarw plain", "redarw plain"),      # a mistyped order below the turn is never dropped
    ("Take care\nbuidl WW CHY-DEN plain", "buidl WW CHY-DEN plain"),
])
def test_a_mistyped_order_below_a_turn_is_refused_not_dropped(h, tail, failed):
    rec = start_all(h)
    mover, turn = _invest(rec)
    h.sent()
    before = h.path.read_bytes()
    h.order(mover, f"{turn}\n{tail}")
    report = h.run()
    assert (report.applied, report.refused) == (0, 1), report.summary()
    assert h.path.read_bytes() == before
    (r,) = [m for m in h.sent() if "order refused" in title_of(m)]
    body = text_of(r)
    assert "  > FAILED  " in body and re.search(rf"  > [^\n]*{re.escape(failed)}\n", body)


def test_a_refusal_shows_each_line_and_why_it_was_not_read(h):
    h.sent()
    [raw] = case(h, "04_signature_no_delimiter_phone.eml")
    deliver(h, raw.replace(ann_start(h).encode(), b"start XYZZY"))
    report = h.run()
    assert report.refused == 1 and report.applied == 0
    (r,) = h.sent()
    body = text_of(r)
    assert "  > FAILED  start XYZZY\n" in body
    assert "  > not read (signature)  Logistics Coordinator | Example Freight Ltd.\n" in body
    assert "Nothing was changed" in body


# ------------------------------------------------------------------ 4. loops

def test_vacation_responder_answered_twice_a_day_then_silence(h, caplog):
    from datetime import datetime, timedelta, timezone
    day = datetime(2031, 3, 1, 8, tzinfo=timezone.utc)
    h.mod.clock = lambda: day
    h.sent()
    rec = h.mod.store.load("ridge")  # 2031 is years past any deadline: no clock here
    rec.settings["deadline"] = None
    h.mod.store.save(rec)
    before = h.path.read_bytes()
    answers = []
    with caplog.at_level("INFO", logger="pbem"):
        for n in range(4):
            [raw] = case(h, "08_vacation_reply_no_autosubmitted.eml", n)
            deliver(h, raw)
            report = h.run()
            assert report.applied == 0 and not report.errors, report.summary()
            answers.append(len(h.sent()))
            assert not list(h.inbox.keys())
    assert answers == [1, 1, 0, 0]
    assert h.path.read_bytes() == before  # no state change
    assert "no order and no command" in caplog.text and "not answering again until tomorrow" in caplog.text
    assert "I am travelling" in caplog.text
    day += timedelta(days=1)  # a new day: answered again (twice at most)
    [raw] = case(h, "08_vacation_reply_no_autosubmitted.eml", 7)
    deliver(h, raw)
    h.run()
    assert len(h.sent()) == 1


def test_notices_of_mails_in_a_players_name_are_limited_per_day(h):
    h.sent()
    for cycle in range(3):
        for i in range(4):
            h.inbox.add(message(h, f"forger{i}@evil.example", "start UP", secret=h.secret("Ann")).as_bytes())
        report = h.run()
        assert report.ignored == 4
    warnings = [m for m in h.sent() if title_of(m).endswith("a mail in your name was refused")]
    assert len(warnings) == 2
    assert all(str(m["To"]) == "ann@example.org" for m in warnings)


def test_command_answers_count_toward_the_per_cycle_limit(h):
    h.sent()
    limit = h.config.max_replies_per_sender
    for i in range(limit + 2):
        h.order("Ann", "help" if i % 2 else "status")
    report = h.run()
    assert report.fetched == limit + 2
    assert len(h.sent()) == limit
    assert not list(h.inbox.keys())


def test_secret_new_is_answered_beyond_the_limit(h):
    h.sent()
    limit = h.config.max_replies_per_sender
    for i in range(limit):
        h.order("Ann", "help")
    h.order("Ann", "secret new")
    h.run()
    mails = h.sent()
    assert len(mails) == limit + 1
    new = h.secret("Ann")
    assert any(new in text_of(m) for m in mails)


# ------------------------------------------------------------------ 5. one game's error never stops the others

def two_games(h):
    h.mod.create_game("mesa", PLAYERS, seed=7)
    h.sent()
    mesa = h.mod.store.load("mesa")
    return mesa


def test_an_error_building_one_games_status_mails_does_not_stop_the_others(h, monkeypatch):
    from moderator.moderation import notify
    mesa = two_games(h)
    real = notify.status_mail

    def broken(post, record, player, *a, **kw):
        if record.id == "ridge":
            raise ValueError("header value contains a newline")
        return real(post, record, player, *a, **kw)

    monkeypatch.setattr(notify, "status_mail", broken)
    h.order("Ann", ann_start(h))
    h.mail("ann@example.org", f"start {sorted(mesa.game.share_hands['Ann'])[0]}",
           subject=f"[pbem:mesa:{mesa.player_by_name('Ann').secret}] start")
    report = h.run()
    assert report.applied == 2, report.summary()
    assert any("game ridge" in e and "status mails" in e for e in report.errors), report.errors
    sent = h.sent()
    assert sorted(str(m["To"]).lower() for m in sent if "mesa" in str(m["Subject"])) == \
        sorted(a.lower() for _, a in PLAYERS)
    assert not any("ridge" in str(m["Subject"]) for m in sent if str(m["To"]) != h.config.operator)
    monkeypatch.setattr(notify, "status_mail", real)  # repaired: the next cycle catches up
    report = h.run()
    assert not report.errors
    assert len([m for m in h.sent() if "ridge" in str(m["Subject"])]) == 3


def test_an_error_handling_one_games_mail_does_not_stop_the_others(h, monkeypatch):
    from moderator.moderation import decide
    mesa = two_games(h)
    real = decide.in_game

    def broken(om, key, record, **kw):
        if record.id == "ridge":
            raise KeyError("boom")
        return real(om, key, record, **kw)

    monkeypatch.setattr(decide, "in_game", broken)
    h.order("Ann", ann_start(h))
    h.mail("ann@example.org", f"start {sorted(mesa.game.share_hands['Ann'])[0]}",
           subject=f"[pbem:mesa:{mesa.player_by_name('Ann').secret}] start")
    report = h.run()
    assert report.applied == 1 and len(report.errors) == 1, report.summary()
    assert len(h.mod.store.load("mesa").history) == 1
    assert not list(h.inbox.keys())


# ------------------------------------------------------------------ 6. findings of a new user

def test_a_refusal_beside_secret_new_carries_the_new_secret(h):
    h.sent()
    old = h.secret("Ann")
    h.order("Ann", "secret new\nstart XYZZY")
    report = h.run()
    assert report.refused == 1
    new = h.secret("Ann")
    assert new != old
    mails = h.sent()
    refusal = next(m for m in mails if title_of(m) == "order refused")
    assert str(refusal["Message-ID"]).endswith(f".{thread_token('ridge', new)}.pbem.ridge@pbem.localhost>")
    assert any(f"Your new secret for game ridge is {new}." in text_of(m) for m in mails)
    assert {str(m["Subject"]) for m in mails} == {thread_subject("Ann")}
    assert not any(thread_token("ridge", old) in str(m["Message-ID"]) for m in mails)


@pytest.mark.parametrize("what", ["secret_wrong", "too_large", "unknown_game", "warned"])
def test_answers_to_a_registered_player_carry_their_thread(h, what):
    h.mod.max_size = 5000
    h.sent()
    secret = h.secret("Bob")
    if what == "secret_wrong":
        h.mail("bob@example.org", "status", secret="zzzzzzzz")
    elif what == "too_large":
        h.mail("bob@example.org", "status\n" + "x" * 8000, subject="no tag at all")
    elif what == "unknown_game":
        h.mail("bob@example.org", "status", subject="[pbem:nosuch:abcdefgh] hello")
    else:
        h.inbox.add(message(h, "mallory@evil.example", "status", secret=secret).as_bytes())
    h.run()
    (r,) = h.sent()
    # their thread's Subject (no secret) and their token, so that hitting Reply works
    assert str(r["Subject"]) == thread_subject("Bob") and secret not in str(r["Subject"])
    assert str(r["Message-ID"]).endswith(f".{thread_token('ridge', secret)}.pbem.ridge@pbem.localhost>")
    assert str(r["To"]).lower() == "bob@example.org"  # the registered address


def test_a_refusal_quotes_at_most_30_lines(h):
    h.sent()
    # 300 lines: the most a mail may have (MAX_ORDER_LINES; more are refused unread, test_linecap.py)
    lines = [f"fly KCC to the moon {i}" for i in range(300)]
    h.order("Ann", "\n".join(lines))
    assert h.run().refused == 1
    (r,) = h.sent()
    body = text_of(r)
    assert body.count("  > ") == 30
    assert "(270 more lines of your mail not shown)" in body
    assert len(r.as_bytes()) < 20_000


def test_a_failed_run_records_no_success(h):
    import shutil
    shutil.rmtree(h.config.games_dir)
    report = h.run()
    assert report.errors and "games directory" in report.errors[0]
    assert h.mod.bk.last_success() is None


@pytest.mark.parametrize("line", ["game: Ridge", "Game = RIDGE"])
def test_game_line_in_another_case_finds_the_game(h, line):
    h.sent()
    h.mail("ann@example.org", f"{line}\nsecret: {h.secret('Ann')}\n{ann_start(h)}", subject="my start")
    report = h.run()
    assert report.applied == 1, report.summary()


def test_game_line_in_another_case_is_unknown_when_ambiguous(h):
    h.mod.create_game("RIDGE2", PLAYERS, seed=3)
    h.sent()
    # 'ridge2' matches 'RIDGE2' only: found; nothing matches 'Ridge3'
    h.mail("ann@example.org", f"game: ridge2\nsecret: {h.mod.store.load('RIDGE2').player_by_name('Ann').secret}\nhelp",
           subject="help")
    h.mail("ann@example.org", "game: Ridge3\nhelp", subject="help")
    h.run()
    mails = h.sent()
    # Ann plays two games: the unknown game's answer cannot be put in one of her threads
    assert sorted(str(m["Subject"]) for m in mails) == [thread_subject("Ann", "RIDGE2"),
                                                        "Union Pacific Ridge3: unknown game"]
    assert sorted(title_of(m) for m in mails) == ["UNION PACIFIC BY MAIL: HOW TO GIVE ORDERS (game RIDGE2)",
                                                 "unknown game"]


def test_vacation_responder_without_the_tag_is_limited_too(h):
    h.sent()
    answers = []
    for n in range(4):
        [raw] = case(h, "08_vacation_reply_no_autosubmitted.eml", n)
        raw = re.sub(rb"\[pbem:ridge:\w+\] ", b"", raw)  # the responder drops the tag
        deliver(h, raw)
        h.run()
        answers.append([title_of(m) for m in h.sent()])
    assert [len(a) for a in answers] == [1, 1, 0, 0]
    assert answers[0][0].strip().endswith("secret missing or wrong")


def test_a_player_without_the_tag_is_still_answered_for_orders(h):
    h.sent()
    for n in range(4):
        h.mail("ann@example.org", ann_start(h), subject="Re: Union Pacific ridge: your turn")
        h.run()
        assert len(h.sent()) == 1  # each mistake with an order in it is answered
