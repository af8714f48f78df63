"""Bounce notices in every form they come in, matched by our Message-ID (issue 24).

The corpus of tests/mail/bounces/ (sources in its README.md): RFC 3464 reports and
the plain notices of qmail, Exim, Postfix, Exchange, Lotus Notes/Domino, Gmail,
Outlook.com, Yahoo, GMX and web.de (1&1), in English, French, Italian, Russian,
German, Spanish, Czech, Chinese, Portuguese, Dutch and Polish.  Each one quotes a
Message-ID of a mail the moderator sent a player (with that player's token) and
must record exactly that player's registered address, whatever address the
notice names; mails that are no bounce, or name no mail of ours, record nothing.
The whole loop: a German plain-text bounce quoting the Message-ID of a mail really
sent lands in the inbox; ``pbem bounces list`` shows the player, ``pbem doctor``
warns, the game master gets a notice, and the player's next status mail says so."""
from __future__ import annotations

import mailbox
import re
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.config import Config
from moderator.mail.bounces import our_message_ids
from moderator.mail.read import read_mail
from moderator.mail.threads import thread_token
from moderator.moderation.cycle import Moderator
from moderator.store.bookkeeping import Bookkeeping
from moderator.store.gamefile import GameStore
from outbox import unseen_mails

BOUNCES = Path(__file__).parent / "mail" / "bounces"
EXPECTED = yaml.safe_load((BOUNCES / "expected.yaml").read_text(encoding="utf-8"))
OWN = "moderator@up.example.org"
GM = "gm@up.example.org"
# the corpus's players: their secrets give the tokens its Message-IDs carry
PLAYERS = {"Ann": ("anna.mueller@gmx.example.de", "a7k2m9q4"), "Ben": ("ben.carter@gmail.example.com", "b3n5x8w2"),
           "Cris": ("cristina.lopez@outlook.example.es", "c9r4t6y1"),
           "Dana": ("dana.novakova@seznam.example.cz", "d2n7v5k8"),
           "Eli": ("eli.wang@qq.example.cn", "e6l3p9z4"), "Fay": ("fay.dubois@orange.example.fr", "f4y8h2j6")}


class Table:
    """A moderator on Maildirs with the corpus's six players in game ``ridge``,
    the operator (the game master) at ``GM``."""

    def __init__(self, tmp_path: Path):
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "inbox",
                             maildir_outbox=tmp_path / "outbox", spool_dir=tmp_path / "spool",
                             moderator_address=OWN, operator=GM)
        self.mod = Moderator(self.config)
        self.mod.create_game("ridge", [(n, a) for n, (a, _) in PLAYERS.items()], seed=5)
        store = GameStore(self.config.games_dir)
        record = store.load("ridge")
        for p in record.players:
            p.secret = PLAYERS[p.name][1]
        store.save(record)
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()
        self.mod.run_cycle()
        self.sent()

    def sent(self):
        return unseen_mails(self.outbox, self.seen)

    def bounces(self) -> dict[str, str]:
        with Bookkeeping.in_spool(self.config.spool_dir) as bk:
            return bk.bounces()


def test_the_corpus_tokens_are_the_players():
    """The tokens written into the corpus are those of the players' secrets."""
    tokens = {thread_token("ridge", s): n for n, (_, s) in PLAYERS.items()}
    for name, exp in EXPECTED.items():
        if exp["recorded"] is None:
            continue
        ids = our_message_ids((BOUNCES / name).read_bytes().decode("latin-1"))
        named = {tokens[t] for mid in ids for t in tokens if f".{t}.pbem.ridge@" in mid}
        # the Chinese notice is base64: its id shows only once decoded
        assert named in ({exp["player"]}, set()), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_notice_records_exactly_its_player(tmp_path, name):
    exp = EXPECTED[name]
    raw = (BOUNCES / name).read_bytes()
    om = read_mail(raw, own_address=OWN)
    table = Table(tmp_path)
    table.inbox.add(raw)
    report = table.mod.run_cycle()
    assert report.errors == []
    sent = table.sent()
    if exp["recorded"] is None:
        assert table.bounces() == {}
        assert not [m for m in sent if str(m["To"]) == GM]
        return
    assert om.bounce_notice is not None and om.bounce_notice.form == exp["form"]
    assert table.bounces() == {exp["recorded"]: f"bounce report from {om.sender}"}
    assert (report.ignored, report.applied, report.refused) == (1, 0, 0)  # never answered
    (notice,) = sent
    assert str(notice["To"]) == GM
    assert str(notice["Subject"]) == f"Union Pacific ridge: mail to {exp['player']} bounced"
    text = notice.get_body(preferencelist=("plain",)).get_content()
    assert f"A mail from the moderator to {exp['player']} ({exp['recorded']}) could not be delivered" in text
    assert f"pbem player set-address ridge {exp['player']} NEW-ADDRESS" in text


