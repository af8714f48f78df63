"""Observers' mails and who receives the status mails.

Observers (``record.observers``, added by the game master's ``observe``) get
the public status mails (no hand, no secret; ``templates/observer.txt``) and
no orders are taken from them (``observer_mail``).  A player who resigned, or
who asked for ``digest on``, gets fewer status mails (``receives_status``,
``drop_unsent_status``).  Below ``notify`` (which sends both) and ``gm``.
"""
from __future__ import annotations

from email.message import EmailMessage
from email.utils import make_msgid

from .. import i18n
from ..render import MAP_HERE, render
from ..render.words import word
from ..rules.events import DividendHidden, DividendPaid
from ..store.gamefile import GameRecord, Player
from .send import Post


def receives_status(record: GameRecord, player: Player, events: list[str], waiting_before: set[str]) -> bool:
    """Whether ``player`` gets the status mail with ``events``: never after they
    resigned (but the end: the final result); with ``digest on`` only when it
    concerns them (their move, now or just before, a dividend, the end)."""
    over = record.game.phase == "over" or record.ended is not None
    if player.name in record.resigned:
        return over
    if player.name not in record.digest:
        return True
    waiting = set(record.game.waiting_for())
    return over or player.name in waiting or player.name in waiting_before or \
        any(isinstance(e, (DividendPaid, DividendHidden)) for e in events)


def drop_unsent_status(post: Post, record: GameRecord, name: str) -> int:
    """Remove from the spool the status mails to player ``name`` of ``record``'s
    game not yet sent (those whose sending is under way stay): a player who just
    resigned, or whose seat the game master gave to the built-in player, gets no
    status mail spooled earlier in the same cycle (``receives_status`` keeps
    later ones from them).  Once the game is over nothing is removed: the final
    result is theirs too.  Returns how many were removed; raises OSError as
    ``Spool.remove``."""
    from . import spooled

    if record.game.phase == "over" or record.ended is not None:
        return 0
    stale = spooled.view(post.spool).stale_status(record.id).get(name, [])
    for entry, _ in stale:
        post.spool.remove(entry)
    return len(stale)


def observer_mail(post: Post, record: GameRecord, address: str, events: list[str],
                  welcome: bool = False) -> EmailMessage:
    """The public status mail to observer ``address``: the position and the map as
    anybody may see them (``Game.public_view``; no hand, no secret) and ``events``
    (``templates/observer.txt``), in the game's language (``GameRecord.language``)."""
    with i18n.speaking(record.language):
        return _observer_mail(post, record, address, events, welcome)


def _observer_mail(post: Post, record: GameRecord, address: str, events: list[str],
                   welcome: bool) -> EmailMessage:
    from ..render.board_map import board_text, render_map
    from ..render import headline as _headline

    view = record.game.public_view()
    view_for_headline = {**view, "you": {"on_move": False}}
    ctx = {"game_id": record.id, "view": view, "you": None, "hand_after_choice": [], "events": list(events),
           "welcome": welcome, "notice": post.notice_text(), "map_here": MAP_HERE,
           "board_lines": board_text(record.game), "ended": record.ended,
           "bot_seats": [p.name for p in record.players if p.bot],
           "headline": word("gm", "ended_headline") if record.ended else _headline(view_for_headline)}
    text = render("observer.txt", **ctx)
    subject = word("notices", "subject", game_id=record.id,
                   title=word("gm", "observer_title", headline=ctx["headline"]))
    return post.message(record.id, address, subject, text, auto="auto-generated",
                        images=[(make_msgid(idstring=f"map.{record.id}", domain=post.domain)[1:-1],
                                 render_map(record.game, None), "Map of the board (public view)")])
