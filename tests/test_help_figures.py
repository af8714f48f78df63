"""The guide (``help``, and the welcome mail that carries it) states the game's own
deadline and missed-move rule, not a typical one: a new user's Spanish guide said
"suele ser 72 horas" in a 48-hour game (the last session's check)."""
from __future__ import annotations

from email import policy
from email.parser import BytesParser

import pytest

from test_deadlines import Clocked, H, T0


def _text(mail) -> str:
    part = mail.get_body(preferencelist=("plain",))
    return part.get_content()


def _para(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    at = lines.index(heading)
    out = []
    for line in lines[at + 1:]:
        if not line.strip():
            break
        out.append(line.strip())
    return out


@pytest.mark.parametrize("language, heading, expected", [
    ("en", "DEADLINES", [
        "Each move has a deadline: in this game 2 days after the mail",
        "that asks for it (the status mail says when). A day before it (half the",
        "time for a short deadline) you get a reminder.",
        "If nothing arrives in time, the game waits for you and the game master",
        "is told. After 4 missed moves in a row your seat goes to the",
        "built-in player until a replacement is found."]),
    ("es", "PLAZOS", [
        "Cada jugada tiene un plazo: en esta partida, 2 días desde el correo",
        "que la pide (el correo de estado dice cuándo vence). Un día antes (la",
        "mitad del tiempo si el plazo es corto) recibes un recordatorio.",
        "Si no llega nada a tiempo, la partida te espera y se avisa al",
        "director de juego. Tras 4 jugadas perdidas seguidas, tu puesto pasa",
        "al jugador automático hasta que haya un sustituto."]),
])
def test_the_welcome_guide_states_this_games_deadline(tmp_path, language, heading, expected):
    clocked = Clocked(tmp_path, settings={"deadline": 48 * 3600, "on_missed": "wait",
                                          "abandon_after": 4, "language": language})
    welcomes = clocked.sent()
    assert len(welcomes) == 3
    for mail in welcomes:
        assert _para(_text(mail), heading) == expected


def test_help_in_a_game_without_deadline_says_so(tmp_path):
    clocked = Clocked(tmp_path, settings={"deadline": None})
    clocked.sent()
    clocked.mail("Bob", "help")
    clocked.run(T0 + H)
    (answer,) = clocked.sent()
    assert _para(_text(answer), "DEADLINES") == [
        "Moves have no deadline in this game unless the game master sets one;",
        "the status mail says when one applies.",
        "If nothing arrives in time, the built-in player moves for you and",
        "everyone is told. After 3 missed moves in a row your seat goes to",
        "the built-in player until a replacement is found."]
