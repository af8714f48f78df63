"""Sign-up over the real mail path: strangers' mails appended to a real Dovecot
inbox, the moderator polling it over IMAP, its mails captured by a real aiosmtpd
server.  An open game is filled by three strangers whose confirmations are
written as real clients write them (Thunderbird's quote under "On ... wrote:",
Outlook's "RE:" and "-----Original Message-----", Gmail's HTML-only reply with
its gmail_quote); a fourth lands on the waiting list; a confirmation forged
from another address is refused; the game starts at its date with everyone's
welcome, is played to its end by the demo's built-in players, and replays."""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

import yaml

from moderator.config import load_config
from moderator.demo import Bot, play
from moderator.mail.threads import thread_token
from moderator.moderation import signup
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
START = T0 + timedelta(days=3)


def _body(msg):
    return msg.get_body(preferencelist=("plain",)).get_content()


def _reply_headers(reply, original, sender, subject_prefix="Re: "):
    reply["From"] = sender
    reply["To"] = str(original["From"])
    reply["Subject"] = subject_prefix + str(original["Subject"])
    reply["Date"] = format_datetime(T0)
    reply["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2].rstrip(">"))
    reply["In-Reply-To"] = str(original["Message-ID"])
    reply["References"] = " ".join(str(original.get("References", "")).split() + [str(original["Message-ID"])])


def thunderbird_reply(original, sender):
    msg = EmailMessage(policy=policy.default)
    _reply_headers(msg, original, sender)
    quoted = "\n".join("> " + l for l in _body(original).splitlines())
    msg.set_content(f"confirm\n\nOn {original['Date']}, UP moderator wrote:\n{quoted}\n")
    return msg


def outlook_reply(original, sender):
    msg = EmailMessage(policy=policy.default)
    _reply_headers(msg, original, sender, "RE: ")
    msg.set_content("Confirm.\n\nBob\n\n-----Original Message-----\nFrom: UP moderator <moderator@up.example>\n"
                    f"Sent: Friday, November 20, 2026 9:00 AM\nSubject: {original['Subject']}\n\n"
                    + _body(original) + "\n")
    return msg


def gmail_html_only_reply(original, sender):
    msg = EmailMessage(policy=policy.default)
    _reply_headers(msg, original, sender)
    quoted = "<br>".join(_body(original).splitlines())
    msg.set_content('<div dir="ltr">confirm</div><br><div class="gmail_quote"><div dir="ltr" '
                    'class="gmail_attr">On Fri, Nov 20, 2026 at 9:00 AM UP moderator &lt;moderator@up.example&gt; '
                    f'wrote:<br></div><blockquote class="gmail_quote">{quoted}</blockquote></div>\n',
                    subtype="html")
    return msg


def test_open_game_filled_by_strangers_over_imap_and_smtp(tmp_path, dovecot, smtp_sink, monkeypatch):
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
    config = load_config(cfg)
    now = [T0]
    moderator = Moderator(config, clock=lambda: now[0])
    setup = {"seats": [3, 3], "starts": START.isoformat(), "invite": [], "seat_order": "joined",
             "expire": 30 * 86400, "substitutes": "auto", "seed": 2026, "ruleset": "first-edition",
             "options": {}, "board": None, "settings": {"deadline": 72 * 3600, "on_missed": "bot",
                                                        "abandon_after": 3, "language": "en", "grace": 0},
             "gm": None, "observers": []}
    signup.open_game(moderator.bk, moderator.store, "ridge", setup, T0)
    seen = [0]

    def collect():
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        return [m.message for m in new]

    def deliver(msg):
        dovecot.append(msg.as_bytes(), msg_time=now[0])

    def cycle():
        report = moderator.run_cycle()
        assert report.ok, report.errors
        return collect()

    def stranger(address, text, name=None):
        msg = EmailMessage(policy=policy.default)
        msg["From"] = f"{name} <{address}>" if name else address
        msg["To"] = "moderator@up.example"
        msg["Subject"] = "sign me up"
        msg["Date"] = format_datetime(now[0])
        msg["Message-ID"] = make_msgid(domain=address.rpartition("@")[2])
        msg.set_content(text + "\n\n-- \nsent from my phone\n")
        deliver(msg)

    people = {"ada@players.example": "Ada", "brunel@players.example": "Brunel",
              "crocker@players.example": "Crocker", "dodge@players.example": "Dodge"}
    # four strangers ask; each gets a confirmation that holds nothing but the confirmation
    stranger("ada@players.example", "Hello,\n\njoin ridge as Ada")
    stranger("brunel@players.example", "join ridge", name="Brunel")
    stranger("crocker@players.example", "join ridge as Crocker")
    stranger("dodge@players.example", "join ridge as Dodge")
    confirmations = {m["To"].addresses[0].addr_spec: m for m in cycle()}
    assert set(confirmations) == set(people)
    for address, m in confirmations.items():
        text = _body(m)
        assert f"signed up for the game ridge of Union Pacific as {people[address]}." in text
        assert "join ridge" not in text and "sent from my phone" not in text  # nothing of theirs quoted
        assert ".pbem.ridge@" in m["Message-ID"]
    # a confirmation forged from another address: refused, nothing changed
    mallory = thunderbird_reply(confirmations["ada@players.example"], "Mallory <mallory@evil.example>")
    deliver(mallory)
    (refusal,) = cycle()
    assert refusal["To"].addresses[0].addr_spec == "mallory@evil.example"
    assert "Nothing of game ridge waits for a confirmation from this address" in _body(refusal)
    assert [r["state"] for r in moderator.bk.signups("ridge")] == ["asked"] * 4
    # the confirmations as real clients write them
    deliver(thunderbird_reply(confirmations["ada@players.example"], "Ada <ada@players.example>"))
    deliver(outlook_reply(confirmations["brunel@players.example"], "Brunel <brunel@players.example>"))
    deliver(gmail_html_only_reply(confirmations["crocker@players.example"], "crocker@players.example"))
    deliver(thunderbird_reply(confirmations["dodge@players.example"], "dodge@players.example"))
    answers = {m["To"].addresses[0].addr_spec: _body(m) for m in cycle()}
    assert "You have a seat in game ridge as Ada: 1 of 3 seats are taken." in answers["ada@players.example"]
    assert "as Brunel: 2 of 3" in answers["brunel@players.example"]
    assert "as Crocker: 3 of 3" in answers["crocker@players.example"]
    assert "You are on its waiting list as Dodge, in place 1." in answers["dodge@players.example"]
    assert [(r["name"], r["state"]) for r in moderator.bk.signups("ridge")] == [
        ("Ada", "seated"), ("Brunel", "seated"), ("Crocker", "seated"), ("Dodge", "waiting")]
    assert not GameStore(config.games_dir).exists("ridge")
    # 'games' from anyone: the open game in words
    stranger("eve@players.example", "games")
    (listing,) = cycle()
    assert "Seats: 3 of 3 taken, 0 free (at least 3 to play)" in _body(listing)
    assert "On the waiting list: 1" in _body(listing)
    # the start date: the game starts, everyone gets the welcome, the waiting list is told
    now[0] = START
    mails = cycle()
    data = GameStore(config.games_dir).read_data("ridge")
    assert [p["name"] for p in data["players"]] == ["Ada", "Brunel", "Crocker"]
    assert all(p["joined"] for p in data["players"])
    assert data["signup"]["started"] == START.isoformat()
    by_to = {m["To"].addresses[0].addr_spec: m for m in mails}
    assert "started with all its seats taken, without you" in _body(by_to["dodge@players.example"])
    for p in data["players"]:
        welcome = by_to[p["address"]]
        assert p["secret"] in _body(welcome)
        assert thread_token("ridge", p["secret"]) in welcome["Message-ID"]
    # the demo's built-in players play it to the end by mail, from their welcomes
    bots = [Bot(p["name"], p["address"], config.moderator_address, random.Random(i))
            for i, p in enumerate(data["players"])]
    for b in bots:
        order = b.receive([by_to[b.address]])
        if order is not None:
            deliver(order)
    store = GameStore(config.games_dir)
    play(moderator, bots, deliver, collect, lambda: store.read_data("ridge")["state"]["phase"] == "over",
         max_cycles=1000)
    assert sum(b.refused for b in bots) == 0
    # the whole game replays from its file (seed + history), and the index knows its players
    record = store.load("ridge", check=True)
    assert record.checked and [p.name for p in record.players] == ["Ada", "Brunel", "Crocker"]
    assert store.read_data("ridge")["state"]["dividends_paid"] == 4
    assert moderator.bk.person("crocker@players.example")["games"] == ["ridge"]
    assert dovecot.messages("INBOX") == []
    # no mail to anyone names another person's address
    everyone = set(people) | {"mallory@evil.example", "eve@players.example"}
    for m in smtp_sink.messages:
        rcpt = m.message["To"].addresses[0].addr_spec
        text = m.message.as_string()
        assert not any(a in text for a in everyone - {rcpt}), rcpt


def test_an_open_game_expires_over_imap_and_smtp_with_pbem_run_now(tmp_path, dovecot, smtp_sink, monkeypatch):
    """The timeline through the command line: `pbem open --now`, a stranger's join and
    confirmation, then `pbem run --now` at the expiry closes the game and tells her
    and the game master; a later join is told no such game is open."""
    from click.testing import CliRunner

    import pbem

    monkeypatch.setenv("E2E_IMAP_PASSWORD", dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
        "games_dir": str(tmp_path / "games"), "spool_dir": str(tmp_path / "spool"),
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "E2E_IMAP_PASSWORD"},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
    }))
    run = CliRunner()

    def pbem_(*args):
        r = run.invoke(pbem.main, ["--config", str(cfg), *args])
        assert r.exit_code == 0, r.output
        return r.output

    def mails_to(address, since):
        return [m.message for m in smtp_sink.messages[since:] if m.message["To"].addresses[0].addr_spec == address]

    pbem_("open", "plains", "--seats", "3-4", "--expire", "7d", "--gm", "gm@up.example",
          "--now", T0.isoformat())
    msg = EmailMessage(policy=policy.default)
    msg["From"] = "Ida <ida@players.example>"
    msg["To"] = "moderator@up.example"
    msg["Subject"] = "join"
    msg["Message-ID"] = make_msgid(domain="players.example")
    msg.set_content("join plains\n")
    dovecot.append(msg.as_bytes(), msg_time=T0 + timedelta(hours=1))
    pbem_("run", "--now", (T0 + timedelta(hours=1)).isoformat())
    (conf,) = mails_to("ida@players.example", 0)
    dovecot.append(thunderbird_reply(conf, "Ida <ida@players.example>").as_bytes(), msg_time=T0 + timedelta(hours=2))
    mark = len(smtp_sink.messages)
    pbem_("run", "--now", (T0 + timedelta(hours=2)).isoformat())
    (seated,) = mails_to("ida@players.example", mark)
    assert "You have a seat in game plains as Ida: 1 of 4 seats are taken." in _body(seated)
    assert "plains  first-edition  open for sign-up (open): seats 1 taken of 3-4, 0 waiting" in pbem_("list")
    # a day before the expiry nothing happens; at it, the game closes
    mark = len(smtp_sink.messages)
    pbem_("run", "--now", (T0 + timedelta(days=6)).isoformat())
    assert smtp_sink.messages[mark:] == []
    pbem_("run", "--now", (T0 + timedelta(days=7)).isoformat())
    (closed,) = mails_to("ida@players.example", mark)
    (told,) = mails_to("gm@up.example", mark)
    for m in (closed, told):
        assert "The game plains did not start in time and is closed." in _body(m)
    assert "plains" not in pbem_("list")
    assert not (tmp_path / "games" / "plains.yaml").exists()
    msg.replace_header("Message-ID", make_msgid(domain="players.example"))
    dovecot.append(msg.as_bytes(), msg_time=T0 + timedelta(days=7, hours=1))
    mark = len(smtp_sink.messages)
    pbem_("run", "--now", (T0 + timedelta(days=7, hours=1)).isoformat())
    (no,) = mails_to("ida@players.example", mark)
    assert "No game 'plains' is open for sign-up." in _body(no)
