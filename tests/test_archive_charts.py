"""The archive as pictures (issue 28): the charts of a game's page and of the
statistics page, drawn as inline SVG when the site is built.

* the drawing functions (``moderator/render/charts.py``) on small inputs whose
  geometry is worked out by hand;
* the site built from the frozen game files (``tests/fixtures/games/v1``): each
  chart's numbers derived here independently (the file's own payouts and money;
  the company values by replaying the history and counting the trains on the
  board with the rules' formula, 1 + trains) and compared with the SVG's data
  (``data-values``), its geometry and its table; hidden money stays hidden;
* in headless Chromium at 390 and 1280 px, light and dark: nothing beyond the
  viewport, no label cut at a chart's edge or over another, every chart's type
  at least 11 CSS px at 390, the ink readable on the page's background (the
  probe itself checked on a bad chart); screenshots in ``tests/artifacts/charts/``.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from browser import needs_chromium, run_chromium
from moderator.archive.site import build_site
from moderator.render.charts import (WIDTH, Bar, Series, bar_chart, line_chart, nice_ticks, spread,
                                     text_width)
from moderator.rules.board import Board
from moderator.rules.components import COMPANIES
from moderator.rules.engine import Game
from moderator.rules.notation import parse_action
from moderator.store.gamefile import GameStore, load_board_ref

html5lib = pytest.importorskip("html5lib")

FIXTURES = Path(__file__).parent / "fixtures" / "games" / "v1"
ARTIFACTS = Path(__file__).parent / "artifacts" / "charts"


def fixture_data() -> dict[str, dict]:
    return {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.yaml"))}


def strict_tree(html: str):
    """The page parsed by html5lib's strict parser (an error fails), the SVG
    elements' namespace dropped from their tags for ``find``."""
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    tree = parser.parse(html)
    for el in tree.iter():
        if isinstance(el.tag, str) and el.tag.startswith("{"):
            el.tag = el.tag.split("}", 1)[1]
    return tree


def page_of(svg: str) -> str:
    return f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body>{svg}</body></html>'


def text(el) -> str:
    return "".join(el.itertext()).strip()


# ------------------------------------------------------------------ the drawing functions
def test_nice_ticks_and_spread():
    assert nice_ticks(37) == [0, 10, 20, 30, 40]
    assert nice_ticks(112) == [0, 50, 100, 150]
    assert nice_ticks(15) == [0, 5, 10, 15]
    assert nice_ticks(3) == [0, 1, 2, 3]
    assert nice_ticks(0) == [0, 1]
    # three labels wanted at 10, 11, 50 with a gap of 14: the first two centred on 10.5
    assert spread([10, 11, 50], 14, 0, 100) == [3.5, 17.5, 50]
    # a group that then reaches the next label takes it in: centred on the mean of three
    assert spread([40, 41, 42, 55], 10, 0, 200) == [29.5, 39.5, 49.5, 59.5]
    assert spread([0, 1], 10, 0, 100) == [0, 10]  # not above the top
    # pushed past the bottom (100): shifted up, keeping the gaps
    assert spread([95, 96, 97], 10, 0, 100) == [80, 90, 100]


def test_text_width_counts_wide_characters():
    assert text_width("ab", 10) == pytest.approx(12)
    assert text_width("AB", 10) == pytest.approx(14.4)
    assert text_width("张三", 10) == pytest.approx(20)


