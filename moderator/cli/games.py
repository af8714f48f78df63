"""``pbem new``, ``run``, ``replay``, ``gm``, ``rules``, ``show``, ``board check``,
``demo``: a game and its moderation (``moderator/moderation/``, ``rules/``)."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

import click

from ..rules.options import OPTION_TABLE, OPTIONS, RULESETS
from . import _clock, _config, _load, _timestamp
from .archive import _archive


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


def press_options(command):
    """``--press none|public|private`` and ``--press-archive never|after-end|always``
    (the game's press rule, ``moderation/press.py``), for ``pbem new`` and ``pbem
    open`` (``_setup_options``); read them with ``press_settings``."""
    command = click.option("--press-archive", "press_archive", type=click.Choice(["never", "after-end", "always"]),
                           default="never", show_default=True,
                           help="When the archive site shows the players' messages.")(command)
    return click.option("--press", "press", type=click.Choice(["none", "public", "private"]), default="private",
                        show_default=True,
                        help="Messages between players: none, public (only 'to all'), private ('to NAME' too).")(
        command)


def press_settings(values: dict) -> dict:
    """The settings keys ``press``, ``press_archive`` from the parameters of
    ``press_options`` (taken out of ``values``)."""
    from moderator.moderation.press import check_press_settings

    return check_press_settings(values.pop("press", None), values.pop("press_archive", None))


def _setup_options(command):
    """The options of a new game's setup shared by ``pbem new`` and ``pbem open``
    (read by ``_setup_values``): seed, ruleset, board, the clock's policies, the
    game master, the game's language, observers, ``--now`` and one flag per rule
    option."""
    for decorator in reversed([
        click.option("--seed", type=int, default=None, help="Seed of the game's shuffles (default: random)."),
        click.option("--ruleset", default="first-edition", show_default=True, help=" or ".join(RULESETS) + "."),
        click.option("--board", "board_path", type=click.Path(exists=True, dir_okay=False), default=None,
                     help="A board file (default: the shipped North American board)."),
        click.option("--deadline", default="72h", show_default=True,
                     help="Time one move may take, from the mail that asks for it: minutes, hours "
                          "or days (90m, 48h, 3d), or none."),
        click.option("--on-missed", type=click.Choice(["bot", "wait"]), default="bot", show_default=True,
                     help="At the deadline: the built-in player moves (bot), or the game waits and "
                          "the game master is told (wait)."),
        click.option("--grace", default="0", show_default=True,
                     help="Time after the deadline during which an order that reached the mailbox is still "
                          "taken (and the missed move waits): minutes, hours or days (10m, 1h), or 0."),
        click.option("--abandon-after", type=click.IntRange(min=1), default=3, show_default=True,
                     help="Missed moves in a row after which the seat is abandoned (the built-in "
                          "player keeps it; the game master is asked for a replacement)."),
        click.option("--substitutes", type=click.Choice(["auto", "gm", "none"]), default="auto", show_default=True,
                     help="A seat abandoned, ejected or resigned: offered to the substitute pool, the first "
                          "volunteer to reply takes it (auto), or the game master approves them (gm); none: "
                          "the game master finds a replacement (replace)."),
        click.option("--gm", "gm", default=None, metavar="ADDRESS",
                     help="The game master's address (default: the configuration's operator)."),
        click.option("--language", "language", default="en", show_default=True, metavar="CODE",
                     help="The game's language: en, es, de, cs or zh (players without their own read it)."),
        click.option("--observer", "observers", multiple=True, metavar="ADDRESS",
                     help="An address that gets the public status mails (repeatable)."),
        click.option("--now", "now", default=None, metavar="TIMESTAMP",
                     help="Create the game as if it were TIMESTAMP (ISO 8601; UTC when no offset): the "
                          "first deadline runs from then, as for games run with `pbem run --now`."),
    ]):
        command = decorator(command)
    return press_options(_option_flags(command))


def _setup_values(ruleset, deadline, on_missed, grace, abandon_after, language, seed, flags):
    """``(settings, options, seed)`` of the shared setup options (``_setup_options``):
    the clock settings with the game's language, the rule options, the seed
    (random when not given).  click.BadParameter for a bad value."""
    from moderator.moderation.deadlines import parse_duration
    from moderator.moderation.language import check_language

    if ruleset not in RULESETS:
        raise click.BadParameter(f"{ruleset!r}; choose {' or '.join(RULESETS)}", param_hint="--ruleset")
    try:
        seconds = parse_duration(deadline, allow_none=True)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--deadline") from None
    try:
        grace_seconds = 0 if grace.strip() in ("0", "none") else parse_duration(grace)
    except ValueError as exc:
        raise click.BadParameter(f"{exc}, or 0", param_hint="--grace") from None
    try:
        language = check_language(language)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--language") from None
    settings = {"deadline": seconds, "on_missed": on_missed, "abandon_after": abandon_after, "language": language,
                "grace": grace_seconds, **press_settings(flags)}
    options = {k: bool(flags.get(k)) for k in OPTIONS}
    if seed is None:
        import secrets

        seed = secrets.randbelow(2**31)
    return settings, options, seed


@click.command()
@click.argument("game")
@click.option("--player", "players", multiple=True, required=True,
              help="A player as NAME=ADDRESS, in turn order; 2-6 of them.")
@click.option("--bot", "bots", multiple=True, metavar="NAME",
              help="A seat played by the built-in player from the start (after the players "
                   "in turn order); repeatable. One --player and bots: a solo game.")
@click.option("--player-language", "player_languages", multiple=True, metavar="NAME=CODE",
              help="A player's own language, e.g. Ana=es (repeatable; they may change it by mail: "
                   "'language CODE').")
@_setup_options
@click.pass_context
def new(ctx, game, players, seed, ruleset, board_path, bots, deadline, on_missed, grace, abandon_after, gm,
        observers, language, player_languages, now, substitutes, **flags):
    """Create GAME and mail every player a welcome with their secret and hand."""
    from moderator.mail.transport import TransportError
    from moderator.moderation.cycle import Moderator, Unsent
    from moderator.moderation.language import check_language

    parsed = [_parse_player(p) for p in players]
    settings, options, seed = _setup_values(ruleset, deadline, on_missed, grace, abandon_after, language, seed,
                                            flags)
    settings["substitutes"] = substitutes  # kept in the game file when not auto (format 6)
    languages = {}
    for item in player_languages:
        name, sep, code = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{item!r}: write NAME=CODE, e.g. Ana=es", param_hint="--player-language")
        try:
            languages[name.strip()] = check_language(code)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--player-language") from None
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


@click.command()
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
    if now is not None:
        _not_before_last_cycle(_config(ctx), _timestamp(now))
    # with --loop the IMAP and SMTP connections are kept from one cycle to the next
    moderator = Moderator(_config(ctx), keep_open=loop, **_clock(now))
    from moderator.runtime import tune_gc

    tune_gc()  # young collections less often (moderator/runtime.py)
    site = SiteSchedule()
    while True:
        report = moderator.run_cycle()
        click.echo(report.summary())
        for err in report.errors:
            click.echo(f"error: {err}", err=True)
        if not loop:
            archived = _archive(ctx, archive_dir) if archive_dir is not None else True
            sys.exit(0 if report.ok and archived else 1)
        if archive_dir is not None and site.due(moderator.saves) and not site.building():
            # off the path of an order: mail that comes within SiteSchedule.QUIET s
            # is handled first (the site waits, at most SiteSchedule.LATEST s); the
            # site is built by a child process at a lower priority
            if not site.overdue() and moderator.wait_for_mail(SiteSchedule.QUIET) == "mail":
                continue
            site.build(lambda: _archive(ctx, archive_dir), moderator.saves)
        # IMAP IDLE where the server offers it (wakes on new mail), else a sleep
        moderator.wait_for_mail(interval)


def _not_before_last_cycle(config, now) -> None:
    """Refuse ``--now`` earlier than the last successful cycle (click.BadParameter,
    exit status 2): the game clocks never run back (a deadline already passed, a
    reminder already sent, lateness judged by arrival), so a cycle "in the past"
    would print deadlines that are not true."""
    from moderator.admin import last_cycle

    last = last_cycle(config)
    if last is not None and now < last:
        raise click.BadParameter(
            f"{now.isoformat()} is before the last cycle ({last.isoformat()}); the game clocks "
            "never run back: give a time at or after it", param_hint="--now")


class SiteSchedule:
    """When ``pbem run --loop --archive DIR`` brings the site up to date: after
    a cycle that saved a game (``Moderator.saves`` changed) once no new mail
    came for ``QUIET`` seconds, and at the latest ``LATEST`` seconds after the
    last build (also when nothing was saved here: a game changed by ``pbem gm``
    in another process), so that rendering pages never delays the answer to an
    order that is waiting (``benchmarks/bench_load.py``).  The first cycle
    builds it.  ``build`` runs the build in a child process (forked, at
    ``NICE`` lower priority: the site's rendering never holds up a cycle, on
    one core or two); the next build starts only once it has finished.
    Times from ``time.monotonic`` (seconds)."""

    QUIET = 2.0
    LATEST = 300.0
    NICE = 10

    def __init__(self) -> None:
        self.saves: int | None = None  # at the last build (None: not built yet)
        self.at = time.monotonic()
        self.child = None  # the multiprocessing.Process building the site

    def building(self) -> bool:
        """Whether a build started by ``build`` is still running."""
        if self.child is None:
            return False
        if self.child.is_alive():
            return True
        self.child.join()
        self.child = None
        return False

    def build(self, make: Callable[[], object], saves: int) -> None:
        """Start ``make`` (the site's build, which prints its own report) in a
        forked child process at ``NICE`` lower priority, and note the build made
        when the moderator had saved ``saves`` game files.  Where processes
        cannot be forked, ``make`` runs here."""
        import multiprocessing

        if "fork" not in multiprocessing.get_all_start_methods():
            make()
        else:
            def child() -> None:
                try:
                    os.nice(self.NICE)
                except OSError:
                    pass
                make()

            self.child = multiprocessing.get_context("fork").Process(target=child, daemon=True)
            self.child.start()
        self.built(saves)

    def due(self, saves: int) -> bool:
        """Whether the site is out of date: a save since the last build, or
        ``LATEST`` seconds since it."""
        return self.saves is None or saves != self.saves or self.overdue()

    def overdue(self) -> bool:
        """Whether the last build (or the start) is ``LATEST`` seconds ago, or
        none was made yet: build now, even while mail keeps coming."""
        return self.saves is None or time.monotonic() - self.at >= self.LATEST

    def built(self, saves: int) -> None:
        """Note a build made now, when the moderator had saved ``saves`` game files."""
        self.saves, self.at = saves, time.monotonic()


@click.command()
@click.argument("game")
@click.pass_context
def replay(ctx, game):
    """Replay GAME's seed + history and compare with the recorded state."""
    record = _load(ctx, game)
    click.echo(f"Game {game}: {len(record.history)} orders replayed; the state matches the file.")
    for e in record.gm_log:
        # a resignation and a mail of refused press are the player's (gm_log keeps both)
        who = "player" if e.get("command") in ("resign", "press") else "game master"
        if e.get("by") == "substitute pool":
            who = "substitute pool"  # a volunteer's take (moderation/pool.py)
        elif str(e.get("by", "")).startswith("proposal "):
            who = "players"  # a proposal every player asked accepted (moderation/proposals.py)
        click.echo(f"  {who}: {e.get('at', '?')} {e.get('by', '?')}: {e.get('command', '?')}"
                   + (f" ({e['reason']})" if e.get("reason") else ""))
    from moderator.moderation.pool import holders_lines

    held = holders_lines(record)  # who played which moves of a seat that changed hands
    if held:
        click.echo("Seats that changed hands:")
        for line in held:
            click.echo(line)
    if record.ended:
        by = str(record.ended.get("by") or "")
        click.echo(f"Ended by the players ({by}) at {record.ended.get('at')}." if by.startswith("proposal ")
                   else f"Ended by the game master at {record.ended.get('at')}.")


@click.command(context_settings={"ignore_unknown_options": True})
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
    NAME=ADDRESS, undo N, end, message TEXT, observe ADDRESS, mute PLAYER, unmute
    PLAYER; "help" prints the guide, "secret" the game master's address and secret."""
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


@click.command()
@click.argument("game")
@click.pass_context
def rules(ctx, game):
    """Print the ruleset and options of GAME."""
    from moderator.moderation.cycle import rules_text

    record = _load(ctx, game)
    click.echo(rules_text(game, record.game, record))


@click.command()
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

    from moderator.moderation.signup import open_description

    config = _config(ctx, passwords=False)
    opened = None if GameStore(config.games_dir).exists(game) else open_description(config, game)
    if opened is not None:  # open for sign-up, not yet started: no game file
        click.echo("\n".join(opened))
        return
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
    for line in _bank_lines(config, record, _timestamp(now) if now is not None else None):
        click.echo(line)
    from moderator.render.events import english

    for line in english(v["log"][-10:]):
        click.echo(f"  - {line}")
    if map_file is not None:
        click.echo(f"Map written to {map_file}.")


def _bank_lines(config, record, now) -> list[str]:
    """``pbem show``'s line of the seats' vacation banks (``moderation.people.bank``:
    across each person's games, from their game files and the ledger), [] when
    there is no bookkeeping database.  ``now``: default the wall clock."""
    from datetime import datetime, timezone

    from moderator.moderation.people import bank
    from moderator.render.when import format_duration
    from moderator.store.bookkeeping import Bookkeeping, BookkeepingError
    from moderator.store.gamefile import GameStore, StoreError

    try:
        bk = Bookkeeping.in_spool(config.spool_dir, readonly=True)
    except BookkeepingError:
        return []
    store = GameStore(config.games_dir)
    now = now or datetime.now(timezone.utc)
    parts = []
    with bk:
        for p in record.players:
            if not p.address:
                continue
            games = []
            for ref in bk.games_of(p.address):
                try:
                    games.append(store.read_data(ref.game_id))
                except StoreError:
                    continue
            b = bank(bk, games, p.address, now)
            parts.append(f"{p.name} {format_duration(b.left)} left ({format_duration(b.earned)} earned, "
                         f"{format_duration(b.spent)} spent)")
    return ["Vacation banks (across each person's games): " + "; ".join(parts)] if parts else []


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


@click.group()
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


@click.command()
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
    click.echo(f"Opening game {gid} in {d.absolute()}: 3 built-in players join it by mail ('join {gid}', "
               "'confirm' in reply), then play it (every order is a mail) ...")
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
