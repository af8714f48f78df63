"""What people type (issue 24): every named thing matched regardless of case,
accents and full-width forms, refusals offering the nearest matches in the
player's language; and the reading policy: prose that holds an order word, and
reply-header lines of any language, never cost a mail its complete turn."""
from __future__ import annotations

import re

import pytest

from game_helpers import default_board
from test_cycle import Harness, start_all, text_of, title_of
from test_deadlines import H, T0, Clocked, body, to
from moderator import i18n
from moderator.mail.read import is_reply_header, strip_quoted
from moderator.moderation import gm
from moderator.moderation.deadlines import check_timezone
from moderator.moderation.interpret import looks_like_order
from moderator.moderation.language import nearest_languages
from moderator.orders.names import find, nearest, timezone_named, timezone_nearest
from moderator.orders.parser import OrderError, command, parse_turn
from moderator.rules.actions import Build, Invest, Take


BOARD = default_board()


def refusal(lines, language=None):
    """The code, values and sentence (in ``language``) of the refusal of ``lines``."""
    with pytest.raises(OrderError) as info:
        parse_turn(lines, BOARD, language=language)
    with i18n.speaking(language or "en"):
        return info.value.code, info.value.values, info.value.reason


# ------------------------------------------------------------------ the one folding

def test_names_are_found_by_the_one_folding():
    assert find("zoe", ["Ann", "Zoë", "Cy"]) == "Zoë"
    assert find("ＺＯＥ", ["Ann", "Zoë", "Cy"]) == "Zoë"
    assert find("ZOË", ["Ann", "Zoe"]) == "Zoe"
    assert find("Zoey", ["Ann", "Zoë"]) is None
    assert nearest("Zoey", ["Ann", "Zoë", "Cy"]) == ["Zoë"]
    assert nearest("", ["Ann"]) == [] and nearest("xyzzy", ["Ann", "Bob"]) == []


# ------------------------------------------------------------------ time zones

@pytest.mark.parametrize("typed,zone", [
    ("europe/prague", "Europe/Prague"),       # the finding: refused for its case
    ("EUROPE/PRAGUE", "Europe/Prague"),
    ("ＥＵＲＯＰＥ／ＰＲＡＧＵＥ", "Europe/Prague"),  # full-width, as a Japanese keyboard writes it
    ("prague", "Europe/Prague"),              # a place of one zone
    ("US/eastern", "US/Eastern"),
    ("america/new york", "America/New_York"),
    ("New York", "America/New_York"),
    ("São Paulo", "America/Sao_Paulo"),       # accents of the place
    ("zürich", "Europe/Zurich"),
    ("Praha", "Europe/Prague"),               # the city as the languages pbem writes name it (CLDR)
    ("Prag", "Europe/Prague"), ("Vídeň", "Europe/Vienna"), ("WIEN", "Europe/Vienna"),
    ("Nueva York", "America/New_York"), ("上海", "Asia/Shanghai"), ("Londýn", "Europe/London"),
    ("kiev", "Europe/Kyiv"),                  # Europe/Kiev and Europe/Kyiv: one zone (an alias)
    ("Calcutta", "Asia/Kolkata"),
    ("utc", "UTC"),
    ("UTC+2", "Etc/GMT-2"),                   # an offset: the Etc zone, whose sign POSIX inverts
    ("gmt -05:00", "Etc/GMT+5"),
    ("UTC+0", "UTC"),
])
def test_a_time_zone_is_read_in_any_case_accents_and_width(typed, zone):
    assert timezone_named(typed) == zone
    assert check_timezone(typed) == zone


@pytest.mark.parametrize("typed,near", [
    ("Pargue", ["Europe/Prague"]),
    ("Pragu", ["Europe/Prague"]),
    ("eastern", ["Canada/Eastern", "US/Eastern"]),  # a place of two zones: both offered
    ("UTC+5:30", []),                          # an offset no zone name has: nothing is near it
    ("UTC+15", []),
])
def test_an_unknown_time_zone_gets_its_nearest(typed, near):
    assert timezone_named(typed) is None
    with pytest.raises(ValueError):
        check_timezone(typed)
    assert timezone_nearest(typed) == near


