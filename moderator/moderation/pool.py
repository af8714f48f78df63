"""The substitute pool (issue 27): volunteers who take over seats players gave up.

Mail from anyone to the moderator's address (``handle``, after ``signup.handle``
and before routing):

``substitute on all`` / ``substitute on GAME`` / ``substitute off``
    answered by a confirmation mail that holds nothing but the confirmation
    (its Message-ID carries the token of the request's secret, game part
    ``POOL_THREAD``); only a reply from the same address naming it changes the
    pool.  The confirmation registers the address in the registry of people
    (``people``), as a ``join`` does.  ``GAME`` must be a running game (the
    games index) or an open one; else the refusal lists those.
``take GAME`` (a reply to an offer's mail)
    the seat of the offer goes to the sender when the offer was theirs
    (address and token), still waits, and the seat is still the built-in
    player's: the game master's ``replace`` (``gm.execute``: a new secret, a
    welcome with the whole position, ``gm_log`` says who took it when).  With
    the game's ``substitutes: gm`` the game master is asked first
    (``approve``/``veto`` in a reply to that question); the taker is told
    either way.
``approve`` / ``veto`` (the game master's reply to the question)

A seat abandoned (missed moves), ejected or resigned is recorded as a vacancy
(``vacancy.vacate``); the pool's stage of the cycle (``run_clock``, after the
open games') offers it to ``OFFERS_PER_ROUND`` volunteers at a time: those
for that game or all games, not in the game (players, observers, game
master), holding no other offer of the game and not offered this seat
before, those whose language is the game's first, then the longest unused
(``people.used``: when they last took a seat).  A round lasts
``round_seconds`` (the game's deadline, at most ``ROUND_SECONDS``); then the
offers lapse and the next volunteers are offered the seat.  The built-in
player keeps the seat meanwhile.

Every answer to a stranger is within ``signup.within_limits`` (per address and
in all per day, per cycle); machine mail never reaches this module
(``decide.screen``).  No mail names another person's address.
"""
from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable

from .. import i18n
from ..i18n import fold
from ..mail.read import OrderMail, canonical_address
from ..mail.threads import thread_token, tokens_in
from ..render import render
from ..render.when import format_when
from ..render.words import word
from ..store.gamefile import GameRecord, GameStore, StoreError
from . import gm as gm_
from .announce import gm_token
from .deadlines import game_master_address
from .report import CycleReport
from .send import Post
from .signup import OPEN_STATES, check_name, confirms, default_name, forget_unsaved, suggest_name, within_limits
from .vacancy import policy, refill

log = logging.getLogger("pbem")

OFFERS_PER_ROUND = 3
"""Volunteers offered a seat at a time (one round)."""
ROUND_SECONDS = 48 * 3600
"""The longest a round of offers lasts (a game with a shorter deadline: its deadline)."""
POOL_THREAD = "pool"
"""The game part of the Message-IDs of the pool's confirmation mails (``<...TOKEN.pbem.pool@...>``)."""
BY_POOL = "substitute pool"
"""``by`` of the ``replace`` a volunteer's ``take`` does in a game without the game master's approval."""

WORDS: dict[str, dict[str, str]] = {
    "substitute": {"substitute": "en", "substitutes": "en", "sub": "en", "suplente": "es", "sustituto": "es",
                   "ersatz": "de", "ersatzspieler": "de", "náhradník": "cs", "nahradnik": "cs", "替补": "zh"},
    "on": {"on": "en", "yes": "en", "sí": "es", "si": "es", "activar": "es", "an": "de", "ein": "de", "ja": "de",
           "ano": "cs", "zapnout": "cs", "开": "zh", "开启": "zh"},
    "off": {"off": "en", "no": "es", "desactivar": "es", "aus": "de", "nein": "de", "ne": "cs", "vypnout": "cs",
            "关": "zh", "关闭": "zh"},
    "all": {"all": "en", "todas": "es", "todos": "es", "alle": "de", "vše": "cs", "vse": "cs", "všechny": "cs",
            "vsechny": "cs", "全部": "zh", "所有": "zh"},
    "take": {"take": "en", "tomar": "es", "tomo": "es", "nehmen": "de", "übernehmen": "de", "ubernehmen": "de",
             "vzít": "cs", "vzit": "cs", "beru": "cs", "převzít": "cs", "prevzit": "cs", "接替": "zh", "接手": "zh"},
    "approve": {"approve": "en", "approved": "en", "yes": "en", "aprobar": "es", "apruebo": "es",
                "genehmigen": "de", "ja": "de", "schválit": "cs", "schvalit": "cs", "批准": "zh"},
    "veto": {"veto": "en", "no": "en", "refuse": "en", "vetar": "es", "ablehnen": "de", "nein": "de",
             "zamítnout": "cs", "zamitnout": "cs", "否决": "zh"},
}
_FOLDED = {kind: {fold(w): lang for w, lang in table.items()} for kind, table in WORDS.items()}


