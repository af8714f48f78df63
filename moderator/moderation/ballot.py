"""The players' proposals as they write them: ``propose takeback``, ``propose
pause DAYS``, ``propose end``, ``propose deadline DURATION``, and the answers
``accept`` / ``reject`` (issue 29; carried out by ``proposals``).

Each is a line of its own, like ``help`` (``proposal_command`` reads it, for
``interpret``), in English or in the words of any language pbem speaks
(``WORDS``: accents, case and full-width forms do not matter; Chinese needs no
spaces: ``提议暂停3天``).  Only data and reading here: no file, no clock.  Below
``interpret``; ``proposals`` (below ``gm``) does what they ask.
"""
from __future__ import annotations

import re

from ..i18n import fold
from .deadlines import DAY, parse_duration

KINDS = ("takeback", "pause", "end", "deadline")
"""What a player may propose (``propose KIND ...``)."""

ANSWERS = ("accept", "reject")
"""The answers to a proposal."""

MAX_PAUSE = 30 * DAY
"""The longest pause the players may agree on (seconds): a longer break is the
game master's ``pause`` (which lasts until their ``resume``)."""

MIN_DEADLINE = 3600
"""The shortest move deadline the players may agree on (seconds): one hour; a
deadline of minutes would pass before most players read their mail."""

WORDS: dict[str, tuple[str, ...]] = {
    "propose": ("propose", "i propose", "proposal", "proponer", "propongo", "propuesta",
                "vorschlag", "ich schlage vor", "schlage vor", "vorschlagen",
                "navrhuji", "navrhuju", "navrh", "navrhnout",
                "提议", "提案", "我提议"),
    "takeback": ("takeback", "take back", "take-back", "undo", "deshacer", "deshacer jugada", "rectificar",
                 "zurucknehmen", "rucknahme", "zug zurucknehmen", "vratit tah", "vratit", "zpet",
                 "悔棋", "撤回"),
    "pause": ("pause", "pausa", "pausar", "pausieren", "pauza", "pauzu", "pozastavit", "暂停"),
    "end": ("end", "end the game", "end game", "fin", "terminar", "fin de la partida", "terminar la partida",
            "ende", "beenden", "spiel beenden", "konec", "ukoncit", "ukoncit hru", "konec hry", "结束",
            "结束游戏", "结束本局"),
    "deadline": ("deadline", "plazo", "frist", "zugfrist", "lhuta", "lhutu", "termin", "期限", "截止时间"),
    "accept": ("accept", "i accept", "accepted", "agree", "i agree", "acepto", "aceptar", "aceptado",
               "de acuerdo", "estoy de acuerdo", "annehmen", "ich nehme an", "angenommen", "akzeptiere",
               "einverstanden", "prijimam", "prijmout", "souhlasim", "接受", "同意", "我同意", "我接受"),
    "reject": ("reject", "i reject", "rejected", "decline", "i decline", "refuse", "rechazo", "rechazar",
               "rechazado", "no acepto", "ablehnen", "ich lehne ab", "lehne ab", "abgelehnt",
               "odmitam", "odmitnout", "nesouhlasim", "拒绝", "反对", "我拒绝", "不同意"),
    "days": ("d", "day", "days", "dia", "dias", "tag", "tage", "tagen", "den", "dny", "dni", "dnu", "天", "日"),
    "hours": ("h", "hour", "hours", "hora", "horas", "stunde", "stunden", "hodina", "hodiny", "hodin",
              "小时", "个小时"),
    "none": ("none", "no deadline", "ninguno", "sin plazo", "keine", "keine frist", "zadna", "zadnou", "bez lhuty",
             "无", "不限"),
}
"""Every word or phrase a player may write for each part of a proposal, folded
(``i18n.fold``: no accents, lower case).  The guides (``help``, the proposal
mail) use the first of each language: ``propose``/``proponer``/``vorschlag``/
``navrhuji``/``提议``, ``takeback``/``deshacer``/``zurücknehmen``/``vrátit
tah``/``悔棋``, ``pause``/``pausa``/``Pause``/``pauzu``/``暂停``,
``end``/``fin``/``Ende``/``konec``/``结束``, ``deadline``/``plazo``/``Frist``/
``lhůtu``/``期限`` (none: ``none``/``ninguno``/``keine``/``žádná``/``无``),
``accept``/``acepto``/``annehmen``/``přijímám``/``接受``,
``reject``/``rechazo``/``ablehnen``/``odmítám``/``拒绝``."""

