"""Open games and sign-up by mail (issue 27): ``pbem open``, ``games``, ``join``,
``leave``, confirmation by reply, the waiting list, the start and the expiry.

An open game is not yet a game file: it lives in the bookkeeping database
(``open_games``, its people in ``signups``, ``store/bookkeeping.py``, schema 3)
until it starts, so that each mail's change is committed in the same
transaction as the mail's move out of the inbox (``inbox.poll``): a crash
leaves all of it or none.  At the start the game file is written as by ``pbem
new`` (``create.new_game``, ``create.welcome``: everyone's welcome with their
secret and hand), with ``players[i].joined`` and the ``signup`` mapping
(docs/game-file.md, "Format 5: signup").

Mail from anyone to the moderator's address (``handle``, before routing):

``games``
    the open games in words and the sender's own running games;
``join GAME`` / ``join GAME as NAME``
    answered by a confirmation mail that holds nothing but the confirmation;
    its Message-ID carries a token (``mail.threads.thread_token`` of the
    sign-up's secret and the game id), and only a reply from the same
    address naming it takes the seat (the reply's text may be just
    ``confirm``, or nothing);
``leave GAME``
    before the start, confirmed the same way; a seat freed goes to the first
    of the waiting list, who has ``OFFER_SECONDS`` to confirm.

Every answer of this module is limited to ``PER_ADDRESS_PER_DAY`` per address
and ``ALL_PER_DAY`` in all per UTC day (``Post.daily``) and to the per-cycle
limit of replies (``Post.allow``); machine mail never reaches it
(``decide.screen``).  No answer names another person's address.

The clock stage (``run_clock``): an open game whose start date came starts
with at least its minimum of seats, else its game master is asked to extend
or cancel (``pbem signup extend|cancel``); one not started by its expiry
closes and its people are told; an offer not confirmed within a day lapses
and goes to the next in line.
"""
from __future__ import annotations

import logging
import random
import re
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable

from .. import i18n
from ..i18n import fold
from ..mail.read import OrderMail, canonical_address, player_address
from ..mail.threads import thread_token, tokens_in
from ..render.words import word
from ..rules.options import IMAGINARY, MAX_NAME_LENGTH, MAX_PLAYERS, MIN_PLAYERS
from ..store import GAME_ID_PATTERN
from ..store.gamefile import GameStore
from . import create, faults
from .deadlines import next_event
from .report import CycleReport
from .route import referenced_game
from .send import Post

log = logging.getLogger("pbem")

PER_ADDRESS_PER_DAY = 10
"""Answers of sign-up mail to one address per UTC day (``games``, ``join``,
``leave``, confirmations, refusals alike); beyond it the mail is filed unanswered."""
ALL_PER_DAY = 500
"""Answers of sign-up mail to all addresses together per UTC day."""
OFFER_SECONDS = 86400
"""How long a freed seat offered to the first of the waiting list waits for the confirmation."""
EXPIRE_DEFAULT = 30 * 86400
"""An open game not started this many seconds after ``pbem open`` closes (``--expire``)."""

OPEN_STATES = ("open", "extend")
"""States of an open game that take sign-ups (``extend``: its start date passed
short of seats; the game master is asked)."""
HOLDING = ("asked", "seated", "waiting", "offered")
"""Sign-up states that hold a name in the game."""

# the words of the commands, by language (the answer is written in it)
WORDS: dict[str, dict[str, str]] = {
    "games": {"games": "en", "partidas": "es", "juegos": "es", "spiele": "de", "partien": "de",
              "hry": "cs", "游戏": "zh", "对局": "zh"},
    "join": {"join": "en", "unirse": "es", "unir": "es", "beitreten": "de", "mitspielen": "de",
             "připojit": "cs", "pripojit": "cs", "加入": "zh"},
    "leave": {"leave": "en", "salir": "es", "dejar": "es", "verlassen": "de", "austreten": "de",
              "odejít": "cs", "odejit": "cs", "退出": "zh"},
    "confirm": {"confirm": "en", "confirmed": "en", "yes": "en", "ok": "en", "confirmar": "es",
                "confirmo": "es", "sí": "es", "si": "es", "bestätigen": "de", "bestatigen": "de",
                "bestaetigen": "de", "ja": "de", "potvrdit": "cs", "potvrzuji": "cs", "ano": "cs",
                "确认": "zh", "是": "zh"},
}
_AS = {"as", "como", "als", "jako", "名为", "作为"}
_FOLDED = {kind: {fold(w): lang for w, lang in table.items()} for kind, table in WORDS.items()}
_GAME_RE = re.compile(rf"\.pbem\.({GAME_ID_PATTERN})@")


@dataclass(frozen=True)
class Request:
    """A sign-up mail's command: ``kind`` ``games``, ``join``, ``leave`` or
    ``confirm``; ``game`` (as written) and ``name`` (``join GAME as NAME``);
    ``language``: the language of the command word (None: not told by it)."""

    kind: str
    game: str | None = None
    name: str | None = None
    language: str | None = None


def read_request(lines: Iterable[str], kinds: Iterable[str] = ()) -> Request | None:
    """The sign-up command of a mail's first line of text (``OrderMail.lines``;
    greetings, sign-offs and signatures by ``OrderMail.kinds`` skipped), or
    None when that line is none (then the mail is routed as any other)."""
    kinds = list(kinds)
    for i, line in enumerate(lines):
        if i < len(kinds) and kinds[i] in ("greeting", "signoff", "signature"):
            continue
        words = line.split()
        if not words:
            continue
        head = fold(words[0]).rstrip(".!,:")
        for kind in ("games", "join", "leave", "confirm"):
            lang = _FOLDED[kind].get(head)
            if lang is None:
                continue
            said = lang if lang != "en" else None
            if kind in ("games", "confirm") or len(words) < 2:
                return Request(kind, language=said)
            parts = line.split(None, 2)
            name = None
            if len(parts) == 3:
                tail = parts[2].split(None, 1)
                name = (tail[1] if len(tail) > 1 else "") if fold(tail[0]) in _AS else parts[2]
            return Request(kind, game=words[1].strip(".,!"), name=name, language=said)
        return None
    return None