def test_timezone_by_mail_in_any_case_and_the_refusal_names_the_nearest_in_en_and_de(tmp_path):
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    h.sent()
    h.mail("Bob", "timezone europe/prague")
    h.mail("Ann", "Timezone: New York")
    h.mail("Cy", "language de\ntimezone Pragg")
    h.run(T0 + H)  # 13:00 UTC: 14:00 in Prague (CET), 08:00 in New York (EST)
    mails = h.sent()
    assert "Your time zone is now Europe/Prague (it is 2026-12-01 14:00 CET there)." in body(
        to(mails, "bob@example.org")[0])
    assert "Your time zone is now America/New_York (it is 2026-12-01 08:00 EST there)." in body(
        to(mails, "ann@example.org")[0])
    cy = "\n".join(body(m) for m in to(mails, "cy@example.net"))
    assert ("'Pragg' ist keine Zeitzone, die der Moderator kennt; nichts wurde geändert. Am nächsten "
            "kommen: Europe/Prague. Schreib eine davon, z. B. 'Zeitzone Europe/Prague'.") in cy
    rec = h.load()
    assert [(p.name, p.timezone) for p in rec.players] == [
        ("Ann", "America/New_York"), ("Bob", "Europe/Prague"), ("Cy", None)]

    h.mail("Bob", "timezone Pargue")
    h.mail("Cy", "Zeitzone Wien")
    h.run(T0 + 2 * H)
    assert h.load().player_by_name("Cy").timezone == "Europe/Vienna"
    bob = body(to(h.sent(), "bob@example.org")[0])
    assert ("'Pargue' is no time zone the moderator knows; nothing was changed. The nearest: "
            "Europe/Prague. Write one of them, e.g. 'timezone Europe/Prague'.") in bob
    assert h.load().player_by_name("Bob").timezone == "Europe/Prague"  # unchanged


# ------------------------------------------------------------------ languages

@pytest.mark.parametrize("typed,code", [
    ("de", "de"), ("DE", "de"), ("ＤＥ", "de"), ("Deutsch", "de"), ("DEUTSCH", "de"),
    ("čeština", "cs"), ("ČEŠTINA", "cs"), ("cestina", "cs"), ("ESPAÑOL", "es"), ("espanol", "es"),
    ("中文", "zh"), ("ｅｎ", "en"),
])
def test_a_language_is_read_in_any_case_accents_and_width(typed, code):
    assert i18n.normalize(typed) == code


def test_an_unknown_language_gets_its_nearest_codes():
    assert nearest_languages("Deutch") == ["de"]
    assert nearest_languages("Espagnol") == ["es"]
    assert nearest_languages("Czeck") == ["cs"]
    assert nearest_languages("fr") == [] and nearest_languages("xyzzy") == []


def test_language_by_mail_and_the_refusal_names_the_nearest_in_en_and_es(tmp_path):
    h = Clocked(tmp_path)
    h.sent()
    h.mail("Ann", "language ČEŠTINA")
    h.mail("Bob", "language Deutch")
    h.mail("Cy", "language es\nidioma Alemn")
    h.run(T0 + H)
    mails = h.sent()
    assert h.load().player_by_name("Ann").language == "cs"
    bob = body(to(mails, "bob@example.org")[0])
    assert "The moderator does not write 'Deutch'; nothing was changed." in bob
    assert "Nearest to what you wrote: de (e.g. 'language de')." in bob
    cy = "\n".join(body(m) for m in to(mails, "cy@example.net"))
    assert "El moderador no escribe en 'Alemn'; no se ha cambiado nada." in cy
    assert "Lo más parecido a lo que escribiste: de (p. ej. 'idioma de')." in cy
    rec = h.load()
    assert (rec.player_by_name("Bob").language, rec.player_by_name("Cy").language) == (None, "es")


# ------------------------------------------------------------------ companies, cities, track cards

BUILD = Build("KCC", "DEN-OMA", "white", take=Take("stack"))


@pytest.mark.parametrize("line", [
    "build ＫＣＣ Omaha-Denver white; take stack",
    "build kcc Omaha-Denver white; take stack",
    "build Kansas City Céntral Omaha-Denver white; take stack",
    "BUILD KCC OMAHA-DENVER WHITE; TAKE STACK",
    "build KCC omáha-denver white; take stack",
    "build KCC ＯＭＡＨＡ-Denver white; take stack",
    "build KCC Omaha-Denver ｗｈｉｔｅ; take stack",
    "build KCC Omaha-Denver Whíte; take stack",
])
def test_company_city_and_card_in_any_case_accents_and_width(line):
    assert parse_turn([line], BOARD) == BUILD