def test_line_chart_svg_data_geometry_and_table():
    chart = line_chart("t", "Money & more", "A line per player.", "After dividend", "Millions",
                       ["start", "1", "2"], [Series("Ann", (0, 10, 40)), Series("Bob", (0, 20, None))],
                       marks=[(1.5, "D2")], marks_title="Dividends")
    tree = strict_tree(page_of(chart.svg))
    svg = tree.find(".//svg")
    assert svg.get("role") == "img" and svg.get("viewBox") == f"0 0 {WIDTH} 272"
    assert svg.get("width") is None and svg.get("height") is None  # it scales with its column
    assert svg.get("aria-labelledby") == "chart-t-title chart-t-desc"
    assert text(svg.find("title")) == "Money & more" and svg.find("title").get("id") == "chart-t-title"
    assert text(svg.find("desc")) == "A line per player."
    assert "<script" not in chart.svg and "href" not in chart.svg
    groups = [g for g in svg.iter("g") if g.get("class") == "series"]
    assert [(g.get("data-label"), g.get("data-values")) for g in groups] == [("Ann", "0 10 40"), ("Bob", "0 20 -")]
    # the y axis runs 0..40 (ticks of 10) over 190 units from y=226 up; x from the
    # left edge of the plot to the right one in two equal steps
    ann = [tuple(map(float, p.split(","))) for p in groups[0].find("polyline").get("points").split()]
    ys = [y for _, y in ann]
    assert ys == pytest.approx([226, 226 - 190 * 10 / 40, 36], abs=0.06)
    xs = [x for x, _ in ann]
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], abs=0.1)
    bob = [tuple(map(float, p.split(","))) for p in groups[1].find("polyline").get("points").split()]
    assert len(bob) == 2  # no point where the value is None
    ticks = [text(t) for t in svg.iter("text") if t.get("text-anchor") == "end"]
    assert ticks == ["0", "10", "20", "30", "40"]
    mark = next(g for g in svg.iter("g") if g.get("class") == "mark")
    assert mark.get("data-x") == "1.5" and text(mark) == "D2"
    assert float(mark.find("line").get("x1")) == pytest.approx((xs[1] + xs[2]) / 2, abs=0.1)
    labels = [text(t) for t in svg.iter("text")]
    assert "Ann 40" in labels and "Bob 20" in labels  # direct labels: the last value
    assert chart.columns == ["After dividend", "Ann", "Bob", "Dividends"]
    assert chart.rows == [["start", "0", "0", ""], ["1", "10", "20", ""], ["2", "40", "–", "D2"]]
    # marks too close for their labels side by side: the second a row lower, inside the plot
    near = line_chart("n", "t", "d", "x", "y", [str(i) for i in range(30)], [Series("K", tuple(range(30)))],
                      marks=[(10, "D1"), (10.5, "D2"), (20, "D3")], marks_title="m")
    rows = [float(g.find("text").get("y")) for g in strict_tree(page_of(near.svg)).iter("g")
            if g.get("class") == "mark"]
    assert rows == [32, 36 + 12.5 + 1, 32]
    # a level run keeps its ends only: the same line
    flat = line_chart("f", "t", "d", "x", "y", ["a", "b", "c", "d", "e"], [Series("K", (2, 2, 2, 5, 5))])
    svg = strict_tree(page_of(flat.svg)).find(".//svg")
    pts = [tuple(map(float, p.split(","))) for p in svg.find(".//polyline").get("points").split()]
    assert len(pts) == 4 and pts[0][1] == pts[1][1] and pts[2][1] == pts[3][1] and pts[1][0] < pts[2][0]
    assert next(g for g in svg.iter("g") if g.get("class") == "series").get("data-values") == "2 2 2 5 5"


