"""One thread per game and player, no secret in the Subject (issue 11).

A reply is the player's when its In-Reply-To or References names a Message-ID the
moderator sent that player (the token of their secret, mail/threads.py) and it
comes from their registered address; the old Subject tag and the ``secret:`` line
still work.  The replies are the real client mails of tests/mail/, with their
headers rewritten as the client would have written them answering our mail."""
from __future__ import annotations

import mailbox
import re
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
import yaml

from moderator.config import Config
from moderator.mail.read import read_mail
from moderator.mail.threads import carries_token, thread_token, tokens_in
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore
from outbox import unseen_mails

MAIL = Path(__file__).parent / "mail"
EXPECTED = yaml.safe_load((MAIL / "expected.yaml").read_text(encoding="utf-8"))
OWN = "moderator@up.example.org"
SECRET = "k3x9p2qa"  # the corpus mails' secret (subject tag, secret lines)
REGISTERED = ["ben.carter@gmail.com", "joerg.haeussler@gmail.com", "maria.lopez@outlook.example.es",
              "anna.novakova@gmail.com", "sam@okafor.example.net", "pieter.devries@example.org"]
_DROP = re.compile(rb"^(subject|in-reply-to|references):", re.I)


def headers_rewritten(raw: bytes, subject: str | None, in_reply_to: str | None) -> bytes:
    """``raw`` with its Subject, In-Reply-To and References (and their folded
    continuation lines) replaced: Subject ``subject``, In-Reply-To and References
    ``in_reply_to`` (left out when None); the body's bytes untouched."""
    cut = re.search(rb"\r?\n\r?\n", raw)
    head, body = raw[:cut.start()], raw[cut.start():]
    nl = b"\r\n" if b"\r\n" in head else b"\n"
    kept, dropping = [], False
    for line in head.split(nl):
        if line[:1] in (b" ", b"\t") and dropping:
            continue
        dropping = bool(_DROP.match(line))
        if not dropping:
            kept.append(line)
    if subject is not None:
        kept.append(b"Subject: " + subject.encode())
    if in_reply_to is not None:
        kept += [b"In-Reply-To: " + in_reply_to.encode(), b"References: " + in_reply_to.encode()]
    return nl.join(kept) + body


def human_corpus() -> list[tuple[str, bytes]]:
    """The corpus mails of registered players that are no machine mail."""
    out = []
    for name, exp in sorted(EXPECTED.items()):
        if "max_size" in (exp.get("read") or {}):
            continue
        raw = (MAIL / name).read_bytes()
        om = read_mail(raw, own_address=OWN)
        if not om.machine and om.sender in REGISTERED:
            out.append((name, raw))
    return out


class Table:
    """A moderator on Maildirs with the corpus's six players in game ``ridge``."""

    def __init__(self, tmp_path: Path, corpus_secret: bool):
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "inbox",
                             maildir_outbox=tmp_path / "outbox", spool_dir=tmp_path / "spool",
                             moderator_address=OWN, max_replies_per_sender=100)
        self.mod = Moderator(self.config)
        self.mod.create_game("ridge", [(f"P{i}", a) for i, a in enumerate(REGISTERED)], seed=5)
        self.store = GameStore(self.config.games_dir)
        if corpus_secret:
            record = self.store.load("ridge")
            for p in record.players:
                p.secret = SECRET
            self.store.save(record)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()
        self.mod.run_cycle()  # sends the welcomes

    def record(self):
        return self.store.load("ridge")

    def sent(self) -> list[EmailMessage]:
        return unseen_mails(self.outbox, self.seen)


