"""The work per mail is bounded, and a mail's limits are worded clearly
(templates/words/limits.txt): too many order lines, an order in the Subject
alone, a share kind not held, the size of a mail too large.  Real RFC 5322
replies dropped into the inbox Maildir, handled by real moderator cycles
(``Table`` of test_newuser_finds.py)."""
from __future__ import annotations

import ast
import time

import pytest
from pathlib import Path

from moderator.render.words import names
from test_newuser_finds import OPERATOR, start_all, t, text_of, to  # noqa: F401 - t: the fixture

SOURCES = Path(__file__).resolve().parent.parent / "moderator"


def _raw_reply(t, name, subject, body):
    """``name`` replies to the moderator's latest mail to them with ``subject`` and
    ``body`` (str) as they are."""
    address = {"Ann": "ann@example.org", "Bob": "bob@example.org", "Cy": "cy@example.net"}[name]
    last = t.last_to(address)
    t.count += 1
    head = (f"From: {name} Example <{address}>\r\nTo: Union Pacific moderator <{t.config.moderator_address}>\r\n"
            f"Subject: {subject}\r\nDate: Tue, 1 Dec 2026 10:{t.count:02d}:00 +0100\r\n"
            f"Message-ID: <{t.count}.{name.lower()}@client.example>\r\n"
            f"In-Reply-To: {last['Message-ID']}\r\nReferences: {last['Message-ID']}\r\n"
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
    t.inbox.add(head.encode() + body.replace("\n", "\r\n").encode())


def _due(t):
    """Ann's deadline as the record has it: the wait's start plus the game's deadline."""
    from datetime import datetime, timedelta

    rec = t.load()
    return datetime.fromisoformat(rec.clock["since"]) + timedelta(seconds=rec.settings["deadline"])


def test_a_256_kB_mail_of_short_lines_is_refused_unread_in_a_fraction_of_a_second(t):
    """64,000 lines "hi" (256,000 bytes of body, under the 256 kB limit): each line
    ran the command check about four times and a fuzzy match of order words, and
    the reply's quoted lines searched the whole mail once per line: about 57 s of
    CPU in one cycle, every other game waiting.  Now it is refused unread: it has
    more than MAX_ORDER_LINES order lines."""
    start_all(t)
    before = t.path.read_bytes()
    t.reply("Ann", "hi\n" * 64_000)
    cpu = time.process_time()
    report = t.run()
    cpu = time.process_time() - cpu
    assert report.refused == 1 and report.applied == 0 and not report.errors, report.summary()
    assert t.path.read_bytes() == before
    (note,) = to(t.sent(), "ann@example.org")
    assert text_of(note) == (
        "Union Pacific, game ridge: too many lines\n\n"
        "Your mail has 64,000 lines of orders; the moderator reads at most 300, so it read none of them. "
        "Send your turn alone: one order per line, on top of the reply.\n\n"
        "Nothing was changed: the game is as it was. Send a corrected order when ready.\n"
        f"Your move is due by {_due(t):%Y-%m-%d %H:%M} UTC.\n")
    assert cpu < 5, cpu  # about 0.6 s here; 57 s before
    # the next mail is handled as usual
    order = str(t.load().game.legal_actions("Ann")[0])
    t.reply("Ann", order + "\n")
    assert t.run().applied == 1


def test_the_line_cap_counts_order_lines_only(t):
    """MAX_ORDER_LINES order lines are read (the turn on top, the rest text not
    read); one more is refused; blank and quoted lines do not count."""
    from moderator.moderation.interpret import MAX_ORDER_LINES

    assert MAX_ORDER_LINES == 300
    start_all(t)
    rec = t.load()
    order = str(rec.game.legal_actions("Ann")[0])
    t.reply("Ann", order + "\n" + "2\n" * 300)
    assert t.run().refused == 1
    (note,) = to(t.sent(), "ann@example.org")
    assert "Your mail has 301 lines of orders; the moderator reads at most 300" in text_of(note)
    quoted = "\n".join(f"> {i}" for i in range(10_000))
    t.reply("Ann", order + "\n" + "2\n\n" * 299 + "\n" * 5_000
            + "\nOn Tue, Dec 1, 2026 at 10:00 AM moderator wrote:\n" + quoted + "\n")
    report = t.run()
    assert report.applied == 1, report.summary()
    assert t.load().history[-1]["order"] == order


def test_an_order_in_the_subject_of_an_empty_mail_is_named(t):
    """The order written only in the Subject, the body empty: the answer says
    orders are read from the body and quotes the Subject, not "quoted text is
    ignored"; the game is unchanged."""
    start_all(t)
    before = t.path.read_bytes()
    order = str(t.load().game.legal_actions("Ann")[0])
    _raw_reply(t, "Ann", f"Re: {order}", "")
    report = t.run()
    assert report.refused == 1, report.summary()
    assert t.path.read_bytes() == before
    (note,) = to(t.sent(), "ann@example.org")
    assert text_of(note).startswith(
        "Union Pacific, game ridge: orders are read from the body\n\n"
        "The moderator reads orders from the body of your mail (its text), not from the Subject, and the "
        f"body had no orders. Your Subject reads like an order: \"{order}\". To play it, write it in the "
        "body of your reply, one order per line.\n\nWhat is legal now:\n")
    # the same with the old Subject tag [pbem:GAME:SECRET] in front
    secret = t.load().player_by_name("Ann").secret
    _raw_reply(t, "Ann", f"AW: [pbem:ridge:{secret}] {order}", "\n")
    assert t.run().refused == 1
    (note,) = to(t.sent(), "ann@example.org")
    assert f"Your Subject reads like an order: \"{order}\"." in text_of(note)


def test_an_empty_body_is_named_and_a_quoted_only_body_keeps_its_answer(t):
    """An empty body under the thread's own Subject: "the body is empty"; a body of
    quoted lines only keeps "quoted text is ignored"."""
    start_all(t)
    subject = "Re: " + str(t.last_to("ann@example.org")["Subject"])
    _raw_reply(t, "Ann", subject, "\n\n")
    assert t.run().refused == 1
    (note,) = to(t.sent(), "ann@example.org")
    assert text_of(note).startswith(
        "Union Pacific, game ridge: no orders found\n\nThe body of your mail (its text) is empty. The "
        "moderator reads orders from the body only, not from the Subject: write your orders in the body "
        "of your reply, one per line.\n\nWhat is legal now:\n")
    _raw_reply(t, "Ann", subject, "On Tue, Dec 1, 2026 at 10:00 AM moderator wrote:\n> IT IS YOUR TURN\n")
    assert t.run().refused == 1
    (note,) = to(t.sent(), "ann@example.org")
    assert "The moderator found no orders in your mail (quoted text is ignored" in text_of(note)


def test_investing_a_share_kind_not_held_names_it(t):
    """"invest two DM" holding no DM share: "you hold no DM share", not a count."""
    start_all(t)
    rec = t.load()
    assert "DM" not in rec.game.share_hands["Ann"]
    t.reply("Ann", "invest two DM\n")
    assert t.run().refused == 1
    (note,) = to(t.sent(), "ann@example.org")
    assert ("Order not legal: you hold no DM share: you can invest only the shares in your hand\n"
            in text_of(note))


def test_a_mail_too_large_says_its_size_with_a_unit_in_the_players_locale(t):
    """The size and the limit with a unit, by Babel in the player's locale (Ann
    speaks German: "293,1 KiB", decimal comma; the units of 1024 bytes are the
    IEC binary ones, as the README gives the default limit: 256 KiB)."""
    start_all(t)
    t.reply("Ann", "language de\n")
    t.run()
    t.sent()
    t.reply("Ann", "x" * 300_000 + "\n")
    size = len(t.inbox.get_bytes(sorted(t.inbox.keys())[-1]))
    report = t.run()
    assert report.refused == 1, report.summary()
    (note,) = to(t.sent(), "ann@example.org")
    shown = f"{size / 1024:.1f}".replace(".", ",")
    assert (f"Deine Mail ist {shown} KiB groß; der Moderator liest Mails bis 256 KiB."
            in " ".join(text_of(note).split())), text_of(note)
    assert str(size) not in text_of(note)


def test_every_limits_word_is_used():
    """Each macro of templates/words/limits.txt is named in the code: as a
    ``Refuse(reason=..., words="limits")`` (with its ``_title``) or a
    ``word("limits", NAME)`` call."""
    used = set()
    for path in SOURCES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            fn = getattr(node.func, "id", getattr(node.func, "attr", ""))
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            keys = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            if fn == "word" and args[:1] == ["limits"] and len(args) > 1:
                used.add(args[1])
            if fn == "Refuse" and keys.get("words") == "limits":
                used |= {keys["reason"], keys["reason"] + "_title"}
    assert used == names("limits")


def test_a_game_masters_mail_of_too_many_lines_does_none_of_them(t):
    """The game master's mail of 400 lines "pause" is answered with how many lines
    it had, none done (the reply is not 400 results long); a stranger's mail of
    64,000 lines in a player's name is refused as before, in well under a second."""
    start_all(t)
    secret = t.load().game_master["secret"]
    before = t.path.read_bytes()
    t.inbox.add((f"From: Game Master <{OPERATOR}>\r\nTo: {t.config.moderator_address}\r\n"
                 "Subject: ridge\r\nDate: Tue, 1 Dec 2026 23:30:00 +0100\r\nMessage-ID: <gm.many@example.com>\r\n"
                 "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"
                 f"game: ridge\r\nsecret: {secret}\r\n" + "pause\r\n" * 400).encode())
    report = t.run()
    assert report.commands == 1 and not report.errors, report.summary()
    assert t.load().settings["paused"] is None and t.path.read_bytes() == before
    (answer,) = to(t.sent(), OPERATOR)
    assert ("your mail has 400 lines; at most 300 are read, so none of them was done: send your commands "
            "alone, one per line") in text_of(answer)
    assert text_of(answer).count("pause") < 5
    t.inbox.add(("From: Ann <ann@example.org>\r\nTo: " + t.config.moderator_address + "\r\nSubject: ridge\r\n"
                 "Message-ID: <stranger.many@example.com>\r\nDate: Tue, 1 Dec 2026 23:31:00 +0100\r\n\r\n"
                 "game: ridge\r\n" + "hi\r\n" * 64_000).encode())
    cpu = time.process_time()
    report = t.run()
    assert time.process_time() - cpu < 5
    assert report.refused == 1, report.summary()
    (note,) = to(t.sent(), "ann@example.org")
    assert text_of(note).startswith("Union Pacific, game ridge: secret missing or wrong\n")


def _fresh_mail(t, name, body):
    """``name`` writes a new mail (no reply: no In-Reply-To, no game in the Subject)."""
    address = {"Ann": "ann@example.org", "Bob": "bob@example.org", "Cy": "cy@example.net"}[name]
    t.count += 1
    head = (f"From: {name} Example <{address}>\r\nTo: Union Pacific moderator <{t.config.moderator_address}>\r\n"
            f"Subject: my move\r\nDate: Tue, 1 Dec 2026 10:{t.count:02d}:00 +0100\r\n"
            f"Message-ID: <{t.count}.{name.lower()}@client.example>\r\n"
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
    t.inbox.add(head.encode() + body.replace("\n", "\r\n").encode())


def test_an_answer_to_a_player_of_one_game_names_it_though_the_mail_does_not(t):
    """A new mail (no reply, no game named) too large: the sender plays only in
    ridge, so the answer goes into their ridge thread and its title names ridge
    (it said "game ?")."""
    start_all(t)
    _fresh_mail(t, "Ann", "x" * 300_000 + "\n")
    assert t.run().refused == 1
    (note,) = to(t.sent(), "ann@example.org")
    assert text_of(note).partition("\n")[0] == "Union Pacific, game ridge: mail too large"
    assert str(note["Subject"]) == "Union Pacific ridge (Ann)"


@pytest.mark.parametrize("size,language,shown", [
    (262_144, "en", "256 KiB"), (300_123, "de", "293,1 KiB"), (300_123, "cs", "293,1 KiB"),
    (28_698_579, "en", "27.4 MiB"), (28_698_579, "es", "27,4 MiB"), (3 * 1024 ** 3, "zh", "3 GiB"),
    (999, "en", "999 byte")])
def test_a_size_in_binary_units_as_the_limit_is(size, language, shown):
    """The default limit, 262,144 bytes, is 256 KiB (README: max_size): sizes are
    in units of 1024 bytes, so the unit is the IEC binary one (CLDR's kB is 1000)."""
    from moderator.render.when import byte_size

    assert byte_size(size, language) == shown
