"""Proposals decided by the players' vote (issue 29): ``propose takeback``,
``propose pause DAYS``, ``propose end``, ``propose deadline DURATION``, and
the answers ``accept`` / ``reject`` (read by ``ballot.proposal_command``).

* One open proposal at a time per game: a second one is refused with the one
  under way (who, what, when its answers are due).
* Every other active player is asked, one mail each in their language and
  thread (``ask`` of ``templates/words/proposals.txt``); the Message-ID of
  that mail is kept (``asked``), so that an answer by reply names its proposal
  (a reply to an older proposal's mail is told that one was decided).  An
  answer that quotes no proposal mail answers the open one.  Active: a seat
  with an address, not the built-in player's (those abstain), not abandoned,
  not resigned; a seat that stops being active during the vote no longer
  blocks it.
* The decision is unanimous: the first ``reject`` fails it, the last
  ``accept`` carries it out; the proposer withdraws it with ``reject``.
  Answers are due by the move's deadline in force or 48 hours
  (``ANSWER_WINDOW``) after the proposal, whichever is sooner; the clock
  stage (``run_due``, step 8 of the cycle) fails a proposal not accepted by
  then.  Every result is told to every player and observer.
* An accepted proposal is carried out as the game master's command of the
  same effect (``gm.execute``: ``undo 1``, ``pause``, ``end``, ``deadline``),
  recorded in ``gm_log`` with ``by: proposal N`` and worded to the players by
  the macros of ``templates/words/proposals.txt`` (``gm.Context.voice``).  A
  pause of DAYS ends by itself (``run_due`` resumes it as ``resume``).
* A takeback is the proposer's own last move, before the next player moved;
  it is refused when that move showed another player what was hidden from
  them (``revealed``), or when it paid a dividend (``gm.undo_limits``).

The game file keeps every proposal in ``proposals`` (docs/game-file.md,
"Format 5: proposals").  Below ``gm`` and ``commands``; ``act`` answers the
commands, ``cycle`` runs ``run_due``.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Callable

from .. import i18n
from ..mail.read import OrderMail
from ..mail.threads import message_ids
from ..render.orders import localize
from ..render.when import format_duration as spoken_duration, format_when
from ..render.words import word
from ..rules import events as ev
from ..rules.notation import public_order
from ..store.gamefile import GameRecord, GameStore, Player
from . import gm
from .announce import tell_everyone
from .ballot import ANSWERS, MAX_PAUSE
from .deadlines import in_force, iso, parse_time
from .send import Post, thread_of

log = logging.getLogger("pbem")

ANSWER_WINDOW = 48 * 3600
"""Seconds the asked players have to answer at most (issue 29: the move's
deadline or 48 h, whichever is sooner)."""

PER_DAY = 3
"""Proposals one player may make per UTC day: each one mails every other
player, and a proposal withdrawn at once could be made again and again."""

REVEALING = (ev.ReplacedBy, ev.FourOfAKind, ev.FaceUp, ev.DividendAnnounced, ev.DividendUnused,
             ev.DoubleDividend, ev.SeveralDividends, ev.DividendPaid, ev.DividendHidden, ev.ImaginaryTakes,
             ev.InitialRevealed, ev.Reshuffled, ev.GameOver, ev.Stalled)
"""The events that show a player what was hidden from them (rules: What each
player may know; secret to everyone: the stack's order and the dividend cards
in it, the track deck's order; secret to one player: their initial choice):
a share from the stack turned face up (``ReplacedBy``, a four of a kind's new
display), a dividend card drawn, paid or unused, the two-player game's last
shares, the initial investments revealed, the track deck made anew from the
discards (its new order is dealt from then on), the end.  A move that caused
one of them cannot be taken back by agreement: the game master's ``undo``
can.  What the move showed only its own player (``TookStack``: the share drawn
unseen, the track card drawn) or what was theirs to show (the shares they
invested) does not block it."""


_SHOWN = {**dict.fromkeys((ev.ReplacedBy, ev.FourOfAKind, ev.FaceUp, ev.ImaginaryTakes), "stack"),
          **dict.fromkeys((ev.DividendAnnounced, ev.DividendUnused, ev.DoubleDividend, ev.SeveralDividends,
                           ev.DividendPaid, ev.DividendHidden, ev.Stalled), "dividend"),
          ev.InitialRevealed: "initial", ev.Reshuffled: "deck", ev.GameOver: "end"}
"""What each of ``REVEALING`` showed, as ``refused_revealed`` words it (``_shown``)."""


def is_proposal(cmd: str) -> bool:
    """Whether the mail command ``cmd`` (as ``interpret`` lists it) is one of
    ``ballot.proposal_command``'s: carried out here, not by ``commands``."""
    return cmd.startswith("propose ") or cmd in ANSWERS


def open_proposal(record: GameRecord) -> dict[str, Any] | None:
    """The proposal of ``record``'s game still being voted on (``outcome``
    None), or None."""
    for p in reversed(record.proposals):
        if p.get("outcome") is None:
            return p
    return None


def active(record: GameRecord, player: Player) -> bool:
    """Whether ``player`` votes: a seat with an address, not the built-in
    player's, not abandoned, not resigned."""
    return bool(player.address) and not player.bot and not player.abandoned and player.name not in record.resigned


def voters(record: GameRecord, proposal: dict[str, Any]) -> list[str]:
    """The asked seats of ``proposal`` that still vote (``active``), in seat order."""
    asked = proposal.get("asked") or {}
    return [p.name for p in record.players if p.name in asked and active(record, p)]


def moved_on(record: GameRecord, proposal: dict[str, Any]) -> bool:
    """Whether ``proposal`` is a takeback the game has moved past (a move was
    made or taken back since it was proposed): it can no longer be done."""
    return proposal.get("what") == "takeback" and len(record.history) != proposal.get("moves")


def answer_due(record: GameRecord, now: datetime) -> datetime:
    """When the answers to a proposal made at ``now`` are due: ``now`` +
    ``ANSWER_WINDOW``, or the earliest deadline in force of the move under way
    when it comes sooner (one that has passed already does not count)."""
    due = now + timedelta(seconds=ANSWER_WINDOW)
    for when in in_force(record).values():
        if when is not None and now < when < due:
            due = when
    return due


def revealed(record: GameRecord) -> list[Any]:
    """The events of ``record``'s last action that show a player what was
    hidden from them (``REVEALING``), in order; ``[]`` for none (or no action).
    The game replayed without that action (``gm.replay_prefix``) tells which
    events are the action's."""
    if not record.history:
        return []
    start = len(gm.replay_prefix(record, 1).events)
    return [e for e in record.game.events[start:] if isinstance(e, REVEALING)]


# ---------------------------------------------------------------- the words


def _what(record: GameRecord, proposal: dict[str, Any]) -> dict[str, Any]:
    """The values every macro naming a proposal takes: ``kind``, ``proposer``,
    ``number``, ``order`` (a takeback's move as the others may see it, in the
    reader's order words), ``length`` (a pause's or deadline's, worded in the
    language in force; None: no deadline)."""
    order = None
    if proposal["what"] == "takeback":
        order = localize(public_order(proposal["order"], record.game.phase != "initial"))
    value = proposal.get("value")
    return {"kind": proposal["what"], "proposer": proposal["by"], "number": proposal["id"], "order": order,
            "length": spoken_duration(int(value)) if value else None}


def _say(record: GameRecord, proposal: dict[str, Any], name: str, **values: Any) -> Callable[[], str]:
    """What words macro ``name`` for each reader (``announce.Say``)."""
    return lambda: word("proposals", name, **_what(record, proposal), **values)


def _reply(post: Post, om: OrderMail, key: str, record: GameRecord, player: Player, title: str,
           text: str) -> None:
    """A short answer to ``player``'s mail in their thread (in the language in force)."""
    thread = thread_of(record, player)
    post.put(post.answer(om, record.id, player.address, thread.subject,
                         word("language", "notice_heading", game_id=record.id, title=title) + "\n\n" + text + "\n",
                         token=thread.token, thread=thread.thread), answers=key)


def _batch(post: Post, store: GameStore, record: GameRecord, spool: Callable[[], None]) -> None:
    """Spool what ``spool`` spools under the batch of the save that follows
    (as ``gm.execute``: a kill before the save leaves mails ``notify.sweep``
    drops), then save ``record``.  Raises OSError/StoreError as the save."""
    batch, puts = record.mail_batch + 1, post.puts
    post.tags["batch"] = batch
    try:
        spool()
    finally:
        post.tags.pop("batch", None)
    if post.puts > puts:
        record.mail_batch = batch
    store.save(record)


# ---------------------------------------------------------------- the commands


def answer(post: Post, store: GameStore, om: OrderMail, key: str, record: GameRecord, player: Player,
           cmds: tuple[str, ...] | list[str]) -> None:
    """Carry out ``player``'s proposal commands ``cmds`` of mail ``om`` (its key
    ``key``: ``MID#commands``), each in the player's language, each answered in
    their thread; saves the game file.  A proposal that cannot be made or an
    answer that cannot be taken is refused with why and what would do, the
    game unchanged.  Raises OSError/StoreError when the file cannot be saved."""
    now = post.clock()
    for cmd in cmds:
        with i18n.speaking(record.language_of(player)):
            if cmd in ANSWERS:
                _respond(post, store, om, key, record, player, cmd, now)
            else:
                _propose(post, store, om, key, record, player, cmd, now)


def _refusal(record: GameRecord, player: Player, cmd: str, now: datetime) -> str | None:
    """Why ``player`` cannot propose ``cmd`` now (the text), or None."""
    kind = cmd.split()[1]
    if record.game.phase == "over":
        return word("proposals", "refused_over")
    under_way = open_proposal(record)
    if under_way is not None and parse_time(under_way["due"]) > now:
        return word("proposals", "refused_open", **_what(record, under_way),
                    due=format_when(parse_time(under_way["due"]), player.timezone))
    today = [p for p in record.proposals if p.get("by") == player.name and str(p.get("at", ""))[:10] == iso(now)[:10]]
    if len(today) >= PER_DAY:
        return word("proposals", "refused_too_many", count=len(today))
    if kind == "?":
        what = cmd.split()[2] if len(cmd.split()) > 2 else ""
        return word("proposals", "refused_usage", what=what, max_days=MAX_PAUSE // 86400)
    if kind == "pause" and record.settings.get("paused"):
        return word("proposals", "refused_paused")
    if kind == "deadline":
        seconds = None if cmd.split()[2] == "none" else int(cmd.split()[2])
        if seconds == record.settings.get("deadline"):
            return word("proposals", "refused_same_deadline",
                        length=spoken_duration(seconds) if seconds else None)
    if kind == "takeback":
        last = record.history[-1] if record.history else None
        if last is None or last["player"] != player.name:
            return word("proposals", "refused_not_yours", last=last["player"] if last else None)
        shown = revealed(record)
        if shown:
            return word("proposals", "refused_revealed", shown=list(dict.fromkeys(_SHOWN[type(e)] for e in shown)))
        if gm.undo_limits(record)[1] < 1:
            return word("proposals", "refused_revealed", shown=["dividend_paid"])
    return None


def _propose(post: Post, store: GameStore, om: OrderMail, key: str, record: GameRecord, player: Player,
             cmd: str, now: datetime) -> None:
    title = word("proposals", "proposed_title")
    under_way = open_proposal(record)
    if under_way is not None and parse_time(under_way["due"]) <= now:
        _close_late(post, store, record, under_way, now)  # its time is up: decided before the new one
    why = _refusal(record, player, cmd, now)
    if why is not None:  # nothing changed: the answer alone
        _reply(post, om, key, record, player, title, why)
        log.info("game %s: %s: %r refused", record.id, player.name, cmd)
        return
    parts = cmd.split()
    kind = parts[1]
    proposal: dict[str, Any] = {"id": len(record.proposals) + 1, "by": player.name, "what": kind,
                                "at": iso(now), "due": iso(answer_due(record, now)), "asked": {}, "answers": {},
                                "outcome": None}
    if kind in ("pause", "deadline"):
        proposal["value"] = None if parts[2] == "none" else int(parts[2])
    if kind == "takeback":
        proposal["order"] = record.history[-1]["order"]
        proposal["moves"] = len(record.history)
    asked = [p for p in record.players if p.name != player.name and active(record, p)]
    record.proposals.append(proposal)
    log.info("game %s: %s proposes %s (proposal %d), asking %s", record.id, player.name, kind, proposal["id"],
             ", ".join(p.name for p in asked) or "nobody")
    if not asked:  # the built-in player's seats abstain: nobody votes against
        _reply_and_carry_out(post, store, om, key, record, player, proposal, now,
                             word("proposals", "accepted_at_once", **_what(record, proposal)))
        return
    due = parse_time(proposal["due"])

    def spool() -> None:
        for p in asked:
            thread = thread_of(record, p)
            with i18n.speaking(record.language_of(p)):
                ask_title = word("proposals", "ask_title", **_what(record, proposal))
                text = word("language", "notice_heading", game_id=record.id, title=ask_title) + "\n\n" + \
                    word("proposals", "ask", **_what(record, proposal),
                         others=[q.name for q in asked if q is not p],
                         due=format_when(due, p.timezone)) + "\n"
                msg = post.message(record.id, p.address, thread.subject, text, in_reply_to=thread.thread,
                                   references=[thread.thread] if thread.thread else [], auto="auto-generated",
                                   token=thread.token)
            proposal["asked"][p.name] = str(msg["Message-ID"])
            post.put(msg, kind="gm", game=record.id, player=p.name)
        _reply(post, om, key, record, player, title,
               word("proposals", "proposed", **_what(record, proposal), asked=[p.name for p in asked],
                    due=format_when(due, player.timezone)))

    _batch(post, store, record, spool)


def _respond(post: Post, store: GameStore, om: OrderMail, key: str, record: GameRecord, player: Player,
             answer_: str, now: datetime) -> None:
    title = word("proposals", "answer_title")
    refs = {r for r in om.thread_refs if r}
    for r in list(refs):
        refs.update(message_ids(r))
    named = next((p for p in reversed(record.proposals) if refs & set((p.get("asked") or {}).values())), None)
    proposal = named if named is not None else open_proposal(record)

    def refuse(text: str) -> None:  # nothing changed (by this answer): the answer alone
        _reply(post, om, key, record, player, title, text)

    if proposal is None:
        return refuse(word("proposals", "answer_none", answer=answer_))
    if proposal.get("outcome") is None and parse_time(proposal["due"]) <= now:
        _close_late(post, store, record, proposal, now)
        if proposal.get("outcome") != "accepted":
            return refuse(word("proposals", "answer_late", **_what(record, proposal)))
    if proposal.get("outcome") is None and moved_on(record, proposal):
        _close(post, store, record, proposal, "lapsed", now)
    if proposal.get("outcome") is not None:
        return refuse(word("proposals", "answer_closed", **_what(record, proposal), outcome=proposal["outcome"]))
    if player.name == proposal["by"]:
        if answer_ == "accept":
            return refuse(word("proposals", "answer_yours", **_what(record, proposal)))
        return _close(post, store, record, proposal, "withdrawn", now, om=om, key=key, player=player)
    if player.name not in (proposal.get("asked") or {}):
        return refuse(word("proposals", "answer_not_asked", **_what(record, proposal)))
    proposal["answers"][player.name] = {"answer": answer_, "at": iso(now)}
    log.info("game %s: %s answers %s to proposal %d", record.id, player.name, answer_, proposal["id"])
    if answer_ == "reject":
        return _close(post, store, record, proposal, "rejected", now, om=om, key=key, player=player)
    left = [n for n in voters(record, proposal) if (proposal["answers"].get(n) or {}).get("answer") != "accept"]
    if not left:
        return _reply_and_carry_out(post, store, om, key, record, player, proposal, now,
                                    word("proposals", "answer_decided", **_what(record, proposal)))
    noted = word("proposals", "answer_noted", **_what(record, proposal), waiting=left,
                 due=format_when(parse_time(proposal["due"]), player.timezone))
    _batch(post, store, record, lambda: _reply(post, om, key, record, player, title, noted))


# ---------------------------------------------------------------- outcomes


def _reply_and_carry_out(post: Post, store: GameStore, om: OrderMail | None, key: str | None,
                         record: GameRecord, player: Player | None, proposal: dict[str, Any], now: datetime,
                         text: str) -> None:
    """Carry out the accepted ``proposal`` (saved), then answer ``player``'s
    mail ``om`` with ``text`` (when given)."""
    _carry_out(post, store, record, proposal, now)
    if om is not None and player is not None and key is not None:
        if proposal["outcome"] != "accepted":
            text = word("proposals", "answer_closed", **_what(record, proposal), outcome=proposal["outcome"])
        _reply(post, om, key, record, player, word("proposals", "answer_title"), text)


def _carry_out(post: Post, store: GameStore, record: GameRecord, proposal: dict[str, Any], now: datetime) -> None:
    """``proposal`` accepted: done as the game master's command of the same
    effect (``gm.execute``, which saves and tells everyone in the words of
    ``templates/words/proposals.txt``).  A takeback the game moved past since
    (another move, ``moves``) lapses instead; a command the game no longer
    allows fails (``outcome`` ``failed``), told to everyone."""
    kind, at = proposal["what"], iso(now)
    proposal["closed"] = at
    if moved_on(record, proposal) or (kind == "takeback" and record.history[-1]["player"] != proposal["by"]):
        return _close(post, store, record, proposal, "lapsed", now)
    reason = f"proposal {proposal['id']} of {proposal['by']}, accepted by every player asked"
    if kind == "takeback":
        cmd = gm.GmCommand("undo", ("1",), reason=reason)
    elif kind == "pause":
        cmd = gm.GmCommand("pause", reason=reason)
    elif kind == "end":
        cmd = gm.GmCommand("end", reason=reason)
    else:
        value = proposal.get("value")
        cmd = gm.GmCommand("deadline", ("none" if value is None else str(int(value)),))
    proposal["outcome"] = "accepted"
    if kind == "pause":
        proposal["until"] = iso(now + timedelta(seconds=int(proposal["value"])))
    ctx = gm.Context(post, store, record, f"proposal {proposal['id']}", at,
                     voice="proposals", voiced={"proposer": proposal["by"], "number": proposal["id"],
                                                "length": _length_of(proposal)})
    try:
        gm.execute(ctx, cmd)
    except gm.GmRefusal as exc:
        log.warning("game %s: proposal %d accepted but not done: %s", record.id, proposal["id"], exc.code)
        proposal.pop("until", None)
        proposal["outcome"], proposal["failed"] = None, exc.code
        _close(post, store, record, proposal, "failed", now)
        return
    log.info("game %s: proposal %d of %s (%s) accepted and done", record.id, proposal["id"], proposal["by"], kind)


def _length_of(proposal: dict[str, Any]) -> Callable[[], str | None]:
    """What words the proposal's length in the language in force (None: none)."""
    value = proposal.get("value")
    return lambda: spoken_duration(int(value)) if value else None


def _close(post: Post, store: GameStore, record: GameRecord, proposal: dict[str, Any], outcome: str,
           now: datetime, om: OrderMail | None = None, key: str | None = None,
           player: Player | None = None) -> None:
    """Close ``proposal`` with ``outcome`` (``rejected``, ``withdrawn``,
    ``timed_out``, ``lapsed``, ``failed``), tell every player and observer, and
    answer ``player``'s mail ``om`` when given; saved."""
    proposal["outcome"], proposal["closed"] = outcome, iso(now)
    if outcome == "timed_out":
        values: dict[str, Any] = {"silent": [n for n in voters(record, proposal)
                                             if n not in (proposal.get("answers") or {})]}
    elif outcome == "rejected":
        values = {"by_whom": player.name if player is not None else ""}
    else:
        values = {}
    log.info("game %s: proposal %d of %s: %s", record.id, proposal["id"], proposal["by"], outcome)

    def spool() -> None:
        tell_everyone(post, record, _say(record, proposal, "result_title", outcome=outcome),
                      _say(record, proposal, "result", outcome=outcome, **values))
        if om is not None and player is not None and key is not None:
            _reply(post, om, key, record, player, word("proposals", "answer_title"),
                   word("proposals", "answer_closed", **_what(record, proposal), outcome=outcome))

    _batch(post, store, record, spool)


def _close_late(post: Post, store: GameStore, record: GameRecord, proposal: dict[str, Any],
                now: datetime) -> None:
    """The open ``proposal`` whose answers were due by ``now``: carried out when
    every seat that still votes accepted (a seat that resigned or was
    abandoned meanwhile does not block it), else it failed (``timed_out``)."""
    left = [n for n in voters(record, proposal) if (proposal["answers"].get(n) or {}).get("answer") != "accept"]
    if not left:
        _carry_out(post, store, record, proposal, now)
    else:
        _close(post, store, record, proposal, "timed_out", now)


def _pause_over(proposal: dict[str, Any], record: GameRecord, now: datetime) -> bool:
    """Whether ``proposal`` is an accepted pause whose days are over at ``now``
    while the game is still in that pause (not resumed or paused again by the
    game master)."""
    return (proposal.get("what") == "pause" and proposal.get("outcome") == "accepted"
            and not proposal.get("resumed") and proposal.get("until") is not None
            and record.settings.get("paused") == proposal.get("closed")
            and parse_time(proposal["until"]) <= now)


def run_due(post: Post, store: GameStore, report: Any, now: datetime) -> None:
    """The clock stage's part for proposals (after ``clock.run_clock``): in every
    game the games index says is due (``deadlines.next_event`` names a
    proposal's due time and an agreed pause's end), close the open proposal
    whose answers were due by ``now`` (``_close_late``) and end an agreed pause
    whose days are over (the game master's ``resume``, worded as the
    players').  Each game under its lock and in one bookkeeping transaction;
    one game's error goes to ``report.errors`` and the others go on."""
    from filelock import Timeout

    from ..store.gamefile import StoreError
    from . import notify

    for gid in list(post.bk.games_due(now)):
        try:
            with store.lock(gid), post.bk.transaction():
                record = notify.load(post, store, gid)
                if record.ended is not None:
                    continue
                under_way = open_proposal(record)
                if under_way is not None and moved_on(record, under_way):
                    _close(post, store, record, under_way, "lapsed", now)
                elif under_way is not None and parse_time(under_way["due"]) <= now:
                    _close_late(post, store, record, under_way, now)
                for p in record.proposals:
                    if _pause_over(p, record, now):
                        p["resumed"] = iso(now)
                        ctx = gm.Context(post, store, record, f"proposal {p['id']}", iso(now), voice="proposals",
                                         voiced={"proposer": p["by"], "number": p["id"], "length": _length_of(p)})
                        try:
                            gm.execute(ctx, gm.GmCommand("resume"))
                        except gm.GmRefusal as exc:
                            log.warning("game %s: the agreed pause could not end: %s", gid, exc.code)
                            store.save(record)
        except StoreError as exc:
            report.errors.append(str(exc))
        except (OSError, Timeout) as exc:
            report.errors.append(f"game {gid}: proposals: {exc or 'game locked'}")
