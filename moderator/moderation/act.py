"""Act on a verdict: the one place where a mail changes a game or causes mail.

``act`` applies an ``Apply`` verdict to the game and saves its file once, with
the status mails of the order spooled just before (``notify.spool_status``), spools the
replies (worded by ``templates/words/notices.txt`` and the mail templates) under
the verdict's key, answers commands under ``MID#commands``, records bounces, and
counts the outcome in the cycle's report.  It is called with the game locked,
inside ``i18n.speaking`` of the sender's language (``cycle.Moderator._handle``);
a mail to another player than the sender (a warning, a refusal sent to the
registered address) is rendered in that player's language.
"""
from __future__ import annotations

import copy

import logging
from types import SimpleNamespace
from typing import Any, Callable

from .. import i18n
from ..mail.read import OrderMail, canonical_address
from ..render.orders import localize
from ..render import render, status_context
from ..render.legal import legal_lines
from ..render.when import byte_size, number
from ..render.words import reason, word
from ..rules.engine import IllegalAction
from ..store.gamefile import GameRecord, GameStore, StoreError
from . import faults
from . import advance, commands, notify, proposals
from .decide import illegal
from .language import language_after
from .report import CycleReport
from .send import ORDERLESS_PER_DAY, WARNINGS_PER_DAY, Post, ThreadOf, thread_of
from .verdict import (ALREADY_APPLIED, Answer, Apply, Decline, Duplicate, Ignore, Manage, RecordBounce, Refuse,
                      Relay, Verdict)

log = logging.getLogger("pbem")

_IGNORED = {
    "machine_mail": "ignored machine mail from {sender}: {detail}",
    "no_sender": "ignored a mail without a sender address",
    "stranger_unreadable": "ignored an unreadable or oversized mail from unknown sender {sender}",
    "stranger_no_game": "ignored mail from unknown sender {sender} (no game)",
    "sender_unregistered": "game {game_id}: mail from unregistered address {sender} refused",
}
"""The log line of each ``Ignore`` reason (for the operator's log, not for players)."""



def hidden_address(address: str | None) -> str:
    """``address`` as a player may read it of someone else: the first letter of
    its local part and its domain (``c…@example.net``), so that a player who
    wrote from another address of theirs knows it, and nobody learns another's
    address (a new user's check: the notice of a mail in Bob's name showed the
    address of Cy, a player of another game)."""
    text = str(address or "")
    local, at, domain = text.rpartition("@")
    if not at:
        return "…"
    return f"{local[:1]}…@{domain}"

def act(v: Verdict, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
        record: GameRecord | None = None) -> str:
    """Carry out verdict ``v`` on mail ``om``; ``record`` is the mail's game (loaded
    and locked by the caller) when ``v`` concerns one.  Returns the folder for the
    mail (``v.outcome``).  Raises StoreError/OSError when the game file cannot be
    saved (the mail then stays in the inbox)."""
    if v.press is not None and record is not None:
        # the mail's messages to other players, first: recorded by their own save
        # (``press.done``), they are not relayed again when the verdict's answer
        # below makes the mail a duplicate and a crash comes between the two
        from .press import relay

        relay(post, store, om, v.key, record, getattr(v, "player"), v.press.drafts, v.press.attachments)
    _ACTIONS[type(v)](v, om, post, store, report, record)
    return v.outcome


def _ignore(v: Ignore, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
            record: GameRecord | None) -> None:
    report.ignored += 1
    line = _IGNORED[v.reason].format(sender=v.sender or "?", detail=v.detail, game_id=v.game_id)
    (log.warning if v.reason == "sender_unregistered" else log.info)("%s", line)
    if v.warn and record is not None:
        named = record.player_by_name(v.warn)
        if not post.daily(f"warned:{record.id}:{named.name}", WARNINGS_PER_DAY):
            log.warning("game %s: %s was told %d times today of mails in their name; not again "
                        "until tomorrow", record.id, named.name, WARNINGS_PER_DAY)
            return
        if not post.allow(named.address, word("notices", "sender_unregistered_title")):
            return
        thread = thread_of(record, named)
        with i18n.speaking(record.language_of(named)):
            text = render("notice.txt", game_id=record.id, sender=hidden_address(v.sender))
            post.put(post.message(record.id, named.address, thread.subject, text, in_reply_to=thread.thread,
                                  references=[thread.thread or ""], token=thread.token), answers=v.reply_key)


