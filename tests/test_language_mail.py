"""Every player receives everything in their language (issue 15): the game file's
languages (format 3), ``pbem new --language/--player-language``, the mail command
``language``, the language in force around each recipient's mails (status
batches with recipients of different languages, through the real Moderator on
local Maildirs), and dates and times in the player's locale and time zone.

The translations here come from a small test catalogue written into a temporary
folder (``moderator.i18n.locale_dir`` pointed at it); the status mail's own
templates are the shipped ones with one marked line added, as an operator's
``$PBEM_TEMPLATES`` would add it, so that the test does not depend on which
shipped messages are marked or translated yet.  The expected texts are written
out by hand (the catalogue's strings, the Babel/CLDR date forms)."""
from __future__ import annotations

import mailbox
import os
import re
import shutil
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator import i18n, render
from moderator.config import Config
from moderator.moderation.cycle import Moderator
from moderator.moderation.language import check_language
from moderator.orders.parser import command
from moderator.render.when import format_iso, format_when
from moderator.render.words import names
from moderator.store.gamefile import GameStore
from test_deadlines import deliver
from outbox import unseen_mails

ROOT = Path(__file__).resolve().parent.parent
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)  # a Tuesday

CATALOGUES = {
    "es": {
        "Your move.": "Te toca mover.",
        "Union Pacific, game %(game_id)s: %(title)s": "Union Pacific, partida %(game_id)s: %(title)s",
        "your initial investment": "tu inversión inicial",
        "From now on you get every mail of game %(game_id)s in %(language)s. Orders may be written in "
        "the words of your language or in English.":
            "A partir de ahora recibes todo el correo de la partida %(game_id)s en %(language)s. Puedes "
            "escribir las órdenes en tu idioma o en inglés.",
    },
    "cs": {
        "Your move.": "Jsi na tahu.",
        "Union Pacific, game %(game_id)s: %(title)s": "Union Pacific, hra %(game_id)s: %(title)s",
        "your initial investment": "tvou počáteční investici",
        "From now on you get every mail of game %(game_id)s in %(language)s. Orders may be written in "
        "the words of your language or in English.":
            "Odteď dostáváš všechnu poštu hry %(game_id)s v jazyce %(language)s. Tahy můžeš psát "
            "slovy svého jazyka nebo anglicky.",
        "You get the mails of game %(game_id)s in %(language)s. To change it, reply with a line "
        "'language' and one of these codes:":
            "Poštu hry %(game_id)s dostáváš v jazyce %(language)s. Pro změnu odpověz řádkem "
            "'language' a jedním z těchto kódů:",
    },
}
PLURALS = {"es": "nplurals=2; plural=(n != 1);",
           "cs": "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;"}
MARK = "{% trans %}Your move.{% endtrans %}"


def _po(entries: dict[str, str], plural: str) -> str:
    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    head = (f'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
            f'"Plural-Forms: {plural}\\n"\n\n')
    return head + "".join(f"msgid {q(k)}\nmsgstr {q(v)}\n\n" for k, v in entries.items())


@pytest.fixture()
def catalogue(tmp_path, monkeypatch):
    """The test catalogues (es, cs) in place of ``moderator/locale``, and an
    operator's templates folder whose status mail (text and HTML layout) has one
    marked line more."""
    locale = tmp_path / "locale"
    for lang, entries in CATALOGUES.items():
        folder = locale / lang / "LC_MESSAGES"
        folder.mkdir(parents=True)
        (folder / "pbem.po").write_text(_po(entries, PLURALS[lang]), encoding="utf-8")
    monkeypatch.setattr(i18n, "locale_dir", lambda: locale)
    own = tmp_path / "templates"
    (own / "mail").mkdir(parents=True)
    shipped = ROOT / "templates"
    (own / "status.txt").write_text(MARK + "\n\n" + (shipped / "status.txt").read_text(encoding="utf-8"),
                                    encoding="utf-8")
    base = (shipped / "mail" / "base.html").read_text(encoding="utf-8")
    body_tag = '<body style="margin:0;padding:0;">'
    assert base.count(body_tag) == 1
    (own / "mail" / "base.html").write_text(base.replace(body_tag, body_tag + f"<p>{MARK}</p>"),
                                            encoding="utf-8")
    monkeypatch.setenv("PBEM_TEMPLATES", str(own))
    _clear()
    yield locale
    monkeypatch.undo()
    _clear()


