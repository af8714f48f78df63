"""The moderation stages alone, with real RFC 5322 mails: route, authenticate,
interpret, decide (exact verdicts), act (answers keyed by the mail), and the
notices every verdict and mail is worded by."""
from __future__ import annotations

import ast
from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest

from moderator.config import Config
from moderator.mail.read import read_mail
from moderator.mail.threads import thread_token
from moderator.moderation import decide
from moderator.moderation.act import _IGNORED, act
from moderator.moderation.authenticate import authenticate
from moderator.moderation.create import new_game
from moderator.moderation.interpret import interpret, mail_id
from moderator.moderation.report import CycleReport
from moderator.moderation.route import route
from moderator.moderation.send import Post
from moderator.moderation.verdict import (
    Answer, Apply, Duplicate, Ignore, RecordBounce, Refuse, Verdict)
from moderator.render.words import names
from moderator.rules.engine import IllegalAction
from moderator.store.gamefile import GameStore
from moderator.store.bookkeeping import Bookkeeping
from moderator.store.spool import Spool

MODERATOR = "pbem@example.org"
PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]
MAILS = Path(__file__).parent / "mail"
SOURCES = Path(__file__).parent.parent / "moderator"


def mail(sender: str, body: str, subject: str = "orders", max_size: int = 100_000, **headers: str) -> tuple:
    """An RFC 5322 mail from ``sender`` as read by the moderator: ``(OrderMail, key)``."""
    msg = EmailMessage(policy=policy.default)
    msg["From"] = sender
    msg["To"] = MODERATOR
    msg["Subject"] = subject
    msg["Message-ID"] = make_msgid(domain="example.org")
    for k, v in headers.items():
        msg[k.replace("_", "-")] = v
    msg.set_content(body)
    raw = msg.as_bytes()
    om = read_mail(raw, own_address=MODERATOR, max_size=max_size)
    return om, mail_id(om, raw)


def tagged(record, name: str, body: str, secret: str | None = None, **headers: str) -> tuple:
    """A mail of player ``name`` replying to the moderator (the subject tag)."""
    p = record.player_by_name(name)
    return mail(p.address, body, f"Re: [pbem:{record.id}:{secret or p.secret}] Union Pacific", **headers)


@pytest.fixture
def bk(tmp_path):
    with Bookkeeping.in_spool(tmp_path / "spool") as b:
        yield b


@pytest.fixture
def store(tmp_path, bk):
    """The games directory; every save indexed in ``bk`` (as the moderator's)."""
    (tmp_path / "games").mkdir()
    return GameStore(tmp_path / "games", on_save=bk.record_saved)


@pytest.fixture
def record(store):
    rec = new_game(store, "ridge", PLAYERS, seed=42, created=datetime(2031, 3, 1, tzinfo=timezone.utc))
    store.save(rec)
    return rec


def never(_key: str) -> bool:
    return False


def share_of(record, name: str) -> str:
    return sorted(record.game.share_hands[name])[0]


# ------------------------------------------------------------------ screen
def test_screen_a_mail_answered_before_is_a_duplicate():
    om, key = mail("ann@example.org", "start UP")
    v = decide.screen(om, key, max_size=100_000, answered={key}.__contains__, plays=never)
    assert v == Duplicate(key=key, reason="answered")


def test_screen_passes_a_persons_readable_mail_on():
    om, key = mail("ann@example.org", "start UP")
    assert decide.screen(om, key, max_size=100_000, answered=never, plays=never) is None


def test_screen_ignores_an_auto_reply_and_records_a_bounce():
    om, key = mail("ann@example.org", "I am away", Auto_Submitted="auto-replied")
    v = decide.screen(om, key, max_size=100_000, answered=never, plays=never)
    assert v == Ignore(key=key, reason="machine_mail", sender="ann@example.org",
                       detail="Auto-Submitted: auto-replied")
    raw = (MAILS / "dsn_postfix.eml").read_bytes()
    om = read_mail(raw, own_address=MODERATOR)
    v = decide.screen(om, mail_id(om, raw), max_size=100_000, answered=never, plays=never)
    assert v == RecordBounce(key=mail_id(om, raw), address="anna.novakova@seznam.example.cz", sender=om.sender)
    assert v.outcome == "ignored"


def test_screen_refuses_a_large_mail_of_a_player_only():
    om, key = mail("ann@example.org", "start UP\n" + "x" * 400, max_size=300)
    v = decide.screen(om, key, max_size=300, answered=never, plays=lambda a: a == "ann@example.org")
    assert om.oversize
    assert v == Refuse(key=key, reason="mail_too_large", to="ann@example.org",
                       values={"size": om.size, "max_size": 300})
    assert v.outcome == "ignored"
    assert decide.screen(om, key, max_size=300, answered=never, plays=never) == Ignore(
        key=key, reason="stranger_unreadable", sender="ann@example.org")


