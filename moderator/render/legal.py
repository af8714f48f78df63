"""What is legal now, as the lines of a refusal's "What is legal now:" list and
the answer to the mail command ``legal``, in the language in force."""
from __future__ import annotations

from collections import Counter

from .orders import localize
from ..rules.actions import Invest
from ..rules.engine import Game
from ..rules.legal import LegalSummary
from . import build_groups, example_build
from .words import word


def legal_lines(game: Game, name: str, full: bool = False, summary: LegalSummary | None = None,
                first: str | None = None) -> list[str]:
    """The orders ``name`` may give now, or one line saying why they may give
    none: the game is over, their initial investment is made, or it is another
    player's turn.  From ``summary`` (``LegalSummary``: the one a refusal carries,
    ``IllegalAction.summary``; default the game's now), every kind of order:

    * the initial investments (``start KCC``, one line each);
    * the dead track cards that may be replaced first (option dead_track_redraw);
    * the builds: one complete line (a build and its draw, ``build KCC DEN-KCY
      white; take stack``), then one line per company (its sections and free space
      types, ``build_groups``), or with ``full`` (the ``legal`` command) every
      build line; then the draws; company ``first`` (the one a refused order
      named) first;
    * INVEST: the shares held (``2 KCC, MS``: one company or two), the track
      cards that may be discarded and an example of each kind (all the shares of
      the company most held; the first two companies);
    * the passes (rules: No legal action).

    Every order is shown with the canonical order words of the language in force
    (``moderator.render.orders.localize``), sentences through
    ``templates/words/legal.txt`` and ``notices.txt``: a ``list[str]`` to print as
    it is."""
    if game.phase == "over":
        return [word("notices", "legal_game_over")]
    if name not in game.waiting_for():
        if game.phase == "initial":
            return [word("notices", "legal_initial_done", waiting=game.waiting_for())]
        return [word("notices", "legal_not_your_turn", to_move=game.to_move)]
    s = game.legal_summary(name) if summary is None else summary
    out = [localize(text) for text in sorted({str(a) for a in s.starts})]
    if s.redraw:
        out.append(word("legal", "legal_redraw", redraws=[localize(f"redraw {c}") for c in s.redraw]))
    if s.builds:
        example = example_build(s, first)
        if example:
            out.append(word("layout", "legal_example", example=localize(example)))
        if full:
            out += [localize(str(b)) for b in s.build_actions(first)]
        else:
            out += [localize(g["text"]) for g in build_groups(s, first)]
        out.append(word("notices", "legal_takes", takes=[localize(str(t)) for t in s.takes]))
    if s.invest:
        held = Counter(game.share_hands[name])
        shares = [f"{held[k]} {k}" if held[k] > 1 else k for k in s.invest]
        discard = s.discards[0] if s.discards else None
        one = max(s.invest, key=lambda k: held[k])  # the most shares of one company
        examples = [str(Invest((one,) * held[one], discard))]
        if len(s.invest) > 1:
            examples.append(str(Invest(s.invest[:2], discard)))
        out.append(word("legal", "legal_invest", shares=shares, cards=[localize(c) for c in s.discards],
                        examples=[localize(e) for e in examples]))
    out += [localize(str(p)) for p in s.passes]
    return out
