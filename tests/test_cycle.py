"""The moderation cycle on the embedded default transport (local Maildirs), with real
RFC 5322 messages: routing, authentication, refusals, commands, duplicates, secrecy."""
from __future__ import annotations

from datetime import datetime, timedelta
import json
import mailbox
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid

import pytest

from moderator.config import Config
from moderator.moderation.cycle import Moderator
from moderator.mail.threads import thread_token
from moderator.render import status_context
from moderator.store.gamefile import GameStore
from moderator.render.events import english
from outbox import unseen_mails

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "Bob@Example.org"), ("Cy", "cy@example.net")]


class Harness:
    """A moderator on Maildirs under a temp dir, with helpers to mail it."""

    def __init__(self, tmp_path):
        self.config = Config(
            games_dir=tmp_path / "games",
            maildir_inbox=tmp_path / "mail" / "inbox",
            maildir_outbox=tmp_path / "mail" / "outbox",
            spool_dir=tmp_path / "spool",
        )
        self.mod = Moderator(self.config)
        self.record = self.mod.create_game("ridge", PLAYERS, seed=42)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()

    @property
    def path(self):
        return self.mod.store.path("ridge")

    def secret(self, name):
        return self.load().player_by_name(name).secret

    def load(self):
        return GameStore(self.config.games_dir).load("ridge")

    def mail(self, sender, body, subject=None, secret=None, name=None, **headers):
        msg = EmailMessage(policy=policy.default)
        msg["From"] = sender if name is None else f"{name} <{sender}>"
        msg["To"] = self.config.moderator_address
        if subject is None:
            subject = f"Re: [pbem:ridge:{secret}] Union Pacific ridge: your turn"
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid(domain="example.org")
        for k, v in headers.items():
            msg[k.replace("_", "-")] = v
        msg.set_content(body)
        self.inbox.add(msg.as_bytes())
        return msg

    def order(self, name, body, **kw):
        addr = dict(PLAYERS)[name]
        return self.mail(addr, body, secret=self.secret(name), **kw)

    def run(self):
        return self.mod.run_cycle()

    def sent(self):
        return unseen_mails(self.outbox, self.seen)


def text_of(msg):
    return msg.get_body(preferencelist=("plain",)).get_content()


def title_of(msg):
    """What a mail is about, now that every mail to a player of a game has one
    Subject (issue 11): its text's first line, after "Union Pacific, game GAME: "."""
    line = text_of(msg).partition("\n")[0]
    return line.split(": ", 1)[1] if line.startswith("Union Pacific, game ") else line


def thread_subject(name, game="ridge"):
    """The one Subject of every mail to player ``name`` of ``game`` (words/threads.txt)."""
    return f"Union Pacific {game} ({name})"


@pytest.fixture
def h(tmp_path):
    return Harness(tmp_path)


def start_all(h, choices=None):
    """Everyone makes an initial investment (first share kind in hand by default)."""
    rec = h.load()
    for name, _ in PLAYERS:
        share = (choices or {}).get(name) or sorted(rec.game.share_hands[name])[0]
        h.order(name, f"start {share}")
    report = h.run()
    assert report.applied == 3, report.summary()
    return h.load()


def test_welcome_mails_carry_own_secret_and_hand(h):
    mails = h.sent()
    assert len(mails) == 3
    rec = h.load()
    for m in mails:
        to = str(m["To"])
        p = rec.player_by_address(to)
        assert str(m["Subject"]) == thread_subject(p.name) and p.secret not in str(m["Subject"])
        assert str(m["Message-ID"]).endswith(f".{thread_token('ridge', p.secret)}.pbem.ridge@pbem.localhost>")
        body = text_of(m)
        assert f"Your secret for this game is: {p.secret}" in body
        assert "Track cards: " + ", ".join(sorted(rec.game.track_hands[p.name])) in body
        assert str(m["Auto-Submitted"]) == "auto-generated"
        # the order guide is included
        assert "invest" in body and "build" in body
    addresses = {str(m["To"]) for m in mails}
    assert addresses == {"ann@example.org", "bob@example.org", "cy@example.net"}


