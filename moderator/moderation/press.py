"""Press: the players' messages to each other, relayed by the moderator (issue 29).

A player's mail may carry, below its orders and commands, messages that start
with a line ``to NAME:`` (a seat's name; several separated by commas) or ``to
all:`` and run to the next such line or to the end of the player's own text (the
quoted history, signature and gateway notices removed by ``mail/read.py``).  The
words are those of every language the product reads (``orders.languages.PRESS_WORDS``;
``to``/``a``/``an``/``pro``/``给`` and ``all``/``todos``/``alle``/``všichni``/``所有人``).
A reply to a relayed message without such a line is a message to its sender
seat only.

``split_press`` (pure) reads the messages out of a mail; ``relay`` (called by
``act`` for the verdict's ``press``) checks each against the game's press rule
(``settings.press``: ``none``, ``public`` (only ``to all``), ``private`` (both;
the default)), the game master's ``mute``, the limits (``MAX_PRESS_CHARS``,
``PRESS_PER_DAY``), spools one mail per recipient from the seat's name (the From
address is the moderator's; text only), in the recipient's thread and
language, a copy to the observers for ``to all`` and to the game master for
every message, records it in ``GameRecord.press`` (the rules engine never sees
it) and answers the sender once, saying who got what.  In the row of
``notify`` and ``seats`` (docs/architecture.md): it imports ``send``,
``announce``, ``deadlines`` and ``faults``; ``decide``, ``act``, ``commands``,
``create`` and ``gm`` import it.
"""
from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Iterable, Sequence

from .. import i18n
from ..mail.read import OrderMail, canonical_address
from ..render import render
from ..render.words import word
from ..store.gamefile import GameRecord, GameStore, Player
from . import faults
from .announce import gm_token
from .deadlines import game_master_address
from .send import Post, thread_of

log = logging.getLogger("pbem")

PRESS_RULES = ("none", "public", "private")
"""``settings.press``: no press; only ``to all``; ``to all`` and ``to NAME``."""
DEFAULT_PRESS = "private"
"""The press rule of a game whose settings name none (every game before issue 29)."""
ARCHIVE_RULES = ("never", "after-end", "always")
"""``settings.press_archive``: when the archive site shows a game's press."""
DEFAULT_ARCHIVE = "never"
"""The archive rule of a game whose settings name none: press stays private."""

MAX_PRESS_CHARS = 4000
"""The longest message relayed, in characters (after the quoted history and the
signature are removed): about a page of text.  A longer one is not relayed and
the sender is told both numbers."""
PRESS_PER_DAY = 20
"""The most messages one seat may send per UTC day (a message to several seats
counts once; counted from the game file's ``press``)."""

ALL = "all"
"""``Draft.to`` of a message to everyone (``to all``)."""

_SEPARATORS = re.compile(r"\s*(?:[,，、;]|\s&\s)\s*")
_ADDRESS = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def press_rule(record: GameRecord) -> str:
    """The game's press rule (one of ``PRESS_RULES``; ``DEFAULT_PRESS`` when unset)."""
    rule = record.settings.get("press")
    return rule if rule in PRESS_RULES else DEFAULT_PRESS


def archive_rule(record: GameRecord) -> str:
    """The game's press-archive rule (one of ``ARCHIVE_RULES``; ``DEFAULT_ARCHIVE`` when unset)."""
    rule = record.settings.get("press_archive")
    return rule if rule in ARCHIVE_RULES else DEFAULT_ARCHIVE


def check_press_settings(press: str | None, archive: str | None) -> dict[str, str]:
    """The settings keys ``press`` and ``press_archive`` for a new game (``pbem new``,
    ``pbem open``), their defaults for None.  Raises ValueError naming the choices
    for an unknown value."""
    press = DEFAULT_PRESS if press is None else str(press).strip().lower()
    archive = DEFAULT_ARCHIVE if archive is None else str(archive).strip().lower()
    if press not in PRESS_RULES:
        raise ValueError(f"press rule {press!r}: choose {', '.join(PRESS_RULES)}")
    if archive not in ARCHIVE_RULES:
        raise ValueError(f"press archive rule {archive!r}: choose {', '.join(ARCHIVE_RULES)}")
    return {"press": press, "press_archive": archive}


def archive_shows(record: GameRecord) -> bool:
    """Whether the archive site shows ``record``'s press now: ``always``, or
    ``after-end`` once the game is over (the final dividend paid or ended by the
    game master)."""
    rule = archive_rule(record)
    over = record.game.phase == "over" or record.ended is not None
    return rule == "always" or (rule == "after-end" and over)


# ------------------------------------------------------------------ reading