@pytest.mark.parametrize("line", [
    "construir KCC Omaha-Denver BLÁNCA; tomar pila",
    "CONSTRUIR ｋｃｃ omáha-denver blanca; TOMAR PILA",
])
def test_the_same_in_spanish(line):
    assert parse_turn([line], BOARD, language="es") == BUILD


def test_a_mistyped_company_is_refused_with_the_nearest_in_en_and_es():
    assert refusal(["build KCX Omaha-Denver white"]) == (
        "company_first", {"word": "KCX", "suggestion": "KCC"},
        "'KCX' is not a company (did you mean KCC?); write the company first, e.g. 'build KCC DEN-KCY white'")
    code, values, reason = refusal(["construir KCX Omaha-Denver blanca"], "es")
    assert (code, values["suggestion"]) == ("company_first", "KCC")
    assert reason.startswith("'KCX' no es una compañía (¿querías decir KCC?)")


def test_a_mistyped_city_is_refused_with_the_nearest_in_en_and_de():
    code, values, reason = refusal(["build KCC Omahha-Denver white"])
    assert (code, values["suggestion"]) == ("unknown_city", {"id": "OMA", "name": "Omaha"})
    assert reason == ("'Omahha' is not a city on the board (did you mean OMA (Omaha)?); "
                      "write city ids like DEN or names like Denver")
    code, values, reason = refusal(["baue KCC Omahha-Denver weiß"], "de")
    assert code == "unknown_city"
    assert reason == ("'Omahha' ist keine Stadt auf dem Plan (meintest du OMA (Omaha)?); "
                      "schreib Kürzel wie DEN oder Namen wie Denver")


def test_a_mistyped_track_card_is_refused_with_the_nearest_in_en_and_es():
    assert refusal(["build KCC Omaha-Denver whtie"]) == (
        "build_not_a_card", {"word": "whtie", "suggestion": "white"},
        "'whtie' is not a track card (did you mean 'white'?); play one of plain, black-white, black, "
        "white or joker")
    assert refusal([f"invest 2 KCC; discard blakc"])[1] == {"word": "blakc", "suggestion": "black"}
    code, values, reason = refusal(["construir KCC Omaha-Denver blamca"], "es")
    assert (code, values) == ("build_not_a_card", {"word": "blamca", "suggestion": "blanca"})
    assert reason == ("'blamca' no es una carta de vía (¿querías decir 'blanca'?); juega una de estas: "
                      "lisa, blanquinegra, negra, blanca o comodín")
    assert refusal(["build KCC Omaha-Denver xyzzy"])[1] == {"word": "xyzzy", "suggestion": None}


# ------------------------------------------------------------------ player names

def test_a_seat_is_named_in_any_case_accents_and_width(tmp_path):
    h = Clocked(tmp_path, players=[("Ann", "ann@example.org"), ("Zoë", "zoe@example.org"),
                                   ("Cy", "cy@example.net")])
    rec = h.load()
    assert gm._seat(rec, "zoe").name == "Zoë"
    assert gm._seat(rec, "ＺＯＥ").name == "Zoë"
    assert gm._seat(rec, "ZOË").name == "Zoë"
    with pytest.raises(gm.GmRefusal) as info:
        gm._seat(rec, "Zoey")
    assert info.value.values == {"player": "Zoey", "players": "Zoë, Ann, Cy"}  # the nearest first
    from moderator.admin import set_address

    assert set_address(h.config, "ridge", "ZOE", "zoe@example.net", clock=lambda: T0) == (
        "Zoë", "zoe@example.org", "zoe@example.net")
    with pytest.raises(ValueError, match=r"game ridge has no player 'Zoey'; its players are Zoë, Ann, Cy$"):
        set_address(h.config, "ridge", "Zoey", "zoe@example.com", clock=lambda: T0)
    assert gm.parse_gm("ＥＪＥＣＴ zoe") == gm.GmCommand("eject", ("zoe",))
    h.mod.manage("ridge", "Eject ZOË")
    assert h.load().player_by_name("Zoë").bot


# ------------------------------------------------------------------ commands

