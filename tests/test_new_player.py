"""What a new player found contradictory or missing (issue 11), each through the
real moderator: real order mails into a Maildir, real cycles, the mails it sent."""
from __future__ import annotations

import re
import shutil
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from moderator.orders.parser import parse_turn
from moderator.render import build_groups, example_build
from moderator.rules.legal import LegalSummary
from moderator.store.gamefile import GameStore
from moderator.render.events import english
from test_status_map import PLAYERS, Table, start_all

FIXTURES = Path(__file__).parent / "fixtures" / "games" / "v1"


def html_of(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("html",)).get_content()


def text_of(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def test_two_player_game_over_does_not_show_what_the_imaginary_player_took(tmp_path):
    """The imaginary third player took the display, the stack and the UP pile
    (the log says so): the game-over mail says so and no longer lists them."""
    t = Table(tmp_path)
    shutil.copy(FIXTURES / "v1-two-player.yaml", t.config.games_dir / "v1-two-player.yaml")
    rec = GameStore(t.config.games_dir).load("v1-two-player")
    assert rec.game.phase == "over" and any("imaginary third player takes" in e for e in english(rec.game.events))
    assert rec.game.display and rec.game.stack  # still in the state: the engine keeps them
    t.sent()
    msg = EmailMessage(policy=policy.default)
    msg["From"] = "ann@example.org"
    msg["To"] = t.config.moderator_address
    msg["Subject"] = f"Re: [pbem:v1-two-player:{rec.player_by_name('Ann').secret}] Union Pacific"
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg.set_content("status\n")
    t.inbox.add(msg.as_bytes())
    t.mod.run_cycle()
    (status,) = t.sent()
    text = text_of(status)
    assert "THE GAME IS OVER." in text
    assert ("The imaginary third player took the face-up display, the share stack and\n"
            "  the UP pile (see WHAT HAPPENED).") in text
    assert "Face-up display:" not in text and "Share stack:" not in text and "UP pile:" not in text
    html = html_of(status)
    assert "The imaginary third player took the face-up display" in html
    assert "Face-up display:" not in html and "Share stack:" not in html


def test_second_edition_order_guide_does_not_offer_start_up(tmp_path):
    t = Table(tmp_path)
    t.mod.create_game("second", PLAYERS, seed=3, ruleset="second-edition")
    welcomes = [m for m in t.sent() if "second" in str(m["Subject"])]
    assert len(welcomes) == 3
    for m in welcomes:
        text = text_of(m)
        assert "start UP" not in text
        assert "start KCC      (in this game's ruleset the UP share may not be the" in text
    # the first edition keeps its example, and the UP share may start there
    first = t.load()
    assert first.game.ruleset == "first-edition"
    t.order("Ann", "help")
    t.mod.run_cycle()
    (guide,) = t.sent()
    assert "\n      start UP\n" in text_of(guide)


def test_welcome_gives_the_moderators_address(tmp_path):
    t = Table(tmp_path)
    welcomes = t.sent()
    assert len(welcomes) == 3
    address = t.config.moderator_address
    for m in welcomes:
        assert (f"The moderator's address (for a new mail instead of a reply): {address}\n"
                in text_of(m))
        assert f'<a href="mailto:{address}">{address}</a>' in html_of(m)


def test_build_without_a_take_is_answered_with_complete_lines(tmp_path):
    """``build …`` without a draw is refused with complete lines (``build …;
    take stack``), and the refusal's list of what is legal suggests complete
    lines too, not ``take stack`` alone (which is no order)."""
    t = Table(tmp_path)
    start_all(t)
    rec = t.load()
    mover = rec.game.to_move
    summary = rec.game.legal_summary(mover)
    build = summary.build_actions()[0]
    t.order(mover, str(build))
    t.mod.run_cycle()
    (refusal,) = t.sent()
    text = text_of(refusal)
    takes = [str(x) for x in summary.takes]
    assert "take stack" in takes
    lines = [line.strip() for line in text.splitlines()]
    for take in takes:
        assert f"{build}; {take}" in lines  # a complete line for every draw
        assert take not in lines  # and never the draw alone
    # every suggested line is one order the parser reads as a complete build
    complete = [line for line in lines if line.startswith(f"{build}; take ")]
    assert len(complete) == len(takes)
    for line in complete:
        action = parse_turn([line], rec.game.board)
        assert action.take is not None and str(action) == line
    # the draw alone is refused, and its list starts with one complete line
    t.order(mover, "take stack")
    t.mod.run_cycle()
    (again,) = t.sent()
    text = text_of(again)
    example = example_build(summary)
    assert example == f"{build}; take stack"
    assert f"  {example}   (a build and its draw on ONE line)\n" in text
    assert "after a build, on the same line, one of: " + " | ".join(takes) in text
    assert t.load().game.to_dict() == rec.game.to_dict()  # nothing changed


def test_build_groups_are_one_line_per_company():
    from moderator.rules.engine import Game
    from game_helpers import default_board

    g = Game.new(default_board(), ["Ann", "Bob", "Cy"], 7)
    for p in ["Ann", "Bob", "Cy"]:
        g.push(p, g.legal_summary(p).starts[0])
    s = g.legal_summary(g.to_move)
    groups = build_groups(s)
    assert [x["company"] for x in groups] == list(s.builds)
    for entry in groups:
        company = entry["company"]
        # the line names every section and type of the summary, once
        expanded = {(sid, t if not t.startswith("joker as ") else t[len("joker as "):])
                    for grp in entry["groups"] for sid in grp["sections"] for t in grp["types"]}
        assert expanded == {(sid, t) for sid, fits in s.builds[company].items() for t, _ in fits}
        assert entry["text"].startswith(f"{company}: ")
        sections = re.findall(r"[A-Z]{3}-[A-Z]{3}", entry["text"])
        assert sorted(sections) == sorted(s.builds[company])  # each section once


def test_legal_summary_example_is_complete():
    s = LegalSummary("Ann", "play", True)
    assert example_build(s) == ""
