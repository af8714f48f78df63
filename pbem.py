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
    pbem restore GAME                 put GAME's handled and ignored mails back into the inbox
    pbem repair GAME --from-history [--yes]   rebuild state and log from the history
    pbem [--log-level LEVEL] [--log-file FILE] COMMAND ...
    pbem --version

The configuration is ``--config FILE``, else ``./pbem.yaml``, else the embedded
default (games in ./games, mail in the Maildirs ./mail/inbox and ./mail/outbox).

Start-up imports only click and the option table: each command imports what it
uses when it runs (the moderation cycle, the rules engine, YAML, Jinja2, and a mail
transport's library only for the transport configured), so ``pbem --help`` and a
Maildir ``pbem run`` stay quick; ``tests/test_startup.py`` checks this.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from moderator.rules.options import OPTION_TABLE, OPTIONS, RULESETS

LOG_LEVELS = ("debug", "info", "warning", "error")


def _config(ctx: click.Context, passwords: bool = True):
    """The configuration named by ``--config`` (or the default); a ConfigError
    becomes a ClickException (exit status 1).  ``passwords`` False: the mail
    passwords need not be set (commands that talk to no mail server)."""
    from moderator.config import ConfigError, load_config

    try:
        return load_config(ctx.obj.get("config"), passwords=passwords)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


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


def _load(ctx: click.Context, game: str, check: bool = True):
    """The game record of GAME, or a clear error (exit status 1)."""
    from moderator.store.gamefile import GameStore, StoreError

    store = GameStore(_config(ctx, passwords=False).games_dir)
    try:
        return store.load(game, check=check)
    except (StoreError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _parse_player(text: str) -> tuple[str, str]:
    """``(name, address)`` from ``NAME=ADDRESS``; click.BadParameter otherwise."""
    name, sep, address = text.partition("=")
    if not sep or not name.strip() or not address.strip():
        raise click.BadParameter(f"{text!r}: write a player as NAME=ADDRESS", param_hint="--player")
    return name.strip(), address.strip()


def _option_flags(command):
    """One ``pbem new`` flag per rule option, from the option table."""
    for opt in reversed(OPTION_TABLE):
        command = click.option(opt.flag, opt.name, is_flag=True, help=opt.help)(command)
    return command


@main.command()
@click.argument("game")
@click.option("--player", "players", multiple=True, required=True,
              help="A player as NAME=ADDRESS, in turn order; 2-6 of them.")
@click.option("--seed", type=int, default=None, help="Seed of the game's shuffles (default: random).")
@click.option("--ruleset", default="first-edition", show_default=True,
              help=" or ".join(RULESETS) + ".")
@click.option("--board", "board_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A board file (default: the shipped North American board).")
@click.option("--bot", "bots", multiple=True, metavar="NAME",
              help="A seat played by the built-in player from the start (after the players "
                   "in turn order); repeatable. One --player and bots: a solo game.")
@click.option("--deadline", default="72h", show_default=True,
              help="Time one move may take, from the mail that asks for it: minutes, hours "
                   "or days (90m, 48h, 3d), or none.")
@click.option("--on-missed", type=click.Choice(["bot", "wait"]), default="bot", show_default=True,
              help="At the deadline: the built-in player moves (bot), or the game waits and "
                   "the game master is told (wait).")
@click.option("--grace", default="0", show_default=True,
              help="Time after the deadline during which an order that reached the mailbox is still "
                   "taken (and the missed move waits): minutes, hours or days (10m, 1h), or 0.")
@click.option("--abandon-after", type=click.IntRange(min=1), default=3, show_default=True,
              help="Missed moves in a row after which the seat is abandoned (the built-in "
                   "player keeps it; the game master is asked for a replacement).")
@click.option("--gm", "gm", default=None, metavar="ADDRESS",
              help="The game master's address (default: the configuration's operator).")
@click.option("--language", "language", default="en", show_default=True, metavar="CODE",
              help="The game's language: en, es, de, cs or zh (players without their own read it).")
@click.option("--player-language", "player_languages", multiple=True, metavar="NAME=CODE",
              help="A player's own language, e.g. Ana=es (repeatable; they may change it by mail: "
                   "'language CODE').")
@click.option("--observer", "observers", multiple=True, metavar="ADDRESS",
              help="An address that gets the public status mails (repeatable).")
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="Create the game as if it were TIMESTAMP (ISO 8601; UTC when no offset): the "
                   "first deadline runs from then, as for games run with `pbem run --now`.")
@_option_flags
@click.pass_context
def new(ctx, game, players, seed, ruleset, board_path, bots, deadline, on_missed, grace, abandon_after, gm,
        observers, language, player_languages, now, **flags):
    """Create GAME and mail every player a welcome with their secret and hand."""
    from moderator.moderation.deadlines import parse_duration

    from moderator.mail.transport import TransportError
    from moderator.moderation.cycle import Moderator, Unsent

    if ruleset not in RULESETS:
        raise click.BadParameter(f"{ruleset!r}; choose {' or '.join(RULESETS)}", param_hint="--ruleset")
    parsed = [_parse_player(p) for p in players]
    try:
        seconds = parse_duration(deadline, allow_none=True)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--deadline") from None
    try:
        grace_seconds = 0 if grace.strip() in ("0", "none") else parse_duration(grace)
    except ValueError as exc:
        raise click.BadParameter(f"{exc}, or 0", param_hint="--grace") from None
    from moderator.moderation.language import check_language

    try:
        language = check_language(language)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--language") from None
    languages = {}
    for item in player_languages:
        name, sep, code = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{item!r}: write NAME=CODE, e.g. Ana=es", param_hint="--player-language")
        try:
            languages[name.strip()] = check_language(code)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--player-language") from None
    settings = {"deadline": seconds, "on_missed": on_missed, "abandon_after": abandon_after, "language": language,
                "grace": grace_seconds}
    options = {k: bool(flags.get(k)) for k in OPTIONS}
    if seed is None:
        import secrets

        seed = secrets.randbelow(2**31)
    moderator = Moderator(_config(ctx), **_clock(now))
    try:
        record = moderator.create_game(game, parsed, seed, ruleset, options, board_path, settings, bots,
                                       gm=gm, observers=observers, languages=languages)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    except Unsent:  # the game is created: exit status 0, the welcomes wait in the spool
        record = moderator.store.load(game)
    click.echo(f"Created game {record.id} ({ruleset}, seed {seed}) in {moderator.store.path(game)}.")
    if moderator.config.imap is None:  # local Maildirs: the inbox is there for the first orders
        try:
            moderator.config.open_inbox().close()
        except TransportError as exc:
            click.echo(f"warning: the inbox cannot be made: {exc}", err=True)
    from moderator.admin import spool_list

    waiting = {e.meta.get("player") for e in moderator.spool.entries()
               if e.meta.get("kind") == "welcome" and e.meta.get("game") == record.id}
    refused = {m.player for m in spool_list(moderator.config)  # refused for good (5xx): spool/failed
               if m.where == "failed" and m.kind == "welcome" and m.game == record.id}
    sent = [f"{p.name} <{p.address}>" for p in record.players if p.address and p.name not in waiting | refused]
    queued = [f"{p.name} <{p.address}>" for p in record.players if p.address and p.name in waiting]
    if sent:
        click.echo("Welcome mails sent to: " + ", ".join(sent))
    if queued:
        click.echo("Welcome mails waiting in the spool (the next `pbem run` sends them): " + ", ".join(queued))
    for p in record.players:
        if p.name in refused:
            click.echo(f"error: game {record.id}: the welcome to {p.name} <{p.address}> was refused for good "
                       f"(see `pbem bounces list`); give the player another address with `pbem player "
                       f"set-address {record.id} {p.name} ADDRESS`.", err=True)
    if bots:
        click.echo("Played by the built-in player: " + ", ".join(bots) + " (moves in each `pbem run`).")
    if on_missed == "wait" and not (record.game_master.get("address") or moderator.config.operator):
        click.echo("warning: --on-missed wait, but the game has no game master to tell of a missed move "
                   "(no --gm, no operator in the configuration): a missed move is only counted, and the "
                   "game waits. Set 'operator: ADDRESS' in pbem.yaml to be told.", err=True)
    _tell_waiting(moderator, record.id, "created")


@main.command()
@click.option("--loop", is_flag=True, help="Repeat the cycle forever.")
@click.option("--interval", type=click.FloatRange(min=1), default=300, show_default=True,
              help="Seconds between cycles with --loop (at most: with an IMAP server that "
                   "offers IDLE, new mail starts the next cycle at once).")
@click.option("--archive", "archive_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR", help="After each cycle, update the static archive site in DIR.")
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="Run one cycle as if it were TIMESTAMP (ISO 8601, e.g. 2026-12-24T18:00:00+00:00; "
                   "UTC when no offset): for tests and for simulating a game over weeks. "
                   "Not with --loop.")