def first_line(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content().partition("\n")[0]


def answers(table: Table) -> list[tuple[str, str]]:
    return sorted((str(m["To"]).lower(), first_line(m)) for m in table.sent())


def test_token_is_an_hmac_of_secret_and_game():
    import base64
    import hashlib
    import hmac
    want = base64.b32encode(hmac.new(b"k3x9p2qa", b"pbem thread ridge", hashlib.sha256).digest()[:10])
    assert thread_token("ridge", "k3x9p2qa") == want.decode().lower()
    assert len(thread_token("ridge", "k3x9p2qa")) == 16
    assert thread_token("ridge", "k3x9p2qa") != thread_token("ridge2", "k3x9p2qa")
    assert thread_token("ridge", "k3x9p2qa") != thread_token("ridge", "k3x9p2qb")
    mid = f"<1.2.3.{thread_token('ridge', 'k3x9p2qa')}.pbem.ridge@up.example.org>"
    assert tokens_in([None, "<x@y>", mid], "ridge") == [thread_token("ridge", "k3x9p2qa")]
    assert tokens_in([mid], "ridg") == [] and tokens_in([mid.replace("ridge@", "ridge2@")], "ridge") == []
    assert carries_token(["<a@b>", mid], "ridge", "k3x9p2qa")
    assert not carries_token([mid], "ridge", "k3x9p2qb") and not carries_token([mid], "ridge", None)
    with pytest.raises(ValueError):
        thread_token("ridge", "")


def test_corpus_replies_by_in_reply_to_as_with_the_old_subject_tag(tmp_path):
    """Every human corpus mail of a registered player, its Subject tag taken out
    and In-Reply-To/References naming the welcome mail the moderator sent that
    player, is routed and authenticated: the answers are exactly those the same
    mails with the old Subject tag get (issue 11: the old tag keeps working)."""
    # a 'game:' line in the text names the game before In-Reply-To does (the
    # Subject tag came first): this case is about that line, not about replying
    cases = [(n, raw) for n, raw in human_corpus() if n != "secret_line_overrides_tag.eml"]
    assert len(cases) >= 10
    tagged = Table(tmp_path / "tagged", corpus_secret=True)
    threaded = Table(tmp_path / "threaded", corpus_secret=False)
    tagged.sent()
    welcome = {str(m["To"]).lower(): str(m["Message-ID"]) for m in threaded.sent()}
    assert len(welcome) == len(REGISTERED)
    for _, raw in cases:
        tagged.inbox.add(raw)
        sender = read_mail(raw, own_address=OWN).sender
        threaded.inbox.add(headers_rewritten(raw, "Re: Union Pacific ridge", welcome[sender]))
    r1, r2 = tagged.mod.run_cycle(), threaded.mod.run_cycle()
    assert (r1.applied, r1.refused, r1.ignored) == (r2.applied, r2.refused, r2.ignored)
    a1, a2 = answers(tagged), answers(threaded)
    assert a1 == a2 and len(a1) == len(cases)
    # authenticated: judged by the game (the corpus builds come before the initial
    # investments: refused as not legal), never refused for want of a secret
    assert not any("secret missing or wrong" in line for _, line in a2)
    assert sum(line == "Union Pacific, game ridge: order refused" for _, line in a2) >= 10
    orders = [(h["player"], h["order"], h["message_id"]) for h in tagged.record().history]
    assert orders == [(h["player"], h["order"], h["message_id"]) for h in threaded.record().history]


def test_corpus_replies_without_in_reply_to_or_tag_need_the_secret_line(tmp_path):
    """A client that drops In-Reply-To and References and the Subject tag: the
    mail still reaches the sender's only game, and only a ``secret:`` line
    authenticates it (the corpus's gmail_game_secret_lines.eml has one)."""
    table = Table(tmp_path, corpus_secret=True)
    table.sent()
    with_line = (MAIL / "gmail_game_secret_lines.eml").read_bytes()
    without = (MAIL / "gmail_en.eml").read_bytes()
    assert b"secret: k3x9p2qa" in with_line.lower() and b"secret:" not in without.lower()
    for raw in (with_line, without):
        table.inbox.add(headers_rewritten(raw, "Re: your turn", None))
    report = table.mod.run_cycle()
    sent = {str(m["To"]).lower(): first_line(m) for m in table.sent()}
    # Ben's gmail_en without any proof: refused; Anna's with the secret line: read
    # and judged (her build is not legal before the initial investments)
    assert sent == {"ben.carter@gmail.com": "Union Pacific, game ridge: secret missing or wrong",
                    "anna.novakova@gmail.com": "Union Pacific, game ridge: order refused"}
    assert report.refused == 2


def _forged(table: Table, victim: str, sender: str) -> bytes:
    """gmail_en.eml from ``sender``, answering the welcome mail to ``victim``."""
    welcome = next(str(m["Message-ID"]) for m in table.sent_all if str(m["To"]).lower() == victim)
    raw = (MAIL / "gmail_en.eml").read_bytes()
    raw = re.sub(rb"(?im)^From: .*$", f"From: Someone <{sender}>".encode(), raw, count=1)
    return headers_rewritten(raw, "Re: Union Pacific ridge", welcome)


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path, corpus_secret=False)
    t.sent_all = t.sent()
    return t