def test_a_second_bounce_of_the_same_address_is_not_told_again(tmp_path):
    table = Table(tmp_path)
    raw = (BOUNCES / "de_plain_mailer_daemon.eml").read_bytes()
    table.inbox.add(raw)
    table.mod.run_cycle()
    assert [str(m["To"]) for m in table.sent()] == [GM]
    table.inbox.add(raw.replace(b"MD7712", b"MD7799"))  # the next notice of the same failure
    table.mod.run_cycle()
    assert table.sent() == [] and list(table.bounces()) == ["anna.mueller@gmx.example.de"]


def _cli(tmp_path: Path, *args: str):
    r = CliRunner().invoke(pbem.main, list(args), catch_exceptions=False)
    return r


def test_german_plain_bounce_whole_loop(tmp_path, monkeypatch):
    """A German plain-text notice (no report, no X-Failed-Recipients) quoting the
    Message-ID of the welcome really sent to Ann: recorded against Ann, shown by
    ``pbem bounces list`` and ``pbem doctor``, told to the game master; the game
    is unchanged (tests/test_cycle.py shows the note in the next status mail)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({
        "games_dir": "games", "spool_dir": "spool", "operator": GM, "moderator": {"address": OWN},
        "maildir": {"inbox": "mail/inbox", "outbox": "mail/outbox"}}))
    args = ["new", "ridge", "--seed", "7"]
    for n in ("Ann", "Ben", "Cris"):
        args += ["--player", f"{n}={PLAYERS[n][0]}"]
    assert _cli(tmp_path, *args).exit_code == 0
    outbox = mailbox.Maildir(str(tmp_path / "mail" / "outbox"), create=False)
    mails = [BytesParser(policy=policy.default).parsebytes(outbox.get_bytes(k)) for k in outbox.keys()]
    welcome = next(m for m in mails if str(m["To"]) == PLAYERS["Ann"][0])
    sent_id = str(welcome["Message-ID"])
    before = (tmp_path / "games" / "ridge.yaml").read_bytes()

    raw = (BOUNCES / "de_plain_mailer_daemon.eml").read_bytes()
    quoted = re.search(rb"<w01[^>]+>", raw).group(0)
    raw = raw.replace(quoted, sent_id.encode())
    # the quoted thread id of the corpus file is no mail of this game: only the sent one is
    raw = re.sub(rb"In-Reply-To: <thread0[^>]+>", b"In-Reply-To: <elsewhere@example.org>", raw)
    assert b"Content-Type: multipart/report" not in raw and b"X-Failed-Recipients" not in raw
    mailbox.Maildir(str(tmp_path / "mail" / "inbox"), create=True).add(raw)
    for k in outbox.keys():
        outbox.remove(k)

    assert _cli(tmp_path, "run", "--now", "2026-12-01T18:30:00+00:00").exit_code == 0
    assert (tmp_path / "games" / "ridge.yaml").read_bytes() == before
    r = _cli(tmp_path, "bounces", "list")
    assert r.output == f"{PLAYERS['Ann'][0]} (Ann in game ridge): bounce report from mailer-daemon@mx01.mail.example.de\n"
    r = _cli(tmp_path, "doctor", "--now", "2026-12-01T18:31:00+00:00")
    assert re.search(rf"NOTE  bounced addresses: {re.escape(PLAYERS['Ann'][0])} \(Ann in game ridge\): "
                     r"bounce report from mailer-daemon@mx01\.mail\.example\.de", r.output), r.output
    mails = [BytesParser(policy=policy.default).parsebytes(outbox.get_bytes(k)) for k in outbox.keys()]
    (notice,) = mails
    assert str(notice["To"]) == GM and str(notice["Subject"]) == "Union Pacific ridge: mail to Ann bounced"
    text = notice.get_body(preferencelist=("plain",)).get_content()
    assert (f"A mail from the moderator to Ann ({PLAYERS['Ann'][0]}) could not be delivered: "
            "mailer-daemon@mx01.mail.example.de sent it back (Antwort des Servers: 552 5.2.2 Mailbox voll).") in text


SUBJECTS = {"en": "Undeliverable: Union Pacific ridge (Ann)", "de": "Unzustellbar: Union Pacific ridge (Ann)",
            "es": "No se puede entregar: Union Pacific ridge (Ann)", "cs": "Nedoručitelné: Union Pacific ridge (Ann)",
            "zh": "无法投递: Union Pacific ridge (Ann)", "fr": "Non remis : Union Pacific ridge (Ann)",
            "it": "Non recapitabile: Union Pacific ridge (Ann)", "pt": "Não é possível entregar: Union Pacific ridge",
            "nl": "Onbestelbaar: Union Pacific ridge (Ann)", "pl": "Niedostarczalne: Union Pacific ridge (Ann)",
            "ru": "Недоставленное сообщение: Union Pacific ridge (Ann)"}


def _gateway_notice(subject: str) -> bytes:
    """A notice from a mail gateway whose sender says nothing (no MAILER-DAEMON),
    machine mail by its Auto-Submitted header, quoting Ann's Message-ID."""
    from email.header import Header

    mid = f"<w20x7m2kd9wfa.{thread_token('ridge', PLAYERS['Ann'][1])}.pbem.ridge@up.example.org>"
    return (f"From: Mail Gateway <gateway@corp.example.com>\r\nTo: {OWN}\r\n"
            f"Subject: {Header(subject, 'utf-8').encode()}\r\nAuto-Submitted: auto-replied\r\n"
            "Message-ID: <gw.1@corp.example.com>\r\nMIME-Version: 1.0\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n\r\n"
            f"Original message:\r\n  Message-ID: {mid}\r\n").encode()


