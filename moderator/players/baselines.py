"""The players the built-in player is measured against, on the engine directly.

``random_rule``: a uniformly random legal action (``Game.random_action``).

``demo_rule``: the choice rule of the demo's ``moderator.demo.Bot.decide`` with the
same probabilities, read from the engine instead of the status mail: the initial
investment at random among the ``start`` lines; a pass with the first discard line
when one is listed; else INVEST all the shares of the kind held most (the first in
alphabetical order among equals) when no BUILD is listed, or 3+ of it are held, or
6+ shares are held, or with probability 0.15, discarding a random track card (as
listed, duplicates included); else a random BUILD line (company, section, card: no
draw) with a random draw line; never a swap nor a redraw.  Where the mail bot would
send nothing (no line fits) a random legal action is played instead, so that a
benchmark game always ends.
"""
from __future__ import annotations

import random

from ..rules.actions import Action, Build, Invest, Pass
from ..rules.engine import Game
from ..rules.components import PlayerName


def random_rule(game: Game, player: PlayerName, rng: random.Random) -> Action:
    """A uniformly random legal action of ``player``."""
    action = game.random_action(player, rng)
    if action is None:
        raise ValueError(f"{player!r} has no move to make now")
    return action


def demo_rule(game: Game, player: PlayerName, rng: random.Random) -> Action:
    """The demo bot's choice (see the module), as a complete legal action."""
    summary = game.legal_summary(player)
    if not summary.on_move:
        raise ValueError(f"{player!r} has no move to make now")
    if summary.phase == "initial":
        starts = sorted(summary.starts, key=str)
        return rng.choice(starts)
    builds = summary.build_actions()
    takes = list(summary.takes)
    shares = sorted(game.share_hands[player])
    cards = sorted(game.track_hands[player])
    passes = [p for p in summary.passes if p.discard]
    if passes:
        return passes[0]
    counts = {s: shares.count(s) for s in set(shares)}
    best = max(sorted(counts), key=lambda s: counts[s]) if counts else None
    invest = best is not None and (
        not builds or counts[best] >= 3 or len(shares) >= 6 or rng.random() < 0.15
    )
    if invest and cards:
        n = counts[best]  # type: ignore[index]
        return game.resolve(player, Invest((best,) * n, rng.choice(cards)))  # type: ignore[operator]
    if builds and takes:
        b = rng.choice(builds)
        t = rng.choice(takes)
        return game.resolve(player, Build(b.company, b.section, b.card, b.space, t))
    return random_rule(game, player, rng)
