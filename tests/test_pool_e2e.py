"""The substitute pool over the real mail path: volunteers' mails appended to a
real Dovecot inbox, the moderator polling it over IMAP, its mails captured by a
real aiosmtpd server, replies written as real clients write them (Thunderbird's
quote, Outlook's "RE:" and "-----Original Message-----").

- ``auto``: four volunteers join the pool by a confirmed reply (one forged
  confirmation refused); the game master ejects a player; the three who speak
  the game's language are offered the seat with the position in words; a
  ``take`` forged from another address and one from a volunteer without an
  offer are refused; two volunteers answer, the first gets the seat (the
  game master's ``replace``: a welcome with a new secret and the whole
  position), the second is told it is taken; the game is played to its end
  by the demo's players and ``pbem replay`` names who played which moves.
- ``gm``: a seat abandoned after a missed move; the offers lapse at the end
  of the round (the game's deadline) and the next volunteer is offered it;
  her take goes to the game master, who vetoes (she is told); the next
  volunteer's take the game master approves (he gets the welcome).
"""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import yaml
from click.testing import CliRunner

import pbem
from moderator.config import load_config
from moderator.demo import Bot, play
from moderator.mail.threads import thread_token
from moderator.moderation import pool
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore
from test_signup_e2e import _body, outlook_reply, thunderbird_reply

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)


class World:
    """A moderator on the session's Dovecot and an aiosmtpd sink, the clock set by the test."""

    def __init__(self, tmp_path, dovecot, smtp_sink, monkeypatch):
        monkeypatch.setenv("E2E_IMAP_PASSWORD", dovecot.password)
        self.cfg = tmp_path / "pbem.yaml"
        self.cfg.write_text(yaml.safe_dump({
            "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
            "games_dir": str(tmp_path / "games"), "spool_dir": str(tmp_path / "spool"),
            "operator": "op@up.example",
            "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                     "username": dovecot.username, "password_env": "E2E_IMAP_PASSWORD"},
            "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
        }))
        (tmp_path / "games").mkdir()
        self.config = load_config(self.cfg)
        self.now = T0
        self.mod = Moderator(self.config, clock=lambda: self.now)
        self.dovecot, self.sink, self.seen = dovecot, smtp_sink, 0
        self.autoplay: list[Bot] = []
        """Players whose mails the test answers as the demo's players do (``cycle`` leaves them out)."""

    def collect(self):
        new = self.sink.messages[self.seen:]
        self.seen += len(new)
        return [m.message for m in new]

    def deliver(self, msg):
        self.dovecot.append(msg.as_bytes(), msg_time=self.now)

    def cycle(self):
        report = self.mod.run_cycle()
        assert report.ok, report.errors
        mails = self.collect()
        for b in self.autoplay:
            theirs = [m for m in mails if to(m) == b.address]
            order = b.receive(theirs) if theirs else None
            if order is not None:
                self.deliver(order)
        return [m for m in mails if to(m) not in {b.address for b in self.autoplay}]

    def send(self, address, text, name=None):
        msg = EmailMessage(policy=policy.default)
        msg["From"] = f"{name} <{address}>" if name else address
        msg["To"] = "moderator@up.example"
        msg["Subject"] = "substitute"
        msg["Date"] = format_datetime(self.now)
        msg["Message-ID"] = make_msgid(domain=address.rpartition("@")[2])
        msg.set_content(text + "\n\n-- \nsent from my phone\n")
        self.deliver(msg)

    def reply(self, original, sender, text):
        """A Thunderbird reply with ``text`` on top of the quote."""
        msg = thunderbird_reply(original, sender)
        body = _body(msg).replace("confirm", text, 1)
        msg.set_content(body)
        return msg

    def join_pool(self, people, line="substitute on all"):
        """Each of ``people`` ({address: name}) sends ``line`` and confirms by reply."""
        for address, name in people.items():
            self.send(address, line, name=name)
        confirmations = {to(m): m for m in self.cycle() if to(m) in people}  # (players get status mails)
        assert set(confirmations) == set(people)
        for address, m in confirmations.items():
            text = _body(m)
            assert "reply to this mail with the word 'confirm'" in text
            assert "sent from my phone" not in text and line not in text  # nothing of theirs quoted
            assert ".pbem.pool@" in m["Message-ID"]
        return confirmations


def to(msg):
    return msg["To"].addresses[0].addr_spec


