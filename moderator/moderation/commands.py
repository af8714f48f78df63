"""Answers to the mail commands ``help``, ``status``, ``legal`` (every legal
order), ``history`` (with the dividends by company), ``rules``, ``secret new``,
``hint``, ``timezone ZONE``, ``vacation 5d|off`` and ``language [CODE]`` (one
line with only the command; see ``templates/help.txt``).

Every answer is rendered in the player's language (``moderator.i18n.speaking``
of ``GameRecord.language_of``), read afresh for each command, so that the
answer to ``language CODE`` and everything after it come in the new one.

Each answer is spooled under the key ``MID#commands`` (``Verdict.commands_key``),
apart from the key of the order in the same mail, so that a mail's commands are
answered once even when its order was applied in an interrupted cycle.
"""
from __future__ import annotations

import copy
from typing import Callable

from .. import i18n
from ..mail.read import OrderMail
from ..render import dividends, render
from ..render.legal import legal_lines
from ..render.words import word
from ..rules.engine import Game
from ..rules.options import OPTION_HELP, ruleset as ruleset_of
from ..store.gamefile import GameRecord, GameStore, Player, new_secret
from .notify import help_context, status_mail
from .seats import SEAT_COMMANDS, seat_answer
from .language import language_command
from .send import Post, thread_of
from ..render.when import format_when, zone_name
from ..rules.notation import public_order


def rules_text(game_id: str, game: Game, record: GameRecord | None = None) -> str:
    """The rules-in-force text of a game (``templates/rules.txt``): ruleset, players,
    options, PBEM decisions, and with ``record`` its press rule (``press.press_rule``,
    ``archive_rule`` and the limits); mailed on ``rules`` and printed by ``pbem rules``."""
    from . import press

    extra = {}
    if record is not None:
        extra = {"press_rule": press.press_rule(record), "press_archive": press.archive_rule(record),
                 "press_max_chars": press.MAX_PRESS_CHARS, "press_per_day": press.PRESS_PER_DAY}
    return render("rules.txt", game_id=game_id, ruleset=game.ruleset, options=game.options,
                  ruleset_summary=ruleset_of(game.ruleset).summary,
                  option_help=OPTION_HELP, players=game.players, final_dividend=game.final_dividend, **extra)


def _history_text(record: GameRecord, player: Player) -> str:
    over = record.game.phase != "initial"
    hist = [
        {"player": h["player"],
         "order": h["order"] if h["player"] == player.name else public_order(h["order"], over),
         "public": over or h["player"] == player.name,
         "automatic": h.get("by") == "bot"}
        for h in record.history
    ]
    return render("history.txt", game_id=record.id, history=hist, log=record.game.events,
                  dividends=dividends(record.game, player.name))


def rotate_secret(store: GameStore, record: GameRecord, player: Player) -> None:
    """Give ``player`` a new secret and save the game file (``secret new``)."""
    player.secret = new_secret()
    store.save(record)


def answer_commands(post: Post, store: GameStore, om: OrderMail, key: str, record: GameRecord,
                    player: Player, commands: tuple[str, ...], skip_status: bool,
                    rotated: bool = False) -> None:
    """Spool the answers to ``commands`` of ``player`` in ``om`` under ``key``
    (``MID#commands``).  ``skip_status``: the status mail after an order answers
    ``status``.  ``secret new`` saves the game file with the player's new secret
    first (``rotated``: the caller did so already, so that its refusal in the
    same mail carries the new secret), so that every answer carries the token of
    the new secret (the old mails' tokens no longer authenticate)."""
    gid = record.id
    if "secret new" in commands and not rotated:
        rotate_secret(store, record, player)

    def send(text: str) -> None:
        # the deadline event of the player's move: a command (vacation, calendar) may have changed it
        from .calendar import mail_parts

        thread = thread_of(record, player)
        sent = copy.deepcopy(record.calendar)
        parts = mail_parts(post, record, player)
        post.put(post.answer(om, gid, player.address, thread.subject, text, token=thread.token,
                             thread=thread.thread, calendar=parts), answers=key)
        if record.calendar != sent:  # after the mail is spooled: a lost save only repeats the event
            store.save(record)

    # "resign confirm" in the mail that says "resign" does not count (a later
    # mail confirms, once the warning is read): one answer, to "resign"
    confirm_too = "resign" in commands and "resign confirm" in commands
    for cmd in commands:
        if confirm_too and cmd == "resign confirm":
            continue
        with i18n.speaking(record.language_of(player)):
            _answer_one(post, store, om, key, record, player, cmd, skip_status, send, confirm_too)