def _clear() -> None:
    i18n.translations.cache_clear()
    render.environment.cache_clear()
    render.html_environment.cache_clear()


class Table:
    """A moderator on Maildirs with a settable clock and a game with languages."""

    def __init__(self, tmp_path, players, settings=None, languages=None, observers=(), game_id="ridge"):
        self.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                             maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool",
                             operator="gm@example.org")
        self.now = T0
        self.gid = game_id
        self.addr = dict(players)
        self.mod = Moderator(self.config, clock=lambda: self.now)
        self.mod.create_game(game_id, list(players), seed=5, settings=settings, languages=languages,
                             observers=list(observers))
        self.inbox = mailbox.Maildir(str(self.config.maildir_inbox), create=True)
        self.outbox = mailbox.Maildir(str(self.config.maildir_outbox), create=True)
        self.seen: set[str] = set()

    def load(self):
        return GameStore(self.config.games_dir).load(self.gid)

    def mail(self, name, body):
        rec = self.load()
        msg = EmailMessage(policy=policy.default)
        msg["From"] = self.addr[name]
        msg["To"] = self.config.moderator_address
        msg["Subject"] = f"Re: [pbem:{self.gid}:{rec.player_by_name(name).secret}] Union Pacific {self.gid}"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(body + "\n")
        deliver(self.inbox, msg.as_bytes(), self.now)  # it arrives at the simulated time

    def run(self, at=None):
        if at is not None:
            self.now = at
        report = self.mod.run_cycle()
        assert report.ok, report.errors
        return report

    def sent(self):
        return unseen_mails(self.outbox, self.seen)

    def close(self):
        self.mod.close()



def text(msg) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def html(msg) -> str:
    return msg.get_body(preferencelist=("html",)).get_content()


def to(msgs, address):
    return [m for m in msgs if str(m["To"]) == address]


# ------------------------------------------------------------------ dates and times
@pytest.mark.parametrize("language,zone,expected", [
    ("cs", "Europe/Prague", "st 2. 12. 2026 13:00 SEČ"),
    ("cs", "Asia/Shanghai", "st 2. 12. 2026 20:00 (Asia/Shanghai)"),
    ("cs", None, "st 2. 12. 2026 12:00 UTC"),
    ("zh", "Asia/Shanghai", "2026年12月2日周三 20:00 (Asia/Shanghai)"),
    ("zh", "Europe/Prague", "2026年12月2日周三 13:00 (Europe/Prague)"),
    ("zh", None, "2026年12月2日周三 12:00 UTC"),
    ("es", "Europe/Madrid", "mié, 2 dic 2026, 13:00 CET"),
    ("de", "Europe/Berlin", "Mi., 2. Dez. 2026, 13:00 MEZ"),
    # English keeps the form pbem always wrote (tests and players' filters know it)
    ("en", None, "2026-12-02 12:00 UTC"),
    ("en", "Europe/Madrid", "2026-12-02 13:00 CET"),
])
def test_a_moment_in_the_players_locale_and_time_zone(language, zone, expected):
    assert format_when(datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc), zone, language) == expected


def test_summer_time_and_the_language_in_force():
    summer = datetime(2026, 7, 15, 6, 30, tzinfo=timezone.utc)
    assert format_when(summer, "Europe/Prague", "cs") == "st 15. 7. 2026 8:30 SELČ"
    assert format_when(summer, "Asia/Shanghai", "zh") == "2026年7月15日周三 14:30 (Asia/Shanghai)"
    with i18n.speaking("cs"):
        assert format_when(summer) == "st 15. 7. 2026 6:30 UTC"
        assert format_iso("2026-07-15T08:30:00+02:00") == "st 15. 7. 2026 6:30 UTC"
    assert format_when(summer, label=False) == "2026-07-15 06:30"
    assert format_when(summer, "No/Such_Zone", "en") == "2026-07-15 06:30 UTC"
    assert format_iso("not a time", None, "cs") == "not a time"


