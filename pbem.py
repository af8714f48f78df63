"""pbem: the play-by-email moderator for Union Pacific (command line).

    pbem demo                         play a 3-player demo game on local mail folders
    pbem new GAME --player NAME=ADDRESS ... [--seed N] [--ruleset R] [--gm ADDRESS]
             [--observer ADDRESS ...] [options]
    pbem gm GAME COMMAND ...          a game master's command (undo, replace, end,
                                      message, observe; "help", "secret")
    pbem run [--loop --interval SECONDS]
    pbem replay GAME                  check that seed + history give the recorded state
    pbem rules GAME                   print the ruleset and options of a game
    pbem show GAME [--map FILE.png] [--now T]   the public position of a game, its status (running,
                                      paused, ended), the deadline in force, each seat's clock
    pbem board check FILE             validate a board file
    pbem list [--active|--finished] [--now T]   one line per game
    pbem archive --out DIR            a static HTML site of every game (incremental)
    pbem export GAME [--format yaml|json] [--with-secrets]   one game as a single file
    pbem doctor                       check configuration, games, mail servers, spool, lock, disk
    pbem spool list|retry [NAME...]|clean [--failed]   the outgoing mails
    pbem bounces list|clear [ADDRESS] addresses whose mail was refused
    pbem player set-address GAME NAME ADDRESS
    pbem forget GAME                  forget a game whose file was removed on purpose
    pbem forget ADDRESS [--yes]       forget a person everywhere (game files, registry, spool)
    pbem export ADDRESS               a person's own data across games, as JSON
    pbem restore GAME                 put GAME's handled and ignored mails back into the inbox
    pbem repair GAME --from-history [--yes]   rebuild state and log from the history
    pbem [--log-level LEVEL] [--log-file FILE] COMMAND ...
    pbem --version

The configuration is ``--config FILE``, else ``./pbem.yaml``, else the embedded
default (games in ./games, mail in the Maildirs ./mail/inbox and ./mail/outbox).

The commands live in ``moderator/cli/``, grouped like the rooms of ``moderator/``
(``games``, ``archive``, ``mail``, ``operator``); this module is the entry point.

Start-up imports only click and the option table: each command imports what it
uses when it runs (the moderation cycle, the rules engine, YAML, Jinja2, and a mail
transport's library only for the transport configured), so ``pbem --help`` and a
Maildir ``pbem run`` stay quick; ``tests/test_startup.py`` checks this.
"""
from __future__ import annotations

import click

from moderator.cli import archive, games, mail, operator, signup

LOG_LEVELS = ("debug", "info", "warning", "error")


def _version() -> str:
    """The installed distribution's version (its metadata), else ``moderator.__version__``
    (a source tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pbem")
    except PackageNotFoundError:
        from moderator import __version__

        return __version__


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"pbem {_version()}")
        ctx.exit()


@click.group()
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Print the version and exit.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Configuration file (default: ./pbem.yaml, else local mail folders).")
@click.option("-v", "--verbose", is_flag=True, help="Log every mail handled (--log-level info).")
@click.option("--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False), default=None,
              help="What to log: debug, info (every mail handled), warning (default), error.")
@click.option("--log-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Append the log to FILE (reopened when logrotate moves it) instead of the "
                   "standard error (which systemd's journal and cron's mail keep).")
@click.pass_context
def main(ctx: click.Context, config_path: str | None, verbose: bool, log_level: str | None,
         log_file: str | None) -> None:
    """Play-by-email moderator for Alan R. Moon's Union Pacific."""
    import logging

    level = (log_level or ("info" if verbose else "warning")).upper()
    handlers = None
    if log_file is not None:
        from logging.handlers import WatchedFileHandler

        try:
            handlers = [WatchedFileHandler(log_file, encoding="utf-8")]
        except OSError as exc:
            raise click.ClickException(f"cannot open the log file {log_file}: {exc.strerror or exc}") from None
    logging.basicConfig(level=getattr(logging, level), format="%(asctime)s %(levelname)s %(message)s",
                        handlers=handlers, force=True)
    ctx.ensure_object(dict)
    ctx.obj["config"] = config_path


# the commands, grouped like the rooms of moderator/ (moderator/cli/)
for _command in (games.new, games.run, games.replay, games.gm, games.rules, games.show, games.board, games.demo,
                 signup.open_, signup.signup,
                 archive.list_, archive.archive, archive.export, mail.auth,
                 operator.doctor, operator.spool, operator.bounces, operator.player, operator.restore,
                 operator.forget, operator.repair, operator.unsubscribe):
    main.add_command(_command)


if __name__ == "__main__":
    main()
