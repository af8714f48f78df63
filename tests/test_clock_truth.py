"""The clock tells the truth (issue 23): whenever the instant by which a player
must move changes, they are told the new absolute deadline in that same cycle,
in UTC and in their own time zone and language, and no mail prints a deadline
other than the one in force.

Whole timelines through the command line (``pbem new/run/gm --now`` and mail
commands in the Maildir inbox), in every language the product has, each with a
deadline across a daylight-saving change of the player's zone: the last Sunday
of March in Europe (2027-03-28), the second Sunday of March in North America
(2027-03-14), the first Sunday of April in Australia/Sydney (2027-04-04, the end
of its summer time).  The expected texts are derived here: the instants by hand
from the settings, their local form with zoneinfo and Babel
(``babel.dates.format_skeleton``), the sentences from the language's catalogue.
"""
from __future__ import annotations

import mailbox
import re
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from babel import Locale
from babel.dates import format_datetime, format_skeleton
from babel.messages.pofile import read_po
from click.testing import CliRunner

import pbem
from moderator.store.gamefile import GameStore
from outbox import unseen_mails

H = timedelta(hours=1)
D = timedelta(days=1)
LOCALE_DIR = Path(__file__).resolve().parent.parent / "moderator" / "locale"
BABEL = {"en": "en_US", "es": "es_ES", "de": "de_DE", "cs": "cs_CZ", "zh": "zh_Hans_CN"}  # docs/languages.md

# language -> (Bob's time zone, the start of the timeline: its 72 h deadline crosses
# the zone's change of offset)
CASES = {
    "en": ("America/New_York", datetime(2027, 3, 12, 14, 0, tzinfo=timezone.utc)),
    "es": ("Europe/Madrid", datetime(2027, 3, 26, 10, 0, tzinfo=timezone.utc)),
    "de": ("Europe/Berlin", datetime(2027, 3, 26, 10, 0, tzinfo=timezone.utc)),
    "cs": ("Europe/Prague", datetime(2027, 3, 26, 10, 0, tzinfo=timezone.utc)),
    "zh": ("Australia/Sydney", datetime(2027, 4, 2, 8, 0, tzinfo=timezone.utc)),
}
LANGS = sorted(CASES)


# ------------------------------------------------------------------ expected words
@lru_cache(maxsize=None)
def catalogue(lang: str) -> dict:
    with open(LOCALE_DIR / lang / "LC_MESSAGES" / "pbem.po", "rb") as fh:
        return {(m.id if m.context is None else (m.context, m.id)): m.string for m in read_po(fh) if m.id}


@lru_cache(maxsize=None)
def plural_of(lang: str):
    """The catalogue's plural rule (``Plural-Forms``): n -> the index of the form."""
    import gettext

    with open(LOCALE_DIR / lang / "LC_MESSAGES" / "pbem.po", "rb") as fh:
        return gettext.c2py(read_po(fh).plural_expr)


def trn(lang: str, singular: str, plural: str, n: int, **values) -> str:
    """The catalogue's plural sentence for ``n`` in ``lang`` with ``count`` ``n``."""
    if lang == "en":
        text = singular if n == 1 else plural
    else:
        text = catalogue(lang)[(singular, plural)][plural_of(lang)(n)]
    return text % {"count": n, **values}


def tr(lang: str, msgid: str, **values) -> str:
    """The catalogue's sentence ``msgid`` in ``lang`` (English: the id) with ``values``."""
    text = msgid if lang == "en" else catalogue(lang)[msgid]
    return text % values


def local_text(when: datetime, zone: str | None, lang: str) -> str:
    """``when`` as a reader of ``lang`` reads it in ``zone`` (None: UTC), derived
    with zoneinfo and Babel: English ``YYYY-MM-DD HH:MM ZONE``; the others the
    CLDR date ``yMMMEd`` and time ``Hm`` joined by the medium date-time pattern,
    then the short zone name, or the IANA name in brackets where CLDR has only an
    offset for it."""
    tz = ZoneInfo(zone) if zone else timezone.utc
    local = when.astimezone(tz)
    if lang == "en":
        return local.strftime("%Y-%m-%d %H:%M ") + (local.tzname() if zone else "UTC")
    loc = Locale.parse(BABEL[lang])
    date = format_skeleton("yMMMEd", local, locale=loc)
    time = format_skeleton("Hm", local, locale=loc)
    text = str(loc.datetime_formats["medium"]).replace("{1}", date).replace("{0}", time)
    if not zone:
        return text + " UTC"
    short = format_datetime(local, "z", tzinfo=tz, locale=loc)
    return text + " " + (f"({zone})" if short[:1] in "+-" or short.startswith("GMT") else short)