@dataclass(frozen=True)
class Request:
    """A pool command of a mail's first line of text: ``kind`` ``on``, ``off``,
    ``usage`` (``substitute`` with neither), ``take``, ``approve`` or ``veto``;
    ``game`` (``on``: an id as written, ``*`` for all; ``take``: as written or
    None); ``language``: the command word's (None: English or not told)."""

    kind: str
    game: str | None = None
    language: str | None = None


def read_request(lines: Iterable[str], kinds: Iterable[str] = ()) -> Request | None:
    """The pool command of the first line of text (greetings, sign-offs and
    signatures skipped, as ``signup.read_request``), or None."""
    kinds = list(kinds)
    for i, line in enumerate(lines):
        if i < len(kinds) and kinds[i] in ("greeting", "signoff", "signature"):
            continue
        words = [w.strip(".,!:;") for w in line.split()]
        words = [w for w in words if w]
        if not words:
            continue
        head = fold(words[0])
        if head in _FOLDED["substitute"]:
            lang = _FOLDED["substitute"][head]
            said = lang if lang != "en" else None
            second = fold(words[1]) if len(words) > 1 else ""
            if second in _FOLDED["off"] and len(words) == 2:
                return Request("off", language=said)
            if second in _FOLDED["on"] and len(words) <= 3:
                third = words[2] if len(words) == 3 else None
                game = "*" if third is None or fold(third) in _FOLDED["all"] else third
                return Request("on", game, said)
            return Request("usage", language=said)
        for kind in ("take", "approve", "veto"):
            lang = _FOLDED[kind].get(head)
            if lang is not None and len(words) <= 2:
                return Request(kind, words[1] if len(words) == 2 else None, lang if lang != "en" else None)
        return None
    return None


def round_seconds(record: GameRecord) -> int:
    """How long one round of offers of a seat of ``record``'s game lasts: the
    game's deadline (``settings.deadline``), at most ``ROUND_SECONDS``
    (also for a game without a deadline)."""
    deadline = record.settings.get("deadline")
    return min(int(deadline), ROUND_SECONDS) if deadline else ROUND_SECONDS


# ------------------------------------------------------------------ mail
class _Out:
    """The answers to one mail's sender, in their language, each within the
    sign-up limits (``signup.within_limits``)."""

    def __init__(self, post: Post, om: OrderMail, language: str):
        self.post, self.om, self.language = post, om, language
        self.to = canonical_address(om.sender)

    def reply(self, game_id: str | None, title: str, text: str, token: str | None = None) -> bool:
        """Spool one answer; False when a limit held it back.  With ``token``
        (a confirmation) nothing of the sender's mail is quoted and our
        Message-ID carries the token (game part ``game_id``)."""
        if not within_limits(self.post, self.to, title):
            return False
        with i18n.speaking(self.language):
            subject = " ".join(word("notices", "subject", game_id=None if token else game_id,
                                    title=word("pool", title)).split())
            # no game named: "Union Pacific: ...", not "Union Pacific : ..." (a new user's check)
            subject = subject.replace(" :", ":").replace(" ：", "：")
        if token is not None:
            msg = self.post.message(game_id, self.to, subject, text + "\n", in_reply_to=self.om.message_id,
                                    references=self.om.references, token=token)
        else:
            msg = self.post.answer(self.om, game_id, self.to, subject, text + "\n")
        self.post.put(msg, kind="signup", game=None if token else game_id)
        return True


def _language(bk: Any, req: Request | None, address: str) -> str:
    if req is not None and req.language:
        return req.language
    return (bk.person(address) or {}).get("language") or i18n.DEFAULT


def _text_lines(om: OrderMail) -> list[str]:
    return [l for l, k in zip(om.lines, om.kinds or ["text"] * len(om.lines)) if k == "text" and l.strip()]