def test_forged_in_reply_to_from_a_stranger_is_ignored_and_the_player_warned(table):
    before = table.store.path("ridge").read_bytes()
    table.inbox.add(_forged(table, "ben.carter@gmail.com", "mallory@evil.example"))
    report = table.mod.run_cycle()
    assert report.ignored == 1 and report.applied == 0
    assert table.store.path("ridge").read_bytes() == before
    (warning,) = table.sent()
    assert str(warning["To"]).lower() == "ben.carter@gmail.com"
    assert first_line(warning) == "Union Pacific, game ridge: a mail in your name was refused"
    # the forger's address is not shown whole (it may be another player's): its first letter and domain
    text = warning.get_body(preferencelist=("plain",)).get_content()
    assert "mallory" not in text and "from\nthe address m…@evil.example, which" in text


def test_another_players_token_does_not_authenticate(table):
    """Anna's mail answering the mail to Ben (his token) is not Anna's proof."""
    before = table.store.path("ridge").read_bytes()
    table.inbox.add(_forged(table, "ben.carter@gmail.com", "anna.novakova@gmail.com"))
    report = table.mod.run_cycle()
    assert report.refused == 1 and report.applied == 0
    assert table.store.path("ridge").read_bytes() == before
    (r,) = table.sent()
    assert str(r["To"]).lower() == "anna.novakova@gmail.com"
    assert first_line(r) == "Union Pacific, game ridge: secret missing or wrong"
    # the refusal is in Anna's thread, with her token: replying to it is her proof
    anna = table.record().player_by_address("anna.novakova@gmail.com")
    assert str(r["Subject"]) == f"Union Pacific ridge ({anna.name})"
    assert tokens_in([str(r["Message-ID"])], "ridge") == [thread_token("ridge", anna.secret)]


def _mail(table: Table, sender: str, body: str, in_reply_to: str | None, subject="Re: Union Pacific ridge"):
    msg = EmailMessage(policy=policy.default)
    msg["From"], msg["To"], msg["Subject"] = sender, OWN, subject
    msg["Message-ID"] = make_msgid(domain="example.org")
    if in_reply_to:
        msg["In-Reply-To"] = msg["References"] = in_reply_to
    msg.set_content(body)
    table.inbox.add(msg.as_bytes())


def test_secret_new_invalidates_replies_to_older_mails(table):
    """After ``secret new`` a reply to a mail sent before it is refused; a reply to
    the answer (or a later mail), the new secret line or the Subject tag with the
    new secret work (docs/operations.md, "Threads and secrets")."""
    ben = "ben.carter@gmail.com"
    old_mail = next(str(m["Message-ID"]) for m in table.sent_all if str(m["To"]).lower() == ben)
    _mail(table, ben, "secret new", old_mail)
    assert table.mod.run_cycle().commands == 1
    (answer,) = table.sent()
    player = table.record().player_by_address(ben)
    assert f"is {player.secret}." in answer.get_body(preferencelist=("plain",)).get_content()
    _mail(table, ben, "rules", old_mail)  # the old mail's token: no longer his
    assert table.mod.run_cycle().refused == 1
    (r,) = table.sent()
    assert first_line(r) == "Union Pacific, game ridge: secret missing or wrong"
    _mail(table, ben, "rules", str(answer["Message-ID"]))  # replying to the new secret's mail
    _mail(table, ben, f"secret: {player.secret}\nrules", None, subject="rules please")
    _mail(table, ben, "rules", None, subject=f"Re: [pbem:ridge:{player.secret}] old style")
    assert table.mod.run_cycle().commands == 3
    assert [first_line(m) for m in table.sent()] == ["Union Pacific, game ridge: rules in force"] * 3