def test_bar_chart_parts_scale_and_table():
    chart = bar_chart("b", "Dividends", "A bar per company.", "Company",
                      [Bar("KCC", (4, 6), "#73320f", "diamond"), Bar("UP", (0, 5), "#666666", "square")],
                      ["Dividend 1", "Dividend 2"], "Total")
    tree = strict_tree(page_of(chart.svg))
    bars = [g for g in tree.iter("g") if g.get("class") == "bar"]
    assert [(g.get("data-label"), g.get("data-values")) for g in bars] == [("KCC", "4 6"), ("UP", "0 5")]
    kcc = [float(r.get("width")) + 1.5 for r in bars[0].iter("rect") if r.get("class") == "part"]
    up = [float(r.get("width")) + 1.5 for r in bars[1].iter("rect") if r.get("class") == "part"]
    assert len(kcc) == 2 and len(up) == 1  # a part of 0 is not drawn
    assert kcc[0] / kcc[1] == pytest.approx(4 / 6, abs=0.01)
    assert sum(kcc) == pytest.approx(2 * up[0], abs=0.2)  # 10 against 5: the scale is shared
    assert [text(t) for t in bars[0].iter("text")][-1] == "10"  # the total at the end
    assert chart.columns == ["Company", "Dividend 1", "Dividend 2", "Total"]
    assert chart.rows == [["KCC", "4", "6", "10"], ["UP", "0", "5", "5"]]
    with pytest.raises(ValueError, match="1 part"):
        bar_chart("x", "t", "d", "l", [Bar("A", (1,))], ["one", "two"], "Total")
    with pytest.raises(ValueError):
        line_chart("x", "t", "d", "x", "y", [], [])


# ------------------------------------------------------------------ the site's charts
@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("charts")
    shutil.copytree(FIXTURES, root / "games")
    out = root / "site"
    report = build_site(GameStore(root / "games"), out)
    assert not report.errors
    return out


def figures(page: Path) -> dict[str, dict]:
    """Per chart of a page (by id): its svg element, its data per series or bar
    (label -> list of strings), its table (header, rows)."""
    tree = strict_tree(page.read_text(encoding="utf-8"))
    found = {}
    for fig in tree.iter("figure"):
        if fig.get("class") != "chart":
            continue
        svg = fig.find(".//svg")
        data = {g.get("data-label"): g.get("data-values").split()
                for g in svg.iter("g") if g.get("class") in ("series", "bar")}
        table = fig.find(".//details//table")
        head = [text(th) for th in table.find("thead").iter("th")]
        rows = [[text(c) for c in tr if c.tag in ("th", "td")] for tr in table.find("tbody").iter("tr")]
        found[fig.get("id").removeprefix("chart-")] = {"svg": svg, "data": data, "head": head, "rows": rows,
                                                       "fig": fig}
    return found


def independent_values(data: dict) -> tuple[list[int], dict[str, list[int]]]:
    """The turns and each company's value (1 + trains on the board: the box's
    count subtracted from the company's trains) at the start and after each round
    of the game's history, replayed here."""
    game = Game.new(load_board_ref(data["board"]), [p["name"] for p in data["players"]], data["seed"],
                    data["ruleset"], data.get("options") or {})
    n = len(game.players)

    def now() -> dict[str, int]:
        return {c: 1 + COMPANIES[c].trains - game.box[c] for c in COMPANIES}

    turns, values = [0], [now()]
    for h in data["history"]:
        game.push(h["player"], parse_action(h["order"]))
        if game.turn and game.turn % n == 0 and game.turn != turns[-1]:
            turns.append(game.turn)
            values.append(now())
    if game.turn != turns[-1]:
        turns.append(game.turn)
        values.append(now())
    # the last point is the file's recorded position
    assert values[-1] == {c: 1 + COMPANIES[c].trains - data["state"]["box"][c] for c in COMPANIES}
    return turns, {c: [v[c] for v in values] for c in COMPANIES}


def test_money_chart_is_the_files_payouts_summed(site):
    for gid, data in fixture_data().items():
        charts = figures(site / "games" / gid / "index.html")
        state = data["state"]
        money_public = state["phase"] == "over" or not data["options"].get("hidden_money")
        if not state["payouts"]:
            assert "money" not in charts, gid
            continue
        assert money_public, gid  # every fixture with payouts shows its money
        expected = {}
        for name in list(state["money"]):
            run, points = 0, [0 if name != "(imaginary player)" else None]
            for p in state["payouts"]:
                if name in p["holdings"]:
                    run += p["totals"].get(name, 0)
                    points.append(run)
                else:
                    points.append(None)
            expected[name] = points
            assert run == state["money"][name], (gid, name)  # money comes only from dividends
        chart = charts["money"]
        as_text = {k: ["-" if v is None else str(v) for v in vs] for k, vs in expected.items()}
        assert chart["data"] == as_text, gid
        assert chart["head"] == ["After dividend", *expected]
        assert chart["rows"] == [[label] + ["–" if vs[i] is None else str(vs[i]) for vs in expected.values()]
                                 for i, label in enumerate(["start"] + [str(k) for k in range(1, len(state["payouts"]) + 1)])]


