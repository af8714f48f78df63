"""A person's own data (issue 28): ``export me`` and ``forget me``, and the
operator's ``pbem export ADDRESS`` / ``pbem forget ADDRESS``.

``export me`` (a line of its own in a game thread or the person thread) is
answered with one mail to the person holding ``pbem-export.json``
(``export_data``: schema ``EXPORT_VERSION``, docs/operations.md "A person's own
data"): their person-level settings and per-game overrides, their vacation
ledger, their seats in every game (game id, seat name, joined/left, their
history entries and that game's result for them), the press they sent and
the press sent to their seat by name (not messages ``to all``), and their
record (``archive.records``).  Never another player's hand or address.

``forget me`` is answered with a question in the person's thread; its
Message-ID carries the token of a fresh secret (``<RANDOM.TOKEN.pbem-me@...>``,
``mail.threads.person_token``), kept as the person setting ``FORGET_KEY``
(``"SECRET ISO-TIME"``: no schema change).  Only a reply from the same address
naming it, within ``FORGET_WINDOW``, whose first line of text confirms
(``signup.confirms``), carries it out (``forget``): a reply from another
address, or with any other token, changes nothing.

``forget`` removes the address and the name:

* game files (each rewritten atomically, replayed and compared in full before
  it is kept, ``_rewrite``): each seat of theirs gets the neutral name
  ``Player N`` (N: the seat's place, 1-6; consistent within the game) in every
  structured place (players, history, log, state, threads, calendar, ...);
  address and secret of the seat are dropped; the press they sent is removed
  (``press``), others' messages keep their text with the name replaced;
  ``message_id`` of their history entries is dropped; the address anywhere
  else (``gm_log``, observers, game master) becomes ``[forgotten]``.  A running
  game's seat is first resigned as ``resign confirm`` does (the built-in player
  takes it, offered to substitutes per the game's ``substitutes``); its other
  players, observers and game master are told the seat is vacant, by its
  neutral name only.  The game snapshot (``games/.snapshots/GAME.snap``) is
  deleted (a cache; rebuilt by the next save).
* the bookkeeping database: every row of theirs (``purge_bookkeeping``),
  with ``PRAGMA secure_delete=ON``, then a checkpoint and ``VACUUM``
  (``vacuum``), so that neither the file nor its ``-wal`` holds the deleted
  pages.
* the spool: every mail to them waiting (and in ``failed/``) but the last
  answer, and every waiting mail to anyone else that names their address.

The answer "you are forgotten" goes to the address once; after the cycle has
sent it, the end of the cycle (``finish``) purges what sending it wrote.

Below ``people``, ``act`` and ``cycle``; above ``seats``, ``notify``,
``announce``, ``vacancy``.  Nothing here reads a clock: ``post.clock()``.
"""
from __future__ import annotations

import json
import logging
import re
import secrets
from datetime import datetime, timedelta
from email.message import EmailMessage
from typing import Any

from .. import i18n
from ..mail.read import OrderMail, canonical_address
from ..mail.threads import person_message_id, person_token, person_tokens_in
from ..render import render
from ..render.words import word
from ..render.when import format_when
from ..store.files import atomic_write
from ..store.gamefile import GameStore, StoreError, _dump
from .announce import gm_token, tell_everyone
from .deadlines import game_master_address
from .observers import drop_unsent_status
from .send import Post
from .vacancy import vacate

log = logging.getLogger("pbem")

EXPORT_VERSION = 1
"""The schema version of ``pbem-export.json`` (``export_data``'s ``version``)."""
EXPORT_FILE = "pbem-export.json"
"""The attachment's file name."""
FORGET_KEY = "forget"
"""The person setting holding a ``forget me`` waiting for its confirmation."""
FORGET_WINDOW = timedelta(days=2)
"""How long the question of ``forget me`` can be confirmed."""
FORGOTTEN = "[forgotten]"
"""What stands where the address was in text that stays (a ``gm_log`` line)."""
PER_DAY = 3
"""Answers to ``export me`` / ``forget me`` of one address per UTC day (each
also within ``Post.allow``)."""


