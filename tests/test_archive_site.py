"""The archive: ``pbem list``, the static site of ``pbem archive`` and ``pbem export``.

The site is built once from the frozen game files of ``tests/fixtures/games/v1``
(finished and running games) and checked:

* over the files, with Python: every page is valid HTML (html5lib's strict parser),
  every link and image (``href``/``src``) resolves to a file relative to its page,
  and no page holds a player's secret, address or the hand of a running game;
* in a real headless browser (Debian's ``chromium``; the tests are skipped without
  it): every page of the site is loaded, in a 390 px wide frame of a probe page
  (``--dump-dom`` of the probe; the probe writes what it measured into the DOM):
  no console message (errors are logged by ``--enable-logging=stderr``), no broken
  image, nothing wider than 390 px outside the horizontally scrolling tables;
  the index's sort script works; a screenshot at 390 x 844 is taken.
"""
from __future__ import annotations

import json
import re
import copy
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from click.testing import CliRunner

import pbem
from moderator.archive.site import build_site
from moderator.store.gamefile import GameStore, migrate
from browser import needs_chromium, run_chromium

html5lib = pytest.importorskip("html5lib")

FIXTURES = Path(__file__).parent / "fixtures" / "games" / "v1"

LIST_ALL = """\
GAME                  RULESET         PLAYERS                 MOVE  SINCE             DEADLINE  DIVIDENDS  WINNER              STATUS   SEATS
v1-custom-board-3p    first-edition   Ann, Bob, Cy            Cy    2026-11-30 12:00  -         2/4        -                   running  -
v1-first-3p-finished  first-edition   Ann, Bob, Cy            over  2026-11-30 12:00  -         4/4        Cy                  over     -
v1-mid-game-5p        second-edition  Ann, Bob, Cy, Dee, Eve  Eve   2026-11-30 12:00  -         2/4        -                   running  -
v1-second-options-4p  second-edition  Ann, Bob, Cy, Dee       over  2026-11-30 12:00  -         4/4        Dee                 over     -
v1-two-player         first-edition   Ann, Bob                over  2026-11-30 12:00  -         3/3        (imaginary player)  over     -
"""


