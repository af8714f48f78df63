"""Status mails: each player's own view of a game after it changed.

``spool_status`` mails every player of one game the events not yet mailed
(merged with any older unsent status mail to them); ``notify_all`` catches up on
every game the bookkeeping's games index says owes mail (``notified <
log_length``: this cycle's orders, or an earlier cycle's that crashed before
mailing), without opening the other game files.
"""
from __future__ import annotations

import json
import logging
import re
import sqlite3
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Callable

from filelock import Timeout

from .. import i18n
from ..mail.read import canonical_address
from ..render import MAP_HERE, render, status_context, text_blocks
from ..render.words import word
from ..rules.events import Event, from_data as event_from_data, to_data as event_to_data
from ..rules.options import OPTION_HELP
from ..store.gamefile import GameRecord, GameStore, Player, StoreError
from . import spooled
from .report import CycleReport
from .send import Post, thread_of

log = logging.getLogger("pbem")

def status_mail(post: Post, record: GameRecord, player: Player, events: list[str],
                in_reply_to: str | None = None, template: str = "status.txt",
                drawn: list[tuple[str, bool]] = (), boards: dict[str, list[str]] | None = None,
                news: list[dict] = (), again: bool = False) -> EmailMessage:
    """The status mail (or with ``template="welcome.txt"`` the welcome mail) to
    ``player``: their view of ``record``'s game only, with ``events``, the post's
    outage notice and their bounce note.  It answers ``in_reply_to`` if given, else
    continues the player's thread.  ``drawn``: the shares ``player`` drew from
    the stack among ``events`` ``(share, returned by swap drawn)``, named to them
    alone (their confirmation).  The mail shows the board as every player sees
    it (``mail_map``: the map, its key and the companies' shapes, no one's shares): in the
    HTML part an inline PNG (``id="board"``) below the position; the text part
    has the compact position only (issue 26: a status mail at most 50 KB).  The HTML part is laid out by
    ``templates/mail/status.html`` (the welcome: ``mail/welcome.html``, with the
    order guide) from the same context.  Everything is rendered in ``player``'s
    language (``GameRecord.language_of``), text and HTML part alike.
    ``boards``: the board in words of this position by language, shared by the
    status mails of one position (``status_text``).  ``news``: the moderator's
    own notices to ``player`` of the same cycle that this mail carries instead
    of mails of their own (``Notice.to_data``: the built-in player's move and
    why, a reminder, a moved deadline), worded first under WHAT HAPPENED.
    The mail carries the deadline of ``player``'s move as a calendar event, or
    the cancellation of the one sent before (``calendar.calendar_parts``; it
    records what it gives in ``record.calendar``); ``again``: the mail replaces
    unsent status mails to ``player`` (their cancellation is carried again)."""
    with i18n.speaking(record.language_of(player)):
        return _status_mail(post, record, player, events, in_reply_to, template, drawn, boards, news, again)


_REFUSED = re.compile(r"refused by the mail server(?: with code (\d{3}))?")
"""The bookkeeping's reason of a mail the SMTP server refused for good
(``bounce_smtp`` of templates/words/operator.txt); every other reason is a
bounce notice that came back (``bounce_report`` of templates/words/notices.txt)."""


def bounce_note(reason: str | None) -> str | None:
    """Why a mail to the player bounced, as the player reads it in the language
    in force (``bounce_player`` of templates/words/notices.txt): from the kind
    of the bookkeeping's ``reason`` (``Bookkeeping.bounce``; written for the
    operator, in English) alone, never the server's words, host or an address:
    ``"refused by the mail server with code 550"`` -> es ``rechazado por el
    servidor de correo con el código 550``; ``"bounce report from
    mailer-daemon@mx.example.org"`` -> es ``tu sistema de correo lo devolvió``.
    None for None (no bounce)."""
    if not reason:
        return None
    refused = _REFUSED.fullmatch(reason.strip())
    if refused:
        return word("notices", "bounce_player", kind="refused", code=refused.group(1) or "")
    return word("notices", "bounce_player", kind="returned", code="")


