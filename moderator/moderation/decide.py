"""Decide what to do with one mail: a ``Verdict`` (see ``verdict.py``).

The stages in order, each a function of values (the lookups it needs are passed
in as functions, so that a test can decide a mail without a store or a spool):

``screen``
    before routing: a mail answered already (``Duplicate``), machine mail (RFC
    3834; a delivery-status report, RFC 3464: ``RecordBounce``), a mail without
    sender, too large or unreadable (answered only when the sender plays).
``no_game``
    a mail routed to no existing game (answered only when the sender plays).
``in_game``
    authenticate (``authenticate.py``), interpret (``interpret.py``), then: the
    order applied already (``Duplicate``), an order to ``Apply`` or ``Refuse``
    (checked with ``Game.resolve``: the rules engine refuses with a named
    ``IllegalAction``), commands to ``Answer``, or nothing found (``Refuse``).
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Callable, Sequence

from ..mail.read import OrderMail, canonical_address, subject_text
from ..rules.engine import IllegalAction
from ..store.gamefile import GameRecord, Player
from .authenticate import authenticate
from .route import referenced_game
from ..orders.parser import OrderError, command, parse_turn
from .interpret import MAX_ORDER_LINES, Orders, interpret, looks_like_order
from ..mail.threads import carries_token
from .route import same_secret
from .verdict import (ALREADY_APPLIED, ANSWERED, Answer, Apply, Decline, Duplicate, Ignore, Manage,
                      RecordBounce, Refuse, Relay, Verdict)
from .. import i18n

Lookup = Callable[[str], bool]
"""``answered(key)``: was the mail (part) ``key`` answered; ``plays(address)``:
is ``address`` a registered player of some game."""


def screen(om: OrderMail, key: str, *, max_size: int, answered: Lookup, plays: Lookup) -> Verdict | None:
    """The verdict on mail ``om`` (mail id ``key``) before routing, or None when it
    is a person's readable mail to route."""
    if answered(key):
        return Duplicate(key=key, reason=ANSWERED)
    if om.machine:
        notice = getattr(om, "bounce_notice", None)
        if om.bounce or (notice is not None and notice.ours):
            if notice is None:
                return RecordBounce(key=key, address=om.bounce, sender=om.sender)
            return RecordBounce(key=key, address=om.bounce or "", sender=om.sender, ours=notice.ours,
                                recipients=notice.recipients, game_id=notice.games[0] if notice.games else None,
                                status=notice.status, form=notice.form)
        return Ignore(key=key, reason="machine_mail", sender=om.sender, detail=om.machine)
    if not om.sender:
        return Ignore(key=key, reason="no_sender")
    if (om.oversize or om.error) and not plays(om.sender):
        return Ignore(key=key, reason="stranger_unreadable", sender=om.sender)
    if om.oversize:
        return Refuse(key=key, reason="mail_too_large", to=om.sender, game_id=om.game_id or referenced_game(om),
                      values={"size": om.size, "max_size": max_size}, words="limits")
    if om.error:
        return Refuse(key=key, reason="mail_unreadable", to=om.sender, game_id=om.game_id or referenced_game(om),
                      values={"error": om.error})
    return None


def once(v: Verdict, *, answered: Lookup) -> Verdict:
    """``v``, unless it answers an unauthenticated sender who was answered for this
    mail before (its ``reply_key``): then a ``Duplicate`` (a refusal) or the
    ``Ignore`` without its warning.  Such answers are kept apart from the
    duplicate record (``verdict.UNAUTHENTICATED``)."""
    if isinstance(v, Refuse) and not v.authenticated and answered(v.reply_key):
        return Duplicate(key=v.key, reason=ANSWERED)
    if isinstance(v, Ignore) and v.warn and answered(v.reply_key):
        return replace(v, warn=None)
    return v


def no_game(om: OrderMail, key: str, game_id: str | None, *, plays: Lookup,
            games: Sequence[str] = ()) -> Verdict:
    """The verdict on a mail for ``game_id`` that does not exist (None: the game
    could not be told): a player is told how to name the game and which running
    ``games`` they play in (ids, from the games index), a stranger is not
    answered."""
    if not plays(om.sender):
        return Ignore(key=key, reason="stranger_no_game", sender=om.sender, game_id=game_id)
    return Refuse(key=key, reason="unknown_game", to=om.sender, game_id=game_id,
                  values={"game_id": game_id, "games": list(games)})