@dataclass(frozen=True)
class Draft:
    """One message as the player wrote it: ``to`` (seat names as the game spells
    them, or ``(ALL,)``), ``text`` (lines joined with ``\\n``), ``line`` (the
    ``to ...:`` line, ``""`` for a reply without one), ``unknown`` (names of the
    line that are no seat), ``reply`` (the reply to a relayed message, to its
    sender)."""

    to: tuple[str, ...]
    text: str
    line: str = ""
    unknown: tuple[str, ...] = ()
    reply: bool = False


@dataclass(frozen=True)
class Split:
    """A mail read for press: ``lines`` and ``kinds`` (``OrderMail.lines`` and
    ``kinds``) above the first message, the ``drafts`` below, and ``attachments``
    (how many the mail had: never relayed)."""

    lines: tuple[str, ...]
    kinds: tuple[str, ...]
    drafts: tuple[Draft, ...]
    attachments: int = 0


@lru_cache(maxsize=None)
def _words() -> tuple[frozenset[str], frozenset[str], dict[str, frozenset[str]]]:
    """The folded words of ``PRESS_WORDS``: every language's ``to`` and ``all``
    words, and each language's own ``to`` words (English's included in each)."""
    from ..orders.languages import PRESS_WORDS
    from ..i18n import fold

    to = frozenset(fold(w) for words in PRESS_WORDS.values() for w in words["to"])
    every = frozenset(fold(w) for words in PRESS_WORDS.values() for w in words["all"])
    own = {lang: frozenset(fold(w) for w in [*PRESS_WORDS["en"]["to"], *words["to"]])
           for lang, words in PRESS_WORDS.items()}
    return to, every, own


def header(line: str, seats: Sequence[str], language: str = i18n.DEFAULT
           ) -> tuple[tuple[str, ...], tuple[str, ...], str] | None:
    """``(to, unknown, rest)`` when ``line`` starts a message: ``to NAME[, NAME]:``
    or ``to all:`` (the words of any language of ``PRESS_WORDS``; names
    regardless of case and accents, ``names.find``), ``rest`` the text after the
    colon; None when it does not.  A line whose names are no seat is a header only
    when it names one seat too, or when its one name is close to a seat's
    (``names.nearest``) and it uses the English word or the words of ``language``:
    then ``unknown`` lists them (the message is refused, not relayed)."""
    from ..orders.names import find, nearest
    from ..i18n import fold

    text = unicodedata.normalize("NFKC", line).strip()
    m = re.match(r"^(\S+?)(?:\s+|(?<=[\u3400-\u9fff]))(?P<names>[^:]{1,200}?)\s*:\s*(?P<rest>.*)$", text) \
        or re.match(r"^(给|致|发给|寄给)(?P<names>[^:]{1,200}?)\s*:\s*(?P<rest>.*)$", text)
    if not m:
        return None
    to_words, every, own = _words()
    verb = fold(m.group(1))
    if verb not in to_words:
        return None
    names = [n.strip() for n in _SEPARATORS.split(m.group("names").strip()) if n.strip()]
    if not names or len(names) > 12:
        return None
    found, unknown = [], []
    for n in names:
        if fold(n) in every:
            found.append(ALL)
            continue
        hit = find(n, list(seats))
        (found if hit else unknown).append(hit or n)
    if unknown and not found:
        if len(unknown) != 1 or verb not in own.get(language, own["en"]) or len(unknown[0].split()) > 2 \
                or not nearest(unknown[0], list(seats)):
            return None
    to = (ALL,) if ALL in found else tuple(dict.fromkeys(found))
    return to, tuple(unknown), m.group("rest").strip()


