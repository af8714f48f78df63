"""The players' seat commands: ``resign`` then, in a later mail, ``resign
confirm`` within a day (``RESIGN_WINDOW``); ``digest on`` / ``digest off``;
``calendar on`` / ``calendar off`` (issue 28: the deadline event in the mails).
Each is a line of its own, like ``help`` (``seat_command`` reads it, for
``interpret``); ``seat_answer`` carries it out.  Below ``interpret`` and
``gm``; above ``announce`` and ``observers``.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta

from .. import i18n
from ..mail.read import canonical_address
from ..render import render
from ..render.words import word
from ..render.when import format_when
from ..store.gamefile import GameRecord, GameStore, Player
from .announce import gm_token, tell_everyone
from .deadlines import game_master_address
from .observers import drop_unsent_status
from .send import Post
from .vacancy import vacate


SEAT_COMMANDS = ("resign", "resign confirm", "digest on", "digest off", "calendar on", "calendar off")
"""The players' seat commands (``seat_command``)."""


RESIGN_WINDOW = timedelta(days=1)
"""``resign confirm`` must follow ``resign`` within this time."""


_RESIGN_FILLERS = {"i", "from", "this", "the", "game", "sorry", "please", "now", "hereby", "herewith",
                   "want", "to", "do", "confirm", "confirmed", "yes", "s", "m"}
"""Words a resignation line may carry beside ``resign`` ("I resign from this game,
sorry."): anything else makes the line no seat command."""


_ME = {"me", "yo", "ich", "já", "我"}


def me_command(line: str) -> bool:
    """Whether ``line`` is the command ``me`` (the person's games, settings,
    vacation bank and record: ``moderation/people.py``), in any language:
    ``yo``, ``ich``, ``já``, ``我``; case, a ``?`` or ``!`` ignored."""
    return line.strip(" .!?:;¿¡？！").lower() in _ME


def daily_command(line: str) -> str | None:
    """``"digest daily"`` or ``"digest daily H"`` when ``line`` is the daily
    digest's command (in the words of the language in force too: ``resumen
    diario 7``, ``Sammelmail täglich``, ``souhrn denně``, ``摘要 每天``), written
    in a game's thread: the digest is the person's, across their games
    (``people.answer_daily``); else None."""
    from ..orders.parser import english

    words = english(line).lower().strip(" .!").split()
    if words[:2] != ["digest", "daily"] or len(words) > 3:
        return None
    return " ".join(words)


def privacy_command(line: str) -> str | None:
    """``"export me"`` or ``"forget me"`` (a person's own data:
    ``moderation/privacy.py``) when ``line`` is one, in any language; else None."""
    text = " ".join(line.strip(" .!?:;¿¡？！").lower().split())
    return _PRIVACY.get(text)


_PRIVACY = {**{w: "export me" for w in ("export me", "export my data", "exportar mis datos", "exportarme",
                                        "meine daten exportieren", "exportovat moje data", "导出我的数据")},
            **{w: "forget me" for w in ("forget me", "olvídame", "olvidame", "vergiss mich", "zapomeň mě",
                                        "zapomen me", "忘记我")}}


def seat_command(line: str) -> str | None:
    """The seat command on ``line`` (one of ``SEAT_COMMANDS``), or None:
    ``digest on``/``digest off``, ``calendar on``/``calendar off``; ``resign``, also in a short sentence ("I resign
    from this game, sorry."); ``resign confirm`` when such a line says
    ``confirm`` ("Resign, confirmed.", "yes, I confirm: resign").  In the words of
    the language in force too (``Resumen desactivar``, ``Ich gebe auf``, ``认输``;
    :func:`moderator.orders.parser.english`)."""
    from ..orders.parser import english

    words = re.findall(r"[a-z]+", english(line).lower())
    if not words or len(words) > 8:
        return None
    if words in (["digest", "on"], ["digest", "off"], ["calendar", "on"], ["calendar", "off"]):
        return " ".join(words)
    if "resign" not in words or any(w not in _RESIGN_FILLERS and w != "resign" for w in words):
        return None
    return "resign confirm" if {"confirm", "confirmed"} & set(words) else "resign"