def _offer_hit(bk: Any, om: OrderMail) -> tuple[str, dict[str, Any]] | None:
    """``("offer", offer)`` or ``("gm", offer)`` when one of ``om``'s
    In-Reply-To/References carries the token of an offer (its ``secret``) or of
    the game master's question about it (``gm_secret``), else None."""
    seen = set()
    for ref in om.thread_refs:
        for gid in _games_in(ref):
            if gid in seen:
                continue
            seen.add(gid)
            tokens = set(tokens_in(om.thread_refs, gid))
            for o in bk.offers(gid):
                if thread_token(gid, o["secret"]) in tokens:
                    return "offer", o
                if o["gm_secret"] and thread_token(gid, o["gm_secret"]) in tokens:
                    return "gm", o
    return None


def _games_in(ref: str | None) -> list[str]:
    import re

    from ..store import GAME_ID_PATTERN

    return re.findall(rf"\.pbem\.({GAME_ID_PATTERN})@", ref or "")


def handle(om: OrderMail, key: str, post: Post, store: GameStore, report: CycleReport,
           now: datetime) -> str | None:
    """Carry out ``om`` (mail id ``key``) when it is mail of the substitute
    pool: ``substitute on|off`` or a reply to its confirmation, a ``take`` (a
    reply to an offer, or ``take GAME`` from someone not playing GAME), the
    game master's reply to a question about a taker.  Returns
    ``"processed"``, or None when it is none (routed as any other mail).
    Writes the bookkeeping inside a savepoint of the mail's transaction."""
    bk = post.bk
    sender = canonical_address(om.sender)
    req = read_request(om.lines, om.kinds)
    hit = _offer_hit(bk, om)
    ask = bk.pool_asked(sender)
    confirming = bool(tokens_in(om.thread_refs, POOL_THREAD)) and not store.exists(POOL_THREAD)
    if hit is not None and hit[0] == "offer" and hit[1]["state"] == "taken" and hit[1]["address"] == sender:
        if req is not None and req.kind == "take" and not bk.answered(key):
            # 'take' again from the one who has the seat: told so, not refused for a missing secret
            out = _Out(post, om, _language(bk, req, sender))
            with bk.transaction(), i18n.speaking(out.language):
                out.reply(hit[1]["game"], "title_pool", word("pool", "yours_already", game_id=hit[1]["game"],
                                                             seat=hit[1]["seat"]))
                bk.mark_answered(key, hit[1]["game"], now)
            report.signups += 1
            return "processed"
        return None  # the newcomer writing in the offer's thread: a player's mail of the game
    if hit is None and not confirming:
        if req is None or req.kind in ("approve", "veto"):
            return None
        if req.kind == "take":
            # a 'take' that is no reply to an offer: the pool's only when it names a game of the
            # games index the sender does not play (or, bare, when the sender holds an offer);
            # 'take stack' and a player's line in their own game are routed as any order
            offered = [o for o in bk.offers_of(sender) if o["state"] == "offered"]
            if req.game is None and not offered:
                return None
            if req.game is not None and (req.game.lower() not in {g.lower() for g in bk.game_ids()}
                                         or any(g.game_id.lower() == req.game.lower() for g in bk.games_of(sender))):
                return None
    out = _Out(post, om, _language(bk, req, sender))
    forget_unsaved(post, store, key)  # mails of a handling a crash rolled back: answered once
    tags, post.tags = post.tags, {**post.tags, "signup_mail": key}
    try:
        _handle(out, store, req, hit, confirming, ask, key, now)
    finally:
        post.tags = tags
    report.signups += 1
    return "processed"


def _handle(out: _Out, store: GameStore, req: Request | None, hit: tuple[str, dict[str, Any]] | None,
            confirming: bool, ask: dict[str, Any] | None, key: str, now: datetime) -> None:
    """``handle``'s work, in a savepoint of the mail's transaction, the mail
    recorded as answered at its end."""
    bk = out.post.bk
    with bk.transaction():
        if confirming and hit is None:
            _confirm(out, ask, now)
        elif hit is not None and hit[0] == "gm":
            _gm_answer(out, store, hit[1], req, key, now)
        elif hit is not None:
            _take(out, store, hit[1], req, key, now)
        elif req.kind == "take":
            _unlinked_take(out, req)
        elif req.kind == "usage":
            with i18n.speaking(out.language):
                out.reply(None, "title_pool", word("pool", "usage"))
        else:
            _ask(out, req, now)
        bk.mark_answered(key, None, now)