def split_press(om: OrderMail, seats: Sequence[str], language: str = i18n.DEFAULT,
                reply_to: str | None = None, orders_above: Any = None) -> Split | None:
    """The messages of mail ``om`` (``OrderMail.text_lines``, blank lines kept,
    with its ``lines`` and ``kinds``) for a game of ``seats``; None when it has
    none.  ``reply_to``: the seat whose relayed message ``om`` answers (found by
    ``replied_seat``): then the text above the first ``to ...:`` line is a
    message to that seat unless ``orders_above(lines)`` says those lines hold
    orders or commands.  Gateway notices and a sign-off's signature at the end
    are not relayed (``_text``)."""
    text_lines = list(getattr(om, "text_lines", None) or [])
    if len([t for t in text_lines if t]) != len(om.lines):
        text_lines = list(om.lines)  # an OrderMail made without them (a test, an older reader)
    kinds = list(om.kinds) if len(om.kinds) == len(om.lines) else ["text"] * len(om.lines)
    rows: list[tuple[str, str, str]] = []  # (the order line, the line as written, its kind; "blank")
    j = 0
    for written in text_lines:
        if written:
            rows.append((om.lines[j], written, kinds[j]))
            j += 1
        else:
            rows.append(("", "", "blank"))
    starts = []
    for i, (line, _, kind) in enumerate(rows):
        if kind != "blank":
            h = header(line, seats, language)
            if h is not None:
                starts.append((i, h))
    first = starts[0][0] if starts else len(rows)
    above = [r for r in rows[:first] if r[2] != "blank"]
    drafts: list[Draft] = []
    if reply_to is not None and above and not (orders_above and orders_above([r[0] for r in above])):
        drafts.append(Draft((reply_to,), _text(rows[:first]), reply=True))
        above = []
    for n, (i, (to, unknown, rest)) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(rows)
        written = re.split(r"[:\uff1a]", rows[i][1], maxsplit=1)
        rest = written[1].strip() if len(written) == 2 and written[1].strip() else rest
        body = ([(rest, rest, "text")] if rest else []) + rows[i + 1:end]
        drafts.append(Draft(to, _text(body), line=rows[i][0], unknown=unknown))
    if not drafts:
        return None
    return Split(tuple(r[0] for r in above), tuple(r[2] for r in above), tuple(drafts),
                 int(getattr(om, "attachments", 0) or 0))


def _text(rows: Iterable[tuple[str, str, str]]) -> str:
    """The text of a message from its rows: gateway notices left out, and the
    signature below a sign-off at its end ("Cheers, / Ann Smith / +1 555 ..."; the
    reader's ``signature`` kind is a guess, so a line of that kind inside the
    text is kept), blank lines at either end dropped, runs of blank lines made one."""
    rows = [r for r in rows if r[2] != "notice"]
    end = len(rows)
    while end and rows[end - 1][2] in ("signature", "blank"):
        end -= 1
    if end < len(rows) and end and rows[end - 1][2] == "signoff":
        rows = rows[:end]
    out: list[str] = []
    for _, line, kind in rows:
        if not line and (not out or not out[-1]):
            continue
        out.append(_UNSAFE.sub("", line))
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def replied_seat(om: OrderMail, record: GameRecord, seat: str) -> str | None:
    """The seat whose relayed message ``om`` (from ``seat``) answers: a Message-ID
    of its In-Reply-To or References is one the press mail to ``seat`` had
    (``GameRecord.press`` entries' ``mids``); None when it answers none."""
    refs = {r for r in om.thread_refs if r}
    if not refs:
        return None
    for entry in reversed(record.press):
        if (entry.get("mids") or {}).get(seat) in refs and entry.get("from") != seat:
            sender = str(entry.get("from"))
            return sender if any(p.name == sender for p in record.players) else None
    return None


def done(record: GameRecord, key: str) -> bool:
    """Whether the press of mail ``key`` was relayed already (an interrupted cycle)."""
    return any(e.get("key") == key for e in record.press) or \
        any(e.get("command") == "press" and e.get("mail") == key for e in record.gm_log)


# ------------------------------------------------------------------ relaying


def sent_today(record: GameRecord, seat: str, now: datetime) -> int:
    """How many messages ``seat`` sent on ``now``'s UTC day (``GameRecord.press``)."""
    day = now.date().isoformat()
    return sum(1 for e in record.press if e.get("from") == seat and str(e.get("at", ""))[:10] == day)


def display_name(seat: str) -> str:
    """``seat`` as a From display name: control, line-break and bidi-override
    characters removed (the header cannot be split or shown reversed), and an
    RFC 2047 encoded-word's opening ``=?`` written ``= ?`` (an ASCII name is put
    in the header as it is, and mail programs would decode ``=?utf-8?q?Bob?=``
    into another seat's name; Mailsploit), and ``@`` written `` at `` (an address
    in a display name is what phishing does: providers file such mail as spam,
    and some programs show it as the sender; anonaddy/anonaddy#137)."""
    name = _UNSAFE.sub("", seat).replace("=?", "= ?").replace("@", " at ")
    return " ".join(name.split()) or "?"


def masked(text: str, record: GameRecord, config: Any = None) -> str:
    """``text`` with every address of the game (players, observers, game master)
    replaced by ``[address]``: a relayed text never carries one."""
    known = {canonical_address(p.address) for p in record.players if p.address}
    known |= {canonical_address(a) for a in record.observers}
    gm = game_master_address(record, config) if config is not None else None
    if gm:
        known.add(canonical_address(gm))
    return _ADDRESS.sub(lambda m: "[address]" if canonical_address(m.group(0)) in known else m.group(0), text)