# ------------------------------------------------------------------ export
def _seats_of(data: dict[str, Any], address: str) -> list[dict[str, Any]]:
    return [p for p in data.get("players") or []
            if p.get("address") and canonical_address(str(p["address"])) == address]


def _joined_left(data: dict[str, Any], name: str) -> tuple[str | None, str | None]:
    """When the seat ``name`` got this person (the game's start, or the
    ``replace`` that gave it to them) and when it left them (a resignation or
    ``eject``), from ``gm_log``; None where the file does not say."""
    joined: str | None = str(data.get("created") or "") or None
    left = None
    for e in data.get("gm_log") or []:
        if e.get("player") != name:
            continue
        if str(e.get("command", "")).startswith("replace"):
            joined, left = e.get("at"), None
        elif e.get("command") == "resign" or str(e.get("command", "")).startswith("eject"):
            left = e.get("at")
    return joined, left


def export_data(bk: Any, store: GameStore, address: str, now: datetime,
                games: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The data of ``address`` (canonical) across games, JSON-able:
    ``{"version": EXPORT_VERSION, "exported": ISO time, "address", "name" (the
    registry's, or None), "settings": {key: value}, "overrides": [{game, key,
    value}], "vacation_ledger": [{at, seconds, games}], "pool": [game ids or
    "*"], "seats": [{game, seat, phase, joined, left, orders: [{order,
    received, arrived, by, due}], result: {finished, won, ranks, in_time,
    missed}}], "press": [{game, from, to, at, text}], "record": {played,
    finished, won, average_rank, in_time, missed, median_seconds}}``.  Only
    their own seats' orders, the press they sent and the press sent to their
    seat by name; never another person's address or hand.  ``games``: the game
    files' data (default: every game file of the games directory)."""
    from ..archive.records import Record, person_records

    address = canonical_address(address)
    if games is None:
        games = []
        for gid in store.ids():
            try:
                games.append(store.read_data(gid))
            except StoreError:
                continue
    person = bk.person(address) or {}
    settings = {k: v for k, v in bk.settings_of(address).items() if k != FORGET_KEY}
    seats, press, mine = [], [], []
    for data in sorted(games, key=lambda d: str(d.get("game"))):
        own = _seats_of(data, address)
        if not own:
            continue
        mine.append(data)
        gid = str(data.get("game"))
        result = person_records([data]).get(address)
        for seat in own:
            name = str(seat["name"])
            joined, left = _joined_left(data, name)
            orders = [{k: h.get(k) for k in ("order", "received", "arrived", "by", "due") if h.get(k) is not None}
                      for h in data.get("history") or [] if h.get("player") == name]
            seats.append({"game": gid, "seat": name, "phase": (data.get("state") or {}).get("phase"),
                          "ended": bool(data.get("ended")), "joined": joined, "left": left, "orders": orders,
                          "result": None if result is None else {
                              "finished": result.finished, "won": result.won, "ranks": result.ranks,
                              "in_time": result.in_time, "missed": result.missed}})
            for m in data.get("press") or []:
                to = m.get("to")
                if m.get("from") == name or (isinstance(to, list) and name in to):
                    press.append({"game": gid, "from": m.get("from"), "to": to, "at": m.get("at"),
                                  "text": m.get("text")})
    overrides = [{"game": str(d.get("game")), "key": k, "value": v} for d in mine for k in ("timezone", "language")
                 for v in [bk.game_override(address, str(d.get("game")), k)] if v is not None]
    rec = person_records(mine).get(address) or Record(address)
    return {
        "version": EXPORT_VERSION, "exported": now.isoformat(timespec="seconds"), "address": address,
        "name": person.get("name"), "settings": settings, "overrides": overrides,
        "vacation_ledger": [{"at": e["at"].isoformat(timespec="seconds"), "seconds": e["seconds"],
                             "games": e["games"]} for e in bk.vacation_ledger(address)],
        "pool": bk.pool_of(address), "seats": seats, "press": press,
        "record": {"played": rec.played, "finished": rec.finished, "won": rec.won,
                   "average_rank": rec.average_rank, "in_time": rec.in_time, "missed": rec.missed,
                   "median_seconds": rec.median_seconds},
    }