def test_initial_investments_hidden_until_all_chose(h):
    h.sent()
    rec = h.load()
    ann_share = sorted(rec.game.share_hands["Ann"])[0]
    h.order("Ann", f"start {ann_share}")
    report = h.run()
    assert report.applied == 1
    rec = h.load()
    assert rec.game.phase == "initial"
    assert rec.game.initial_choice == {"Ann": ann_share}
    mails = {str(m["To"]): text_of(m) for m in h.sent()}
    assert set(mails) == {"ann@example.org", "bob@example.org", "cy@example.net"}
    assert f"Your initial investment (hidden until all have chosen): {ann_share}" in mails["ann@example.org"]
    for other in ("bob@example.org", "cy@example.net"):
        assert "Your initial investment" not in mails[other]
        assert "Ann has chosen an initial investment." in mails[other]
    # the other players' contexts do not contain Ann's choice anywhere
    for name in ("Bob", "Cy"):
        ctx = status_context(rec, name, [])
        assert ctx["view"]["you"]["initial_choice"] is None
        assert "initial_choice" not in json.dumps(ctx["view"]["players"])


def test_status_context_differs_only_in_own_secrets(h):
    rec = start_all(h)
    contexts = {name: status_context(rec, name, []) for name, _ in PLAYERS}
    publics = []
    for name, ctx in contexts.items():
        view = dict(ctx["view"])
        you = view.pop("you")
        assert you["name"] == name
        assert you["track_cards"] == sorted(rec.game.track_hands[name])
        assert you["shares"] == sorted(rec.game.share_hands[name])
        assert ctx["secret"] == rec.player_by_name(name).secret
        publics.append(json.dumps(view, sort_keys=True))
        # nothing else in the context names the other players' secrets
        dumped = json.dumps({k: v for k, v in ctx.items() if k not in ("companies", "board")},
                            sort_keys=True, default=str)
        for other, _ in PLAYERS:
            if other != name:
                assert rec.player_by_name(other).secret not in dumped
    assert len(set(publics)) == 1  # the public part is the same for everyone
    # the public part shows hand sizes only
    for p in contexts["Ann"]["view"]["players"]:
        assert set(p) == {"name", "invested", "track_cards", "shares_in_hand", "money", "chosen"}
        assert isinstance(p["track_cards"], int) and isinstance(p["shares_in_hand"], int)


def refused(h, name, body, expect_in_reply, **kw):
    before = h.path.read_bytes()
    h.sent()
    msg = h.order(name, body, **kw) if name else None
    report = h.run()
    assert h.path.read_bytes() == before, "the game file changed"
    replies = h.sent()
    return report, replies, msg


def test_bad_syntax_refused_with_reason_and_legal(h):
    start_all(h)
    rec = h.load()
    mover = rec.game.to_move
    report, replies, msg = refused(h, mover, "take stack\nfly KCC to the moon", None)
    assert report.refused == 1 and report.applied == 0
    assert len(replies) == 1
    r = replies[0]
    assert str(r["To"]).lower() == dict(PLAYERS)[mover].lower()
    assert str(r["In-Reply-To"]) == msg["Message-ID"]
    body = text_of(r)
    assert "  > not applied  take stack\n  > FAILED  fly KCC to the moon\n" in body
    assert "Order not understood: I do not know the order 'fly'" in body
    assert "What is legal now:" in body and "\n  build " in body
    assert "Nothing was changed" in body
    assert str(r["Auto-Submitted"]) == "auto-replied"


def test_illegal_placement_refused(h):
    start_all(h)
    rec = h.load()
    mover = rec.game.to_move
    g = rec.game
    # a section far from WW's network: WW cannot reach MIA's sections at the start
    sid = next(s.id for s in g.board.sections_at("MIA"))
    card = g.track_hands[mover][0]
    report, replies, _ = refused(h, mover, f"build WW {sid} {card}\ntake stack", None)
    assert report.refused == 1
    body = text_of(replies[0])
    assert f"Order not legal: you cannot build WW on {sid}" in body
    assert "Nothing was changed" in body


def test_not_your_turn(h):
    start_all(h)
    rec = h.load()
    other = next(n for n, _ in PLAYERS if n != rec.game.to_move)
    report, replies, _ = refused(h, other, "invest UP\ndiscard plain", None)
    assert report.refused == 1
    body = text_of(replies[0])
    assert f"Order not legal: it is not your turn; it is {rec.game.to_move}'s turn" in body


