"""The game master's undo that leaves the game waiting for a seat the built-in
player plays (an abandoned seat): that seat moves at once, as the clock would,
and the undo's one mail tells both; the abandoned seat's player is never asked
for a move (a new user's check: they were told "IT IS YOUR TURN", and the
built-in player moved a cycle later)."""
from __future__ import annotations

from test_advance import H, T0, body, gm_mail, started, to


def test_undo_of_an_abandoned_seats_move_replays_it_at_once_in_one_mail(tmp_path):
    c = started(tmp_path, settings={"deadline": 24 * 3600, "abandon_after": 1})
    first = c.load().game.to_move
    for hours in (12, 22, 27):  # steps under the outage threshold; the deadline passes at 25 h
        c.run(T0 + hours * H)
    c.sent()
    rec = c.load()
    assert rec.player_by_name(first).abandoned and rec.history[-1]["player"] == first
    moved = rec.history[-1]["order"]
    gm_mail(c, "undo 1")
    c.run(T0 + 28 * H)
    rec = c.load(check=True)
    assert rec.gm_log[-1]["undone"][0]["order"] == moved
    # the built-in player's generator is seeded by the position: the same move again, by: bot
    assert (rec.history[-1]["player"], rec.history[-1]["order"], rec.history[-1].get("by")) == (first, moved, "bot")
    assert rec.notified == len(rec.game.events)
    mails = to(c.sent(), c.addr[first])
    assert len(mails) == 1
    text = body(mails[0])
    assert "IT IS YOUR TURN" not in text
    assert "The game master took back the last 1 action" in text
    company = moved.split()[1]
    assert f"{first} built {company} on" in text  # the replayed move, in the same mail
    assert text.index("took back") < text.index(f"{first} built {company}")
    c.run(T0 + 29 * H)
    assert to(c.sent(), c.addr[first]) == []  # nothing owed a cycle later