def test_two_player_money_chart_has_the_imaginary_player_at_the_last_dividend(site):
    chart = figures(site / "games" / "v1-two-player" / "index.html")["money"]
    assert chart["data"]["(imaginary player)"] == ["-", "-", "-", "75"]
    assert chart["data"]["Ann"][-1] == "56" and chart["data"]["Bob"][-1] == "28"


def test_values_chart_is_the_trains_on_the_board_per_round(site):
    for gid, data in fixture_data().items():
        chart = figures(site / "games" / gid / "index.html")["values"]
        turns, values = independent_values(data)
        assert chart["data"] == {c: [str(v) for v in vs] for c, vs in values.items()}, gid
        n = len(data["players"])
        labels = ["start"] + [str(-(-t // n)) for t in turns[1:]]
        assert chart["head"] == ["After round", *COMPANIES, "Dividends paid"]
        assert [r[0] for r in chart["rows"]] == labels
        assert [r[1:-1] for r in chart["rows"]] == [[str(values[c][i]) for c in COMPANIES]
                                                   for i in range(len(turns))]
        # each dividend is marked in the round it was paid in, and the values it
        # paid on lie between the round's start and end (trains are only added)
        marked = {}
        for i, r in enumerate(chart["rows"]):
            for mark in filter(None, r[-1].split(", ")):
                for number in mark.removeprefix("D").split("+D"):
                    marked[int(number)] = i
        payouts = data["state"]["payouts"]
        assert sorted(marked) == [p["dividend"] for p in payouts], gid
        for p in payouts:
            i = marked[p["dividend"]]
            for c in COMPANIES:
                assert values[c][i - 1] <= p["values"][c] <= values[c][i], (gid, p["dividend"], c)
        marks = [g for g in chart["svg"].iter("g") if g.get("class") == "mark"]
        assert sum(len(text(m).split("+")) for m in marks) == len(payouts)


def test_dividends_chart_is_the_files_payouts_per_company(site):
    for gid, data in fixture_data().items():
        charts = figures(site / "games" / gid / "index.html")
        payouts = data["state"]["payouts"]
        if not payouts:
            assert "dividends" not in charts
            continue
        expected = {}
        for c in [*COMPANIES, "UP"]:
            if any(c in p["paid"] for p in payouts):
                expected[c] = [sum(p["paid"].get(c, {}).values()) for p in payouts]
        chart = charts["dividends"]
        assert chart["data"] == {c: [str(a) for a in v] for c, v in expected.items()}, gid
        assert chart["head"] == ["Company", *[f"Dividend {k}" for k in range(1, len(payouts) + 1)], "Total"]
        assert chart["rows"] == [[c, *map(str, v), str(sum(v))] for c, v in expected.items()]
        # all that was paid is the players' money at the end (finished games)
        if data["state"]["phase"] == "over":
            assert sum(map(sum, expected.values())) == sum(data["state"]["money"].values())


def test_first_game_by_hand():
    """v1-first-3p-finished's dividends, read from its file by hand: UP paid
    0 + 10 + 15 + 48 = 73 to Cy (and Bob), DM 22 at three dividends."""
    data = fixture_data()["v1-first-3p-finished"]
    ups = [sum(p["paid"].get("UP", {}).values()) for p in data["state"]["payouts"]]
    assert ups == [0, 10, 15, 48]


def test_every_chart_has_a_title_a_description_and_a_table(site):
    pages = [site / "stats.html", *sorted((site / "games").glob("*/index.html"))]
    seen = 0
    for page in pages:
        for cid, chart in figures(page).items():
            svg = chart["svg"]
            ids = svg.get("aria-labelledby").split()
            assert [svg.find(tag).get("id") for tag in ("title", "desc")] == ids
            assert text(svg.find("title")) and len(text(svg.find("desc"))) > 20
            assert text(chart["fig"].find("figcaption")).startswith(text(svg.find("title")))
            assert chart["rows"] and all(len(r) == len(chart["head"]) for r in chart["rows"])
            seen += 1
    assert seen == 5 + 3 * 5  # the statistics' five, three on each game's page


def test_statistics_charts_are_the_tables_numbers(site):
    tree = strict_tree((site / "stats.html").read_text(encoding="utf-8"))
    main_rows = [[text(td) for td in tr.iter("td")] for tr in tree.iter("tr")]
    players = {r[0]: r for r in main_rows if len(r) == 8}  # one row per person (records)
    companies = {r[0].split()[0]: r for r in main_rows if len(r) == 3}
    charts = figures(site / "stats.html")
    assert set(charts) == {"wins", "ranks", "in-time", "paid", "values"}
    owed = {n: (int(r[5]), int(r[6])) for n, r in players.items()}
    assert charts["in-time"]["data"] == {n: [f"{100 * a / (a + b):.0f}"] for n, (a, b) in owed.items() if a + b}
    assert charts["wins"]["data"] == {n: [r[3]] for n, r in players.items()}
    assert charts["ranks"]["data"] == {n: [r[4]] for n, r in players.items() if r[4] != "–"}
    assert charts["paid"]["data"] == {c: [r[1].split()[0]] for c, r in companies.items()}
    assert charts["values"]["data"] == {c: [r[2]] for c, r in companies.items()}
    # by hand from the fixtures: Cy won v1-first-3p-finished, Dee v1-second-options-4p
    assert charts["wins"]["data"]["Cy"] == ["1"] and charts["wins"]["data"]["Dee"] == ["1"]
    assert charts["wins"]["rows"][0][1] == "1"


def test_hidden_money_game_draws_no_money_and_no_amounts(tmp_path):
    import random

    from moderator.store.gamefile import GameRecord, Player

    g = Game.new(Board.default(), ["Ann", "Bob", "Cy"], 5, "first-edition", {"hidden_money": True})
    rec = GameRecord("hidden", g, [Player(n, f"{n.lower()}@example.org", "abcdefgh") for n in g.players],
                     "default", created="2026-11-30T12:00:00+00:00")
    rng = random.Random(3)
    while g.dividends_paid < 1:
        p = g.waiting_for()[0]
        rec.apply(p, g.random_action(p, rng), None, "2026-11-30T12:00:00+00:00")
    store = GameStore(tmp_path / "games")
    store.save(rec)
    build_site(store, tmp_path / "site")
    charts = figures(tmp_path / "site" / "games" / "hidden" / "index.html")
    assert set(charts) == {"values"}  # the values are public; the money and the amounts are not
    page = (tmp_path / "site" / "games" / "hidden" / "index.html").read_text(encoding="utf-8")
    for name, money in g.money.items():
        assert f'data-label="{name}"' not in page


def test_a_game_in_its_initial_phase_has_no_chart(tmp_path):
    from moderator.store.gamefile import GameRecord, Player

    g = Game.new(Board.default(), ["Ann", "Bob", "Cy"], 9, "first-edition", {})
    rec = GameRecord("starting", g, [Player(n, f"{n.lower()}@example.org", "abcdefgh") for n in g.players],
                     "default")
    rec.apply("Ann", parse_action(str(g.legal_summary("Ann").starts[0])), None)
    store = GameStore(tmp_path / "games")
    store.save(rec)
    build_site(store, tmp_path / "site")
    assert figures(tmp_path / "site" / "games" / "starting" / "index.html") == {}


def test_charts_in_every_language(tmp_path):
    """A game in Chinese and in German: the charts' words from the catalogues."""
    shutil.copytree(FIXTURES, tmp_path / "games")
    f = tmp_path / "games" / "v1-first-3p-finished.yaml"
    for code, words in (("de", ("Geld im Lauf der Partie", "Nach Dividende")),
                        ("zh", ("整局中的资金", "第几次分红后"))):
        data = yaml.safe_load(f.read_text(encoding="utf-8"))
        data.setdefault("settings", {})["language"] = code
        f.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        build_site(GameStore(tmp_path / "games"), tmp_path / f"site-{code}")
        chart = figures(tmp_path / f"site-{code}" / "games" / "v1-first-3p-finished" / "index.html")["money"]
        assert text(chart["svg"].find("title")) == words[0]
        assert chart["head"][0] == words[1]


# ------------------------------------------------------------------ in a browser
PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>probe</title></head><body style="margin:0">
%(frames)s
<script>
var results = {};
function lum(c) {
  var m = c.match(/[0-9.]+/g).map(Number).slice(0, 3).map(function (v) {
    v = v / 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2];
}
function measure(frame) {
  var r = {};
  try {
    var doc = frame.contentDocument, w = frame.contentWindow;
    Array.prototype.forEach.call(doc.querySelectorAll("details"), function (d) { d.open = true; });
    r.viewport = w.innerWidth;
    r.scrollWidth = doc.documentElement.scrollWidth;
    r.tooWide = Array.prototype.filter.call(doc.querySelectorAll("body *"), function (e) {
      return e.getBoundingClientRect().right > w.innerWidth + 0.5 && !e.closest(".wide");
    }).map(function (e) { return e.tagName; });
    var bg = w.getComputedStyle(doc.body).backgroundColor;
    r.charts = Array.prototype.map.call(doc.querySelectorAll("svg.chart"), function (svg) {
      var box = svg.getBoundingClientRect(), sizes = [], outside = 0, boxes = [], overlaps = [];
      Array.prototype.forEach.call(svg.querySelectorAll("text"), function (t) {
        sizes.push(parseFloat(w.getComputedStyle(t).fontSize) * svg.getScreenCTM().a);
        var b = t.getBoundingClientRect();
        if (b.left < box.left - 0.5 || b.right > box.right + 0.5) outside += 1;
        // the glyphs' box (the element's box less the line's leading): no two texts overlap
        var pad = b.height * 0.18;
        boxes.forEach(function (o) {
          if (b.left < o.b.right - 0.5 && o.b.left < b.right - 0.5 &&
              b.top + pad < o.b.bottom - o.pad && o.b.top + o.pad < b.bottom - pad)
            overlaps.push(o.t.textContent + " / " + t.textContent);
        });
        boxes.push({b: b, pad: pad, t: t});
      });
      var ink = w.getComputedStyle(svg).color;
      var l1 = lum(ink), l2 = lum(bg);
      return {id: svg.getAttribute("data-chart"), width: box.width, right: box.right,
              minFont: Math.min.apply(null, sizes), textsOutside: outside, overlaps: overlaps,
              contrast: (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05)};
    });
    r.background = bg;
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

PAGES = ["stats.html", "games/v1-first-3p-finished/index.html", "games/v1-two-player/index.html",
         "games/v1-mid-game-5p/index.html", "games/v1-second-options-4p/index.html",
         "games/v1-custom-board-3p/index.html"]


def probe(site: Path, width: int, dark: bool, tmp: Path, pages: list[str] = PAGES) -> dict:
    """Load ``pages`` of ``site`` in frames ``width`` px wide (dark: Chromium's
    ``--force-dark-mode``, which makes ``prefers-color-scheme: dark`` match) with
    every ``<details>`` opened; return what the probe measured per page."""
    frames = "".join(f'<iframe data-page="{p}" src="{p}" style="width:{width}px;height:900px;border:0"></iframe>'
                     for p in pages)
    path = site / f"_charts_probe_{width}_{int(dark)}.html"
    path.write_text(PROBE % {"frames": frames}, encoding="utf-8")
    try:
        flags = ["--force-dark-mode"] if dark else []
        proc = run_chromium("--allow-file-access-from-files", *flags, f"--window-size={width + 40},900",
                            "--dump-dom", path.as_uri(), tmp=tmp, timeout=120)
    finally:
        path.unlink()
    m = re.search(r'<pre id="results">(.*?)</pre>', proc.stdout, re.S)
    assert m, proc.stderr[-3000:]
    import html as _html

    return json.loads(_html.unescape(m.group(1)))


@needs_chromium
def test_the_probe_sees_overlaps_small_type_and_overflow(tmp_path):
    """The check itself: a chart whose two labels overlap, whose type is 8 px and
    which is wider than the frame is reported so."""
    d = tmp_path / "control"
    d.mkdir()
    (d / "bad.html").write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>x</title></head><body>'
        '<svg class="chart" data-chart="bad" viewBox="0 0 500 100" style="width:500px">'
        '<text x="10" y="50" font-size="8">overlapping</text><text x="14" y="51" font-size="8">labels</text>'
        '</svg></body></html>', encoding="utf-8")
    r = probe(d, 390, False, tmp_path, ["bad.html"])["bad.html"]
    (c,) = r["charts"]
    assert c["overlaps"] == ["overlapping / labels"]
    assert c["minFont"] == pytest.approx(8, abs=0.01)
    assert c["right"] > 390 and r["tooWide"]


@needs_chromium
@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_charts_fit_and_read_in_chromium(site, tmp_path, width, dark):
    results = probe(site, width, dark, tmp_path)
    assert sorted(results) == sorted(PAGES)
    count = 0
    for page, r in results.items():
        assert "error" not in r, (page, r)
        assert r["viewport"] == width and r["scrollWidth"] <= width, (page, r["scrollWidth"])
        assert r["tooWide"] == [], (page, r["tooWide"])
        assert (r["background"] == "rgb(18, 18, 18)") == dark, (page, r["background"])
        for c in r["charts"]:
            assert c["right"] <= width, (page, c)
            assert c["textsOutside"] == 0, (page, c)  # no label cut at the picture's edge
            assert c["overlaps"] == [], (page, c["id"], c["overlaps"])  # no text over another
            assert c["minFont"] >= (11 if width == 390 else 12), (page, c)
            assert c["minFont"] <= 22, (page, c)  # not a poster on a desktop either
            assert c["contrast"] >= 7, (page, c)
            count += 1
    assert count == 5 + 3 * 5  # the statistics' five, three on each game's page


@needs_chromium
@pytest.mark.parametrize("page", ["games/v1-first-3p-finished/index.html", "stats.html"])
def test_chart_screenshots_light_and_dark(site, tmp_path, page):
    from PIL import Image, ImageStat

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    means = {}
    for width in (390, 1280):
        for scheme, flags in (("light", []), ("dark", ["--force-dark-mode"])):
            shot = ARTIFACTS / f"{page.split('/')[-2] if '/' in page else 'stats'}-{width}-{scheme}.png"
            proc = run_chromium("--hide-scrollbars", *flags, f"--screenshot={shot}", f"--window-size={width},2600",
                                (site / page).as_uri(), tmp=tmp_path)
            assert shot.is_file(), proc.stderr[-2000:]
            with Image.open(shot) as img:
                assert img.size == (width, 2600)
                grey = img.convert("L")
                assert len(grey.getcolors(256 * 256) or []) > 20
                means[width, scheme] = ImageStat.Stat(grey).mean[0]
    for width in (390, 1280):
        assert means[width, "light"] > 180 and means[width, "dark"] < 90, means


@pytest.mark.parametrize("players,ruleset,options,seed", [
    (2, "first-edition", {}, 11),
    (3, "second-edition", {"spread_dividends": True}, 12),
    (4, "first-edition", {"dead_track_redraw": True}, 13),
    (5, "second-edition", {}, 14),
])
def test_charts_of_whole_random_games_agree_with_their_log(tmp_path, players, ruleset, options, seed):
    """Whole games of random legal play, saved and read back like any game file:
    the money chart is the running sum of the log's dividend events (DividendPaid:
    what each investor got), ending at the game's money; the company values never
    fall (trains are only added), start at 1 + the starting trains and end at the
    value of the final position; the dividend marks are every dividend, once."""
    import random

    from moderator.archive.site import chart_data, replay_game
    from moderator.rules.events import DividendPaid
    from moderator.store.gamefile import GameRecord, Player

    names = ["Ann", "Bob", "Cy", "Dee", "Eve"][:players]
    g = Game.new(Board.default(), names, seed, ruleset, options)
    rec = GameRecord("r", g, [Player(n, f"{n.lower()}@example.org", "abcdefgh") for n in names], "default",
                     created="2026-11-30T12:00:00+00:00")
    rng = random.Random(seed)
    while g.phase != "over":
        p = g.waiting_for()[0]
        rec.apply(p, g.random_action(p, rng), None, "2026-11-30T12:00:00+00:00")
    store = GameStore(tmp_path)
    store.save(rec)
    charts = chart_data(replay_game(store.read_data("r")), True)
    paid = [e for e in g.events if isinstance(e, DividendPaid)]
    assert [e.number for e in paid] == list(range(1, g.dividends_paid + 1))
    expected: dict[str, list] = {n: [0] for n in names}
    for e in paid:
        got = dict(e.paid)
        for n in set(got) - set(expected):  # the imaginary player joins at the final dividend
            expected[n] = [None] * len(expected[names[0]])
        for n, points in expected.items():
            points.append((points[-1] or 0) + got.get(n, 0) if n in got or points[-1] is not None else None)
    assert dict(charts["money"]) == expected
    assert {n: v[-1] for n, v in expected.items()} == g.money
    values = dict(charts["values"]["series"])
    start = Game.new(Board.default(), names, seed, ruleset, options)
    for c in COMPANIES:
        assert values[c] == sorted(values[c]), c
        assert values[c][0] == 1 + COMPANIES[c].trains - start.box[c]
        assert values[c][-1] == 1 + COMPANIES[c].trains - g.box[c]
    marked = sorted(n for _, numbers in charts["values"]["marks"] for n in numbers)
    assert marked == list(range(1, g.dividends_paid + 1))
    amounts = {c: sum(v) for c, v in charts["dividends"]["bars"]}
    assert sum(amounts.values()) == sum(g.money.values())


@needs_chromium
def test_charts_in_five_languages_fit_at_390(tmp_path):
    """Each frozen game in another language (Chinese labels are wider, German and
    Czech words longer), the statistics in Chinese: the same checks at 390 px."""
    games = tmp_path / "games"
    shutil.copytree(FIXTURES, games)
    for path, code in zip(sorted(games.glob("*.yaml")), ("de", "cs", "zh", "es", "zh")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data.setdefault("settings", {})["language"] = code
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    build_site(GameStore(games), tmp_path / "site", index_language="zh")
    results = probe(tmp_path / "site", 390, False, tmp_path)
    count = 0
    for page, r in results.items():
        assert "error" not in r and r["scrollWidth"] <= 390 and r["tooWide"] == [], (page, r)
        for c in r["charts"]:
            assert c["textsOutside"] == 0 and c["overlaps"] == [], (page, c)
            assert c["minFont"] >= 11, (page, c)
            count += 1
    assert count == 5 + 3 * 5  # the statistics' five, three on each game's page