def test_an_ejected_seat_is_taken_from_the_pool_over_imap_and_smtp(tmp_path, dovecot, smtp_sink, monkeypatch):
    w = World(tmp_path, dovecot, smtp_sink, monkeypatch)
    players = [("Ann", "ann@players.example"), ("Bob", "bob@players.example"), ("Cy", "cy@players.example")]
    w.mod.create_game("ridge", players, 2026, settings={"deadline": 72 * 3600, "language": "en"},
                      gm="gm@up.example")
    welcomes = {to(m): m for m in w.collect()}
    assert set(welcomes) == {a for _, a in players}
    volunteers = {"vera@pool.example": "Vera", "walt@pool.example": "Walt", "xena@pool.example": "Xena"}
    confirmations = w.join_pool(volunteers)
    # Greta writes German ('ersatz an ridge'): the registry keeps her language
    w.send("greta@pool.example", "ersatz an ridge", name="Greta")
    (greta_conf,) = w.cycle()
    assert "bitte bestätigen: Ersatzspieler-Pool" in str(greta_conf["Subject"])
    assert "Diese Adresse wurde für den Ersatzspieler-Pool der Partie ridge von Union Pacific angemeldet" \
        in _body(greta_conf)
    # a confirmation forged from another address: refused, the pool unchanged
    w.deliver(thunderbird_reply(confirmations["vera@pool.example"], "Mallory <mallory@evil.example>"))
    (refusal,) = w.cycle()
    assert to(refusal) == "mallory@evil.example"
    assert "Nothing of the substitute pool waits for a confirmation from this address" in _body(refusal)
    assert w.mod.bk.pool_addresses() == []
    w.now = T0 + H
    w.deliver(thunderbird_reply(confirmations["vera@pool.example"], "Vera <vera@pool.example>"))
    w.deliver(outlook_reply(confirmations["walt@pool.example"], "Walt <walt@pool.example>"))
    w.deliver(thunderbird_reply(confirmations["xena@pool.example"], "xena@pool.example"))
    w.deliver(thunderbird_reply(greta_conf, "Greta <greta@pool.example>"))
    done = {to(m): _body(m) for m in w.cycle()}
    assert "You are in the substitute pool of every game. Send 'substitute off' to leave it." \
        in done["vera@pool.example"]
    assert "Du bist im Ersatzspieler-Pool dieser Partien: ridge." in done["greta@pool.example"]
    assert w.mod.bk.pool_addresses() == ["greta@pool.example", "vera@pool.example", "walt@pool.example",
                                         "xena@pool.example"]
    assert w.mod.bk.person("greta@pool.example")["language"] == "de"
    assert w.mod.bk.person("vera@pool.example")["pool"] == ["*"]
    assert w.mod.bk.person("greta@pool.example")["pool"] == ["ridge"]
    # the players play their first moves (the initial investments)
    bots = {a: Bot(n, a, "moderator@up.example", random.Random(i)) for i, (n, a) in enumerate(players)}
    for a, b in bots.items():
        order = b.receive([welcomes[a]])
        assert order is not None
        w.deliver(order)
    mails = w.cycle()
    for a, b in bots.items():
        order = b.receive([m for m in mails if to(m) == a])
        if order is not None:
            w.deliver(order)
    w.cycle()
    # the game master ejects Ann (as by mail): the built-in player keeps her seat; the pool is offered it
    w.now = T0 + 2 * H
    assert "Ann" in w.mod.manage("ridge", "eject Ann")
    mails = w.cycle()
    offers = {to(m): m for m in mails if "needs a substitute" in str(m["Subject"])}
    # the three who speak the game's language; Greta (German) would be next
    assert set(offers) == {"vera@pool.example", "walt@pool.example", "xena@pool.example"}
    offer = _body(offers["vera@pool.example"])
    assert "The seat Ann in the game ridge of Union Pacific needs a new player: the game master took it from " \
        "its player." in offer
    assert "The first who replies to this mail with 'take ridge' before" in offer
    assert "PLAYERS" in offer and "COMPANIES" in offer  # the position in words
    assert "YOUR HAND" not in offer
    record = GameStore(w.config.games_dir).load("ridge")
    assert record.player_by_name("Ann").bot
    assert [(o["address"], o["state"], o["round"]) for o in w.mod.bk.offers("ridge")] == [
        ("vera@pool.example", "offered", 1), ("walt@pool.example", "offered", 1), ("xena@pool.example", "offered", 1)]
    # a take forged from another address (the offer forwarded), and one without an offer: refused
    w.now = T0 + 3 * H
    w.deliver(w.reply(offers["vera@pool.example"], "Mallory <mallory@evil.example>", "take ridge"))
    w.send("greta@pool.example", "take ridge")
    refused = {to(m): _body(m) for m in w.cycle()}
    assert "This address has no offer of a seat in game ridge." in refused["mallory@evil.example"]
    assert "ridge" in refused["greta@pool.example"]
    assert GameStore(w.config.games_dir).load("ridge").player_by_name("Ann").bot
    # Walt and then Vera answer in one cycle: Walt takes the seat, Vera is told it is taken
    w.now = T0 + 4 * H
    w.deliver(w.reply(offers["walt@pool.example"], "Walt <walt@pool.example>", "take ridge"))
    w.deliver(w.reply(offers["vera@pool.example"], "Vera <vera@pool.example>", "Take ridge!"))
    mails = w.cycle()
    by_to = {}
    for m in mails:
        by_to.setdefault(to(m), []).append(m)
    record = GameStore(w.config.games_dir).load("ridge")
    ann = record.player_by_name("Ann")
    assert ann.address == "walt@pool.example" and not ann.bot
    (welcome,) = [m for m in by_to["walt@pool.example"] if ann.secret in _body(m)]
    assert thread_token("ridge", ann.secret) in welcome["Message-ID"]
    assert "YOUR HAND" in _body(welcome)
    (taken,) = by_to["vera@pool.example"]
    assert "The seat in game ridge is taken already" in _body(taken)
    assert any("Walt" in _body(m) for m in by_to["gm@up.example"])
    assert [o["state"] for o in w.mod.bk.offers("ridge")] == ["lost", "taken", "lost"]
    assert w.mod.bk.vacancy("ridge", "Ann")["state"] == "filled"
    assert w.mod.bk.person("walt@pool.example")["used"] == w.now
    assert record.gm_log[-1]["by"] == pool.BY_POOL and record.gm_log[-1]["name"] == "Walt"
    # the game is played to its end, Walt playing Ann's seat from his welcome, Bob and Cy from their last
    # mail asking for a move
    walt = Bot("Walt", "walt@pool.example", "moderator@up.example", random.Random(9))
    players_now = [walt, bots["bob@players.example"], bots["cy@players.example"]]
    for b in players_now:
        theirs = [m.message for m in smtp_sink.messages if to(m.message) == b.address]
        for m in reversed(theirs):
            order = b.receive([m])
            if order is not None:
                w.deliver(order)
                break
    store = GameStore(w.config.games_dir)
    play(w.mod, players_now, w.deliver, w.collect, lambda: store.read_data("ridge")["state"]["phase"] == "over",
         max_cycles=1000)
    assert walt.refused == 0 and walt.sent > 0
    record = store.load("ridge", check=True)
    assert record.checked
    runs = pool.seat_holders(record)["Ann"]
    assert [who for who, _a, _b in runs][:1] == ["Ann"] and runs[-1][0] == "Walt"
    assert pool.BUILT_IN in [who for who, _a, _b in runs] or len(runs) == 2
    assert runs[0][1] == 1 and all(runs[i][2] + 1 == runs[i + 1][1] for i in range(len(runs) - 1))
    r = CliRunner().invoke(pbem.main, ["--config", str(w.cfg), "replay", "ridge"])
    assert r.exit_code == 0, r.output
    assert "the state matches the file" in r.output
    assert "substitute pool: " in r.output and "replace Ann Walt=walt@pool.example" in r.output
    assert f"seat Ann: moves 1-{runs[0][2]} by Ann" in r.output and f"by Walt" in r.output
    assert dovecot.messages("INBOX") == []
    # no mail to anyone but the game master names another person's address
    everyone = {a for _, a in players} | set(volunteers) | {"greta@pool.example", "mallory@evil.example"}
    for m in smtp_sink.messages:
        rcpt = to(m.message)
        if rcpt == "gm@up.example":
            continue
        text = m.message.as_string()
        assert not any(a in text for a in everyone - {rcpt}), rcpt