def in_game(om: OrderMail, key: str, record: GameRecord, *, answered: Lookup,
            gm_address: str | None = None, arrived: datetime | None = None) -> Verdict:
    """``_in_game`` of the mail's lines above its press (``press.split_press``: the
    messages ``to NAME:`` / ``to all:``, or the reply to a relayed message): the
    verdict of those lines, carrying the messages (``Verdict.press``) when it
    answers the authenticated player they are from (also once the game master
    ended the game: its orders are declined, its messages relayed); a mail of
    messages only is ``Relay``-ed.  Messages relayed before (an interrupted
    cycle) are not kept."""
    from . import press

    seat = record.player_by_address(om.sender) if om.sender and not om.machine else None
    split = None
    if seat is not None and len(om.lines) <= MAX_ORDER_LINES:
        language = record.language_of(seat)
        replied = press.replied_seat(om, record, seat.name)

        from .advance import advance_command
        from .ballot import proposal_command
        from .seats import seat_command

        def orders_above(lines: list[str]) -> bool:
            # a reply to a relayed message that holds an order or any command (a vote,
            # `next:`, `resign`) is that, not a message back
            return any(command(l) or seat_command(l) or proposal_command(l) or advance_command(l)
                       or looks_like_order(l, record.game.board) for l in lines)

        with i18n.speaking(language):
            split = press.split_press(om, [p.name for p in record.players], language, replied, orders_above)
    if split is None:
        return _in_game(om, key, record, answered=answered, gm_address=gm_address, arrived=arrived)
    v = _in_game(replace(om, lines=list(split.lines), kinds=list(split.kinds)), key, record,
                 answered=answered, gm_address=gm_address, arrived=arrived)
    ended = isinstance(v, Decline) and v.reason == "game_ended_no_orders"  # press after the end: "gg"
    if getattr(v, "player", None) != seat.name or (isinstance(v, Decline) and not ended):
        return v
    already = press.done(record, key)
    if (ended or isinstance(v, Refuse) and v.reason in ("no_orders_found", "body_empty", "order_in_subject")) \
            and not split.lines:
        if already:  # a mail of messages only, relayed in an interrupted cycle: nothing is left to do
            return Duplicate(key=key, reason=ALREADY_APPLIED, game_id=record.id, player=seat.name)
        return Relay(key=key, game_id=record.id, player=seat.name, press=split)
    return v if already else replace(v, press=split)


