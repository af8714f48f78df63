"""Press (issue 29): ``to NAME:`` / ``to all:`` messages relayed between the players
of a four-player game through the real Moderator, as timelines of ``pbem run
--now`` cycles (``test_deadlines.Clocked``): private, public and observer press
under each rule, a reply to a relayed message, the limits, a mute, the archive
page after the end, and hostile names and texts.  Every mail of each test is
scanned: no player's address is ever in a mail to another player."""
from __future__ import annotations

import re
from datetime import timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import make_msgid, parseaddr

import pytest

from moderator.moderation import press as press_mod
from moderator.moderation.press import MAX_PRESS_CHARS, PRESS_PER_DAY, header
from test_deadlines import T0, Clocked, body, deliver

H = timedelta(hours=1)
FOUR = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net"),
        ("Dee", "dee@example.com")]
OBSERVER = "watch@example.org"


class Game(Clocked):
    """A four-player game (observer ``watch@example.org``, game master
    ``gm@example.org``) whose every mail is kept for the address scan."""

    def __init__(self, tmp_path, press="private", archive="never", **kw):
        settings = {"press": press, "press_archive": archive, **kw.pop("settings", {})}
        super().__init__(tmp_path, players=FOUR, settings=settings, **kw)
        rec = self.load()
        rec.observers.append(OBSERVER)
        from moderator.store.gamefile import GameStore
        GameStore(self.config.games_dir).save(rec)
        self.all: list = []
        self.run(T0)
        self.take()

    def take(self):
        got = self.sent()
        self.all += got
        return got

    def send(self, name, text, at=None, reply_to=None, attach=None, html=None):
        rec = self.load()
        msg = EmailMessage(policy=policy.default)
        msg["From"] = self.addr[name]
        msg["To"] = self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:{self.gid}:{rec.player_by_name(name).secret}] Union Pacific {self.gid}"
        msg["Message-ID"] = make_msgid(domain="example.org")
        if reply_to is not None:
            msg["In-Reply-To"] = reply_to["Message-ID"]
            msg["References"] = reply_to["Message-ID"]
        msg.set_content(text + "\n")
        if html is not None:
            msg.add_alternative(html, subtype="html")
        if attach is not None:
            msg.add_attachment(attach, maintype="application", subtype="octet-stream", filename="plan.bin")
        deliver(self.inbox, msg.as_bytes(), self.now)
        self.run(at or self.now + H)
        return self.take()

    def scan(self):
        """No mail to one player (or an observer) carries another player's address
        anywhere in its bytes; every relayed mail's From is the moderator's address."""
        for m in self.all:
            raw = m.as_bytes().decode("utf-8", "replace").lower()
            rcpt = parseaddr(str(m["To"]))[1].lower()
            for _, address in FOUR:
                if address != rcpt:
                    assert address not in raw, (address, rcpt, str(m["Subject"]))
            assert parseaddr(str(m["From"]))[1] == self.config.moderator_address


def flat(msg) -> str:
    """A mail's text with its line breaks and indentation made single spaces
    (the answer wraps its lines at 70 columns)."""
    return " ".join(body(msg).split())


def no_address_leak(mails, players):
    """No mail to one address carries another player's address in its bytes."""
    for m in mails:
        raw = m.as_bytes().decode("utf-8", "replace").lower()
        rcpt = parseaddr(str(m["To"]))[1].lower()
        assert not [a for _, a in players if a != rcpt and a in raw], (rcpt, str(m["Subject"]))


def to_(msgs, address):
    return [m for m in msgs if parseaddr(str(m["To"]))[1] == address]


def relayed(msgs, address):
    return [m for m in to_(msgs, address) if "writes to" in body(m) or "answers your message" in body(m)]


