"""Orders in advance and standing choices (issue 30).

A player may send their next move before their turn::

    next: build KCC DEN-KCY plain; take KCC or stack     the next turn of theirs
    next 2: invest KCC or DM; discard plain or white      the turn after that
    next: none        (cancels every queued order; ``next 2: none`` only that one)
    next?             (what is queued)

The order is kept secret: it is in the game file's ``queued`` and in the answers
to the player alone; no other player's mail names it before it is played.  It is
played the moment the player's turn comes, in the same cycle (the previous
player's order, the built-in player's move or another queued order that makes
it their turn): ``play_queued``, called after every move (``act._apply``, the
clock's ``deadlines.tick``).  Its alternatives (``or``,
``moderator.orders.alternatives``) are resolved against the position then, the
first legal one played; when none is, the order is dropped and the player told
privately why in their status mail, which asks for their move as usual.  The
history entry of a queued play has ``queued: true`` (and ``alternatives``: the
text given, when it had several choices); ``message_id`` is None (the mail that
queued it was answered when it came).

``next:`` counts the player's own turns: sent while the game waits for them, it
is for the turn after the one awaited now (an order without ``next:`` plays the
turn awaited now).  An order without ``next:`` sent when it is not the player's
turn is refused (``not_your_turn``), as before; the refusal names ``next:``.

Standing choices fill in a part an order leaves out, nothing else::

    auto take stack                  a BUILD without a take draws the stack's top card
    auto take KCC or stack           ... the KCC share on display, else the stack
    auto discard plain or white      an INVEST or PASS without a discard discards these
    auto off                         no standing choices;  auto?  lists them

They apply to orders by mail and queued orders (not to the built-in player's
moves); a choice that is not legal then is skipped (the order as written is
resolved as before).  Game file: ``standing`` (name -> list of the choices'
texts, ``take ...``/``discard ...``).

The game master's undo drops every queued order and tells their players
(``drop_all``); a takeback (the proposals of issue 29) calls ``drop_all`` too.
Words: ``templates/words/advance.txt``.
"""
from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any

from .. import i18n
from ..rules.actions import Action, Build, Invest, Pass
from ..rules.engine import IllegalAction
from ..store.gamefile import GameRecord, Player

log = logging.getLogger("pbem")

QUEUE_MOST = 3
"""How many of their coming turns a player may queue orders for (``next 3:``)."""

MAX_STANDING = 4
"""Standing choices of one player at most."""

NEXT_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("next",),
    "es": ("siguiente", "proximo", "proxima"),
    "de": ("nachster", "nachste", "nachstes", "naechster", "naechste", "danach"),
    "cs": ("priste", "pristi", "dalsi"),
    "zh": ("下一步", "下次", "下一回合"),
}
"""The word of ``next:`` in each language, folded (no accents, lower case);
English is understood in every language."""

AUTO_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("auto",), "es": ("auto", "siempre"), "de": ("auto", "immer"), "cs": ("auto", "vzdy"),
    "zh": ("自动", "auto"),
}
"""The word of ``auto`` (a standing choice) in each language, folded."""

NONE_WORDS = {"none", "nothing", "cancel", "off", "nada", "ninguno", "cancelar", "nichts", "keiner", "abbrechen",
              "nic", "zrusit", "无", "取消", "无股票"}
"""Words after ``next:`` or ``auto`` that cancel."""


def _fold(text: str) -> str:
    from ..orders.parser import _clean

    return _clean(text).lower()


def _words_re(words: set[str]) -> str:
    spaced = sorted((w for w in words if w.isascii()), key=len, reverse=True)
    other = sorted((w for w in words if not w.isascii()), key=len, reverse=True)
    return "(?:" + "|".join([re.escape(w) + r"(?![\w-])" for w in spaced] + [re.escape(w) for w in other]) + ")"


def _all(table: dict[str, tuple[str, ...]], language: str) -> set[str]:
    return set(table["en"]) | set(table.get(language, ()))


_PATTERNS: dict[str, tuple[re.Pattern, re.Pattern, re.Pattern]] = {}