def _pool_game(out: _Out, asked: str) -> str | None:
    """The id of the running or open game ``asked`` names (any case) for
    ``substitute on GAME``, or None after answering with those that run or
    are open (in the language in force)."""
    bk = out.post.bk
    running = {gid.lower(): gid for gid in bk.game_ids()
               if (bk.game(gid) and bk.game(gid).phase not in (None, "over"))}
    running.update({og["id"].lower(): og["id"] for og in bk.open_games(OPEN_STATES)})
    if asked.lower() not in running:
        shown = asked if len(asked) <= 40 else asked[:39] + "…"
        out.reply(None, "title_pool", word("pool", "no_such_game", asked=shown, games=sorted(running.values())))
        return None
    return running[asked.lower()]


def _ask(out: _Out, req: Request, now: datetime) -> None:
    """``substitute on GAME|all`` or ``substitute off``: the confirmation mail
    (a game that does not run and is not open: a refusal listing those that
    do)."""
    bk = out.post.bk
    game = req.game
    with i18n.speaking(out.language):
        if req.kind == "on" and game != "*":
            game = _pool_game(out, game)
            if game is None:
                return
        if req.kind == "off" and not bk.pool_of(out.to):
            out.reply(None, "title_pool", word("pool", "not_in_pool"))
            return
        person = bk.person(out.to)
        name = default_name(out.om, person and person["name"])
        name = name if check_name(name, []) is None else suggest_name(name, [])
        secret = secrets.token_hex(8)
        bk.pool_ask(out.to, req.kind, game if req.kind == "on" else None, name, secret, now, req.language)
        text = word("pool", "confirm_on", game_id=None if game == "*" else game) if req.kind == "on" \
            else word("pool", "confirm_off")
        out.reply(POOL_THREAD, "title_confirm", text, token=thread_token(POOL_THREAD, secret))


def seat_lines(post: Post, om: OrderMail, record: GameRecord, player: str | None, key: str,
               now: datetime) -> bool:
    """``substitute on [all|GAME]`` / ``substitute off`` on a line of a mail of
    ``player`` (authenticated in ``record``'s game: the verdict named them) that
    ``handle`` left to the game (it reads a mail's first line only: here the
    line came below others, "timezone ...", "calendar off"): done at once, the
    game's thread and the registered address confirming the address, and
    answered (a new user's check: the line was dropped without a word).  Once
    per mail (``KEY#pool``).  Returns whether a line was done."""
    if om.machine or player is None:
        return False
    bk = post.bk
    if bk.answered(f"{key}#pool"):
        return False
    reqs = [r for r in (read_request([line]) for line in om.lines) if r is not None and r.kind in ("on", "off")]
    if not reqs:
        return False
    try:
        seat = record.player_by_name(player)
    except KeyError:
        return False
    if not seat.address or canonical_address(seat.address) != canonical_address(om.sender):
        return False
    out = _Out(post, om, record.language_of(seat))
    req = reqs[-1]
    with bk.transaction(), i18n.speaking(out.language):
        game = req.game
        if req.kind == "on" and game != "*":
            game = _pool_game(out, game)
            if game is None:
                bk.mark_answered(f"{key}#pool", record.id, now)
                return True
        if bk.person(out.to) is None:
            bk.register_person(out.to, seat.name, now, out.language)
        if req.kind == "on":
            bk.pool_join(out.to, game, now)
            out.reply(None, "title_pool", word("pool", "in_pool", games=bk.pool_of(out.to)))
        elif bk.pool_of(out.to):
            bk.pool_leave(out.to)
            out.reply(None, "title_pool", word("pool", "pool_off"))
        else:
            out.reply(None, "title_pool", word("pool", "not_in_pool"))
        bk.mark_answered(f"{key}#pool", record.id, now)
    return True