def test_private_and_public_press_with_orders_above(tmp_path):
    g = Game(tmp_path)
    got = g.send("Ann", "to Bob, cy: Shall we build KCC together?\n\nThink about it.\n"
                        "to all: Good luck everyone!\n-- \nAnn Smith, ann@example.org")
    # Bob and Cy get the private message from "Ann (game ridge)", in their threads
    for who in ("bob@example.org", "cy@example.net"):
        ms = relayed(got, who)
        assert len(ms) == 2
        private = [m for m in ms if "writes to you and" in body(m)][0]
        assert parseaddr(str(private["From"]))[0] == "Ann (game ridge)"
        assert "Shall we build KCC together?\n\nThink about it." in body(private)
        assert "Good luck" not in body(private)
        token = g.load().player_by_name("Bob" if who.startswith("bob") else "Cy").secret
        from moderator.mail.threads import thread_token
        assert thread_token("ridge", token) in str(private["Message-ID"])
    assert "writes to you and Cy:" in body([m for m in relayed(got, "bob@example.org")
                                           if "Shall" in body(m)][0])
    # Dee gets only the public one; the observer gets the public one; nobody gets the signature
    dee = relayed(got, "dee@example.com")
    assert [("Good luck everyone!" in body(m)) for m in dee] == [True]
    watch = to_(got, OBSERVER)
    assert len(watch) == 1 and "Good luck everyone!" in body(watch[0]) and "Shall we" not in body(watch[0])
    assert all("Ann Smith" not in body(m) for m in got if parseaddr(str(m["To"]))[1] != "ann@example.org")
    # the game master gets a copy of both; Ann one confirmation naming who got each
    assert len(to_(got, "gm@example.org")) == 2
    mine = to_(got, "ann@example.org")
    assert len(mine) == 1
    text = body(mine[0])
    assert "messages relayed" in text
    assert "to Bob, cy: Shall we build KCC together?\n  Relayed to Bob, Cy." in text
    assert "to all: Good luck everyone!\n  Relayed to Bob, Cy, Dee and 1 observer." in text
    rec = g.load()
    assert [(e["from"], e["to"], e["text"]) for e in rec.press] == [
        ("Ann", ["Bob", "Cy"], "Shall we build KCC together?\n\nThink about it."),
        ("Ann", "all", "Good luck everyone!")]
    assert rec.press[0]["at"] == (T0 + H).isoformat(timespec="seconds")
    assert rec.history == []  # the rules engine never saw it
    g.scan()


def test_orders_above_press_are_applied_and_a_reply_goes_back_to_the_sender_only(tmp_path):
    g = Game(tmp_path)
    rec = g.load()
    share = rec.game.hands["Ann"][0] if hasattr(rec.game, "hands") else None
    import random
    from moderator.players.heuristic import choose
    order = str(choose(rec.game, "Ann", random.Random(1))).replace("; ", "\n")
    got = g.send("Ann", order + "\nto Bob: my first choice is made")
    assert len(g.load().history) == 1  # the order above was applied
    to_bob = relayed(got, "bob@example.org")
    assert len(to_bob) == 1 and "my first choice is made" in body(to_bob[0])
    # Bob replies to the relayed mail, quoting it: only the new text goes to Ann, not Cy or Dee
    quoted = "\n".join("> " + l for l in body(to_bob[0]).splitlines())
    got = g.send("Bob", "Fine with me.\n\nOn Tue, Ann wrote:\n" + quoted, reply_to=to_bob[0])
    ann = relayed(got, "ann@example.org")
    assert len(ann) == 1 and "Bob answers your message" in body(ann[0])
    assert "Fine with me." in body(ann[0]) and "my first choice" not in body(ann[0])
    assert relayed(got, "cy@example.net") == [] and relayed(got, "dee@example.com") == []
    conf = to_(got, "bob@example.org")
    assert len(conf) == 1 and "(your reply to Ann)\n  Relayed to Ann." in body(conf[0])
    assert g.load().press[-1]["reply"] is True and g.load().press[-1]["to"] == ["Ann"]
    g.scan()