def _bounce(v: RecordBounce, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
            record: GameRecord | None) -> None:
    """Record the bounce of ``v.address`` (kept until the next status mail to it
    or ``pbem bounces clear``; the reason names the notice's sender, never the
    server's words, which the player would read); the first bounce of a
    player's address is told to the game master (``templates/gm_notice.txt``,
    with the server's words).  A notice matched to no address is only logged."""
    report.ignored += 1
    log.info("ignored machine mail from %s: bounce notice (%s)", v.sender or "?", v.form or "RFC 3464 report")
    if not v.address:
        log.warning("bounce notice from %s (quoting %s) names no player of %s: not recorded",
                    v.sender or "?", ", ".join(v.ours) or "?", f"game {v.game_id}" if v.game_id else "any game")
        return
    address = canonical_address(v.address)
    new = post.bk.bounce(address) is None
    log.warning("bounce for %s%s%s", address, f" ({v.player} in game {record.id})" if record and v.player else "",
                f": {v.status}" if v.status else "")
    post.bk.set_bounce(address, word("notices", "bounce_report", sender=v.sender))
    if new and record is not None and v.player:
        _tell_gm_bounce(post, record, v, address)


def _tell_gm_bounce(post: Post, record: GameRecord, v: RecordBounce, address: str) -> None:
    """Spool the game master's notice that mail to ``v.player`` bounces (in
    English, as every mail to the game master; none without a game master or
    when it is their own address that bounces)."""
    from .deadlines import game_master_address
    from .announce import gm_token

    gm = game_master_address(record, post.config)
    if not gm or gm == address:
        return
    with i18n.speaking(i18n.DEFAULT):
        title = word("notices", "bounce_gm_title", player=v.player)
        text = word("notices", "bounce_gm", player=v.player, address=address, sender=v.sender or "",
                    detail=v.status, game_id=record.id)
        post.put(post.message(record.id, gm, word("notices", "subject", game_id=record.id, title=title),
                              render("gm_notice.txt", game_id=record.id, text=text, secret=None),
                              token=gm_token(record)),
                 kind="gm", game=record.id)


def _duplicate(v: Duplicate, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
               record: GameRecord | None) -> None:
    report.duplicates += 1
    if v.reason == ALREADY_APPLIED and record is not None:
        log.info("game %s: mail %s already applied", record.id, om.message_id)
        _commands(v, om, post, store, report, record, skip_status=True)


def _refuse(v: Refuse, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
            record: GameRecord | None) -> None:
    if v.orderless and not post.daily(f"orderless:{v.game_id}:{canonical_address(v.to)}", ORDERLESS_PER_DAY):
        report.ignored += 1
        log.warning("game %s: %s sent a mail with no order and no command%s; answered %d such mails "
                    "today, not answering again until tomorrow (a vacation responder or a mail loop?)",
                    v.game_id, canonical_address(v.to),
                    f" (it reads like an auto-reply: {om.auto_hint!r})" if getattr(om, "auto_hint", None) else "",
                    ORDERLESS_PER_DAY)
        return
    report.refused += 1
    language, found = i18n.current(), None
    if record is not None and (v.player or v.addressee) is not None:
        language = record.language_of(v.player or v.addressee)
        if v.player is not None:  # 'language es' beside the refused order: the refusal in Spanish too
            codes = [i18n.normalize(c[9:]) for c in v.commands if c.startswith("language ")]
            language = next((c for c in reversed(codes) if c is not None), language)
    elif record is None:
        found = registered_thread(post, store, v.to, v.game_id)
        if found is not None:
            language = found[2]
    with i18n.speaking(language):
        _refuse_in_language(v, om, post, store, report, record, found)