def help_context(record: GameRecord) -> dict:
    """The game's own figures the guide (``templates/help.txt``) states, as
    ``{help_deadline, help_on_missed, help_abandon_after}``: the deadline of a
    move worded in the language in force (``format_duration`` of
    ``settings.deadline``; ``""`` for a game without one), the policy for a missed
    move (``bot`` or ``wait``) and the missed moves in a row that abandon a seat
    (docs/operations.md, "Deadlines")."""
    from ..render.when import format_duration

    settings = record.settings
    deadline = settings.get("deadline")
    return {"help_deadline": format_duration(deadline, exact=True) if deadline else "",
            "help_on_missed": settings.get("on_missed") or "bot",
            "help_abandon_after": settings.get("abandon_after") or 3}


def status_text(record: GameRecord, player: Player, events: list[str], *, notice: str = "",
                bounce: str | None = None, moderator_address: str = "",
                drawn: list[tuple[str, bool]] | tuple = (), template: str = "status.txt",
                boards: dict[str, list[str]] | None = None, news: list[dict] | tuple = ()
                ) -> tuple[str, str, dict]:
    """The text of ``player``'s status mail (``template``: ``status.txt`` or
    ``welcome.txt``) in the language in force, with the name of its HTML
    template and the context both are rendered from: ``(text, html template,
    context)`` (``status_mail`` without the mail: the map's picture, headers;
    ``benchmarks/bench_languages.py`` times it).  ``notice``: the outage notice;
    ``bounce``: the player's bounce note.  ``boards``: kept for callers that
    share one among a position's mails; unused since the status mail carries
    the board as its picture only (issue 26: the text part keeps the compact
    position, the companies' sections, not the board in words).
    ``news``: notices kept as ``Notice.to_data``, worded for ``player``
    (``news_lines``) into the context's ``news``."""
    ctx = status_context(record, player.name, events)
    ctx["option_help"] = OPTION_HELP
    ctx["notice"] = notice
    ctx["bounce"] = bounce
    ctx["map_here"] = MAP_HERE
    ctx["moderator_address"] = moderator_address
    ctx["drawn"] = [word("threads", "you_drew", share=share, swapped=swapped) for share, swapped in drawn]
    ctx["deadline"] = _deadline_line(record, player)
    if template == "welcome.txt":
        ctx.update(help_context(record))  # the guide it includes states the game's figures
    from .advance import status_lines  # orders in advance, to this player alone (issue 30)

    ctx["advance"] = status_lines(record, player)
    ctx["press_rule"] = record.settings.get("press") or "private"  # press.press_rule: the help's press part
    ctx["news"] = news_lines(player, news)
    text = render(template, **ctx)
    html_template = "mail/status.html"
    if template == "welcome.txt":
        html_template = "mail/welcome.html"
        ctx["help_blocks"] = text_blocks(render("help.txt", **ctx))
    return text, html_template, ctx


def news_lines(player: Player, news: list[dict] | tuple) -> list[str]:
    """The lines a status mail to ``player`` gives its ``news`` (notices kept as
    ``deadlines.Notice.to_data``), each the notice's text of
    ``templates/words/clock.txt`` in the language in force, its times worded
    anew (``deadlines.notice_values``); one line per notice, in order, each
    text once (the same notice taken in twice is told once)."""
    from .deadlines import notice_values

    out: list[str] = []
    for item in news:
        line = " ".join(word("clock", item["notice"], **notice_values(item, player)).split())
        if line not in out:
            out.append(line)
    return out


