"""One person across games (issue 28): ``me``, the person thread, person-level
settings, the vacation bank and the record.

A person is a canonical address.  ``me`` (a line of its own in a mail in any of
the person's game threads) is answered with one mail: the person's games, the
moves due with their deadlines in their zone, their settings, vacation bank and
record (``archive.records``).  That answer opens the person's own thread: its
Message-ID is ``<RANDOM.TOKEN.pbem-me@domain>`` (``mail.threads.person_token``
of the secret in ``Bookkeeping.person_thread``), and a mail from the same
address whose In-Reply-To/References name it (``handle``) holds commands for
the person, across all their games:

``timezone ZONE``, ``language CODE``
    set in every running game of theirs, except in a game where the same
    command was sent in that game's own thread (``Bookkeeping.game_override``:
    the game wins there); the answer says where it now applies;
``digest daily [HOUR]|off``, ``calendar on|off``, ``substitute on|off``
    stored (``person_setting``: other features read them) and echoed;
    ``digest daily 7`` holds the mails that ask nothing of the person for one
    digest a day at 07:00 in their zone (default 18:00; ``moderation/digest.py``),
    ``digest off`` sends the held ones at once;
``vacation 5d`` / ``vacation off``
    stops (restarts) the clock in every running game of theirs, announced to
    the other players as a game's own ``vacation`` is, paid from the vacation
    bank (``bank``) instead of each game's limit;
``me``
    the ``me`` answer again.

Every answer is rate-limited (``Post.allow`` and ``PER_ADDRESS_PER_DAY``) and in
the person's language (``person_language``).  Nothing here reads a clock: the
time is ``post.clock()``.

The vacation bank: ``BANK_START`` to begin with, one day more for every
``BANK_EVERY`` days of play (``archive.records.play_seconds``), at most
``BANK_MAX`` earned in all; less what the ledger says was spent.
"""
from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable

from .. import i18n
from ..archive.records import Record, person_records, play_seconds
from ..mail.read import OrderMail, canonical_address
from ..mail.threads import person_message_id, person_token, person_tokens_in
from ..render.when import format_duration, format_when, zone_name
from ..render.words import word
from ..store.gamefile import GameRecord, GameStore, StoreError
from .report import CycleReport
from .seats import me_command
from .send import Post

log = logging.getLogger("pbem")

SETTING_KEYS = ("timezone", "language", "digest", "calendar", "substitute")
"""The person-level settings (``person_settings`` keys)."""
CHOICES = {"digest": ("daily", "off"), "calendar": ("on", "off"), "substitute": ("on", "off")}
"""The values of the settings that are only stored (other features read them)."""
DEFAULTS = {"digest": "off", "calendar": "on", "substitute": "off"}
"""What a stored-only setting is when never set."""

BANK_START = 7 * 86400
"""Seconds of vacation in a person's bank before any play (7 days)."""
BANK_EVERY = 8
"""One day of vacation is earned for every this many days of play."""
BANK_MAX = 30 * 86400
"""The most a bank earns in all (30 days), starting allowance included."""
PER_ADDRESS_PER_DAY = 20
"""Answers of the person thread and ``me`` to one address per UTC day."""

def person_setting(book: Any, address: str, key: str) -> str | None:
    """The person-level setting ``key`` (one of ``SETTING_KEYS``) of ``address``
    as set in their person thread, or None when never set.  ``book``: the
    ``Bookkeeping``.  The one reader other features use (digest, calendar)."""
    return book.setting(address, key)


def setting_in_game(book: Any, address: str, game_id: str, key: str) -> str | None:
    """The setting ``key`` of ``address`` in game ``game_id``: the value set in
    that game's own thread (it wins there), else the person's, else None."""
    return book.game_override(address, game_id, key) or book.setting(address, key)


@dataclass(frozen=True)
class Bank:
    """A person's vacation bank in seconds: ``earned`` (``BANK_START`` plus a
    day per ``BANK_EVERY`` days of play, at most ``BANK_MAX``), ``spent`` (the
    ledger's sum), ``left`` (earned less spent, not below 0) and ``played``
    (seconds of play)."""

    earned: int
    spent: int
    played: int

    @property
    def left(self) -> int:
        return max(0, self.earned - self.spent)


