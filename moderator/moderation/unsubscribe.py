"""Unsubscribing by the List-Unsubscribe URIs of digests and pool offers
(issue 28; RFC 2369, RFC 8058; the headers: ``mail/unsubscribe.py``).

A mail to the moderator whose Subject (else a body line) says ``unsubscribe
TOKEN`` (what Gmail, Yahoo and Apple Mail send for a ``mailto`` URI; in the body
only a token of ours counts, so that a player's mail is not taken for one) is
carried out at once, without a confirmation round: the token is unguessable
(``Bookkeeping.unsubscribe_token``: 144 random bits) and only ever mailed to
its owner, so knowing it is the confirmation.  A ``digest`` token turns the
owner's person-level digest off (their held status mails go with this
cycle's mails), a ``pool`` token takes them out of the substitute pool
(``substitute off``).  The owner is answered once a day at most
(``Post.daily``), never when the mail was machine-sent (RFC 3834); a token
that is unknown changes nothing and its sender gets at most one answer a day
(and all such senders together ``UNKNOWN_PER_DAY``), which names no address.  ``pbem unsubscribe TOKEN`` (``admin.unsubscribe``)
does the same for the operator's one-click web hook.  Below ``cycle``; above
``digest``.
"""
from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Callable

from .. import i18n
from ..mail.read import OrderMail, canonical_address
from ..mail.unsubscribe import token_in
from ..render.words import word
from .digest import release
from .report import CycleReport
from .send import Post

log = logging.getLogger("pbem")

UNKNOWN_PER_DAY = 50
"""Answers to unknown tokens per UTC day, all senders together (a flood of
forged senders gets no more backscatter than this)."""


def apply_token(book: Any, spool: Any, token: str, now: datetime) -> tuple[str, str] | None:
    """Carry out List-Unsubscribe ``token``: ``(owner's address, kind)``, or
    None (an unknown token: nothing changed).  ``digest``: the person-level
    ``digest`` set to ``off`` and the held mails released (``digest.release``
    on ``spool``); ``pool``: out of the substitute pool, ``substitute`` off."""
    owner = book.unsubscribe_owner(token)
    if owner is None:
        return None
    address, kind = owner
    if kind == "digest":
        book.set_setting(address, "digest", "off", now)
        release(spool, address)
    elif kind == "pool":
        book.pool_leave(address)
        book.set_setting(address, "substitute", "off", now)
    return owner


def handle(om: OrderMail, key: str, post: Post, report: CycleReport, answered: Callable[[str], bool]) -> str | None:
    """Carry out ``om`` (the mail ``key``) when its Subject or body says
    ``unsubscribe TOKEN`` (``mail.unsubscribe.token_in``); returns
    ``"processed"``, or None for any other mail (and for one answered
    before: the caller records it as a duplicate)."""
    in_subject = token_in(om.subject or "")
    token = in_subject or token_in("", list(om.lines or [])[:5])
    if token is None or answered(key):
        return None
    bk, now = post.bk, post.clock()
    if in_subject is None and bk.unsubscribe_owner(token) is None:
        return None  # 'unsubscribe ...' in a body with no token of ours: an ordinary mail (an order, press)
    with bk.transaction():
        owner = apply_token(bk, post.spool, token, now)
        if owner is not None:
            address, kind = owner
            log.info("unsubscribe: a %s token was used; done without confirmation", kind)
            to, title, text = address, "unsubscribed_subject", f"unsubscribed_{kind}"
            counter = f"unsubscribe:{address}"
        else:
            to = canonical_address(om.sender) if om.sender else ""
            log.warning("unsubscribe: a mail named an unknown token; nothing changed")
            title, text, counter = "unsubscribe_unknown_subject", "unsubscribe_unknown", f"unsubscribe?:{to}"
        if not to or om.machine or not post.daily(counter, 1) or not post.allow(to, "unsubscribe") or (
                owner is None and not post.daily("unsubscribe?", UNKNOWN_PER_DAY)):
            bk.mark_answered(key, None, now)
        else:
            language = bk.setting(to, "language") or (bk.person(to) or {}).get("language") or i18n.DEFAULT
            with i18n.speaking(language if owner is not None else i18n.DEFAULT):
                subject = " ".join(word("person", title).split())
                body = word("person", text) + "\n"
            refs = [r for r in om.references if r]
            post.put(post.message(None, to, subject, body, in_reply_to=om.message_id, references=refs),
                     kind="unsubscribe", answers=key)
    report.commands += 1
    return "processed"
