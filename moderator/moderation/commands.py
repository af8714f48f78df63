"""Answers to the mail commands ``help``, ``status``, ``history``, ``rules`` and
``secret new`` (one line with only the command; see ``templates/help.txt``).

Each answer is spooled under the key ``MID#commands`` (``Verdict.commands_key``),
apart from the key of the order in the same mail, so that a mail's commands are
answered once even when its order was applied in an interrupted cycle.
"""
from __future__ import annotations


from ..mail.read import OrderMail, subject_tag
from ..render import render
from ..render.words import word
from ..rules.engine import Game
from ..rules.options import OPTION_HELP, ruleset as ruleset_of
from ..store.gamefile import GameRecord, GameStore, Player, new_secret
from .notify import status_mail
from .gm import SEAT_COMMANDS, seat_answer
from .send import Post
from ..rules.notation import public_order


def rules_text(game_id: str, game: Game) -> str:
    """The rules-in-force text of a game (``templates/rules.txt``): ruleset, players,
    options, PBEM decisions; mailed on ``rules`` and printed by ``pbem rules``."""
    return render("rules.txt", game_id=game_id, ruleset=game.ruleset, options=game.options,
                  ruleset_summary=ruleset_of(game.ruleset).summary,
                  option_help=OPTION_HELP, players=game.players, final_dividend=game.final_dividend)


def _history_text(record: GameRecord, player: Player) -> str:
    over = record.game.phase != "initial"
    hist = [
        {"player": h["player"],
         "order": h["order"] if h["player"] == player.name else public_order(h["order"]),
         "public": over or h["player"] == player.name}
        for h in record.history
    ]
    return render("history.txt", game_id=record.id, history=hist, log=record.game.log)


def rotate_secret(store: GameStore, record: GameRecord, player: Player) -> None:
    """Give ``player`` a new secret and save the game file (``secret new``)."""
    player.secret = new_secret()
    store.save(record)


def answer_commands(post: Post, store: GameStore, om: OrderMail, key: str, record: GameRecord,
                    player: Player, commands: tuple[str, ...], skip_status: bool,
                    rotated: bool = False) -> None:
    """Spool the answers to ``commands`` of ``player`` in ``om`` under ``key``
    (``MID#commands``).  ``skip_status``: the status mail after an order answers
    ``status``.  ``secret new`` saves the game file with the player's new secret
    (``rotated``: the caller did so already, so that its refusal in the same mail
    carries the new secret)."""
    gid = record.id
    old_tag = subject_tag(gid, player.secret)  # the mail's answers keep the tag it came with

    def send(title: str, text: str, tag: str | None = None) -> None:
        tag = tag or old_tag
        subject = word("notices", "subject", tag=tag, game_id=gid, title=title)
        post.put(post.answer(om, gid, player.address, subject, text), answers=key)

    for cmd in commands:
        # the per-cycle limit of answers to one address (``Post.allow``); the new
        # secret is always sent (the player could not play without it)
        if (cmd != "status" or not skip_status) and not post.allow(player.address, cmd,
                                                                   count_only=cmd == "secret new" or cmd in SEAT_COMMANDS):
            continue
        if cmd == "help":
            text = render("help.txt", game_id=gid, moderator_address=post.config.moderator_address)
            send(word("notices", "help_title"), text)
        elif cmd == "status" and not skip_status:
            post.put(status_mail(post, record, player, [], in_reply_to=om.message_id), answers=key)
        elif cmd == "history":
            send(word("notices", "history_title"), _history_text(record, player))
        elif cmd == "rules":
            send(word("notices", "rules_title"), rules_text(gid, record.game))
        elif cmd in SEAT_COMMANDS:
            title, text = seat_answer(post, store, record, player, cmd, post.clock())
            send(title, text + "\n")
        elif cmd == "secret new":
            if not rotated:
                rotate_secret(store, record, player)
            text = word("notices", "secret_new", game_id=gid, secret=player.secret) + "\n"
            send(word("notices", "secret_new_title"), text, tag=subject_tag(gid, player.secret))