def test_wrong_secret(h):
    start_all(h)
    h.sent()
    before = h.path.read_bytes()
    mover = h.load().game.to_move
    h.mail(dict(PLAYERS)[mover], "invest UP", secret="zzzzzzzz")
    report = h.run()
    assert h.path.read_bytes() == before
    (r,) = h.sent()
    assert title_of(r) == "secret missing or wrong" and str(r["Subject"]) == thread_subject(mover)
    assert "zzzzzzzz" not in text_of(r)
    assert report.refused == 1


def test_unknown_game_from_player_gets_reply(h):
    h.sent()
    before = h.path.read_bytes()
    h.mail("ann@example.org", "status", subject="[pbem:nosuch:abcdefgh] hello")
    report = h.run()
    assert h.path.read_bytes() == before
    (r,) = h.sent()
    assert "There is no game 'nosuch'." in text_of(r)
    # the answer names the games the sender plays in (issue 11)
    assert "There is no game 'nosuch'. You play in: ridge. Reply" in " ".join(text_of(r).split())


def test_unknown_sender_changes_nothing_and_gets_no_reply(h):
    h.sent()
    before = h.path.read_bytes()
    secret = h.secret("Ann")
    h.mail("mallory@evil.example", "start UP", secret=secret)
    report = h.run()
    assert h.path.read_bytes() == before
    mails = h.sent()
    # no answer to the stranger; Ann (whose secret was used) is told
    assert [str(m["To"]) for m in mails] == ["ann@example.org"]
    assert "m…@evil.example" in text_of(mails[0]) and "mallory" not in text_of(mails[0])  # not shown whole
    assert secret not in text_of(mails[0])
    assert report.ignored == 1


def test_address_compared_case_insensitively(h):
    h.sent()
    rec = h.load()
    share = sorted(rec.game.share_hands["Bob"])[0]
    h.mail("BOB@example.ORG", f"start {share}", secret=rec.player_by_name("Bob").secret, name="Bob B.")
    assert h.run().applied == 1
    assert h.load().game.initial_choice == {"Bob": share}


def test_secret_line_accepted_without_tag(h):
    h.sent()
    rec = h.load()
    share = sorted(rec.game.share_hands["Cy"])[0]
    h.mail("cy@example.net", f"game: ridge\nsecret: {rec.player_by_name('Cy').secret}\nstart {share}",
           subject="my move")
    assert h.run().applied == 1


def test_same_mail_twice_applied_once(h):
    h.sent()
    rec = h.load()
    share = sorted(rec.game.share_hands["Ann"])[0]
    msg = h.order("Ann", f"start {share}")
    h.inbox.add(msg.as_bytes())  # delivered twice
    report = h.run()
    assert report.applied == 1 and report.duplicates == 1
    assert len(h.load().history) == 1


def test_a_whole_turn_applies_and_everyone_gets_status(h):
    start_all(h)
    h.sent()
    rec = h.load()
    g = rec.game
    mover = g.to_move
    company, sid, card = None, None, None
    for c in sorted(g.board.companies):
        for s, t in g.placements(c):
            if t in g.track_hands[mover]:
                company, sid, card = c, s, t
                break
        if company:
            break
    assert company, "no build possible in this seed"
    msg = h.order(mover, f"Build {company} {sid} {card}\nTake stack\n\n-- \nsent from my phone")
    report = h.run()
    assert report.applied == 1, report.summary()
    rec2 = h.load()
    assert rec2.history[-1]["order"] == f"build {company} {sid} {card}; take stack"
    assert rec2.history[-1]["message_id"] == msg["Message-ID"]
    assert rec2.game.trains_on_board(company) == g.trains_on_board(company) + 1
    mails = h.sent()
    assert len(mails) == 3
    to_mover = next(m for m in mails if str(m["To"]).lower() == dict(PLAYERS)[mover].lower())
    assert str(to_mover["In-Reply-To"]) == msg["Message-ID"]
    events = english(rec2.game.events[len(g.events):])
    assert events and events[0].startswith(f"{mover} built {company} on {sid} ({card} track)")
    for m in mails:
        for e in events:
            assert f"  - {e}" in text_of(m)


def test_commands_help_history_rules_status(h):
    h.sent()
    h.order("Ann", "help\nhistory\nrules\nstatus")
    report = h.run()
    assert report.commands == 1 and report.applied == 0
    mails = h.sent()
    assert {str(m["Subject"]) for m in mails} == {thread_subject("Ann")}
    titles = sorted(title_of(m) for m in mails)
    assert titles == ["UNION PACIFIC BY MAIL: HOW TO GIVE ORDERS (game ridge)", "choose your initial investment", "history",
                      "rules in force"]