@pytest.mark.parametrize("line,language,cmd", [
    ("ＨＥＬＰ", None, "help"), ("Hélp", None, "help"), ("STATUS", None, "status"),
    ("NÁPOVĚDA", "cs", "help"), ("napoveda", "cs", "help"), ("ＨＩＬＦＥ", "de", "help"),
    ("TIMEZONE europe/prague", None, "timezone europe/prague"),
])
def test_a_command_in_any_case_accents_and_width(line, language, cmd):
    assert command(line, language) == cmd


def test_a_mistyped_command_is_refused_with_the_nearest_in_en_and_de():
    assert refusal(["statsu"])[:2] == ("unknown_order", {"word": "statsu", "suggestion": "status"})
    assert refusal(["Histroy!"])[1]["suggestion"] == "history"
    assert refusal(["timezon"])[1] == {"word": "timezon", "suggestion": "timezone"}
    assert refusal(["vacaton"])[1] == {"word": "vacaton", "suggestion": "vacation"}
    code, values, reason = refusal(["Hilfee"], "de")
    assert (code, values["suggestion"]) == ("unknown_order", "Hilfe")
    assert reason.startswith("Den Befehl 'Hilfee' kenne ich nicht (meintest du 'Hilfe'?); ")
    # words that are no command stay chatter
    for line in ("hell", "Stan", "Thanks", "Tak"):
        assert refusal([line])[0] == "no_order"


def test_a_mistyped_command_by_mail_is_answered_with_the_command(tmp_path):
    h = Clocked(tmp_path)
    h.sent()
    h.mail("Bob", "statsu")
    h.run(T0 + H)
    bob = body(to(h.sent(), "bob@example.org")[0])
    assert "I do not know the order 'statsu' (did you mean 'status'?)" in bob


# ------------------------------------------------------------------ the reading policy

@pytest.mark.parametrize("line,order", [
    ("biuld KCC DEN-KCY", True), ("Invets 2 KCC", True), ("redarw plain", True),
    ("buidl WW CHY-DEN plain", True), ("build on denver-kcy white", True), ("take UP", True),
    ("take the stack", True), ("take #2", True), ("pass", True), ("Pass, thanks", True),
    ("invest in KCC", True), ("start with KCC", True), ("discard", True),
    ("Put the keys in the box by the door.", False), ("return mailer.send(message)", False),
    ("Tak", False), ("Tak for sidst!", False), ("In this regards, we meet in room 4.", False),
    ("Draw your own conclusions about round 3.", False), ("Take care,", False),
    ("Skip the call on the 14th if you are busy.", False), ("Drop me a line when you're back.", False),
])
def test_a_line_counts_as_an_order_only_when_it_reads_as_one(line, order):
    assert looks_like_order(line, BOARD) is order


@pytest.mark.parametrize("language,line,order", [
    ("de", "baeu KCC DEN-KCY weiß", True), ("de", "2 KCC investieren", True),
    ("de", "Nimm den Stapel", True), ("de", "Leg die Schlüssel in den Kasten.", False),
    ("de", "Schöne Grüße, Jörg", False),
    ("es", "construr KCC DEN-KCY blanca", True), ("es", "Pon las llaves en la caja.", False),
    ("cs", "postavt KCC DEN-KCY bílá", True), ("cs", "Tak zítra", False),
    ("zh", "建造KCC丹佛-堪萨斯城黑色", True), ("zh", "谢谢", False),
])
def test_a_line_reads_as_an_order_in_the_players_language(language, line, order):
    with i18n.speaking(language):
        assert looks_like_order(line, BOARD) is order


@pytest.mark.parametrize("line", [
    "Message du : 12/03/2024 10:15", "Message du 03/12/12 14:58", "> Message du 03/12/12 14:58",
    "Nachricht vom 01.12.2026 um 10:15", "Messaggio di: moderator@pbem.localhost",
    "De : Moderator", "*From:* Moderator", "Objet : status", "Betreff: help", "Emne: Status",
    "Od: Moderator", "Lähettäjä: Moderator", "-----Original Message-----", "Begin forwarded message:",
])
def test_reply_header_lines_of_any_language_are_never_commands(line):
    assert is_reply_header(line)
    assert not gm.looks_like_gm(line)
    with pytest.raises(gm.GmError):
        gm.parse_gm(line)
    from moderator.moderation.interpret import interpret
    assert interpret([line], BOARD).commands == ()


@pytest.mark.parametrize("line", ["message: the game resumes on Monday", "help", "status",
                                  "timezone Europe/Prague", "message du nouveau"])