_NOT = {fold(w) for w in ("no", "not", "don't", "dont", "never", "nein", "nicht", "kein", "ne", "nikoli",
                          "nunca", "不", "不要", "别")}


def confirms(line: str) -> bool:
    """Whether the first line of text of a reply to a confirmation mail says
    yes: a confirmation word (``WORDS["confirm"]``: ``confirm``, ``yes``,
    ``confirmar``, ``bestätigen``, ``potvrdit``, ``确认`` ...) among its first four
    words (``I confirm``, ``Yes, please``), and no word of refusal (``no``, ``not``,
    ``nein``, ``ne``, ``不`` ...).  A reply with no text at all confirms too (the
    caller's rule)."""
    words = [fold(w).strip(".!,:;") for w in line.split()]
    if any(w in _NOT for w in words):
        return False
    return any(w in _FOLDED["confirm"] for w in words[:4])


# ------------------------------------------------------------------ setup
def parse_seats(text: str) -> tuple[int, int]:
    """``(MIN, MAX)`` of ``--seats MIN-MAX`` or ``--seats N`` (2-6, MIN <= MAX).
    ValueError with a sentence otherwise."""
    lo, sep, hi = str(text).strip().partition("-")
    try:
        low, high = int(lo), int(hi) if sep else int(lo)
    except ValueError:
        raise ValueError(f"{text!r}: write the seats as MIN-MAX (e.g. 3-5) or N") from None
    if not MIN_PLAYERS <= low <= high <= MAX_PLAYERS:
        raise ValueError(f"{text!r}: seats go from {MIN_PLAYERS} to {MAX_PLAYERS}, the fewest first")
    return low, high


def open_game(bk: Any, store: GameStore, game_id: str, setup: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Open game ``game_id`` for sign-up with ``setup`` (the JSON-able mapping
    of ``pbem open``: ``seats`` [MIN, MAX], ``starts`` ``"full"`` or an ISO
    8601 instant, ``invite`` (addresses; empty: anyone), ``seat_order``
    ``joined``/``random``, ``expire`` (seconds), ``substitutes``
    ``auto``/``gm``, and ``pbem new``'s ``seed``, ``ruleset``, ``options``,
    ``board``, ``settings``, ``gm``, ``observers``) at ``now``.  The setup is
    checked as ``pbem new`` checks it (``create.new_game`` with stand-in
    players; nothing written).  Returns the open game (``Bookkeeping.open_game``).

    Raises ValueError (nothing recorded): a bad id, a game or open game of that
    id (also in another case), bad seats, a start date after the expiry or in
    the past, a bad invited address, or what ``create.new_game`` refuses."""
    store.path(game_id)  # validates the id
    if bk.open_game(game_id) is not None:
        raise ValueError(f"an open game {bk.open_game(game_id)['id']!r} exists already (see `pbem list`)")
    low, high = setup["seats"]
    if not MIN_PLAYERS <= low <= high <= MAX_PLAYERS:
        raise ValueError(f"seats go from {MIN_PLAYERS} to {MAX_PLAYERS}, the fewest first")
    stand_in = [(f"seat{i}", f"seat{i}@stand-in.invalid") for i in range(high)]
    create.new_game(store, game_id, stand_in, int(setup["seed"]), now, setup["ruleset"], setup.get("options"),
                    setup.get("board"), setup.get("settings"), gm=setup.get("gm"),
                    observers=setup.get("observers") or ())
    invited = []
    for raw in setup.get("invite") or ():
        try:
            invited.append(player_address(raw))
        except ValueError as exc:
            raise ValueError(f"{exc} (--invite)") from None
    expires = now + timedelta(seconds=int(setup.get("expire") or EXPIRE_DEFAULT))
    if setup["starts"] != "full":
        start = _when(setup["starts"])
        if start <= now:
            raise ValueError(f"the start {setup['starts']} is not in the future")
        if start > expires:
            raise ValueError(f"the start {setup['starts']} comes after the expiry ({expires.isoformat()}): "
                             "give a longer --expire")
    setup = {**setup, "invite": invited}
    bk.put_open_game(game_id, setup, now, expires)
    return bk.open_game(game_id)


def invite(post: Post, og: dict[str, Any]) -> int:
    """Spool an invitation to every invited address of open game ``og``
    (``--invite``), in the game's language: how to join; a reply to it (even
    just ``yes``) asks to join under the sender's name (``_confirm``).
    Returns how many."""
    gid, setup = og["id"], og["setup"]
    lang = _game_language(og)
    low, high = setup["seats"]
    for address in setup.get("invite") or ():
        with i18n.speaking(lang):
            text = word("signup", "invitation", game_id=gid, low=low, high=high,
                        address=post.config.moderator_address)
        _notice(post, gid, address, lang, "title_invitation", text)
    return len(setup.get("invite") or ())


def _when(text: str) -> datetime:
    when = datetime.fromisoformat(str(text))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def seats_taken(bk: Any, game_id: str) -> int:
    """How many seats of open game ``game_id`` are confirmed (``seated``)."""
    return len(bk.signups(game_id, ["seated"]))


# ------------------------------------------------------------------ names
RESERVED_NAME_WORDS = ("moderator", "pbem", "game master", "gamemaster", "postmaster", "mailer-daemon")
"""Words no seat name may hold (folded): each would read as the moderator's own
name in a relayed message's sender."""