def _answer_one(post: Post, store: GameStore, om: OrderMail, key: str, record: GameRecord, player: Player,
                cmd: str, skip_status: bool, send: Callable[[str], None], confirm_too: bool = False) -> None:
    """Answer one command of ``answer_commands`` (in the language in force);
    ``confirm_too``: the mail says ``resign confirm`` beside ``resign``
    (``seats.seat_answer``)."""
    gid = record.id
    # the per-cycle limit of answers to one address (``Post.allow``); the new
    # secret is always sent (the player could not play without it)
    if (cmd != "status" or not skip_status) and not post.allow(player.address, cmd,
                                                               count_only=cmd == "secret new" or cmd in SEAT_COMMANDS):
        return
    if cmd == "help":
        from .press import press_rule

        send(render("help.txt", game_id=gid, moderator_address=post.config.moderator_address,
                    up_may_start=ruleset_of(record.game.ruleset).up_may_start, press_rule=press_rule(record),
                    **help_context(record)))
    elif cmd == "status" and not skip_status:
        sent = copy.deepcopy(record.calendar)
        post.put(status_mail(post, record, player, [], in_reply_to=om.message_id), answers=key)
        if record.calendar != sent:  # the deadline event it carries (moderation/calendar.py), recorded
            store.save(record)
    elif cmd == "history":
        send(_history_text(record, player))
    elif cmd == "legal":
        send(render("legal.txt", game_id=gid, lines=legal_lines(record.game, player.name, full=True)))
    elif cmd == "rules":
        send(rules_text(gid, record.game, record))
    elif cmd == "hint":
        send(_hint(record, player) + "\n")
    elif cmd.startswith("timezone "):
        send(_timezone(post, store, record, player, cmd[9:]) + "\n")
    elif cmd.startswith("vacation "):
        send(_vacation(post, store, record, player, cmd[9:]) + "\n")
    elif cmd == "language" or cmd.startswith("language "):
        before = record.language_of(player)
        text = language_command(store, record, player, cmd[9:])
        if cmd[9:].strip() and player.language is not None and _valid_language(cmd[9:]):
            # set in this game's own thread: it wins here over the person's language (people.py)
            post.bk.set_game_override(player.address, gid, "language", player.language, post.clock())
            with i18n.speaking(player.language):
                text = f"{text} {word('person', 'game_only', game_id=gid)}"
        if record.language_of(player) != before:  # every mail of the cycle in the new one
            from .clock import respeak

            respeak(post, store, record, player)
        with i18n.speaking(record.language_of(player)):  # a change: the answer in the new language
            send(text + "\n")
    elif cmd in SEAT_COMMANDS:
        _, text = seat_answer(post, store, record, player, cmd, post.clock(), confirm_too)
        send(text + "\n")
    elif cmd == "secret new":
        send(word("notices", "secret_new", game_id=gid, secret=player.secret) + "\n")
    elif cmd.startswith(("next ", "auto ")) or cmd in ("next?", "auto?"):  # issue 30
        from .advance import answer

        text, changed = answer(record, player, cmd, post.clock().isoformat(timespec="seconds"))
        if changed:
            store.save(record)
        send(text + "\n")


def _valid_language(arg: str) -> bool:
    """Whether ``language ARG`` names a language (``language.check_language``)."""
    from .language import check_language

    try:
        check_language(arg.strip())
    except ValueError:
        return False
    return True


def _hint(record: GameRecord, player: Player) -> str:
    """The answer to ``hint``: the built-in player's move for ``player`` from their
    own view (``heuristic.choose``), only with the option ``hints`` and only when
    the game waits for ``player``; mailed to ``player`` alone."""
    import hashlib
    import random

    from ..players.heuristic import choose

    if not record.game.options.get("hints"):
        return word("clock", "hint_off")
    if player.name not in record.game.waiting_for():
        return word("clock", "hint_not_your_move")
    seed = hashlib.sha256(f"pbem-hint:{record.game.seed}:{len(record.game.history)}:{player.name}".encode())
    action = choose(record.game, player.name, random.Random(int.from_bytes(seed.digest()[:8], "big")))
    return word("clock", "hint", order=str(action))