# ------------------------------------------------------------------ the command
@pytest.mark.parametrize("line,cmd", [
    ("language", "language"), ("Language cs", "language cs"), ("idioma es", "language es"),
    ("Sprache de", "language de"), ("jazyk cs", "language cs"), ("语言 zh", "language zh"),
    ("语言", "language"), ("language: Deutsch", "language Deutsch"), ("language xx", "language xx"),
    ("language please switch it now", None), ("language es de", None),
])
def test_the_language_command_is_read(line, cmd):
    assert command(line) == cmd


@pytest.mark.parametrize("tag,code", [("es", "es"), ("ES", "es"), ("es-MX", "es"), ("Deutsch", "de"),
                                      ("čeština", "cs"), ("中文", "zh"), ("zh-CN", "zh"), ("English", "en")])
def test_check_language(tag, code):
    assert check_language(tag) == code


@pytest.mark.parametrize("tag", ["xx", "fr", "zh-TW", ""])
def test_check_language_refuses_naming_the_five(tag):
    with pytest.raises(ValueError) as info:
        check_language(tag)
    assert str(info.value) == (f"unknown language {tag!r}: pbem writes en (English), es (Español), "
                               "de (Deutsch), cs (Čeština), zh (简体中文)")


def test_every_language_word_is_used():
    """Each macro of templates/words/language.txt is named in the code (as a literal)."""
    code = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "moderator").rglob("*.py"))
    assert names("language") == {"language_set", "language_list", "language_unknown", "notice_heading",
                                 "expected"}
    for name in names("language"):
        assert f'"{name}"' in code, name


# ------------------------------------------------------------------ pbem new
@pytest.fixture()
def cli_home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pbem.yaml").write_text("games_dir: games\nspool_dir: spool\n", encoding="utf-8")
    return tmp_path


def test_pbem_new_with_languages(cli_home):
    r = CliRunner().invoke(pbem.main, ["new", "ridge", "--player", "Ana=ana@example.org", "--player",
                                       "Bob=bob@example.org", "--player", "Jana=jana@example.cz",
                                       "--language", "ES", "--player-language", "Jana=cs",
                                       "--player-language", "Bob=English"])
    assert r.exit_code == 0, r.output
    data = yaml.safe_load((cli_home / "games" / "ridge.yaml").read_text(encoding="utf-8"))
    assert data["format"] == 7
    assert data["settings"]["language"] == "es"
    assert [(p["name"], p["language"]) for p in data["players"]] == [("Ana", None), ("Bob", "en"), ("Jana", "cs")]
    rec = GameStore(cli_home / "games").load("ridge")
    assert [rec.language_of(p) for p in rec.players] == ["es", "en", "cs"]


@pytest.mark.parametrize("args,message", [
    (["--language", "fr"], "unknown language 'fr': pbem writes en (English), es (Español), de (Deutsch), "
                           "cs (Čeština), zh (简体中文)"),
    (["--player-language", "Ana=xx"], "unknown language 'xx'"),
    (["--player-language", "Ana"], "'Ana': write NAME=CODE, e.g. Ana=es"),
    (["--player-language", "Zed=es"], "a language for Zed, who is no player by mail of this game"),
])
def test_pbem_new_refuses_an_unknown_language_and_writes_nothing(cli_home, args, message):
    r = CliRunner().invoke(pbem.main, ["new", "ridge", "--player", "Ana=ana@example.org", "--player",
                                       "Bob=bob@example.org", *args])
    assert r.exit_code != 0
    assert message in " ".join(r.output.split())
    assert not (cli_home / "games" / "ridge.yaml").exists()


# ------------------------------------------------------------------ format 3
def test_a_format_2_game_loads_in_english_and_saves_as_format_4(tmp_path):
    src = ROOT / "tests" / "fixtures" / "games" / "v2" / "v2-deadlines-3p.yaml"
    shutil.copy(src, tmp_path / src.name)
    store = GameStore(tmp_path)
    rec = store.load("v2-deadlines-3p")
    assert rec.language == "en" and [p.language for p in rec.players] == [None, None, None]
    rec.players[1].language = "de"
    store.save(rec)
    data = yaml.safe_load((tmp_path / src.name).read_text(encoding="utf-8"))
    assert data["format"] == 7  # the languages of format 3, the events of format 4
    assert data["settings"]["language"] == "en" and data["log"][0]["kind"] == "set_up"
    assert [p["language"] for p in data["players"]] == [None, "de", None]
    again = GameStore(tmp_path).load("v2-deadlines-3p", check=True)
    assert [again.language_of(p) for p in again.players] == ["en", "de", "en"]