@pytest.mark.parametrize("language", sorted(SUBJECTS))
def test_a_bounce_subject_in_each_language_tells_a_gateway_notice(language):
    om = read_mail(_gateway_notice(SUBJECTS[language]), own_address=OWN)
    assert om.machine == "Auto-Submitted: auto-replied"
    assert om.bounce_notice is not None and om.bounce_notice.form == "bounce subject"
    assert om.bounce_notice.ours == (f"<w20x7m2kd9wfa.{thread_token('ridge', PLAYERS['Ann'][1])}"
                                     ".pbem.ridge@up.example.org>",)


@pytest.mark.parametrize("subject", ["Automatic reply: Union Pacific ridge (Ann)", "Abwesenheitsnotiz: Union Pacific",
                                     "Warning: message 1kX-00 delayed 24 hours", "Zustellung verzögert"])
def test_an_auto_reply_or_a_delay_warning_from_a_gateway_is_no_bounce(subject):
    om = read_mail(_gateway_notice(subject), own_address=OWN)
    assert om.machine is not None and om.bounce_notice is None


def test_without_a_game_master_the_bounce_is_recorded_and_nobody_mailed(tmp_path):
    table = Table(tmp_path)
    table.mod.config.operator = None  # no operator, and the game names no game master
    table.inbox.add((BOUNCES / "cs_plain_attached.eml").read_bytes())
    report = table.mod.run_cycle()
    assert report.errors == [] and table.sent() == []
    assert list(table.bounces()) == ["dana.novakova@seznam.example.cz"]


def test_a_plain_notice_without_a_reply_code_gives_the_game_master_the_servers_words(tmp_path):
    """A plain German notice naming no SMTP code (the server's reason is the line
    under the failed address): the game master's notice carries those words, as
    docs/operations.md promises; the bookkeeping keeps the sender for the operator."""
    table = Table(tmp_path)
    mid = f"<w365i4qpllozu.{thread_token('ridge', PLAYERS['Ann'][1])}.pbem.ridge@up.example.org>"
    table.inbox.add((
        f"From: MAILER-DAEMON@mx.example.org (Mail Delivery System)\r\nTo: {OWN}\r\n"
        "Subject: Unzustellbar: Union Pacific ridge (Ann)\r\nAuto-Submitted: auto-replied\r\n"
        "Message-ID: <bounce1@mx.example.org>\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\n"
        "Dies ist eine automatisch erstellte Benachrichtigung über den Zustellstatus.\r\n\r\n"
        "Die Zustellung an folgende Empfänger ist fehlgeschlagen:\r\n\r\n"
        f"    {PLAYERS['Ann'][0]}\r\n    Das Postfach ist voll oder existiert nicht mehr.\r\n\r\n"
        "----- Ursprüngliche Nachricht -----\r\n"
        f"From: Union Pacific moderator <{OWN}>\r\nTo: {PLAYERS['Ann'][0]}\r\n"
        f"Message-ID: {mid}\r\n").encode())
    table.mod.run_cycle()
    assert table.bounces() == {PLAYERS["Ann"][0]: "bounce report from mailer-daemon@mx.example.org"}
    (notice,) = [m for m in table.sent() if str(m["To"]) == GM]
    text = " ".join(notice.get_body(preferencelist=("plain",)).get_content().split())
    assert (f"A mail from the moderator to Ann ({PLAYERS['Ann'][0]}) could not be delivered: "
            "mailer-daemon@mx.example.org sent it back (Das Postfach ist voll oder existiert nicht mehr.).") in text