def fixture_data() -> dict[str, dict]:
    return {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.yaml"))}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """``(games_dir, site_dir, first report)`` of a site built from the fixtures."""
    root = tmp_path_factory.mktemp("archive")
    games = root / "games"
    shutil.copytree(FIXTURES, games)
    out = root / "site"
    report = build_site(GameStore(games), out)
    return games, out, report


def pages(out: Path) -> list[Path]:
    return sorted(out.rglob("*.html"))


# ------------------------------------------------------------------ pbem list
@pytest.fixture
def cli(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES, tmp_path / "games")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(pbem.main, list(args), catch_exceptions=False)

    return invoke


def test_list_exact_lines(cli):
    r = cli("list")
    assert r.exit_code == 0, r.output
    assert r.output == LIST_ALL
    lines = LIST_ALL.splitlines()
    r = cli("list", "--active")
    assert r.exit_code == 0
    assert [line.split()[0] for line in r.output.splitlines()] == ["GAME", "v1-custom-board-3p", "v1-mid-game-5p"]
    r = cli("list", "--finished")
    assert [line.split()[0] for line in r.output.splitlines()] == [
        "GAME", "v1-first-3p-finished", "v1-second-options-4p", "v1-two-player"]
    assert len(lines) == 6


def test_list_uses_no_replay(cli, monkeypatch):
    import moderator.store.gamefile as gamefile

    def no(*a, **k):
        raise AssertionError("pbem list must not replay")

    monkeypatch.setattr(gamefile, "replay", no)
    monkeypatch.setattr(gamefile.GameStore, "load", no)
    assert cli("list").output == LIST_ALL


def test_list_no_games(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(pbem.main, ["list"])
    assert r.exit_code == 0 and r.output == "No games.\n"


# ------------------------------------------------------------------ the site: files
def test_site_layout(site):
    games, out, report = site
    assert sorted(report.rendered) == sorted(fixture_data()) and not report.errors
    assert (out / "index.html").is_file() and (out / "stats.html").is_file()
    assert (out / "style.css").is_file()
    for gid, data in fixture_data().items():
        gdir = out / "games" / gid
        n = len(data["history"])
        assert (gdir / "index.html").is_file()
        assert sorted(gdir.glob("move-*.html")) == sorted(gdir / f"move-{i}.html" for i in range(1, n + 1))
        dividends = data["state"]["dividends_paid"]
        assert sorted(p.name for p in gdir.glob("*.png")) == sorted(
            ["end.png"] + [f"dividend-{i}.png" for i in range(1, dividends + 1)])
        assert (gdir / "end.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_page_is_valid_html(site):
    _, out, _ = site
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    checked = 0
    for page in pages(out):
        try:
            parser.parse(page.read_bytes())
        except html5lib.html5parser.ParseError as exc:
            pytest.fail(f"{page.relative_to(out)}: {exc}")
        checked += 1
    assert checked > 200


def test_every_link_and_image_resolves(site):
    _, out, _ = site
    seen = 0
    for page in pages(out):
        tree = html5lib.parse(page.read_bytes(), namespaceHTMLElements=False)
        for el in tree.iter():
            for attr in ("href", "src"):
                ref = el.get(attr)
                if ref is None:
                    continue
                parts = urlsplit(ref)
                assert not parts.scheme and not parts.netloc, f"{page}: external reference {ref}"
                if not parts.path:
                    continue  # a fragment of the page itself
                target = (page.parent / unquote(parts.path)).resolve()
                assert target.is_file(), f"{page.relative_to(out)}: {attr}={ref} does not resolve"
                assert out.resolve() in target.parents, f"{page}: {ref} leaves the site"
                if parts.fragment:
                    ids = {e.get("id") for e in html5lib.parse(target.read_bytes(),
                                                               namespaceHTMLElements=False).iter()}
                    assert parts.fragment in ids, f"{page}: {ref}: no such anchor"
                seen += 1
    assert seen > 1000


def _hand_texts(cards: list[str]) -> list[str]:
    """The ways a list of cards could be written in a page."""
    return [", ".join(cards), " ".join(cards), json.dumps(cards), str(cards), ",".join(cards)]


def test_no_secret_hand_or_address_in_any_page(site):
    _, out, _ = site
    text = "\n".join(p.read_text(encoding="utf-8") for p in out.rglob("*") if p.suffix in (".html", ".json"))
    assert "@" not in text  # no address, no Message-ID
    for gid, data in fixture_data().items():
        for p in data["players"]:
            assert p["secret"] not in text, (gid, p["name"], "secret")
            assert p["address"] not in text, (gid, p["name"], "address")
        state = data["state"]
        for h in data["history"]:
            swap = re.search(r"; swap (\S+)", h["order"])
            if swap:  # the share returned in an UP swap is the player's secret
                assert h["order"] not in text
        if state["phase"] == "over":
            continue
        for key in ("track_hands", "share_hands"):
            for name, cards in state[key].items():
                if len(cards) < 2:
                    continue  # a single card name is in every page
                for form in _hand_texts(cards) + _hand_texts(sorted(cards)):
                    assert form not in text, (gid, key, name, form)


def test_money_hidden_in_running_hidden_money_game(tmp_path):
    """A running game with option hidden_money shows no money and no amounts."""
    from moderator.rules.notation import parse_action  # noqa: F401 - the engine is importable
    from moderator.store.gamefile import GameRecord, Player
    from moderator.rules.engine import Game
    from moderator.rules.board import Board

    g = Game.new(Board.default(), ["Ann", "Bob", "Cy"], 5, "first-edition",
                 {"hidden_money": True})
    rec = GameRecord("hidden", g, [Player(n, f"{n.lower()}@example.org", "abcdefgh") for n in g.players],
                     "default", created="2026-11-30T12:00:00+00:00")
    import random

    rng = random.Random(3)
    while g.dividends_paid < 1:
        p = g.waiting_for()[0]
        rec.apply(p, g.random_action(p, rng), None, "2026-11-30T12:00:00+00:00")
    assert g.phase == "play" and g.money and any(g.money.values())
    store = GameStore(tmp_path / "games")
    store.save(rec)
    out = tmp_path / "site"
    build_site(store, out)
    page = (out / "games" / "hidden" / "index.html").read_text(encoding="utf-8")
    assert "hidden" in page and "amounts stay hidden" in page
    tree = html5lib.parse(page, namespaceHTMLElements=False)
    cells = [("".join(td.itertext())).strip() for td in tree.iter("td")]
    for name, money in g.money.items():
        assert f"{name} {money}" not in page
    assert "hidden" in cells


def test_incremental_run_renders_only_the_changed_game(tmp_path):
    games = tmp_path / "games"
    shutil.copytree(FIXTURES, games)
    out = tmp_path / "site"
    first = build_site(GameStore(games), out)
    assert len(first.rendered) == 5
    stamps = {p: p.stat().st_mtime_ns for p in (out / "games").rglob("*")}
    again = build_site(GameStore(games), out)
    assert again.rendered == [] and len(again.unchanged) == 5
    f = games / "v1-two-player.yaml"
    data = yaml.safe_load(f.read_text())
    data["created"] = "2026-11-29T08:00:00+00:00"
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    third = build_site(GameStore(games), out)
    assert third.rendered == ["v1-two-player"] and len(third.unchanged) == 4
    for p, ns in stamps.items():
        if "v1-two-player" not in p.parts:
            assert p.stat().st_mtime_ns == ns, p
    assert "2026-11-29 08:00" in (out / "index.html").read_text()
    (games / "v1-mid-game-5p.yaml").unlink()
    fourth = build_site(GameStore(games), out)
    assert fourth.removed == ["v1-mid-game-5p"] and fourth.rendered == []
    assert not (out / "games" / "v1-mid-game-5p").exists()
    assert "v1-mid-game-5p" not in (out / "index.html").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["games"]) == sorted(set(fixture_data()) - {"v1-mid-game-5p"})


def test_archive_command_and_run_option(cli, tmp_path):
    r = cli("archive", "--out", "site")
    assert r.exit_code == 0, r.output
    assert "5 game(s) rendered" in r.output
    r = cli("archive", "--out", "site")
    assert "0 game(s) rendered, 5 unchanged" in r.output
    r = cli("run", "--archive", "site")
    assert r.exit_code == 0, r.output
    assert "0 game(s) rendered, 5 unchanged" in r.output


def test_statistics_page(site):
    _, out, _ = site
    tree = html5lib.parse((out / "stats.html").read_bytes(), namespaceHTMLElements=False)
    rows = [["".join(td.itertext()).strip() for td in tr.iter("td")] for tr in tree.iter("tr")]
    rows = [r for r in rows if r]
    # people: name, games, finished, wins, average rank, moves in time, missed, median time to move
    by_name = {r[0]: r for r in rows if len(r) == 8}
    assert set(by_name) == {"Ann", "Bob", "Cy", "Dee", "Eve"}
    assert by_name["Ann"][1:5] == ["5", "3", "0", "2.33"]  # ranks 2, 3, 2 (behind the imaginary player)
    assert by_name["Cy"][3] == "1" and by_name["Dee"][3] == "1"
    assert by_name["Eve"][1:7] == ["1", "0", "0", "–", "8", "0"]
    assert not any("@" in "".join(r) for r in rows)  # never an address
    companies = [r for r in rows if len(r) == 3]
    assert len(companies) == 10
    total = sum(len(d["state"]["payouts"]) for d in fixture_data().values())
    assert all(r[1].endswith(f" of {total}") for r in companies)


# ------------------------------------------------------------------ export
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_with_secrets_round_trips(cli, tmp_path, fmt):
    for gid, data in fixture_data().items():
        r = cli("export", gid, "--format", fmt, "--with-secrets")
        assert r.exit_code == 0, r.output
        back = json.loads(r.output) if fmt == "json" else yaml.safe_load(r.output)
        assert back == migrate(copy.deepcopy(data))  # exported in the current format
        other = tmp_path / f"back-{fmt}"
        other.mkdir(exist_ok=True)
        (other / f"{gid}.yaml").write_text(r.output, encoding="utf-8")
        record = GameStore(other).load(gid)  # full replay and comparison
        assert record.game.to_dict() == data["state"]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_without_secrets(cli, tmp_path, fmt):
    for gid, data in fixture_data().items():
        r = cli("export", gid, "--format", fmt)
        assert r.exit_code == 0, r.output
        assert "@" not in r.output
        for p in data["players"]:
            assert p["secret"] not in r.output
        back = json.loads(r.output) if fmt == "json" else yaml.safe_load(r.output)
        state = back["state"]
        assert all(v == [] for v in state["track_hands"].values())
        assert all(v == [] for v in state["share_hands"].values())
        assert state["stack"] == [] and state["track_deck"] == []
        assert back["exported"]["secrets"] is False
        if data["state"]["phase"] == "over":
            assert back["exported"]["replayable"] is True
            other = tmp_path / f"public-{fmt}"
            other.mkdir(exist_ok=True)
            (other / f"{gid}.yaml").write_text(r.output, encoding="utf-8")
            record = GameStore(other).load(gid, check=False)
            assert record.game.money == data["state"]["money"]
            assert [h["order"] for h in record.history] == [h["order"] for h in data["history"]]
        else:
            assert back["seed"] is None and back["exported"]["replayable"] is False


def test_export_to_file_and_unknown_game(cli, tmp_path):
    r = cli("export", "v1-two-player", "--out", "two.json", "--format", "json")
    assert r.exit_code == 0 and r.output == ""
    assert json.loads((tmp_path / "two.json").read_text())["game"] == "v1-two-player"
    r = cli("export", "nosuch")
    assert r.exit_code == 1 and "no game" in r.output


# ------------------------------------------------------------------ the site in a browser

PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>probe</title></head><body style="margin:0">
<div id="frames">%(frames)s</div>
<script>
var results = {};
function measure(frame) {
  var r = {};
  try {
    var doc = frame.contentDocument, w = frame.contentWindow;
    r.viewport = w.innerWidth;
    r.scrollWidth = doc.documentElement.scrollWidth;
    r.tooWide = Array.prototype.filter.call(doc.querySelectorAll("body *"), function (e) {
      return e.getBoundingClientRect().right > w.innerWidth + 0.5 && !e.closest(".wide");
    }).map(function (e) { return e.tagName; });
    r.images = doc.images.length;
    r.broken = Array.prototype.filter.call(doc.images, function (i) {
      return !i.complete || i.naturalWidth === 0; }).map(function (i) { return i.src; });
    var button = doc.querySelector("th button[data-key=id]");
    if (button) {
      button.click();
      r.sortedById = Array.prototype.map.call(doc.querySelectorAll("tbody tr"), function (t) {
        return t.getAttribute("data-id"); });
      button.click();
      r.sortedByIdDesc = Array.prototype.map.call(doc.querySelectorAll("tbody tr"), function (t) {
        return t.getAttribute("data-id"); });
    }
  } catch (e) { r.error = String(e); }
  results[frame.getAttribute("data-page")] = r;
}
window.addEventListener("load", function () {
  Array.prototype.forEach.call(document.querySelectorAll("iframe"), measure);
  var out = document.createElement("pre");
  out.id = "results";
  out.textContent = JSON.stringify(results);
  document.body.appendChild(out);
});
</script></body></html>
"""


def chromium(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    return run_chromium(*args, tmp=tmp, timeout=120)


def probe(directory: Path, names: list[str], tmp: Path) -> tuple[dict, str]:
    """Load ``names`` (pages of ``directory``) in 390 x 844 frames of a probe page
    put beside them; return what the probe measured and Chromium's log."""
    frames = "".join(f'<iframe data-page="{n}" src="{n}" style="width:390px;height:844px;border:0">'
                     "</iframe>" for n in names)
    path = directory / "_probe.html"
    path.write_text(PROBE % {"frames": frames}, encoding="utf-8")
    try:
        proc = chromium("--allow-file-access-from-files", "--enable-logging=stderr", "--v=0",
                        "--window-size=1200,900", "--dump-dom", path.as_uri(), tmp=tmp)
    finally:
        path.unlink()
    m = re.search(r'<pre id="results">(.*?)</pre>', proc.stdout, re.S)
    assert m, proc.stderr[-3000:]
    import html as _html

    return json.loads(_html.unescape(m.group(1))), proc.stderr


@needs_chromium
def test_console_errors_are_seen(tmp_path):
    """The check itself: an error in a framed page shows in Chromium's log."""
    d = tmp_path / "control"
    d.mkdir()
    (d / "bad.html").write_text('<!DOCTYPE html><title>x</title><img src="none.png" alt="">'
                                '<script>throw new Error("boom")</script>')
    results, log = probe(d, ["bad.html"], tmp_path)
    assert "CONSOLE" in log and "Uncaught Error: boom" in log
    assert results["bad.html"]["broken"]


@needs_chromium
def test_every_page_loads_in_chromium_without_errors_at_390px(site, tmp_path):
    _, out, _ = site
    by_dir: dict[Path, list[str]] = {}
    for page in pages(out):
        by_dir.setdefault(page.parent, []).append(page.name)
    loaded = 0
    for directory, names in by_dir.items():
        results, log = probe(directory, names, tmp_path)
        console = [line for line in log.splitlines() if ":CONSOLE" in line]
        assert console == [], f"{directory}: console messages: {console[:5]}"
        assert sorted(results) == sorted(names)
        for name, r in results.items():
            where = f"{directory.relative_to(out)}/{name}"
            assert "error" not in r, (where, r)
            assert r["viewport"] == 390, (where, r)
            assert r["scrollWidth"] <= 390, (where, r["scrollWidth"])
            assert r["tooWide"] == [], (where, r["tooWide"])
            assert r["broken"] == [], (where, r["broken"])
            loaded += 1
        if directory == out:
            ids = sorted(fixture_data())
            assert results["index.html"]["sortedById"] == ids
            assert results["index.html"]["sortedByIdDesc"] == ids[::-1]
    assert loaded == len(pages(out))


@needs_chromium
@pytest.mark.parametrize("page", ["index.html", "games/v1-second-options-4p/index.html",
                                  "games/v1-mid-game-5p/move-40.html"])
def test_screenshot_at_390(site, tmp_path, page):
    from PIL import Image

    _, out, _ = site
    shot = tmp_path / "shot.png"
    proc = chromium("--hide-scrollbars", f"--screenshot={shot}", "--window-size=390,844",
                    (out / page).as_uri(), tmp=tmp_path)
    assert shot.is_file(), proc.stderr[-2000:]
    with Image.open(shot) as img:
        assert img.size == (390, 844)
        # not blank: the page drew text and pictures
        assert len(img.convert("L").getcolors(256 * 256) or []) > 20


def test_initial_investments_stay_secret_until_all_chose(tmp_path):
    from moderator.archive.site import public_order
    from moderator.rules.board import Board
    from moderator.rules.engine import Game
    from moderator.rules.notation import parse_action
    from moderator.store.gamefile import GameRecord, Player

    assert public_order("start KCC", initial_open=False) == "start (secret initial investment)"
    assert public_order("start KCC", initial_open=True) == "start KCC"
    assert public_order("build MS ATL-MIA joker as white; take KCC; swap DM", True) == (
        "build MS ATL-MIA joker as white; take KCC; swap (a share) for UP")
    g = Game.new(Board.default(), ["Ann", "Bob", "Cy"], 9, "first-edition", {})
    rec = GameRecord("starting", g, [Player(n, f"{n.lower()}@example.org", "abcdefgh") for n in g.players],
                     "default")
    choice = g.legal_summary("Ann").starts[0]
    rec.apply("Ann", parse_action(str(choice)), None)
    store = GameStore(tmp_path / "games")
    store.save(rec)
    build_site(store, tmp_path / "site")
    text = "\n".join(p.read_text() for p in (tmp_path / "site").rglob("*.html"))
    assert "start (secret initial investment)" in text
    assert str(choice) not in text


def test_public_export_of_a_running_game_hides_swaps_and_pending_initial_choices():
    """Found by a new user: the public export named the share returned in an UP swap
    and a player's initial investment while others had not chosen yet."""
    from moderator.archive.export import export_data

    data = {
        "players": [{"name": "Dee", "address": "d@x.org", "secret": "aaaaaaaa"},
                    {"name": "Eve", "address": "e@x.org", "secret": "bbbbbbbb"}],
        "seed": 5,
        "history": [{"player": "Dee", "order": "start SFRB", "message_id": "<1@x>"}],
        "state": {"phase": "initial", "initial_choice": {"Dee": "SFRB"}},
    }
    out = export_data(data)
    assert out["history"][0]["order"] == "start (secret initial investment)"
    assert out["state"]["initial_choice"] == {}
    data["state"]["phase"] = "play"
    data["history"].append({"player": "Eve", "order": "build MRR CHI-MSP black-white; take stack; swap MRR",
                            "message_id": "<2@x>"})
    out = export_data(data)
    assert [h["order"] for h in out["history"]] == [
        "start SFRB", "build MRR CHI-MSP black-white; take stack; swap (a share) for UP"]
    data["state"]["phase"] = "over"
    out = export_data(data)
    assert out["history"][1]["order"] == "build MRR CHI-MSP black-white; take stack; swap MRR"


def test_addresses_only_when_the_configuration_says_so(cli, tmp_path):
    r = cli("archive", "--out", "site")
    assert r.exit_code == 0, r.output
    page = (tmp_path / "site" / "games" / "v1-two-player" / "index.html").read_text(encoding="utf-8")
    assert "ann@example.org" not in page
    (tmp_path / "pbem.yaml").write_text("archive: {show_addresses: true}\n")
    r = cli("archive", "--out", "site")
    assert r.exit_code == 0, r.output
    assert "5 game(s) rendered" in r.output  # the option changed: every game again
    page = (tmp_path / "site" / "games" / "v1-two-player" / "index.html").read_text(encoding="utf-8")
    assert "Ann <small>&lt;ann@example.org&gt;</small>" in page
    assert "Bob <small>&lt;bob@example.org&gt;</small>" in page
    (tmp_path / "pbem.yaml").write_text("archive: {show_addresses: 'yes'}\n")
    r = cli("archive", "--out", "site")
    assert r.exit_code != 0
    assert "archive.show_addresses: must be true or false, not 'yes'" in r.output