def check_name(name: str, taken: Iterable[str]) -> str | None:
    """Why ``name`` cannot be a seat name (``name_empty``, ``name_control``,
    ``name_long``, ``name_address``, ``name_reserved``, ``name_taken``: the reason's macro in
    ``templates/words/signup.txt``), or None when it can.  ``taken``: the
    names held in the game (compared folded: case and accents ignored), as
    ``rules.options.check_setup`` compares them."""
    if any(unicodedata.category(ch)[0] == "C" for ch in name):
        return "name_control"
    if not name.strip():
        return "name_empty"
    if len(name) > MAX_NAME_LENGTH:
        return "name_long"
    if "@" in name or "<" in name or ">" in name or name == IMAGINARY:
        return "name_address"  # an address as a name would show it to everyone
    if any(word in fold(name) for word in RESERVED_NAME_WORDS) or "(" in name or ")" in name:
        # relayed press comes "From: NAME (game G)" at the moderator's own address: a name
        # that reads as the moderator's would be a phishing tool (a new user's check)
        return "name_reserved"
    if fold(name) in {fold(t) for t in taken}:
        return "name_taken"
    return None


def suggest_name(name: str, taken: Iterable[str]) -> str:
    """A seat name near ``name`` that ``check_name`` accepts: control
    characters and ``@<>`` dropped, cut to the length limit, and a number
    added when taken (``Ann`` -> ``Ann 2``)."""
    clean = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C" and ch not in "@<>()")
    for word in RESERVED_NAME_WORDS:
        clean = re.sub(re.escape(word), " ", clean, flags=re.IGNORECASE)
    clean = " ".join(clean.split())[:MAX_NAME_LENGTH].strip() or "Player"
    taken = list(taken)
    if check_name(clean, taken) is None:
        return clean
    for n in range(2, 100):
        cand = f"{clean[:MAX_NAME_LENGTH - len(str(n)) - 1].rstrip()} {n}"
        if check_name(cand, taken) is None:
            return cand
    return "Player " + secrets.token_hex(2)


def default_name(om: OrderMail, known: str | None) -> str:
    """The seat name of a ``join`` without ``as NAME``: the registry's name of
    the sender, else the display name of the From header, else the part of the
    address before the ``@`` (capitalized)."""
    if known:
        return known
    if om.sender_display and "@" not in om.sender_display:
        return " ".join(om.sender_display.split())
    local = om.sender.partition("@")[0].replace(".", " ").replace("_", " ").strip()
    return local[:1].upper() + local[1:] if local else "Player"


# ------------------------------------------------------------------ mail
def referenced_open_game(om: OrderMail, bk: Any, store: GameStore) -> str | None:
    """The open game (not started: no game file, or one a crash left unmarked)
    that one of ``om``'s In-Reply-To/References Message-IDs names
    (``<...pbem.GAME@domain>``), or None."""
    for ref in om.thread_refs:
        m = _GAME_RE.search(ref or "")
        if m:
            og = bk.open_game(m.group(1))
            # a game file of an open game not marked started: written by a start a crash rolled back
            if og is not None and (og["state"] in OPEN_STATES or not store.exists(og["id"])):
                return og["id"]
    return None


class _Answers:
    """The answers of one sign-up mail: each within the limits, in the
    sender's language; the mail's key recorded as answered once."""

    def __init__(self, post: Post, om: OrderMail, key: str, language: str):
        self.post, self.om, self.key, self.language = post, om, key, language
        self.sent = 0

    def reply(self, game_id: str | None, title: str, text: str, token: str | None = None) -> bool:
        """Spool one answer to the sender of the mail; False when a limit held it back."""
        to = canonical_address(self.om.sender)
        if not within_limits(self.post, to, title):
            return False
        with i18n.speaking(self.language):
            subject = word("notices", "subject", game_id=game_id, title=word("signup", title, game_id=game_id))
            subject = " ".join(subject.split())
        if token is not None:  # a confirmation: our Message-ID carries its token; nothing of theirs quoted
            msg = self.post.message(game_id, to, subject, text + "\n", in_reply_to=self.om.message_id,
                                    references=self.om.references, token=token)
        else:
            msg = self.post.answer(self.om, None, to, subject, text + "\n")
        self.post.put(msg, kind="signup", game=game_id)  # tagged signup_mail (``handle``); answered at its end
        self.sent += 1
        return True


def within_limits(post: Post, to: str, what: str) -> bool:
    """Whether one more answer of sign-up or pool mail (``what``, for the log)
    may go to ``to``: within ``PER_ADDRESS_PER_DAY`` of that address and
    ``ALL_PER_DAY`` in all this UTC day (``Post.daily``, counted when True) and
    the per-cycle limit of replies (``Post.allow``)."""
    if not post.daily(f"signup:{to}", PER_ADDRESS_PER_DAY):
        log.warning("sign-up: the daily limit of answers to %s is reached; not answering %r", to, what)
        return False
    if not post.daily("signup:*", ALL_PER_DAY):
        log.warning("sign-up: the daily limit of sign-up answers is reached; not answering %r", what)
        return False
    return post.allow(to, what)


