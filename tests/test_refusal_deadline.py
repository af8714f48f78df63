"""A refusal restates the deadline: the player whose order was not taken reads in
the same answer by when the move is still due (nothing changed, so the deadline did
not either); found by a new user's check.  A player the game does not wait for
reads no deadline."""
from __future__ import annotations

from test_deadlines import H, T0, Clocked


def _text(mail) -> str:
    return mail.get_body(preferencelist=("plain",)).get_content()


def test_a_refused_order_restates_the_deadline(tmp_path):
    h = Clocked(tmp_path, settings={"deadline": 48 * 3600})
    h.sent()
    h.mail("Ann", "start XYZ")
    h.run(T0 + 3 * H)
    (answer,) = h.sent()
    text = _text(answer)
    assert answer["To"] == "ann@example.org"
    assert ("Nothing was changed: the game is as it was. Send a corrected order when ready.\n"
            "Your move is due by 2026-12-03 12:00 UTC.\n") in text


def test_no_deadline_for_a_player_the_game_does_not_wait_for(tmp_path):
    h = Clocked(tmp_path, settings={"deadline": 48 * 3600})
    h.sent()
    for name in ("Ann", "Bob", "Cy"):
        h.move(name)
    h.run(T0 + H)
    h.sent()
    rec = h.load()
    idle = next(p.name for p in rec.players if p.name not in rec.game.waiting_for())
    h.mail(idle, "build KCC DEN-KCY plain")
    h.run(T0 + 2 * H)
    answers = [m for m in h.sent() if m["To"] == h.addr[idle]]
    assert len(answers) == 1
    assert "Nothing was changed" in _text(answers[0])
    assert "Your move is due by" not in _text(answers[0])
