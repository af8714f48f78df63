"""Events as values (issue 25): the engine emits typed events (moderator/rules/events.py),
the log a player reads is their rendering (moderator/render/events.py, words/events.txt),
game files keep them as mappings (format 4) and the old English sentences of format 1-3
files are read once, by the migration (moderator/store/v3_log.py).

Every kind has a macro; each kind's English is the sentence pbem always wrote (written
here by hand); the events of random games (hypothesis) are worded in every language
with all their values in the text, and their English reads back to the same events.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from game_helpers import default_board, mini_board, new_game, play_random
from moderator import i18n
from moderator.render import events
from moderator.render.words import names
from moderator.rules import events as E
from moderator.rules.engine import OPTIONS, RULESETS, Game
from moderator.store import gamefile, v3_log

FIXTURES = Path(__file__).parent / "fixtures" / "games"

# One event per kind with the sentence the engine wrote for it before format 4
# (moderator/rules/engine.py of pbem 0.3), written here by hand.
SAMPLES = {
    "set_up": (E.SetUp((("Ann", "Bob", "Cy"), "first-edition")),
               "Game set up: 3 players (Ann, Bob, Cy), ruleset first-edition."),
    "four_of_a_kind": (E.FourOfAKind(("KCC",)), "Four KCC shares face up: removed from the game and replaced."),
    "face_up": (E.FaceUp((("KCC", "UP", None, "BNL"),)), "Face-up shares: KCC, UP, -, BNL."),
    "initial_chosen": (E.InitialChosen(("Mary Ann",)), "Mary Ann has chosen an initial investment."),
    "passes": (E.Passes(("Bob",)), "Bob can neither build nor invest and passes."),
    "passes_discarding": (E.PassesDiscarding(("Bob", "black-white")),
                          "Bob can neither build nor invest and passes, discarding a black-white track card."),
    "initial_revealed": (E.InitialRevealed(((("Ann", "KCC"), ("Bob", "UP")),)),
                         "Initial investments revealed: Ann KCC, Bob UP."),
    "starts": (E.Starts(("Cy",)), "Cy starts."),
    "reshuffled": (E.Reshuffled((17,)), "The track deck was empty: the 17 discards were shuffled into a new deck."),
    "no_track_left": (E.NoTrackLeft(("Ann",)), "No track card is left for Ann to draw (deck and discards are empty)."),
    "dead_card": (E.DeadCard(("Ann", "white")), "Ann shows a dead white track card (every white space is full), "
                  "removes it from the game and draws a replacement."),
    "dividend_unused": (E.DividendUnused((3, 3)),
                        "The 3rd dividend card is drawn; it is not used (the game ends with dividend 3)."),
    "dividend_announced": (E.DividendAnnounced((2,)), "A dividend card is drawn: dividend 2 is announced."),
    "built": (E.Built(("Ann", "KCC", "DEN-KCY", "plain", 4)),
              "Ann built KCC on DEN-KCY (plain track); KCC is worth 4."),
    "built_joker": (E.BuiltJoker(("Ann", "WW", "BIL-SLC", "black", 3)),
                    "Ann built WW on BIL-SLC (joker as black track); WW is worth 3."),
    "took_face_up": (E.TookFaceUp(("Bob", "MS")), "Bob took the face-up MS share."),
    "place_empty": (E.PlaceEmpty(), "Its place stays empty: the stack holds no more share."),
    "replaced_by": (E.ReplacedBy(("ESL",)), "It is replaced by ESL."),
    "took_stack": (E.TookStack(("Bob",)), "Bob took the top share of the stack."),
    "stack_empty": (E.StackEmpty(), "The stack held no more share: nothing was drawn."),
    "took_up": (E.TookUp(("Bob",)), "Bob took a UP share."),
    "drew_none": (E.DrewNone(("Bob",)), "Bob could draw no share."),
    "swap_not_made": (E.SwapNotMade(("Bob",)), "The game is over: Bob's UP swap is not made."),
    "swapped_unseen": (E.SwappedUnseen(("Bob",)), "Bob returned a share to the box unseen and took a UP share."),
    "invested": (E.Invested(("Ann", ((2, "KCC"), (1, "UP")))), "Ann invested 2 KCC and 1 UP."),
    "invested_discarding": (E.InvestedDiscarding(("Ann", ((1, "BNL"),), "joker")),
                            "Ann invested 1 BNL and discarded a joker track card."),
    "double_dividend": (E.DoubleDividend((2,)), "Double dividend: 2 dividends are paid one after the other."),
    "several_dividends": (E.SeveralDividends((3,)),
                          "3 dividend cards in one draw: 3 dividends are paid one after the other."),
    "game_over": (E.GameOver((((1, "Ann", 42), (2, "Bob", 40), (2, "Cy", 40)),)),
                  "The game is over. 1. Ann 42, 2. Bob 40, 2. Cy 40"),
    "stalled": (E.Stalled(),
                "No company can build any more and nobody holds a share: the remaining dividends are paid now."),
    "imaginary_takes": (E.ImaginaryTakes((((2, "KCC"), (1, "UP")),)),
                        "The imaginary third player takes the display, the stack and the UP pile: 2 KCC, 1 UP."),
    "dividend_hidden": (E.DividendHidden((2,)), "Dividend 2 paid (amounts hidden: option hidden_money)."),
    "dividend_paid": (E.DividendPaid((1, (("Ann", 12), ("Bob", 0)))), "Dividend 1 paid: Ann +12, Bob +0 (millions)."),
}
PLAYERS = {"set_up": ["Ann", "Bob", "Cy"], "initial_revealed": ["Ann", "Bob"]}
"""The game's players, turn order, when the migration reads a sample (others: any)."""


