"""``pbem open`` and ``pbem signup``: games opened for sign-up by mail
(``moderator/moderation/signup.py``)."""
from __future__ import annotations

import click

from . import _clock, _config, _timestamp
from .games import _setup_options, _setup_values


def _expire_seconds(text: str) -> int:
    from moderator.moderation.deadlines import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--expire") from None


def _starts_value(text: str) -> str:
    """``full`` or the ISO 8601 instant of ``--starts`` (UTC when no offset)."""
    if text.strip().lower() == "full":
        return "full"
    try:
        return _timestamp(text).isoformat(timespec="seconds")
    except click.BadParameter:
        raise click.BadParameter(f"{text!r}: write full or an ISO 8601 time, e.g. 2026-12-24T18:00:00+00:00",
                                 param_hint="--starts") from None


@click.command("open")
@click.argument("game")
@click.option("--seats", default="3-6", show_default=True, metavar="MIN-MAX",
              help="How many seats: MIN-MAX (2-6) or N for exactly N.")
@click.option("--starts", default="full", show_default=True, metavar="full|DATE",
              help="Start when all MAX seats are taken (full), or at DATE (ISO 8601) with at least MIN "
                   "players; else the game master is asked to extend or cancel.")
@click.option("--invite", "invite", multiple=True, metavar="ADDRESS",
              help="Only these addresses may join (repeatable, or several separated by commas; "
                   "default: anyone).")
@click.option("--seat-order", type=click.Choice(["joined", "random"]), default="joined", show_default=True,
              help="Turn order: as the players joined, or shuffled by the game's seed.")
@click.option("--expire", default="30d", show_default=True, metavar="DURATION",
              help="An open game not started this long after opening is closed and its players told.")
@click.option("--min-reliability", "min_reliability", type=click.FloatRange(0, 1), default=None,
              metavar="SHARE", help="Refuse a join from someone who made fewer than this share of their "
                                    "moves in time in their games (e.g. 0.9); someone with no record yet is "
                                    "admitted.")
@_setup_options
@click.pass_context
def open_(ctx, game, seats, starts, invite, seat_order, expire, substitutes, min_reliability, seed, ruleset,
          board_path, deadline, on_missed, grace, abandon_after, gm, observers, language, now, **flags):
    """Open GAME for sign-up by mail: anyone (or the invited) sends 'join GAME'
    to the moderator's address and confirms by reply; the game starts as
    --starts says, with everyone's welcome as with `pbem new`."""
    from moderator.moderation.cycle import Moderator
    from moderator.moderation.signup import open_game, parse_seats

    try:
        low, high = parse_seats(seats)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--seats") from None
    settings, options, seed = _setup_values(ruleset, deadline, on_missed, grace, abandon_after, language, seed,
                                            flags)
    from email.utils import getaddresses

    # --invite 'Ann <a@x>, b@y' or repeated: each checked by open_game (player_address)
    invited = [addr or name for name, addr in getaddresses(list(invite)) if addr or name]
    setup = {"seats": [low, high], "starts": _starts_value(starts), "invite": invited,
             "seat_order": seat_order, "expire": _expire_seconds(expire), "substitutes": substitutes,
             "seed": seed, "ruleset": ruleset, "options": options, "board": board_path, "settings": settings,
             "gm": gm, "observers": list(observers)}
    if min_reliability is not None:
        setup["min_reliability"] = min_reliability
    moderator = Moderator(_config(ctx, passwords=bool(invited)), **_clock(now))  # invitations are sent now
    try:
        moderator.config.games_dir.mkdir(parents=True, exist_ok=True)  # where the game file comes at the start
    except OSError as exc:
        raise click.ClickException(f"cannot make the games directory {moderator.config.games_dir}: {exc}") from None
    try:
        og = open_game(moderator.bk, moderator.store, game, setup, moderator.clock())
    except ValueError as exc:
        moderator.close()
        raise click.ClickException(str(exc)) from None
    try:
        sent = _send_invitations(moderator, og)
    finally:
        moderator.close()
    start = "when all seats are taken" if og["setup"]["starts"] == "full" else f"at {og['setup']['starts']}"
    click.echo(f"Opened game {og['id']} for sign-up ({ruleset}, seats {low}-{high}, seed {seed}): it starts "
               f"{start}, or closes unstarted at {og['expires'].isoformat(timespec='minutes')}.")
    click.echo(f"Players join by mail to {moderator.config.moderator_address}: 'join {og['id']}' "
               f"(or 'join {og['id']} as NAME'), then 'confirm' in reply.")
    if invited:
        click.echo(f"Invitations to {len(invited)} address(es): {sent}.")