def _status_mail(post: Post, record: GameRecord, player: Player, events: list[str],
                 in_reply_to: str | None, template: str, drawn, boards, news=(), again=False) -> EmailMessage:
    from ..render.board_map import mail_map  # Pillow: only where a map is drawn
    from .calendar import mail_parts

    text, html_template, ctx = status_text(
        record, player, events, notice=post.notice_text(),
        bounce=bounce_note(post.bk.bounce(canonical_address(player.address))),
        moderator_address=post.config.moderator_address, drawn=drawn, template=template, boards=boards,
        news=news)
    thread = thread_of(record, player)  # one Subject for the whole game; the turn is in the text
    root = thread.thread
    return post.message(
        record.id, player.address, thread.subject, text, token=thread.token,
        in_reply_to=in_reply_to or root, references=[root] if root else [],
        auto="auto-replied" if in_reply_to else "auto-generated",
        images=[(make_msgid(idstring=f"map.{record.id}", domain=post.domain)[1:-1],
                 mail_map(record.game), word("layout", "map_alt"))],
        html_template=html_template, html_context=ctx,
        calendar=mail_parts(post, record, player, again=again),
    )


def _deadline_line(record: GameRecord, player: Player) -> str:
    """The status mail's line saying by when ``player``'s move is due (UTC, and in
    their time zone when set), or ``""`` when the game does not wait for them or
    has no deadline."""
    from .deadlines import deadline_values

    values = deadline_values(record, player)
    if not values["due_utc"]:
        return ""
    return word("clock", "deadline", due_utc=values["due_utc"], due_local=values["due_local"],
                zone=values["zone"])


deadline_line = _deadline_line
"""The public name of ``_deadline_line`` (a refusal restates the deadline: ``act``)."""


def spool_status(post: Post, store: GameStore, record: GameRecord,
                 extra: list[tuple[EmailMessage, dict]] = (), status: bool = True,
                 after_spool: Callable[[], None] | None = None,
                 after_save: Callable[[], None] | None = None,
                 news: list = (), loose: Callable[[list], list[tuple[EmailMessage, dict]]] | None = None
                 ) -> bool:
    """Spool one status mail per player with the events since the last status
    mails (merged with any older unsent status mail to the same player), then
    mark them notified and save: the one save of an order (``act``), of a game
    that owed mail (``notify_all``) or of the clock stage (``clock.run_clock``).
    ``extra``: further mails ``(msg, meta)`` that the same save records (the
    clock's reminders and notices), spooled first in the same batch; ``status``
    False: those only (the status mails left to ``notify_all``).  Returns False
    (nothing spooled, nothing saved) when there was nothing new and no
    ``extra``.  ``after_spool`` and ``after_save`` (fault points) are called
    when the batch is spooled and when the game is saved.  A player who resigned gets none until
    the end; one with ``digest on`` only when the events concern them
    (``observers.receives_status``); every observer gets the public status mail
    (``observers.observer_mail``).

    The order of the writes is what keeps a crash from losing or repeating a
    status mail: (1) every player's and observer's mail is spooled in one batch
    (``Spool.add_many``), each naming the stale ones it replaces and the log
    entries it tells (``log_from``, ``log_to``); (2) the game file is saved with
    ``notified`` = ``log_to``; (3) the stale mails are removed.  A crash before
    (2) leaves mails telling of events the saved game does not have: ``sweep``
    drops them before anything is sent (the stale ones they named come back);
    a crash after (2) leaves stale mails that the spool drops as replaced.  If
    the save fails, the new mails are removed again and the error raised.
    ``extra`` mails tell no log entries: the save raises ``record.mail_batch``
    by one and each of them names that batch (``batch``), so that ``sweep``
    tells the same way whether their save happened (their batch is beyond the
    file's ``mail_batch``: it did not).  A kill at any moment thus sends every
    mail the saved game owes, at worst twice, never none.

    One mail per player per cycle: ``news`` (``deadlines.Notice`` values of the
    same save to players, the clock's) become lines of the status mail of their
    reader when this batch has one for them; ``loose`` makes the mails of the
    others (``[(msg, meta)]``, spooled with ``extra``).  A status mail also
    takes in the unsent clock notices to its reader spooled earlier in the
    cycle (``catch_up``, a vacation, the outage shift) and the news of the
    stale status mail it replaces, naming them in ``replaces`` as it names a
    stale status mail: removed once the save is done, back if it is dropped.
    Raises OSError/StoreError as ``GameStore.save``."""
    events = record.unnotified if status else []
    news = list(news)
    if not events and not extra and not news:
        return False
    taken: set[int] = set()
    batch = _status_batch(post, record, events, news, taken) if events else ([], [], len(record.game.events))
    mails, replaced, end = batch
    extra = list(extra)
    # a notice to a player whose status mail of this cycle is spooled already: that mail anew, with it
    renewed, gone = _renewed(post, record, [n for n in news if id(n) not in taken], taken)
    extra += renewed
    left = [n for n in news if id(n) not in taken]
    if left:
        if loose is None:
            raise ValueError("spool_status: notices that no status mail takes in, and no way to mail them")
        extra += loose(left)
    if extra:
        record.mail_batch += 1
        extra = [(msg, {**meta, "batch": record.mail_batch}) for msg, meta in extra]
    names = post.spool.add_many(extra + mails, post.clock())
    if after_spool is not None:
        after_spool()
    notified, reply_to = record.notified, record.reply_to
    if events:
        record.notified = end
        record.reply_to = {}
    try:
        store.save(record)
    except Exception:  # a kill runs nothing here: ``sweep`` drops them then
        record.notified, record.reply_to = notified, reply_to
        if extra:
            record.mail_batch -= 1
        for name in names:  # not sent with events the game file does not have
            post.spool.remove(name)
        raise
    if after_save is not None:
        after_save()
    if events:
        for p in record.players:
            if not p.address:
                continue
            post.bk.clear_bounce(canonical_address(p.address))
    for name, _ in replaced + gone:
        post.spool.remove(name)
    return True