def _refuse_in_language(v: Refuse, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
                        record: GameRecord | None, found: tuple[ThreadOf, str, str] | None) -> None:
    values: dict[str, Any] = dict(v.values)
    if v.reason == "order_not_legal":  # the engine's named refusal, worded by words/illegal.txt
        values = {"reason": reason(SimpleNamespace(code=values["code"], values=values["values"]))}
        if v.values["code"] == "not_your_turn":  # an order given early: how to queue it (issue 30)
            values["reason"] += ". " + word("advance", "not_your_turn_next")
    elif v.reason == "mail_too_large":  # sizes as the player's language writes them ("27.4 MB")
        values = {"size": byte_size(values["size"]), "max_size": byte_size(values["max_size"])}
    elif v.reason == "too_many_lines":
        values = {"lines": number(values["lines"]), "max_lines": number(values["max_lines"])}
    elif v.reason == "alternatives_not_legal":  # each choice with the engine's reason, in the player's words
        values = {"tried": [{"order": localize(t["order"]),
                             "reason": reason(SimpleNamespace(code=t["code"], values=t["values"]))}
                            for t in values["tried"] if t.get("code")]}
    elif v.reason == "order_late" and record is not None and v.player is not None:
        values = late_values(record, record.player_by_name(v.player), values)
    extra: dict[str, Any] = {}
    thread, to = None, v.to
    rotated = False
    if record is not None and v.player is not None and "secret new" in v.commands:
        # the refusal in the same mail as 'secret new' carries the new secret
        commands.rotate_secret(store, record, record.player_by_name(v.player))
        rotated = True
    if record is not None and (v.player or v.addressee) is not None:
        # to a registered player (authenticated or not): in their thread, with
        # their token, so that replying works; to the registered address only
        named = record.player_by_name(v.player or v.addressee)
        thread, to = thread_of(record, named), named.address
    elif record is None:
        thread, to = (found[0], found[1]) if found is not None else (None, v.to)
    if record is not None and v.player is not None:
        # what is legal, in the player's order words (render.legal)
        if v.legal:
            extra["legal"] = [localize(order) for order in v.legal]
        elif v.summary is not None or v.with_legal:
            extra["legal"] = legal_lines(record.game, v.player, summary=v.summary, first=v.first)
        if v.position:
            extra["position"] = render("position.txt", **status_context(record, v.player, []))
            extra["game_over"] = record.game.phase == "over"
    if v.orders:
        extra["quoted"], extra["omitted"] = quoted(v.orders, v.kinds, v.failed)
    if v.reason == "order_late":  # the game did change (the automatic move): the notice says so
        extra["unchanged"] = False
    elif record is not None and v.player is not None and v.player in record.game.players:
        # nothing changed: the move is still due when it was (a new user's check)
        extra["deadline"] = notify.deadline_line(record, record.player_by_name(v.player))
    if v.commands and record is not None and v.player is not None:
        # the mail's commands ('next:', 'timezone', ...) are answered after this and may
        # change something: "nothing was changed" would not be true (a new user's check)
        extra["commands_follow"] = True
    # a sender in one game only is answered in its thread: the title names that game too
    game_id = v.game_id if v.game_id is not None or thread is None else thread.game_id
    parts: list[tuple[str, str]] = []
    sent = None
    if record is not None and v.player is not None and thread is not None and not v.orderless:
        # the deadline event of the player's move, as every mail to them carries it (the same
        # SEQUENCE while it stays; a change no mail carried yet goes with this one; a breaker's
        # check); not in the answer to a mail with no order and no command (a vacation responder's)
        from .calendar import mail_parts

        sent = copy.deepcopy(record.calendar)
        parts = mail_parts(post, record, record.player_by_name(v.player))
    spooled = post.reply(om, v.reply_key, to, game_id, word(v.words, v.reason + "_title"),
                         word(v.words, v.reason, **values), player=thread, calendar=parts, **extra)
    if sent is not None and record.calendar != sent:
        if spooled:  # after the mail is spooled: a lost save only repeats the event
            store.save(record)
        else:  # not sent (the per-cycle limit): the next mail carries it
            record.calendar = sent
    if record is not None and v.player is not None:
        _commands(v, om, post, store, report, record, skip_status=True, rotated=rotated)


def late_values(record: GameRecord, player: Any, values: dict[str, Any]) -> dict[str, Any]:
    """The values of the notice ``order_late`` (``templates/words/notices.txt``)
    for ``player`` from the verdict's (``deadlines.late`` and ``waiting``): the
    times to the second in UTC (``arrived``, ``due``, ``moved_at``) and in the
    player's time zone when they set one (``..._local``), in the language in
    force; ``order`` the automatic move; ``you_wait``: the game now waits for
    them; ``waiting``: the others it waits for."""
    from ..render.when import format_when, zone_of

    zone = player.timezone if zone_of(player.timezone) is not None else None

    def both(name: str) -> dict[str, Any]:
        when = values.get(name)
        if when is None:
            return {name: None, name + "_local": None}
        return {name: format_when(when, None, seconds=True),
                name + "_local": format_when(when, zone, seconds=True) if zone else None}

    waiting = list(values.get("waiting") or ())
    return {**both("arrived"), **both("due"), **both("moved_at"), "order": values.get("order"),
            "you_wait": player.name in waiting, "waiting": [n for n in waiting if n != player.name]}


