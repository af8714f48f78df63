"""`pbem show` and `pbem list` tell the truth about a game's clock (issue 23):
running, paused (since when, by whom, why) or ended (when, by whom, why); whose
move it is (never after the end); the deadline in force, in UTC; each seat's
vacation under way, own deadline and missed moves.

A timeline over two weeks: the players' mails go through the moderator's
cycles at set times (as `pbem run --now` runs them), the game master's commands
through `pbem gm --now`, and each look through `pbem show/list --now`.  Every
expected time is derived by hand from T0 (2026-12-01 12:00 UTC), the 72-hour
deadline and the documented rules (docs/game-file.md, `clock`: a wait starts
when the move before it was made; a vacation moves the deadline by its overlap
with the wait; a pause moves it by its length)."""
from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

import pbem
from test_deadlines import H, T0, Clocked

DAY = 24 * H


@pytest.fixture
def game(tmp_path, monkeypatch):
    """``(harness, cli)``: a 3-player game with 72-hour deadlines created at T0,
    and ``cli(*args)`` running pbem on its files as the user "carol"."""
    h = Clocked(tmp_path, settings={"deadline": 72 * 3600})
    c = h.config
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({
        "operator": c.operator, "games_dir": str(c.games_dir), "spool_dir": str(c.spool_dir),
        "maildir": {"inbox": str(c.maildir_inbox), "outbox": str(c.maildir_outbox)}}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOGNAME", "carol")
    runner = CliRunner()

    def cli(*args):
        r = runner.invoke(pbem.main, list(args), catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return r.stdout

    return h, cli


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("  ") if c.strip()]


def listed(cli, when, *flags) -> dict[str, str]:
    """``pbem list --now WHEN``'s one game row, by column name."""
    header, *rows = cli("list", "--now", when.isoformat(), *flags).splitlines()
    assert header.split() == ["GAME", "RULESET", "PLAYERS", "MOVE", "SINCE", "DEADLINE", "DIVIDENDS", "WINNER",
                              "STATUS", "SEATS"]
    (row,) = rows
    return dict(zip(header.split(), cells(row)))


def test_show_and_list_over_a_timeline_of_vacation_miss_pause_resume_and_end(game):
    h, cli = game
    # T0+2h: Cy takes 5 days of vacation (14:00 to 2026-12-06 14:00): the whole
    # vacation lies in the wait, so Cy's deadline is T0 + 72 h + 5 days
    h.mail("Cy", "vacation 5d")
    h.run(T0 + 2 * H)
    shown = cli("show", "ridge", "--now", (T0 + 3 * H).isoformat()).splitlines()
    assert shown[0] == "Game ridge: phase initial, dividends 0/4"
    assert shown[1] == ("Running: Ann, Bob, Cy to choose the initial investment; "
                        "deadline in force 2026-12-04 12:00 UTC.")
    seats = [line for line in shown if line.startswith("   ")]  # a seat's own clock, under its line
    assert seats == [" " * 17 + "due 2026-12-09 12:00 UTC; vacation until 2026-12-06 14:00 UTC"]
    assert shown[shown.index(seats[0]) - 1].startswith("  Cy ")
    row = listed(cli, T0 + 3 * H)
    assert (row["MOVE"], row["DEADLINE"], row["STATUS"], row["SEATS"]) == (
        "start: Ann, Bob, Cy", "2026-12-04 12:00", "running", "Cy: vacation until 2026-12-06 14:00")
    assert listed(cli, T0 + 6 * DAY)["SEATS"] == "-"  # the vacation is over by then
    # before it began (a look at an earlier --now, or the wall clock behind a game run with --now)
    assert listed(cli, T0 + H)["SEATS"] == "-"
    assert not [line for line in cli("show", "ridge", "--now", (T0 + H).isoformat()).splitlines()
                if "vacation" in line]

    # Ann and Bob choose; only Cy is waited for: the deadline in force is Cy's
    h.move("Ann")
    h.move("Bob")
    h.run(T0 + 4 * H)
    row = listed(cli, T0 + 5 * H)
    assert (row["MOVE"], row["DEADLINE"]) == ("start: Cy", "2026-12-09 12:00")
    # cycles every 12 hours, as cron runs them (a longer gap would be an outage,
    # which moves deadlines); Cy misses the deadline: the built-in player chooses
    # for Cy at the cycle of 2026-12-09 12:00, and the first turn's wait (Ann's)
    # starts then: due 2026-12-12 12:00
    for k in range(1, 17):
        h.run(T0 + k * 12 * H)
    missed = T0 + 8 * DAY
    assert h.load().player_by_name("Cy").missed == 1
    shown = cli("show", "ridge", "--now", (missed + H).isoformat()).splitlines()
    assert shown[0] == "Game ridge: phase play, turn 1, Ann to move, dividends 0/4"
    assert shown[1] == "Running: Ann to move; deadline in force 2026-12-12 12:00 UTC."
    assert [line.strip() for line in shown if line.startswith("   ")] == [
        "missed 1 move(s) in a row (3 abandon the seat)"]
    row = listed(cli, missed + H)
    assert (row["MOVE"], row["DEADLINE"], row["STATUS"], row["SEATS"]) == (
        "Ann", "2026-12-12 12:00", "running", "Cy: missed 1 of 3")

    # the game master pauses for a day: no deadline while paused; then resumes
    cli("gm", "ridge", "pause", "--reason", "Ann travels", "--now", (missed + DAY).isoformat())
    shown = cli("show", "ridge", "--now", (missed + DAY + H).isoformat()).splitlines()
    assert shown[0] == "Game ridge: phase play, turn 1, Ann to move, dividends 0/4"
    assert shown[1].startswith("Paused since 2026-12-10 12:00 UTC by command line (carol) (Ann travels): "
                               "no deadline runs")
    row = listed(cli, missed + DAY + H)
    assert (row["MOVE"], row["DEADLINE"], row["STATUS"]) == (
        "Ann", "paused 2026-12-10 12:00", "paused since 2026-12-10 12:00 by command line (carol) (Ann travels)")
    cli("gm", "ridge", "resume", "--now", (missed + 2 * DAY).isoformat())
    shown = cli("show", "ridge", "--now", (missed + 2 * DAY).isoformat()).splitlines()
    assert shown[1] == "Running: Ann to move; deadline in force 2026-12-13 12:00 UTC."  # moved by the day
    assert listed(cli, missed + 2 * DAY)["DEADLINE"] == "2026-12-13 12:00"

    # the game master ends the game: nobody is to move, no deadline
    cli("gm", "ridge", "end", "--reason", "we stop here", "--now", "2026-12-12T08:00:00+00:00")
    shown = cli("show", "ridge", "--now", "2026-12-12T09:00:00+00:00").splitlines()
    assert shown[0] == "Game ridge: phase play, turn 1, dividends 0/4"
    assert shown[1] == ("Ended by the game master at 2026-12-12 08:00 UTC (command line (carol)): we stop "
                        "here. Nobody is to move: the game takes no more orders, and no deadline runs.")
    assert not any(f"{name} to move" in line for line in shown for name in ("Ann", "Bob", "Cy"))
    assert not any("due " in line for line in shown)
    row = listed(cli, T0 + 12 * DAY, "--finished")
    assert (row["MOVE"], row["DEADLINE"], row["STATUS"], row["SEATS"]) == (
        "ended (we stop here)", "-", "ended 2026-12-12 08:00 by command line (carol) (we stop here)",
        "Cy: missed 1 of 3")
    assert cli("list", "--active") == "No games.\n"


def test_show_of_a_finished_game_says_over_and_who_won(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    fixture = Path(__file__).parent / "fixtures" / "games" / "v1" / "v1-first-3p-finished.yaml"
    (tmp_path / "games").mkdir()
    shutil.copy(fixture, tmp_path / "games")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(pbem.main, ["show", "v1-first-3p-finished"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Game v1-first-3p-finished: phase over") and "to move" not in lines[0]
    assert lines[1] == "Over: the final dividend is paid; won by Cy. Nobody is to move."


def test_show_says_the_built_in_player_moves_next_for_an_ejected_seat_on_move(game):
    """Ann is to move and is ejected: the built-in player has the seat and moves
    in the next cycle; no deadline is shown for it (it has none)."""
    h, cli = game
    for name in ("Ann", "Bob", "Cy"):
        h.move(name)
    h.run(T0 + H)
    assert h.load().game.public_view()["to_move"] == "Ann"
    cli("gm", "ridge", "eject", "Ann", "--now", (T0 + 2 * H).isoformat())
    shown = cli("show", "ridge", "--now", (T0 + 2 * H).isoformat()).splitlines()
    assert shown[1] == ("Running: Ann to move; the built-in player has the seat and moves in the next "
                        "`pbem run`.")
    assert shown[shown.index(next(l for l in shown if l.startswith("  Ann "))) + 1].strip() == \
        "built-in player; resigned or ejected"
    row = listed(cli, T0 + 2 * H)
    assert (row["MOVE"], row["DEADLINE"], row["SEATS"]) == ("Ann", "-", "Ann: built-in player; resigned or ejected")
    h.run(T0 + 3 * H)  # the built-in player moves for Ann; Bob's wait starts then: due T0 + 3 h + 72 h
    shown = cli("show", "ridge", "--now", (T0 + 3 * H).isoformat()).splitlines()
    assert shown[1] == "Running: Bob to move; deadline in force 2026-12-04 15:00 UTC."
    row = listed(cli, T0 + 3 * H)  # SINCE: the instant the deadline in force counts from
    assert (row["SINCE"], row["DEADLINE"]) == ("2026-12-01 15:00", "2026-12-04 15:00")


def test_list_since_is_where_the_deadline_counts_from_after_a_replace(game):
    """Cy's wait starts at T0 (created); the game master replaces Cy by Dan at
    T0 + 5 h: the new player's deadline counts from the replace, and SINCE says so."""
    h, cli = game
    h.move("Ann")
    h.move("Bob")
    h.run(T0 + H)
    cli("gm", "ridge", "replace", "Cy", "Dan=dan@example.org", "--now", (T0 + 5 * H).isoformat())
    row = listed(cli, T0 + 6 * H)
    assert (row["MOVE"], row["SINCE"], row["DEADLINE"]) == ("start: Cy", "2026-12-01 17:00", "2026-12-04 17:00")