def test_machine_mail_ignored_without_reply(h):
    h.sent()
    before = h.path.read_bytes()
    h.mail("ann@example.org", "I am out of office", secret=h.secret("Ann"), Auto_Submitted="auto-replied")
    report = h.run()
    assert report.ignored == 1
    assert h.sent() == []
    assert h.path.read_bytes() == before
    ignored = mailbox.Maildir(str(h.config.maildir_inbox), create=False).get_folder("ignored")
    assert len(ignored) == 1


def test_next_mail_processed_after_a_bad_one(h):
    h.sent()
    rec = h.load()
    h.inbox.add(b"\xff\xfe garbage without headers\r\n")
    share = sorted(rec.game.share_hands["Ann"])[0]
    h.order("Ann", f"start {share}")
    report = h.run()
    assert report.applied == 1
    assert report.ok, report.errors


def test_bounce_report_shown_to_that_player_in_next_status(tmp_path):
    """A delivery-status report is never answered; it is recorded against the player
    whose address bounced and shown in that player's next status mail only."""
    from pathlib import Path

    h = Harness(tmp_path)
    # register Cy under the address the corpus bounce names
    rec = h.load()
    rec.player_by_name("Cy").address = "anna.novakova@seznam.example.cz"
    h.mod.store.save(rec)
    h.sent()
    raw = (Path(__file__).parent / "mail" / "dsn_postfix.eml").read_bytes()
    h.inbox.add(raw)
    report = h.run()
    assert report.ignored == 1 and h.sent() == []
    share = sorted(rec.game.share_hands["Ann"])[0]
    h.order("Ann", f"start {share}")
    assert h.run().applied == 1
    mails = {str(m["To"]): text_of(m) for m in h.sent()}
    note = "Note: a mail from the moderator to you could not be delivered"
    assert note in mails["anna.novakova@seznam.example.cz"]
    assert note not in mails["ann@example.org"] and note not in mails["bob@example.org"]
    # shown once: the following status mail no longer carries it
    share = sorted(rec.game.share_hands["Bob"])[0]
    h.order("Bob", f"start {share}")
    assert h.run().applied == 1
    mails = {str(m["To"]): text_of(m) for m in h.sent()}
    assert note not in mails["anna.novakova@seznam.example.cz"]


def test_a_bounce_is_told_to_the_player_in_their_language_without_the_servers_words(tmp_path):
    """The bounce note of a Spanish player's next status mail: the kind of the
    bounce in Spanish (a notice came back), never the English bookkeeping
    reason, the bouncing host or an address; the refused kind keeps its code."""
    from pathlib import Path

    from moderator import i18n

    h = Harness(tmp_path)
    rec = h.load()
    cy = rec.player_by_name("Cy")
    cy.address, cy.language = "anna.novakova@seznam.example.cz", "es"
    h.mod.store.save(rec)
    h.sent()
    h.inbox.add((Path(__file__).parent / "mail" / "dsn_postfix.eml").read_bytes())
    assert h.run().ignored == 1
    share = sorted(rec.game.share_hands["Ann"])[0]
    h.order("Ann", f"start {share}")
    assert h.run().applied == 1
    mails = {str(m["To"]): " ".join(text_of(m).split()) for m in h.sent()}
    text = mails["anna.novakova@seznam.example.cz"]
    note = text[text.index("Aviso: no se pudo"):].split("). ")[0] + ")."
    assert note == "Aviso: no se pudo entregarte un correo del moderador (tu sistema de correo lo devolvió)."
    from moderator.moderation.notify import bounce_note

    with i18n.speaking("de"):
        assert bounce_note("refused by the mail server with code 550") == "vom Mailserver mit Code 550 abgelehnt"
        assert bounce_note("bounce report from mailer-daemon@mx.example.org") == \
            "dein Mailsystem hat sie zurückgeschickt"
    assert bounce_note("refused by the mail server") == "refused by the mail server" and bounce_note(None) is None


def test_status_with_an_order_sends_only_the_fresh_status(h):
    """'status' beside an order is answered by the status mail after the order, not
    by a stale one from before it."""
    h.sent()
    rec = h.load()
    share = sorted(rec.game.share_hands["Ann"])[0]
    h.order("Ann", f"status\nstart {share}")
    report = h.run()
    assert report.applied == 1
    to_ann = [m for m in h.sent() if str(m["To"]) == "ann@example.org"]
    assert len(to_ann) == 1
    assert f"Your initial investment (hidden until all have chosen): {share}" in text_of(to_ann[0])