def _patterns(language: str) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """The patterns of ``next``/``auto`` commands in ``language`` (compiled once):
    the whole command on a folded line, and a quick test of a line as written
    (the first letters of any of the words, any case, after bullets)."""
    if language not in _PATTERNS:
        nexts, autos = _all(NEXT_WORDS, language), _all(AUTO_WORDS, language)
        heads = {w[:2] for w in nexts | autos} | {"pr", "př", "nä", "vž", "pró"}
        _PATTERNS[language] = (
            re.compile(r"^\s*" + _words_re(nexts) + r"\s*(\d+)?\s*(\?|:|=)\s*(.*)$", re.DOTALL),
            re.compile(r"^\s*" + _words_re(autos) + r"\s*(\?|:)?\s*(.*)$", re.DOTALL),
            re.compile(r"^[\s\W\d]*(?:" + "|".join(map(re.escape, sorted(heads))) + ")", re.IGNORECASE),
        )
    return _PATTERNS[language]


def advance_command(line: str, language: str | None = None) -> str | None:
    """The command of orders in advance or standing choices on ``line``, in
    English words, or None: ``next N: ORDER`` (N as written, the order as
    written; an order left out gives ``next N: `` and the answer says where it
    goes), ``next N: none``, ``next?``; ``auto CHOICE`` (as written),
    ``auto off``, ``auto?``.  In the words of ``language`` too (default the
    language in force): ``siguiente: tomar pila``, ``nächster: Stapel nehmen``,
    ``příště: vezmi balíček``, ``下一步：拿股票堆``."""
    from ..orders.lexicon import language_of

    lang = language_of(language)
    next_re, auto_re, first = _patterns(lang)
    if not first.match(line):  # the usual line: no word of these commands at its start
        return None
    text = _fold(line)
    nxt = next_re.match(text)
    if nxt:
        n, mark, rest = nxt.group(1), nxt.group(2), nxt.group(3).strip()
        if mark == "?":
            return "next?" if not rest and n is None else None
        count = int(n) if n is not None else 1
        if not rest:  # 'next:' with the order left out (or on the next line): answered, not ignored
            return f"next {count}: "
        if rest.strip(" .!") in NONE_WORDS:
            return f"next {count}: none"
        order = re.split(r"[:=：]", str(line), maxsplit=1)[1].strip()
        return f"next {count}: {order}"
    auto = auto_re.match(text)
    if auto:
        mark, rest = auto.group(1), auto.group(2).strip()
        if mark == "?" and not rest:
            return "auto?"
        if not rest:
            return None
        if rest.strip(" .!") in NONE_WORDS:
            return "auto off"
        written = re.sub(r"^\s*(?:auto|自动|siempre|immer|vzdy|vždy)\s*[:?：]?\s*", "", str(line),
                         count=1, flags=re.IGNORECASE).strip()
        return f"auto {written}" if written and _order_words(written, lang) else None
    return None


def _order_words(text: str, language: str) -> bool:
    """Whether ``text`` (after ``auto``) starts or, verb last, ends with an order
    word (``take stack``, ``Stapel nehmen``): a standing choice, not prose such as
    an out-of-office line's ``Auto-reply: I am away``."""
    from ..orders.parser import english
    from ..orders.vocabulary import VERBS

    words = [w.strip(".,!?:;") for w in english(text, language).lower().split()]
    words = [w for w in words if w]
    return bool(words) and (words[0] in VERBS or words[-1] in VERBS)


# ------------------------------------------------------------------ the queue

def turns_played(record: GameRecord, name: str) -> int:
    """How many moves ``name`` has made in ``record``'s game (history entries)."""
    return sum(1 for h in record.history if h.get("player") == name)


def _due_turn(record: GameRecord, name: str, n: int) -> int:
    """The number of moves ``name`` will have made before the turn ``next N:``
    names (their next turn not awaited now is 1)."""
    base = turns_played(record, name)
    if name in record.game.waiting_for():
        base += 1
    return base + n - 1


def queue_of(record: GameRecord, name: str) -> list[dict[str, Any]]:
    """``name``'s queued orders, soonest first: mappings ``turn`` (their move
    count when it is played), ``order`` (the text given), ``language`` (in which
    it is read), ``at`` (when it was queued, ISO 8601)."""
    return sorted(record.queued.get(name) or [], key=lambda e: e.get("turn", 0))


def _note(record: GameRecord, name: str, note: dict[str, Any]) -> None:
    record.advance_notes.setdefault(name, []).append(note)


def begin(record: GameRecord) -> None:
    """Forget the notes of the last change (a new one begins): the notes are
    told in the status mails spooled with the change's save."""
    record.advance_notes.clear()