def _timezone(post: Post, store: GameStore, record: GameRecord, player: Player, zone: str) -> str:
    """``timezone ZONE``: set ``player``'s time zone (saved) when ``zone`` names an
    IANA zone ``zoneinfo`` knows (``deadlines.check_timezone``: any case, a place
    of one zone); else the refusal with the nearest zones
    (``names.timezone_nearest``), nothing changed."""

    from ..orders.names import timezone_nearest
    from .deadlines import check_timezone

    try:
        name = check_timezone(zone)
    except ValueError:
        return word("clock", "timezone_unknown", zone=zone, near=timezone_nearest(zone))
    changed = player.timezone != name
    player.timezone = name
    store.save(record)
    if changed:  # the cycle's unsent mails to them give their times in the new zone (a breaker's check)
        from .clock import respeak

        respeak(post, store, record, player)
    # set in this game's own thread: it wins here over the person's zone (moderation/people.py)
    post.bk.set_game_override(player.address, record.id, "timezone", name, post.clock())
    local = format_when(post.clock(), name)
    return " ".join([word("clock", "timezone_set", zone=zone_name(name), local_now=local),
                     word("person", "game_only", game_id=record.id)])


def _vacation(post: Post, store: GameStore, record: GameRecord, player: Player, arg: str) -> str:
    """``vacation 5d`` (a bare number is days) / ``vacation off``: start or end
    ``player``'s vacation, within ``settings.vacation_limit`` seconds per game in
    all, announced to the other players; saved.  A bad length, a vacation over the
    limit or one under way already is refused with what is left, nothing changed."""
    from datetime import timedelta

    from .deadlines import format_duration, parse_duration, parse_time

    now = post.clock()
    limit = int(record.settings.get("vacation_limit") or 0)
    until = parse_time(player.vacation_until)
    on = until is not None and until > now
    arg = arg.strip().lower()
    if arg in ("off", "end", "over", "back"):
        if not on:
            return word("clock", "vacation_none")
        # a person-level vacation (people.py: paid from the bank, not this game's limit) ends here
        # without giving anything back to this game's limit
        person = person_vacation(post, record, player)
        others = _person_vacation_elsewhere(post, store, record, player) if person else []
        _left_over, news = end_vacation(post, store, record, player, count=not person)
        if person:  # this game's limit is not what it was paid from; it goes on in the others (a breaker's check)
            text = word("clock", "vacation_ended_here", game_id=record.id)
            if others:
                text += " " + word("clock", "vacation_goes_on", games=", ".join(others))
            return _joined(text, news)
        return _joined(word("clock", "vacation_ended", left=_left(limit - player.vacation_used)), news)
    left = max(0, limit - player.vacation_used)
    try:
        seconds = parse_duration(arg + "d" if arg.isdigit() else arg)
    except ValueError:
        return word("clock", "vacation_bad", asked=arg, left=_left(left))
    if on:
        return word("clock", "vacation_busy", until=format_when(until, player.timezone))
    if seconds > left:
        return word("clock", "vacation_refused", asked=_left(seconds), left=_left(left),
                    limit=_left(limit), example=format_duration(_whole(left)))
    end = now + timedelta(seconds=seconds)
    news = begin_vacation(post, store, record, player, seconds)
    return _joined(word("clock", "vacation_started", days=_left(seconds),
                        until=format_when(end, player.timezone), left=_left(limit - player.vacation_used)),
                   news)


def person_vacation(post: Post, record: GameRecord, player: Player) -> bool:
    """Whether ``player``'s vacation under way in ``record`` is a person-level one
    (``moderation.people``): the vacation ledger's entry for this game began when it did."""
    from .deadlines import parse_time

    began = parse_time(player.vacation_from)
    return any(e["seconds"] > 0 and record.id in e["games"] and e["at"] == began
               for e in post.bk.vacation_ledger(player.address))


