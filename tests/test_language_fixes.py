"""What players of other languages read, with the shipped catalogues: lengths of
time in their words (render.when.format_duration), the automatic move and the
history in their notation, the status mail after a change of language, the
resignation's deadline in their time zone."""
from __future__ import annotations

from datetime import timedelta

import pytest

from moderator.render.when import format_duration
from test_language_mail import T0, THREE, Table, text

H = timedelta(hours=1)


def flat(msg) -> str:
    return " ".join(text(msg).split())


@pytest.mark.parametrize("seconds,language,expected", [
    (20158 * 60, "de", "13 Tage, 23 Stunden"),
    (20158 * 60, "en", "13 days, 23 hours"),
    (3 * 86400, "de", "3 Tage"),
    (20 * 86400, "es", "20 días"),
    (14 * 86400, "cs", "14 dnů"),
    (11 * 86400, "zh", "11天"),
    (90 * 60, "en", "1 hour, 30 minutes"),
    (90 * 60, "es", "1 hora y 30 minutos"),
    (86400 + 59 * 60, "en", "1 day"),
    (0, "de", "0 Tage"),
])
def test_a_length_of_time_in_whole_units_of_the_language(seconds, language, expected):
    assert format_duration(seconds, language) == expected


def test_vacation_lengths_in_the_players_words(tmp_path):
    t = Table(tmp_path, THREE, languages={"Ann": "de", "Ana": "es"})
    t.sent()
    t.mail("Ann", "Urlaub 3 Tage")
    t.mail("Ana", "vacaciones 20 días")
    t.run(T0 + H)
    mails = t.sent()
    ann = [flat(m) for m in mails if str(m["To"]) == "ann@example.org"]
    ana = [flat(m) for m in mails if str(m["To"]) == "ana@example.org"]
    assert any("(3 Tage). Restlicher Urlaub in dieser Partie: 11 Tage." in b for b in ann)
    assert any("Unas vacaciones de 20 días superan lo que te queda en esta partida (14 días de 14 días "
               "en total); no se ha cambiado nada. Pide como mucho 14 días, p. ej. 'vacaciones 14d'." in b
               for b in ana)
    t.mail("Ann", "Urlaub ausschalten")
    t.run(T0 + H + timedelta(minutes=2))
    [m] = [m for m in t.sent() if str(m["To"]) == "ann@example.org"]
    assert "Restlicher Urlaub in dieser Partie: 13 Tage, 23 Stunden." in flat(m)
    # the example of a refusal is an order the parser reads: 13d within 13 days 23 hours
    t.mail("Ann", "Urlaub 14 Tage")
    t.run(T0 + 2 * H)
    [m] = [m for m in t.sent() if str(m["To"]) == "ann@example.org"]
    assert "Nimm höchstens 13 Tage, 23 Stunden, z. B. 'Urlaub 13d'." in flat(m)
    t.mail("Ann", "Urlaub 13d")
    t.run(T0 + 3 * H)
    assert t.load().player_by_name("Ann").vacation_used == 2 * 60 + 13 * 86400
    t.close()