def first_legal(record: GameRecord, name: str, actions: list[Action]
                ) -> tuple[Action | None, list[tuple[str, IllegalAction | None]]]:
    """The first of ``actions`` (each with ``name``'s standing choices filled in
    first, ``with_standing``) that the rules engine finds legal for ``name`` now
    (``Game.resolve``), and what was tried: ``[(order text, IllegalAction or
    None for the one played)]``.  ``(None, tried)`` when none is legal."""
    tried: list[tuple[str, IllegalAction | None]] = []
    for action in with_standing(record, name, actions):
        try:
            record.game.resolve(name, action)
        except IllegalAction as exc:
            if all(str(action) != t for t, _ in tried):
                tried.append((str(action), exc))
            continue
        tried.append((str(action), None))
        return action, tried
    return None, tried


def play_queued(record: GameRecord, stamp: str) -> list[dict[str, Any]]:
    """Play every queued order whose turn has come (the game waits for its
    player, who has made as many moves as the entry's ``turn``), again while a
    play makes another queued turn come; drop a queued order none of whose
    choices is legal, and entries whose turn has passed.  ``stamp``: when (ISO
    8601, the history's ``received``).  Changes ``record`` (not saved); returns
    what happened, one mapping per entry (``player``, ``played``: the order
    played or None, ``order``: the text given, ``tried``); each is noted for the
    player's status mail.  Never raises for a queued order that cannot be read
    or played."""
    from ..orders.alternatives import candidates
    from ..orders.parser import OrderError

    done: list[dict[str, Any]] = []
    for _ in range(100):  # bounded: each pass plays or drops an entry
        acted = False
        for name in list(record.game.waiting_for()):
            queue = queue_of(record, name)
            if not queue:
                continue
            count = turns_played(record, name)
            stale = [e for e in queue if e.get("turn", 0) < count]
            due = [e for e in queue if e.get("turn", 0) == count]
            if stale:
                log.info("game %s: %s: %d queued order(s) whose turn passed dropped", record.id, name, len(stale))
            keep = [e for e in queue if e.get("turn", 0) > count]
            if not due:
                if stale:
                    _set_queue(record, name, keep)
                continue
            entry = due[0]
            _set_queue(record, name, keep)
            try:
                seat = record.player_by_name(name)
            except KeyError:
                continue
            if seat.bot:
                continue  # the built-in player plays this seat now
            try:
                actions = candidates([entry["order"]], record.game.board, entry.get("language") or i18n.DEFAULT)
            except OrderError as exc:
                outcome = {"player": name, "played": None, "order": entry["order"],
                           "tried": [], "unreadable": exc.code}
            else:
                action, tried = first_legal(record, name, actions)
                outcome = {"player": name, "played": None, "order": entry["order"], "tried": tried}
                if action is not None:
                    try:
                        record.apply(name, action, None, stamp)
                    except IllegalAction as exc:  # resolve passed, push refused: dropped all the same
                        outcome["tried"] = tried[:-1] + [(str(action), exc)]
                    else:
                        record.history[-1]["queued"] = True
                        if len(actions) > 1 or str(action) != record.history[-1]["order"]:
                            record.history[-1]["alternatives"] = entry["order"]
                        outcome["played"] = record.history[-1]["order"]
            done.append(outcome)
            _note(record, name, {"kind": "played" if outcome["played"] else "dropped", **outcome})
            log.info("game %s: %s: queued order %s", record.id, name,
                     f"played: {outcome['played']}" if outcome["played"] else "dropped: none of it legal")
            acted = True
            break
        if not acted:
            break
    return done


def _set_queue(record: GameRecord, name: str, entries: list[dict[str, Any]]) -> None:
    if entries:
        record.queued[name] = entries
    else:
        record.queued.pop(name, None)


def drop_all(record: GameRecord, why: str = "undo") -> list[str]:
    """Drop every queued order of ``record`` (the game master's undo, ``why`` =
    ``"undo"``; a takeback, ``"takeback"``): the position they were given for is
    gone.  Each player whose order is dropped is told in their next status mail
    (a note).  Returns their names.  Changes ``record`` (not saved)."""
    names = [n for n in record.queued if record.queued.get(n)]
    for name in names:
        _note(record, name, {"kind": "cancelled", "why": why,
                             "orders": [e["order"] for e in queue_of(record, name)]})
    record.queued.clear()
    return names


# ------------------------------------------------------------- standing choices