def test_secret_alone_routes_a_player_of_two_games(h):
    """A player in two games who writes only 'secret: ...' (no subject tag) reaches
    the game that secret belongs to."""
    h.mod.create_game("other", [("Ann", "ann@example.org"), ("Zed", "zed@example.org")], seed=9)
    h.sent()
    rec = h.load()
    share = sorted(rec.game.share_hands["Ann"])[0]
    h.mail("ann@example.org", f"secret: {rec.player_by_name('Ann').secret}\nstart {share}",
           subject="my move")
    assert h.run().applied == 1
    assert h.load().game.initial_choice == {"Ann": share}


def test_history_beside_an_order_answers_the_new_position(h):
    """Commands in the same mail as an order are answered after the order: the
    history mail already lists it."""
    h.sent()
    rec = h.load()
    share = sorted(rec.game.share_hands["Ann"])[0]
    h.order("Ann", f"start {share}\nhistory")
    assert h.run().applied == 1
    hist = [m for m in h.sent() if title_of(m) == "history"]
    assert len(hist) == 1
    assert f"  1. Ann: start {share}" in text_of(hist[0])


def test_secret_new_answers_with_the_new_tag_and_the_old_secret_stops_working(h):
    h.sent()
    old = h.secret("Ann")
    h.order("Ann", "secret new\nhelp")
    report = h.run()
    assert report.commands == 1 and report.applied == 0
    new = h.secret("Ann")
    assert new != old
    mails = {"help" if "HOW TO GIVE ORDERS" in title_of(m) else "your new secret": m for m in h.sent()}
    assert set(mails) == {"your new secret", "help"}
    assert {str(m["Subject"]) for m in mails.values()} == {thread_subject("Ann")}
    assert text_of(mails["your new secret"]) == (
        f"Your new secret for game ridge is {new}. The old one no longer works, and neither does "
        "replying to a mail the moderator sent you before this one: reply to this mail or a later "
        f"one, or add the line 'secret: {new}'.\n")
    # both answers carry the token of the new secret (the rotation comes first)
    for m in mails.values():
        assert str(m["Message-ID"]).endswith(f".{thread_token('ridge', new)}.pbem.ridge@pbem.localhost>")
    share = sorted(h.load().game.share_hands["Ann"])[0]
    h.mail("ann@example.org", f"start {share}", secret=old)
    assert h.run().refused == 1
    (r,) = h.sent()
    # to the registered address only, in the player's thread, with the new token (issue 12)
    assert str(r["Subject"]) == thread_subject("Ann") and title_of(r) == "secret missing or wrong"
    assert str(r["Message-ID"]).endswith(f".{thread_token('ridge', new)}.pbem.ridge@pbem.localhost>")


def test_no_orders_found_lists_what_is_legal(h):
    h.sent()
    h.order("Ann", "> start UP\n> (quoted only)")
    report = h.run()
    assert report.refused == 1
    (r,) = h.sent()
    assert str(r["Subject"]) == thread_subject("Ann")
    body = text_of(r)
    assert body.startswith("Union Pacific, game ridge: no orders found\n\n"
                           "The moderator found no orders in your mail (quoted text is ignored: "
                           "write your orders on top of the reply, one per line).\n\nWhat is legal now:\n  start ")
    # the deadline restated: the wait began at the welcome mails (clock.since), 72 h by default
    rec = h.load()
    due = datetime.fromisoformat(rec.clock["since"]) + timedelta(seconds=rec.settings["deadline"])
    assert body.endswith("Nothing was changed: the game is as it was. Send a corrected order when ready.\n"
                         f"Your move is due by {due:%Y-%m-%d %H:%M} UTC.\n")


def test_refused_order_and_a_command_beside_it_are_both_answered(h):
    start_all(h)
    mover = h.load().game.to_move
    other = next(n for n, _ in PLAYERS if n != mover)
    report, replies, _ = refused(h, other, "history\ninvest UP\ndiscard plain", None)
    assert (report.refused, report.commands) == (1, 1)
    assert sorted(title_of(m) for m in replies) == ["history", "order refused"]
    body = text_of(next(m for m in replies if title_of(m) == "order refused"))
    assert f"nothing until your turn (it is {mover}'s turn)" in body
    assert "  > invest UP\n  > discard plain\n" in body


