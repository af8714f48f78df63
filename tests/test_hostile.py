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

from test_cycle import PLAYERS, Harness, text_of

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
    assert [m for m in h.sent() if "Ann" in text_of(m) and "order" in str(m["Subject"])] == []


# ------------------------------------------------------------------ 2. only authenticated mails are duplicates

def test_forged_mail_with_a_wrong_secret_does_not_block_the_real_players_message_id(h):
    h.sent()
    mid = "<stolen-1@example.org>"
    with_id(h, "ann@example.org", ann_start(h), mid, secret="zzzzzzzz")
    report = h.run()
    assert report.refused == 1 and report.applied == 0
    (r,) = h.sent()
    assert str(r["Subject"]).endswith("secret missing or wrong")
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
    assert str(warning["Subject"]).endswith("a mail in your name was refused")
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


def test_signature_without_delimiter_start_applied_and_signature_listed(h):
    h.sent()
    [raw] = case(h, "04_signature_no_delimiter_phone.eml")
    deliver(h, raw)
    report = h.run()
    assert (report.applied, report.refused) == (1, 0), report.summary()
    assert h.load().history[0]["player"] == "Ann"
    mails = h.sent()
    (note,) = [m for m in mails if "not read" in str(m["Subject"])]
    assert str(note["Subject"]) == (f"[pbem:ridge:{h.secret('Ann')}] Union Pacific ridge: "
                                    "applied; lines not read")
    body = text_of(note)
    assert f"Your order was applied: {ann_start(h)}." in body
    assert "  > not read (signature)  Ann Example\n" in body
    assert "  > not read (signature)  Office +1 555 0100 | Mobile +1 555 0199\n" in body
    assert "Nothing was changed" not in body
    assert "Welcome to Union Pacific" not in body  # the quoted original is not quoted back


def test_outlook_ru_header_block_start_applied_without_a_note(h):
    h.sent()
    [raw] = case(h, "02_outlook_ru_header.eml")
    deliver(h, raw)
    report = h.run()
    assert (report.applied, report.refused) == (1, 0), report.summary()
    assert not [m for m in h.sent() if "not read" in str(m["Subject"]) or "refused" in str(m["Subject"])]


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
    notes = [m for m in h.sent() if "not read" in str(m["Subject"])]
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
    (r,) = [m for m in h.sent() if "order refused" in str(m["Subject"])]
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