@pytest.mark.parametrize("rule", ["none", "public"])
def test_the_press_rule(tmp_path, rule):
    g = Game(tmp_path, press=rule)
    got = g.send("Cy", "to Dee: psst\nto all: hello")
    dee = relayed(got, "dee@example.com")
    conf = body(to_(got, "cy@example.net")[0])
    if rule == "none":
        assert dee == [] and to_(got, OBSERVER) == []
        assert " ".join(conf.split()).count("Not relayed: this game has no press") == 2
        assert g.load().press == []
    else:
        assert [("hello" in body(m)) for m in dee] == [True]
        assert "to Dee: psst Not relayed: in this game messages go to everyone only." in " ".join(conf.split())
        assert "1 of 2 messages relayed" in conf
        assert len(to_(got, OBSERVER)) == 1
    # the rules mail names the rule
    got = g.send("Cy", "rules")
    assert {"none": "Press: none", "public": "Press: public"}[rule] in body(to_(got, "cy@example.net")[0])
    g.scan()


def test_limits_size_per_day_unknown_name_and_attachments(tmp_path):
    g = Game(tmp_path)
    long = "x" * (MAX_PRESS_CHARS + 1)
    got = g.send("Dee", "to Ann: " + long)
    assert relayed(got, "ann@example.org") == []
    assert (f"Not relayed: the message has {MAX_PRESS_CHARS + 1} characters, at most {MAX_PRESS_CHARS} "
            "are relayed.") in flat(to_(got, "dee@example.com")[0])
    got = g.send("Dee", "to dee: a note to myself")
    assert "Not relayed: the message names only you." in flat(to_(got, "dee@example.com")[0])
    assert [m for m in got if "a note to myself" in body(m) and "writes" in body(m)] == []
    got = g.send("Dee", "to Ann, Zed: hi")
    assert "Not relayed: no player is called Zed. The players: Ann, Bob, Cy, Dee" in \
        flat(to_(got, "dee@example.com")[0])
    got = g.send("Dee", "to Ann: see attached", attach=b"\x00\x01secret plan")
    assert "see attached" in body(relayed(got, "ann@example.org")[0])
    assert all(not m.is_multipart() or all(p.get_content_disposition() != "attachment" for p in m.walk())
               for m in got)
    assert "Your mail had 1 attachment: it was not relayed (only text is)." in flat(to_(got, "dee@example.com")[0])
    # the day's limit: PRESS_PER_DAY messages per UTC day (one sent already), the next refused
    for i in range(PRESS_PER_DAY - 1):  # (refused messages do not count)
        g.send("Dee", f"to Bob: note {i}", at=g.now + timedelta(minutes=1))
    assert len(g.load().press) == PRESS_PER_DAY
    got = g.send("Dee", "to Bob: one too many", at=g.now + timedelta(minutes=1))
    assert relayed(got, "bob@example.org") == []
    assert f"Not relayed: you sent {PRESS_PER_DAY} messages today" in flat(to_(got, "dee@example.com")[0])
    # the next UTC day it goes
    next_day = (g.now + timedelta(days=1)).replace(hour=0, minute=5)
    got = g.send("Dee", "to Bob: one too many", at=next_day)
    assert len(relayed(got, "bob@example.org")) == 1
    g.scan()