def _standing_parts(record: GameRecord, name: str) -> tuple[list[Any], list[str]]:
    """``name``'s standing takes (``Take`` values) and discards (track types)."""
    from ..orders.parser import OrderError, _parse_discard, _parse_take, _tokens

    takes, discards = [], []
    for text in record.standing.get(name) or []:
        words = _tokens(text)
        try:
            if words and words[0] == "take":
                takes.append(_parse_take(words[1:], text))
            elif words and words[0] == "discard":
                discards.append(_parse_discard(words[1:], text))
        except OrderError:
            continue
    return takes, discards


def with_standing(record: GameRecord, name: str, actions: list[Action]) -> list[Action]:
    """``actions`` with ``name``'s standing choices filled in where a turn
    leaves the part out, each variant before the action as written: a BUILD
    without a take gets each standing take in turn, an INVEST or PASS without a
    discard each standing discard."""
    takes, discards = _standing_parts(record, name)
    if not takes and not discards:
        return list(actions)
    out: list[Action] = []
    for action in actions:
        if isinstance(action, Build) and action.take is None:
            out += [replace(action, take=t) for t in takes]
        elif isinstance(action, (Invest, Pass)) and action.discard is None:
            out += [replace(action, discard=d) for d in discards]
        out.append(action)
    return list(dict.fromkeys(out))


def _read_standing(text: str, language: str) -> list[str]:
    """The standing choices ``auto TEXT`` gives, canonical (``take stack``,
    ``take KCC``, ``discard plain``): ``take A or B``, ``discard A or B``.
    Raises OrderError when it is no take or discard."""
    from ..orders.alternatives import AlternativesError, _pattern
    from ..orders.lexicon import lexicon
    from ..orders.parser import OrderError, _clean, _low, _parse_discard, _parse_take, _tokens, _verb_last
    from ..orders.vocabulary import DISCARD_VERBS, TAKE_VERBS
    from ..rules.actions import Take


    lex = lexicon(language)
    plain = _pattern(language).sub(" or ", _clean(text))
    if lex.pattern is not None:
        plain = _clean(lex.translate(plain))
    tokens = _tokens(plain.strip(" .!"))
    if lex.pattern is not None:
        tokens = _verb_last(tokens)
    if not tokens or _low(tokens[0]) not in TAKE_VERBS | DISCARD_VERBS:
        raise AlternativesError("auto_what", text)
    kind = "take" if _low(tokens[0]) in TAKE_VERBS else "discard"
    choices: list[list[str]] = [[]]
    for tok in tokens[1:]:
        if _low(tok) == "or":
            choices.append([])
        elif _low(tok) not in TAKE_VERBS | DISCARD_VERBS:
            choices[-1].append(tok)
    out = []
    for words in choices:
        if kind == "take":
            take: Take = _parse_take(words, text)
            out.append(str(take))
        else:
            out.append(f"discard {_parse_discard(words, text)}")
    return out


# ------------------------------------------------------------------ answers

