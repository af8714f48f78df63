"""What is legal now, as the lines of a refusal's "What is legal now:" list."""
from __future__ import annotations

from ..rules.engine import Game
from . import legal_summary
from .words import word


def legal_lines(game: Game, name: str, full: bool = False) -> list[str]:
    """The orders ``name`` may give now (from ``legal_summary``), or one line
    saying why they may give none: the game is over, their initial investment is
    made, or it is another player's turn.  The builds: one complete line (a build
    and its draw, ``build KCC DEN-KCY white; take stack``), then one line per
    company (its sections and free space types, ``build_groups``), or with
    ``full`` (the ``legal`` command) every build line; then the draws."""
    if game.phase == "over":
        return [word("notices", "legal_game_over")]
    if name not in game.waiting_for():
        if game.phase == "initial":
            return [word("notices", "legal_initial_done", waiting=game.waiting_for())]
        return [word("notices", "legal_not_your_turn", to_move=game.to_move)]
    s = legal_summary(game, name)
    out = list(s["starts"])
    if s["builds"]:
        if s["example"]:
            out.append(word("layout", "legal_example", example=s["example"]))
        out += s["builds"] if full else [g["text"] for g in s["build_groups"]]
        out.append(word("notices", "legal_takes", takes=s["takes"]))
    if s["invest"]:
        out.append(word("notices", "legal_invest", shares=s["invest"]))
    out += s["pass"]
    return out
