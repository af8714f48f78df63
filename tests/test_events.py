"""The game log in the reader's language (moderator/render/events.py, words/events.txt).

Every sentence the rules engine writes is read back into a name and values, and the
English macro of that name gives the sentence back character for character; in
another language the sentence comes from the catalogue.
"""
from __future__ import annotations

import random

import pytest

from game_helpers import default_board, new_game, play_random
from moderator import i18n
from moderator.render import events
from moderator.render.words import names, word

# One sentence per name, written here by hand as the engine writes it
# (moderator/rules/engine.py), with the values the reader must find.
SAMPLES = {
    "set_up": ("Game set up: 3 players (Ann, Bob, Cy), ruleset first-edition.",
               {"count": 3, "players": ["Ann", "Bob", "Cy"], "ruleset": "first-edition"}),
    "four_of_a_kind": ("Four KCC shares face up: removed from the game and replaced.", {"company": "KCC"}),
    "face_up": ("Face-up shares: KCC, UP, -, BNL.", {"shares": "KCC, UP, -, BNL"}),
    "initial_chosen": ("Mary Ann has chosen an initial investment.", {"player": "Mary Ann"}),
    "passes": ("Bob can neither build nor invest and passes.", {"player": "Bob"}),
    "passes_discarding": ("Bob can neither build nor invest and passes, discarding a black-white track card.",
                          {"player": "Bob", "card": "black-white"}),
    "initial_revealed": ("Initial investments revealed: Ann KCC, Bob UP.", {"shown": "Ann KCC, Bob UP"}),
    "starts": ("Cy starts.", {"player": "Cy"}),
    "reshuffled": ("The track deck was empty: the 17 discards were shuffled into a new deck.", {"count": 17}),
    "no_track_left": ("No track card is left for Ann to draw (deck and discards are empty).", {"player": "Ann"}),
    "dead_card": ("Ann shows a dead white track card (every white space is full), removes it from the game "
                  "and draws a replacement.", {"player": "Ann", "card": "white"}),
    "dividend_unused": ("The 3rd dividend card is drawn; it is not used (the game ends with dividend 3).",
                        {"ordinal": 3, "final": 3}),
    "dividend_announced": ("A dividend card is drawn: dividend 2 is announced.", {"number": 2}),
    "built": ("Ann built KCC on DEN-KCY (plain track); KCC is worth 4.",
              {"player": "Ann", "company": "KCC", "section": "DEN-KCY", "card": "plain", "value": 4}),
    "built_joker": ("Ann built WW on BIL-SLC (joker as black track); WW is worth 3.",
                    {"player": "Ann", "company": "WW", "section": "BIL-SLC", "card": "black", "value": 3}),
    "took_face_up": ("Bob took the face-up MS share.", {"player": "Bob", "share": "MS"}),
    "place_empty": ("Its place stays empty: the stack holds no more share.", {}),
    "replaced_by": ("It is replaced by ESL.", {"share": "ESL"}),
    "took_stack": ("Bob took the top share of the stack.", {"player": "Bob"}),
    "stack_empty": ("The stack held no more share: nothing was drawn.", {}),
    "took_up": ("Bob took a UP share.", {"player": "Bob"}),
    "drew_none": ("Bob could draw no share.", {"player": "Bob"}),
    "swap_not_made": ("The game is over: Bob's UP swap is not made.", {"player": "Bob"}),
    "swapped_unseen": ("Bob returned a share to the box unseen and took a UP share.", {"player": "Bob"}),
    "invested": ("Ann invested 2 KCC and 1 UP.", {"player": "Ann", "shares": [(2, "KCC"), (1, "UP")]}),
    "invested_discarding": ("Ann invested 1 BNL and discarded a joker track card.",
                            {"player": "Ann", "shares": [(1, "BNL")], "card": "joker"}),
    "double_dividend": ("Double dividend: 2 dividends are paid one after the other.", {"count": 2}),
    "several_dividends": ("3 dividend cards in one draw: 3 dividends are paid one after the other.",
                          {"cards": 3, "count": 3}),
    "game_over": ("The game is over. 1. Ann 42, 2. Bob 40, 2. Cy 40", {"standings": "1. Ann 42, 2. Bob 40, 2. Cy 40"}),
    "stalled": ("No company can build any more and nobody holds a share: the remaining dividends are paid now.", {}),
    "imaginary_takes": ("The imaginary third player takes the display, the stack and the UP pile: 2 KCC, 1 UP.",
                        {"shown": "2 KCC, 1 UP"}),
    "dividend_hidden": ("Dividend 2 paid (amounts hidden: option hidden_money).", {"number": 2}),
    "dividend_paid": ("Dividend 1 paid: Ann +12, Bob +0 (millions).", {"number": 1, "parts": "Ann +12, Bob +0"}),
}