def _renewed(post: Post, record: GameRecord, news: list, taken: set[int]
             ) -> tuple[list[tuple[EmailMessage, dict]], list[tuple[str, dict]]]:
    """For ``spool_status``: the status mails, worded anew with ``news``
    (``deadlines.Notice``\\ s), of the players who have one unsent in the spool
    (``restatus``), and the entries they replace.  The ``id`` of each notice
    taken is added to ``taken``.  Each mail is spooled as one of ``extra`` (the
    save's ``batch``): when the save does not happen, ``sweep`` drops it and
    the mail it replaced comes back."""
    if not news:
        return [], []
    view = spooled.view(post.spool)
    stale = view.stale_status(record.id)
    pending = view.pending_notices(record.id)
    out, gone = [], []
    for p in record.players:
        mine = [n for n in news if n.player == p.name and p.address
                and canonical_address(n.to) == canonical_address(p.address)]
        older = stale.get(p.name, [])
        if not mine or not older:
            continue
        built = restatus(post, record, p, older, pending.get(p.name, []), [n.to_data() for n in mine])
        if built is None:
            continue
        out.append(built)
        gone += older + pending.get(p.name, [])
        taken.update(id(n) for n in mine)
    return out, gone


def restatus(post: Post, record: GameRecord, player: Player, older: list[tuple[str, dict]],
             notices: list[tuple[str, dict]] = (), more: list[dict] = ()) -> tuple[EmailMessage, dict] | None:
    """``player``'s unsent status mail (the spool entries ``older``, oldest
    first, as ``spooled.SpoolView.stale_status`` gives them) made anew as one,
    in their language now: the events ``log_from``-``log_to`` they told, the
    news they carried, then the clock notices spooled alone ``notices``
    (``pending_notices``) and ``more`` (``Notice.to_data``); it answers the
    mail the last one answered.  Returns ``(msg, meta)``, its meta naming every
    entry it replaces; None for entries of an older pbem (no ``log_from``/``log_to``)."""
    starts = [m.get("log_from") for _, m in older]
    ends = [m.get("log_to") for _, m in older]
    if not older or not all(isinstance(x, int) and not isinstance(x, bool) for x in starts + ends):
        return None
    start, end = min(starts), max(ends)
    told = [item for _, m in older for item in m.get("news") or []]
    told += [{"notice": m["notice"], "values": m["values"], "raw": m.get("raw") or {}} for _, m in notices]
    told += list(more)
    drawn = [(share, swapped) for at, who, share, swapped in record.game.stack_draws()
             if who == player.name and start <= at < end]
    msg = status_mail(post, record, player, record.game.events[start:end], _answered_by(post, older[-1][0]),
                      drawn=drawn, news=told, again=True)
    meta = {**older[-1][1], "log_from": start, "log_to": end, "replaces": [n for n, _ in [*older, *notices]]}
    meta.pop("news", None)
    meta.pop("batch", None)
    meta.pop("digest", None)  # it carries a notice to them: at once (moderation/digest.py)
    if told:
        meta["news"] = told
    return msg, meta