def earned(played_seconds: int) -> int:
    """Seconds of vacation earned after ``played_seconds`` of play (see ``Bank``)."""
    return min(BANK_MAX, BANK_START + (played_seconds // (BANK_EVERY * 86400)) * 86400)


def bank(book: Any, games: Iterable[dict[str, Any]], address: str, now: datetime) -> Bank:
    """The vacation bank of ``address`` at ``now`` from its games' data (game
    files, ``archive.records.play_seconds``) and its ledger in ``book``."""
    played = play_seconds(games, address, now)
    spent = sum(e["seconds"] for e in book.vacation_ledger(address))
    return Bank(earned(played), max(0, spent), played)


def person_language(book: Any, address: str, here: str | None = None) -> str:
    """The language the person's answers come in: their person-level
    ``language``, else ``here`` (the language of the game whose thread the mail
    came in), else the registry's, else English."""
    return (book.setting(address, "language") or here or ((book.person(address) or {}).get("language"))
            or i18n.DEFAULT)


def _games_data(post: Post, store: GameStore, address: str, held: GameRecord | None = None) -> list[dict[str, Any]]:
    """The game files' data of every game of ``address`` (the games index),
    ``held``'s from the record in hand (its lock is held)."""
    out = []
    for ref in post.bk.games_of(address):
        if held is not None and ref.game_id == held.id:
            out.append(held.to_data())
            continue
        try:
            out.append(store.read_data(ref.game_id))
        except StoreError:
            continue
    return out


def _seat_languages(post: Post, store: GameStore, address: str) -> list[str]:
    """The languages ``address``'s seats are written to (the seat's
    ``language``, else its game's ``settings.language``), in the order of the
    games index, each once: what a reply in the person thread may be written in
    besides the person-level language and English (a new user's check: Dora of a
    German game replied ``Sammelmail täglich 7`` to her ``ich`` answer)."""
    out: list[str] = []
    for data in _games_data(post, store, address):
        seat = _seat(data, address) or {}
        lang = seat.get("language") or (data.get("settings") or {}).get("language")
        if lang and lang not in out:
            out.append(str(lang))
    return out


def _read_in(line: str, languages: list[str]) -> tuple[str, str] | None:
    """``(command, language)``: ``person_command`` of ``line`` and the first of
    ``languages`` that reads it (each reads English too), or None."""
    for lang in dict.fromkeys(languages):
        cmd = person_command(line, lang)
        if cmd is not None:
            return cmd, lang
    return None


def _seat(data: dict[str, Any], address: str) -> dict[str, Any] | None:
    for p in data.get("players") or []:
        if p.get("address") and canonical_address(str(p["address"])) == address:
            return p
    return None


def register(post: Post, address: str, games: list[dict[str, Any]], now: datetime) -> None:
    """Register ``address`` as a person (``Bookkeeping.register_person``) when it
    is not yet: a player of games started by ``pbem new``, whose address the
    game's own thread token confirmed; named by their latest game's seat."""
    if post.bk.person(address) is not None:
        return
    names = [str(s["name"]) for s in (_seat(d, address) for d in games) if s]
    if names:
        post.bk.register_person(address, names[-1], now)


def seat_defaults(book: Any, record: GameRecord) -> list[str]:
    """Give the seats of a new game (``record``, not yet saved) their person's
    ``timezone`` and ``language`` (person-level settings) where the seat has
    none of its own: a person's setting applies to their later games too.
    Returns the names of the seats changed."""
    changed = []
    for p in record.players:
        if not p.address:
            continue
        zone, lang = book.setting(p.address, "timezone"), book.setting(p.address, "language")
        if zone and p.timezone is None:
            p.timezone = zone
            changed.append(p.name)
        if lang and p.language is None:
            p.language = lang
            if p.name not in changed:
                changed.append(p.name)
    return changed


def me_text(post: Post, address: str, games: list[dict[str, Any]], now: datetime) -> str:
    """The answer to ``me`` for ``address`` (in the language in force): games,
    moves due (in the seat's zone), settings, vacation bank, record."""
    from ..archive.listing import seat_notes
    from .deadlines import parse_time

    bk = post.bk
    lines = [word("person", "me_title"), ""]
    lines.append(word("person", "games_head"))
    for data in games:
        seat = _seat(data, address)
        if seat is None:
            continue
        gid = str(data.get("game"))
        state = data.get("state") or {}
        notes = seat_notes(data, now).get(str(seat["name"]), {})
        if state.get("phase") == "over" or data.get("ended"):
            line = word("person", "game_over", game_id=gid, seat=seat["name"])
        elif notes.get("due"):
            line = word("person", "game_due", game_id=gid, seat=seat["name"],
                        due=format_when(parse_time(notes["due"]), seat.get("timezone")))
        else:
            line = word("person", "game_waiting", game_id=gid, seat=seat["name"])
        if notes.get("vacation_until"):
            line += " " + word("person", "on_vacation",
                               until=format_when(parse_time(notes["vacation_until"]), seat.get("timezone")))
        lines.append("- " + line)
    lines.append("")
    settings = bk.settings_of(address)
    lines.append(word("person", "settings_head"))
    zone = settings.get("timezone")
    lines.append("- " + word("person", "setting_timezone", zone=zone_name(zone) if zone else ""))
    lang = settings.get("language")
    lines.append("- " + word("person", "setting_language", language=i18n.LANGUAGES.get(lang, "") if lang else ""))
    for key in ("digest", "calendar", "substitute"):
        value = settings.get(key, DEFAULTS[key])
        if key == "substitute":  # what the pool holds (also 'substitute on' sent to the moderator)
            value = "on" if bk.pool_of(address) else "off"
        lines.append("- " + word("person", f"setting_{key}", value=value))
    overrides = _overrides(bk, address, games)
    for gid, key, value in overrides:
        shown = zone_name(value) if key == "timezone" else i18n.LANGUAGES.get(value, value)
        lines.append("- " + word("person", f"override_{key}", game_id=gid, value=shown))
    lines.append("")
    b = bank(bk, games, address, now)
    lines.append(word("person", "bank", left=format_duration(b.left), earned=format_duration(b.earned),
                      spent=format_duration(b.spent), start=format_duration(BANK_START), every=BANK_EVERY,
                      most=format_duration(BANK_MAX)))
    lines.append("")
    rec = person_records(games).get(address) or Record(address)
    lines.append(record_text(rec))
    lines.append("")
    lines.append(word("person", "how_to"))
    return "\n".join(lines) + "\n"


def record_text(rec: Record) -> str:
    """A person's record in words (the language in force)."""
    avg = rec.average_rank
    median = rec.median_seconds
    return word("person", "record", played=rec.played, finished=rec.finished, won=rec.won,
                average=f"{avg:.2f}" if avg is not None else "-", in_time=rec.in_time, missed=rec.missed,
                median=format_duration(int(median)) if median is not None else "-")


def _overrides(bk: Any, address: str, games: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    out = []
    for data in games:
        gid = str(data.get("game"))
        for key in ("timezone", "language"):
            value = bk.game_override(address, gid, key)
            if value is not None:
                out.append((gid, key, value))
    return out


# ------------------------------------------------------------------ mail
def _within(post: Post, to: str, what: str) -> bool:
    if not post.daily(f"person:{to}", PER_ADDRESS_PER_DAY):
        log.warning("person: the daily limit of answers to a person is reached; not answering %r", what)
        return False
    return post.allow(to, what)


def _send(post: Post, om: OrderMail, key: str, address: str, text: str,
          calendar: list[tuple[str, str]] | None = None) -> None:
    """Spool ``text`` to ``address`` in their person thread (opened here when
    it is not yet), answering ``om`` (the mail ``key``); ``calendar``: the
    deadline events the answer carries (``_events``: a person-level vacation
    moved the deadlines of several games)."""
    now = post.clock()
    thread = post.bk.open_person_thread(address, secrets.token_hex(8), now)
    subject = " ".join(word("person", "subject").split())
    refs = [r for r in om.references if r]
    if thread["thread"] and thread["thread"] not in refs:
        refs.insert(0, thread["thread"])
    msg = post.message(None, address, subject, text, in_reply_to=om.message_id, references=refs,
                       calendar=calendar or ())
    mid = person_message_id(person_token(thread["secret"]), post.domain)
    del msg["Message-ID"]
    msg.set_raw(*msg.policy.header_store_parse("Message-ID", mid))
    post.put(msg, kind="person", answers=key)
    post.bk.set_person_thread_id(address, mid)


def answer_me(post: Post, store: GameStore, om: OrderMail, key: str, address: str,
              held: GameRecord | None = None, limit_cycle: bool = True) -> None:
    """Answer ``me`` from ``address`` (mail ``om``, answer key ``key``) with
    ``me_text`` in the person's language, in their person thread; ``held``: the
    game whose lock the caller holds (read from the record, not the file).
    Registers the person when they are not yet (``register``).  ``limit_cycle``
    False: the caller counted the answer in the per-cycle limit already."""
    address = canonical_address(address)
    if not post.daily(f"person:{address}", PER_ADDRESS_PER_DAY) or (limit_cycle and not post.allow(address, "me")):
        return
    now = post.clock()
    games = _games_data(post, store, address, held)
    register(post, address, games, now)
    seat = held.player_by_address(address) if held is not None else None
    here = held.language_of(seat) if seat is not None else None
    with i18n.speaking(person_language(post.bk, address, here)):
        _send(post, om, key, address, me_text(post, address, games, now))


def answer_daily(post: Post, store: GameStore, om: OrderMail, key: str, address: str, command: str,
                 held: GameRecord | None = None) -> None:
    """``digest daily [H]`` written in a game's thread (``seats.daily_command``):
    the daily digest is one mail across the person's games, so it is set as the
    person thread sets it (``_digest``) and answered there, in the person's
    language (a new user's check: it was refused as no order).  ``held``: the
    game whose lock the caller holds.  Rate-limited as ``me`` is."""
    address = canonical_address(address)
    if not post.daily(f"person:{address}", PER_ADDRESS_PER_DAY) or not post.allow(address, "digest"):
        return
    now = post.clock()
    register(post, address, _games_data(post, store, address, held), now)
    seat = held.player_by_address(address) if held is not None else None
    here = held.language_of(seat) if seat is not None else None
    with i18n.speaking(person_language(post.bk, address, here)):
        text = _digest(post, address, command[len("digest "):], now, store)
        _send(post, om, key, address, text.rstrip("\n") + "\n")


def is_person_mail(om: OrderMail, bk: Any) -> bool:
    """Whether ``om`` is a reply in its sender's person thread: one of its
    In-Reply-To/References carries the token of the sender's person secret."""
    import hmac

    tokens = person_tokens_in(om.thread_refs)
    if not tokens:
        return False
    thread = bk.person_thread(om.sender)
    if thread is None:
        return False
    mine = person_token(thread["secret"]).encode()
    return any(hmac.compare_digest(t.encode(), mine) for t in tokens)


def person_command(line: str, language: str | None = None) -> str | None:
    """The person-thread command on ``line``, in English words, or None:
    ``me``; ``timezone ZONE``, ``language CODE``, ``vacation 5d|off`` (read as in a
    game's thread, ``orders.parser.command``); ``digest daily|off``, ``calendar
    on|off``, ``substitute on|off`` (any value as written: a wrong one is
    answered)."""
    from ..orders.parser import command, english
    from .seats import privacy_command

    if me_command(line):
        return "me"
    if privacy_command(line):
        return privacy_command(line)
    found = command(line, language)
    if found and found.startswith(("timezone ", "vacation ", "language ")):
        return found
    words = english(line, language).lower().strip(" .!").split()
    if len(words) == 2 and words[0] in CHOICES:
        return f"{words[0]} {words[1]}"
    if len(words) == 3 and words[0] == "digest":  # digest daily 18: the hour in their zone
        return " ".join(words)
    return None


def handle(om: OrderMail, key: str, post: Post, store: GameStore, report: CycleReport,
           arrived: datetime | None = None) -> str | None:
    """Carry out ``om`` when it is a reply in its sender's person thread
    (``is_person_mail``): every command line (``person_command``) applies to the
    person across their games; answered in one mail.  ``arrived``: when the mail
    reached the mailbox (``cycle.arrival``): each game a command changes first
    does what its clock owed by then (``clock.catch_up``, as before any mail of
    that game), so that a vacation never lands on a move already overdue; None
    (an outage ending): not caught up.  Returns ``"processed"``, or None when it
    is no person-thread mail (routed as any other)."""
    from . import privacy

    bk = post.bk
    done = privacy.handle_reply(om, key, post, store, report)
    if done is not None:  # a reply to the question of 'forget me'
        return done
    if not is_person_mail(om, bk):
        return None
    if post.answered(key):
        return "processed"
    address = canonical_address(om.sender)
    seat_languages = _seat_languages(post, store, address)
    here = seat_languages[0] if len(seat_languages) == 1 else None
    language = person_language(bk, address, here)
    lines = [l for l, k in zip(om.lines, om.kinds or ["text"] * len(om.lines)) if k == "text"]
    # 'language de' first, wherever it stands: the whole answer is then in one language (a new user's check)
    # and 'timezone ZONE' next: what the later answers say (the digest's hour) is in that zone
    lines.sort(key=lambda l: {"language": 0, "timezone": 1}.get(
        ((_read_in(l, [language, *seat_languages]) or ("",))[0].split() or [""])[0], 2))
    with bk.transaction():
        if not _within(post, address, "person"):
            bk.mark_answered(key, None, post.clock())
            return "processed"
        answers: list[str] = []
        events: list[tuple[str, str]] = []  # the deadline events the commands moved, one per game
        wants_me = False
        for line in lines:
            found = _read_in(line, [language, *seat_languages])
            if found and found[1] != language and bk.setting(address, "language") is None:
                language = found[1]  # 'Sammelmail täglich 7': answered in German, the language it was written in
            cmd = found[0] if found else None
            with i18n.speaking(language):
                if cmd is None:
                    answers.append(word("person", "unknown_line", line=line[:60]))
                    near = _nearest_command(line)
                    # 'timezon Europe/Madrid': the command it is nearest (a new user's check);
                    # 'timezone' alone: not "did you mean 'timezone'"
                    if near and near != line.strip().lower():
                        answers[-1] += " " + word("person", "did_you_mean", command=near)
                    continue
                if cmd == "me":
                    wants_me = True
                    continue
                if cmd in ("export me", "forget me"):  # each its own mail (privacy.py)
                    from . import privacy

                    if cmd == "export me":
                        privacy.answer_export(post, store, om, f"{key}#export", address, language=language)
                    else:
                        privacy.ask_forget(post, om, f"{key}#forget", address, language=language)
                    continue
                answers.append(apply(post, store, address, cmd, arrived, report, events))
                if cmd.startswith("language "):  # 'language de': what follows in German
                    language = person_language(bk, address, here)
        if not lines:
            with i18n.speaking(language):
                answers.append(word("person", "unknown_line", line=""))
        with i18n.speaking(language):
            text = "\n\n".join(answers)
            if wants_me:
                now = post.clock()
                games = _games_data(post, store, address)
                text = (text + "\n\n" if text else "") + me_text(post, address, games, now)
            if text or events:
                _send(post, om, key, address, text.rstrip("\n") + "\n", _one_per_event(events))
            else:  # only 'export me' / 'forget me': their own mails went
                bk.mark_answered(key, None, post.clock())
    report.commands += 1
    return "processed"


PERSON_COMMANDS = ("me", "timezone", "language", "digest", "calendar", "substitute", "vacation", "export", "forget")
"""The commands of the person thread, as the guide writes them."""


def _nearest_command(line: str) -> str | None:
    """The person thread's command nearest the first word of ``line`` (difflib,
    ratio 0.75: ``timezon`` -> ``timezone``, ``vacaton`` -> ``vacation``), or None."""
    import difflib

    words = line.split()
    if not words:
        return None
    found = difflib.get_close_matches(words[0].lower().strip(".,:;!?"), PERSON_COMMANDS, n=1, cutoff=0.75)
    return found[0] if found else None


def apply(post: Post, store: GameStore, address: str, cmd: str, arrived: datetime | None = None,
          report: CycleReport | None = None, events: list[tuple[str, str]] | None = None) -> str:
    """Carry out the person-level command ``cmd`` (``person_command``) of
    ``address`` in all their running games; returns the answer (the language in
    force), which says where the setting now applies.  A wrong value is
    refused with what is legal, nothing changed.  ``events``: where a
    ``vacation`` adds the deadline events of the games whose deadline it
    moved (``_events``), for the answer to carry."""
    bk, now = post.bk, post.clock()
    name, _, arg = cmd.partition(" ")
    if name == "digest":
        return _digest(post, address, arg, now, store)
    if name in CHOICES:
        value = arg.strip().lower()
        if value not in CHOICES[name]:
            return word("person", "choice_bad", key=name, asked=arg, choices=" | ".join(CHOICES[name]))
        bk.set_setting(address, name, value, now)
        if name == "calendar":  # each game's event cancelled (off) or asked again (on) in this answer
            _calendar_each_game(post, store, address, arrived, report, events)
        if name == "substitute":  # the substitute pool (moderation/pool.py): this thread confirmed the address
            if value == "on":
                bk.pool_join(address, "*", now)
            else:
                bk.pool_leave(address)
        return word("person", f"{name}_set", value=value)
    if name == "timezone":
        from ..orders.names import timezone_nearest
        from .deadlines import check_timezone

        try:
            zone = check_timezone(arg)
        except ValueError:
            return word("clock", "timezone_unknown", zone=arg, near=timezone_nearest(arg))
        bk.set_setting(address, "timezone", zone, now)
        applied, kept = _each_game(post, store, address, "timezone", zone, arrived, report)
        return _where(word("person", "timezone_set", zone=zone_name(zone), local_now=format_when(now, zone)),
                      applied, kept)
    if name == "language":
        from .language import check_language, choices, nearest_languages

        try:
            code = check_language(arg)
        except ValueError:
            return word("language", "language_unknown", asked=arg, choices=choices(), near=nearest_languages(arg))
        bk.set_setting(address, "language", code, now)
        applied, kept = _each_game(post, store, address, "language", code, arrived, report)
        with i18n.speaking(code):
            return _where(word("person", "language_set", language=i18n.LANGUAGES[code]), applied, kept)
    if name == "vacation":
        return _vacation(post, store, address, arg, arrived, report, events)
    return word("person", "unknown_line", line=cmd)


def _digest(post: Post, address: str, arg: str, now: datetime, store: GameStore | None = None) -> str:
    """The person-level ``digest daily [HOUR]`` / ``digest off``
    (``moderation/digest.py``): stored as ``daily`` or ``daily H``; ``off``
    sends the held status mails with this cycle's mails.  Turned on after
    HOUR o'clock of the person's day, the first digest comes at HOUR the next
    day (that day is counted as done), not with the next cycle (a new user's
    check: set at 08:20 for 07:00, the first digest came at 10:05 with one
    event)."""
    from .digest import DEFAULT_HOUR, due_now, parse_hour, release

    parts = arg.strip().lower().split()
    if parts == ["off"]:
        post.bk.set_setting(address, "digest", "off", now)
        release(post.spool, address)
        return word("person", "digest_set", value="off")
    hour = DEFAULT_HOUR if parts == ["daily"] else (
        parse_hour(parts[1]) if len(parts) == 2 and parts[0] == "daily" else None)
    if hour is None:
        return word("person", "choice_bad", key="digest", asked=arg, choices="daily | daily 7 | off")
    value = "daily" if len(parts) == 1 else f"daily {hour}"
    was = post.bk.setting(address, "digest") or "off"
    post.bk.set_setting(address, "digest", value, now)
    if not was.startswith("daily"):
        day = due_now(now, _digest_zone(post, store, address), hour, None)
        if day is not None:
            post.bk.set_digest_day(address, day, now)
    zone = post.bk.setting(address, "timezone")
    return " ".join([word("person", "digest_set", value=value),
                     word("person", "digest_when", hour=f"{hour:02d}:00", zone=zone_name(zone) if zone else "")])


def _digest_zone(post: Post, store: GameStore | None, address: str) -> str:
    """The zone the digest stage reads ``address``'s day in (``digest._zone``):
    the person-level ``timezone``, else the first seat's of their games that
    has one, else ``UTC``."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    zone = post.bk.setting(address, "timezone")
    if not zone and store is not None:
        zone = next((str(s["timezone"]) for d in _games_data(post, store, address)
                     for s in [_seat(d, address)] if s and s.get("timezone")), None)
    try:
        ZoneInfo(zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return "UTC"
    return zone or "UTC"


def _events(post: Post, store: GameStore, record: GameRecord, player: Any,
            events: list[tuple[str, str]] | None) -> None:
    """Add to ``events`` the deadline events (``calendar.mail_parts``) of
    ``player``'s move in ``record`` after a person-level command changed it
    (the same UID, ``SEQUENCE`` one higher, the new DTSTART), and save
    ``record.calendar``: the person's answer carries them, as a game's own
    answer does (a breaker's check: the calendar kept the old deadlines)."""
    if events is None:
        return
    import copy

    from .calendar import mail_parts

    sent = copy.deepcopy(record.calendar)
    parts = mail_parts(post, record, player)
    if record.calendar != sent:  # only what changed: an event unchanged is in the calendar already
        events.extend(parts)
        store.save(record)


def _calendar_each_game(post: Post, store: GameStore, address: str, arrived: datetime | None,
                        report: CycleReport | None, events: list[tuple[str, str]] | None) -> None:
    """After a person-level ``calendar off|on``: the cancellation (or the
    request again) of ``address``'s event in each running game (``_events``),
    for the answer to carry, rather than each game's next mail (a breaker's
    check: the calendar kept every deadline after ``calendar off``)."""
    if events is None:
        return
    for gid in _running(post, address):
        try:
            with store.lock(gid):
                record = _load(post, store, gid, arrived, report)
                player = record.player_by_address(address)
                if player is not None:
                    _events(post, store, record, player, events)
        except (StoreError, OSError) as exc:
            log.warning("person: game %s not changed: %s", gid, exc)


def _one_per_event(events: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``events`` with one object per UID, the last (highest ``SEQUENCE``: a
    mail saying ``vacation 5d`` then ``calendar off`` carries the cancellation
    only), the requests first (the first is the mail's alternative,
    ``mail.compose.build_message``; the others attached)."""
    from ..mail.calendar import uid_of

    last: dict[str, tuple[str, str]] = {}
    for method, ics in events:
        uid = uid_of(ics)
        last.pop(uid, None)  # in the order of the last change
        last[uid] = (method, ics)
    kept = list(last.values())
    return [e for e in kept if e[0] == "REQUEST"] + [e for e in kept if e[0] != "REQUEST"]


def _on_vacation(data: dict[str, Any], address: str, now: datetime) -> bool:
    """Whether ``address``'s seat in the game ``data`` is on vacation at ``now``."""
    from .deadlines import parse_time

    seat = _seat(data, address)
    until = parse_time(seat.get("vacation_until")) if seat else None
    return until is not None and until > now


def _seats_zone(games: list[dict[str, Any]], address: str) -> str | None:
    """The time zone ``address``'s seats in ``games`` were given in those games'
    own threads, when they name one zone only (else None: UTC); what a person
    who never set a person-level zone reads their vacation's end in (a
    breaker's check: it was UTC only)."""
    zones = {str(s["timezone"]) for s in (_seat(d, address) for d in games) if s and s.get("timezone")}
    return zones.pop() if len(zones) == 1 else None


def _running(post: Post, address: str) -> list[str]:
    return [g.game_id for g in post.bk.games_of(address, active_only=True)]


def _load(post: Post, store: GameStore, gid: str, arrived: datetime | None, report: CycleReport | None) -> GameRecord:
    """Game ``gid`` loaded (its lock held by the caller), its clock caught up to
    the mail's arrival (``clock.catch_up``) when ``arrived`` is given."""
    from . import clock, notify

    record = notify.load(post, store, gid)
    if arrived is not None and report is not None:
        clock.catch_up(post, store, record, arrived, report)
    return record


def _each_game(post: Post, store: GameStore, address: str, key: str, value: str,
               arrived: datetime | None = None, report: CycleReport | None = None) -> tuple[list[str], list[str]]:
    """Set ``key`` (``timezone``, ``language``) of ``address``'s seat to
    ``value`` in each running game without a game-level override; returns the
    games changed and those that keep their own (``game_overrides``)."""
    applied, kept = [], []
    for gid in _running(post, address):
        if post.bk.game_override(address, gid, key) is not None:
            kept.append(gid)
            continue
        try:
            with store.lock(gid):
                record = _load(post, store, gid, arrived, report)
                player = record.player_by_address(address)
                if player is None or player.name in record.resigned:
                    continue
                if getattr(player, key) != value:
                    setattr(player, key, value)
                    store.save(record)
                    # the cycle's unsent mails to them in the new zone or language, as a
                    # game's own command gives them (clock.respeak; a breaker's check)
                    from .clock import respeak

                    respeak(post, store, record, player)
        except (StoreError, OSError) as exc:
            log.warning("person: game %s not changed: %s", gid, exc)
            continue
        applied.append(gid)
    return applied, kept


def _where(text: str, applied: list[str], kept: list[str]) -> str:
    """An answer and where its setting now applies."""
    out = [text, word("person", "applies_in", games=", ".join(applied)) if applied
           else word("person", "applies_none")]
    if kept:
        out.append(word("person", "kept_in", games=", ".join(kept)))
    return " ".join(out)


def _vacation(post: Post, store: GameStore, address: str, arg: str, arrived: datetime | None = None,
              report: CycleReport | None = None, events: list[tuple[str, str]] | None = None) -> str:
    """A person-level ``vacation 5d`` / ``vacation off``: every running game of
    ``address`` (no vacation under way there), paid from the bank."""
    from .commands import begin_vacation, end_vacation, person_vacation
    from .deadlines import parse_duration, parse_time

    bk, now = post.bk, post.clock()
    arg = arg.strip().lower()
    games = _games_data(post, store, address)
    b = bank(bk, games, address, now)
    if arg in ("off", "end", "over", "back"):
        ended, unused, moved = [], 0, []
        for gid in _running(post, address):
            try:
                with store.lock(gid):
                    record = _load(post, store, gid, arrived, report)
                    player = record.player_by_address(address)
                    until = parse_time(player.vacation_until) if player else None
                    if player is None or until is None or until <= now or not person_vacation(post, record, player):
                        continue  # none under way, or a game's own (ended in its own thread)
                    left_over, news = end_vacation(post, store, record, player, count=False)
                    _events(post, store, record, player, events)
            except (StoreError, OSError) as exc:
                log.warning("person: game %s not changed: %s", gid, exc)
                continue
            unused = max(unused, left_over)
            ended.append(gid)
            if news:
                moved.append(f"{gid}: {news}")
        if not ended:
            return word("clock", "vacation_none")
        bk.add_vacation(address, -unused, ended, now)
        b = bank(bk, games, address, now)
        return "\n".join([" ".join([word("person", "vacation_ended", left=format_duration(b.left)),
                                    word("person", "applies_in", games=", ".join(ended))])] + moved)
    try:
        seconds = parse_duration(arg + "d" if arg.isdigit() else arg)
    except ValueError:
        return word("person", "vacation_bad", asked=arg, left=format_duration(b.left))
    running = [d for d in games if str(d.get("game")) in set(_running(post, address))]
    on = [str(d.get("game")) for d in running if _on_vacation(d, address, now)]
    if running and len(on) == len(running):  # 'vacation 5d' twice in one mail: the second finds them all taken
        return word("person", "vacation_busy_in", games=", ".join(sorted(on)))
    if seconds > b.left:
        return word("person", "vacation_refused", asked=format_duration(seconds), left=format_duration(b.left))
    started, busy, moved = [], [], []
    from datetime import timedelta

    end = now + timedelta(seconds=seconds)
    for gid in _running(post, address):
        try:
            with store.lock(gid):
                record = _load(post, store, gid, arrived, report)
                player = record.player_by_address(address)
                if player is None or player.name in record.resigned or record.game.phase == "over" \
                        or record.ended is not None:
                    continue
                until = parse_time(player.vacation_until)
                if until is not None and until > now:
                    busy.append(gid)
                    continue
                news = begin_vacation(post, store, record, player, seconds, count=False)
                _events(post, store, record, player, events)
        except (StoreError, OSError) as exc:  # an unreadable game file: the others go on
            log.warning("person: game %s not changed: %s", gid, exc)
            continue
        started.append(gid)
        if news:  # the deadline it moved, in that seat's zone
            moved.append(f"{gid}: {news}")
    if not started:
        return word("person", "vacation_nowhere")
    bk.add_vacation(address, seconds, started, now)
    b = bank(bk, games, address, now)
    out = [word("person", "vacation_started", days=format_duration(seconds),
                until=format_when(end, bk.setting(address, "timezone") or _seats_zone(running, address)),
                left=format_duration(b.left)),
           word("person", "applies_in", games=", ".join(started))]
    if busy:
        out.append(word("person", "vacation_busy_in", games=", ".join(busy)))
    return "\n".join([" ".join(out)] + moved)