@click.pass_context
def run(ctx, loop, interval, archive_dir, now):
    """Poll the inbox once: apply orders, answer, run the game clocks (deadlines,
    reminders, the built-in player's moves), send status mails."""
    from moderator.moderation.cycle import Moderator

    if now is not None and loop:
        raise click.BadParameter("--now sets the clock for one cycle; leave out --loop", param_hint="--now")
    moderator = Moderator(_config(ctx), **_clock(now))
    from moderator.runtime import tune_gc

    tune_gc()  # young collections less often (moderator/runtime.py)
    while True:
        report = moderator.run_cycle()
        click.echo(report.summary())
        for err in report.errors:
            click.echo(f"error: {err}", err=True)
        archived = _archive(ctx, archive_dir) if archive_dir is not None else True
        if not loop:
            sys.exit(0 if report.ok and archived else 1)
        # IMAP IDLE where the server offers it (wakes on new mail), else a sleep
        moderator.wait_for_mail(interval)


@main.command()
@click.argument("game")
@click.pass_context
def replay(ctx, game):
    """Replay GAME's seed + history and compare with the recorded state."""
    record = _load(ctx, game)
    click.echo(f"Game {game}: {len(record.history)} orders replayed; the state matches the file.")
    for e in record.gm_log:
        who = "player" if e.get("command") == "resign" else "game master"  # a resignation is the player's
        click.echo(f"  {who}: {e.get('at', '?')} {e.get('by', '?')}: {e.get('command', '?')}"
                   + (f" ({e['reason']})" if e.get("reason") else ""))
    if record.ended:
        click.echo(f"Ended by the game master at {record.ended.get('at')}.")


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("game")
@click.argument("words", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--force", is_flag=True, help="undo: take back a paid dividend too.")
@click.option("--reason", default="", help="pause, undo, end: the reason (told to everyone, kept in the game file).")
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="Act as if it were TIMESTAMP (ISO 8601; UTC when no offset), as for games run "
                   "with `pbem run --now`.")