def handle(om: OrderMail, key: str, post: Post, store: GameStore, report: CycleReport,
           now: datetime) -> str | None:
    """Carry out ``om`` (mail id ``key``) when it is sign-up mail: a reply to
    one of an open game's mails, or a ``games``/``join``/``leave`` command (the
    first line of text, ``read_request``); returns ``"processed"``, or None
    when it is no sign-up mail (routed as any other).  Writes the bookkeeping
    (inside the mail's transaction) and spools the answers."""
    bk = post.bk
    replied = referenced_open_game(om, bk, store)
    req = read_request(om.lines, om.kinds)
    if replied is None and req is not None and req.kind == "confirm" and referenced_game(om) is None \
            and not om.game_id:
        # 'confirm' in a new mail, not a reply (a client that dropped In-Reply-To and
        # References): said how, when the sender has a sign-up waiting; else routed as any mail
        waiting = [r for r in bk.signups_of(om.sender) if r["pending"] and r["state"] in HOLDING]
        if not waiting:
            return None
        gid = waiting[0]["game"]
        out = _Answers(post, om, key, (req.language or waiting[0]["language"] or _language_of(bk, om.sender)))
        with i18n.speaking(out.language):
            out.reply(gid, "title_refused", word("signup", "reply_confirm", game_id=gid))
        bk.mark_answered(key, None, now)
        report.signups += 1
        return "processed"
    if replied is None and (req is None or req.kind == "confirm"):
        return None  # a player's 'confirm' or 'yes' in a running game's thread (resign confirm)
    language = (req.language if req and req.language else None) or _language_of(bk, om.sender)
    out = _Answers(post, om, key, language)
    forget_unsaved(post, store, key)
    tags, post.tags = post.tags, {**post.tags, "signup_mail": key}
    try:
        with bk.transaction():  # a savepoint: an error undoes this mail's sign-up changes
            if replied is not None and (req is None or req.kind == "confirm"):
                _confirm(out, replied, now, store)
            elif req.kind == "games":
                _games(out, now)
            elif req.kind == "join":
                _join(out, req, now)
            elif req.kind == "leave":
                _leave(out, req, now)
            bk.mark_answered(key, replied, now)  # handled (or held back by a limit): never again
            faults.fault("signup-spooled")
    finally:
        post.tags = tags
    report.signups += 1
    return "processed"


def forget_unsaved(post: Post, store: GameStore, key: str) -> None:
    """Remove the mails spooled for sign-up mail ``key`` by an earlier handling
    whose bookkeeping transaction a crash rolled back (tagged ``signup_mail``;
    the cycle sends only after every mail's commit, so none was sent): the mail
    is handled again from the state as committed, and answered once.  The
    welcomes of a game whose file that handling wrote are kept (``start``
    adopts the file)."""
    for e in post.spool.entries():
        if e.meta.get("signup_mail") != key:
            continue
        if e.meta.get("kind") in ("welcome", "observer") and store.exists(str(e.meta.get("game") or "")):
            continue
        post.spool.remove(e.name)


def _language_of(bk: Any, address: str) -> str:
    person = bk.person(address)
    return (person or {}).get("language") or i18n.DEFAULT


def _game_language(og: dict[str, Any]) -> str:
    return (og["setup"].get("settings") or {}).get("language") or i18n.DEFAULT


def _find_open(bk: Any, asked: str | None) -> dict[str, Any] | None:
    if not asked:
        return None
    og = bk.open_game(asked)
    return og if og is not None and og["state"] in OPEN_STATES else None


def _unknown_game(out: _Answers, asked: str | None) -> None:
    games = [g["id"] for g in out.post.bk.open_games()]
    asked = asked if asked is None or len(asked) <= 40 else asked[:39] + "…"  # not an echo of any text
    with i18n.speaking(out.language):
        out.reply(None, "title_refused", word("signup", "no_open_game", asked=asked or "", games=games))


def _join(out: _Answers, req: Request, now: datetime) -> None:
    bk, sender = out.post.bk, canonical_address(out.om.sender)
    og = _find_open(bk, req.game)
    if og is None:
        return _unknown_game(out, req.game)
    gid, setup = og["id"], og["setup"]
    lang = out.language
    with i18n.speaking(lang):
        if setup.get("invite") and sender not in setup["invite"]:
            out.reply(gid, "title_refused", word("signup", "not_invited", game_id=gid))
            return
        below = _below_reliability(out.post, sender, setup)
        if below is not None:  # --min-reliability: the figure and the rule (people with no record are admitted)
            out.reply(gid, "title_refused", word("person", "below_reliability", game_id=gid, figure=below,
                                                 minimum=f"{float(setup['min_reliability']):.2f}"))
            return
        staff = {canonical_address(a) for a in [setup.get("gm") or post_operator(out.post)] +
                 list(setup.get("observers") or []) if a}
        if sender in staff:  # the game master and observers need addresses of their own (create.new_game)
            out.reply(gid, "title_refused", word("signup", "staff_address", game_id=gid))
            return
        rows = bk.signups(gid, HOLDING)
        mine = [r for r in rows if r["address"] == sender]
        if any(r["state"] in ("seated", "waiting", "offered") for r in mine):
            r = next(r for r in mine if r["state"] in ("seated", "waiting", "offered"))
            out.reply(gid, "title_refused", word("signup", "already_in", game_id=gid, seat=r["name"],
                                                 state=r["state"], place=_place(bk, gid, r)))
            return
        person = bk.person(sender)
        name = req.name if req.name is not None else default_name(out.om, person and person["name"])
        taken = [r["name"] for r in rows if r["address"] != sender]
        problem = check_name(name, taken)
        if problem:
            out.reply(gid, "title_refused", word("signup", problem, seat=name, max=MAX_NAME_LENGTH,
                                                 suggestion=suggest_name(name, taken), game_id=gid))
            return
        secret = secrets.token_hex(8)
        if mine:  # asked again (a lost confirmation): a new one, the old token stops working
            bk.set_signup(mine[0]["seq"], name=name, secret=secret, asked=now, pending="join",
                          language=req.language or mine[0]["language"])
        else:
            bk.add_signup(gid, sender, name, "asked", "join", secret, now, req.language)
        out.reply(gid, "title_confirm", word("signup", "confirm_join", game_id=gid, seat=name),
                  token=thread_token(gid, secret))


