"""Rulesets and rule options: one table for each, read by everything that names them.

The engine (``Game.new``), the flags of ``pbem new`` (``option_flag``), the rules mail
(``templates/rules.txt``) and the table in ``docs/rules.md`` (checked by
``tests/test_options.py``) all come from ``RULESET_TABLE`` and ``OPTION_TABLE``.  A
new option is one row here, its effect in the engine, and its paragraph in
``docs/rules.md``.

This module also holds the one validation of a game's players, ruleset and options
(``check_setup``), used by the engine and by game creation alike.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Iterable, Mapping


@dataclass(frozen=True)
class Ruleset:
    """A ruleset: ``name`` (as written in game files and ``--ruleset``), the company
    shares each player is dealt (``shares_dealt``), whether the UP share may be the
    initial investment (``up_may_start``), and ``summary``: the setup in one
    paragraph, as the rules mail gives it (rules: Setup, steps 4-7)."""

    name: str
    shares_dealt: int
    up_may_start: bool
    summary: str


@dataclass(frozen=True)
class Option:
    """A rule option: ``name`` (as in game files), ``default``, ``help`` (one line
    for ``pbem new --help`` and the rules mail) and ``rule``: the rule it changes."""

    name: str
    help: str
    rule: str
    default: bool = False

    @property
    def flag(self) -> str:
        """The ``pbem new`` flag: ``--spread-dividends`` for ``spread_dividends``."""
        return "--" + self.name.replace("_", "-")


RULESET_TABLE: tuple[Ruleset, ...] = (
    Ruleset(
        "first-edition", shares_dealt=4, up_may_start=True,
        summary="Each player is dealt 4 company shares and 1 UP share; the UP share may be the "
                "initial investment. Share stack: 6 shares, then 18 with 1 dividend card, then "
                "the rest with 3 dividend cards.",
    ),
    Ruleset(
        "second-edition", shares_dealt=5, up_may_start=False,
        summary="Each player is dealt 5 company shares and 1 UP share; the UP share may not be "
                "the initial investment. Share stack: 6, 18 with 1 dividend card, the rest with "
                "3 dividend cards, then 6 more at the bottom.",
    ),
)

OPTION_TABLE: tuple[Option, ...] = (
    Option("spread_dividends", "dividend cards spread evenly through the share stack",
           "rules: Setup, step 7 (the dividend card variant)"),
    Option("up_only_by_swap", "after a BUILD, UP shares come only by the swap",
           "rules: A turn, BUILD, step 3 (second-edition variant)"),
    Option("hidden_money", "other players' money is hidden until the end",
           "rules: What each player may know"),
    Option("dead_track_redraw", "a dead track card may be discarded and replaced",
           "rules: No legal action (the designer's later rule)"),
    Option("hints", "players may ask the built-in player for a suggestion (mail command hint)",
           "none: a service of the moderator, the engine ignores it"),
)

RULESETS: tuple[str, ...] = tuple(r.name for r in RULESET_TABLE)
"""Ruleset names, the first the default."""

DEFAULT_RULESET = RULESETS[0]

OPTIONS: dict[str, bool] = {o.name: o.default for o in OPTION_TABLE}
"""Option names and their defaults."""

OPTION_HELP: dict[str, str] = {o.name: o.help for o in OPTION_TABLE}
"""One line per option, for ``--help`` and the rules mail."""

IMAGINARY = "(imaginary player)"
"""Name of the imaginary third player of a two-player game (rules: Two players)."""

MIN_PLAYERS, MAX_PLAYERS = 2, 6
MAX_NAME_LENGTH = 40


def ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``; ValueError naming the choices for any other."""
    for r in RULESET_TABLE:
        if r.name == name:
            return r
    raise ValueError(f"unknown ruleset {name!r}; choose {' or '.join(RULESETS)}")


def check_setup(players: Iterable[str], ruleset_name: str,
                options: Mapping[str, object] | None = None) -> dict[str, bool]:
    """Validate a new game's player names (2-6, distinct ignoring case, not empty, at
    most 40 characters, no control characters, not the imaginary player's name), ruleset and options; return the options with every
    default filled in.  Raises ValueError with a sentence for the first problem
    (rules: Setup; Two players)."""
    names = list(players)
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise ValueError(f"Union Pacific is for {MIN_PLAYERS}-{MAX_PLAYERS} players, not {len(names)}")
    if any(not str(n).strip() for n in names):
        raise ValueError("a player needs a name")
    for n in names:
        if any(unicodedata.category(ch)[0] == "C" for ch in str(n)):
            raise ValueError(f"the player name {n!r} has control characters")
        if len(str(n)) > MAX_NAME_LENGTH:
            raise ValueError(f"the player name {n!r} is longer than {MAX_NAME_LENGTH} characters")
    if len({str(n).lower() for n in names}) != len(names):
        raise ValueError("two players have the same name")
    if IMAGINARY in names:
        raise ValueError(f"{IMAGINARY!r} is reserved for the imaginary third player")
    ruleset(ruleset_name)
    opts = dict(OPTIONS)
    for key, value in (options or {}).items():
        if key not in OPTIONS:
            raise ValueError(f"unknown option {key!r}; options are {', '.join(OPTIONS)}")
        opts[key] = bool(value)
    return opts
