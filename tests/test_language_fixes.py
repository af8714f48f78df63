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


@pytest.mark.parametrize("seconds,language,expected", [
    ((24 * 60 + 35) * 60, "es", "1 día y 35 minutos"),
    ((25 * 60 + 30) * 60, "zh", "1天1小时30分钟"),
    ((24 * 60 + 35) * 60 + 59, "en", "1 day, 35 minutes"),
    (86400, "de", "1 Tag"),
])
def test_a_deadline_moved_by_a_length_says_it_to_the_minute(seconds, language, expected):
    """An outage shifts the deadline by the whole gap: its notice says the gap
    to the minute, not its two largest units."""
    assert format_duration(seconds, language, exact=True) == expected


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


@pytest.mark.parametrize("order,language,expected", [
    ("start (secret initial investment)", "es", "empezar (inversión inicial secreta)"),
    ("build KCC DEN-KCY black-white; take UP; swap (a share) for UP", "es",
     "construir KCC DEN-KCY blanquinegra; tomar UP; cambiar (una acción) por UP"),
    ("build KCC DEN-KCY black-white; take UP; swap (a share) for UP", "cs",
     "postav KCC DEN-KCY černobílá; vezmi UP; vyměň (akcii) za UP"),
    ("build KCC DEN-KCY black-white; take UP; swap (a share) for UP", "zh",
     "建造 KCC DEN-KCY 黑白; 拿 UP; 交换（一张股票）换 UP"),
    ("build KCC DEN-KCY black-white; take UP; swap (a share) for UP", "de",
     "bauen KCC DEN-KCY schwarz-weiß; nehmen UP; tauschen (eine Aktie) gegen UP"),
    ("build KCC DEN-KCY black-white; take UP; swap (a share) for UP", "en",
     "build KCC DEN-KCY black-white; take UP; swap (a share) for UP"),
])
def test_the_hidden_forms_of_public_order_in_the_language(order, language, expected):
    from moderator.render.orders import localize
    from moderator.rules.notation import public_order

    # the two hidden forms are what public_order writes
    assert public_order("start KCC", False) == "start (secret initial investment)"
    assert public_order("build KCC DEN-KCY black-white; take UP; swap MS", True) == \
        "build KCC DEN-KCY black-white; take UP; swap (a share) for UP"
    assert localize(order, language) == expected


def test_the_automatic_move_in_the_readers_words_and_marked_in_the_history(tmp_path):
    from moderator.render.orders import localize
    from moderator.rules.notation import public_order

    t = Table(tmp_path, THREE, settings={"deadline": 48 * 3600}, languages={"Ana": "es", "Jana": "cs"})
    t.sent()
    t.run(T0 + 48 * H)  # nobody invested: the built-in player invests for all three
    rec = t.load()
    assert [h.get("by") for h in rec.history] == ["bot", "bot", "bot"]
    mails = t.sent()
    ana = [flat(m) for m in mails if str(m["To"]) == "ana@example.org"]
    own = rec.history[[h["player"] for h in rec.history].index("Ana")]["order"]
    mine = localize(own, "es")
    assert mine.startswith("empezar ") and mine != own
    assert len(ana) == 1  # one mail per player per cycle: the status mail tells the automatic moves
    assert (f"Tu plazo del jue, 3 dic 2026, 12:00 UTC pasó sin una orden tuya, así que el jugador automático "
            f"jugó por ti: {mine}.") in " ".join(ana)
    first = rec.history[0]
    if first["player"] != "Ana":  # invested while the phase was initial: secret to the others
        assert (f"El plazo de {first['player']} del jue, 3 dic 2026, 12:00 UTC pasó sin una orden suya, así que "
                f"el jugador automático jugó en su lugar: empezar (inversión inicial secreta).") in " ".join(ana)
    # the history mail marks the built-in player's moves, in the reader's words
    t.mail("Ana", "historial")
    t.run(T0 + 49 * H)
    [m] = t.sent()
    lines = [line for line in text(m).splitlines() if line[:4].strip().rstrip(".").isdigit()]
    assert lines == [f"{i + 1:3d}. {h['player']}: {localize(public_order(h['order'], True), 'es')} (automática)"
                     for i, h in enumerate(rec.history)]
    t.close()


def test_the_status_mail_comes_in_the_language_the_mail_ends_with(tmp_path):
    """Ana (es) writes 'idioma Deutsch', 'jugadas' and her order in one mail: the
    status mail of the order, the answers and everything after come in German."""
    import random

    from moderator.render.orders import localize
    from moderator.players.heuristic import choose

    t = Table(tmp_path, THREE, languages={"Ana": "es"})
    t.sent()
    rec = t.load()
    order = str(choose(rec.game, "Ana", random.Random(1)))
    t.mail("Ana", "idioma Deutsch\njugadas\n" + localize(order, "es"))
    t.run(T0 + H)
    rec = t.load()
    assert rec.history[-1]["player"] == "Ana" and rec.history[-1]["order"] == order
    assert rec.player_by_name("Ana").language == "de"
    ana = [m for m in t.sent() if str(m["To"]) == "ana@example.org"]
    assert len(ana) == 3  # the status mail, the answers to 'idioma' and to 'jugadas'
    assert text(ana[0]).startswith("Union Pacific, Partie ridge: warten auf die Startinvestitionen\n")
    assert text(ana[1]).startswith("Ab jetzt bekommst du jede Mail der Partie ridge auf Deutsch.")
    assert text(ana[2]).startswith("Union Pacific, Partie ridge: alle erlaubten Befehle\n")
    t.close()


def test_the_resignation_deadline_in_the_players_time_zone(tmp_path):
    t = Table(tmp_path, THREE, languages={"Jana": "cs"})
    t.sent()
    t.mail("Jana", "pásmo Europe/Prague")
    t.run(T0 + H)
    t.sent()
    t.mail("Jana", "vzdávám")
    t.run(T0 + 2 * H)  # 14:00 UTC: a day later is 15:00 in Prague
    [m] = [m for m in t.sent() if str(m["To"]) == "jana@example.cz"]
    assert "Chcete-li hru vzdát, pošlete do st 2. 12. 2026 15:00 SEČ „vzdávám potvrdit“." in flat(m)
    t.close()


def test_the_outage_notice_gives_its_length_in_the_readers_words(tmp_path):
    """The status mails after an outage of 30.5 hours: no "30.5 hours", the gap to the minute."""
    t = Table(tmp_path, THREE, languages={"Ana": "es"})
    t.sent()
    t.run(T0)
    import random

    from moderator.render.orders import localize
    from moderator.players.heuristic import choose

    t.mail("Ana", localize(str(choose(t.load().game, "Ana", random.Random(1))), "es"))
    t.run(T0 + timedelta(hours=30, minutes=30))
    [m] = [m for m in t.sent() if str(m["To"]) == "ana@example.org"]
    assert ("Aviso: el moderador estuvo 1 día, 6 horas y 30 minutos sin completar un ciclo (desde mar, 1 dic 2026, "
            "12:00 UTC).") in flat(m)
    t.close()