# ------------------------------------------------------------------ mails in each language
THREE = [("Ann", "ann@example.org"), ("Ana", "ana@example.org"), ("Jana", "jana@example.cz")]


def test_a_status_batch_in_three_languages_through_the_maildirs(tmp_path, catalogue):
    """A Czech game: Ann reads English, Ana Spanish, Jana the game's Czech, the
    observer too.  The welcomes, the clock's reminders and the status mails after
    the initial investments each come in the recipient's language (the marked
    line, the notices' heading, the dates), the Subject stays the English one of
    the thread."""
    t = Table(tmp_path, THREE, settings={"deadline": 24 * 3600, "language": "cs"},
              languages={"Ann": "en", "Ana": "es"}, observers=["obs@example.net"])
    welcomes = t.sent()
    assert sorted(str(m["To"]) for m in welcomes) == ["ana@example.org", "ann@example.org",
                                                       "jana@example.cz", "obs@example.net"]
    for address, line, due in [("ann@example.org", "Your move.", "Your move is due by 2026-12-02 12:00 UTC."),
                               ("ana@example.org", "Te toca mover.", "Your move is due by mié, 2 dic 2026, 12:00 UTC."),
                               ("jana@example.cz", "Jsi na tahu.", "Your move is due by st 2. 12. 2026 12:00 UTC.")]:
        [m] = to(welcomes, address)
        assert str(m["Subject"]) == f"Union Pacific ridge ({dict((a, n) for n, a in THREE)[address]})"
        # the welcome's text part is welcome.txt; its HTML layout has the marked line
        assert f"<p>{line}</p>" in html(m)
        assert due in text(m)

    # Jana sets her time zone: the answer gives her local time in Czech
    t.mail("Jana", "timezone Europe/Prague")
    t.run(T0 + timedelta(hours=1))
    [answer] = t.sent()
    assert "(it is út 1. 12. 2026 14:00 SEČ there)" in " ".join(text(answer).split())

    # 12 hours before the deadline: a reminder to each, in their language
    t.run(T0 + timedelta(hours=12, minutes=5))
    reminders = t.sent()
    assert sorted(str(m["To"]) for m in reminders) == ["ana@example.org", "ann@example.org", "jana@example.cz"]
    [ann] = to(reminders, "ann@example.org")
    [ana] = to(reminders, "ana@example.org")
    [jana] = to(reminders, "jana@example.cz")
    assert text(ann).startswith("Union Pacific, game ridge: reminder: your move is due\n")
    assert "waiting for your initial investment. It is due by 2026-12-02 12:00 UTC;" in " ".join(text(ann).split())
    assert text(ana).startswith("Union Pacific, partida ridge: reminder: your move is due\n")
    assert "waiting for tu inversión inicial. It is due by mié, 2 dic 2026, 12:00 UTC;" in \
        " ".join(text(ana).split())
    assert text(jana).startswith("Union Pacific, hra ridge: reminder: your move is due\n")
    assert ("waiting for tvou počáteční investici. It is due by st 2. 12. 2026 12:00 UTC "
            "(st 2. 12. 2026 13:00 SEČ, Europe/Prague);") in " ".join(text(jana).split())
    assert {str(m["Subject"]) for m in reminders} == {"Union Pacific ridge (Ann)", "Union Pacific ridge (Ana)",
                                                      "Union Pacific ridge (Jana)"}

    # the initial investments: one batch of status mails, each in its reader's language
    for name in ("Ann", "Ana", "Jana"):
        rec = t.load()
        t.mail(name, f"start {rec.game.legal_summary(name).starts[0].share}")
    t.run(T0 + timedelta(hours=13))
    batch = t.sent()
    status = {str(m["To"]): m for m in batch}
    assert set(status) == {"ann@example.org", "ana@example.org", "jana@example.cz", "obs@example.net"}
    assert text(status["ann@example.org"]).startswith("Your move.\n")
    assert text(status["ana@example.org"]).startswith("Te toca mover.\n")
    assert text(status["jana@example.cz"]).startswith("Jsi na tahu.\n")
    assert "<p>Your move.</p>" in html(status["ann@example.org"])
    assert "<p>Te toca mover.</p>" in html(status["ana@example.org"])
    assert "<p>Jsi na tahu.</p>" in html(status["jana@example.cz"])
    assert "<p>Jsi na tahu.</p>" in html(status["obs@example.net"])  # the observer reads the game's
    rec = t.load()
    first = rec.game.players[rec.game.current]
    # the wait started when the last investment was read (T0 + 13 h): due 24 hours later
    due = {"Ann": "Your move is due by 2026-12-03 01:00 UTC.",
           "Ana": "Your move is due by jue, 3 dic 2026, 1:00 UTC.",
           "Jana": "Your move is due by čt 3. 12. 2026 1:00 UTC (čt 3. 12. 2026 2:00 SEČ, Europe/Prague)."}
    for name, address in THREE:
        assert (due[name] in " ".join(text(status[address]).split())) == (name == first), name
        assert str(status[address]["Subject"]) == f"Union Pacific ridge ({name})"
    t.close()