def _in_game(om: OrderMail, key: str, record: GameRecord, *, answered: Lookup,
             gm_address: str | None = None, arrived: datetime | None = None) -> Verdict:
    """The verdict on mail ``om`` (mail id ``key``) to ``record``'s game.
    ``gm_address``: the game master's (``gm.game_master_address``): their mail
    with their secret is ``Manage``-d; an observer's mail is ``Decline``-d.
    ``arrived``: when the mail reached the mailbox (UTC; None: not known): an
    order that came after the built-in player moved for its deadline is
    refused as ``order_late`` (``deadlines.late``), and an applied one keeps
    it (``Apply.arrived``, the history's ``arrived``)."""
    from .gm import looks_like_gm, seat_command

    sender = canonical_address(om.sender)
    if gm_address and sender == gm_address:
        secret = record.game_master.get("secret")
        if same_secret(secret, om.secret) or (secret and carries_token(om.thread_refs,
                                                                      record.id, secret)):
            return Manage(key=key, game_id=record.id, by=sender)
        if record.player_by_address(om.sender) is None:
            return Decline(key=key, reason="gm_secret_wrong", to=sender, game_id=record.id)
    if record.player_by_address(om.sender) is None and sender in {canonical_address(a) for a in record.observers}:
        return Decline(key=key, reason="observer_no_orders", to=sender, game_id=record.id)
    who = authenticate(om, key, record)
    if isinstance(who, Player):
        if (record.ended is not None or who.name in record.resigned) and _asks_me(om):
            # 'me' is the person's, across their games: answered from a game that ended or a
            # seat resigned too, not declined as an order (a breaker's check)
            if answered(key + "#commands"):
                return Answer(key=key, game_id=record.id, player=who.name, repeat_commands=True)
            return Answer(key=key, game_id=record.id, player=who.name, commands=("me",))
        if record.ended is not None:
            return Decline(key=key, reason="game_ended_no_orders", to=who.address, game_id=record.id,
                           player=who.name)
        if who.name in record.resigned:
            return Decline(key=key, reason="resigned_no_orders", to=who.address, game_id=record.id,
                           player=who.name)
        if len(om.lines) > MAX_ORDER_LINES:  # refused unread: the work per mail is bounded
            return Refuse(key=key, reason="too_many_lines", to=who.address, game_id=record.id, player=who.name,
                          values={"lines": len(om.lines), "max_lines": MAX_ORDER_LINES}, words="limits")
        if any(looks_like_gm(l) and not seat_command(l) and not command(l) for l in om.lines):
            return Decline(key=key, reason="gm_only", to=who.address, game_id=record.id, player=who.name)
    if isinstance(who, Refuse) and not any(command(l) or looks_like_order(l, record.game.board)
                                           for l in om.lines[:MAX_ORDER_LINES]):
        # no order and no command (a vacation responder that drops the tag): limited per day
        return replace(who, orderless=True)
    if not isinstance(who, Player):
        return who
    asked = interpret(om.lines, record.game.board, om.kinds)
    commands, repeat = asked.commands, False
    if commands and answered(key + "#commands"):
        commands, repeat = (), True
    if record.has_message(key):
        # applied in an earlier, interrupted cycle: only unanswered commands remain
        return Duplicate(key=key, reason=ALREADY_APPLIED, game_id=record.id, player=who.name,
                         commands=commands)
    if asked.action is not None:  # an order read whole (not a mistyped command)
        from .deadlines import late

        missed = late(record, who, arrived, asked.action)
        if missed is not None:  # the clock moved for them before the order arrived
            waiting = record.game.waiting_for()
            return Refuse(reason="order_late", values={**missed, "waiting": tuple(waiting)},
                          orderless=False, **_order_refusal(key, record, who, asked.lines, commands, repeat,
                                                            asked.kinds))
    if asked.has_order or (asked.lines and not asked.commands):
        # the order first, so that commands beside it answer the new position
        verdict = judge_order(key, record, who, asked, commands, repeat)
        return replace(verdict, arrived=arrived) if isinstance(verdict, Apply) else verdict
    if asked.commands:
        return Answer(key=key, game_id=record.id, player=who.name, commands=commands, repeat_commands=repeat)
    if not om.lines:  # the body had no order line: perhaps the order is in the Subject
        subject = subject_text(om.subject)
        if subject and subject_order(subject, record):
            return Refuse(key=key, reason="order_in_subject", to=om.sender, game_id=record.id, player=who.name,
                          values={"subject": subject if len(subject) <= 200 else subject[:199] + "\u2026"},
                          with_legal=True, words="limits")
        if om.body_blank:
            return Refuse(key=key, reason="body_empty", to=om.sender, game_id=record.id, player=who.name,
                          with_legal=True, orderless=True, words="limits")
    return Refuse(key=key, reason="no_orders_found", to=om.sender, game_id=record.id, player=who.name,
                  with_legal=True, orderless=True)


def subject_order(subject: str, record: GameRecord) -> bool:
    """Whether ``subject`` (a Subject without reply prefixes) reads as an order
    line in the game's names: it parses as a turn, or starts with an order word
    or one close to it (``looks_like_order``)."""
    if looks_like_order(subject):
        return True
    try:
        parse_turn([subject], record.game.board)
    except OrderError:
        return False
    return True


def judge_order(key: str, record: GameRecord, player: Player, asked: Orders,
                commands: tuple[str, ...] = (), repeat: bool = False) -> Apply | Refuse:
    """``Apply`` the parsed order of ``asked`` when the engine finds it legal now,
    else ``Refuse`` it: ``order_not_understood`` (parser reason), ``order_not_legal``
    (see ``illegal``)."""
    if asked.action is None:
        assert asked.error is not None
        return Refuse(reason="order_not_understood", values={"reason": asked.error.reason},
                      failed=asked.error.line, orderless=not asked.has_order and not commands and not repeat,
                      **_order_refusal(key, record, player, asked.lines, commands, repeat, asked.kinds))
    actions = list(asked.alternatives) or [asked.action]
    if len(actions) > 1 or record.standing.get(player.name):
        return _first_legal(key, record, player, asked, actions, commands, repeat)
    try:
        record.game.resolve(player.name, asked.action)
    except IllegalAction as exc:
        return illegal(exc, key, record, player, asked.lines, commands, repeat, asked.kinds)
    return Apply(key=key, game_id=record.id, player=player.name, action=asked.action,
                 orders=asked.used if asked.used is not None else asked.lines,
                 commands=commands, repeat_commands=repeat, unread=asked.unread)