def _below_reliability(post: Post, address: str, setup: dict[str, Any]) -> str | None:
    """``address``'s reliability (``archive.records``: moves in time of moves
    owed, over the game files of its games) as ``0.85`` when the open game's
    ``min_reliability`` is set and the figure is below it; None when it is not
    set, the figure is enough, or there is no record yet (no move owed)."""
    minimum = setup.get("min_reliability")
    if minimum is None:
        return None
    from ..archive.records import person_records

    store = GameStore(post.config.games_dir)
    games = []
    for ref in post.bk.games_of(address):
        try:
            games.append(store.read_data(ref.game_id))
        except Exception:  # noqa: BLE001 - an unreadable game file counts for nothing
            continue
    figure = (person_records(games).get(canonical_address(address)) or None)
    value = figure.reliability if figure is not None else None
    if value is None or value >= float(minimum):
        return None
    return f"{value:.2f}"


def post_operator(post: Post) -> str | None:
    """The operator's address (``config.operator``): the game master of an open
    game opened without ``--gm``."""
    return post.config.operator or None


def _leave(out: _Answers, req: Request, now: datetime) -> None:
    bk, sender = out.post.bk, canonical_address(out.om.sender)
    og = _find_open(bk, req.game)
    if og is None:
        return _unknown_game(out, req.game)
    gid = og["id"]
    mine = [r for r in bk.signups(gid, HOLDING) if r["address"] == sender]
    with i18n.speaking(out.language):
        if not mine:
            out.reply(gid, "title_refused", word("signup", "not_signed_up", game_id=gid))
            return
        secret = secrets.token_hex(8)
        bk.set_signup(mine[0]["seq"], secret=secret, pending="leave")
        out.reply(gid, "title_confirm", word("signup", "confirm_leave", game_id=gid),
                  token=thread_token(gid, secret))


def _confirm(out: _Answers, gid: str, now: datetime, store: GameStore) -> None:
    """A reply to one of open game ``gid``'s mails: the sign-up of the sender
    whose token the reply carries does what it waits for (``pending``)."""
    bk, sender = out.post.bk, canonical_address(out.om.sender)
    og = bk.open_game(gid)
    tokens = set(tokens_in(out.om.thread_refs, gid))
    gm_secret = og["setup"].get("gm_secret")
    if gm_secret and thread_token(gid, gm_secret) in tokens \
            and sender == canonical_address(og["setup"].get("gm") or post_operator(out.post) or ""):
        return _gm_extend(out, og, now)
    mine = [r for r in bk.signups(gid, HOLDING) if r["address"] == sender and r["pending"]
            and thread_token(gid, r["secret"]) in tokens]
    said = [l for l, k in zip(out.om.lines, out.om.kinds or ["text"] * len(out.om.lines)) if k == "text"]
    if not mine and og["state"] in OPEN_STATES and sender in (og["setup"].get("invite") or ()) \
            and not [r for r in bk.signups(gid, HOLDING) if r["address"] == sender] \
            and (not said or confirms(said[0])):
        # a reply to the invitation (``invite``): a join under the sender's name, confirmed as any
        return _join(out, Request("join", gid, language=out.language if out.language != i18n.DEFAULT else None),
                     now)
    with i18n.speaking(out.language):
        if not mine or og["state"] not in OPEN_STATES:
            # a forged or stale confirmation: another address's token, or nothing waits
            out.reply(gid, "title_refused", word("signup", "nothing_to_confirm", game_id=gid))
            return
        row = mine[0]
        lines = [l for l, k in zip(out.om.lines, out.om.kinds or ["text"] * len(out.om.lines)) if k == "text"]
        if lines and not confirms(lines[0]):
            out.reply(gid, "title_refused", word("signup", "reply_confirm", game_id=gid))
            return
        if row["pending"] == "leave":
            out.reply(gid, "title_left", word("signup", "left", game_id=gid))
            _free(out.post, og, row, now)
            return
        setup = og["setup"]
        low, high = setup["seats"]
        taken = seats_taken(bk, gid)
        if row["state"] == "offered" or taken < high:
            bk.set_signup(row["seq"], state="seated", pending=None, joined=now)
            bk.register_person(sender, row["name"], now, row["language"])
            taken += row["state"] != "seated"
            out.reply(gid, "title_seated", word("signup", "seated", game_id=gid, seat=row["name"],
                                                taken=taken, high=high, low=low, starts=_starts(setup),
                                                when=_worded(_start_time(setup))))
            if taken >= high and setup["starts"] == "full":
                # the game starts at the cycle's time (its welcomes go now), not at the
                # confirmation's arrival: the first deadline counts from the welcome
                start_or_tell(out.post, store, bk.open_game(gid), out.post.clock())
        else:
            bk.set_signup(row["seq"], state="waiting", pending=None, joined=now)
            bk.register_person(sender, row["name"], now, row["language"])
            row = {**row, "state": "waiting"}
            out.reply(gid, "title_waiting", word("signup", "waiting", game_id=gid, seat=row["name"],
                                                 place=_place(bk, gid, row)))


def read_extend(line: str) -> tuple[str, str | None, int | None]:
    """The game master's answer to "too few players: extend or cancel", the
    first line of text of their reply: ``("cancel", None, None)``, or
    ``("extend", STARTS, EXPIRE)`` of ``extend full|DATE [expire DURATION]``
    (``STARTS`` ``"full"`` or the ISO 8601 date as written, None when only the
    expiry changes: ``extend expire 14d``; ``EXPIRE`` seconds or None).
    ValueError with a sentence for anything else."""
    from .deadlines import parse_duration

    words = [w.strip(".,;!") for w in line.split()]
    words = [w for w in words if w]
    head = words[0].lower() if words else ""
    if head == "cancel" and len(words) == 1:
        return "cancel", None, None
    if head != "extend" or len(words) < 2:
        raise ValueError("the reply says neither 'extend ...' nor 'cancel'")
    rest, starts, expire = words[1:], None, None
    if rest and rest[0].lower() != "expire":
        starts = "full" if rest[0].lower() == "full" else rest[0]
        if starts != "full":
            try:
                _when(starts)
            except ValueError:
                raise ValueError(f"{starts!r} is no date (write it as 2026-12-20 or 2026-12-20T18:00)") from None
        rest = rest[1:]
    if rest:
        if rest[0].lower() != "expire" or len(rest) != 2:
            raise ValueError("after the start, only 'expire DURATION' (e.g. expire 14d) may follow")
        expire = parse_duration(rest[1])
    return "extend", starts, expire