def problem(record: GameRecord, sender: Player, draft: Draft, now: datetime, sent: int) -> tuple[str, dict] | None:
    """Why ``draft`` from ``sender`` is not relayed (a macro of
    ``templates/words/press.txt`` and its values), or None: the press rule, a
    mute, names that are no seat, no other reader, an empty or too long text,
    the day's limit (``sent``: messages relayed today before this one)."""
    rule = press_rule(record)
    if rule == "none":
        return "refused_none", {}
    if sender.name in record.muted:
        return "refused_muted", {}
    if draft.unknown:
        return "refused_unknown", {"names": ", ".join(draft.unknown), "seats": ", ".join(p.name for p in record.players)}
    if draft.to == (sender.name,):
        return "refused_self", {}
    if draft.to != (ALL,) and rule == "public":
        return "refused_public", {}
    if not draft.text.strip():
        return "refused_empty", {}
    if len(draft.text) > MAX_PRESS_CHARS:
        return "refused_long", {"length": len(draft.text), "limit": MAX_PRESS_CHARS}
    if sent >= PRESS_PER_DAY:
        return "refused_daily", {"limit": PRESS_PER_DAY}
    if not readers(record, sender, draft) and not (draft.to == (ALL,) and record.observers):
        names = [p.name for p in record.players if p.name != sender.name] if draft.to == (ALL,) else draft.to
        return "refused_no_reader", {"names": ", ".join(names)}
    return None


def readers(record: GameRecord, sender: Player, draft: Draft) -> list[Player]:
    """The seats that get ``draft``: those it names (every other seat for ``to
    all``) that have an address and did not resign; never the sender."""
    names = [p.name for p in record.players] if draft.to == (ALL,) else list(draft.to)
    out = []
    for p in record.players:
        if p.name in names and p.name != sender.name and p.address and p.name not in record.resigned:
            out.append(p)
    return out


def relay(post: Post, store: GameStore, om: OrderMail, key: str, record: GameRecord, seat: str,
          drafts: Sequence[Draft], attachments: int = 0) -> list[dict[str, Any]]:
    """Relay ``drafts`` of mail ``om`` (mail id ``key``) from ``seat`` of
    ``record``'s game (loaded and locked): each allowed one (``problem``) as a
    mail to each reader (``readers``) in their thread and language, from the
    seat's name; ``to all`` also to the observers when the rule allows; a copy
    to the game master (English frame).  The mails are spooled as one batch
    with the save that records them (``GameRecord.press``; ``notify.sweep``
    drops the batch of a save a crash prevented; crash point ``press-spooled``),
    the sender's one answer among them (``templates/words/press.txt``: who got
    each message, why one was not relayed, that attachments were not).  Returns the entries recorded.
    Raises OSError/StoreError when the game cannot be saved."""
    sender = record.player_by_name(seat)
    now = post.clock()
    at = now.isoformat(timespec="seconds")
    sent = sent_today(record, seat, now)
    results: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    batch, puts = record.mail_batch + 1, post.puts
    post.tags["batch"] = batch
    try:
        for draft in drafts:
            why = problem(record, sender, draft, now, sent)
            if why is not None:
                results.append({"draft": draft, "refused": why})
                continue
            text = masked(draft.text, record, post.config)
            entry: dict[str, Any] = {"key": key, "from": seat, "to": ALL if draft.to == (ALL,) else list(draft.to),
                                     "at": at, "text": text}
            if draft.reply:
                entry["reply"] = True
            mids: dict[str, str] = {}
            got = readers(record, sender, draft)
            for p in got:
                mids[p.name] = _to_seat(post, record, sender, p, draft, text)
            observers = 0
            if draft.to == (ALL,):
                for address in record.observers:
                    _to_observer(post, record, sender, address, text)
                    observers += 1
            _to_gm(post, record, sender, draft, text, [p.name for p in got], observers)
            entry["mids"] = mids
            if observers:
                entry["observers"] = observers
            entries.append(entry)
            sent += 1
            results.append({"draft": draft, "got": [p.name for p in got], "observers": observers})
        _confirm(post, om, key, record, sender, results, attachments)
    finally:
        post.tags.pop("batch", None)
    if post.puts > puts:
        record.mail_batch = batch
    record.press.extend(entries)
    if not entries:  # nothing relayed: the mail's press is still done once
        record.gm_log.append({"by": canonical_address(sender.address), "at": at, "command": "press",
                              "mail": key, "relayed": 0})
    faults.fault("press-spooled")  # the relayed mails and the answer spooled, the game not saved
    store.save(record)
    for e in entries:
        log.info("game %s: press from %s to %s relayed", record.id, seat,
                 e["to"] if e["to"] == ALL else ", ".join(e["to"]))
    return entries