def deadline_text(when: datetime, zone: str | None, lang: str) -> str:
    """A deadline as the clock words it: UTC, then the reader's local time."""
    utc = local_text(when, None, lang)
    if not zone:
        return utc
    local = local_text(when, zone, lang)
    if zone in local:
        return tr(lang, "%(due_utc)s (%(due_local)s)", due_utc=utc, due_local=local)
    return tr(lang, "%(due_utc)s (%(due_local)s, %(zone)s)", due_utc=utc, due_local=local, zone=zone)


def now_due(when, zone, lang) -> str:
    return tr(lang, "Your move is now due by %(due)s.", due=deadline_text(when, zone, lang))


def other_due(player, when, zone, lang) -> str:
    return tr(lang, "%(player)s's move is now due by %(due)s.", player=player, due=deadline_text(when, zone, lang))


def flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------ the command line
class Game:
    """A game driven through ``pbem`` on the command line in ``tmp_path``: ``new``,
    then ``run``/``gm`` with ``--now``, mail put in the Maildir inbox."""

    def __init__(self, tmp_path, monkeypatch, lang, start, deadline="72h", extra=()):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({"operator": "gm@example.org"}))
        self.dir = tmp_path
        self.runner = CliRunner()
        self.addr = {"Ann": "ann@example.org", "Bob": "bob@example.org"}
        self.now = start
        self.pbem("new", "ridge", "--seed", "7", "--deadline", deadline, "--language", lang,
                  "--player", "Ann=ann@example.org", "--player", "Bob=bob@example.org",
                  "--now", start.isoformat(), *extra)
        self.inbox = mailbox.Maildir(str(tmp_path / "mail" / "inbox"), create=True)
        self.outbox = mailbox.Maildir(str(tmp_path / "mail" / "outbox"), create=True)
        self.seen: set[str] = set()
        self.sent()

    def pbem(self, *args) -> str:
        r = self.runner.invoke(pbem.main, [str(a) for a in args], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return r.output

    def load(self):
        return GameStore(self.dir / "games").load("ridge")

    def mail(self, name, text):
        rec = self.load()
        msg = EmailMessage(policy=policy.default)
        msg["From"] = self.addr[name]
        msg["To"] = "moderator@pbem.localhost"
        msg["Subject"] = f"Re: [pbem:ridge:{rec.player_by_name(name).secret}] Union Pacific ridge"
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg.set_content(text + "\n")
        self.inbox.add(msg.as_bytes())

    def initial(self, name):
        """``name`` chooses their initial investment (the first share of their hand)."""
        self.mail(name, "start " + self.load().game.share_hands[name][0])

    def run(self, at):
        self.now = at
        return self.pbem("run", "--now", at.isoformat())

    def gm(self, at, *words):
        self.now = at
        return self.pbem("gm", "ridge", *words, "--now", at.isoformat())

    def sent(self) -> list:
        return unseen_mails(self.outbox, self.seen)


def body(msg) -> str:
    return flat(msg.get_body(preferencelist=("plain",)).get_content())


def to(mails, address) -> list[str]:
    return [body(m) for m in mails if str(m["To"]) == address]


def bot_moves(rec) -> list:
    return [h for h in rec.history if h.get("by") == "bot"]


def start(tmp_path, monkeypatch, lang, deadline="72h", extra=()):
    """Ann and Bob in ``lang``; Bob in his zone; Ann has chosen at T+1h, so the
    game waits for Bob alone (the initial investment)."""
    zone, t0 = CASES[lang]
    g = Game(tmp_path, monkeypatch, lang, t0, deadline, extra)
    g.mail("Bob", f"timezone {zone}")
    g.initial("Ann")
    g.run(t0 + H)
    g.sent()
    assert g.load().game.waiting_for() == ["Bob"]
    return g, zone, t0


# ------------------------------------------------------------------ vacation
@pytest.mark.parametrize("lang", LANGS)
def test_vacation_tells_the_moved_deadline_and_its_end_restarts_the_reminders(tmp_path, monkeypatch, lang):
    g, zone, t0 = start(tmp_path, monkeypatch, lang)
    g.mail("Bob", "vacation 2d")
    g.run(t0 + 2 * H)
    mails = g.sent()
    due = t0 + 72 * H + 48 * H  # the 2 days of vacation after the wait's start
    (bob,) = to(mails, "bob@example.org")
    assert now_due(due, zone, lang) in bob
    (ann,) = to(mails, "ann@example.org")
    assert other_due("Bob", due, None, lang) in ann
    # the vacation ends at t0+50h: Bob is told the deadline in force, nobody else
    g.run(t0 + 50 * H - timedelta(minutes=1))
    assert g.sent() == []
    g.run(t0 + 50 * H)
    mails = g.sent()
    assert [str(m["To"]) for m in mails] == ["bob@example.org"]
    assert tr(lang, "Your vacation is over and your clock runs again: the game is waiting for your move, "
              "due by %(due)s.", due=deadline_text(due, zone, lang)) in body(mails[0])
    # the reminder schedule starts again: 24 h before the deadline, then the built-in player
    g.run(due - 24 * H - timedelta(minutes=1))
    assert g.sent() == []
    g.run(due - 24 * H)
    (reminder,) = to(g.sent(), "bob@example.org")
    assert deadline_text(due, zone, lang) in reminder
    g.run(due - timedelta(minutes=1))
    assert bot_moves(g.load()) == []
    g.run(due)
    assert [h["player"] for h in bot_moves(g.load())] == ["Bob"]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_vacation_off_tells_the_deadline_and_no_second_notice(tmp_path, monkeypatch, lang):
    g, zone, t0 = start(tmp_path, monkeypatch, lang)
    g.mail("Bob", "vacation 3d")
    g.run(t0 + 2 * H)
    g.sent()
    g.mail("Bob", "vacation off")
    g.run(t0 + 26 * H)  # back after 24 h of it: the deadline moved by 24 h
    due = t0 + 96 * H
    mails = g.sent()
    assert now_due(due, zone, lang) in to(mails, "bob@example.org")[0]
    assert other_due("Bob", due, None, lang) in to(mails, "ann@example.org")[0]
    g.run(t0 + 27 * H)
    assert g.sent() == []  # the clock does not tell that end a second time
    assert g.load().clock["vacation_told"] == {"Bob": (t0 + 26 * H).isoformat()}


# ------------------------------------------------------------------ the game master
@pytest.mark.parametrize("lang", LANGS)
def test_resume_and_extend_tell_the_new_time(tmp_path, monkeypatch, lang):
    g, zone, t0 = start(tmp_path, monkeypatch, lang)
    g.gm(t0 + 10 * H, "pause", "a", "dispute")
    g.sent()
    out = g.gm(t0 + 30 * H, "resume")
    due = t0 + 72 * H + 20 * H  # the pause's 20 hours
    assert f"Bob's move is now due by {deadline_text(due, None, 'en')}." in flat(out)
    mails = g.sent()
    assert now_due(due, zone, lang) in to(mails, "bob@example.org")[0]
    assert other_due("Bob", due, None, lang) in to(mails, "ann@example.org")[0]
    out = g.gm(t0 + 40 * H, "extend", "bob", "1d")
    due += D
    assert f"Bob's move is now due by {deadline_text(due, None, 'en')}." in flat(out)
    mails = g.sent()
    assert now_due(due, zone, lang) in to(mails, "bob@example.org")[0]
    assert other_due("Bob", due, None, lang) in to(mails, "ann@example.org")[0]
    # his status mail gives that deadline too
    g.mail("Bob", "status")
    g.run(t0 + 41 * H)
    (status,) = to(g.sent(), "bob@example.org")
    assert tr(lang, "Your move is due by %(due)s.", due=deadline_text(due, zone, lang)) in status
    g.run(due - timedelta(minutes=1))
    assert bot_moves(g.load()) == []
    g.run(due)
    assert [h["player"] for h in bot_moves(g.load())] == ["Bob"]


@pytest.mark.parametrize("lang", LANGS)
def test_a_deadline_set_weeks_into_a_wait_counts_from_the_command(tmp_path, monkeypatch, lang):
    g, zone, t0 = start(tmp_path, monkeypatch, lang, deadline="none")
    g.run(t0 + 21 * D)
    assert g.sent() == []
    at = t0 + 21 * D + 3 * H
    out = g.gm(at, "deadline", "48h")
    due = at + 48 * H
    assert f"Bob's move is now due by {deadline_text(due, None, 'en')}." in flat(out)
    mails = g.sent()
    assert now_due(due, zone, lang) in to(mails, "bob@example.org")[0]
    g.run(at + H)  # the built-in player does not move at once
    assert bot_moves(g.load()) == [] and g.sent() == []
    g.run(due - 24 * H)  # the reminder, a day before
    (reminder,) = to(g.sent(), "bob@example.org")
    assert deadline_text(due, zone, lang) in reminder
    g.run(due - timedelta(minutes=1))
    assert bot_moves(g.load()) == []
    g.run(due)
    assert [h["player"] for h in bot_moves(g.load())] == ["Bob"]


# ------------------------------------------------------------------ outage
@pytest.mark.parametrize("lang", LANGS)
def test_after_an_outage_every_mail_gives_the_shifted_deadline(tmp_path, monkeypatch, lang):
    g, zone, t0 = start(tmp_path, monkeypatch, lang)
    # down from t0+1h (the last successful cycle) to t0+100h; Bob's deadline t0+72h fell in it
    g.mail("Bob", "status")
    g.run(t0 + 100 * H)
    due = t0 + 72 * H + 99 * H
    rec = g.load()
    assert bot_moves(rec) == [] and rec.clock["shift"] == 99 * 3600
    mails = to(g.sent(), "bob@example.org")
    told = [m for m in mails if now_due(due, zone, lang) in m]
    assert len(told) == 1  # the notice of the moved deadline
    status = [m for m in mails if m not in told]
    assert len(status) == 1
    assert tr(lang, "Your move is due by %(due)s.", due=deadline_text(due, zone, lang)) in status[0]
    assert deadline_text(t0 + 72 * H, zone, lang) not in " ".join(mails)
    g.run(due - timedelta(minutes=1))
    assert bot_moves(g.load()) == []
    g.run(due)
    assert [h["player"] for h in bot_moves(g.load())] == ["Bob"]


# ------------------------------------------------------------------ policy wait
@pytest.mark.parametrize("lang", LANGS)
def test_policy_wait_reminds_once_a_day_with_the_misses_left(tmp_path, monkeypatch, lang):
    g, zone, t0 = start(tmp_path, monkeypatch, lang, deadline="48h",
                        extra=("--on-missed", "wait", "--abandon-after", "3"))
    title = tr(lang, "reminder: your move is due")
    overdue = tr(lang, "reminder: your deadline has passed")
    reminders, titles = {}, {}
    at = t0 + 6 * H
    while at <= t0 + 144 * H:
        g.run(at)
        mails = [m for m in to(g.sent(), "bob@example.org") if title in m or overdue in m]
        for m in mails:
            titles[(at - t0) // H] = overdue if overdue in m else title
        if mails:
            reminders[(at - t0) // H] = mails
        at += 6 * H
    # a day before the first deadline (t0+48h), at each missed move (the new deadline)
    # and once a day between, until the third miss abandons the seat at t0+144h
    assert sorted(reminders) == [24, 48, 72, 96, 120]
    assert all(len(m) == 1 for m in reminders.values())
    # the reminder before the deadline says it is due, the ones after a miss that it passed
    assert titles == {24: title, 48: overdue, 72: overdue, 96: overdue, 120: overdue}
    more = ("Your seat is abandoned after %(count)s more missed move in a row.",
            "Your seat is abandoned after %(count)s more missed moves in a row.")
    for hour, due, missed in ((48, 96, 1), (72, 96, 1), (96, 144, 2), (120, 144, 2)):
        (mail,) = reminders[hour]
        assert deadline_text(t0 + due * H, zone, lang) in mail
        counted = trn(lang, "The game is still waiting for %(expected)s: the deadline passed (%(count)s missed "
                      "in a row), and the game waits for you. The next missed move is counted at %(due)s.",
                      "The game is still waiting for %(expected)s: the deadline passed (%(count)s missed "
                      "in a row), and the game waits for you. The next missed move is counted at %(due)s.",
                      missed, expected="your initial investment" if lang == "en" else
                      catalogue(lang)[("the game is waiting for", "your initial investment")],
                      due=deadline_text(t0 + due * H, zone, lang))
        assert counted in mail
        if missed == 1:  # two more misses abandon the seat
            assert trn(lang, *more, 2) in mail
        else:  # the next one does
            assert tr(lang, "Then your seat is abandoned: the built-in player plays it until the game master "
                      "finds a replacement.") in mail
            assert trn(lang, *more, 1) not in mail
    rec = g.load()
    assert rec.player_by_name("Bob").abandoned and rec.player_by_name("Bob").missed == 3
    assert [h["player"] for h in bot_moves(rec)] == ["Bob"]


def test_policy_wait_reminder_in_english_word_for_word(tmp_path, monkeypatch):
    """The exact sentence, English: 2 more misses abandon the seat after the first."""
    g, zone, t0 = start(tmp_path, monkeypatch, "en", deadline="48h",
                        extra=("--on-missed", "wait", "--abandon-after", "3"))
    g.run(t0 + 24 * H)
    g.sent()
    g.run(t0 + 48 * H)
    (mail,) = to(g.sent(), "bob@example.org")
    assert ("The game is still waiting for your initial investment: the deadline passed (1 missed in a row), "
            "and the game waits for you. The next missed move is counted at 2027-03-16 14:00 UTC "
            "(2027-03-16 10:00 EDT, America/New_York). Your seat is abandoned after 2 more missed moves in "
            "a row.") in mail


# ------------------------------------------------------------------ replacement and undo
@pytest.mark.parametrize("lang", LANGS)
def test_replace_and_undo_tell_the_whole_new_deadline(tmp_path, monkeypatch, lang):
    """A replacement on move gets a whole deadline from the command (its welcome
    says it); an undo gives the move it reopens a whole deadline from the
    command (the status mails say it to each player it waits for)."""
    g, zone, t0 = start(tmp_path, monkeypatch, lang)
    g.mail("Ann", f"timezone {zone}")
    g.run(t0 + 2 * H)
    g.sent()
    at = t0 + 50 * H
    out = g.gm(at, "replace", "Bob", "Dora=dora@example.org")
    due = at + 72 * H
    assert f"Bob's move is now due by {deadline_text(due, None, 'en')}." in flat(out)
    mails = g.sent()
    (welcome,) = to(mails, "dora@example.org")
    assert tr(lang, "Your move is due by %(due)s.", due=deadline_text(due, None, lang)) in welcome
    (ann,) = to(mails, "ann@example.org")
    assert other_due("Bob", due, zone, lang) in ann
    g.addr["Bob"] = "dora@example.org"
    g.initial("Bob")  # the newcomer chooses: the game waits for Ann's first turn
    g.run(at + H)
    g.sent()
    assert g.load().game.phase == "play"
    at2 = at + 5 * H
    out = g.gm(at2, "undo", "1")
    due = at2 + 72 * H  # the newcomer's choice taken back: a whole deadline from the command
    assert f"Bob's move is now due by {deadline_text(due, None, 'en')}." in flat(out)
    mails = g.sent()
    (dora,) = to(mails, "dora@example.org")
    assert tr(lang, "Your move is due by %(due)s.", due=deadline_text(due, None, lang)) in dora
    g.run(due - timedelta(minutes=1))
    assert bot_moves(g.load()) == []
    g.run(due)
    assert [h["player"] for h in bot_moves(g.load())] == ["Bob"]


def test_a_deadline_that_lands_where_it_was_is_named_all_the_same(tmp_path, monkeypatch):
    """72 h from the start, then ``deadline 48h`` a day later: the same instant;
    the announcement names it (what the players read is the deadline in force,
    not only a length)."""
    g, zone, t0 = start(tmp_path, monkeypatch, "en")
    out = g.gm(t0 + 24 * H, "deadline", "48h")
    due = t0 + 72 * H
    assert flat(out) == ("The game master set the deadline to 2 days per move (the move under way counts it "
                         f"from now, each later move from the mail that asks for it). Bob's move is now due by "
                         f"{deadline_text(due, None, 'en')}.")
    mails = g.sent()
    assert now_due(due, zone, "en") in to(mails, "bob@example.org")[0]
    assert other_due("Bob", due, None, "en") in to(mails, "ann@example.org")[0]


def test_a_missed_initial_investment_leaves_the_others_deadline_where_it_was(tmp_path, monkeypatch):
    """Policy wait, both initial investments awaited, Ann given 47 h more: Bob
    misses at 6 h and his wait restarts there; Ann's deadline stays the one she
    was told (found by the property test: the restart moved it, or dropped her
    extension and the built-in player moved for her a day early)."""
    zone, t0 = CASES["en"]
    g = Game(tmp_path, monkeypatch, "en", t0, "6h", ("--on-missed", "wait"))
    out = g.gm(t0, "extend", "Ann", "47h")
    ann_due = t0 + 6 * H + 47 * H
    assert f"Ann's move is now due by {deadline_text(ann_due, None, 'en')}." in flat(out)
    g.sent()
    g.run(t0 + 25 * H)  # Bob missed at 6 h, 12 h, 18 h, 24 h: the third abandons his seat
    rec = g.load()
    assert rec.player_by_name("Bob").abandoned and rec.player_by_name("Bob").missed == 3
    assert "Ann" in rec.game.waiting_for() and rec.player_by_name("Ann").missed == 0
    from moderator.moderation.deadlines import due as due_of

    assert due_of(rec, rec.player_by_name("Ann")) == ann_due
    g.run(ann_due - timedelta(minutes=1))
    assert g.load().player_by_name("Ann").missed == 0
    g.sent()
    g.run(ann_due)  # her miss, at the deadline she was told: the game waits, she is told the next one
    rec = g.load()
    assert rec.player_by_name("Ann").missed == 1
    assert bot_moves(rec) == [h for h in rec.history if h["player"] == "Bob"]
    (reminder,) = to(g.sent(), "ann@example.org")
    assert f"The next missed move is counted at {deadline_text(ann_due + 6 * H, None, 'en')}." in reminder


def test_a_vacation_during_a_pause_moves_the_deadline_once(tmp_path, monkeypatch):
    """Bob's deadline t0 + 72 h; the game master pauses at t0 + 10 h; Bob takes
    2 days' vacation at t0 + 11 h 30 (while paused); the game resumes at t0 +
    35 h 30.  The clock stood still from the pause to the vacation's end (t0 +
    59 h 30): 49 h 30, not the pause's 25 h 30 and the vacation's 48 h both (a
    new user's check found 73 h 30: the 24 h in which both held counted twice)."""
    g, zone, t0 = start(tmp_path, monkeypatch, "en")
    g.gm(t0 + 10 * H, "pause")
    g.mail("Bob", "vacation 2d")
    g.run(t0 + 11.5 * H)
    g.sent()
    out = g.gm(t0 + 35.5 * H, "resume")
    due = t0 + 72 * H + 49.5 * H
    assert f"Bob's move is now due by {deadline_text(due, None, 'en')}." in flat(out)
    mails = g.sent()
    assert now_due(due, zone, "en") in to(mails, "bob@example.org")[0]
    g.run(due - timedelta(minutes=1))
    assert bot_moves(g.load()) == []
    g.run(due)
    assert [h["player"] for h in bot_moves(g.load())] == ["Bob"]


def test_the_undo_notice_writes_the_orders_in_the_readers_language(tmp_path, monkeypatch):
    """The game master's ``undo 1`` after Ann's initial investment: Bob reads
    it in Spanish with the order as Spanish writes it (``localize``: the
    canonical order words of docs/order-languages.md), not the English notation
    (a new user's check found "(Ana: build EPRG LAX-PHX white; take stack)")."""
    from moderator import i18n
    from moderator.render.orders import localize

    g, zone, t0 = start(tmp_path, monkeypatch, "es")
    (order,) = [h["order"] for h in g.load().history]
    assert order.startswith("start ")
    g.gm(t0 + 2 * H, "undo", "1")
    (bob,) = to(g.sent(), "bob@example.org")
    with i18n.speaking("es"):
        # the initial investment stays secret until every player has chosen
        from moderator.rules.notation import public_order

        shown = localize(public_order(order, False))
    assert f"(Ann: {shown})" in bob
    assert shown == "empezar (inversión inicial secreta)"  # es: the canonical 'empezar'


def test_vacation_time_while_paused_is_given_back_at_resume(tmp_path, monkeypatch):
    """Bob takes 2 days' vacation at t0 + 11 h 30 while the game is paused (since
    t0 + 10 h); the game resumes at t0 + 35 h 30: the 24 h in which both held are
    not charged to his 14-day allowance (48 h charged, 24 h given back); Ann, on
    no vacation, is charged nothing."""
    g, zone, t0 = start(tmp_path, monkeypatch, "en")
    g.gm(t0 + 10 * H, "pause")
    g.mail("Bob", "vacation 2d")
    g.run(t0 + 11.5 * H)
    assert g.load().player_by_name("Bob").vacation_used == 48 * 3600
    g.gm(t0 + 35.5 * H, "resume")
    rec = g.load()
    assert rec.player_by_name("Bob").vacation_used == 24 * 3600
    assert rec.player_by_name("Ann").vacation_used == 0