def _gm_extend(out: _Answers, og: dict[str, Any], now: datetime) -> None:
    """The game master's reply to "too few players: extend or cancel"
    (authenticated: their address and the token of ``setup.gm_secret``):
    ``extend`` as ``pbem signup extend`` (``extend``), ``cancel`` as ``pbem
    signup cancel`` (``cancel``: everyone told, the game master too); a
    refusal says what would be legal, nothing changed."""
    gid = og["id"]
    out.language = i18n.DEFAULT  # the game master reads English
    said = [l for l, k in zip(out.om.lines, out.om.kinds or ["text"] * len(out.om.lines)) if k == "text" and l.strip()]
    with i18n.speaking(i18n.DEFAULT):
        try:
            what, starts, expire = read_extend(said[0] if said else "")
            if og["state"] not in OPEN_STATES:
                raise ValueError(f"the game is {og['state']} already")
            if what == "cancel":
                cancel(out.post, gid, now)  # tells everyone, the game master too
                return
            done = extend(out.post.bk, gid, starts, expire, now)
        except ValueError as exc:
            out.reply(gid, "title_extend", word("signup", "gm_extend_refused", game_id=gid, problem=str(exc)))
            return
        setup = done["setup"]
        out.reply(gid, "title_extend", word("signup", "gm_extended", game_id=gid, starts=_starts(setup),
                                            when=_worded(_start_time(setup)), expires=_worded(done["expires"])))


def _place(bk: Any, gid: str, row: dict[str, Any]) -> int:
    """The place of ``row`` on the waiting list of ``gid`` (1: first), 0 when not waiting."""
    waiting = [r["seq"] for r in bk.signups(gid, ["waiting", "offered"])]
    return waiting.index(row["seq"]) + 1 if row["seq"] in waiting else 0


def _worded(when: datetime | None) -> str:
    """``when`` as the reader of the language in force reads it (UTC), ``""`` for None."""
    from ..render.when import format_when

    return format_when(when) if when is not None else ""


def _starts(setup: dict[str, Any]) -> str:
    return "full" if setup["starts"] == "full" else "date"


def _start_time(setup: dict[str, Any]) -> datetime | None:
    return None if setup["starts"] == "full" else _when(setup["starts"])


def _free(post: Post, og: dict[str, Any], row: dict[str, Any], now: datetime) -> None:
    """``row`` leaves open game ``og``; a seat it held goes to the first of the
    waiting list (``offer_next``)."""
    post.bk.set_signup(row["seq"], state="left", pending=None)
    if row["state"] in ("seated", "offered"):
        offer_next(post, og, now)


