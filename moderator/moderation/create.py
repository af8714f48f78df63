"""Creating a game: check the setup, write the game file, spool the welcomes."""
from __future__ import annotations

from datetime import datetime

from .. import i18n
from ..mail.read import player_address
from ..rules.engine import Game
from ..rules.options import check_setup, ruleset as ruleset_of
from ..store.gamefile import (DEFAULT_LANGUAGE, GameRecord, GameStore, Player, SavedGame, board_ref_for,
                              default_clock, default_settings, new_secret)
from .language import check_language
from .notify import status_mail
from .send import Post


def new_game(store: GameStore, game_id: str, players: list[tuple[str, str]], seed: int, created: datetime,
             ruleset: str = "first-edition", options: dict[str, bool] | None = None,
             board_path: str | None = None, settings: dict | None = None,
             bots: list[str] | tuple[str, ...] = (), gm: str | None = None,
             observers: list[str] | tuple[str, ...] = (),
             languages: dict[str, str] | None = None) -> GameRecord:
    """A new game ``game_id`` for ``players`` (``[(name, address)]`` in turn order)
    and the seats of the built-in player ``bots`` (names, after the players in turn
    order; no address, ``Player.bot``), dealt with ``seed``; not yet saved.
    ``settings``: the clock settings (``default_settings()`` and these keys:
    ``deadline`` seconds or None, ``on_missed`` ``bot``/``wait``, ``abandon_after``,
    ``grace`` seconds after a deadline an order is still taken, default 0;
    ``substitutes`` ``auto``/``gm``/``none``, who takes an abandoned seat,
    ``moderation/pool.py``, kept only when not ``auto``);
    the wait for the initial investments starts at ``created``.  ``gm``: the game
    master's address (None: the operator's, ``config.operator``); they get a
    secret of their own.  ``observers``: addresses that get the public status mails.
    ``settings["language"]``: the game's language (a code of
    ``moderator.i18n.LANGUAGES``, or any tag ``language.check_language`` reads;
    default ``en``); ``languages``: players' own, ``{name: code}`` (the others
    read the game's).

    Raises ValueError for a bad id, an existing game (also one whose id differs
    only in case), 1 or 7+ seats, no human player, a duplicate name or address
    (players, observers and the game master alike), an unknown ruleset or option,
    bad clock settings or substitutes, an unknown language (the message names the five) or a
    player's language for a name not in the game, or a board file that does not
    validate."""
    from ..rules.board import check_board

    ruleset_of(ruleset)  # ValueError naming the rulesets
    store.path(game_id)  # validates the id
    if store.exists(game_id):
        raise ValueError(f"game {game_id!r} already exists ({store.path(game_id)})")
    clash = [g for g in store.ids() if g.lower() == game_id.lower()]
    if clash:  # players type ids in any case; some file systems ignore case too
        raise ValueError(f"game {clash[0]!r} already exists; choose an id that differs in more than case")
    if not players:
        raise ValueError("a game needs at least one player by mail (--player) besides the built-in ones")
    names = [n for n, _ in players] + [str(b).strip() for b in bots]
    options = check_setup(names, ruleset, options)
    clock_settings = {**default_settings(), **(settings or {})}
    if clock_settings["on_missed"] not in ("bot", "wait"):
        raise ValueError(f"on_missed is {clock_settings['on_missed']!r}; choose bot or wait")
    if not isinstance(clock_settings["abandon_after"], int) or clock_settings["abandon_after"] < 1:
        raise ValueError("abandon_after must be a whole number of at least 1")
    grace = clock_settings.get("grace", 0)
    if not isinstance(grace, int) or isinstance(grace, bool) or grace < 0:
        raise ValueError("grace must be a whole number of seconds, 0 or more")
    substitutes = clock_settings.pop("substitutes", None) or "auto"  # format 6: written only when not auto
    if substitutes not in ("auto", "gm", "none"):
        raise ValueError(f"substitutes is {substitutes!r}; choose auto, gm or none")
    if substitutes != "auto":
        clock_settings["substitutes"] = substitutes
    clock_settings["language"] = check_language(str(clock_settings.get("language") or DEFAULT_LANGUAGE))
    if "press" in clock_settings or "press_archive" in clock_settings:  # the press rule (moderation/press.py)
        from .press import check_press_settings

        clock_settings.update(check_press_settings(clock_settings.get("press"), clock_settings.get("press_archive")))
    from ..orders.names import find  # "zoe=de" is Zoë's

    own = {find(str(n), [m for m, _ in players]) or str(n): check_language(str(c))
           for n, c in (languages or {}).items()}
    strangers = sorted(set(own) - {n for n, _ in players})
    if strangers:
        raise ValueError(f"a language for {', '.join(strangers)}, who is no player by mail of this game")
    deadline = clock_settings["deadline"]
    if deadline is not None and (not isinstance(deadline, int) or deadline < 60):
        raise ValueError("the deadline must be at least one minute, or none")
    addresses = []
    for name, raw in players:
        try:
            addresses.append(player_address(raw))
        except ValueError as exc:
            raise ValueError(f"{exc} (player {name})") from None
    if len(set(addresses)) != len(addresses):
        dup = next(a for a in addresses if addresses.count(a) > 1)
        raise ValueError(f"two players have the same address {dup}")
    gm_address = None
    if gm is not None:
        try:
            gm_address = player_address(gm)
        except ValueError as exc:
            raise ValueError(f"{exc} (--gm)") from None
    watching = []
    for raw in observers:
        try:
            watching.append(player_address(raw))
        except ValueError as exc:
            raise ValueError(f"{exc} (--observer)") from None
    everyone = addresses + watching + ([gm_address] if gm_address else [])
    if len(set(everyone)) != len(everyone):
        dup = next(a for a in everyone if everyone.count(a) > 1)
        raise ValueError(f"the address {dup} is given twice (players, observers and the game master "
                         "need addresses of their own)")
    try:
        board_ref, board = board_ref_for(board_path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"board {board_path}: {exc}") from exc
    problems = [m for m in check_board(board) if not m.startswith("warning")]
    if problems:
        raise ValueError("the board does not validate: " + "; ".join(problems))
    game = Game.new(board, names, seed, ruleset, options)
    return GameRecord(
        id=game_id,
        game=game,
        players=[Player(n, a, new_secret(), language=own.get(n)) for n, a in zip(names, addresses)]
        + [Player(n, "", new_secret(), bot=True) for n in names[len(addresses):]],
        board_ref=board_ref,
        created=created.isoformat(timespec="seconds"),
        settings=clock_settings,
        clock=default_clock(created.isoformat(timespec="seconds")),
        game_master={"address": gm_address, "secret": new_secret()},
        observers=watching,
    )


def welcome(post: Post, store: GameStore, record: GameRecord) -> SavedGame:
    """Save the new game ``record`` and spool every player's welcome mail (secret,
    hand, options, order guide; ``templates/welcome.txt``), which starts the
    player's thread.  Returns what was written (for the games index: the caller
    records it once the game's lock is released).  ValueError when the game was
    created meanwhile."""
    mails = []
    for p in record.players:
        if not p.address:  # a seat of the built-in player
            continue
        msg = status_mail(post, record, p, [], template="welcome.txt")
        record.threads[p.name] = str(msg["Message-ID"])
        mails.append((p, msg))
    from .observers import observer_mail
    from ..render.words import word

    with i18n.speaking(record.language):
        observing = word("gm", "observing", game_id=record.id)
    for address in record.observers:
        mails.append((None, observer_mail(post, record, address, [observing], welcome=True)))
    record.notified = len(record.game.events)
    with store.lock(record.id):
        if store.exists(record.id):
            raise ValueError(f"game {record.id!r} already exists")
        saved = store.write(record)
        for p, msg in mails:
            if p is None:
                post.put(msg, kind="observer", game=record.id)
            else:
                post.put(msg, kind="welcome", game=record.id, player=p.name)
    return saved