def _answered_by(post: Post, name: str) -> str | None:
    """The Message-ID spooled status mail ``name`` answers (``In-Reply-To`` of a
    mail ``Auto-Submitted: auto-replied``), None when it continues the thread
    or cannot be read."""
    from email.parser import BytesParser
    from email import policy

    try:
        with open(post.spool.dir / f"{name}.eml", "rb") as fh:
            msg = BytesParser(policy=policy.default).parse(fh, headersonly=True)
    except OSError:
        return None
    if str(msg.get("Auto-Submitted", "")).strip().lower() != "auto-replied":
        return None
    value = msg.get("In-Reply-To")
    return str(value).strip() if value else None


def _status_batch(post: Post, record: GameRecord, events: list[str], news: list = (),
                  taken: set[int] | None = None
                  ) -> tuple[list[tuple[EmailMessage, dict]], list[tuple[str, dict]], int]:
    """The status mails of ``events`` (``record.unnotified``) for ``spool_status``:
    ``(mails [(msg, meta)], the stale entries they replace [(name, meta)], the
    log length they tell up to)``.  ``news``: the batch's notices to players;
    the ``id`` of each one a status mail takes in is added to ``taken``."""
    from .digest import holds
    from .observers import observer_mail, receives_status

    end = len(record.game.events)
    view = spooled.view(post.spool)
    stale = view.stale_status(record.id)  # one listing for every player
    pending = view.pending_notices(record.id)
    draws = record.game.stack_draws()  # one replay; each player's own draws since their last mail
    # who was on move before these events (a digest reader hears of their own move)
    waiting_before = {h["player"] for h in record.history[len(record.history) - 1:]} if record.history else set()
    batch, replaced = [], []
    boards: dict[str, list[str]] = {}  # the board in words, once per language
    for p in record.players:
        if not p.address:  # a seat of the built-in player gets no mail
            continue
        # Events are taken from the game log by position, so a status spooled
        # twice (a crash before ``notified`` was saved) does not repeat them.
        older = stale.get(p.name, [])
        starts = [m.get("log_from") for _, m in older]
        if all(isinstance(x, int) for x in starts):
            start = min([*starts, record.notified])
            mine = record.game.events[start:]
        else:  # entries spooled by an older version
            start = record.notified
            mine = [_event_of(ev) for _, m in older for ev in m.get("events") or []] + events
        if not older and not receives_status(record, p, mine, waiting_before):
            continue  # resigned, or digest on and nothing concerns them
        # the moderator's own news to them this cycle: of the stale mails, spooled alone, this batch's
        notices = pending.get(p.name, [])
        told = [item for _, m in older for item in m.get("news") or []]
        told += [{"notice": m["notice"], "values": m["values"], "raw": m.get("raw") or {}} for _, m in notices]
        for n in news:
            if n.player == p.name and canonical_address(n.to) == canonical_address(p.address):
                told.append(n.to_data())
                if taken is not None:
                    taken.add(id(n))
        # the order mail this answers: this batch's, else that of an unsent mail it replaces (the
        # built-in player moved after the order in the same cycle: the answer still replies to it)
        answers_mail = record.reply_to.get(p.name) or next(
            (m["in_reply_to"] for _, m in reversed(older) if m.get("in_reply_to")), None)
        meta = {"kind": "status", "game": record.id, "player": p.name, "events": _meta_events(mine), "answers": None,
                "log_from": start, "log_to": end, "replaces": [name for name, _ in older + notices]}
        if answers_mail:
            meta["in_reply_to"] = answers_mail
        if told:
            meta["news"] = told
        if holds(post.bk, record, p, answers_mail, told):  # for their daily digest (issue 28)
            meta["digest"] = canonical_address(p.address)
        drawn = [(share, swapped) for at, who, share, swapped in draws if who == p.name and at >= start]
        batch.append((status_mail(post, record, p, mine, answers_mail, drawn=drawn,
                                  boards=boards, news=told, again=bool(older or notices)), meta))
        # again: it replaces unsent mails, a clock notice alone too (the built-in player's move for
        # the missed deadline carried the cancellation of its event; a breaker's check)
        replaced += older + notices
    watching = view.stale_observer(record.id)
    for address in record.observers:
        # one public mail per observer per cycle: an unsent one of this cycle is merged in, as a player's
        older = watching.get(canonical_address(address), [])
        start = min([record.notified, *(m["log_from"] for _, m in older)])
        seen = record.game.events[start:] if older else events
        batch.append((observer_mail(post, record, address, seen),
                      {"kind": "observer", "game": record.id, "player": None, "events": _meta_events(seen),
                       "answers": None, "log_from": start, "log_to": end, "observer": canonical_address(address),
                       "replaces": [name for name, _ in older]}))
        replaced += older
    return batch, replaced, end