_PUNCT = " .,!:;?¡¿。，！：；？、"


def _strip(text: str) -> str:
    return text.strip(_PUNCT)


def _lead(text: str, cls: str) -> str | None:
    """``text`` after the longest phrase of ``WORDS[cls]`` it starts with (a whole
    word: a space, punctuation, a digit or the end follows, or a Chinese
    phrase), stripped; None when it starts with none."""
    for phrase in sorted(WORDS[cls], key=len, reverse=True):
        if not text.startswith(phrase):
            continue
        rest = text[len(phrase):]
        cjk = phrase[-1] > "\u2e7f"
        if rest and not cjk and (rest[0].isalpha() or rest[0] == "-") and not rest[0].isdigit():
            continue
        return _strip(rest)
    return None


def proposal_command(line: str) -> str | None:
    """The proposal command on ``line``, in English words, or None:
    ``"propose takeback"``, ``"propose end"``, ``"propose pause SECONDS"``,
    ``"propose deadline SECONDS"`` or ``"propose deadline none"``, ``"accept"``,
    ``"reject"``; ``"propose ?"`` for a line that starts with a proposal word but
    asks for nothing pbem can put to a vote, and ``"propose ? pause"`` /
    ``"propose ? deadline"`` for a pause or deadline whose length is not read
    (each answered with what may be proposed).  ``propose pause`` takes days (a
    bare number: ``3``; or ``3d``, ``36h``, ``3 Tage``, ``3天``), at most
    ``MAX_PAUSE``; ``propose deadline`` a duration with its unit (``48h``,
    ``3d``, ``none``).  A line of more than eight words is prose, never a
    command."""
    text = _strip(fold(line))
    if not text or len(text.split()) > 8:
        return None
    for answer in ANSWERS:
        if text in WORDS[answer]:
            return answer
    # "Accept, sure." / "Reject!": the answer word first, a few words after it (a
    # new user's check); never a word further in ("I don't accept")
    first, *others = [t for t in re.split(r"[\s,，、!！.。;；:：]+", text) if t]
    if others and len(others) <= 2:
        for answer in ANSWERS:
            if first in WORDS[answer]:
                return answer
    rest = _lead(text, "propose")
    if rest is None:
        return None
    rest = re.sub(r"^(a|an|to|un|una|eine?n?|ein)\s+", "", rest)
    for kind in KINDS:
        arg = _lead(rest, kind)
        if arg is None:
            continue
        if kind in ("takeback", "end"):
            return f"propose {kind}" if not arg else "propose ?"
        seconds = _length(arg, bare_days=kind == "pause", allow_none=kind == "deadline")
        if seconds == "bad" or (kind == "pause" and (seconds is None or int(seconds) > MAX_PAUSE)):
            return f"propose ? {kind}"
        if kind == "deadline" and seconds is not None and int(seconds) < MIN_DEADLINE:
            return "propose ? deadline"  # a move in minutes: nobody could answer in time
        return f"propose {kind} {'none' if seconds is None else seconds}"
    return "propose ?"


def _length(arg: str, *, bare_days: bool, allow_none: bool) -> int | str | None:
    """The seconds ``arg`` says (``3``: days when ``bare_days``; ``3d``, ``36 h``,
    ``3 Tage``, ``3天``), None for none (only when ``allow_none``), ``"bad"`` for
    anything else."""
    if allow_none and arg in WORDS["none"]:
        return None
    m = re.fullmatch(r"(\d{1,4})\s*(.*)", arg)
    if not m:
        return "bad"
    n, unit = int(m.group(1)), _strip(m.group(2))
    if n == 0:
        return "bad"
    if not unit:
        return n * DAY if bare_days else "bad"
    if unit in WORDS["days"]:
        return n * DAY
    if unit in WORDS["hours"]:
        return n * 3600
    try:
        seconds = parse_duration(f"{n}{unit}")
    except ValueError:
        return "bad"
    return seconds if seconds is not None else "bad"