@click.pass_context
def gm(ctx, game, words, force, reason, now):
    """A game master's COMMAND on GAME, as by mail: pause [REASON], resume,
    deadline DURATION|none, extend PLAYER DURATION, eject PLAYER, replace PLAYER
    NAME=ADDRESS, undo N, end, message TEXT, observe ADDRESS; "help" prints the
    guide, "secret" the game master's address and secret."""
    from filelock import Timeout

    from moderator.moderation import gm as gm_
    from moderator.moderation.cycle import Moderator, Unsent
    from moderator.store.gamefile import StoreError

    words = list(words)
    if "--force" in words:
        words.remove("--force")
        force = True
    if words == ["help"]:
        click.echo(gm_.gm_help())
        return
    moderator = Moderator(_config(ctx), **_clock(now))
    try:
        if words == ["secret"]:
            address, secret = moderator.gm_secret(game)
            click.echo(f"Game {game}: game master {address or '(none: set operator in the configuration)'}, "
                       f"secret {secret}")
            return
        if words and words[0].lower() == "undo" and force and "force" not in [w.lower() for w in words[1:3]]:
            words.insert(2, "force")
        if reason and words and words[0].lower() in ("pause", "undo", "end"):  # the commands with a reason
            words.append(reason)
        done = moderator.manage(game, " ".join(words))
    except Unsent as exc:  # saved: exit status 0, the mails wait in the spool
        done = exc.done
    except gm_.GmError as exc:
        raise click.ClickException(exc.text()) from None
    except (StoreError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    except Timeout:
        raise click.ClickException(f"game {game} is locked by a running cycle or command "
                                   f"({moderator.store.path(game)}.lock); nothing changed: try again") from None
    except OSError as exc:  # the save failed (a disk full): the file is as it was (written atomically)
        raise click.ClickException(f"game {game} could not be saved: {exc.strerror or exc}"
                                   f"{f' ({exc.filename})' if exc.filename else ''}; nothing changed") from None
    click.echo(done)
    _tell_waiting(moderator, game, "saved")


def _tell_waiting(moderator, game_id: str, what: str) -> None:
    """Say in one line on the standard error how many mails of ``game_id`` wait
    in the spool (not sent now: SMTP ``421``, a server down, a daily limit, a
    cycle running), after a command that saved its change (``what``: ``saved``,
    ``created``); nothing when none waits."""
    n = sum(1 for e in moderator.spool.entries() if e.meta.get("game") == game_id)
    if n:
        click.echo(f"Game {game_id}: {what}; {n} mail(s) of the game could not be sent now and wait in "
                   "the spool: the next `pbem run` sends them.", err=True)


@main.command()
@click.argument("game")
@click.pass_context
def rules(ctx, game):
    """Print the ruleset and options of GAME."""
    from moderator.moderation.cycle import rules_text

    click.echo(rules_text(game, _load(ctx, game).game))


@main.command()
@click.argument("game")
@click.option("--map", "map_file", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE.png", help="Also write a PNG map of the public view to FILE.png.")
@click.option("--now", "now", default=None, metavar="TIMESTAMP",
              help="Judge vacations under way as if it were TIMESTAMP (ISO 8601; UTC when no offset), "
                   "as for games run with `pbem run --now`.")
@click.pass_context
def show(ctx, game, map_file, now):
    """Print GAME's public position and log (no player's hand); whether it runs,
    is paused (since, by whom, why) or ended (when, why); whose move it is and
    the deadline in force (UTC); each seat's deadline, vacation under way and
    missed moves.  With --map, also write a picture of the board (the public
    view) to FILE.png."""
    from moderator.archive.listing import seat_text, summary
    from moderator.i18n import pad
    from moderator.store.gamefile import GameStore

    record = _load(ctx, game)
    s = summary(GameStore(_config(ctx, passwords=False).games_dir).read_data(game),
                _timestamp(now) if now is not None else None)
    g = record.game
    if map_file is not None:
        from moderator.render.board_map import render_map

        try:
            Path(map_file).write_bytes(render_map(g))
        except OSError as exc:
            raise click.ClickException(f"cannot write {map_file}: {exc.strerror or exc}") from None
    v = g.public_view()
    moving = v["phase"] == "play" and s["status"] in ("running", "paused")  # an ended game: nobody moves
    turn = f", turn {v['turn'] + 1}" if v["phase"] == "play" else ""
    turn += f", {v['to_move']} to move" if moving else ""
    click.echo(f"Game {game}: phase {v['phase']}{turn}, dividends {v['dividends_paid']}/{v['final_dividend']}")
    click.echo(_paused_line(record) or _status_line(s))
    for p in v["players"]:
        invested = ", ".join(f"{n} {c}" for c, n in p["invested"].items()) or "nothing"
        money = "hidden" if p["money"] is None else p["money"]
        click.echo(f"  {pad(p['name'], 14)} money {money!s:>6}  invested: {invested}")
        notes = dict(s["seats"].get(p["name"], {}))
        if notes.get("due") == s["deadline"]:
            notes.pop("due", None)  # the game's deadline in force, said above: only a seat's own is repeated
        notes = seat_text(notes, short=False)
        if notes:
            click.echo(f"  {pad('', 14)} {notes}")
    if v["standings"]:
        click.echo("Standings: " + g.standings_text())
    from moderator.render.events import english

    for line in english(v["log"][-10:]):
        click.echo(f"  - {line}")
    if map_file is not None:
        click.echo(f"Map written to {map_file}.")


def _paused_line(record) -> str | None:
    """The line of ``pbem show`` saying that the game master paused ``record``'s game:
    since when (UTC), by whom and why (its ``gm_log`` entry, when recorded), how
    to resume (``show_paused`` of templates/words/operator.txt); None when the game
    is not paused, or is over or ended (a pause then stops nothing)."""
    from moderator.archive.listing import short_time
    from moderator.render.words import word

    since = record.settings.get("paused")
    if not since or record.ended is not None or record.game.phase == "over":
        return None
    entry = next((e for e in reversed(record.gm_log)
                  if e.get("command") == "pause" and str(e.get("at")) == str(since)), {})
    return word("operator", "show_paused", game_id=record.id, since=short_time(since),
                by=entry.get("by") or "", reason=entry.get("reason") or "")


def _status_line(s: dict) -> str:
    """The line of ``pbem show`` under the headline of a game that is not paused
    (``s``: ``archive.listing.summary``): running (who is to move and the
    deadline in force, UTC), ended by the game master (when, by whom, why) or
    over (templates/words/operator.txt: ``show_running``, ``show_ended``,
    ``show_over``)."""
    from moderator.archive.listing import short_time
    from moderator.render.words import word

    if s["status"] == "ended":
        return word("operator", "show_ended", at=short_time(s["ended_at"]) if s["ended_at"] else "",
                    by=s["ended_by"], reason=s["ended"] or "")
    if s["status"] == "over":
        return word("operator", "show_over", winners=", ".join(s["winners"]))
    bots = bool(s["waiting"]) and all(s["seats"].get(n, {}).get("bot") for n in s["waiting"])
    return word("operator", "show_running", waiting=", ".join(s["waiting"]), initial=s["phase"] == "initial",
                deadline=short_time(s["deadline"]) if s["deadline"] else "", bot=bots)


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


@main.command("list")
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
    for line in lines:
        click.echo(line)
    for err in errors:
        click.echo(f"error: {err}", err=True)
    if not lines and not errors:
        click.echo("No games.")
    sys.exit(1 if errors else 0)


@main.command()
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, metavar="DIR",
              help="Folder of the site (created; updated in place).")
@click.option("--force", is_flag=True, help="Render every game, changed or not.")
@click.pass_context
def archive(ctx, out, force):
    """Write a static HTML site of every game into DIR (no server needed): an index,
    a page per game and per order, board pictures, statistics.  Only games changed
    since the last run are rendered again.  Never shows a hand, a secret or an address."""
    sys.exit(0 if _archive(ctx, out, force) else 1)


@main.command()
@click.argument("game")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--with-secrets", is_flag=True,
              help="Keep addresses, secrets, hands and decks (the file as pbem keeps it).")
