"""Orders with alternatives (``or``) and standing choices (``auto``), issue 30:
read in every language's order words, the first legal choice played against the
position when the order is applied, the status mail saying which was played, the
game file keeping the action played in the strict notation (and the text given),
a refusal naming each choice's reason when none is legal."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from moderator.orders.alternatives import MAX_ALTERNATIVES, AlternativesError, candidates, has_alternatives
from moderator.orders.parser import OrderError
from moderator.players.heuristic import choose
from moderator.rules.actions import Build, Invest, Take
from moderator.rules.board import Board
from moderator.rules.notation import parse_action
from test_deadlines import H, T0, Clocked, body, to

BOARD = Board.default()


@pytest.mark.parametrize("language,line", [
    ("en", "build KCC DEN-KCY plain; take KCC or ESL or stack"),
    ("en", "build KCC DEN-KCY plain, take KCC or take ESL or take stack"),
    ("es", "construir KCC DEN-KCY lisa; tomar KCC o ESL o pila"),
    ("de", "bauen KCC DEN-KCY einfach; nehmen KCC oder ESL oder Stapel"),
    ("cs", "postav KCC DEN-KCY obyčejná; vezmi KCC nebo ESL nebo balíček"),
    ("zh", "建造KCC DEN-KCY 无条纹；拿KCC或ESL或股票堆"),
])
def test_take_choices_in_every_language(language, line):
    assert candidates([line], BOARD, language) == [
        Build("KCC", "DEN-KCY", "plain", take=Take("display", "KCC")),
        Build("KCC", "DEN-KCY", "plain", take=Take("display", "ESL")),
        Build("KCC", "DEN-KCY", "plain", take=Take("stack")),
    ]


def test_choices_of_two_parts_are_their_product_in_the_order_written():
    assert candidates(["invest KCC or DM; discard plain or white"], BOARD, "en") == [
        Invest(("KCC",), "plain"), Invest(("KCC",), "white"), Invest(("DM",), "plain"), Invest(("DM",), "white")]
    assert candidates(["invertir KCC o DM; descartar lisa o blanca"], BOARD, "es") == [
        Invest(("KCC",), "plain"), Invest(("KCC",), "white"), Invest(("DM",), "plain"), Invest(("DM",), "white")]


def test_or_before_another_kind_of_turn_starts_a_whole_other_turn():
    assert [str(a) for a in candidates(
        ["build KCC DEN-KCY plain; take stack or build DM DEN-OMA black; take stack"], BOARD, "en")] == [
        "build KCC DEN-KCY plain; take stack", "build DM DEN-OMA black; take stack"]
    # over two lines; and a pass as the last resort
    assert [str(a) for a in candidates(["invest KCC or DM; discard plain", "or pass; discard plain"],
                                       BOARD, "en")] == [
        "invest KCC; discard plain", "invest DM; discard plain", "pass; discard plain"]


def test_or_with_nothing_on_one_side_and_too_many_choices_are_refused():
    for text in ("take KCC or", "build KCC DEN-KCY plain; take KCC or or stack", "or pass"):
        with pytest.raises(AlternativesError) as e:
            candidates([text], BOARD, "en")
        assert e.value.code == "or_empty"
        assert "nothing on one side of an 'or'" in e.value.reason
    many = "invest KCC or DM or WW or ESL or MRR; discard plain or white or black or black-white or joker"
    with pytest.raises(AlternativesError) as e:
        candidates([many], BOARD, "en")
    assert (e.value.code, e.value.values) == ("too_many_alternatives", {"count": 25, "most": MAX_ALTERNATIVES})
    # a choice that cannot be read is refused with the parser's reason, never skipped
    with pytest.raises(OrderError) as e:
        candidates(["build KCC DEN-KCY plain; take KCC or XYZ"], BOARD, "en")
    assert e.value.code == "take_not_a_company"


def test_words_holding_or_are_no_alternatives():
    assert not has_alternatives(["build KCC POR-SEA plain; take stack"], "en")
    assert not has_alternatives(["Ordering now: invest KCC"], "en")
    assert has_alternatives(["take KCC OR stack"], "en")
    assert has_alternatives(["tomar KCC o pila"], "es")
    assert not has_alternatives(["tomar KCC o pila"], "de")  # Spanish 'o' is no German word


def started(tmp_path, **kw):
    c = Clocked(tmp_path, **kw)
    for name in ("Ann", "Bob", "Cy"):
        c.move(name)
    c.run(T0 + H)
    c.sent()
    return c


def test_mail_order_plays_its_first_legal_choice_and_the_status_mail_says_which(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    who = rec.game.to_move
    good = choose(rec.game, who, random.Random(4))
    held = set(rec.game.share_hands[who])
    missing = next(s for s in ("KCC", "DM", "WW", "ESL", "MRR", "SFP", "UMR") if s not in held)
    text = f"invest {missing}; discard plain or {good}"
    c.mail(who, text)
    c.run(T0 + 2 * H)
    rec = c.load(check=True)
    entry = rec.history[-1]
    assert entry["player"] == who and entry["order"] == str(rec.game.history[-1][1])
    assert parse_action(entry["order"]) == rec.game.history[-1][1]
    assert entry["alternatives"] == text and "queued" not in entry
    mails = c.sent()
    (status,) = to(mails, c.addr[who])
    said = " ".join(body(status).split())
    assert f"Of your order '{text}', this was played: " in said
    assert f"Not invest {missing}; discard plain: " in said
    # the others' mails name the move played (public), never the choices
    for name in ("Ann", "Bob", "Cy"):
        if name != who:
            for m in to(mails, c.addr[name]):
                assert f"invest {missing}; discard plain or" not in body(m)


def test_no_legal_choice_is_refused_with_each_reason_and_nothing_changes(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    who = rec.game.to_move
    held = set(rec.game.share_hands[who])
    missing = [s for s in ("KCC", "DM", "WW", "ESL", "MRR", "SFP", "UMR") if s not in held][:2]
    before = c.load().history
    c.mail(who, f"invest {missing[0]} or {missing[1]}; discard plain")
    c.run(T0 + 2 * H)
    assert c.load().history == before
    (reply,) = to(c.sent(), c.addr[who])
    said = " ".join(body(reply).split())
    assert "None of the choices of your order is legal now." in said
    assert f"Not invest {missing[0]}; discard plain: " in said
    assert f"Not invest {missing[1]}; discard plain: " in said


def test_not_your_turn_with_choices_is_the_one_refusal(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    other = next(n for n in ("Ann", "Bob", "Cy") if n != rec.game.to_move)
    c.mail(other, "invest KCC or DM; discard plain")
    c.run(T0 + 2 * H)
    (reply,) = to(c.sent(), c.addr[other])
    said = " ".join(body(reply).split())
    assert f"it is not your turn; it is {rec.game.to_move}'s turn" in said
    assert "None of the choices" not in said


def test_standing_take_fills_a_build_without_a_take(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    who = rec.game.to_move
    c.mail(who, "auto take stack")
    c.run(T0 + 2 * H)
    (answer,) = to(c.sent(), c.addr[who])
    assert "Your standing choices are now: take stack." in " ".join(body(answer).split())
    assert c.load().standing == {who: ["take stack"]}
    rec = c.load()
    build = next(a for a in rec.game.legal_actions(who) if isinstance(a, Build) and a.take == Take("stack")
                 and a.swap is None)
    written = f"build {build.company} {build.section} {build.card}"  # no take
    c.mail(who, written)
    c.run(T0 + 3 * H)
    rec = c.load(check=True)
    assert rec.history[-1]["player"] == who
    assert parse_action(rec.history[-1]["order"]).take == Take("stack")
    assert rec.history[-1]["alternatives"] == written
    c.mail(who, "auto?")
    c.run(T0 + 4 * H)
    (answer,) = [m for m in to(c.sent(), c.addr[who]) if "standing" in body(m)]
    assert "Your standing choices: take stack." in body(answer)
    c.mail(who, "auto off")
    c.run(T0 + 5 * H)
    assert c.load().standing == {}


def test_standing_choice_that_is_no_take_or_discard_is_refused(tmp_path):
    c = started(tmp_path)
    who = c.load().game.to_move
    c.mail(who, "auto build KCC")
    c.run(T0 + 2 * H)
    (answer,) = to(c.sent(), c.addr[who])
    assert "a standing choice is a take or a discard" in " ".join(body(answer).split())
    assert c.load().standing == {}


def test_spanish_player_reads_the_choice_played_in_spanish(tmp_path):
    c = Clocked(tmp_path, settings={"language": "es"})
    for name in ("Ann", "Bob", "Cy"):
        c.move(name)
    c.run(T0 + H)
    c.sent()
    rec = c.load()
    who = rec.game.to_move
    held = set(rec.game.share_hands[who])
    missing = next(s for s in ("KCC", "DM", "WW", "ESL", "MRR", "SFP", "UMR") if s not in held)
    good = choose(rec.game, who, random.Random(4))
    from moderator.orders.lexicon import format_action

    text = f"invertir {missing}; descartar lisa o {format_action(good, 'es')}"
    c.mail(who, text)
    c.run(T0 + 2 * H)
    rec = c.load(check=True)
    assert rec.history[-1]["player"] == who and rec.history[-1]["alternatives"] == text
    (status,) = to(c.sent(), c.addr[who])
    assert f"De tu orden '{text}' se ha jugado esto: " in " ".join(body(status).split())


def test_or_in_prose_beside_an_order_is_no_choice():
    lines = ["build KCC DEN-KCY plain", "take stack", "Let me know if this works or not."]
    assert candidates(lines, BOARD, "en") == [Build("KCC", "DEN-KCY", "plain", take=Take("stack"))]


OR = {"en": "or", "es": "o", "de": "oder", "cs": "nebo", "zh": "或"}


def _position(seed: int, moves: int):
    from moderator.rules.engine import Game

    rng = random.Random(seed)
    game = Game.new(BOARD, ["Ann", "Bob", "Cy"], seed, "first-edition", {})
    for _ in range(moves):
        if game.phase == "over":
            break
        who = game.waiting_for()[0]
        game.push(who, game.random_action(who, rng))
    return game, rng


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), moves=st.integers(0, 60), language=st.sampled_from(sorted(OR)))
def test_any_two_legal_turns_joined_by_or_are_read_as_those_two(seed, moves, language):
    """``A or B`` of two whole legal turns, written in any language's words
    (``format_action``), is read as [A, B]; the first legal one is A."""
    from moderator.orders.lexicon import format_action

    game, rng = _position(seed, moves)
    if game.phase == "over":
        return
    who = game.waiting_for()[0]
    a, b = game.random_action(who, rng), game.random_action(who, rng)
    line = f"{format_action(a, language)} {OR[language]} {format_action(b, language)}"
    got = candidates([line], BOARD, language)
    assert got == ([a] if a == b else [a, b]), line


def test_standing_choices_are_shown_in_the_players_words(tmp_path):
    """`auto tomar pila` is answered with the choice as Spanish writes it, not the
    notation's English (a new user's check: "Tus elecciones fijas son ahora: take stack")."""
    c = Clocked(tmp_path, settings={"language": "es"})
    c.sent()
    c.mail("Ann", "auto tomar pila")
    c.run(T0 + H)
    (answer,) = to(c.sent(), c.addr["Ann"])
    text = " ".join(body(answer).split())
    assert c.load().standing == {"Ann": ["take stack"]}
    assert "tomar pila" in text and "take stack" not in text