def test_every_kind_has_a_sample_a_macro_and_an_old_pattern():
    assert set(E.KINDS) == set(SAMPLES) == names("events") == {kind for kind, _ in v3_log.PATTERNS}
    assert all(SAMPLES[k][0].kind == k for k in SAMPLES)


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_an_event_is_worded_in_english_as_pbem_always_wrote_it(kind):
    event, line = SAMPLES[kind]
    assert events.english([event]) == [line]
    assert E.from_data(E.to_data(event)) == event
    read = v3_log.read_line(line, PLAYERS.get(kind, ["Ann", "Bob", "Cy", "Mary Ann"]))
    assert list(read.items()) == list(E.to_data(event).items())  # the keys in the same order too


def test_events_are_values():
    a, b = E.Starts(("Ann",)), E.TookStack(("Ann",))
    assert a == E.Starts(("Ann",)) and a != b and tuple(a) == tuple(b) and hash(a) == hash(E.Starts(("Ann",)))
    assert a.player == "Ann" and a.audience is None and a.values() == {"player": "Ann"}
    assert repr(E.Built(("Ann", "KCC", "DEN-KCY", "plain", 4))) == \
        "Built(player='Ann', company='KCC', section='DEN-KCY', card='plain', value=4)"
    with pytest.raises(AttributeError):
        a.player = "Bob"  # type: ignore[misc]
    assert E.Built.of(player="Ann", company="KCC", section="DEN-KCY", card="plain", value=4) == \
        E.Built(("Ann", "KCC", "DEN-KCY", "plain", 4))
    for wrong in ({"player": "Ann", "share": "KCC"}, {}):
        with pytest.raises(TypeError):
            E.Starts.of(**wrong)
    for bad in ({"kind": "nope"}, {"kind": "starts"}, {"kind": "starts", "player": "Ann", "x": 1}, "starts"):
        with pytest.raises(ValueError):
            E.from_data(bad)  # type: ignore[arg-type]


def test_a_text_among_the_events_stays_as_it_is_and_an_old_line_is_not_read():
    with i18n.speaking("cs"):
        assert events.event_text("Something a game master said.") == "Something a game master said."
    assert v3_log.read_log(["Game set up: 2 players (Ann, Bob), ruleset first-edition.", "Something else."],
                           ["Ann", "Bob"]) is None
    assert v3_log.read_log(["Game set up: 2 players (Ann, Bob), ruleset first-edition."], ["Ann", "Cy"]) is None
    assert v3_log.read_log(["Zed starts."], ["Ann", "Bob"]) is None


def test_another_language_gets_the_catalogue_wording():
    """With a catalogue, an event comes out translated, the values in place and
    the track card type worded in that language."""
    from babel.messages.pofile import read_po

    catalog = read_po(i18n.catalogue_path("es").open("rb"))
    built = catalog.get("%(player)s built %(company)s on %(section)s (%(card)s track); %(company)s is worth %(value)s.")
    plain = catalog.get("plain", context="track card")
    assert built is not None and built.string and plain is not None and plain.string
    expected = built.string % {"player": "Ann", "company": "KCC", "section": "DEN-KCY",
                               "card": plain.string, "value": 4}
    with i18n.speaking("es"):
        assert events.event_text(E.Built(("Ann", "KCC", "DEN-KCY", "plain", 4))) == expected
    assert expected != SAMPLES["built"][1]