def registered_thread(post: Post, store: GameStore, address: str,
                      game_id: str | None) -> tuple[ThreadOf, str, str] | None:
    """The thread (``send.ThreadOf``), registered address and language (their own,
    else the game's) of the player
    ``address`` for an answer outside a loaded game (mail too large or unreadable, unknown game):
    of ``game_id`` when they play it, else of their only running game, else of
    their only game; None when they play none or several."""
    refs = post.bk.games_of(canonical_address(address))
    ids = [r.game_id for r in refs]
    if game_id in ids:
        gid = game_id
    else:
        running = [r.game_id for r in post.bk.games_of(canonical_address(address), active_only=True)]
        gid = running[0] if len(running) == 1 else ids[0] if len(ids) == 1 else None
    if gid is None:
        return None
    try:
        data = store.read_data(gid)
    except StoreError:
        return None
    for p in data.get("players") or []:
        if canonical_address(str(p.get("address", ""))) == canonical_address(address) and p.get("secret"):
            name, thread = str(p.get("name", "")), (data.get("threads") or {}).get(p.get("name"))
            language = p.get("language") or (data.get("settings") or {}).get("language") or i18n.DEFAULT
            return ThreadOf.of(gid, name, str(p["secret"]), thread), str(p["address"]), str(language)
    return None


def _apply(v: Apply, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
           record: GameRecord | None) -> None:
    assert record is not None
    received = post.clock().isoformat(timespec="seconds")
    advance.begin(record)
    try:
        record.apply(v.player, v.action, v.key, received)  # atomic: refused = unchanged
        if v.arrived is not None:  # when the mail reached the mailbox (the history's ``arrived``)
            record.history[-1]["arrived"] = v.arrived.isoformat(timespec="seconds")
        if v.alternatives is not None:  # the choice played is the order; the text given is kept
            record.history[-1]["alternatives"] = v.alternatives
            advance.note_choice(record, v.player, v.alternatives, list(v.tried))
    except IllegalAction as exc:  # resolve passed, push refused: an engine bug, refused all the same
        player = record.player_by_name(v.player)
        _refuse(illegal(exc, v.key, record, player, v.orders, v.commands, v.repeat_commands),
                om, post, store, report, record)
        return
    advance.play_queued(record, received)  # the next player's order in advance, in this cycle
    faults.fault("after-apply")
    # a 'language CODE' in the same mail: the status mails already in the language
    # the mail ends with (the command's answer, after them, sets it again)
    code = language_after(v.commands)
    if code is not None:
        record.player_by_name(v.player).language = code
    # the order's one save, with its status mails spooled just before it
    try:
        spooled = notify.spool_status(post, store, record)
    except (OSError, StoreError):
        raise  # not saved: the mail stays in the inbox
    except Exception:  # noqa: BLE001 - building a status mail failed: the order is saved
        # without them; notify_all tries them again and tells the operator
        log.warning("game %s: the status mails could not be built; the order is saved, "
                    "the mails are tried again", record.id, exc_info=True)
        spooled = False
    if not spooled:
        store.save(record)
    faults.fault("after-save")
    report.applied += 1
    log.info("game %s: %s: %s", record.id, v.player, record.history[-1]["order"])
    if v.unread:
        # the turn was read from some of the lines: say which were not read
        player = record.player_by_name(v.player)
        log.info("game %s: %s: %d line(s) of the mail not read", record.id, v.player, len(v.unread))
        lines = [line for line, _ in v.unread]
        shown, omitted = quoted(lines, [k for _, k in v.unread], "", unread=True)
        post.reply(om, v.key, player.address, record.id, word("notices", "lines_not_read_title"),
                   word("notices", "lines_not_read", order=record.history[-1]["order"]),
                   player=thread_of(record, player), quoted=shown, omitted=omitted, unchanged=False)
    _commands(v, om, post, store, report, record, skip_status=True)


MAX_QUOTED = 30
"""A reply quotes at most this many lines of the mail (and says how many it left out)."""

MAX_QUOTED_CHARS = 200
"""A quoted line longer than this many characters is cut there, ending in "…"
(a 200 kB line is not mailed back whole, twice: text and HTML part)."""


def _shortened(line: str) -> str:
    return line if len(line) <= MAX_QUOTED_CHARS else line[:MAX_QUOTED_CHARS - 1].rstrip() + "\u2026"