def _to_seat(post: Post, record: GameRecord, sender: Player, reader: Player, draft: Draft, text: str) -> str:
    thread = thread_of(record, reader)
    with i18n.speaking(record.language_of(reader)):
        others = [n for n in (p.name for p in readers(record, sender, draft)) if n != reader.name]
        body = word("press", "relayed", seat=sender.name, game_id=record.id, text=text,
                    to_all=draft.to == (ALL,), others=", ".join(others), reply=draft.reply,
                    public=(record.settings.get("press") or "private") == "public")
        name = word("press", "from_name", seat=display_name(sender.name), game_id=record.id)
        msg = post.message(record.id, reader.address, thread.subject, body, in_reply_to=thread.thread,
                           references=[thread.thread] if thread.thread else [], auto="auto-generated",
                           token=thread.token, from_name=name)
    post.put(msg, kind="press", game=record.id, player=reader.name)
    return str(msg["Message-ID"])


def _to_observer(post: Post, record: GameRecord, sender: Player, address: str, text: str) -> None:
    with i18n.speaking(record.language):
        title = word("press", "observer_title", seat=display_name(sender.name))
        body = word("press", "relayed_observer", seat=sender.name, game_id=record.id, text=text)
        name = word("press", "from_name", seat=display_name(sender.name), game_id=record.id)
        msg = post.message(record.id, address, word("notices", "subject", game_id=record.id, title=title), body,
                           auto="auto-generated", from_name=name)
    post.put(msg, kind="press", game=record.id)


def _to_gm(post: Post, record: GameRecord, sender: Player, draft: Draft, text: str, got: list[str],
           observers: int) -> None:
    """The game master's copy (they read all press), in English; none when the game
    master is the sender or one of the readers (they have it already)."""
    gm = game_master_address(record, post.config)
    if not gm:
        return
    taken = {canonical_address(p.address) for p in record.players if p.name in got or p.name == sender.name}
    if gm in taken:
        return
    with i18n.speaking(i18n.DEFAULT):
        title = word("press", "gm_title", seat=display_name(sender.name))
        body = word("press", "gm_copy", seat=sender.name, to_all=draft.to == (ALL,), got=", ".join(got) or "-",
                    observers=observers, text=text, game_id=record.id)
        post.put(post.message(record.id, gm, word("notices", "subject", game_id=record.id, title=title),
                              render("gm_notice.txt", game_id=record.id, text=body, secret=None),
                              token=gm_token(record), auto="auto-generated"),
                 kind="gm", game=record.id)


def _confirm(post: Post, om: OrderMail, key: str, record: GameRecord, sender: Player,
             results: list[dict[str, Any]], attachments: int) -> None:
    """The sender's one answer: per message who got it, or why it was not relayed."""
    with i18n.speaking(record.language_of(sender)):
        lines = []
        for r in results:
            d: Draft = r["draft"]
            head = d.line or word("press", "reply_line", seat=d.to[0])
            head = head if len(head) <= 70 else head[:69].rstrip() + "\u2026"  # the line as written, cut
            if "refused" in r:
                code, values = r["refused"]
                lines.append({"line": head, "text": word("press", code, **values)})
            else:
                lines.append({"line": head, "text": word("press", "delivered", names=", ".join(r["got"]),
                                                         observers=r["observers"])})
        ok = sum(1 for r in results if "refused" not in r)
        message = word("press", "confirmation", results=lines, attachments=attachments)
        title = word("press", "confirmation_title", n=ok, total=len(results))
        if not post.allow(sender.address, title):
            return
        thread = thread_of(record, sender)
        text = render("reply.txt", game_id=record.id, title=title, message=message, quoted=[], omitted=0,
                      legal=[], unchanged=False, position="", game_over=False)
        # as ``Post.reply`` does, with the game named: ``notify.sweep`` drops it with its batch
        post.put(post.answer(om, record.id, sender.address, thread.subject, text, token=thread.token,
                             thread=thread.thread), answers=key + "#press", game=record.id, player=sender.name)


# ------------------------------------------------------------------ the game master


def mute(record: GameRecord, seat: str, on: bool) -> bool:
    """Mute (``on``) or unmute ``seat`` (a name as the game spells it): a muted
    seat's messages are not relayed (the sender is told).  Returns whether it
    changed anything."""
    if on and seat not in record.muted:
        record.muted.append(seat)
        return True
    if not on and seat in record.muted:
        record.muted.remove(seat)
        return True
    return False
