"""The HTML part tells what the plain part tells (a new user's check): Gmail,
Outlook and Apple Mail show only the HTML part, so every line of the plain part
that carries information (a deadline, a time, money, a count, an order) must have
its text in the HTML part.  Real mails of a real game in each of the five
languages (welcome, initial investment on move, status on move and not on move,
refusal, command answers, reminders before and after a missed deadline under
``on_missed: wait``), their HTML read back to text with the stdlib
``html.parser``."""
from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser

import pytest

from test_newuser_finds import PLAYERS, Table

LANGUAGES = ("en", "es", "de", "cs", "zh")
_TIME = re.compile(r"\b\d{4}-\d\d-\d\d\b|\b\d{1,2}:\d\d\b")
_NUMBER = re.compile(r"\d+")


class _Text(HTMLParser):
    """The text a reader sees of an HTML part (no head, style or script)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("head", "style", "script", "title"):
            self._skip += 1
        elif tag in ("br", "p", "div", "tr", "li", "h1", "h2", "table", "code"):
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in ("head", "style", "script", "title"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def html_text(msg) -> str:
    """The visible text of ``msg``'s HTML part, spaces (incl. no-break) collapsed."""
    p = _Text()
    p.feed(msg.get_body(preferencelist=("html",)).get_content())
    return re.sub(r"[ \t\u00a0]+", " ", "".join(p.parts))


def plain_text(msg) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def dropped(msg) -> list[str]:
    """The lines of ``msg``'s plain part whose information the HTML part lacks:
    a line with a date or time whose sentence is not in the HTML text, or a line
    with a number the HTML text nowhere has."""
    html = html_text(msg)
    flat = squash(html)
    numbers = set(_NUMBER.findall(html))
    out = []
    for line in plain_text(msg).splitlines():
        if not line.strip():
            continue
        if _TIME.search(line) and squash(line).removeprefix("- ") not in flat:  # a list's bullet is layout
            out.append(line)
        elif not set(_NUMBER.findall(line)) <= numbers:
            out.append(line)
    return out


def table(tmp_path, language="en", **settings):
    """``test_newuser_finds.Table`` with a game master and the clock
    ``settings`` (``create.new_game``) in the game's ``language``."""
    import mailbox

    from moderator.config import Config
    from moderator.moderation.cycle import Moderator
    from test_newuser_finds import OPERATOR, T0

    t = Table.__new__(Table)
    t.now = T0
    t.config = Config(games_dir=tmp_path / "games", maildir_inbox=tmp_path / "mail" / "inbox",
                      maildir_outbox=tmp_path / "mail" / "outbox", spool_dir=tmp_path / "spool",
                      operator=OPERATOR)
    t.mod = Moderator(t.config, clock=lambda: t.now)
    t.mod.create_game("ridge", PLAYERS, seed=42, gm=OPERATOR, settings={**settings, "language": language})
    t.inbox = mailbox.Maildir(str(t.config.maildir_inbox), create=True)
    t.outbox = mailbox.Maildir(str(t.config.maildir_outbox), create=True)
    t.all, t.seen, t.count = [], set(), 0
    return t


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_html_part_drops_nothing_the_plain_part_says(tmp_path, language):
    t = table(tmp_path / "wait", language, deadline=48 * 3600, on_missed="wait", abandon_after=3)
    kinds: dict[str, list] = {"welcome": t.sent()}
    rec = t.load()
    ann, bob, cy = (name for name, _ in PLAYERS)
    t.reply(ann, f"start {sorted(rec.game.share_hands[ann])[0]}\n")
    t.reply(bob, "build nowhere\n")
    t.run()
    kinds["initial"] = t.sent()
    t.reply(bob, f"start {sorted(rec.game.share_hands[bob])[0]}\n")
    t.reply(cy, f"start {sorted(rec.game.share_hands[cy])[0]}\n")
    t.run()
    kinds["status"] = t.sent()
    mover = t.load().game.to_move
    t.reply(mover, "help\nlegal\nhistory\n")
    t.run()
    kinds["answers"] = t.sent()
    t.now += timedelta(hours=47)
    t.run(0)
    kinds["reminder"] = t.sent()
    t.now += timedelta(hours=2)
    t.run(0)
    kinds["missed"] = t.sent()
    t.now += timedelta(hours=25)
    t.run(0)
    kinds["overdue"] = t.sent()
    # on_missed bot: the built-in player's moves, then an order too late
    b = table(tmp_path / "bot", language, deadline=48 * 3600, on_missed="bot", abandon_after=3)
    kinds["welcome-bot"] = b.sent()
    b.now += timedelta(hours=49)  # Ann's order reaches the mailbox an hour after her deadline
    b.reply(ann, f"start {sorted(rec.game.share_hands[ann])[0]}\n")
    b.run()
    kinds["automatic and late"] = b.sent()
    seen = {k: len(v) for k, v in kinds.items()}
    assert all(seen.values()), seen
    found = {}
    for kind, mails in kinds.items():
        for m in mails:
            lost = dropped(m)
            if lost:
                found[f"{kind} to {m['To']}: {m['Subject']}"] = lost
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())


OVERDUE = {"en": "reminder: your deadline has passed",
           "es": "recordatorio: tu plazo ha vencido",
           "de": "Erinnerung: deine Frist ist abgelaufen",
           "cs": "připomínka: termín vašeho tahu uplynul",
           "zh": "提醒：你的行动期限已过"}
DUE = {"en": "reminder: your move is due",
       "es": "recordatorio: te toca jugar",
       "de": "Erinnerung: dein Spielzug ist fällig",
       "cs": "připomínka: blíží se termín vašeho tahu",
       "zh": "提醒：你的行动快到期了"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_overdue_reminder_says_the_deadline_passed(language):
    """Under ``on_missed: wait`` the reminders after a miss have their own title
    (the one before the deadline says it is coming); in each language."""
    from datetime import datetime, timezone

    from moderator import i18n
    from moderator.render.words import word

    due = datetime(2026, 12, 5, 9, 0, tzinfo=timezone.utc)
    with i18n.speaking(language):
        assert word("clock", "reminder_title") == DUE[language]
        assert word("clock", "reminder_title", overdue=False) == DUE[language]
        assert word("clock", "reminder_title", overdue=True) == OVERDUE[language]
        text = word("clock", "reminder", due_utc=due, expected="move", overdue=True, missed=1, then="wait")
        assert "2026-12-05 09:00" in text


def test_the_clock_gives_the_overdue_reminder_its_title(tmp_path):
    """Through real cycles: the reminder before the deadline and the daily one
    after a miss, as the player's mail shows them (the text's first line)."""
    from test_newuser_finds import OPERATOR

    t = table(tmp_path, deadline=48 * 3600, on_missed="wait", abandon_after=3)
    t.sent()
    t.now += timedelta(hours=47)
    t.run(0)
    before = [plain_text(m).splitlines()[0] for m in t.sent() if str(m["To"]) != OPERATOR]
    assert before == ["Union Pacific, game ridge: reminder: your move is due"] * 3
    t.now += timedelta(hours=2)
    t.run(0)
    t.sent()
    t.now += timedelta(hours=25)
    t.run(0)
    after = [plain_text(m).splitlines()[0] for m in t.sent() if str(m["To"]) != OPERATOR]
    assert after == ["Union Pacific, game ridge: reminder: your deadline has passed"] * 3
