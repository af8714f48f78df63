"""A ``#`` comment after an order, and the player's words quoted as written:
real RFC 5322 replies through real moderator cycles (the helpers of
tests/test_newuser_finds.py)."""
from __future__ import annotations

from moderator.rules.components import COMPANIES
from test_newuser_finds import start_all, t, text_of, to  # noqa: F401  (t: fixture)


def test_a_legal_start_with_a_trailing_comment_is_applied(t):
    rec = t.load()
    company = sorted(rec.game.share_hands["Ann"])[0]
    t.reply("Ann", f"start {company} # my best move\n")
    report = t.run()
    assert report.applied == 1 and report.refused == 0, report.summary()
    assert t.load().history[-1]["order"] == f"start {company}"


def test_a_start_of_a_share_not_held_with_a_comment_gets_the_right_refusal(t):
    rec = t.load()
    hand = set(rec.game.share_hands["Ann"])
    company = sorted(c for c in COMPANIES if c not in hand)[0]
    t.reply("Ann", f"start {company}   # my best move\n")
    report = t.run()
    assert report.refused == 1, report.summary()
    (ann,) = to(t.sent(), "ann@example.org")
    body = text_of(ann)
    assert f"you hold no {company}" in body, body
    assert "is not a company" not in body, body


def test_a_comment_with_accents_after_a_whole_turn_is_ignored(t):
    start_all(t)
    rec = t.load()
    order = str(rec.game.legal_actions("Ann")[0])
    assert "take" in order, order
    t.reply("Ann", f"{order}  # Zoë's best move\n")
    report = t.run()
    assert report.applied == 1 and report.refused == 0, report.summary()
    assert t.load().history[-1]["order"] == order


def test_a_refusal_quotes_the_players_word_with_its_accents(t):
    start_all(t)
    t.reply("Ann", "take José's share\n")
    report = t.run()
    assert report.refused == 1, report.summary()
    (ann,) = to(t.sent(), "ann@example.org")
    body = text_of(ann)
    assert "\"José's\" is not a company" in body, body
    assert "Jose's" not in body, body