def _confirm(out: _Out, ask: dict[str, Any] | None, now: datetime) -> None:
    """A reply to a pool confirmation mail: the sender's request is done when
    the reply carries its token and says yes (or nothing)."""
    bk = out.post.bk
    tokens = set(tokens_in(out.om.thread_refs, POOL_THREAD))
    if ask is not None and ask["language"]:
        out.language = ask["language"]  # the language the request was written in
    with i18n.speaking(out.language):
        if ask is None or thread_token(POOL_THREAD, ask["secret"]) not in tokens:
            out.reply(None, "title_pool", word("pool", "nothing_to_confirm"))
            return
        said = _text_lines(out.om)
        if said and not confirms(said[0]):
            out.reply(None, "title_pool", word("pool", "reply_confirm"))
            return
        bk.pool_ask_done(out.to)
        bk.register_person(out.to, ask["name"], now, ask["language"])
        if ask["what"] == "on":
            bk.pool_join(out.to, ask["game"], now)
            out.reply(None, "title_pool", word("pool", "in_pool", games=bk.pool_of(out.to)))
        else:
            bk.pool_leave(out.to)
            out.reply(None, "title_pool", word("pool", "pool_off"))


def _unlinked_take(out: _Out, req: Request) -> None:
    """``take GAME`` that is no reply to an offer of the sender's: refused
    (an address's word alone proves nothing: the reply to the offer does)."""
    bk = out.post.bk
    game = req.game or next((o["game"] for o in bk.offers_of(out.to) if o["state"] == "offered"), "")
    with i18n.speaking(out.language):
        out.reply(None, "title_not_taken", word("pool", "no_offer", game_id=game))


def _take(out: _Out, store: GameStore, offer: dict[str, Any], req: Request | None, key: str,
          now: datetime) -> None:
    """A reply to offer ``offer``: the seat to its address (``auto``), or the
    game master asked (``gm``); refused for another address (a forwarded or
    forged reply), a lapsed offer, a seat taken."""
    bk, gid = out.post.bk, offer["game"]
    with i18n.speaking(out.language):
        if out.to != offer["address"]:
            out.reply(None, "title_not_taken", word("pool", "no_offer", game_id=gid))
            return
        said = _text_lines(out.om)
        first = read_request(said[:1]) if said else None
        if first is None or first.kind != "take":
            out.reply(gid, "title_pool", word("pool", "offer_usage", game_id=gid))
            return
        if offer["state"] == "lapsed":
            out.reply(gid, "title_not_taken", word("pool", "lapsed", game_id=gid))
            return
        if offer["state"] != "offered":
            out.reply(gid, "title_not_taken", word("pool", "seat_gone", game_id=gid))
            return
    with store.lock(gid):
        record = store.load(gid)
        seat = record.player_by_name(offer["seat"])
        v = bk.vacancy(gid, offer["seat"])
        if seat is not None and not seat.bot and canonical_address(seat.address or "") == offer["address"]:
            # a take a crash interrupted after the game's save: the seat is theirs
            _taken(bk, offer, now)
            return
        if v is None or v["state"] != "open" or seat is None or not seat.bot or record.ended is not None \
                or record.game.phase == "over":
            bk.set_offer(offer["seq"], state="lost")
            with i18n.speaking(out.language):
                out.reply(gid, "title_not_taken", word("pool", "seat_gone", game_id=gid))
            return
        gm_address = game_master_address(record, out.post.config)
        if policy(record) == "gm" and gm_address:
            gm_secret = secrets.token_hex(8)
            bk.set_offer(offer["seq"], state="gm", gm_secret=gm_secret)
            bk.set_vacancy(gid, offer["seat"], state="gm")
            for o in bk.offers(gid, offer["seat"], ("offered",)):
                bk.set_offer(o["seq"], state="lost")
            name = _newcomer_name(bk, record, offer)
            with i18n.speaking(i18n.DEFAULT):  # the game master reads English
                text = word("pool", "gm_ask", game_id=gid, seat=seat.name, newcomer=name,
                            until=format_when(v["round_ends"] or now))
                subject = word("notices", "subject", game_id=gid, title=word("pool", "title_gm_ask"))
                out.post.put(out.post.message(gid, gm_address, subject,
                                              render("gm_notice.txt", game_id=gid, text=text, secret=None),
                                              token=thread_token(gid, gm_secret)), kind="gm", game=gid)
            with i18n.speaking(out.language):
                out.reply(gid, "title_pool", word("pool", "asked_gm", game_id=gid))
            return
        done = _seat_taker(out.post, store, record, offer, BY_POOL, key, now)
        if done is not None:
            with i18n.speaking(out.language):
                out.reply(gid, "title_not_taken", done)
            return
        if gm_address:
            with i18n.speaking(i18n.DEFAULT):
                text = word("gm", "replaced", seat=seat.name, newcomer=_newcomer_name(bk, record, offer, own=True))
                subject = word("notices", "subject", game_id=gid, title=word("gm", "replaced_title", seat=seat.name))
                out.post.put(out.post.message(gid, gm_address, subject,
                                              render("gm_notice.txt", game_id=gid, text=text, secret=None),
                                              token=gm_token(record)), kind="gm", game=gid)


