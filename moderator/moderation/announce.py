"""Notices to everyone in a game (players and observers, each in their
language) and the game master's token: what the game master's commands
(``gm``) and the players' seat commands (``seats``) announce.  Below both.
"""
from __future__ import annotations

from datetime import datetime
from typing import Callable, Union

from .. import i18n
from ..mail.threads import thread_token
from ..render import render
from ..render.words import word
from ..store.gamefile import GameRecord, Player
from .deadlines import deadline_news
from .send import Post, ThreadOf, thread_of


def gm_token(record: GameRecord) -> str | None:
    """The token (``mail.threads.thread_token``) of the game master's secret for
    the Message-IDs of mails to them, so that their reply proves them as a
    player's does; None while they have no secret."""
    secret = record.game_master.get("secret")
    return thread_token(record.id, secret) if secret else None


Say = Union[str, Callable[[], str]]
"""A text for many recipients: the text itself, or what renders it in the
language in force (called once per recipient inside ``i18n.speaking`` of theirs)."""


def _said(text: Say) -> str:
    return text() if callable(text) else text


def _to_player(post: Post, record: GameRecord, player: Player, title: str, text: str,
               answers: str | None = None) -> None:
    """A notice to ``player`` in their thread (one Subject per game and player; the
    title is the text's first line), in the language in force, with the deadline
    event of their move (``calendar.mail_parts``: the command may have moved it;
    ``record.calendar`` is saved with the command)."""
    from .calendar import mail_parts

    thread = thread_of(record, player)
    text = word("language", "notice_heading", game_id=record.id, title=title) + "\n\n" + \
        text.partition("\n")[2].lstrip("\n")
    post.put(post.message(record.id, player.address, thread.subject, text, in_reply_to=thread.thread,
                          references=[thread.thread] if thread.thread else [], auto="auto-generated",
                          token=thread.token, calendar=mail_parts(post, record, player)),
             kind="gm", game=record.id, player=player.name, answers=answers)


def farewell(post: Post, record: GameRecord, address: str, thread: ThreadOf, language: str, title: Say,
             text: Say, calendar: list[tuple[str, str]]) -> None:
    """A last notice (its title and ``text``, no secret) to the player who
    held a seat until now, at ``address`` in their old ``thread`` (its Subject and
    Message-ID; no token, so a reply no longer counts as theirs), in their
    ``language``, carrying ``calendar`` (``calendar.mail_cancel``: the
    cancellation of their deadline event).  ``title``/``text``: ``Say``."""
    with i18n.speaking(language):
        body = word("language", "notice_heading", game_id=record.id, title=_said(title)) + "\n\n" + \
            _said(text) + "\n"
        post.put(post.message(record.id, address, thread.subject, body, in_reply_to=thread.thread,
                              references=[thread.thread] if thread.thread else [], auto="auto-generated",
                              calendar=calendar), kind="gm", game=record.id)


def tell_everyone(post: Post, record: GameRecord, title: Say, text: Say, *,
                  skip: tuple[str, ...] = (), resigned: bool = False,
                  before: dict[str, datetime | None] | None = None) -> int:
    """Spool a notice (``templates/gm_notice.txt``) to every player (not to those
    in ``skip``, nor, unless ``resigned``, to those who resigned; not to a seat
    without an address) and observer, each in their language (``title`` and
    ``text``: ``Say``, rendered for each).  ``before``: the deadlines in force
    before the command (``deadlines.in_force``): each reader is also told every
    deadline the command changed, their own as theirs, in their time zone
    (``deadlines.deadline_news``).  Returns how many mails were spooled."""
    def told(reader: Player | None) -> str:
        news = deadline_news(record, before, reader) if before is not None else ""
        return _said(text) + ("\n\n" + news if news else "")

    n = 0
    for p in record.players:
        if not p.address or p.name in skip or (p.name in record.resigned and not resigned):
            continue
        n += 1
        with i18n.speaking(record.language_of(p)):
            _to_player(post, record, p, _said(title), render("gm_notice.txt", game_id=record.id,
                                                             text=told(p), secret=p.secret))
    for address in record.observers:
        with i18n.speaking(record.language):
            subject = word("notices", "subject", game_id=record.id, title=_said(title))
            post.put(post.message(record.id, address, subject,
                                  render("gm_notice.txt", game_id=record.id, text=told(None), secret=None),
                                  auto="auto-generated"), kind="gm", game=record.id)
        n += 1
    return n