def _first_legal(key: str, record: GameRecord, player: Player, asked: Orders, actions: list,
                 commands: tuple[str, ...], repeat: bool) -> Apply | Refuse:
    """``judge_order`` of an order with choices (``or``) or with the player's
    standing choices (``advance.with_standing``): ``Apply`` the first legal one;
    else ``Refuse`` as ``alternatives_not_legal`` with each choice's reason (one
    reason for all, e.g. not your turn: ``order_not_legal``)."""
    from ..orders.alternatives import choice_values, given
    from .advance import first_legal

    action, tried = first_legal(record, player.name, actions)
    if action is None:
        errors = [exc for _, exc in tried if exc is not None]
        if len(actions) == 1 or len({(e.code, repr(e.values)) for e in errors}) == 1:
            return illegal(errors[-1], key, record, player, asked.lines, commands, repeat, asked.kinds)
        return Refuse(reason="alternatives_not_legal", words="advance", values={"tried": choice_values(tried)},
                      **_order_refusal(key, record, player, asked.lines, commands, repeat, asked.kinds))
    orders = asked.used if asked.used is not None else asked.lines
    chose = len(tried) > 1 or len(actions) > 1 or action != actions[0]
    # the order as given, without what the mail reader took for a sign-off or a
    # signature ("S pozdravem / Cyril": a new user's check)
    kinds = asked.kinds if len(asked.kinds) == len(asked.lines) else ("text",) * len(asked.lines)
    written = orders if asked.used is not None else tuple(
        line for line, kind in zip(asked.lines, kinds) if kind == "text") or orders
    return Apply(key=key, game_id=record.id, player=player.name, action=action, orders=orders,
                 commands=commands, repeat_commands=repeat, unread=asked.unread,
                 alternatives=given(written) if chose else None, tried=tuple(tried))


def illegal(exc: IllegalAction, key: str, record: GameRecord, player: Player, orders: tuple[str, ...],
            commands: tuple[str, ...] = (), repeat: bool = False, kinds: tuple[str, ...] = ()) -> Refuse:
    """The refusal of ``orders`` that the engine found illegal: the engine's
    ``code`` and ``values`` in ``values``, its ``legal`` alternatives (orders, or
    ``summary`` and ``first``)."""
    return Refuse(reason="order_not_legal", values={"code": exc.code, "values": dict(exc.values)},
                  legal=tuple(exc.legal), summary=exc.summary, first=exc.first,
                  **_order_refusal(key, record, player, orders, commands, repeat, kinds))


def _order_refusal(key: str, record: GameRecord, player: Player, orders: tuple[str, ...],
                   commands: tuple[str, ...], repeat: bool, kinds: tuple[str, ...] = ()) -> dict:
    return dict(key=key, game_id=record.id, player=player.name, to=player.address, orders=orders,
                with_legal=True, position=True, commands=commands, repeat_commands=repeat, kinds=kinds)


def bounce_in_game(v: RecordBounce, record: GameRecord) -> RecordBounce:
    """``v`` matched to the player of ``record``'s game whose mail bounced: the
    player whose token one of the quoted Message-IDs ``v.ours`` carries (only
    mails to them carry it, ``mail/threads.py``), else the player whose address
    is one of the failed recipients the notice's fields name; ``address``
    becomes that player's (canonical) and ``player`` their name.  Unchanged
    when no player matches (a mail to the game master or an observer, an
    older secret's token)."""
    from ..mail.threads import thread_token, tokens_in

    tokens = set(tokens_in(v.ours, record.id))
    for p in record.players:
        if p.address and p.secret and thread_token(record.id, p.secret) in tokens:
            return replace(v, address=canonical_address(p.address), player=p.name)
    for addr in [*v.recipients, v.address]:
        p = record.player_by_address(addr) if addr else None
        if p is not None and p.address:
            return replace(v, address=canonical_address(p.address), player=p.name)
    return v


def _asks_me(om: OrderMail) -> bool:
    """Whether a line of ``om``'s own text (not quoted, not a signature) is
    ``me`` (``seats.me_command``)."""
    from .seats import me_command

    kinds = om.kinds or ["text"] * len(om.lines)
    return any(k == "text" and me_command(l) for l, k in zip(om.lines, kinds))