@click.option("--out", "out", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE", help="Write to FILE instead of the standard output.")
@click.pass_context
def export(ctx, game, fmt, with_secrets, out):
    """Print GAME as one self-contained file in the game-file format
    (docs/game-file.md); without --with-secrets, addresses, secrets and every
    hidden card are removed (see docs/archive.md)."""
    from moderator.archive.export import dump, export_data
    from moderator.store.gamefile import GameStore, StoreError

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


@main.group()
def board():
    """Board files."""


@board.command("check")
@click.argument("file", type=click.Path(dir_okay=False))
def board_check(file):
    """Validate a board FILE; list every violated constraint."""
    from moderator.rules.board import check_board_file

    problems = check_board_file(file)
    errors = [p for p in problems if not p.startswith("warning")]
    for p in problems:
        click.echo(p)
    if errors:
        click.echo(f"{file}: {len(errors)} problem(s); the board cannot be used.", err=True)
        sys.exit(1)
    click.echo(f"{file}: the board is valid.")


@main.command()
@click.option("--dir", "directory", type=click.Path(file_okay=False), default="demo",
              show_default=True, help="Folder for the demo's games/ and mail/.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the game and the bots.")
def demo(directory, seed):
    """Play a 3-player game to the end with built-in players, by real mail files."""
    from moderator.demo import run_demo
    from moderator.mail.transport import TransportError

    d = Path(directory)
    gid = "demo"
    n = 1
    while (d / "games" / f"{gid}.yaml").exists():
        n += 1
        gid = f"demo-{n}"
    click.echo(f"Playing game {gid} in {d.absolute()} (3 built-in players; every order is a mail) ...")
    try:
        result = run_demo(d, seed=seed, game_id=gid)
    except (RuntimeError, ValueError, TransportError) as exc:
        raise click.ClickException(str(exc)) from None
    g = result["record"].game
    click.echo(f"The game is over after {len(g.history)} orders in {result['cycles']} moderator cycles.")
    click.echo("Final standings (millions of dollars):")
    for place, name, money in g.standings():
        click.echo(f"  {place}. {name:<10} {money}")
    click.echo(f"Game file:             {result['game_file']}")
    click.echo(f"Order mails (inbox):   {result['inbox']}  (handled ones move to its .processed/ folder)")
    click.echo(f"Moderator's mails:     {result['outbox']}")


@main.group()
def auth():
    """OAuth2 sign-in for the mail servers (imap/smtp auth: oauth2)."""


def _oauth(ctx: click.Context, provider: str | None = None):
    """``(settings, username)`` of the configuration's oauth section; a clear
    error when there is none or it names another provider."""
    config = _config(ctx)
    if config.oauth is None:
        raise click.ClickException(
            "the configuration has no oauth section: add one (provider, client_id, token_file; "
            "see docs/operations.md) and set auth: oauth2 for imap and smtp")
    if provider is not None and provider != config.oauth.provider:
        raise click.ClickException(f"the configuration's oauth.provider is {config.oauth.provider}, "
                                   f"not {provider}")
    server = next((s for s in (config.imap, config.smtp) if s is not None and s.auth == "oauth2"), None)
    return config.oauth, server.username if server is not None else None


def _when(moment) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "unknown"


@auth.command("login")
@click.argument("provider", type=click.Choice(["microsoft", "google", "generic"]))
@click.option("--port", type=click.IntRange(0, 65535), default=0,
              help="google: the loopback port the browser returns to (default: any free one).")
@click.pass_context
def auth_login(ctx, provider, port):
    """Sign in once and store the refresh token in the token file (mode 0600):
    microsoft and generic with a device code (a URL and a code to enter in any
    browser); google in a browser that returns to this machine (Google refuses
    its mail scope to device codes)."""
    from moderator.mail.oauth import OAuthError, browser_login, device_login

    settings, _ = _oauth(ctx, provider)
    try:
        if provider == "google":
            found = browser_login(settings, echo=click.echo, port=port)
        else:
            found = device_login(settings, echo=click.echo)
    except OAuthError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot write {settings.token_file}: {exc.strerror or exc}") from None
    who = f" as {found['account']}" if found["account"] else ""
    click.echo(f"Signed in{who}. The refresh token is in {settings.token_file} (mode 0600); "
               f"each cycle gets new access tokens with it.")


@auth.command("status")
@click.pass_context
def auth_status(ctx):
    """Show the stored sign-in and get a fresh access token with it (exit 1 when
    that fails)."""
    from moderator.mail.oauth import OAuthError, TokenSource

    settings, username = _oauth(ctx)
    source = TokenSource(settings, username)
    try:
        found = source.status()
    except OAuthError as exc:
        try:  # what a mail server said last, when the file says it
            last = source.load().get("last_login")
        except OAuthError:
            last = None
        said = ""
        if isinstance(last, dict) and not last.get("ok"):
            said = (f"\nLast login: {last.get('server')} refused the access token at "
                    f"{str(last.get('at', '')).replace('T', ' ')}: {last.get('said', '')}")
        raise click.ClickException(f"{exc}{said}") from None
    click.echo(f"{found['provider']} sign-in of {found['account'] or username or 'an unnamed account'} "
               f"in {settings.token_file}, made {_when(found['obtained'])}; "
               f"access token valid until {_when(found['expiry'])}.")
    last = found.get("last_login")
    if last is not None and last["ok"]:
        click.echo(f"Last login: {last['server']} accepted the access token at {_when(last['at'])}.")
    elif last is not None:
        click.echo(f"Last login: {last['server']} refused the access token at {_when(last['at'])}: "
                   f"{last['said']}" + ("" if last["said"].endswith(".") else "."))


def _clock(now: str | None) -> dict:
    """The ``Moderator`` keywords for ``--now TIMESTAMP``: ``{"clock": ...}`` fixed
    at that time, or ``{}`` (the wall clock) when ``now`` is None."""
    if now is None:
        return {}
    fixed = _timestamp(now)
    return {"clock": lambda: fixed}


def _timestamp(text: str):
    """``--now TIMESTAMP`` as an aware ``datetime``: ISO 8601, UTC when no offset;
    click.BadParameter otherwise."""
    from datetime import datetime, timezone

    try:
        fixed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not an ISO 8601 time, e.g. 2026-12-24T18:00:00+00:00",
                                 param_hint="--now") from None
    return fixed if fixed.tzinfo is not None else fixed.replace(tzinfo=timezone.utc)


@main.command()
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


@main.group()
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


@main.group()
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


@main.group()
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


@main.command()
@click.argument("game")
@click.pass_context
def restore(ctx, game):
    """Put GAME's handled and ignored mails back into the inbox, to be read again
    by the next cycle (after restoring its file from a backup)."""
    from moderator.admin import restore as put_back

    keys = _admin(lambda: put_back(_config(ctx), game))
    click.echo(f"{len(keys)} mail(s) of game {game} put back into the inbox; the next `pbem run` "
               "reads them (orders the game file has already are not applied again).")


@main.command()
@click.argument("game")
@click.pass_context
def forget(ctx, game):
    """Forget GAME, whose file was removed on purpose (its mail then goes to no game)."""
    from moderator.admin import forget as drop

    _admin(lambda: drop(_config(ctx, passwords=False), game))
    click.echo(f"Game {game} forgotten: mail for it is now mail for no game.")


@main.command()
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


if __name__ == "__main__":
    main()