def answer(record: GameRecord, player: Player, cmd: str, at: str) -> tuple[str, bool]:
    """Carry out the command ``cmd`` (``advance_command``'s) of ``player`` at
    ``at`` (ISO 8601): returns the answer (``templates/words/advance.txt``, in
    the language in force) and whether ``record`` changed (the caller saves).
    A queued order that cannot be read is refused with the parser's reason,
    nothing queued; so is a standing choice."""
    from ..orders.alternatives import candidates
    from ..orders.parser import OrderError
    from ..render.words import word

    name = player.name
    language = record.language_of(player)
    if cmd == "next?":
        return word("advance", "queue_shown", orders=[_shown(record, name, e) for e in queue_of(record, name)],
                    standing=_in_words(record.standing.get(name) or [])), False
    if cmd == "auto?":
        return word("advance", "standing_shown", standing=_in_words(record.standing.get(name) or [])), False
    if cmd == "auto off":
        had = bool(record.standing.pop(name, None))
        return word("advance", "standing_off", had=had), had
    if cmd.startswith("auto "):
        try:
            choices = _read_standing(cmd[5:], language)
        except OrderError as exc:
            return word("advance", "standing_refused", text=cmd[5:], reason=_reason(exc)), False
        kinds = {c.split()[0] for c in choices}
        old = [c for c in record.standing.get(name) or [] if c.split()[0] not in kinds]
        new = (old + choices)[:MAX_STANDING]
        record.standing[name] = new
        return word("advance", "standing_set", standing=_in_words(new)), True
    match = re.match(r"next (\d+): (.*)$", cmd, re.DOTALL)
    if not match:
        return "", False
    n, order = int(match.group(1)), match.group(2).strip()
    if not 1 <= n <= QUEUE_MOST:
        return word("advance", "queue_too_far", n=n, most=QUEUE_MOST), False
    if not order:
        return word("advance", "queue_empty"), False
    if record.game.phase == "over":
        return word("advance", "queue_game_over"), False
    if order == "none":
        turn = _due_turn(record, name, n)
        queue = queue_of(record, name)
        keep = [e for e in queue if n != 1 and e.get("turn") != turn] if n != 1 else []
        _set_queue(record, name, keep)
        return word("advance", "queue_cancelled", had=len(queue) - len(keep), all=n == 1), len(keep) != len(queue)
    try:
        actions = candidates([order], record.game.board, language)
    except OrderError as exc:
        return word("advance", "queue_refused", order=order, reason=_reason(exc)), False
    turn = _due_turn(record, name, n)
    queue = [e for e in queue_of(record, name) if e.get("turn") != turn]
    queue.append({"turn": turn, "order": order, "language": language, "at": at})
    _set_queue(record, name, sorted(queue, key=lambda e: e["turn"]))
    return word("advance", "queued", order=order, n=n, choices=len(actions),
                now=name in record.game.waiting_for()), True


def _in_words(standing: list[str]) -> list[str]:
    """The standing choices (``take stack``, ``discard plain``: the notation's
    words) as the reader's language writes them (``render.orders.localize``:
    ``tomar pila``; a new user's check found them in English)."""
    from ..render.orders import localize

    return [localize(c) for c in standing]


def _reason(exc: Exception) -> str:
    try:
        return exc.reason  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a code without a macro: its name
        return getattr(exc, "code", str(exc))


def _shown(record: GameRecord, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    base = turns_played(record, name) + (1 if name in record.game.waiting_for() else 0)
    return {"order": entry["order"], "n": int(entry.get("turn", base)) - base + 1}


# ------------------------------------------------------------------ the status mail

def status_lines(record: GameRecord, player: Player) -> list[str]:
    """The lines of ``player``'s status mail about their orders in advance, in
    the language in force: what became of a queued order or of an order's
    alternatives in the change this mail tells (the notes), then what is still
    queued ("Your next move is queued: ...").  Only ever in the player's own
    mail: another player's never names them."""
    from ..render.orders import localize
    from ..render.words import reason, word
    from types import SimpleNamespace

    out = []
    for note in record.advance_notes.get(player.name, []):
        tried = [{"order": localize(order), "reason": reason(SimpleNamespace(code=exc.code, values=exc.values))}
                 for order, exc in note.get("tried", []) if exc is not None]
        if note["kind"] == "played":
            out.append(word("advance", "status_played", order=note["order"], played=localize(note["played"]),
                            queued=True, skipped=tried))
        elif note["kind"] == "chose":
            out.append(word("advance", "status_played", order=note["order"], played=localize(note["played"]),
                            queued=False, skipped=tried))
        elif note["kind"] == "dropped":
            out.append(word("advance", "status_dropped", order=note["order"], tried=tried,
                            unreadable=bool(note.get("unreadable")),
                            your_move=player.name in record.game.waiting_for()))
        elif note["kind"] == "cancelled":
            out.append(word("advance", "status_cancelled", orders=note["orders"], why=note["why"]))
    for entry in queue_of(record, player.name):
        out.append(word("advance", "status_queued", **_shown(record, player.name, entry)))
    return out


def note_choice(record: GameRecord, name: str, given: str, tried: list[tuple[str, IllegalAction | None]]) -> None:
    """Note for ``name``'s status mail which of the alternatives of their order
    by mail (``given``: its text) was played: the last of ``tried``."""
    _note(record, name, {"kind": "chose", "order": given, "played": record.history[-1]["order"],
                         "tried": tried})


def reminder_line(record: GameRecord, player: Player) -> str:
    """The reminder's line for ``player`` with queued orders: they will be played
    when their turns come ("" when none is queued), in the language in force."""
    from ..render.words import word

    entries = [_shown(record, player.name, e) for e in queue_of(record, player.name)]
    return word("advance", "reminder_queued", orders=entries) if entries else ""