def _send_invitations(moderator, og) -> str:
    """Spool and send the invitations of open game ``og``; what became of them."""
    from moderator.moderation.cycle import Unsent
    from moderator.moderation.signup import invite

    if not og["setup"].get("invite"):
        return ""
    with moderator.bk.transaction():
        invite(moderator._post(), og)
    try:
        moderator._flush_now("the invitations")
    except Unsent as exc:
        return f"waiting in the spool for the next `pbem run` ({exc})"
    return "sent"


@click.group()
def signup():
    """The open games' sign-up: extend or cancel an open game, the registry of people."""


@signup.command()
@click.argument("game")
@click.option("--starts", default=None, metavar="full|DATE", help="A new start (full, or an ISO 8601 time).")
@click.option("--expire", default=None, metavar="DURATION", help="A new expiry, this long from now.")
@click.option("--now", "now", default=None, metavar="TIMESTAMP", help="As if it were TIMESTAMP (ISO 8601).")
@click.pass_context
def extend(ctx, game, starts, expire, now):
    """Give open GAME a new start or expiry; it takes sign-ups again."""
    from moderator.moderation.cycle import Moderator
    from moderator.moderation.signup import extend as extend_game

    moderator = Moderator(_config(ctx, passwords=False), **_clock(now))
    try:
        og = extend_game(moderator.bk, game, _starts_value(starts) if starts else None,
                         _expire_seconds(expire) if expire else None, moderator.clock())
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        moderator.close()
    click.echo(f"Open game {og['id']}: starts {og['setup']['starts']}, expires "
               f"{og['expires'].isoformat(timespec='minutes')}.")


@signup.command()
@click.argument("game")
@click.option("--now", "now", default=None, metavar="TIMESTAMP", help="As if it were TIMESTAMP (ISO 8601).")
@click.pass_context
def cancel(ctx, game, now):
    """Cancel open GAME before its start; everyone signed up is told (the next `pbem run` sends it)."""
    from moderator.moderation.cycle import Moderator
    from moderator.moderation.signup import cancel as cancel_game

    moderator = Moderator(_config(ctx, passwords=False), **_clock(now))
    try:
        with moderator.bk.transaction():
            og = cancel_game(moderator._post(), game, moderator.clock())
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        moderator.close()
    click.echo(f"Cancelled open game {og['id']}; the notices wait in the spool for the next `pbem run`.")


@signup.command()
@click.pass_context
def people(ctx):
    """The registry: every address confirmed by a reply, its name, games and
    substitute pool (the games it volunteers for, 'all'; when it last took a seat)."""
    from moderator.store.bookkeeping import Bookkeeping, BookkeepingError

    try:
        bk = Bookkeeping.in_spool(_config(ctx, passwords=False).spool_dir, readonly=True)
    except BookkeepingError as exc:
        raise click.ClickException(str(exc)) from None
    with bk:
        rows = bk.people()
        for p in rows:
            person = bk.person(p["address"])
            pool = ", ".join("all" if g == "*" else g for g in person["pool"]) or "-"
            used = f" (last took a seat {person['used'].isoformat(timespec='minutes')})" if person["used"] else ""
            click.echo(f"{p['address']}  {p['name']}  since {p['confirmed'].isoformat(timespec='minutes')}  "
                       f"games: {', '.join(person['games']) or '-'}  substitute pool: {pool}{used}")
    if not rows:
        click.echo("No one has confirmed a sign-up yet.")