def test_every_subject_to_a_player_is_the_same_and_holds_no_secret(table):
    """Welcome, refusals, command answers and status mails to one player: one Subject."""
    ben = "ben.carter@gmail.com"
    welcome = next(str(m["Message-ID"]) for m in table.sent_all if str(m["To"]).lower() == ben)
    _mail(table, ben, "help\nhistory\nrules\nstatus", welcome)
    _mail(table, ben, "fly to the moon", welcome)
    share = sorted(table.record().game.share_hands[table.record().player_by_address(ben).name])[0]
    _mail(table, ben, f"start {share}", welcome)
    table.mod.run_cycle()
    mails = table.sent_all + table.sent()
    player = table.record().player_by_address(ben)
    to_ben = [m for m in mails if str(m["To"]).lower() == ben]
    assert len(to_ben) >= 6
    assert {str(m["Subject"]) for m in to_ben} == {f"Union Pacific ridge ({player.name})"}
    secrets = [p.secret for p in table.record().players]
    assert not any(s in str(m["Subject"]) for m in mails for s in secrets)
    assert all(table.record().threads[player.name] in str(m["References"]) for m in to_ben[1:])


# ------------------------------------------------------------------ the draw from the stack, named to the drawer alone

@pytest.mark.parametrize("swap", [False, True])
def test_own_confirmation_names_the_share_drawn_from_the_stack(tmp_path, swap):
    """The mover's status mail (answering their order) names the share they drew
    from the stack, also when 'swap drawn' returned it; nobody else's mail does
    (rules: the stack and swapped cards are secret)."""
    from test_cycle import Harness, start_all, text_of
    from moderator.rules.actions import Build, Take
    from moderator.rules.components import DIVIDEND

    h = Harness(tmp_path)
    rec = start_all(h)
    h.sent()
    mover = rec.game.to_move
    build = next(a for a in rec.game.legal_actions(mover)
                 if isinstance(a, Build) and a.take == Take("stack") and a.swap is None and a.redraw is None)
    drawn = next(c for c in rec.game.stack if c != DIVIDEND)
    line = str(build) + ("; swap drawn" if swap else "")
    h.order(mover, line)
    assert h.run().applied == 1
    after = h.load()
    assert after.history[-1]["order"] == line
    assert (after.game.returned[mover] == [drawn]) is swap
    mails = {str(m["To"]).lower(): text_of(m) for m in h.sent()}
    assert len(mails) == 3
    mine = mails[after.player_by_name(mover).address.lower()]
    want = (f"  - You drew {drawn} from the stack and returned it to the box for a UP share "
            "('swap drawn') (only you see this).\n") if swap else \
        f"  - You drew {drawn} from the stack (only you see this).\n"
    assert want in mine
    for addr, text in mails.items():
        if addr != after.player_by_name(mover).address.lower():
            assert "You drew" not in text
    # the public record hides the swapped share: history for another player
    other = next(p for p in after.players if p.name != mover)
    h.order(other.name, "history")
    h.run()
    (hist,) = h.sent()
    public = f"{mover}: {build}; swap (a share) for UP\n" if swap else f"{mover}: {build}\n"
    assert public in text_of(hist) and "swap drawn" not in text_of(hist)


def test_message_ids_fit_a_header_line_so_references_are_never_encoded(tmp_path):
    """Python's email package writes a Message-ID longer than a header line into
    References as RFC 2047 encoded words, which Outlook drops (cpython issue
    79986): ours are short, and a References header of several of them stays
    plain, in the spool file and as sent over SMTP (policy.SMTP, as aiosmtplib)."""
    from email import policy as policies
    from moderator.mail.threads import new_message_id

    token = thread_token("ridge", "k3x9p2qa")
    ids = [new_message_id("ridge", token, "pbem.example.org") for _ in range(50)]
    assert len(set(ids)) == 50
    for mid in ids:
        assert re.fullmatch(rf"<[a-z2-7]{{13}}\.{token}\.pbem\.ridge@pbem\.example\.org>", mid)
        assert len(mid) == 60
    table = Table(tmp_path, corpus_secret=False)
    welcome = {str(m["To"]).lower(): m for m in table.sent()}
    ben = "ben.carter@gmail.com"
    old = str(welcome[ben]["Message-ID"])
    for n in range(3):  # a thread of replies: References grows
        _mail(table, ben, "rules", old)
        table.mod.run_cycle()
        (answer,) = table.sent()
        old = str(answer["Message-ID"])
    raw = answer.as_bytes(policy=policies.SMTP)
    head = raw.split(b"\r\n\r\n")[0].decode()
    assert "=?" not in head
    refs = re.search(r"\r\nReferences: (.*?)\r\n(?=\S)", head, re.S).group(1)
    assert table.record().threads[table.record().player_by_address(ben).name] in refs