def _newcomer_name(bk: Any, record: GameRecord, offer: dict[str, Any], own: bool = False) -> str:
    """The name the volunteer of ``offer`` plays under: their registry name,
    changed (``signup.suggest_name``) when another seat of the game has it.
    ``own``: after the take-over, the name the game's log gave them."""
    if own:
        for e in reversed(record.gm_log):
            if e.get("command", "").startswith("replace ") and e.get("player") == offer["seat"]:
                return str(e.get("name"))
    name = (bk.person(offer["address"]) or {}).get("name") or "Player"
    others = [p.name for p in record.players if p.name != offer["seat"]]
    return name if check_name(name, others) is None else suggest_name(name, others)


def _seat_taker(post: Post, store: GameStore, record: GameRecord, offer: dict[str, Any], by: str, key: str,
                now: datetime) -> str | None:
    """The game master's ``replace`` of the offer's seat by its volunteer
    (``gm.execute``: saved, the welcome in the volunteer's language and the
    notices spooled; ``gm_log``
    names ``by``), the offer ``taken``, the vacancy ``filled``, the volunteer
    ``used`` at ``now``.  Returns None, or the refusal's text when ``replace``
    refuses (the game unchanged)."""
    name = _newcomer_name(post.bk, record, offer)
    cmd = gm_.GmCommand("replace", (offer["seat"], name, offer["address"]))
    ctx = gm_.Context(post, store, record, by, now.isoformat(timespec="seconds"), key, 0,
                      newcomer_language=(post.bk.person(offer["address"]) or {}).get("language"),
                      voice="pool", voiced={"approved": by != BY_POOL})
    try:
        gm_.execute(ctx, cmd)
    except gm_.GmRefusal as exc:
        return exc.text()
    _taken(post.bk, offer, now)
    log.info("game %s: seat %s taken from the substitute pool by %s", record.id, offer["seat"], name)
    return None


def _taken(bk: Any, offer: dict[str, Any], now: datetime) -> None:
    refill(bk, offer["game"], offer["seat"], state="filled")
    bk.set_vacancy(offer["game"], offer["seat"], state="filled")
    bk.set_offer(offer["seq"], state="taken")
    bk.mark_used(offer["address"], now)


def _gm_answer(out: _Out, store: GameStore, offer: dict[str, Any], req: Request | None, key: str,
               now: datetime) -> None:
    """The game master's reply to the question about ``offer``'s taker:
    ``approve`` seats them, ``veto`` offers the seat to the next volunteers;
    the taker is told either way.  Only the game's game master may answer."""
    bk, gid = out.post.bk, offer["game"]
    with store.lock(gid):
        record = store.load(gid)
        gm_address = game_master_address(record, out.post.config)
        out.language = i18n.DEFAULT
        with i18n.speaking(i18n.DEFAULT):
            if out.to != gm_address:
                out.reply(None, "title_not_taken", word("pool", "no_offer", game_id=gid))
                return
            if offer["state"] != "gm":
                _gm_reply(out, gid, word("pool", "gm_nothing", game_id=gid))
                return
            if req is None or req.kind not in ("approve", "veto"):
                _gm_reply(out, gid, word("pool", "gm_usage", game_id=gid))
                return
        taker_language = (bk.person(offer["address"]) or {}).get("language") or record.language
        if req.kind == "approve":
            bk.set_vacancy(gid, offer["seat"], state="open")  # for the replace's own check
            refused = _seat_taker(out.post, store, record, offer, gm_address, key, now)
            if refused is not None:
                bk.set_vacancy(gid, offer["seat"], state="gm")
                _gm_reply(out, gid, refused)
                return
            with i18n.speaking(i18n.DEFAULT):
                _gm_reply(out, gid, word("gm", "replaced", seat=offer["seat"],
                                         newcomer=_newcomer_name(bk, record, offer, own=True)))
            return  # the taker's welcome is their answer (``gm._replace``)
        bk.set_offer(offer["seq"], state="vetoed")
        bk.set_vacancy(gid, offer["seat"], state="open", round_ends=now)  # the next round in this cycle
        with i18n.speaking(i18n.DEFAULT):
            _gm_reply(out, gid, word("pool", "gm_vetoed", game_id=gid, seat=offer["seat"]))
        _notice(out.post, gid, offer["address"], taker_language, "title_not_taken",
                lambda: word("pool", "vetoed", game_id=gid))


