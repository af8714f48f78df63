"""Orders as the reader's language writes them (the Jinja filter ``order``):
the game's notation (``str(action)``) through the order words of
``moderator.orders.lexicon``, and the hidden forms of ``public_order`` worded
by ``templates/words/hidden.txt``.  In ``render/`` because it words through the
templates: ``orders/`` imports nothing of ``render/``.
"""
from __future__ import annotations

import functools
import re

from ..i18n import DEFAULT, speaking
from ..orders.lexicon import CANONICAL, canonical, format_action, language_of
from .words import word


_ORDER_WORDS = ("build", "take", "swap", "invest", "discard", "pass", "start", "redraw", "stack",
                "display", "drawn", "plain", "black", "white", "black-white", "joker", "as")


def localize(order: str, language: str | None = None) -> str:
    """An order written in the game's notation (``str(action)``, the English the
    moderator lists and keeps: ``build KCC DEN-KCY white; take stack``) as
    ``language`` writes it (default: the language in force), for the lists of
    legal orders and the history a player reads: through :func:`format_action`
    where the text is one whole action, else word by word (``redraw white``,
    ``take stack``, ``KCC: DEN-KCY (white)``): the order words to the canonical ones; company
    abbreviations, sections and anything else as they are.  ``order`` itself in
    English.  Never raises."""
    lang = language_of(language)
    if lang == DEFAULT or lang not in CANONICAL:
        return order
    order = str(order)
    if order == SECRET_START:
        return _hidden("secret_start", lang, start=canonical("start", lang))
    pieces = order.split(HIDDEN_SWAP)
    text = _localized(pieces[0], lang) if pieces[0] else ""
    for piece in pieces[1:]:
        text += "; " + _hidden("hidden_swap", lang, swap=canonical("swap", lang))
        text += "; " + _localized(piece[2:], lang) if piece.startswith("; ") else piece
    return text


SECRET_START = "start (secret initial investment)"
"""``rules.notation.public_order``'s initial investment while it is secret."""


HIDDEN_SWAP = "; swap (a share) for UP"
"""``rules.notation.public_order``'s swap clause whose returned share is secret."""


def _hidden(name: str, lang: str, **values: str) -> str:
    """A hidden form of ``public_order`` in ``lang``: the macro ``name`` of
    ``templates/words/hidden.txt`` (not cached: the catalogue may change)."""
    with speaking(lang):
        return word("hidden", name, **values)


@functools.lru_cache(maxsize=8192)
def _localized(order: str, lang: str) -> str:
    from ..rules.notation import NotationError, parse_action

    try:
        return format_action(parse_action(order), lang)
    except (NotationError, ValueError, TypeError):
        pass
    text = re.sub(r"\btake none\b", canonical("take none", lang), order)
    return _ENGLISH_WORD.sub(lambda m: canonical(m.group(), lang) if m.group() in _ORDER_WORDS else m.group(),
                             text)


_ENGLISH_WORD = re.compile(r"(?<![\w-])[a-z]+(?:-[a-z]+)*(?![\w-])")
"""A lower-case word of the notation (``black-white`` whole); company abbreviations
and section ids are upper case and never match."""
