"""``pbem list``, ``archive``, ``export``: the games as files and pages
(``moderator/archive/``)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from . import _config, _timestamp


def _archive(ctx: click.Context, out: str, force: bool = False) -> bool:
    """Build or update the archive site in ``out``; print what it did.  True
    when every game could be rendered."""
    from moderator.archive.site import build_site
    from moderator.store.gamefile import GameStore

    try:
        config = _config(ctx, passwords=False)
        report = build_site(GameStore(config.games_dir), out, force=force,
                            show_addresses=config.archive_show_addresses,
                            index_language=config.archive_language)
    except OSError as exc:
        raise click.ClickException(f"cannot write the archive in {out}: {exc}") from None
    click.echo(report.summary())
    for err in report.errors:
        click.echo(f"archive error: {err}", err=True)
    return not report.errors


@click.command("list")
@click.option("--active", "which", flag_value="active", help="Only games not over and not ended by the game master.")
@click.option("--finished", "which", flag_value="finished", help="Only finished games (over, or ended by the game master).")
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="Judge vacations under way as if it were TIMESTAMP (ISO 8601; UTC when no offset).")
@click.pass_context
def list_(ctx, which, now):
    """One line per game: id, ruleset, players, whose move and since when, the
    deadline in force (UTC), dividends paid, the winner(s), the status (running,
    paused since when by whom and why, ended when by whom and why, over) and the
    seats on vacation, with missed moves or played by the built-in player."""
    from moderator.archive.listing import list_games
    from moderator.store.gamefile import GameStore

    lines, errors = list_games(GameStore(_config(ctx, passwords=False).games_dir), which or "all",
                               _timestamp(now) if now is not None else None)
    from moderator.moderation.signup import open_lines

    lines = lines + open_lines(_config(ctx, passwords=False))  # games open for sign-up, not yet started
    for line in lines:
        click.echo(line)
    for err in errors:
        click.echo(f"error: {err}", err=True)
    if not lines and not errors:
        click.echo("No games.")
    sys.exit(1 if errors else 0)


@click.command()
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, metavar="DIR",
              help="Folder of the site (created; updated in place).")
@click.option("--force", is_flag=True, help="Render every game, changed or not.")
@click.pass_context
def archive(ctx, out, force):
    """Write a static HTML site of every game into DIR (no server needed): an index,
    a page per game and per order, board pictures, statistics.  Only games changed
    since the last run are rendered again.  Never shows a hand, a secret or an address."""
    sys.exit(0 if _archive(ctx, out, force) else 1)


def _person_export(ctx, address, now=None):
    """The JSON of ``pbem export ADDRESS`` (``privacy.export_data``) at ``now``
    (``--now``; the wall clock when None); an address pbem does not know is an
    error (exit 1)."""
    from datetime import datetime, timezone

    from moderator.mail.read import canonical_address
    from moderator.moderation.privacy import export_data, export_json

    from moderator.store.bookkeeping import Bookkeeping, BookkeepingError
    from moderator.store.gamefile import GameStore

    from .operator import known

    config = _config(ctx, passwords=False)
    exists = (config.spool_dir / "pbem.sqlite3").exists()
    try:
        with Bookkeeping.in_spool(config.spool_dir, readonly=exists, legacy=None) as bk:
            data = export_data(bk, GameStore(config.games_dir), canonical_address(address),
                               _timestamp(now) if now is not None else datetime.now(timezone.utc))
    except BookkeepingError as exc:
        raise click.ClickException(str(exc)) from None
    if not known(data):
        raise click.ClickException(f"{canonical_address(address)} is not known here: no seat, no registration, "
                                   "no setting")
    return export_json(data)


@click.command()
@click.argument("game")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--with-secrets", is_flag=True,
              help="Keep addresses, secrets, hands and decks (the file as pbem keeps it).")
@click.option("--out", "out", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE", help="Write to FILE instead of the standard output.")
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="With an ADDRESS: the export's time (ISO 8601; UTC when no offset), as for games run with "
                   "`pbem run --now`.")
@click.pass_context
def export(ctx, game, fmt, with_secrets, out, now):
    """Print GAME as one self-contained file in the game-file format
    (docs/game-file.md); without --with-secrets, addresses, secrets and every
    hidden card are removed (see docs/archive.md).  Given an ADDRESS (it has an
    @): that person's own data across games as JSON (docs/operations.md)."""
    from moderator.archive.export import dump, export_data
    from moderator.store.gamefile import GameStore, StoreError

    if "@" in game:  # an ADDRESS: that person's data across games (moderation/privacy.py)
        text = _person_export(ctx, game, now)
        if out is None:
            click.echo(text, nl=False)
        else:
            Path(out).write_text(text, encoding="utf-8")
        return
    store = GameStore(_config(ctx, passwords=False).games_dir)
    try:
        store.load(game)  # a file whose history does not give its state is not exported
        text = dump(export_data(store.read_data(game), with_secrets), fmt)
    except (StoreError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if out is None:
        click.echo(text, nl=False)
    else:
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise click.ClickException(f"cannot write {out}: {exc.strerror or exc}") from None