def _shown(value) -> list[str]:
    """The texts a wording of a value must show: names and numbers (a track card
    type is worded in the reader's language, None is an empty place)."""
    if isinstance(value, tuple):
        return [t for v in value for t in _shown(v)]
    if value is None or value in ("plain", "black", "white", "black-white", "joker"):
        return []
    return [str(value)]


def _random_game(seed: int, count: int, ruleset: str, options: dict[str, bool], board: str) -> Game:
    names_ = ["Ann", "Bob", "Cy Young", "Dee", "Eve", "Fay"][:count]
    g = Game.new(default_board() if board == "default" else mini_board(), names_, seed, ruleset, options)
    play_random(g, random.Random(seed))
    return g


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(2, 6), ruleset=st.sampled_from(RULESETS),
       options=st.fixed_dictionaries({k: st.booleans() for k in OPTIONS}),
       board=st.sampled_from(["default", "mini"]))
def test_every_event_of_random_games_is_worded_in_every_language(seed, count, ruleset, options, board):
    """Every event renders in every language with all its values present, and its
    English reads back (the migration's reading) to the same event."""
    g = _random_game(seed, count, ruleset, options, board)
    for language in i18n.LANGUAGES:
        with i18n.speaking(language):
            for e in g.events:
                text = events.event_text(e)
                assert text and "{{" not in text and "%(" not in text
                for value in e:
                    for shown in _shown(value):
                        assert shown in text, (language, e, text)
    assert v3_log.read_log(events.english(g.events), list(g.players)) == [E.to_data(e) for e in g.events]


def _frozen_games() -> list[Path]:
    return sorted(FIXTURES.glob("v*/*.yaml"))


@pytest.mark.parametrize("path", _frozen_games(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_migrated_events_of_a_frozen_game_are_those_its_replay_emits(path):
    """Every frozen file of every format: the migrated ``log`` (format 4: event
    mappings, read once from the old sentences) equals the events a replay of its
    history emits."""
    data = gamefile.migrate(yaml.safe_load(path.read_text()))
    replayed = gamefile.replay(data, gamefile.load_board_ref(data["board"]))
    if "log" in data:  # pbem 0.1 files have no log: the replay gives it
        assert data["log"] == [E.to_data(e) for e in replayed.events]
        assert gamefile.restore_game(data, gamefile.load_board_ref(data["board"])).events == replayed.events
    assert events.english(replayed.events)[0].startswith("Game set up: ")


def test_frozen_format_4_files_exist_for_every_earlier_folder():
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == ["v1", "v2", "v3", "v4", "v5", "v6", "v7"]
    for path in (FIXTURES / "v4").glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        assert data["format"] == 4 and all(isinstance(e, dict) and "kind" in e for e in data["log"])


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


def test_a_whole_log_reads_as_each_of_its_events_does():
    """``events_from_data`` (the trusted load's fast path) gives what
    ``from_data`` gives, and refuses what it refuses."""
    log = [E.to_data(e) for e, _ in SAMPLES.values()]
    assert E.events_from_data(log) == [E.from_data(d) for d in log] == [e for e, _ in SAMPLES.values()]
    for bad in ({"kind": "built", "player": "Ann"}, {"kind": "starts", "x": 1}, {"kind": "nope"}, ["starts"]):
        with pytest.raises(ValueError):
            E.events_from_data([log[0], bad])  # type: ignore[list-item]


def test_no_module_but_the_migration_holds_a_log_sentence():
    """No module reads a log sentence back (issue 25): the English of the events
    is only in templates/words/events.txt and, for the files of format 1-3, in
    the migration's patterns (moderator/store/v3_log.py)."""
    import ast

    fragments = ["has chosen an initial investment", "took the top share of the stack", "Face-up shares:",
                 " track); ", "dividends are paid one after the other", "shares face up: removed",
                 "returned a share to the box unseen", "discards were shuffled", "is announced",
                 "amounts hidden: option", "(millions)", "The game is over.", "track card (every",
                 "Initial investments revealed", "can neither build nor invest"]
    assert all(any(f in line for _, line in SAMPLES.values()) for f in fragments)
    found = []
    for path in (Path(__file__).parent.parent / "moderator").rglob("*.py"):
        if path.name != "v3_log.py":
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = {id(n.body[0].value) for n in ast.walk(tree)  # docstrings may tell of a sentence
                    if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body and
                    isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                    found += [(path.name, f) for f in fragments if f in node.value]
    assert found == []