# ------------------------------------------------------------------ route
def test_route_by_tag_reference_and_only_game(store, bk, record):
    om, _ = tagged(record, "Ann", "status")
    assert route(om, store, bk) == "ridge"
    om, _ = mail("ann@example.org", "status", In_Reply_To="<123.pbem.ridge@example.org>")
    assert om.game_id is None and route(om, store, bk) == "ridge"
    om, _ = mail("ann@example.org", "status")  # no tag, no reference: Ann's only game
    assert route(om, store, bk) == "ridge"
    om, _ = mail("zed@example.org", "status")
    assert route(om, store, bk) is None


def test_mail_for_a_finished_game_is_not_routed_to_it_by_its_sender(store, bk, record):
    record.game.phase = "over"
    store.save(record)
    om, key = mail("ann@example.org", "status")
    assert route(om, store, bk) is None
    v = decide.no_game(om, key, None, plays=lambda a: True)
    assert v == Refuse(key=key, reason="unknown_game", to="ann@example.org",
                       values={"game_id": None, "games": []})
    v = decide.no_game(om, key, None, plays=lambda a: True, games=["oak", "pine"])
    assert v.values == {"game_id": None, "games": ["oak", "pine"]}


def test_a_tagged_order_for_a_finished_game_is_refused(store, bk, record):
    record.game.phase = "over"
    om, key = tagged(record, "Ann", "invest UP; discard plain")
    assert route(om, store, bk) == "ridge"
    v = decide.in_game(om, key, record, answered=never)
    assert isinstance(v, Refuse) and v.reason == "order_not_legal"
    with pytest.raises(IllegalAction) as exc:
        record.game.resolve("Ann", interpret(om.lines, record.game.board).action)
    assert v.values == {"code": exc.value.code, "values": exc.value.values}
    assert (v.to, v.player, v.orders, v.position) == ("ann@example.org", "Ann", ("invest UP; discard plain",), True)


def test_unknown_game_from_a_stranger_is_ignored():
    om, key = mail("zed@example.org", "status", subject="[pbem:nosuch:abcdefgh] hi")
    assert decide.no_game(om, key, "nosuch", plays=never) == Ignore(
        key=key, reason="stranger_no_game", sender="zed@example.org", game_id="nosuch")


# ------------------------------------------------------------------ authenticate
def test_wrong_secret_is_refused(record):
    om, key = tagged(record, "Ann", "status", secret="zzzzzzzz")
    assert authenticate(om, key, record) == Refuse(key=key, reason="secret_wrong", to="ann@example.org",
                                                   game_id="ridge")
    assert decide.in_game(om, key, record, answered=never) == authenticate(om, key, record)


def test_right_secret_names_the_player(record):
    om, key = tagged(record, "Bob", "status")
    assert authenticate(om, key, record) is record.player_by_name("Bob")


def test_a_stranger_with_a_players_secret_is_ignored_and_the_player_warned(record):
    secret = record.player_by_name("Cy").secret
    om, key = mail("mallory@evil.example", "start UP", f"[pbem:ridge:{secret}] x")
    assert authenticate(om, key, record) == Ignore(key=key, reason="sender_unregistered",
                                                   sender="mallory@evil.example", game_id="ridge", warn="Cy")


# ------------------------------------------------------------------ interpret and decide
def test_interpret_splits_commands_from_the_order(record):
    share = share_of(record, "Ann")
    asked = interpret(["history", f"start {share}", "history"], record.game.board)
    assert asked.commands == ("history",) and asked.lines == (f"start {share}",)
    assert asked.has_order and asked.error is None
    assert not interpret(["status"], record.game.board).has_order


def test_command_beside_an_order_is_answered_after_it(record):
    share = share_of(record, "Ann")
    om, key = tagged(record, "Ann", f"history\nstart {share}")
    v = decide.in_game(om, key, record, answered=never)
    action = interpret(om.lines, record.game.board).action
    assert v == Apply(key=key, game_id="ridge", player="Ann", action=action, orders=(f"start {share}",),
                      commands=("history",))
    assert v.commands_key == key + "#commands"


def test_commands_answered_before_are_not_answered_again(record):
    share = share_of(record, "Ann")
    om, key = tagged(record, "Ann", f"history\nstart {share}")
    v = decide.in_game(om, key, record, answered={key + "#commands"}.__contains__)
    assert (v.commands, v.repeat_commands) == ((), True)


def test_commands_alone(record):
    om, key = tagged(record, "Bob", "help\nrules\nhelp")
    assert decide.in_game(om, key, record, answered=never) == Answer(
        key=key, game_id="ridge", player="Bob", commands=("help", "rules"))


def test_duplicate_mail_id_is_not_applied_twice(record):
    share = share_of(record, "Ann")
    om, key = tagged(record, "Ann", f"start {share}\nhistory")
    record.apply("Ann", interpret(om.lines, record.game.board).action, key)
    assert decide.in_game(om, key, record, answered=never) == Duplicate(
        key=key, reason="already_applied", game_id="ridge", player="Ann", commands=("history",))