def test_mute_and_unmute_by_the_game_master(tmp_path):
    g = Game(tmp_path)
    from moderator.moderation.cycle import Moderator
    gm = Moderator(g.config, clock=lambda: g.now)
    out = gm.manage(g.gid, "mute bob")
    assert "Bob is muted" in out
    got = g.send("Bob", "to all: spam spam")
    assert relayed(got, "ann@example.org") == [] and to_(got, OBSERVER) == []
    assert "Not relayed: the game master has muted your messages" in flat(to_(got, "bob@example.org")[0])
    assert g.load().muted == ["Bob"]
    assert "Bob is no longer muted" in gm.manage(g.gid, "unmute Bob")
    got = g.send("Bob", "to all: sorry")
    assert len(relayed(got, "ann@example.org")) == 1
    g.scan()
    # pbem replay labels Bob's refused press as the player's, not the game master's
    # (a new user's check)
    from click.testing import CliRunner

    import pbem

    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(f"games_dir: {g.config.games_dir}\nspool_dir: {g.config.spool_dir}\n", encoding="utf-8")
    result = CliRunner().invoke(pbem.main, ["--config", str(cfg), "replay", g.gid], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = [l for l in result.output.splitlines() if l.endswith(": press")]
    assert len(lines) == 1 and lines[0].startswith("  player: ")


def test_the_archive_page_shows_press_after_the_end(tmp_path):
    from moderator.archive.site import build_site
    from moderator.store.gamefile import GameStore

    g = Game(tmp_path, archive="after-end")
    g.send("Ann", "to Cy: secret <b>plan</b>")
    g.send("Bob", "to all: hello & welcome")
    store = GameStore(g.config.games_dir)
    site = tmp_path / "site"
    build_site(store, site)
    page = (site / "games" / g.gid / "index.html").read_text()
    assert "Messages between the players" not in page and "secret &lt;b" not in page, page[-3000:]
    from moderator.archive.export import export_data
    assert "press" not in export_data(store.read_data(g.gid))  # a public export keeps it private too
    assert len(export_data(store.read_data(g.gid), with_secrets=True)["press"]) == 2
    from moderator.moderation.cycle import Moderator
    Moderator(g.config, clock=lambda: g.now).manage(g.gid, "end")
    g.take()
    # messages still go once the game master ended the game ("gg"), orders do not
    got = g.send("Cy", "to all: good game")
    assert len([m for m in got if "good game" in body(m) and "writes to all" in body(m)]) == 4  # and the observer
    assert "Relayed to Ann, Bob, Dee and 1 observer." in body(to_(got, "cy@example.net")[0])
    build_site(store, site)
    page = (site / "games" / g.gid / "index.html").read_text()
    assert "Messages between the players" in page
    assert "secret &lt;b&gt;plan&lt;/b&gt;" in page and "hello &amp; welcome" in page
    assert "to Cy" in page and "to all" in page
    public = export_data(store.read_data(g.gid))["press"]
    assert [(e["from"], e["to"], e["text"]) for e in public] == [("Ann", ["Cy"], "secret <b>plan</b>"),
                                                                ("Bob", "all", "hello & welcome"),
                                                                ("Cy", "all", "good game")]
    assert all(set(e) == {"from", "to", "at", "text"} for e in public)  # no Message-IDs
    g.scan()


def test_hostile_names_and_texts_cannot_inject_headers(tmp_path):
    hostile = "Eve\u202e\r\nBcc: x@evil.test"
    g = Game(tmp_path)
    rec = g.load()
    # a seat named with a bidi override and CR/LF (as a hand-edited game file could)
    assert press_mod.display_name(hostile) == "Eve Bcc: x at evil.test"
    # (a line "Bcc: ..." starts a quoted mail's header block for the reader: the text ends there)
    text = ("to Bob: hi\r\n=?utf-8?q?=0D=0ABcc=3A_y@evil.test?=\n"
            "\u202eevil\u2066 text\nwrite me at ann@example.org\nBcc: x@evil.test")
    got = g.send("Ann", text)
    bob = relayed(got, "bob@example.org")[0]
    raw = bob.as_bytes()
    parsed = BytesParser(policy=policy.default).parsebytes(raw)
    assert parsed.get_all("Bcc") is None and parsed["To"] == "bob@example.org"
    assert len(parsed.get_all("From")) == 1
    assert "\u202e" not in body(parsed) and "\u2066" not in body(parsed)
    assert "write me at [address]" in body(parsed)  # a player's address in a text is masked
    assert "=?utf-8?q?=0D=0ABcc=3A_y@evil.test?=" in body(parsed)  # text, never a header
    g.scan()


def test_header_words_of_every_language():
    seats = ["Ann", "Bob", "Zoë"]
    assert header("to Bob: hi", seats) == (("Bob",), (), "hi")
    assert header("To zoe, ANN:", seats) == (("Zoë", "Ann"), (), "")
    assert header("a todos: hola", seats, "es") == (("all",), (), "hola")
    assert header("an Bob: Hallo", seats, "de") == (("Bob",), (), "Hallo")
    assert header("pro všichni: ahoj", seats, "cs") == (("all",), (), "ahoj")
    assert header("给Bob：你好", seats, "zh") == (("Bob",), (), "你好")
    assert header("给所有人：你好", seats, "zh") == (("all",), (), "你好")
    # prose is no header; a near miss of a seat is one, refused
    assert header("To be honest: I like it", seats) is None
    assert header("A note: build first", seats) is None
    assert header("to Bobb: hi", seats) == ((), ("Bobb",), "hi")


def test_hostile_seat_names_stay_display_names(tmp_path):
    """Seat names that look like mail syntax (quotes, angle brackets, an
    encoded-word, Cyrillic) are the From display name exactly, never an address
    or a second header; bidi and control characters are refused at ``pbem new``."""
    names = [("Zoë \"The\" <x@evil.test>", "zoe@example.org"), ("=?utf-8?q?Bob?=", "b@example.org"),
             ("Ева", "eva@example.net"), ("Dee", "dee@example.com")]
    c = Clocked(tmp_path, players=names, settings={"press": "private"})
    c.run(T0)
    c.sent()
    c.mail("Ева", "to all: привет")
    c.run(T0 + H)
    got = c.sent()
    no_address_leak(got, names)
    relays = [m for m in got if "привет" in body(m) and "writes to all" in body(m)]
    assert len(relays) == 3
    for m in relays:
        parsed = BytesParser(policy=policy.default).parsebytes(m.as_bytes())
        (addr,) = parsed["From"].addresses
        assert addr.display_name == "Ева (game ridge)" and addr.addr_spec == c.config.moderator_address
    c.mail("=?utf-8?q?Bob?=", "to Dee: hi")
    c.run(T0 + 2 * H)
    (dee,) = [m for m in c.sent() if parseaddr(str(m["To"]))[1] == "dee@example.com"]
    parsed = BytesParser(policy=policy.default).parsebytes(dee.as_bytes())
    (addr,) = parsed["From"].addresses
    # (written "= ?": mail programs would decode the encoded-word into the name "Bob")
    assert addr.display_name == "= ?utf-8?q?Bob?= (game ridge)" and addr.addr_spec == c.config.moderator_address
    c.mail("Dee", "to all: hello")
    c.run(T0 + 3 * H)
    (zoe,) = [m for m in c.sent() if parseaddr(str(m["To"]))[1] == "zoe@example.org" and "hello" in body(m)]
    assert BytesParser(policy=policy.default).parsebytes(zoe.as_bytes())["From"].addresses[0].display_name == \
        "Dee (game ridge)"
    c.mail("Zoë \"The\" <x@evil.test>", "to Dee: hi")
    c.run(T0 + 4 * H)
    (dee,) = [m for m in c.sent() if parseaddr(str(m["To"]))[1] == "dee@example.com"]
    (addr,) = BytesParser(policy=policy.default).parsebytes(dee.as_bytes())["From"].addresses
    # no address in a display name (what phishing does; providers file it as spam)
    assert addr.display_name == "Zoë \"The\" <x at evil.test> (game ridge)"
    assert addr.addr_spec == c.config.moderator_address
    from moderator.rules.options import check_setup
    with pytest.raises(ValueError, match="control characters"):
        check_setup(["Eve\u202e", "Bob"], "first-edition", {})


def test_text_as_written_html_only_mail_and_languages(tmp_path):
    g = Game(tmp_path, settings={"language": "zh"})
    # full-width punctuation kept, the header read in Chinese
    got = g.send("Bob", "给Cy：你好，我们合作吧！\n\n第二段。")
    (cy,) = relayed(got, "cy@example.net") or [m for m in to_(got, "cy@example.net") if "你好" in body(m)]
    assert "你好，我们合作吧！\n\n第二段。" in body(cy)
    assert "Bob 只写给你：" in body(cy)
    # an HTML-only mail is relayed as text
    got = g.send("Cy", "", html="<p>to all: <b>bold</b> move &amp; more</p><p>second</p>")
    dee = [m for m in to_(got, "dee@example.com") if "bold" in body(m)]
    assert len(dee) == 1 and "<b>" not in body(dee[0]) and "bold move & more" in body(dee[0])
    g.scan()


def test_a_reply_in_a_public_game_is_refused_and_press_in_help_and_rules(tmp_path):
    g = Game(tmp_path, press="public", archive="always")
    got = g.send("Ann", "to all: public hello")
    bob = [m for m in to_(got, "bob@example.org") if "public hello" in body(m)][0]
    # the relayed mail's footer follows the game's rule (a new user's check: it promised a
    # private reply that is then refused)
    assert "In this game messages go to every player: to answer, start a line with \"to all:\"." in \
        flat(bob)
    assert "to answer Ann only" not in flat(bob)
    got = g.send("Bob", "just to you", reply_to=bob)
    assert relayed(got, "ann@example.org") == []
    assert "(your reply to Ann) Not relayed: in this game messages go to everyone only." in \
        flat(to_(got, "bob@example.org")[0])
    help_text = body(to_(g.send("Bob", "help"), "bob@example.org")[0])
    assert "MESSAGES TO OTHER PLAYERS\n  Press: below your orders, a line \"to all:\" starts" in help_text
    rules = body(to_(g.send("Bob", "rules"), "bob@example.org")[0])
    assert "Press: public (only \"to all\" messages). The archive site shows the messages." in \
        " ".join(rules.split())
    assert f"At most {MAX_PRESS_CHARS} characters per message and {PRESS_PER_DAY} messages per day" in \
        " ".join(rules.split())
    g.scan()


@pytest.mark.parametrize("lang,heading,line", [
    ("es", "MENSAJES A OTROS JUGADORES", "a todos:"), ("de", "NACHRICHTEN AN ANDERE SPIELER", "an alle:"),
    ("cs", "ZPRÁVY OSTATNÍM HRÁČŮM", "pro všichni:"), ("zh", "给其他玩家的消息", "给所有人:")])
def test_the_welcome_explains_press_in_each_language_and_its_words_work(tmp_path, lang, heading, line):
    g = Clocked(tmp_path, players=FOUR, settings={"language": lang})
    got = g.run(T0) and g.sent()
    welcome = [m for m in got if parseaddr(str(m["To"]))[1] == "ann@example.org"][0]
    assert heading in body(welcome)
    # the header the translation names is read
    seats = [n for n, _ in FOUR]
    assert header(line + " hola", seats, lang)[0] == ("all",)


def test_pbem_new_takes_the_press_rule(tmp_path):
    from click.testing import CliRunner
    import pbem
    import yaml

    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({"games_dir": str(tmp_path / "games"),
                                   "maildir": {"inbox": str(tmp_path / "in"), "outbox": str(tmp_path / "out")},
                                   "spool_dir": str(tmp_path / "spool")}))
    run = CliRunner().invoke
    r = run(pbem.main, ["--config", str(cfg), "new", "talk", "--player", "Ann=ann@example.org",
                        "--player", "Bob=bob@example.org", "--press", "public", "--press-archive", "after-end",
                        "--now", "2026-12-01T12:00:00Z"])
    assert r.exit_code == 0, r.output
    from moderator.store.gamefile import GameStore
    rec = GameStore(tmp_path / "games").load("talk")
    assert (rec.settings["press"], rec.settings["press_archive"]) == ("public", "after-end")
    r = run(pbem.main, ["--config", str(cfg), "rules", "talk"])
    assert "Press: public" in r.output and "once the game is over" in r.output
    r = run(pbem.main, ["--config", str(cfg), "new", "x", "--player", "Ann=a@example.org",
                        "--player", "Bob=b@example.org", "--press", "loud"])
    assert r.exit_code == 2 and "--press" in r.output