def _gm_reply(out: _Out, gid: str, text: str) -> None:
    """An answer to the game master's mail (not limited: they are no stranger)."""
    subject = word("notices", "subject", game_id=gid, title=word("pool", "title_pool"))
    out.post.put(out.post.answer(out.om, gid, out.to, subject,
                                 render("gm_notice.txt", game_id=gid, text=text, secret=None)), kind="gm", game=gid)


def _notice(post: Post, gid: str, to: str, language: str, title: str, text: Any,
            token: str | None = None, tail: str = "", unsubscribe: bool = False) -> None:
    """A notice of the pool's own to ``to`` in ``language``: ``text()`` worded
    then, ``tail`` after it.  ``unsubscribe``: a take-over offer, with
    ``List-Unsubscribe`` (RFC 2369/8058, ``mail/unsubscribe.py``) whose token
    (kind ``pool``) takes ``to`` out of the pool."""
    from ..mail.unsubscribe import add_headers

    with i18n.speaking(language):
        subject = " ".join(word("notices", "subject", game_id=gid, title=word("pool", title)).split())
        msg = post.message(gid, to, subject, text() + tail + "\n", token=token, auto="auto-generated")
    if unsubscribe:
        add_headers(msg, post.config.moderator_address, post.bk.unsubscribe_token(to, "pool", post.clock()),
                    post.config.unsubscribe_url)
    post.put(msg, kind="signup", game=gid)


# ------------------------------------------------------------------ the clock
def run_clock(post: Post, store: GameStore, now: datetime, report: CycleReport) -> None:
    """The pool's stage of the cycle at ``now``: for every vacancy whose round
    of offers is over (or not begun), the offers still waiting lapse (a taker
    waiting for the game master is told) and the next ``OFFERS_PER_ROUND``
    volunteers are offered the seat; a vacancy whose seat has a player again,
    or whose game is over or has the policy ``none``, closes."""
    from filelock import Timeout

    bk = post.bk
    for v in bk.vacancies(("open", "gm")):
        if v["round_ends"] is not None and now < v["round_ends"]:
            continue
        gid = v["game"]
        try:
            with store.lock(gid), bk.transaction():
                for o in bk.offers(gid, v["seat"], ("offered", "gm")):
                    bk.set_offer(o["seq"], state="lapsed")
                    if o["state"] == "gm":
                        lang = (bk.person(o["address"]) or {}).get("language") or i18n.DEFAULT
                        _notice(post, gid, o["address"], lang, "title_not_taken",
                                lambda: word("pool", "lapsed", game_id=gid))
                record = store.load(gid) if store.exists(gid) else None
                seat = record.player_by_name(v["seat"]) if record is not None else None
                if record is None or seat is None or not seat.bot or record.ended is not None \
                        or record.game.phase == "over" or policy(record) == "none":
                    bk.set_vacancy(gid, v["seat"], state="closed")
                    continue
                if v["state"] == "gm":
                    bk.set_vacancy(gid, v["seat"], state="open")
                report.signups += offer_round(post, record, v, now)
        except (StoreError, OSError, Timeout) as exc:
            report.errors.append(f"game {gid}: substitute pool: {exc or 'game locked'}")


def candidates(bk: Any, record: GameRecord, seat: str, config: Any) -> list[dict[str, Any]]:
    """The volunteers who may be offered seat ``seat`` of ``record``'s game
    now, in the order they are offered it (``Bookkeeping.volunteers``): not in
    the game (players, observers, game master), holding no offer of the game,
    never offered this seat; those whose language (the registry's; none:
    English) is the game's first, then the longest unused."""
    inside = gm_.in_game_addresses(record, config)
    offered_seat = {o["address"] for o in bk.offers(record.id, seat)}
    holding = {o["address"] for o in bk.offers(record.id, None, ("offered", "gm"))}
    found = [p for p in bk.volunteers(record.id) if p["address"] not in inside | offered_seat | holding]
    return sorted(found, key=lambda p: (p["language"] or i18n.DEFAULT) != record.language)


