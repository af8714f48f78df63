"""``pbem doctor``, ``spool``, ``bounces``, ``player set-address``, ``restore``,
``forget``, ``repair``, ``unsubscribe``: the operator's commands instead of hand edits
(``moderator/admin.py``, ``moderator/doctor.py``)."""
from __future__ import annotations

import sys

import click

from . import _config, _timestamp


@click.command()
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="Check as if it were TIMESTAMP (ISO 8601; UTC when no offset), e.g. after "
                   "cycles run with `pbem run --now`.")
@click.pass_context
def doctor(ctx, now):
    """Check configuration, game files, mail servers, spool and lock (changes nothing)."""
    from moderator.doctor import run_doctor

    sys.exit(run_doctor(ctx.obj.get("config"), echo=click.echo,
                        now=_timestamp(now) if now is not None else None))


# ---------------------------------------------------------------- operator commands
def _admin(call):
    """Run an operator command; its expected failures become a ClickException
    (exit status 1) with their words."""
    from moderator.admin import Busy, Incomplete
    from moderator.mail.transport import TransportError
    from moderator.store.bookkeeping import BookkeepingError
    from moderator.store.gamefile import StoreError

    try:
        return call()
    except KeyError as exc:
        raise click.ClickException(str(exc.args[0]) if exc.args else str(exc)) from None
    except (Busy, Incomplete, ValueError, StoreError, TransportError, BookkeepingError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException((f"{exc.filename}: " if exc.filename else "") + str(exc.strerror or exc)) from None


@click.group()
def spool():
    """The outgoing mails: list them, send them now, remove orphan files."""


@spool.command("list")
@click.pass_context
def spool_list(ctx):
    """One line per mail waiting, refused for good (spool/failed) or orphaned."""
    from moderator.admin import spool_list as listing

    mails = _admin(lambda: listing(_config(ctx, passwords=False)))
    for m in mails:
        click.echo(m.line())
    if not mails:
        click.echo("The spool is empty.")


@spool.command("retry")
@click.argument("names", nargs=-1)
@click.pass_context
def spool_retry(ctx, names):
    """Send the waiting mails (or only NAMES) now, ignoring their retry times."""
    from moderator.admin import spool_retry as retry

    report = _admin(lambda: retry(_config(ctx), tuple(names)))
    click.echo(f"{report.sent} mail(s) sent, {report.deferred} still waiting.")
    for err in report.errors:
        click.echo(f"error: {err}", err=True)
    sys.exit(0 if not report.errors else 1)


@spool.command("clean")
@click.option("--failed", is_flag=True, help="Also remove the mails refused for good (spool/failed/).")
@click.pass_context
def spool_clean(ctx, failed):
    """Remove metadata files without their mail (left by a kill; never sent), and
    with --failed the mails refused for good, once dealt with."""
    from moderator.admin import spool_clean as clean

    gone = _admin(lambda: clean(_config(ctx, passwords=False), failed=failed))
    for path in gone:
        click.echo(f"removed {path}")
    click.echo(f"{len(gone)} file(s) removed.")


@click.group()
def bounces():
    """Addresses whose mail was refused: list them, forget them."""


@bounces.command("list")
@click.pass_context
def bounces_list(ctx):
    """Every address remembered as bounced, with the reason."""
    from moderator.admin import bounced_seats, bounces_list as listing

    config = _admin(lambda: _config(ctx, passwords=False))
    found = _admin(lambda: listing(config))
    seats = _admin(lambda: bounced_seats(config)) if found else {}
    for address, why in sorted(found.items()):
        click.echo(f"{address}{f' ({seats[address]})' if address in seats else ''}: {why}")
    if not found:
        click.echo("No bounced addresses.")


@bounces.command("clear")
@click.argument("address", required=False)
@click.pass_context
def bounces_clear(ctx, address):
    """Forget the bounce of ADDRESS (of every address without one)."""
    from moderator.admin import bounces_clear as clear

    gone = _admin(lambda: clear(_config(ctx, passwords=False), address))
    click.echo(f"Forgot {len(gone)} bounce(s)" + (f": {', '.join(gone)}" if gone else "") + ".")


@click.command("unsubscribe")
@click.argument("token")
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="As if it were TIMESTAMP (ISO 8601; UTC when no offset).")
@click.pass_context
def unsubscribe(ctx, token, now):
    """Carry out the List-Unsubscribe TOKEN of a digest or pool offer (what the
    mail `unsubscribe TOKEN` does): for the one-click web hook (RFC 8058)."""
    from moderator.admin import unsubscribe as apply

    kind = _admin(lambda: apply(_config(ctx, passwords=False), token,
                                _timestamp(now) if now is not None else None))
    click.echo("The daily digest of the token's owner is off." if kind == "digest"
               else "The token's owner is out of the substitute pool.")


@click.group()
def player():
    """A player of a game."""