def test_a_relay_killed_before_its_save_is_relayed_once_when_read_again(tmp_path):
    """A ``pbem run`` killed after a mail's messages and the sender's answer were
    spooled and before the save (``press-spooled``): the mail stays in the
    inbox, the next run sweeps the killed run's copies and relays it again:
    each reader gets it once, the sender one answer, the game file one entry."""
    from collections import Counter

    from moderator.moderation.cycle import Moderator as Mod
    from test_clock_spool import GM, KILLED, THREE, Root

    root = Root(tmp_path / "root")
    mod = Mod(root.config, clock=lambda: T0)
    mod.create_game("bot", THREE, seed=11, gm=GM)
    mod.close()
    root.sent()
    root.mail("bot", "Ann", "to all: hello\nto Bob: and you")
    killed = root.run(T0 + H, fault="press-spooled")
    assert killed.returncode == KILLED, killed.stderr
    assert root.sent() == [] and root.store().load("bot").press == []
    ran = root.run(T0 + 2 * H)
    assert ran.returncode == 0, ran.stderr
    got = root.sent()
    no_address_leak(got, THREE)
    relays = Counter((str(m["To"]), body(m).splitlines()[2]) for m in got if "writes to" in body(m))
    assert relays == Counter({("bob@example.org", "hello"): 1, ("cy@example.net", "hello"): 1,
                              ("bob@example.org", "and you"): 1})
    assert [str(m["To"]) for m in got].count("ann@example.org") == 1
    assert [str(m["To"]) for m in got].count(GM) == 2  # the game master's copies
    assert len(root.store().load("bot").press) == 2
    # the same mail once more (a second delivery): nothing again
    ran = root.run(T0 + 3 * H)
    assert ran.returncode == 0 and root.sent() == []