def offer_next(post: Post, og: dict[str, Any], now: datetime) -> bool:
    """Offer a free seat of ``og`` to the first of its waiting list (a mail to
    confirm within ``OFFER_SECONDS``); False when nobody waits or the offer is
    held back by a limit."""
    bk = post.bk
    waiting = bk.signups(og["id"], ["waiting"])
    if not waiting:
        return False
    row = waiting[0]
    secret = secrets.token_hex(8)
    bk.set_signup(row["seq"], state="offered", pending="offer", secret=secret, asked=now)
    lang = row["language"] or _game_language(og)
    with i18n.speaking(lang):
        text = word("signup", "offer", game_id=og["id"], seat=row["name"],
                    hours=OFFER_SECONDS // 3600)
    _notice(post, og["id"], row["address"], lang, "title_offer", text, token=thread_token(og["id"], secret))
    return True


def _notice(post: Post, gid: str | None, to: str, language: str, title: str, text: str,
            token: str | None = None) -> None:
    """A notice of the moderator's own (not an answer) to ``to`` in ``language``."""
    with i18n.speaking(language):
        subject = " ".join(word("notices", "subject", game_id=gid,
                                title=word("signup", title, game_id=gid)).split())
        msg = post.message(gid, to, subject, text + "\n", token=token, auto="auto-generated")
    post.put(msg, kind="signup", game=gid)


def _games(out: _Answers, now: datetime) -> None:
    bk = out.post.bk
    listing = []
    sender = out.om.sender.lower()
    for og in bk.open_games():
        setup = og["setup"]
        if setup.get("invite") and sender not in {str(a).lower() for a in setup["invite"]}:
            continue  # a game by invitation is listed to its invited addresses only
        settings = setup.get("settings") or {}
        low, high = setup["seats"]
        listing.append({
            "id": og["id"], "ruleset": setup["ruleset"], "low": low, "high": high,
            "taken": seats_taken(bk, og["id"]), "waiting": len(bk.signups(og["id"], ["waiting", "offered"])),
            "deadline": settings.get("deadline"), "language": settings.get("language") or i18n.DEFAULT,
            "starts": _starts(setup), "when": _start_time(setup), "expires": og["expires"],
            "invited": bool(setup.get("invite")),
            "options": sorted(k for k, v in (setup.get("options") or {}).items() if v),
        })
    running = [g.game_id for g in bk.games_of(out.om.sender, active_only=True)]
    with i18n.speaking(out.language):
        from ..render.when import format_duration

        for g in listing:
            g["deadline"] = format_duration(g["deadline"]) if g["deadline"] else word("signup", "no_deadline")
            g["when"], g["expires"] = _worded(g["when"]), _worded(g["expires"])
        text = word("signup", "games", games=listing, running=running, address=out.post.config.moderator_address)
        pool = bk.pool_of(out.om.sender)  # the substitute pool (moderation/pool.py)
        text += "\n\n" + (word("pool", "in_pool", games=pool) if pool else word("pool", "not_in_pool"))
        out.reply(None, "title_games", text)


# ------------------------------------------------------------------ the start, the clock
def start(post: Post, store: GameStore, og: dict[str, Any], now: datetime) -> Any:
    """Start open game ``og``: write its game file with the seated players (in
    the order they joined, or shuffled by the game's seed with ``--seat-order
    random``), each ``joined`` recorded, and the ``signup`` mapping; spool
    everyone's welcome (``create.welcome``); tell those still waiting that it
    started without them.  Returns the ``GameRecord``.  Raises ValueError when
    ``create.new_game`` refuses (a game file of that id appeared meanwhile)."""
    bk, gid, setup = post.bk, og["id"], og["setup"]
    opened = og["opened"].isoformat(timespec="seconds")
    if store.exists(gid) and (store.read_data(gid).get("signup") or {}).get("opened") == opened:
        # written by a start whose bookkeeping a crash rolled back: its file and welcomes stand
        bk.set_open_game(gid, state="started", closed=now)
        for r in bk.signups(gid, ["waiting", "offered", "asked"]):
            bk.set_signup(r["seq"], state="left", pending=None)
        log.info("open game %s: its game file was written before a crash; adopted", gid)
        return store.load(gid)
    seated = sorted(bk.signups(gid, ["seated"]), key=lambda r: (r["joined"], r["seq"]))
    if setup.get("seat_order") == "random":
        random.Random(int(setup["seed"])).shuffle(seated)
    game_language = _game_language(og)
    languages = {r["name"]: r["language"] for r in seated if r["language"] and r["language"] != game_language}
    record = create.new_game(store, gid, [(r["name"], r["address"]) for r in seated], int(setup["seed"]), now,
                             setup["ruleset"], setup.get("options"), setup.get("board"), setup.get("settings"),
                             gm=setup.get("gm"), observers=setup.get("observers") or (), languages=languages)
    from .people import seat_defaults

    seat_defaults(bk, record)  # the seated people's own time zone and language (person-level settings)
    joined = {r["name"]: r["joined"] for r in seated}
    for p in record.players:
        if p.name in joined:
            p.joined = joined[p.name].isoformat(timespec="seconds")
    record.signup = {
        "seats": list(setup["seats"]), "starts": setup["starts"], "invite": len(setup.get("invite") or []),
        "seat_order": setup.get("seat_order", "joined"), "expire": int(setup.get("expire") or EXPIRE_DEFAULT),
        "substitutes": setup.get("substitutes", "auto"),
        "opened": opened, "started": now.isoformat(timespec="seconds"),
    }
    saved = create.welcome(post, GameStore(store.dir), record)
    bk.record_saved(saved)
    bk.set_deadline(gid, next_event(saved.data))
    bk.set_open_game(gid, state="started", closed=now)
    for r in bk.signups(gid, ["waiting", "offered", "asked"]):
        bk.set_signup(r["seq"], state="left", pending=None)
        if r["state"] != "asked":
            lang = r["language"] or game_language
            with i18n.speaking(lang):
                text = word("signup", "started_without", game_id=gid)
            _notice(post, gid, r["address"], lang, "title_started", text)
    log.info("open game %s started with %s", gid, ", ".join(p.name for p in record.players))
    return record


def start_or_tell(post: Post, store: GameStore, og: dict[str, Any], now: datetime) -> bool:
    """``start``, or, when the game cannot be created (``create.new_game``'s
    ValueError: a game file of that id appeared, a board file gone), the
    operator told and the game left open (its seats kept); whether it started."""
    try:
        start(post, store, og, now)
        return True
    except ValueError as exc:
        log.error("open game %s cannot start: %s", og["id"], exc)
        with i18n.speaking(i18n.DEFAULT):
            post.tell_operator(word("signup", "alert_cannot_start", game_id=og["id"], problem=str(exc)))
        return False


def close(post: Post, og: dict[str, Any], now: datetime, why: str) -> None:
    """Close open game ``og`` unstarted (``why``: ``expired`` or
    ``cancelled``, its state and its notice's macro) and tell everyone who held a
    seat or a waiting place, and its game master."""
    bk, gid = post.bk, og["id"]
    bk.set_open_game(gid, state=why, closed=now)
    for r in bk.signups(gid, HOLDING):
        bk.set_signup(r["seq"], state="left", pending=None)
        if r["state"] == "asked":
            continue
        lang = r["language"] or _game_language(og)
        with i18n.speaking(lang):
            text = word("signup", why, game_id=gid)
        _notice(post, gid, r["address"], lang, "title_closed", text)
    gm = canonical_address(og["setup"].get("gm") or post.config.operator or "")
    if gm:
        with i18n.speaking(i18n.DEFAULT):
            text = word("signup", why, game_id=gid)
        _notice(post, None, gm, i18n.DEFAULT, "title_closed", text)
    else:  # no game master and no operator to tell: the log says it (a new user's check)
        log.warning("open game %s closed unstarted (%s); no game master or operator address to tell", gid, why)


def run_clock(post: Post, store: GameStore, now: datetime, report: CycleReport) -> None:
    """The open games' clock at ``now``: lapsed offers go to the next in line;
    a start date come starts the game with at least its minimum of seats, else
    asks its game master (once) to extend or cancel; an expiry closes it."""
    bk = post.bk
    for og in bk.open_games():
        gid, setup = og["id"], og["setup"]
        with bk.transaction():
            for r in bk.signups(gid, ["offered"]):
                if (now - r["asked"]).total_seconds() >= OFFER_SECONDS:
                    bk.set_signup(r["seq"], state="lapsed", pending=None)
                    lang = r["language"] or _game_language(og)
                    with i18n.speaking(lang):
                        text = word("signup", "offer_lapsed", game_id=gid)
                    # the game stays open: the offer lapsed and the seat goes to the next in line
                    _notice(post, gid, r["address"], lang, "title_offer_lapsed", text)
                    offer_next(post, og, now)
            if now >= og["expires"]:
                close(post, og, now, "expired")
                report.signups += 1
                continue
            if og["state"] == "open" and setup["starts"] != "full" and now >= _when(setup["starts"]):
                low, high = setup["seats"]
                taken = seats_taken(bk, gid)
                if taken >= low:
                    start_or_tell(post, store, og, now)
                else:
                    # the game master may answer by a reply: its token keys this secret (``_gm_extend``)
                    secret = secrets.token_hex(8)
                    bk.set_open_game(gid, state="extend", setup={**setup, "gm_secret": secret})
                    gm = canonical_address(setup.get("gm") or post.config.operator or "")
                    if gm:
                        with i18n.speaking(i18n.DEFAULT):
                            text = word("signup", "gm_extend", game_id=gid, taken=taken, low=low,
                                        expires=_worded(og["expires"]))
                            text += "\n\n" + word("signup", "gm_extend_by_mail", game_id=gid)
                        _notice(post, gid, gm, i18n.DEFAULT, "title_extend", text, token=thread_token(gid, secret))
                report.signups += 1


def extend(bk: Any, game_id: str, starts: str | None, expire: int | None, now: datetime) -> dict[str, Any]:
    """The game master's answer to a start date short of seats (``pbem signup
    extend``): a new start (``"full"`` or an ISO 8601 instant) and/or a new
    expiry ``expire`` seconds from ``now``; the game takes sign-ups again.
    Returns the open game.  ValueError for no such open game or a start after
    the expiry or in the past."""
    og = bk.open_game(game_id)
    if og is None or og["state"] not in OPEN_STATES:
        raise ValueError(f"no open game {game_id!r} (see `pbem list`)")
    setup = dict(og["setup"])
    expires = now + timedelta(seconds=expire) if expire else og["expires"]
    if starts is not None:
        if starts != "full":
            when = _when(starts)
            if when <= now:
                raise ValueError(f"the start {starts} is not in the future")
            if when > expires:
                raise ValueError(f"the start {starts} comes after the expiry ({expires.isoformat()})")
        setup["starts"] = starts
    bk.set_open_game(og["id"], state="open", setup=setup, expires=expires)
    return bk.open_game(og["id"])


def cancel(post: Post, game_id: str, now: datetime) -> dict[str, Any]:
    """Cancel open game ``game_id`` before its start (``pbem signup cancel``):
    closed, and everyone who held a seat or waiting place and its game master
    told (``close``).  ValueError for no such open game."""
    og = post.bk.open_game(game_id)
    if og is None or og["state"] not in OPEN_STATES:
        raise ValueError(f"no open game {game_id!r} (see `pbem list`)")
    close(post, og, now, "cancelled")
    return post.bk.open_game(og["id"])


def describe(bk: Any, og: dict[str, Any]) -> list[str]:
    """Lines for the operator (``pbem show``, English): an open game's settings,
    seats and people (names and addresses: the operator sees them)."""
    setup = og["setup"]
    low, high = setup["seats"]
    lines = [f"Open game {og['id']} ({og['state']}): {setup['ruleset']}, seats {low}-{high}, "
             f"starts {setup['starts']}, expires {og['expires'].isoformat(timespec='minutes')}, "
             f"seat order {setup.get('seat_order', 'joined')}, substitutes {setup.get('substitutes', 'auto')}"]
    if setup.get("invite"):
        lines.append("  invited only: " + ", ".join(setup["invite"]))
    if setup.get("min_reliability") is not None:
        lines.append(f"  joins only with a record of at least {float(setup['min_reliability']):.2f} of the "
                     "moves in time (or no record yet)")
    for r in bk.signups(og["id"]):
        when = (r["joined"] or r["asked"]).isoformat(timespec="minutes")
        lines.append(f"  {r['state']:8} {r['name']} <{r['address']}> {when}"
                     + (f" (confirmation for {r['pending']} pending)" if r["pending"] else ""))
    return lines


def open_lines(config) -> list[str]:
    """One line per open game for `pbem list` (id, ruleset, seats taken/range,
    waiting, start rule, expiry); [] when there is no bookkeeping database."""
    from ..store.bookkeeping import Bookkeeping, BookkeepingError

    try:
        bk = Bookkeeping.in_spool(config.spool_dir, readonly=True)
    except BookkeepingError:
        return []
    with bk:
        out = []
        for og in bk.open_games():
            s = og["setup"]
            taken = len(bk.signups(og["id"], ["seated"]))
            waiting = len(bk.signups(og["id"], ["waiting", "offered"]))
            out.append(f"{og['id']}  {s['ruleset']}  open for sign-up ({og['state']}): seats {taken} taken of "
                       f"{s['seats'][0]}-{s['seats'][1]}, {waiting} waiting; starts {s['starts']}; expires "
                       f"{og['expires'].isoformat(timespec='minutes')}")
        return out


def open_description(config, game: str) -> list[str] | None:
    """`pbem show`'s lines of open game GAME (``signup.describe``), or None when there is none."""
    from ..store.bookkeeping import Bookkeeping, BookkeepingError

    try:
        bk = Bookkeeping.in_spool(config.spool_dir, readonly=True)
    except BookkeepingError:
        return None
    with bk:
        og = bk.open_game(game)
        if og is None:
            return None
        return describe(bk, og)