def test_order_not_understood_names_the_failing_line(record):
    om, key = tagged(record, "Ann", "take stack\nfly KCC to the moon")
    v = decide.in_game(om, key, record, answered=never)
    assert v.reason == "order_not_understood" and v.failed == "fly KCC to the moon"
    assert v.values["reason"].startswith("I do not know the order 'fly'")
    assert (v.with_legal, v.position, v.legal) == (True, True, ())


def test_no_orders_found(record):
    om, key = tagged(record, "Ann", "> start UP")  # quoted text only
    assert decide.in_game(om, key, record, answered=never) == Refuse(
        key=key, reason="no_orders_found", to="ann@example.org", game_id="ridge", player="Ann",
        with_legal=True)


# ------------------------------------------------------------------ act
def test_act_spools_the_refusal_under_the_mails_key(tmp_path, store, bk, record):
    config = Config(games_dir=store.dir, spool_dir=tmp_path / "spool", moderator_address=MODERATOR)
    spool = Spool(config.spool_dir)
    post = Post(config, spool, bk,
                clock=lambda: datetime(2031, 3, 1, tzinfo=timezone.utc))
    om, key = tagged(record, "Ann", "status", secret="zzzzzzzz")
    report = CycleReport()
    verdict = decide.in_game(om, key, record, answered=never)
    assert act(verdict, om, post, store, report, record) == "processed"
    assert report.refused == 1
    (entry,) = spool.entries()
    # a refusal of an unauthenticated mail is kept apart from the duplicate record
    # (issue 12): answered once, but the Message-ID stays free for the real player
    assert entry.meta["answers"] == verdict.reply_key == key + "#unauthenticated"
    assert post.answered(verdict.reply_key) and not post.answered(key)
    # to the registered address only, in the player's thread: its one Subject (no
    # secret) and the token of the player's secret in the Message-ID (issues 11, 12)
    secret = record.player_by_name("Ann").secret
    assert str(entry.message["Subject"]) == "Union Pacific ridge (Ann)"
    assert str(entry.message["Message-ID"]).endswith(f".{thread_token('ridge', secret)}.pbem.ridge@example.org>")
    assert str(entry.message["In-Reply-To"]) == om.message_id


# ------------------------------------------------------------------ notices
def _notice_names_in_code() -> tuple[set[str], set[str], set[str]]:
    """Names worded by ``word("notices", NAME)`` calls and the reasons of ``Refuse(...)``
    and ``Ignore(...)`` verdicts, as string literals in the moderation and render sources."""
    worded, refusals, ignored = set(), set(), set()
    for path in [*(SOURCES / "moderation").glob("*.py"), *(SOURCES / "render").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            fn = getattr(node.func, "id", getattr(node.func, "attr", ""))
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if fn == "word" and args[:1] == ["notices"] and len(args) > 1:
                worded.add(args[1])
            if fn == "Refuse" and any(k.arg == "words" for k in node.keywords):
                continue  # worded by another words file (test_linecap.py: limits)
            if fn in ("Refuse", "Ignore"):
                (refusals if fn == "Refuse" else ignored).update(
                    k.value.value for k in node.keywords if k.arg == "reason" and isinstance(k.value, ast.Constant))
    return worded, refusals, ignored


def test_every_notice_has_a_macro_and_every_macro_is_used():
    worded, refusals, ignored = _notice_names_in_code()
    assert refusals == {"mail_unreadable", "unknown_game", "secret_wrong",
                        "no_orders_found", "order_not_understood", "order_not_legal", "order_late"}
    used = worded | refusals | {r + "_title" for r in refusals}
    assert used == names("notices")
    # mails not answered are named too; their names are for the operator's log
    assert ignored == set(_IGNORED) == {"machine_mail", "no_sender", "stranger_unreadable",
                                        "stranger_no_game", "sender_unregistered"}


def test_verdicts_are_values():
    v = Refuse(key="<a@b>", reason="secret_wrong", to="ann@example.org")
    with pytest.raises(AttributeError):
        v.reason = "other"  # frozen
    assert isinstance(v, Verdict) and v == Refuse(key="<a@b>", reason="secret_wrong", to="ann@example.org")


def test_route_by_sender_opens_a_file_only_to_tell_several_games_apart(store, bk, record, monkeypatch):
    reads = []
    real = GameStore.read_file
    monkeypatch.setattr(GameStore, "read_file", lambda self, gid: reads.append(gid) or real(self, gid))
    om, _ = mail("ann@example.org", "status")  # Ann's only running game: the index tells
    assert route(om, store, bk) == "ridge" and reads == []
    other = new_game(store, "vale", [("Ann", "ann@example.org"), ("Zed", "zed@example.org")], seed=7,
                     created=datetime(2031, 3, 1, tzinfo=timezone.utc))
    store.save(other)
    om, _ = mail("ann@example.org", "status")  # two running games, no secret: cannot tell
    assert route(om, store, bk) is None and reads == []
    om, _ = mail("ann@example.org", f"secret: {other.player_by_name('Ann').secret}\nstatus")
    assert route(om, store, bk) == "vale" and sorted(set(reads)) <= ["ridge", "vale"] and reads