def offer_round(post: Post, record: GameRecord, v: dict[str, Any], now: datetime) -> int:
    """Offer vacancy ``v`` of ``record``'s game to the next
    ``OFFERS_PER_ROUND`` ``candidates``: each an offer mail (in their
    language) with the seat's public position in words, lapsing with the round
    (``round_seconds``).  Returns how many were offered (none: the vacancy waits
    a round for new volunteers)."""
    bk = post.bk
    pick = candidates(bk, record, v["seat"], post.config)[:OFFERS_PER_ROUND]
    ends = now + timedelta(seconds=round_seconds(record))
    for p in pick:
        secret = secrets.token_hex(8)
        bk.add_offer(record.id, v["seat"], p["address"], v["round"] + 1, secret, now, ends)
        lang = p["language"] or i18n.DEFAULT
        with i18n.speaking(lang):
            position = position_text(record)
        _notice(post, record.id, p["address"], lang, "title_offer",
                lambda: word("pool", "offer", game_id=record.id, seat=v["seat"], why=v["why"],
                             until=format_when(ends), gm=policy(record) == "gm"),
                token=thread_token(record.id, secret), tail="\n\n" + position, unsubscribe=True)
    bk.set_vacancy(record.id, v["seat"], round=v["round"] + 1, round_ends=ends)
    if pick:
        log.info("game %s: seat %s offered to %d volunteer(s) of the substitute pool (round %d)",
                 record.id, v["seat"], len(pick), v["round"] + 1)
    return len(pick)


def position_text(record: GameRecord) -> str:
    """The game's position as anyone may see it (``templates/position.txt``
    with the public view, no hand), in the language in force."""
    from ..render import status_context

    seat = record.players[0].name
    ctx = status_context(record, seat, [])
    ctx.update(view=record.game.public_view(), you=None, hand_after_choice=[], secret=None)
    return render("position.txt", **ctx).strip()


# ------------------------------------------------------------------ who played which moves
BUILT_IN = "the built-in player"


def seat_holders(record: GameRecord) -> dict[str, list[tuple[str, int, int]]]:
    """Who played which moves of each seat of ``record``'s game, from its
    history and ``gm_log``: ``{seat: [(holder, first, last)]}``, runs of the
    seat's own moves (numbered from 1, in the order made) by one holder: the
    seat's first player (its name), ``BUILT_IN`` (``by: bot``: missed moves,
    an abandoned, ejected or resigned seat), or the newcomer of each
    ``replace`` (its ``name``) for the moves received after it."""
    def when(text: Any) -> datetime | None:
        try:
            return datetime.fromisoformat(str(text)) if text else None
        except ValueError:
            return None

    swaps: dict[str, list[tuple[datetime, str]]] = {}
    for e in record.gm_log:
        if str(e.get("command", "")).startswith("replace ") and e.get("player") and when(e.get("at")):
            swaps.setdefault(str(e["player"]), []).append((when(e["at"]), str(e.get("name") or "?")))
    out: dict[str, list[tuple[str, int, int]]] = {p.name: [] for p in record.players}
    count: dict[str, int] = {}
    for h in record.history:
        seat = h["player"]
        count[seat] = n = count.get(seat, 0) + 1
        if h.get("by") == "bot":
            holder = BUILT_IN
        else:
            holder, at = seat, when(h.get("received"))
            for t, name in sorted(swaps.get(seat, [])):
                if at is not None and at >= t:
                    holder = name
        runs = out.setdefault(seat, [])
        if runs and runs[-1][0] == holder:
            runs[-1] = (holder, runs[-1][1], n)
        else:
            runs.append((holder, n, n))
    return out


def holders_lines(record: GameRecord) -> list[str]:
    """``pbem replay``'s lines (English, for the operator) naming who played
    which moves of each seat that changed hands (a ``replace`` in ``gm_log``:
    the game master's or the substitute pool's; ``seat_holders``)."""
    replaced = {str(e.get("player")) for e in record.gm_log if str(e.get("command", "")).startswith("replace ")}
    lines = []
    for seat, runs in seat_holders(record).items():
        if seat in replaced and runs:
            lines.append(f"  seat {seat}: " + "; ".join(
                f"moves {a}-{b} by {who}" if a != b else f"move {a} by {who}" for who, a, b in runs))
    return lines