def test_the_language_command_by_mail(tmp_path, catalogue):
    t = Table(tmp_path, THREE, settings={"language": "es"})
    t.sent()
    # 'language' alone: the one in force (the game's) and the five, in Spanish (no
    # translation of that sentence in the test catalogue: the English id)
    t.mail("Jana", "language")
    t.run()
    [m] = t.sent()
    body = text(m)
    assert "You get the mails of game ridge in Español." in " ".join(body.split())
    for code, own in [("en", "English"), ("es", "Español"), ("de", "Deutsch"), ("cs", "Čeština"),
                      ("zh", "简体中文")]:
        assert f"  {code}  {own}\n" in body
    assert str(m["Subject"]) == "Union Pacific ridge (Jana)"
    # 'jazyk cs': recorded in the game file, the answer already in Czech
    t.mail("Jana", "jazyk čeština")
    t.run()
    [m] = t.sent()
    assert ("Odteď dostáváš všechnu poštu hry ridge v jazyce Čeština. Tahy můžeš psát slovy svého jazyka "
            "nebo anglicky.") in " ".join(text(m).split())
    assert "<p>Jsi na tahu.</p>" in html(m)  # the HTML layout in Czech too
    assert t.load().player_by_name("Jana").language == "cs"
    assert yaml.safe_load((t.config.games_dir / "ridge.yaml").read_text(encoding="utf-8"))["players"][2][
        "language"] == "cs"
    # now 'language' alone answers in Czech, naming Czech
    t.mail("Jana", "语言")
    t.run()
    [m] = t.sent()
    assert "Poštu hry ridge dostáváš v jazyce Čeština." in " ".join(text(m).split())
    # an unknown code: refused, the list given, nothing changed
    before = (t.config.games_dir / "ridge.yaml").read_bytes()
    t.mail("Ana", "idioma klingon")
    t.run()
    [m] = t.sent()
    assert "The moderator does not write 'klingon'; nothing was changed." in " ".join(text(m).split())
    assert "  zh  简体中文\n" in text(m)
    assert (t.config.games_dir / "ridge.yaml").read_bytes() == before
    # 'sprache de' from Ana: German has no catalogue here, the English ids; recorded
    t.mail("Ana", "Sprache de")
    t.run()
    [m] = t.sent()
    assert "From now on you get every mail of game ridge in Deutsch." in " ".join(text(m).split())
    assert t.load().player_by_name("Ana").language == "de"
    t.close()


def test_a_refusal_comes_in_the_senders_language(tmp_path, catalogue):
    """A mail the moderator cannot read as an order: the reply's HTML layout in
    the sender's language (Czech), and the Subject of the thread in English."""
    t = Table(tmp_path, THREE, settings={"language": "cs"}, languages={"Ann": "en"})
    t.sent()
    t.mail("Jana", "build the big railroad please")
    t.mail("Ann", "build the big railroad please")
    t.run()
    replies = {str(m["To"]): m for m in t.sent()}
    assert "<p>Jsi na tahu.</p>" in html(replies["jana@example.cz"])
    assert "<p>Your move.</p>" in html(replies["ann@example.org"])
    assert str(replies["jana@example.cz"]["Subject"]) == "Union Pacific ridge (Jana)"
    # the refusal's own words (not in the test catalogue) and its quoted line are there
    assert "build the big railroad please" in text(replies["jana@example.cz"])
    t.close()


