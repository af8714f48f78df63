"""The players' languages: checking a language a game or a player is given
(``pbem new --language``, ``--player-language``) and the mail command ``language``.

A game has a language (``settings.language``); a player may have their own
(``Player.language``, None: the game's; ``GameRecord.language_of``).  Every mail
to one recipient is rendered inside ``moderator.i18n.speaking`` of theirs; the
words are ``templates/words/language.txt``.
"""
from __future__ import annotations

from .. import i18n
from ..render.words import word
from ..store.gamefile import GameRecord, GameStore, Player


def choices() -> list[tuple[str, str]]:
    """The languages pbem writes, ``[(code, its own name)]`` in the order they are
    listed to players (``i18n.LANGUAGES``)."""
    return list(i18n.LANGUAGES.items())


def check_language(tag: str) -> str:
    """The language code ``tag`` names (``i18n.normalize``: ``es``, ``ES``,
    ``es-MX``, ``Deutsch``, ``中文``; any case, accents or width: ``ＤＥ``,
    ``cestina``).  ValueError naming the five codes for
    anything else."""
    code = i18n.normalize(tag)
    if code is None:
        known = ", ".join(f"{c} ({n})" for c, n in choices())
        raise ValueError(f"unknown language {tag!r}: pbem writes {known}")
    return code


def nearest_languages(tag: str) -> list[str]:
    """The codes of the languages whose names or tags are nearest ``tag``
    (``names.nearest`` over ``i18n.names_of_languages``), closest first, each
    once: ``"Deutch"`` → ``["de"]``, ``"Espagnol"`` → ``["es"]``; ``[]`` when
    none is close."""
    from ..orders.names import nearest

    table = i18n.names_of_languages()
    return list(dict.fromkeys(table[n] for n in nearest(tag, list(table), n=5)))[:3]


def language_command(store: GameStore, record: GameRecord, player: Player, arg: str) -> str:
    """The mail command ``language`` (``arg`` empty: the answer names the
    language in force and lists the five) or ``language CODE`` (any tag
    ``check_language`` reads: ``player``'s language is set and the game file
    saved).  Returns the answer's text; the caller renders and sends it inside
    ``speaking(record.language_of(player))``, so that after a change it comes
    already in the new language.  An unknown code is refused, nothing changed."""
    arg = arg.strip()
    if arg:
        try:
            code = check_language(arg)
        except ValueError:
            return word("language", "language_unknown", asked=arg, choices=choices(), near=nearest_languages(arg))
        player.language = code
        store.save(record)
        with i18n.speaking(code):
            return word("language", "language_set", game_id=record.id, language=i18n.LANGUAGES[code])
    code = record.language_of(player)
    return word("language", "language_list", game_id=record.id, language=i18n.LANGUAGES[code], choices=choices())


def language_after(commands: tuple[str, ...] | list[str]) -> str | None:
    """The language code the mail commands ``commands`` (as the parser returns
    them, in English words: ``language Deutsch``) leave in force: that of the last
    ``language CODE`` whose code ``check_language`` reads, or None when none
    changes it.  Read before the status mail of an order in the same mail is
    built, so that it comes in the language the mail ends with."""
    found = None
    for cmd in commands:
        if cmd.startswith("language "):
            try:
                found = check_language(cmd[9:].strip())
            except ValueError:
                continue
    return found