def _meta_events(events: list) -> list:
    """A status mail's events as its spool entry keeps them (JSON): each event
    as its mapping (``moderator.rules.events.to_data``), a text as it is."""
    return [event_to_data(e) if isinstance(e, Event) else e for e in events]


def _event_of(entry: object) -> object:
    """An event of a spool entry's ``events`` (``_meta_events``) back as a value;
    a text (an entry of an older pbem: its English sentence) as it is."""
    if isinstance(entry, dict):
        try:
            return event_from_data(entry)
        except ValueError:
            return str(entry)
    return entry


def sweep(post: Post) -> list[str]:
    """Drop the spooled mails that a save prevented by a crash was to record:
    status mails that tell of events their game's file does not have
    (``log_to`` beyond the indexed ``log_length``), spooled by ``spool_status``
    just before that save (the order mail is still in the inbox and is applied
    again, with its status mails), and mails of a batch beyond the file's
    ``mail_batch`` (the clock's notices, an undo's mails: the clock owes them
    again and makes them anew).  Mails ``owed`` (status mails whose events an
    undo took back after they were saved, see ``gm``) are sent as they are.
    Reads the entries' files as they are, so that stale mails named by a
    dropped one come back (``Spool.entries`` would remove them as replaced).
    Call after the games index is synced and before anything else reads the
    spool.  Returns the names dropped; games not indexed (or whose file cannot
    be read) and entries without ``log_to`` or ``batch`` are left alone."""
    dropped = []
    batches: dict[str, int | None] = {}  # game -> its file's mail_batch, read once
    for meta_path in sorted(post.spool.dir.glob("*.json")):
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict):
            continue
        gid = str(meta.get("game"))
        if isinstance(meta.get("batch"), int) and not isinstance(meta.get("batch"), bool):
            if gid not in batches:
                batches[gid] = _file_batch(post, gid)
            saved = batches[gid]
            if saved is None or meta["batch"] <= saved:
                continue
            log.warning("game %s: dropped the %s mail %s to %s: spooled with a save that did not happen "
                        "(batch %d; the game file's last is %d); the clock owes it again", gid,
                        meta.get("notice") or meta.get("kind"), meta_path.stem, meta.get("player") or "the game master",
                        meta["batch"], saved)
        elif meta.get("kind") in ("status", "observer") and isinstance(meta.get("log_to"), int) \
                and not meta.get("owed"):
            entry = post.bk.game(gid)
            if entry is None or entry.error is not None or meta["log_to"] <= entry.log_length:
                continue
            log.warning("game %s: dropped the status mail %s to %s: it tells events %d-%d and the game file "
                        "has %d, so the save it was spooled with did not happen (or the file was put back "
                        "to an older copy since); the order mail is applied again", gid, meta_path.stem,
                        meta.get("player") or "an observer", meta.get("log_from", 0) + 1, meta["log_to"],
                        entry.log_length)
        else:
            continue
        post.spool.remove(meta_path.stem)
        dropped.append(meta_path.stem)
    return dropped