def test_news_a_player_causes_reach_the_others_in_their_own_languages(tmp_path, catalogue):
    """The failure other systems had (notifications in the sender's language, not
    the recipient's): Jana (Czech) starts a vacation; her answer is Czech, the
    announcement to Ann English and to Ana Spanish, each with the date in their
    own form; the game master's reply to a 'message' stays English while the
    players get the message under their own heading."""
    t = Table(tmp_path, THREE, settings={"language": "cs"}, languages={"Ann": "en", "Ana": "es"})
    t.sent()
    t.mail("Jana", "vacation 2d")
    t.run(T0 + timedelta(hours=2))
    mails = {str(m["To"]): m for m in t.sent()}
    assert set(mails) == {"ann@example.org", "ana@example.org", "jana@example.cz"}
    assert ("your clock stands still until čt 3. 12. 2026 14:00 UTC (2 dny)."
            in " ".join(text(mails["jana@example.cz"]).split()))
    assert "<p>Jsi na tahu.</p>" in html(mails["jana@example.cz"])
    ann, ana = text(mails["ann@example.org"]), text(mails["ana@example.org"])
    assert ann.startswith("Union Pacific, game ridge: Jana on vacation\n")
    assert "Jana is on vacation until 2026-12-03 14:00 UTC:" in " ".join(ann.split())
    assert ana.startswith("Union Pacific, partida ridge: Jana on vacation\n")
    assert "Jana is on vacation until jue, 3 dic 2026, 14:00 UTC:" in " ".join(ana.split())
    assert "<p>Your move.</p>" in html(mails["ann@example.org"])
    assert "<p>Te toca mover.</p>" in html(mails["ana@example.org"])
    # the game master (the operator here) writes to everyone from the command line
    t.mod.manage("ridge", "message Bonne chance")
    notices = {str(m["To"]): m for m in t.sent()}
    assert text(notices["ana@example.org"]).startswith("Union Pacific, partida ridge: ")
    assert text(notices["jana@example.cz"]).startswith("Union Pacific, hra ridge: ")
    assert text(notices["ann@example.org"]).startswith("Union Pacific, game ridge: ")
    assert all("Bonne chance" in text(m) for m in notices.values())
    t.close()


def test_a_status_batch_in_two_languages_over_imap_and_smtp(tmp_path, catalogue, dovecot, smtp_sink,
                                                             monkeypatch):
    """The same through the private Dovecot (orders fetched by IMAP) and aiosmtpd
    (mails submitted by SMTP): after the initial investments Ann's status mail is
    English and Jana's Czech, text and HTML part; Jana's 'language es' is
    answered in Spanish and her next status mail is Spanish."""
    from moderator.config import load_config

    monkeypatch.setenv("LANG_IMAP_PASSWORD", dovecot.password)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
        "games_dir": "games",
        "imap": {"host": dovecot.host, "port": dovecot.port, "security": "none",
                 "username": dovecot.username, "password_env": "LANG_IMAP_PASSWORD"},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none"},
    }))
    config = load_config(cfg)
    players = [("Ann", "ann@example.org"), ("Jana", "jana@example.cz")]
    moderator = Moderator(config)
    moderator.create_game("duo", players, seed=7, settings={"language": "en"}, languages={"Jana": "cs"})
    store = GameStore(config.games_dir)
    seen = [0]

    def collect():
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        return {m.message["To"].addresses[0].addr_spec: m.message for m in new}

    def send(name, body):
        rec = store.load("duo")
        msg = EmailMessage(policy=policy.default)
        msg["From"] = dict(players)[name]
        msg["To"] = config.moderator_address
        msg["Subject"] = f"Re: Union Pacific duo ({name})"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(f"game: duo\nsecret: {rec.player_by_name(name).secret}\n{body}\n")
        dovecot.append(msg.as_bytes())

    welcomes = collect()
    assert "<p>Your move.</p>" in html(welcomes["ann@example.org"])
    assert "<p>Jsi na tahu.</p>" in html(welcomes["jana@example.cz"])
    for name, _ in players:
        send(name, f"start {store.load('duo').game.legal_summary(name).starts[0].share}")
    assert moderator.run_cycle().ok
    batch = collect()
    assert set(batch) == {"ann@example.org", "jana@example.cz"}
    assert text(batch["ann@example.org"]).startswith("Your move.\n")
    assert text(batch["jana@example.cz"]).startswith("Jsi na tahu.\n")
    assert "<p>Jsi na tahu.</p>" in html(batch["jana@example.cz"])
    assert str(batch["jana@example.cz"]["Subject"]) == "Union Pacific duo (Jana)"
    send("Jana", "language es\nstatus")
    assert moderator.run_cycle().ok
    answers = [m.message for m in smtp_sink.messages[seen[0]:]]
    seen[0] = len(smtp_sink.messages)
    assert len(answers) == 2
    assert ("A partir de ahora recibes todo el correo de la partida duo en Español."
            in " ".join(text(answers[0]).split()))
    assert text(answers[1]).startswith("Te toca mover.\n")
    assert store.load("duo").player_by_name("Jana").language == "es"
    assert dovecot.messages("INBOX") == []
    moderator.close()