def test_commands_are_no_reply_headers(line):
    assert not is_reply_header(line)


@pytest.mark.parametrize("tail", [
    "Message du 01/12/26 10:15\nDe : \"Moderator\" <moderator@pbem.localhost>\nA : ann@example.org\n"
    "Copie à :\nObjet : Union Pacific ridge\n\nBienvenue",
    "Nachricht vom 01.12.2026 um 10:15\nVon: Moderator <moderator@pbem.localhost>\nAn: ann@example.org\n"
    "Betreff: Union Pacific ridge\n\nWillkommen",
    "Messaggio di: moderator@pbem.localhost\nData: 01/12/2026 10:15\nA: ann@example.org\n"
    "Oggetto: Union Pacific ridge\n\nBenvenuto",
    "Message du : 01/12/2026 10:15\n> De : Moderator\n> Objet : Union Pacific ridge",
    # Apple Mail in Czech (crisp-oss/email-reply-parser's fixture apple_mail_cs_body)
    "Začátek přeposílané zprávy:\n\nOd: Moderator <moderator@pbem.localhost>\nPředmět: Union Pacific ridge\n"
    "Datum: 1. prosince 2026 10:15:08 SEČ\nKomu: ann@example.org",
    # GMX and web.de write the Sent line first
    "Gesendet: Dienstag, 01. Dezember 2026 um 10:15 Uhr\nVon: \"Moderator\" <moderator@pbem.localhost>\n"
    "An: ann@example.org\nBetreff: Union Pacific ridge\n\nWillkommen",
    "Sent: Tuesday, December 1, 2026 10:15 AM\nFrom: Moderator <moderator@pbem.localhost>\n"
    "To: ann@example.org\nSubject: Union Pacific ridge\n\nWelcome",
])
def test_a_webmail_intro_or_sent_line_ends_the_reading_with_its_header_block(tail):
    assert strip_quoted(f"start KCC\n\n{tail}") == "start KCC"


# The outside replies of the finding: a complete turn above prose that holds an
# order word, or above a reply header of a European webmail.  Each is applied;
# the note names exactly the lines not read (None: no note, the reader cut them).
OUTSIDE = [
    ("Put the keys in the box by the door, I'll be back at 6.",
     ["  > not read  Put the keys in the box by the door, I'll be back at 6."]),
    ("The bug is in our notifier:\n\n    def notify(message):\n        return mailer.send(message)\n\nregards",
     ["  > not read  return mailer.send(message)", "  > not read (sign-off)  regards"]),
    ("Tak for hjælpen med reglerne i går, vi ses på lørdag kl. 19.",
     ["  > not read  Tak for hjælpen med reglerne i går, vi ses på lørdag kl. 19."]),
    ("In this regards, the meeting moves to room 4.",
     ["  > not read  In this regards, the meeting moves to room 4."]),
    ("Message du : 01/12/2026 10:15\nDe : \"Moderator\" <moderator@pbem.localhost>\nA : ann@example.org\n"
     "Objet : Union Pacific ridge", None),
    ("Message du : 01/12/2026 10:15", ["  > not read (signature)  Message du : 01/12/2026 10:15"]),
    ("Nachricht vom 01.12.2026 um 10:15\nVon: Moderator <moderator@pbem.localhost>\nAn: ann@example.org\n"
     "Betreff: Union Pacific ridge", None),
    ("Messaggio di: moderator@pbem.localhost\nData: 01/12/2026 10:15\nA: ann@example.org\n"
     "Oggetto: Union Pacific ridge", None),
    ("Draw your own conclusions about round 3.", ["  > not read  Draw your own conclusions about round 3."]),
    ("Skip the call on the 14th if you are busy.",
     ["  > not read  Skip the call on the 14th if you are busy."]),
]