@pytest.mark.parametrize("rule,shown_running,shown_over", [("never", False, False), ("after-end", False, True),
                                                           ("always", True, True)])
def test_the_archive_rule_on_a_frozen_game_finished_by_its_last_dividend(tmp_path, rule, shown_running, shown_over):
    """The frozen format-4 games (one finished by its final dividend, one running)
    with a ``press`` list and a press-archive rule added: the site shows the
    messages per the rule; the files load with the keys and without them."""
    import shutil
    from pathlib import Path

    import yaml

    from moderator.archive.site import build_site
    from moderator.store.gamefile import GameStore

    root = Path(__file__).parent / "fixtures" / "games" / "v4"
    games = tmp_path / "games"
    games.mkdir()
    pages = {}
    for name, over in (("v4-two-player-hidden-finished", True), ("v4-czech-redraw-4p", False)):
        data = yaml.safe_load((root / f"{name}.yaml").read_text())
        gid = data["game"]
        seats = [p["name"] for p in data["players"]]
        data["settings"]["press_archive"] = rule
        keys = list(data)
        at = keys.index("history")
        items = list(data.items())
        items[at:at] = [("press", [{"key": "<m1@example.org>", "from": seats[0], "to": [seats[1]],
                                    "at": "2026-11-30T12:00:00+00:00", "text": f"psst {gid}",
                                    "mids": {seats[1]: "<x.pbem.y@example.org>"}}]), ("muted", [seats[1]])]
        (games / f"{gid}.yaml").write_text(yaml.safe_dump(dict(items), sort_keys=False, allow_unicode=True))
        rec = GameStore(games).load(gid, check=True)
        assert rec.press[0]["text"] == f"psst {gid}" and rec.muted == [seats[1]]
        assert (rec.game.phase == "over") == over
        pages[gid] = over
    build_site(GameStore(games), tmp_path / "site")
    for gid, over in pages.items():
        page = (tmp_path / "site" / "games" / gid / "index.html").read_text()
        assert (f"psst {gid}" in page) == (shown_over if over else shown_running), (gid, rule)
        assert "x.pbem.y" not in page and "m1@example.org" not in page
