"""The position below a status mail's hand is rendered once per position and
language (``{% shared %}``, ``moderator.render.templates.SharedExtension``;
issue 31: half of a loaded cycle was building status mails) and every reader
gets exactly the mail rendered for them alone: their own hand, and with option
hidden_money their own money in their row and "?" in the others'."""
from __future__ import annotations

import random
import re
from datetime import datetime, timezone

import pytest

from moderator import i18n
from moderator.moderation import create
from moderator.moderation.notify import status_text
from moderator.render import templates, to_html
from moderator.store.gamefile import GameStore

FIGURES = [("map.ridge@up.example", "Map", 640)]
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
PLAYERS = [("Ann", "ann@example.org"), ("Bo", "bo@example.org"), ("Cy", "cy@example.org")]


def played(tmp_path, options=None, moves=12, until=None):
    """A 3-player game played ``moves`` random legal moves from seed 7 (past the
    initial investments, in play), or with ``until`` (a test of the game) as
    many as it takes, at most 2,000."""
    record = create.new_game(GameStore(tmp_path / "games"), "ridge", PLAYERS, seed=7, created=NOW,
                             options=options)
    rng = random.Random(7)
    for _ in range(2000 if until else moves):
        if until and until(record.game):
            break
        name = rng.choice(record.game.waiting_for())
        record.apply(name, record.game.random_action(name, rng), None, NOW.isoformat())
    assert record.game.phase == "play"
    return record


def alone(record, player, language="en", events=None):
    """``player``'s status text and HTML context (the last three events, or
    ``events``) rendered with nothing shared kept."""
    templates._SHARED.clear()
    with i18n.speaking(language):
        return status_text(record, player, record.game.events[-3:] if events is None else events)


def test_a_shared_part_is_rendered_once_per_key_and_language():
    env = templates.environment()
    calls = []
    tpl = env.from_string("<{% shared key %}{{ count() }}{% endshared %}>")

    def count():
        calls.append(i18n.current())
        return len(calls)

    templates._SHARED.clear()
    assert tpl.render(key=1, count=count) == "<1>"
    assert tpl.render(key=1, count=count) == "<1>"  # kept: not rendered again
    assert tpl.render(key=2, count=count) == "<2>"
    with i18n.speaking("de"):
        assert tpl.render(key=1, count=count) == "<3>"  # another language: rendered anew
    assert calls == ["en", "en", "de"]
    again = env.from_string("<{% shared key %}{{ count() }}{% endshared %}>")  # a template parsed anew
    assert again.render(key=1, count=count) == "<4>"
    assert tpl.render(key=None, count=count) == "<5>"  # None: nothing shared, nothing kept
    assert tpl.render(key=None, count=count) == "<6>"
    assert len(templates._SHARED) == 4


def test_the_cache_keeps_at_most_its_size():
    env = templates.environment()
    tpl = env.from_string("{% shared key %}{{ key }}{% endshared %}")
    templates._SHARED.clear()
    for k in range(templates.SHARED_CACHE + 10):
        assert tpl.render(key=k) == str(k)
    assert len(templates._SHARED) == templates.SHARED_CACHE


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_reader_gets_the_mail_rendered_for_them_alone(tmp_path, language):
    record = played(tmp_path)
    expected = {p.name: alone(record, p, language) for p in record.players}
    templates._SHARED.clear()
    with i18n.speaking(language):
        got = {p.name: status_text(record, p, record.game.events[-3:]) for p in record.players}
    # one position, one language: one text of the position for the three readers
    assert len([k for k in templates._SHARED if k[0].startswith("position.txt:")]) == 1
    for name in expected:
        assert got[name][0] == expected[name][0]
        with i18n.speaking(language):
            html = to_html(got[name][0], FIGURES, got[name][1], **got[name][2])
            templates._SHARED.clear()
            assert html == to_html(expected[name][0], FIGURES, expected[name][1], **expected[name][2])


def test_hidden_money_each_reader_sees_their_own_money_only(tmp_path):
    record = played(tmp_path, options={"hidden_money": True},
                    until=lambda game: len(set(game.money.values())) == 3)
    money = record.game.money
    assert len(set(money.values())) == 3  # three different sums: a mix-up would show
    templates._SHARED.clear()
    texts = {p.name: status_text(record, p, [])[0] for p in record.players}
    for name, text in texts.items():
        rows = {m.group(1): m.group(2) for m in re.finditer(r"^  [* ] (\w+) +money +(\S+)", text, re.M)}
        assert rows == {n: (str(money[n]) if n == name else "?") for n in money}, text
        assert text == alone(record, record.player_by_name(name), events=[])[0]