def test_an_abandoned_seat_lapses_round_by_round_and_the_game_master_vetoes_and_approves(
        tmp_path, dovecot, smtp_sink, monkeypatch):
    w = World(tmp_path, dovecot, smtp_sink, monkeypatch)
    w.mod.create_game("plains", [("Ann", "ann@players.example"), ("Bob", "bob@players.example")], 7, bots=["Cy"],
                      settings={"deadline": 24 * 3600, "abandon_after": 1, "language": "en",
                                "substitutes": "gm"}, gm="gm@up.example")
    assert GameStore(w.config.games_dir).read_data("plains")["settings"]["substitutes"] == "gm"
    bob = Bot("Bob", "bob@players.example", "moderator@up.example", random.Random(3))
    w.autoplay.append(bob)  # Bob plays every move at once; Ann none
    (bob_welcome,) = [m for m in w.collect() if to(m) == bob.address]
    w.deliver(bob.receive([bob_welcome]))
    people = {f"{n.lower()}@pool.example": n for n in ("Ava", "Ben", "Cleo", "Dina")}
    for address, m in w.join_pool(people, "substitute on plains").items():
        w.deliver(thunderbird_reply(m, address))
    w.cycle()
    assert w.mod.bk.pool_addresses() == sorted(people)
    # Ann sends nothing: at her deadline the seat is abandoned, the first three are offered it for a day
    w.now = T0 + 24 * H
    mails = w.cycle()
    offers = {to(m): m for m in mails if "needs a substitute" in str(m["Subject"])}
    assert set(offers) == {"ava@pool.example", "ben@pool.example", "cleo@pool.example"}
    assert "its player stopped sending moves" in _body(offers["ava@pool.example"])
    assert "The game master approves the substitute first." in _body(offers["ava@pool.example"])
    assert GameStore(w.config.games_dir).load("plains").player_by_name("Ann").abandoned
    # nobody takes it: the round ends at the deadline and Dina is offered it
    w.now = T0 + 47 * H
    assert not [m for m in w.cycle() if "needs a substitute" in str(m["Subject"])]
    w.now = T0 + 48 * H
    (dina_offer,) = [m for m in w.cycle() if "needs a substitute" in str(m["Subject"])]
    assert to(dina_offer) == "dina@pool.example"
    assert [(o["address"], o["state"], o["round"]) for o in w.mod.bk.offers("plains")] == [
        ("ava@pool.example", "lapsed", 1), ("ben@pool.example", "lapsed", 1), ("cleo@pool.example", "lapsed", 1),
        ("dina@pool.example", "offered", 2)]
    # Ava's late take is told the offer lapsed; Dina's take goes to the game master
    w.now = T0 + 49 * H
    w.deliver(w.reply(offers["ava@pool.example"], "ava@pool.example", "take plains"))
    w.deliver(w.reply(dina_offer, "Dina <dina@pool.example>", "take plains"))
    by_to = {to(m): m for m in w.cycle()}
    assert "The offer of the seat in game plains has lapsed" in _body(by_to["ava@pool.example"])
    assert "waits for the game master's approval" in _body(by_to["dina@pool.example"])
    question = by_to["gm@up.example"]
    assert "A substitute from the pool, Dina, wants to take the seat Ann in game plains." in _body(question)
    assert "dina@pool.example" not in question.as_string()
    # a forged approval from another address changes nothing; the game master vetoes
    w.deliver(w.reply(question, "Mallory <mallory@evil.example>", "approve"))
    w.deliver(w.reply(question, "gm@up.example", "veto"))
    mails = w.cycle()
    by_to = {to(m): m for m in mails}
    assert "no offer of a seat" in _body(by_to["mallory@evil.example"])
    assert "did not give you the seat" in _body(by_to["dina@pool.example"])
    assert "Vetoed: the seat Ann in game plains is offered to the next volunteers" in _body(by_to["gm@up.example"])
    assert GameStore(w.config.games_dir).load("plains").player_by_name("Ann").bot
    # nobody is left for the third round; Eli joins the pool for the game and is offered the seat a round later
    w.send("eli@pool.example", "substitute on plains", name="Eli")
    (conf,) = [m for m in w.cycle() if to(m) == "eli@pool.example"]
    w.deliver(thunderbird_reply(conf, "Eli <eli@pool.example>"))
    w.cycle()
    w.now = T0 + 73 * H
    (eli_offer,) = [m for m in w.cycle() if "needs a substitute" in str(m["Subject"])]
    assert to(eli_offer) == "eli@pool.example"
    w.deliver(outlook_reply(eli_offer, "Eli <eli@pool.example>"))  # 'Confirm.' is no take: told how
    (how,) = [m for m in w.cycle() if to(m) == "eli@pool.example"]
    assert "reply to the offer's mail with 'take plains'" in _body(how)
    w.deliver(w.reply(eli_offer, "Eli <eli@pool.example>", "take plains"))
    (question,) = [m for m in w.cycle() if to(m) == "gm@up.example"]
    w.deliver(w.reply(question, "gm@up.example", "approve"))
    mails = w.cycle()
    record = GameStore(w.config.games_dir).load("plains")
    ann = record.player_by_name("Ann")
    assert ann.address == "eli@pool.example" and not ann.bot and not ann.abandoned
    assert any(ann.secret in _body(m) for m in mails if to(m) == "eli@pool.example")
    assert any("Eli" in _body(m) for m in mails if to(m) == "gm@up.example")
    assert record.gm_log[-1]["by"] == "gm@up.example" and record.gm_log[-1]["name"] == "Eli"
    assert [o["state"] for o in w.mod.bk.offers("plains")][-2:] == ["vetoed", "taken"]
    store = GameStore(w.config.games_dir)
    assert store.load("plains", check=True).checked