@player.command("set-address")
@click.argument("game")
@click.argument("name")
@click.argument("address")
@click.pass_context
def player_set_address(ctx, game, name, address):
    """Give player NAME of GAME the ADDRESS (checked like `pbem new`); forget its
    bounces; the player is told at the new address by the next `pbem run`."""
    from moderator.admin import set_address
    from moderator.store.spool import Spool

    config = _config(ctx, passwords=False)
    name, old, new = _admin(lambda: set_address(config, game, name, address))
    waits = any(e.meta.get("game") == game and e.meta.get("player") == name and e.meta.get("address_change")
                for e in Spool(config.spool_dir).entries())  # a `pbem run` may have sent it already
    click.echo(f"Game {game}: {name} now plays as {new} (was {old}); a status mail to {new} "
               + ("waits in the spool for the next `pbem run`." if waits else "has left the spool already."))


@click.command()
@click.argument("game")
@click.pass_context
def restore(ctx, game):
    """Put GAME's handled and ignored mails back into the inbox, to be read again
    by the next cycle (after restoring its file from a backup)."""
    from moderator.admin import restore as put_back

    keys = _admin(lambda: put_back(_config(ctx), game))
    click.echo(f"{len(keys)} mail(s) of game {game} put back into the inbox; the next `pbem run` "
               "reads them (orders the game file has already are not applied again).")


@click.command()
@click.argument("game")
@click.option("--yes", is_flag=True, help="With an ADDRESS: forget it (without it, only say what would go).")
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="With an ADDRESS: as if it were TIMESTAMP (ISO 8601; UTC when no offset), as for games run "
                   "with `pbem run --now`.")
@click.pass_context
def forget(ctx, game, yes, now):
    """Forget GAME, whose file was removed on purpose (its mail then goes to no
    game); or, given an ADDRESS (it has an @), forget that person everywhere:
    registry, game files (a neutral seat name), bookkeeping, spool (with --yes;
    docs/operations.md, "A person's own data"); an address pbem does not know
    is an error (exit 1)."""
    if "@" in game:
        _forget_person(ctx, game, yes, now)
        return
    from moderator.admin import forget as drop

    _admin(lambda: drop(_config(ctx, passwords=False), game))
    click.echo(f"Game {game} forgotten: mail for it is now mail for no game.")


def known(data: dict) -> bool:
    """Whether the export ``data`` of an address (``privacy.export_data``) shows
    pbem knows it at all: a seat, a registration, a setting, a vacation ledger
    entry, the substitute pool, a record."""
    return bool(data.get("seats") or data.get("name") or data.get("settings") or data.get("overrides")
                or data.get("vacation_ledger") or data.get("pool") or data.get("press"))


def _raise(exc):
    """Raise ``exc`` again (for ``_admin`` to word it)."""
    raise exc


def _forget_person(ctx, address, yes, now=None):
    from moderator.mail.read import canonical_address
    from moderator.moderation.cycle import Moderator, Unsent
    from moderator.moderation.privacy import export_data

    from . import _clock

    config = _config(ctx)
    address = canonical_address(address)
    m = Moderator(config, **_clock(now))
    try:
        data = export_data(m.bk, m.store, address, m.clock())
        if not known(data):
            raise click.ClickException(f"{address} is not known here: no seat, no registration, no setting; "
                                       "nothing changed")
        seats = ", ".join(f"{s['seat']} in {s['game']}" for s in data["seats"]) or "no seat"
        n_seats = len(data["seats"])
        if not yes:
            click.echo(f"{address}: {seats}; registered: {'yes' if data['name'] else 'no'}. Nothing changed; "
                       f"`pbem forget {address} --yes` forgets them.")
            return
        from filelock import Timeout

        try:  # Unsent first: the person is forgotten, only the notices wait (``_admin`` would make it an error)
            games = m.forget_person(address)
        except Unsent as exc:
            click.echo(f"{address} forgotten; the notices to the other players wait in the spool: {exc}")
            return
        except Timeout:
            raise click.ClickException(f"a cycle holds {config.spool_dir / 'cycle.lock'}; try again later") from None
        except Exception as exc:  # noqa: BLE001 - worded as the other operator commands word theirs
            games = _admin(lambda: _raise(exc))
        click.echo(f"{address} forgotten: {seats} now {'has' if n_seats == 1 else 'have'} neutral names; "
                   "games rewritten: "
                   f"{', '.join(games) or 'none'}. Nothing was mailed to the address.")
    finally:
        m.close()


@click.command()
@click.argument("game")
@click.option("--from-history", is_flag=True, required=True,
              help="Rebuild the state and log from the seed and history (the only repair there is).")
@click.option("--yes", is_flag=True, help="Write the rebuilt game (without it, only show the difference).")
@click.pass_context
def repair(ctx, game, from_history, yes):
    """Show how GAME's state and log differ from those its history gives (which
    part of the file was edited), and with --yes write the rebuilt game."""
    from moderator.admin import repair as rebuild

    result = _admin(lambda: rebuild(_config(ctx, passwords=False), game, write=yes))
    if not result.parts:
        click.echo(f"Game {game}: the state and log agree with the history; nothing to repair.")
        return
    click.echo("".join(result.diff), nl=False)
    click.echo(f"Game {game}: edited outside the moderator in: {', '.join(result.parts)}.")
    if result.written:
        click.echo(f"Written: {game}'s {' and '.join(result.parts)} rebuilt from its history.")
    else:
        click.echo(f"Nothing written; `pbem repair {game} --from-history --yes` writes the rebuilt game.")