def quoted(lines: tuple[str, ...] | list[str], kinds: tuple[str, ...] | list[str], failed: str,
           unread: bool = False) -> tuple[list[dict[str, str]], int]:
    """The lines a reply quotes, each with its mark (``templates/words/notices.txt``,
    ``mark``): the ``failed`` one, the others not applied beside it, and why a
    line was not read (its ``OrderMail.kinds``; ``unread``: every line is one
    not read).  At most ``MAX_QUOTED`` (the failed one always among them), each
    at most ``MAX_QUOTED_CHARS`` long; also returns how many were left out."""
    lines = list(lines)
    kinds = list(kinds) if len(kinds) == len(lines) else ["text"] * len(lines)
    at = lines.index(failed) if failed and failed in lines else None  # looked up once: linear, not square
    shown = list(range(min(len(lines), MAX_QUOTED)))
    if at is not None and at >= MAX_QUOTED:
        shown[-1] = at
    marked = []
    for i in shown:  # only the lines shown are worded
        line, kind = lines[i], kinds[i]
        if failed and line == failed:
            mark = "failed"
        elif unread or kind != "text":
            mark = "not_read"
        elif at is not None:
            mark = "not_applied"
        else:
            mark = ""
        marked.append({"line": _shortened(line),
                       "mark": word("notices", "mark", mark=mark, kind=kind) if mark else ""})
    return marked, len(lines) - len(marked)


def _answer(v: Answer, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
            record: GameRecord | None) -> None:
    assert record is not None
    _commands(v, om, post, store, report, record, skip_status=False)


def _commands(v: Duplicate | Refuse | Apply | Answer, om: OrderMail, post: Post, store: GameStore,
              report: CycleReport, record: GameRecord, skip_status: bool, rotated: bool = False) -> None:
    """Answer the verdict's commands once (keyed ``MID#commands``)."""
    if v.commands:
        votes = tuple(c for c in v.commands if proposals.is_proposal(c))  # proposals.py's, not commands'
        daily = [c for c in v.commands if c.startswith("digest daily")]
        rest = tuple(c for c in v.commands if c not in votes and c not in ("me", "export me", "forget me")
                     and c not in daily)
        for own in ("export me", "forget me"):  # the person's own data, across their games (privacy.py)
            if own in v.commands:
                from . import privacy

                player = record.player_by_name(v.player)
                language = record.language_of(player)
                if own == "export me":
                    privacy.answer_export(post, store, om, v.commands_key, player.address, held=record,
                                          language=post.bk.setting(player.address, "language") or language)
                else:
                    privacy.ask_forget(post, om, v.commands_key, player.address,
                                       language=post.bk.setting(player.address, "language") or language)
        if "me" in v.commands:  # the person's answer, across their games (people.py)
            from . import people

            player = record.player_by_name(v.player)
            if post.allow(player.address, "me"):
                people.answer_me(post, store, om, v.commands_key, player.address, held=record, limit_cycle=False)
        if rest:
            commands.answer_commands(post, store, om, v.commands_key, record, record.player_by_name(v.player),
                                     rest, skip_status, rotated)
        if daily:  # the daily digest is the person's, across their games (people.py): answered in the person
            # thread, after the game's own commands ('language de' in the same mail: the answer in German)
            from . import people

            people.answer_daily(post, store, om, v.commands_key + "#daily", record.player_by_name(v.player).address,
                                daily[-1], held=record)
        if votes:
            proposals.answer(post, store, om, v.commands_key, record, record.player_by_name(v.player), votes)
        report.commands += 1
    elif getattr(v, "repeat_commands", False):
        report.duplicates += 1


def _manage(v: Manage, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
            record: GameRecord | None) -> None:
    from . import gm

    assert record is not None
    log.info("game %s: mail of the game master %s", record.id, v.by)
    with i18n.speaking(i18n.DEFAULT):  # the game master reads English; players get their own
        gm.manage_mail(post, store, om, v.key, record, post.clock())
    report.commands += 1


def _decline(v: Decline, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
             record: GameRecord | None) -> None:
    report.refused += 1
    log.info("game %s: mail of %s not taken: %s", v.game_id, v.to, v.reason)
    thread = None
    language = i18n.current()
    if record is not None and v.player is not None:
        thread = thread_of(record, record.player_by_name(v.player))
        language = record.language_of(v.player)
    with i18n.speaking(language):
        # no "Send a corrected order": none is taken from them (the reason says why)
        post.reply(om, v.reply_key, v.to, v.game_id, word("gm", v.reason + "_title"), word("gm", v.reason),
                   player=thread, unchanged=False)


def _relay(v: Relay, om: OrderMail, post: Post, store: GameStore, report: CycleReport,
           record: GameRecord | None) -> None:
    report.commands += 1  # the messages themselves: relayed by ``act`` after every verdict


_ACTIONS: dict[type, Callable[..., None]] = {
    Ignore: _ignore, RecordBounce: _bounce, Duplicate: _duplicate,
    Refuse: _refuse, Apply: _apply, Answer: _answer, Manage: _manage, Decline: _decline, Relay: _relay,
}