def test_every_pattern_has_a_sample_and_a_macro():
    assert {name for name, _ in events.PATTERNS} == set(SAMPLES) == names("events") - {"_card", "_invested"}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_sentence_is_read_and_worded_back_in_english(name):
    line, values = SAMPLES[name]
    assert events.read(line) == (name, values)
    assert word("events", name, **values) == line


def test_english_is_the_line_itself_and_an_unknown_line_stays_as_it_is():
    assert events.event_text("Ann built KCC on DEN-KCY (plain track); KCC is worth 4.") == \
        "Ann built KCC on DEN-KCY (plain track); KCC is worth 4."
    with i18n.speaking("cs"):
        assert events.event_text("Something an older pbem wrote.") == "Something an older pbem wrote."


@pytest.mark.parametrize("players,options", [
    (("Ann", "Bob", "Cy"), {}),
    (("Ann", "Bob"), {"hidden_money": True}),
    (("Ann", "Bob", "Cy", "Dee"), {"dead_track_redraw": True}),
    (("Ann", "Bob", "Cy", "Dee", "Eve"), {"spread_dividends": True}),
])
def test_every_line_of_random_games_is_read_and_worded_back(players, options):
    seen = set()
    for seed in range(6):
        g = new_game(players, seed=seed, board=default_board(), **options)
        play_random(g, random.Random(seed))
        for line in g.log:
            found = events.read(line)
            assert found is not None, f"no pattern reads the engine's sentence {line!r}"
            assert word("events", found[0], **found[1]) == line
            seen.add(found[0])
    assert {"set_up", "face_up", "built", "dividend_announced", "game_over"} <= seen


def test_another_language_gets_the_catalogue_wording():
    """With a catalogue, a log line comes out translated, the values in place and
    the track card type worded in that language."""
    from babel.messages.pofile import read_po

    catalog = read_po(i18n.catalogue_path("es").open("rb"))
    built = catalog.get("%(player)s built %(company)s on %(section)s (%(card)s track); %(company)s is worth %(value)s.")
    plain = catalog.get("plain", context="track card")
    assert built is not None and built.string and plain is not None and plain.string
    line = "Ann built KCC on DEN-KCY (plain track); KCC is worth 4."
    expected = built.string % {"player": "Ann", "company": "KCC", "section": "DEN-KCY",
                               "card": plain.string, "value": 4}
    with i18n.speaking("es"):
        assert events.event_text(line) == expected
    assert expected != line


def test_the_rulesets_and_options_are_worded_as_the_tables_say():
    """words/options.txt gives, in English, exactly the text of RULESET_TABLE and
    OPTION_TABLE (moderator/rules/options.py), for every ruleset and option."""
    from moderator.render import environment
    from moderator.rules.options import OPTION_TABLE, RULESET_TABLE

    module = environment().get_template("words/options.txt").module
    for r in RULESET_TABLE:
        assert str(module.summary(r.name)).strip() == r.summary
    for o in OPTION_TABLE:
        assert str(module.help(o.name)).strip() == o.help
    assert str(module.help("no_such_option", "as given")).strip() == "as given"