def seat_answer(post: Post, store: GameStore, record: GameRecord, player: Player, cmd: str,
                now: datetime, confirm_too: bool = False) -> tuple[str, str]:
    """Carry out a player's seat command (``SEAT_COMMANDS``) and save; returns the
    title and text of the answer to them.  ``resign confirm`` within
    ``RESIGN_WINDOW`` of ``resign`` gives the seat up (announced to everyone, the
    game master too); without it, or later, it is refused.  The confirmation
    must come in a later mail than ``resign``, once the player has read the
    warning: ``confirm_too`` (``cmd`` is ``resign`` and the same mail says
    ``resign confirm``, which the caller does not carry out) asks as ``resign``
    does and says first that the confirmation of that mail does not count
    (``resign_same_mail`` of ``templates/words/gm.txt``).  A confirmation in
    another mail of the cycle that took the request (``post.resign_asked``)
    does not count either: it is answered with the warning again
    (``resign_same_cycle`` of ``templates/words/gm.txt``), the request
    standing."""
    name = player.name
    if cmd == "digest on" or cmd == "digest off":
        on = cmd == "digest on"
        if on and name not in record.digest:
            record.digest.append(name)
        elif not on and name in record.digest:
            record.digest.remove(name)
        store.save(record)
        if player.address:  # the game's own setting wins over the person's daily digest here
            from .digest import release

            post.bk.set_game_override(player.address, record.id, "digest", "on" if on else "off", now)
            release(post.spool, player.address, record.id)
        return word("gm", "digest_title"), word("gm", "digest", on=on)
    if cmd == "calendar on" or cmd == "calendar off":
        # the mails carry the deadline's event or not (``calendar.calendar_wanted``); an
        # event sent before is cancelled by the next mail (``calendar.calendar_parts``)
        on = cmd == "calendar on"
        if on and name in record.calendar_off:
            record.calendar_off.remove(name)
        elif not on and name not in record.calendar_off:
            record.calendar_off.append(name)
        store.save(record)
        return word("gm", "calendar_title"), word("gm", "calendar", on=on)
    if cmd == "resign":
        record.resigning[name] = now.isoformat(timespec="seconds")
        post.resign_asked.add((record.id, name))
        store.save(record)
        until = format_when(now + RESIGN_WINDOW, player.timezone)  # the player's zone, named
        asked = word("gm", "resign_asked", until=until)
        if confirm_too:
            asked = word("gm", "resign_same_mail") + "\n\n" + asked
        return word("gm", "resign_title"), asked
    asked = record.resigning.get(name)
    if asked is None or now - datetime.fromisoformat(asked) > RESIGN_WINDOW:
        record.resigning.pop(name, None)
        store.save(record)
        return word("gm", "resign_title"), word("gm", "resign_not_asked")
    if (record.id, name) in post.resign_asked:
        # asked in this cycle: the warning was not read yet; the request stands
        until = format_when(datetime.fromisoformat(asked) + RESIGN_WINDOW, player.timezone)
        return word("gm", "resign_title"), (word("gm", "resign_same_cycle") + "\n\n"
                                            + word("gm", "resign_asked", until=until))
    record.resigning.pop(name)
    record.resigned.append(name)
    player.bot = True  # the built-in player takes the seat
    if name in record.digest:
        record.digest.remove(name)
    record.gm_log.append({"by": canonical_address(player.address), "at": now.isoformat(timespec="seconds"),
                          "command": "resign", "player": name})
    vacate(post.bk, record, name, "resigned", now)  # offered to the substitute pool (moderation/pool.py)
    store.save(record)
    drop_unsent_status(post, record, name)
    tell_everyone(post, record, lambda: word("gm", "resigned_title", seat=name),
                  lambda: word("gm", "resigned", seat=name), skip=(name,))
    gm = game_master_address(record, post.config)
    if gm and gm not in {canonical_address(p.address) for p in record.players}:
        with i18n.speaking(i18n.DEFAULT):  # the game master reads English
            post.put(post.message(record.id, gm, word("notices", "subject", game_id=record.id,
                                                       title=word("gm", "resigned_title", seat=name)),
                                  render("gm_notice.txt", game_id=record.id, text=word("gm", "resigned", seat=name),
                                         secret=None),
                                  token=gm_token(record)),
                     kind="gm", game=record.id)
    return word("gm", "resign_title"), word("gm", "resign_done")