def _person_vacation_elsewhere(post: Post, store: GameStore, record: GameRecord, player: Player) -> list[str]:
    """The other games where ``player``'s person-level vacation under way in
    ``record`` (``person_vacation``) still stops their clock: those of its
    ledger entry whose seat of the same address is on vacation now."""
    from ..mail.read import canonical_address
    from .deadlines import parse_time

    now, began = post.clock(), parse_time(player.vacation_from)
    games = sorted({g for e in post.bk.vacation_ledger(player.address)
                    if e["seconds"] > 0 and record.id in e["games"] and e["at"] == began for g in e["games"]})
    out = []
    for gid in games:
        if gid == record.id:
            continue
        try:
            data = store.read_data(gid)
        except Exception:  # an unreadable game file: not named
            continue
        for p in data.get("players") or []:
            if p.get("address") and canonical_address(str(p["address"])) == canonical_address(player.address):
                until = parse_time(p.get("vacation_until"))
                if until is not None and until > now:
                    out.append(gid)
    return out


def _others(record: GameRecord, player: Player) -> list[Player]:
    """The other players of ``record`` still in the game, who are told of a vacation."""
    return [q for q in record.players if q.address and q.name != player.name and q.name not in record.resigned]


def begin_vacation(post: Post, store: GameStore, record: GameRecord, player: Player, seconds: int,
                   count: bool = True) -> str:
    """Stop ``player``'s clock in ``record`` for ``seconds`` from now
    (``post.clock()``), announce it to the other players (``vacation_announce``)
    and save; ``count``: add it to the seat's ``vacation_used`` (the game's own
    limit; a person's vacation is counted in their bank instead,
    ``moderation.people``).  Returns the news of the player's deadline it moved
    (``deadlines.deadline_news``, ``""`` for none).  No check here: the caller
    checked the length and that no vacation is under way."""
    from datetime import timedelta

    from .clock import save_with_notices
    from .deadlines import Notice, deadline_news, in_force, iso, news_raw

    now = post.clock()
    end = now + timedelta(seconds=seconds)
    before = in_force(record)
    player.vacation_from, player.vacation_until = iso(now), iso(end)
    if count:
        player.vacation_used += seconds
    save_with_notices(post, store, record, [Notice(q.address, q.name, "vacation_announce",
                                                   {"player": player.name,
                                                    "until": format_when(end, q.timezone, record.language_of(q)),
                                                    "news": _news(record, before, q)},
                                                   {"until": iso(end), "news": news_raw(record, before)})
                                            for q in _others(record, player)], points="vacation", status=False)
    return deadline_news(record, before, player)


def end_vacation(post: Post, store: GameStore, record: GameRecord, player: Player,
                 count: bool = True) -> tuple[int, str]:
    """End ``player``'s vacation under way in ``record`` now, tell the other
    players (``vacation_back``) and save; ``count``: give the unused seconds
    back to the seat's ``vacation_used``.  Returns the unused seconds and the
    news of the player's deadline (as ``begin_vacation``)."""
    from .clock import save_with_notices
    from .deadlines import Notice, deadline_news, in_force, iso, news_raw, parse_time, vacations_over

    now = post.clock()
    until = parse_time(player.vacation_until)
    unused = max(0, int((until - now).total_seconds())) if until is not None else 0
    before = in_force(record)
    if count:
        player.vacation_used = max(0, player.vacation_used - unused)
    player.vacation_until = iso(now)
    vacations_over(record, now)  # told here: the clock sends no notice of this end
    save_with_notices(post, store, record, [Notice(q.address, q.name, "vacation_back",
                                                   {"player": player.name, "news": _news(record, before, q)},
                                                   {"news": news_raw(record, before)})
                                            for q in _others(record, player)], points="vacation", status=False)
    return unused, deadline_news(record, before, player)


def _news(record: GameRecord, before: dict, reader: Player) -> str:
    """``deadlines.deadline_news`` for ``reader``, in their language."""
    from .deadlines import deadline_news

    with i18n.speaking(record.language_of(reader)):
        return deadline_news(record, before, reader)


def _joined(text: str, news: str) -> str:
    """An answer and the news of a deadline it changed (none: the answer)."""
    return f"{text} {news}" if news else text


def _left(seconds: int) -> str:
    """A vacation length as the answers give it, in the player's language
    (``render.when.format_duration``: ``13 days, 23 hours``, ``13 Tage, 23
    Stunden``); ``0 days`` for none."""
    from ..render.when import format_duration

    return format_duration(seconds)


def _whole(seconds: int) -> int:
    """``seconds`` rounded down to whole days, else whole hours, else whole
    minutes: the length of the order example ``vacation 13d`` in a refusal, which
    ``deadlines.format_duration`` writes short and the parser reads back."""
    for size in (86400, 3600, 60):
        if seconds >= size:
            return seconds - seconds % size
    return 60
