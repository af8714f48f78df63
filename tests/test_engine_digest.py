"""Every seeded random game stays byte-for-byte the game it was: a digest of 300
whole games of random legal play, pinned from the engine before its speed work
(main of 1 December, third session, commit e64b650).

The digest covers, for every action: the player on move, the action drawn by
``random_action(player, rng)`` from ``random.Random(seed)`` (its order text and its
repr), the log lines ``push`` returned (the English rendering of the events it
returned, ``moderator.render.events.english``: the sentences the engine wrote
when the digest was pinned), and for every other game the
``legal_summary`` and ``action_count`` of the player on move; at the end of each
game: ``to_dict()`` (every saved field, secrets included), the whole log,
``public_view()``, every player's ``view`` and the state of the players'
generator (so the draws used exactly the same random numbers).  Games: 150 of 4
players on the default board (seeds 0-149, first edition, default options), then
150 drawn from ``random.Random(9)``: any seed, 2-6 players, both rulesets, every
option, the default and the mini board.

A change of the digest means that stored game files, their log sentences or the
demo's bots would play differently: never re-pin it for a speed change.
"""
from __future__ import annotations

import hashlib
import random

from game_helpers import default_board, mini_board
from moderator.render.events import english
from moderator.rules.engine import OPTIONS, RULESETS, Game

PINNED = "a28a8e84e1d8c4abecf8e4dead8dae7c178c91f1534584652586a9e25bda2dc3"
"""``digest(300)`` on main at commit e64b650."""


def cases(n: int) -> list[tuple[int, int, str, dict[str, bool], str]]:
    """``(seed, players, ruleset, options, board)`` of the ``n`` games."""
    out = []
    r = random.Random(9)
    for i in range(n):
        if i < n // 2:
            out.append((i, 4, "first-edition", {}, "default"))
        else:
            out.append((r.randrange(2**32), r.randint(2, 6), r.choice(RULESETS),
                        {k: r.random() < 0.5 for k in OPTIONS}, r.choice(["default", "mini"])))
    return out


def _worded(view: dict) -> dict:
    """``view`` with its ``log`` (events) as the English sentences that the digest
    pinned (issue 25: the engine emits events, the log a player reads is their
    rendering; the English one is the sentences of commit e64b650)."""
    return {**view, "log": english(view["log"])}


def digest(n: int) -> str:
    """The SHA-256 of ``n`` games (see the module)."""
    h = hashlib.sha256()
    for number, (seed, count, ruleset, options, board_name) in enumerate(cases(n)):
        board = default_board() if board_name == "default" else mini_board()
        names = [f"P{i + 1}" for i in range(count)]
        g = Game.new(board, names, seed, ruleset, options)
        rng = random.Random(seed)
        while g.phase != "over":
            player = g.waiting_for()[0]
            if number % 2:
                h.update(repr(g.legal_summary(player)).encode())
                h.update(str(g.action_count(player)).encode())
            action = g.random_action(player, rng)
            h.update(f"{player}|{action}|{action!r}".encode())
            h.update(repr(english(g.push(player, action))).encode())
        h.update(repr(g.to_dict()).encode())
        h.update(repr(english(g.events)).encode())
        h.update(repr(_worded(g.public_view())).encode())
        for p in names:
            h.update(repr(_worded(g.view(p))).encode())
        h.update(repr(rng.getstate()).encode())
    return h.hexdigest()


def test_seeded_random_games_are_unchanged():
    assert digest(300) == PINNED