def _file_batch(post: Post, game_id: str) -> int | None:
    """The ``mail_batch`` of ``game_id``'s file (0 when it has none), None when
    the game is not indexed or its file cannot be read."""
    entry = post.bk.game(game_id)
    if entry is None or entry.error is not None:
        return None
    try:
        data = GameStore(post.config.games_dir).read_data(game_id)
    except (StoreError, OSError, ValueError):
        return None
    value = data.get("mail_batch") or 0
    return value if isinstance(value, int) else None


def load(post: Post, store: GameStore, game_id: str) -> GameRecord:
    """Load ``game_id`` (hold its lock): trusted (no comparison) when its file is
    the one the moderator last wrote, else replayed and compared in full, and then
    trusted from now on (``Bookkeeping.mark_checked``).  Raises as
    ``GameStore.load``."""
    record = store.load(game_id, trusted_digest=post.bk.trusted_digest(game_id))
    if record.checked and record.source_digest:
        post.bk.mark_checked(game_id, record.source_digest)
    return record


def _reindex(post: Post, store: GameStore, record: GameRecord) -> None:
    """The index said ``record``'s game owes mail, its file says not (the file
    changed outside the moderator since it was indexed): index the file as it is,
    so that later cycles do not load it again for nothing."""
    gf = store.read_file(record.id)
    if gf.digest == record.source_digest:  # the bytes just loaded and accepted
        post.bk.record_game(record.id, gf.data, gf.stamp, gf.digest)


def notify_all(post: Post, store: GameStore, report: CycleReport) -> None:
    """Spool status mails for every game the games index says owes them
    (``Bookkeeping.games_owing_mail``), each game in one bookkeeping transaction;
    a broken or locked game, or any error while building one game's mails, is
    reported in ``report.errors`` (and to the operator) and retried by the next
    cycle: the other games go on."""
    for gid in post.bk.games_owing_mail():
        try:
            with store.lock(gid), post.bk.transaction():
                record = load(post, store, gid)
                if not spool_status(post, store, record):
                    _reindex(post, store, record)
        except StoreError as exc:
            report.errors.append(str(exc))
        except (OSError, Timeout) as exc:
            report.errors.append(f"game {gid}: cannot spool the status mails: {exc or 'game locked'}")
            log.error("game %s: cannot spool the status mails: %s", gid, exc or "game locked")
        except sqlite3.Error:
            raise  # the bookkeeping failed: the cycle stops (its transaction rolled back)
        except Exception as exc:  # noqa: BLE001 - one game's error must never stop the others
            log.exception("game %s: cannot build the status mails", gid)
            report.errors.append(f"game {gid}: cannot build the status mails: {exc!r}")
            post.tell_operator(word("notices", "alert_game_error", game=gid, problem=repr(exc)))