def export_json(data: dict[str, Any]) -> str:
    """``export_data``'s mapping as the attachment's text (UTF-8 JSON, keys
    sorted, two spaces of indent, a final newline)."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _within(post: Post, address: str, what: str) -> bool:
    if not post.daily(f"privacy:{address}", PER_DAY):
        log.warning("privacy: the daily limit of answers to a person is reached; not answering %r", what)
        return False
    return post.allow(address, what)


def _person_mail(post: Post, om: OrderMail, address: str, subject: str, text: str,
                 secret: str | None = None) -> EmailMessage:
    """A mail to ``address`` in their person thread (opened when it is not yet)
    answering ``om``; its Message-ID carries the token of ``secret`` (default:
    the person thread's own)."""
    now = post.clock()
    thread = post.bk.open_person_thread(address, secrets.token_hex(8), now)
    refs = [r for r in om.references if r]
    if thread["thread"] and thread["thread"] not in refs:
        refs.insert(0, thread["thread"])
    msg = post.message(None, address, subject, text, in_reply_to=om.message_id, references=refs)
    mid = person_message_id(person_token(secret or thread["secret"]), post.domain)
    del msg["Message-ID"]
    msg.set_raw(*msg.policy.header_store_parse("Message-ID", mid))
    if secret is None:
        post.bk.set_person_thread_id(address, mid)
    return msg


def answer_export(post: Post, store: GameStore, om: OrderMail, key: str, address: str,
                  held: Any = None, language: str | None = None) -> None:
    """Answer ``export me`` of ``address`` (mail ``om``, key ``key``): one mail
    with ``pbem-export.json`` attached, in their language; ``held``: the
    ``GameRecord`` whose lock the caller holds (its data from the record).
    Within ``PER_DAY`` and the per-cycle limit, else not answered."""
    address = canonical_address(address)
    if not _within(post, address, "export me"):
        return
    games = []
    for gid in [g.game_id for g in post.bk.games_of(address)]:  # the games index: their games only
        if held is not None and gid == held.id:
            games.append(held.to_data())
            continue
        try:
            games.append(store.read_data(gid))
        except StoreError:
            continue
    data = export_data(post.bk, store, address, post.clock(), games)
    with i18n.speaking(language or i18n.DEFAULT):
        msg = _person_mail(post, om, address, word("person", "export_subject"),
                           word("person", "export_text", version=EXPORT_VERSION) + "\n")
    msg.add_attachment(export_json(data).encode("utf-8"), maintype="application", subtype="json",
                       filename=EXPORT_FILE)
    post.put(msg, kind="person", answers=key)


def ask_forget(post: Post, om: OrderMail, key: str, address: str, language: str | None = None) -> None:
    """Answer ``forget me`` of ``address``: the question, with a fresh secret
    (``FORGET_KEY``) whose token its Message-ID carries; a reply confirming it
    within ``FORGET_WINDOW`` (``handle_reply``) forgets them.  Nothing else
    changes.  Within ``PER_DAY`` and the per-cycle limit, else not answered
    (and no secret kept)."""
    address = canonical_address(address)
    if not _within(post, address, "forget me"):
        return
    now = post.clock()
    secret = secrets.token_hex(16)
    post.bk.set_setting(address, FORGET_KEY, f"{secret} {now.isoformat()}", now)
    zone = post.bk.setting(address, "timezone")
    with i18n.speaking(language or i18n.DEFAULT):
        msg = _person_mail(post, om, address, word("person", "forget_subject"),
                           word("person", "forget_ask", until=format_when(now + FORGET_WINDOW, zone)) + "\n",
                           secret=secret)
    post.put(msg, kind="person", answers=key)


def _asked(bk: Any, address: str) -> tuple[str, datetime] | None:
    value = bk.setting(address, FORGET_KEY)
    if not value or " " not in value:
        return None
    secret, _, at = value.partition(" ")
    try:
        return secret, datetime.fromisoformat(at)
    except ValueError:
        return None


_YES = {"confirm", "confirmed", "yes", "ok", "confirmar", "confirmo", "sí", "si", "bestätigen", "bestatigen",
        "bestaetigen", "ja", "potvrdit", "potvrzuji", "ano", "确认", "是"}
_NO = {"no", "not", "don't", "dont", "never", "nein", "nicht", "kein", "ne", "nikoli", "nunca", "不", "不要", "别"}


def _confirms(line: str) -> bool:
    """Whether a reply's first line of text says yes, as ``signup.confirms``
    reads it (the same words; that module sits above this one): a word of
    ``_YES`` among its first four words and none of ``_NO``."""
    words = [i18n.fold(w).strip(".!,:;") for w in line.split()]
    if any(w in {i18n.fold(n) for n in _NO} for w in words):
        return False
    return any(w in {i18n.fold(y) for y in _YES} for w in words[:4])


def is_forget_reply(om: OrderMail, bk: Any) -> bool:
    """Whether ``om`` replies to the ``forget me`` question sent to its sender:
    one of its In-Reply-To/References carries the token of the secret kept for
    that very address (compared in constant time)."""
    import hmac

    tokens = person_tokens_in(om.thread_refs)
    asked = _asked(bk, canonical_address(om.sender)) if tokens else None
    if asked is None:
        return False
    mine = person_token(asked[0]).encode()
    return any(hmac.compare_digest(t.encode(), mine) for t in tokens)


def handle_reply(om: OrderMail, key: str, post: Post, store: GameStore, report: Any) -> str | None:
    """Carry out a reply to the ``forget me`` question (``is_forget_reply``):
    its first line of text confirms (``_confirms``, as ``signup.confirms``; no text at all
    confirms too) within ``FORGET_WINDOW``: ``forget`` and the last answer;
    another reply, or a late one: answered that nothing was removed, the
    question dropped.  Returns ``"processed"``, or None when ``om`` is no such
    reply (routed as any other)."""
    bk = post.bk
    if not is_forget_reply(om, bk):
        return None
    if post.answered(key):
        return "processed"
    address = canonical_address(om.sender)
    _, asked = _asked(bk, address)  # type: ignore[misc]
    lines = [l for l, k in zip(om.lines, om.kinds or ["text"] * len(om.lines)) if k == "text"]
    now = post.clock()
    language = bk.setting(address, "language") or (bk.person(address) or {}).get("language")
    with bk.transaction():
        bk.set_setting(address, FORGET_KEY, None, now)
        if now - asked > FORGET_WINDOW or (lines and not _confirms(lines[0])):
            if post.allow(address, "forget me"):
                with i18n.speaking(language or i18n.DEFAULT):
                    text = word("person", "forget_too_late" if now - asked > FORGET_WINDOW
                                else "forget_not_confirmed")
                    post.put(_person_mail(post, om, address, word("person", "forget_subject"), text + "\n"),
                             kind="person", answers=key)
            else:
                bk.mark_answered(key, None, now)
            return "processed"
        games = forget(post, store, address)
        with i18n.speaking(language or i18n.DEFAULT):
            last = post.message(None, address, word("person", "forgotten_subject"),
                                word("person", "forgotten", games=", ".join(games) or "-") + "\n",
                                in_reply_to=om.message_id, references=[r for r in om.references if r])
        del last["Message-ID"]
        mid = person_message_id(person_token(secrets.token_hex(8)), post.domain)  # a thread of no one
        last.set_raw(*last.policy.header_store_parse("Message-ID", mid))
        post.put(last, kind="forgotten")
        bk.mark_answered(key, None, now)
    report.commands += 1
    return "processed"


# ------------------------------------------------------------------ forget
def neutral_names(data: dict[str, Any], address: str) -> dict[str, str]:
    """``{old seat name: neutral name}`` of the seats of ``address`` in a game
    file's mapping: ``Player N``, N the seat's place (1-based); a name another
    seat holds gets a letter (``Player 2b``)."""
    address = canonical_address(address)
    players = data.get("players") or []
    taken = {str(p.get("name")) for p in players}
    out = {}
    for i, p in enumerate(players, 1):
        if p.get("address") and canonical_address(str(p["address"])) == address:
            new, n = f"Player {i}", 0
            while new in taken and new != p.get("name"):
                n += 1
                new = f"Player {i}{chr(ord('a') + n)}"
            out[str(p["name"])] = new
            taken.add(new)
    return out


_KEEP = ("format", "game", "created", "board", "board_sha256", "seed", "ruleset", "options")


def _rename(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string equal to a key of ``names`` (a value, or a
    mapping's key) replaced by its neutral name."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    if isinstance(value, dict):
        return {(names.get(k, k) if isinstance(k, str) else k): _rename(v, names) for k, v in value.items()}
    return value


def _scrub(value: Any, address_re: re.Pattern[str], name_re: re.Pattern[str] | None,
           names: dict[str, str]) -> Any:
    """``value`` with the address (any case) replaced by ``FORGOTTEN`` in every
    string, and, with ``name_re``, the old names (whole words, any case) by the
    neutral ones."""
    if isinstance(value, str):
        out = address_re.sub(FORGOTTEN, value)
        if name_re is not None:
            lower = {k.lower(): v for k, v in names.items()}
            out = name_re.sub(lambda m: lower.get(m.group(0).lower(), m.group(0)), out)
        return out
    if isinstance(value, list):
        return [_scrub(v, address_re, name_re, names) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, address_re, name_re, names) for k, v in value.items()}
    return value


def scrub_game(data: dict[str, Any], address: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The game file mapping ``data`` without ``address`` (any case) and the
    names of their seats (see the module's docstring), and the renames done
    (``neutral_names``).  ``data`` itself is not changed."""
    address = canonical_address(address)
    names = neutral_names(data, address)
    told = dict(names)  # the names they chose: their seats', and each taken over by a 'replace' (gm_log)
    for e in data.get("gm_log") or []:
        if isinstance(e, dict) and e.get("name") and e.get("address") \
                and canonical_address(str(e["address"])) == address:
            told.setdefault(str(e["name"]), names.get(str(e.get("player")), FORGOTTEN))
    address_re = re.compile(re.escape(address), re.IGNORECASE)
    # a whole word, and no part of an address or a dotted name ("cy@example.net", "cy.smith")
    name_re = re.compile(r"(?<![\w@.+-])(" + "|".join(re.escape(n) for n in sorted(told, key=len, reverse=True))
                         + r")(?![\w@]|[.+-]\w)", re.IGNORECASE) if told else None
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in _KEEP:
            out[key] = value
        elif key == "history":
            entries = []
            for h in value or []:
                h = dict(h)
                if h.get("player") in names:
                    h["player"] = names[h["player"]]
                    h.pop("message_id", None)  # the identity of their mail, from their mail system
                entries.append(_scrub(h, address_re, None, names))
            out[key] = entries
        elif key == "press":
            kept = [m for m in value or [] if m.get("from") not in names]  # the press they sent: removed
            out[key] = _scrub(_rename(kept, names), address_re, name_re, told)
        elif key in ("gm_log", "signup"):
            out[key] = _scrub(_rename(value, told), address_re, name_re, told)
        elif key == "players":
            seats = []
            for p in value or []:
                p = dict(p)
                if p.get("address") and canonical_address(str(p["address"])) == address:
                    p["name"] = names[str(p["name"])]
                    p["address"] = None
                    p["secret"] = secrets.token_hex(4)  # their old token opens nothing
                seats.append(p)
            out[key] = seats
        elif key == "observers":
            out[key] = [a for a in value or [] if canonical_address(str(a)) != address]
        elif key == "game_master" and isinstance(value, dict) and value.get("address") \
                and canonical_address(str(value["address"])) == address:
            out[key] = {"address": None, "secret": None}
        else:
            out[key] = _scrub(_rename(value, names), address_re, None, names)
    return out, names


def _rewrite(post: Post, store: GameStore, gid: str, address: str) -> tuple[dict[str, str], bool, bool]:
    """Rewrite game ``gid``'s file without ``address`` (hold its lock): resign
    their seats of a running game first, then ``scrub_game``, written
    atomically, replayed and compared in full (else the old bytes are put
    back and StoreError raised), saved once more through the store (index,
    digest) and its snapshot deleted.  Returns the renames, whether the game
    was running and whether the file was rewritten (not when it does not name
    the address)."""
    from . import notify

    record = notify.load(post, store, gid)
    own = [p for p in record.players if p.address and canonical_address(p.address) == address]
    if not own:
        data = record.to_data()
        if address not in json.dumps(data, ensure_ascii=False).lower():
            return {}, False, False
    running = record.game.phase != "over" and record.ended is None
    now = post.clock()
    for p in own:
        if running and p.name not in record.resigned:
            record.resigning.pop(p.name, None)
            record.resigned.append(p.name)
            p.bot = True
            if p.name in record.digest:
                record.digest.remove(p.name)
            record.gm_log.append({"by": "forget me", "at": now.isoformat(timespec="seconds"),
                                  "command": "resign", "player": p.name})
            drop_unsent_status(post, record, p.name)
    path = store.path(gid)
    old = path.read_bytes()
    data, names = scrub_game(record.to_data(), address)
    atomic_write(path, _dump(data).encode("utf-8"))
    try:
        fresh = store.load(gid)  # no trusted digest: replayed and compared in full
    except StoreError:
        atomic_write(path, old)
        raise
    store.save(fresh)  # the index, the digest, the players' addresses
    store.snapshot_path(gid).unlink(missing_ok=True)
    for old_name, new_name in names.items():
        if running:
            _rename_vacancy(post.bk, gid, old_name, new_name)
            vacate(post.bk, fresh, new_name, "resigned", now)
            tell_everyone(post, fresh, lambda n=new_name: word("person", "vacated_title", seat=n),
                          lambda n=new_name: word("person", "vacated", seat=n), skip=(new_name,))
            gm = game_master_address(fresh, post.config)
            if gm and gm != address and gm not in {canonical_address(p.address) for p in fresh.players if p.address}:
                with i18n.speaking(i18n.DEFAULT):
                    post.put(post.message(gid, gm, word("notices", "subject", game_id=gid,
                                                        title=word("person", "vacated_title", seat=new_name)),
                                          render("gm_notice.txt", game_id=gid,
                                                 text=word("person", "vacated", seat=new_name), secret=None),
                                          token=gm_token(fresh)), kind="gm", game=gid)
        else:
            _rename_vacancy(post.bk, gid, old_name, new_name)
    return names, running, True


def _rename_vacancy(bk: Any, gid: str, old: str, new: str) -> None:
    bk._write("UPDATE OR REPLACE vacancies SET seat = ? WHERE game = ? AND seat = ?", (new, gid, old))
    bk._write("UPDATE offers SET seat = ? WHERE game = ? AND seat = ?", (new, gid, old))


def forget(post: Post, store: GameStore, address: str) -> list[str]:
    """Forget ``address`` (any case): every game file of the games directory
    naming it (``_rewrite``, each under its lock), the bookkeeping
    (``purge_bookkeeping``) and the spool (``purge_spool``).  Returns the ids
    of the games changed.  A game that cannot be rewritten (its replay fails)
    keeps its file and is reported to the operator; the others go on.  The
    database's ``VACUUM`` is ``finish``'s (after the cycle's sending), noted
    in ``post.forgotten``."""
    address = canonical_address(address)
    person = post.bk.person(address) or {}
    names: set[str] = {str(person["name"])} if person.get("name") else set()
    names |= {str(s["name"]) for s in post.bk.signups_of(address)}
    changed, failed = [], []
    for gid in store.ids():
        try:
            with store.lock(gid):
                renamed, _, written = _rewrite(post, store, gid, address)
        except (StoreError, OSError) as exc:
            log.error("forget: game %s not rewritten: %s", gid, exc)
            failed.append(gid)
            continue
        if written:
            changed.append(gid)
        names |= set(renamed)
    purge_bookkeeping(post.bk, address, names)
    purge_spool(post, address, names)
    purge_leftovers(store, post.spool.dir, address)
    post.forgotten.append((address, sorted(names)))
    if failed:
        post.tell_operator(f"forget: the game files {', '.join(failed)} could not be rewritten without a "
                           "forgotten person (see the log); `pbem forget ADDRESS` again after `pbem doctor`")
    return sorted(changed)


def _address_tables(db: Any) -> list[str]:
    """The bookkeeping's tables with an ``address`` column (``people``,
    ``signups``, ``pool``, ``pool_asks``, ``offers``, ``person_settings``,
    ``game_overrides``, ``vacation_ledger``, ``person_threads``, ``bounces``,
    ``game_players``, ``unsubscribe_tokens``, ``digests``, ...), read from the
    schema itself so that a table a later schema adds is purged too."""
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return [t for t in names if any(c[1] == "address" for c in db.execute(f"PRAGMA table_info('{t}')"))]


def purge_bookkeeping(bk: Any, address: str, names: set[str] | list[str] = ()) -> int:
    """Delete every row of ``address`` (canonical) from the bookkeeping (the
    tables with an ``address`` column, ``daily_counts`` and ``alerts`` naming it,
    ``meta`` values and open games' setups holding it), with ``PRAGMA
    secure_delete=ON`` (deleted content is overwritten).  ``names``: their
    display names, taken out of ``mail_held`` and the alerts.  An answered
    key (a Message-ID) holding the address goes too.  Returns the rows deleted."""
    db = bk._db
    db.execute("PRAGMA secure_delete = ON")
    n = 0
    with bk.transaction():
        for table in _address_tables(db):
            n += db.execute(f"DELETE FROM {table} WHERE address = ? COLLATE NOCASE", (address,)).rowcount
        n += db.execute("DELETE FROM daily_counts WHERE instr(lower(name), ?) > 0", (address,)).rowcount
        # the identity of a mail of theirs, where their mail program put the address into its Message-ID
        n += db.execute("DELETE FROM answered WHERE instr(lower(key), ?) > 0", (address,)).rowcount
        n += db.execute("DELETE FROM alerts WHERE instr(lower(text), ?) > 0", (address,)).rowcount
        for name in names:
            n += db.execute("DELETE FROM alerts WHERE instr(text, ?) > 0", (name,)).rowcount
        for key, value in db.execute("SELECT key, value FROM meta").fetchall():
            if value and (address in value.lower() or (key == "mail_held" and any(m in value for m in names))):
                try:
                    cleaned = _scrub(_strip(json.loads(value), address, set(names)),
                                     re.compile(re.escape(address), re.I), None, {})
                    db.execute("UPDATE meta SET value = ? WHERE key = ?", (json.dumps(cleaned, sort_keys=True), key))
                except ValueError:
                    db.execute("DELETE FROM meta WHERE key = ?", (key,))
        for gid, setup in db.execute("SELECT id, setup FROM open_games WHERE instr(lower(setup), ?) > 0",
                                     (address,)).fetchall():
            cleaned = _strip(json.loads(setup), address, set())
            db.execute("UPDATE open_games SET setup = ? WHERE id = ?", (json.dumps(cleaned, sort_keys=True), gid))
    return n


def _strip(value: Any, address: str, names: set[str]) -> Any:
    """``value`` (JSON) without list items that are ``address`` or one of ``names``."""
    if isinstance(value, list):
        return [_strip(v, address, names) for v in value
                if not (isinstance(v, str) and (v.lower() == address or v in names))]
    if isinstance(value, dict):
        return {k: _strip(v, address, names) for k, v in value.items()}
    return value


def purge_spool(post: Post, address: str, names: set[str] | list[str] = (), keep_last: bool = False) -> int:
    """Drop from the spool (and ``failed/``) every mail to ``address`` (but the
    last answer, kind ``forgotten``, with ``keep_last``) and every mail that
    names the address in its bytes; returns how many."""
    spool = post.spool
    n = 0
    needle = address.encode().lower()
    for d in (spool.dir, spool.dir / "failed"):
        if not d.is_dir():
            continue
        for eml in sorted(d.glob("*.eml")):
            meta_path = eml.with_suffix(".json")
            try:
                raw = eml.read_bytes()
                meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
            except (OSError, ValueError):
                continue
            if keep_last and meta.get("kind") == "forgotten":
                continue
            if needle in raw.lower() or address in json.dumps(meta).lower():
                if d == spool.dir:
                    spool.remove(eml.stem)
                else:
                    eml.unlink(missing_ok=True)
                    meta_path.unlink(missing_ok=True)
                n += 1
    return n


def purge_leftovers(store: GameStore, spool_dir: Any, address: str) -> int:
    """The other files pbem writes that can hold ``address``: a temporary file
    of an interrupted atomic write (``.NAME.*.tmp``) in the games directory or
    the spool holding it is removed; the old state ``moderator.yaml.migrated``
    (kept for a downgrade) is rewritten without it (its bounces and alerts
    naming it, ``answered`` untouched).  Returns how many files changed."""
    import yaml
    from pathlib import Path

    n = 0
    needle = address.encode()
    for d in (Path(store.dir), Path(spool_dir)):
        for tmp in d.glob(".*.tmp") if d.is_dir() else ():
            try:
                if needle in tmp.read_bytes().lower():
                    tmp.unlink()
                    n += 1
            except OSError:
                continue
    legacy = Path(spool_dir) / "moderator.yaml.migrated"
    try:
        raw = legacy.read_bytes()
    except OSError:
        return n
    if needle not in raw.lower():
        return n
    try:
        data = yaml.safe_load(raw.decode("utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError):
        data = {}
    if isinstance(data, dict):
        for key in ("bounces", "alerts"):
            if isinstance(data.get(key), dict):
                data[key] = {k: v for k, v in data[key].items() if address not in str(k).lower()
                             and address not in str(v).lower()}
        text = yaml.safe_dump(_strip(data, address, set()), sort_keys=True, allow_unicode=True)
    else:
        text = ""
    if address in text.lower():  # somewhere no key says: the file goes (it was imported long ago)
        legacy.unlink()
    else:
        atomic_write(legacy, text.encode("utf-8"))
    return n + 1


def vacuum(bk: Any) -> None:
    """Leave no deleted page in the database files: a checkpoint of the WAL
    into the database (``TRUNCATE``: the ``-wal`` emptied), ``VACUUM`` (the
    database rebuilt), and a checkpoint again.  Outside any transaction."""
    db = bk._db
    db.execute("PRAGMA secure_delete = ON")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def finish(post: Post) -> None:
    """After the cycle's sending: for each person forgotten in it
    (``post.forgotten``), purge again what the cycle wrote since (the daily
    counts of their answers, a bounce of the last mail, spool mails but the
    last answer while it waits), then ``vacuum``."""
    if not post.forgotten:
        return
    for address, names in post.forgotten:
        purge_bookkeeping(post.bk, address, names)
        purge_spool(post, address, names, keep_last=True)
    post.forgotten.clear()
    vacuum(post.bk)