@pytest.mark.parametrize("tail,unread", OUTSIDE)
def test_a_complete_turn_above_prose_or_a_reply_header_is_applied(tmp_path, tail, unread):
    h = Harness(tmp_path)
    rec = start_all(h)
    mover = rec.game.to_move
    share, card = sorted(rec.game.share_hands[mover])[0], rec.game.track_hands[mover][0]
    h.sent()
    before = len(rec.history)
    h.order(mover, f"invest {share}\ndiscard {card}\n\n{tail}")
    report = h.run()
    assert (report.applied, report.refused) == (1, 0), report.summary()
    after = h.load()
    assert len(after.history) == before + 1
    assert after.history[-1]["player"] == mover
    assert after.history[-1]["order"] == str(Invest((share,), card))
    mine = [m for m in h.sent() if mover.lower() in str(m["To"]).lower()]
    assert not [m for m in mine if "refused" in title_of(m)]
    notes = [m for m in mine if "not read" in title_of(m)]
    if unread is None:
        assert notes == []
    else:
        (note,) = notes
        text = text_of(note)
        assert f"Your order was applied: invest {share}; discard {card}." in text
        assert [l for l in text.splitlines() if l.startswith("  > not read")] == unread


def test_a_mistyped_order_below_a_turn_is_still_refused(tmp_path):
    h = Harness(tmp_path)
    rec = start_all(h)
    mover = rec.game.to_move
    share, card = sorted(rec.game.share_hands[mover])[0], rec.game.track_hands[mover][0]
    before = h.path.read_bytes()
    h.order(mover, f"invest {share}\ndiscard {card}\n\nPut the keys in the box.\nbiuld KCC DEN-KCY white")
    report = h.run()
    assert (report.applied, report.refused) == (0, 1), report.summary()
    assert h.path.read_bytes() == before


def _labels():
    from moderator.mail.read import REPLY_TABLE

    for lang, entry in sorted(REPLY_TABLE.items()):
        for kind in ("from", "sent", "date", "to", "cc", "subject", "intro"):
            for label in entry.get(kind, []):
                yield lang, label


@pytest.mark.parametrize("lang,label", sorted(set(_labels())))
def test_no_header_label_of_the_table_makes_a_command(lang, label):
    """Every label of every language of reply_headers.json (39 languages: the
    product's five and the big European ones among them), before a colon and
    a command word, is a reply header: no mail command, no game-master command."""
    from moderator.moderation.interpret import interpret

    for tail in ("status", "help", "message to all", "end", "pause", "resign"):
        line = f"{label}: {tail}"
        assert is_reply_header(line), line
        assert not gm.looks_like_gm(line), line
        assert interpret([line], BOARD).commands == (), line


def test_a_players_language_at_creation_names_the_seat_in_any_case(tmp_path):
    from moderator.store.gamefile import GameStore
    from moderator.moderation.create import new_game

    store = GameStore(tmp_path / "games")
    record = new_game(store, "hill", [("Ann", "ann@example.org"), ("Zoë", "zoe@example.org"),
                                      ("Cy", "cy@example.net")], 3, T0, languages={"ZOE": "ＤＥ"})
    assert [(p.name, p.language) for p in record.players] == [("Ann", None), ("Zoë", "de"), ("Cy", None)]


@pytest.mark.parametrize("line,is_gm", [
    ("undo 1", True), ("undo 2 force", True), ("pause", True), ("end: nobody plays any more", True),
    ("message: I am late this week", True), ("observe watcher@example.com", True), ("resume", True),
    ("eject Bob", True), ("deadline 48h", True), ("extend Bob 1d", True),
    ("replace Bob Dora=dora@example.org", True),
    ("Message me if you need anything.", False), ("End of story, see you Saturday.", False),
    ("Pause the music when you call.", False), ("Undo 2 would be nice", False),
    ("Observe carefully", False), ("Message du : 12/03/2024 10:15", False),
])
def test_a_players_line_is_a_game_master_command_only_when_written_as_one(line, is_gm):
    assert gm.looks_like_gm(line) is is_gm


@pytest.mark.parametrize("tail", ["Message me if you need anything.", "End of story, see you Saturday.",
                                  "Pause the music when you call.", "Observe carefully"])
def test_a_turn_above_prose_opening_with_a_game_master_word_is_applied(tmp_path, tail):
    h = Harness(tmp_path)
    rec = start_all(h)
    mover = rec.game.to_move
    share, card = sorted(rec.game.share_hands[mover])[0], rec.game.track_hands[mover][0]
    h.sent()
    h.order(mover, f"invest {share}\ndiscard {card}\n\n{tail}")
    report = h.run()
    assert (report.applied, report.refused) == (1, 0), report.summary()
    assert h.load().history[-1]["order"] == str(Invest((share,), card))
    assert not [m for m in h.sent() if "refused" in title_of(m)]