def test_a_mail_refused_before_its_game_is_loaded_answers_in_the_players_language(tmp_path, catalogue):
    """A mail over max_size is refused without opening the game (``decide.screen``):
    the answer still goes in Jana's thread, in Czech."""
    t = Table(tmp_path, THREE, settings={"language": "cs"}, languages={"Ann": "en"})
    t.sent()
    t.mail("Jana", "start KCC\n" + "x" * (300 * 1024))
    t.mail("Ann", "start KCC\n" + "x" * (300 * 1024))
    t.run()
    replies = {str(m["To"]): m for m in t.sent()}
    assert set(replies) == {"jana@example.cz", "ann@example.org"}
    assert "<p>Jsi na tahu.</p>" in html(replies["jana@example.cz"])
    assert "<p>Your move.</p>" in html(replies["ann@example.org"])
    assert str(replies["jana@example.cz"]["Subject"]) == "Union Pacific ridge (Jana)"
    t.close()


def test_a_replaced_seat_reads_the_games_language(tmp_path, catalogue):
    t = Table(tmp_path, THREE, settings={"language": "es"}, languages={"Jana": "cs"})
    t.sent()
    t.mod.manage("ridge", "replace Jana Eva=eva@example.org")
    mails = {str(m["To"]): m for m in t.sent()}
    assert t.load().player_by_name("Jana").language is None
    assert "<p>Te toca mover.</p>" in html(mails["eva@example.org"])  # her welcome, in the game's Spanish
    assert text(mails["ana@example.org"]).startswith("Union Pacific, partida ridge: ")
    t.close()


def test_the_archive_renders_a_game_in_its_language_and_the_index_in_english(tmp_path, catalogue):
    """The Spanish game's pages are rendered in Spanish (the time of its first move
    in the Spanish form; the layout's marked words through the catalogue), the
    German game of the same site in German; the index stays English (its times
    as before), and with ``index_language="cs"`` the index is Czech."""
    from moderator.archive.site import build_site

    games = tmp_path / "games"
    games.mkdir()
    for name in ("v3-spanish-bots-finished", "v3-languages-4p"):
        shutil.copy(ROOT / "tests" / "fixtures" / "games" / "v3" / f"{name}.yaml", games / f"{name}.yaml")
    own = Path(os.environ["PBEM_TEMPLATES"]) / "archive"
    own.mkdir()
    for page in ("game.html", "move.html", "index.html"):
        source = (ROOT / "templates" / "archive" / page).read_text(encoding="utf-8")
        assert source.count("<h1") >= 1, page
        (own / page).write_text(source.replace("<h1", f"<p>{MARK}</p><h1", 1), encoding="utf-8")
    report = build_site(GameStore(games), tmp_path / "site")
    assert report.errors == [] and sorted(report.rendered) == ["v3-languages-4p", "v3-spanish-bots-finished"]
    site = tmp_path / "site"
    spanish = (site / "games" / "v3-spanish-bots-finished" / "move-1.html").read_text(encoding="utf-8")
    assert "<p>Te toca mover.</p>" in spanish
    assert "<small>mar, 1 dic 2026, 0:00 UTC</small>" in spanish  # received 2026-12-01T00:00:00+00:00
    assert "<p>Te toca mover.</p>" in (site / "games" / "v3-spanish-bots-finished" / "index.html").read_text(
        encoding="utf-8")
    german = (site / "games" / "v3-languages-4p" / "index.html").read_text(encoding="utf-8")
    assert "<p>Your move.</p>" in german  # German has no catalogue here: the English id
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "<p>Your move.</p>" in index
    assert " dic 2026" not in index and re.search(r"<td class=\"optional nowrap\">2026-11-30 12:00</td>", index)
    build_site(GameStore(games), site, index_language="cs")
    assert "<p>Jsi na tahu.</p>" in (site / "index.html").read_text(encoding="utf-8")


