"""The game log in the reader's language: events worded when someone reads them.

The rules engine emits events as values (``moderator.rules.events``: one class
per kind, ``Game.events``); game files keep them as mappings (format 4).  A
sentence is made only here: ``templates/words/events.txt`` has one macro per
kind, named as the kind, whose parameters are the event's fields, rendered in
the language in force (``moderator.i18n.speaking``).  English is the catalogue's
own text: the sentences pbem has always written, character for character
(``tests/test_events.py``, ``tests/test_engine_digest.py``).

No module reads a sentence back: the old sentences of game files of format 3 and
earlier are read once, by their migration (``moderator.store.gamefile``).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from .. import i18n
from ..rules.events import Event


@lru_cache(maxsize=8192)
def _worded(language: str, event: Event) -> str:
    from .words import word

    return word("events", event.kind, **event.values())


def event_text(event: Any) -> str:
    """The sentence of ``event`` (a ``moderator.rules.events.Event``) in the
    language in force, from ``templates/words/events.txt``.  A text (a notice
    already worded, e.g. a game master's line among a status mail's events) is
    returned as it is.  Used as the Jinja filter ``event``."""
    if isinstance(event, Event):
        return _worded(i18n.current(), event)
    return str(event)


def english(events: Iterable[Any]) -> list[str]:
    """The sentences of ``events`` in English (the operator's logs, ``pbem
    show``, the engine digest), whatever language is in force."""
    with i18n.speaking(i18n.DEFAULT):
        return [event_text(e) for e in events]