# ------------------------------------------------------------------ the bookkeeping database
def _count_reads(monkeypatch) -> list[str]:
    """Game ids read from disk (``GameStore.read_file``) from now on."""
    reads: list[str] = []
    real = GameStore.read_file

    def read_file(self, game_id):
        reads.append(game_id)
        return real(self, game_id)

    monkeypatch.setattr(GameStore, "read_file", read_file)
    return reads


def test_an_idle_cycle_opens_no_game_file(h, monkeypatch):
    assert h.run().ok  # the welcomes sent; the index knows the game
    reads = _count_reads(monkeypatch)
    report = h.run()
    assert report.ok and report.fetched == 0
    assert reads == []


def test_routing_by_sender_and_strangers_read_the_index_not_the_files(h, monkeypatch):
    assert h.run().ok
    rec = h.load()
    share = sorted(rec.game.share_hands["Ann"])[0]
    reads = _count_reads(monkeypatch)
    secret = rec.player_by_name("Ann").secret
    h.mail("ann@example.org", f"secret: {secret}\nstart {share}", subject="my move")  # Ann's only game
    h.mail("zed@example.org", "status", subject="hello")  # a stranger: not answered
    report = h.run()
    assert report.applied == 1 and report.ignored == 1
    assert set(reads) == {"ridge"}  # loading the game itself (and its status mails) only


def test_a_game_file_copied_in_by_hand_is_found_and_checked_in_full(h, tmp_path):
    assert h.run().ok
    other = Moderator(Config(games_dir=tmp_path / "elsewhere", spool_dir=tmp_path / "spool2",
                             maildir_inbox=tmp_path / "m2" / "in", maildir_outbox=tmp_path / "m2" / "out"))
    other.create_game("copied", [("Dee", "dee@example.org"), ("Eve", "eve@example.org")], seed=5)
    rec = GameStore(tmp_path / "elsewhere").load("copied")
    (h.config.games_dir / "copied.yaml").write_bytes((tmp_path / "elsewhere" / "copied.yaml").read_bytes())
    assert h.run().ok  # found without any command; flagged for a full check
    assert h.mod.bk.games_to_check() == ["copied"]
    assert [r.game_id for r in h.mod.bk.games_of("dee@example.org")] == ["copied"]
    share = sorted(rec.game.share_hands["Dee"])[0]
    secret = rec.player_by_name("Dee").secret
    h.mail("dee@example.org", f"secret: {secret}\nstart {share}", subject="move")  # routed by the index
    assert h.run().applied == 1
    assert h.mod.bk.games_to_check() == []  # replayed and compared, then saved by the moderator


def test_a_game_file_edited_by_hand_is_replayed_in_full_before_use(h, monkeypatch):
    import moderator.store.gamefile as gamefile

    assert h.run().ok
    replays: list[int] = []
    real = gamefile.replay

    def replay(data, board):
        replays.append(len(data.get("history") or []))
        return real(data, board)

    monkeypatch.setattr(gamefile, "replay", replay)
    h.path.write_bytes(h.path.read_bytes() + b"# a comment added by hand\n")  # in place
    rec = h.load()
    replays.clear()
    share = sorted(rec.game.share_hands["Ann"])[0]
    h.order("Ann", f"start {share}")
    assert h.run().applied == 1
    assert replays  # the changed bytes were not trusted
    trusted = h.mod.bk.trusted_digest("ridge")
    import hashlib
    assert trusted == hashlib.sha256(h.path.read_bytes()).hexdigest()  # what the moderator wrote


def test_an_old_moderator_yaml_is_imported_by_the_first_cycle(tmp_path):
    from moderator.store.state import ModeratorState

    config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                    maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool")
    (tmp_path / "games").mkdir()
    old = ModeratorState.load(tmp_path / "spool" / "moderator.yaml")
    old.answered = ["<old@example.org>"]
    old.bounces = {"gone@example.org": "550 no such user"}
    old.save()
    mod = Moderator(config)
    assert mod.run_cycle().ok
    assert mod.bk.answered("<old@example.org>")
    assert mod.bk.bounces() == {"gone@example.org": "550 no such user"}
    assert not (tmp_path / "spool" / "moderator.yaml").exists()
    assert (tmp_path / "spool" / "moderator.yaml.migrated").exists()