# ------------------------------------------------------------------ aligned tables
def test_the_players_table_aligns_chinese_names_by_columns(tmp_path, cli_home):
    """A CJK character is two columns wide (docs/languages.md): the PLAYERS rows of a
    status mail and of `pbem show` put "money" in one column whatever the names
    ("张伟" is 4 columns, padded to 14 like "Bob")."""
    players = [("张伟", "zhang@example.org"), ("Bob", "bob@example.org"), ("李小龙", "li@example.cn")]
    t = Table(tmp_path, players, settings={"language": "zh"})
    try:
        t.sent()
        t.mail("Bob", "status")
        t.run(T0 + timedelta(hours=1))
        (mail,) = to(t.sent(), "bob@example.org")
    finally:
        t.close()
    rows = {name: line for line in text(mail).splitlines() for name, _a in players
            if line.startswith("  ") and line[4:].startswith(name)}
    assert list(rows) == ["张伟", "Bob", "李小龙"]

    def column(line, name):  # where the text after the padded name starts, in columns
        after = line[4 + len(name):]
        return i18n.display_width(line[:len(line) - len(after.lstrip(" "))])

    assert [column(line, name) for name, line in rows.items()] == [4 + 14 + 1] * 3
    # pbem show, on the same game file
    (cli_home / "pbem.yaml").write_text(f"games_dir: {tmp_path / 'games'}\nspool_dir: spool\n", encoding="utf-8")
    r = CliRunner().invoke(pbem.main, ["show", "ridge"])
    assert r.exit_code == 0, r.output
    shown = [line for line in r.output.splitlines() if " money " in line]
    assert [line.split(" money ")[0] for line in shown] == [
        "  张伟" + " " * 10, "  Bob" + " " * 11, "  李小龙" + " " * 8]


def test_display_width_and_pad():
    assert [i18n.display_width(s) for s in ("Bob", "张伟", "Zoë", "Zoe\u0308", "ＡＢ")] == [3, 4, 3, 3, 4]
    assert i18n.pad("张伟", 6) == "张伟  " and i18n.pad("Bob", 2) == "Bob"


def test_pbem_list_aligns_chinese_names_by_columns():
    """``pbem list``'s table pads by columns too: a Chinese name is two columns a
    character, so the columns after it start where the header's do."""
    from moderator.archive.listing import table
    rows = [("g1", "first-edition", "张伟, 李小龙", "张伟", "2026-12-01", "-", "0/4", "-"),
            ("g2", "first-edition", "Ann, Bob", "Ann", "2026-12-01", "-", "0/4", "-")]
    lines = table(rows)
    starts = []
    for line in lines:
        head = line.split("  first-edition")[0] if "first-edition" in line else line.split("  RULESET")[0]
        starts.append(i18n.display_width(head))
    assert starts == [4, 4, 4]
    # the MOVE column starts at the same column in every line
    moves = [i18n.display_width(line[:line.index(m)]) for line, m in zip(lines, ("MOVE", "张伟  ", "Ann  "))]
    assert len(set(moves)) == 1, lines
    assert [c for c in lines[1].split("  ") if c][2] == "张伟, 李小龙"
