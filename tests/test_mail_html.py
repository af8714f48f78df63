"""The HTML part of every mail the moderator sends (issue 11): real layout from the
templates in ``templates/mail/`` (a viewport meta tag, tables for the players and
companies in the company colours, light and dark schemes), checked

* with Python: every HTML part is valid HTML (html5lib's strict parser), the
  map's alt text, the tables' values;
* in a real headless browser (Debian's ``chromium``; skipped without it): real
  status mails of real cycles, their ``cid:`` map rewritten to a file, at 390 px
  (a phone) and 1280 px (a desktop): no element wider than the viewport, the map
  loads; screenshots in light and dark mode are kept in ``tests/artifacts/mail/``
  (gitignored) to be looked at.
"""
from __future__ import annotations

import json
import re
import subprocess
from email.message import EmailMessage
from pathlib import Path

import pytest

from moderator.render.words import word
from moderator.render.events import english
from browser import needs_chromium, run_chromium
from test_status_map import Table, start_all

html5lib = pytest.importorskip("html5lib")

ARTIFACTS = Path(__file__).parent / "artifacts" / "mail"


def html_of(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("html",)).get_content()


def text_of(msg: EmailMessage) -> str:
    return msg.get_body(preferencelist=("plain",)).get_content()


def play_until_dividend(t: Table) -> list[EmailMessage]:
    """Play the game of ``t`` (after the initial investments) through real cycles,
    one order mail a cycle, until the first dividend is paid; the status mails of
    that last cycle."""
    mails: list[EmailMessage] = []
    for turn in range(120):
        g = t.load().game
        if g.dividends_paid >= 1:
            return mails
        p = g.to_move
        s = g.legal_summary(p)
        if s.invest and (len(g.share_hands[p]) >= 4 or not s.builds):
            order = f"invest {s.invest[0]}; discard {sorted(g.track_hands[p])[0]}"
        elif s.builds:
            builds = s.build_actions()
            order = f"{builds[turn % len(builds)]}; take stack"
        else:
            order = str(s.passes[0])
        t.order(p, order)
        report = t.mod.run_cycle()
        assert report.applied == 1, report.summary()
        mails = t.sent()
    raise AssertionError("no dividend in 120 turns")


@pytest.fixture(scope="module")
def mails(tmp_path_factory) -> dict[str, EmailMessage]:
    """Real mails of real cycles: welcome, status at the start and after the first
    dividend (on move and not), answers to help, legal and history, a refusal."""
    t = Table(tmp_path_factory.mktemp("table"))
    out: dict[str, EmailMessage] = {}
    out["welcome"] = t.sent()[0]
    out["start"] = start_all(t)[0]
    last = play_until_dividend(t)
    rec = t.load()
    for m in last:
        name = rec.player_by_address(str(m["To"])).name
        out["dividend-on-move" if name == rec.game.to_move else f"dividend-{name}"] = m
    mover = rec.game.to_move
    t.order(mover, "help\nlegal\nhistory")
    t.mod.run_cycle()
    for m in t.sent():
        first = m.get_body(("plain",)).get_content().partition("\n")[0]  # one Subject per thread
        key = ("help" if "HOW TO GIVE ORDERS" in first
               else "legal" if "every legal order" in first else "history")
        out[key] = m
    t.order(mover, "take stack")
    t.mod.run_cycle()
    (out["refusal"],) = t.sent()
    out["_table"] = t  # type: ignore[assignment]
    return out


def mail_names(mails) -> list[str]:
    return [n for n in mails if not n.startswith("_")]


def test_every_html_part_is_strictly_valid_and_laid_out(mails):
    assert {"welcome", "start", "dividend-on-move", "help", "legal", "history", "refusal"} <= set(mails)
    for name in mail_names(mails):
        html = html_of(mails[name])
        html5lib.HTMLParser(strict=True).parse(html)  # raises on any parse error
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html, name
        assert "prefers-color-scheme: dark" in html and 'name="color-scheme"' in html, name
        assert "<pre" not in html, name  # real layout, not the text in a <pre>
        assert "\x00" not in html


def test_status_mail_tables_in_company_colours(mails):
    m = mails["dividend-on-move"]
    html = html_of(m)
    rec = mails["_table"].load()
    view = rec.game.public_view()
    # the players' table: one row per player with their money (not hidden)
    for p in view["players"]:
        row = re.search(rf"<tr><td>(<strong>\* )?{p['name']}(</strong>)?<br><span class=\"small nw\">"
                        rf"(\d+)&nbsp;track, (\d+)&nbsp;shares</span></td>\s*<td class=\"num\">{p['money']}</td>", html)
        assert row, p["name"]
        assert row.group(3, 4) == (str(p["track_cards"]), str(p["shares_in_hand"])), p["name"]
    # the companies' table: value, trains, home, in the company's colour
    from moderator.render.board_map import COMPANY_COLOURS

    for c in view["companies"]:
        bg = "#%02x%02x%02x" % COMPANY_COLOURS[c["abbr"]]
        # one style rule per company (not a long inline style per chip)
        assert f".k-{c['abbr']} {{ background-color: {bg}; background-image: linear-gradient({bg},{bg}); }}" in html
        chip = re.escape(f'<b class="chip"><i class="k-{c["abbr"]}"></i>{c["abbr"]}</b>')
        row = re.search(chip + r"<span class=\"small wide-only\"><br>[^<]*</span></td>\s*<td class=\"num\">(\d+)</td>\s*"
                        r"<td class=\"num\">(\d+)<br><span class=\"small\">(\d+)&nbsp;left</span></td>\s*"
                        r"<td>(\w+)</td>", html)
        assert row, c["abbr"]
        assert row.group(1, 2, 3, 4) == (str(c["value"]), str(c["on_board"]), str(c["in_box"]), c["home"])
    # the colours are swatches locked by a gradient (clients that invert colours
    # keep gradients); the abbreviations are text in the text colour, never on them
    assert html.count("linear-gradient(") == len(COMPANY_COLOURS)
    assert html.count('<i class="k-') > len(view["companies"])
    assert not re.search(r"(?<![-\w])color:#(000000|ffffff)", html)


def test_the_deadline_is_at_the_top_of_the_html_part(mails):
    """The move-request mails' HTML part (what Gmail, Outlook and Apple Mail show)
    says by when the move is due, right below the heading, as the plain part does."""
    for name in ("welcome", "dividend-on-move"):
        text = text_of(mails[name])
        (line,) = [line for line in text.splitlines() if line.startswith("Your move is due by ")]
        assert re.fullmatch(r"Your move is due by \d{4}-\d\d-\d\d \d\d:\d\d UTC\.", line), line
        html = html_of(mails[name])
        box = rf'</h1>\s*<p class="box deadline"><strong>{re.escape(line)}</strong></p>'
        assert re.search(box, html), name


def test_map_alt_text_and_figure(mails):
    html = html_of(mails["start"])
    from markupsafe import escape

    img = re.search(r"<img [^>]*>", html).group(0)
    assert img.startswith('<img id="board" src="cid:')
    assert f'alt="{escape(word("layout", "map_alt"))}"' in img
    assert word("layout", "map_alt") == 'Map of the board (every possible build: send "legal")'
    # no board in words (issue 26: a status mail at most 50 KB; "legal" lists every build)
    assert "THE BOARD" not in html and "THE BOARD" not in text_of(mails["start"])


def test_text_mails_become_headings_paragraphs_and_lists(mails):
    html = html_of(mails["help"])
    assert "<h1>UNION PACIFIC BY MAIL: HOW TO GIVE ORDERS (game ridge)</h1>" in html
    assert "<h2>HOW TO REPLY</h2>" in html and "<li>" in html
    refusal = html_of(mails["refusal"])
    assert "<ul" in refusal and "&gt;" not in refusal.split("<body", 1)[0]


def frame_file(msg: EmailMessage, directory: Path, name: str) -> str:
    """Write the HTML part of ``msg`` to ``directory/name.html`` with its inline
    images as files (``cid:`` rewritten to them); returns the page's file name."""
    html = html_of(msg)
    for i, part in enumerate(p for p in msg.walk() if p.get_content_type() == "image/png"):
        cid = str(part["Content-ID"]).strip("<>")
        (directory / f"{name}-{i}.png").write_bytes(part.get_content())
        assert f"cid:{cid}" in html
        html = html.replace(f"cid:{cid}", f"{name}-{i}.png")
    (directory / f"{name}.html").write_text(html, encoding="utf-8")
    return f"{name}.html"


PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>probe</title></head><body style="margin:0">
%(frames)s
<script>
var results = {};
function measure(frame) {
  var r = {};
  try {
    var doc = frame.contentDocument, w = frame.contentWindow;
    r.viewport = w.innerWidth;
    r.scrollWidth = doc.documentElement.scrollWidth;
    r.tooWide = Array.prototype.filter.call(doc.querySelectorAll("body *"), function (e) {
      return e.getBoundingClientRect().right > w.innerWidth + 0.5;
    }).map(function (e) { return e.tagName + "." + e.className + ":" + (e.textContent || "").slice(0, 30); });
    r.images = doc.images.length;
    r.loaded = Array.prototype.filter.call(doc.images, function (i) {
      return i.complete && i.naturalWidth > 0; }).length;
    r.imageWidths = Array.prototype.map.call(doc.images, function (i) {
      return i.getBoundingClientRect().width; });
  } catch (e) { r.error = String(e); }
  results[frame.getAttribute("data-key")] = r;
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
    return run_chromium("--hide-scrollbars", *args, tmp=tmp)


@needs_chromium
def test_every_mail_fits_a_phone_and_a_desktop_and_the_map_loads(mails, tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    names = {n: frame_file(mails[n], pages, n) for n in mail_names(mails)}
    frames = "".join(
        f'<iframe data-key="{n}@{w}" src="{page}" style="width:{w}px;height:900px;border:0"></iframe>'
        for n, page in names.items() for w in (390, 1280))
    probe = pages / "_probe.html"
    probe.write_text(PROBE % {"frames": frames}, encoding="utf-8")
    proc = chromium("--allow-file-access-from-files", "--window-size=1300,900", "--dump-dom",
                    probe.as_uri(), tmp=tmp_path)
    found = re.search(r'<pre id="results">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-3000:]
    import html as _html

    results = json.loads(_html.unescape(found.group(1)))
    assert sorted(results) == sorted(f"{n}@{w}" for n in names for w in (390, 1280))
    for key, r in results.items():
        name, width = key.split("@")
        assert "error" not in r, (key, r)
        assert r["viewport"] == int(width), (key, r)
        assert r["scrollWidth"] <= int(width), (key, r["scrollWidth"])
        assert r["tooWide"] == [], (key, r["tooWide"])
        pictures = sum(1 for p in mails[name].walk() if p.get_content_type() == "image/png")
        assert r["images"] == r["loaded"] == pictures, (key, r)
        for w in r["imageWidths"]:
            assert 300 < w <= min(int(width), 640), (key, w)  # fits, and is not shrunk to nothing
    # status mails all carry the map
    assert all(results[f"{n}@390"]["images"] == 1 for n in names if n.startswith(("dividend", "start")))


@needs_chromium
@pytest.mark.parametrize("name", ["dividend-on-move", "welcome", "refusal"])
def test_screenshots_light_and_dark(mails, tmp_path, name):
    from PIL import Image, ImageStat

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pages = tmp_path / "pages"
    pages.mkdir()
    page = pages / frame_file(mails[name], pages, name)
    means = {}
    for width, height in ((390, 2400), (1280, 1600)):
        for scheme, flags in (("light", []), ("dark", ["--force-dark-mode"])):
            shot = ARTIFACTS / f"{name}-{width}-{scheme}.png"
            shot.unlink(missing_ok=True)
            proc = chromium(*flags, f"--screenshot={shot}", f"--window-size={width},{height}",
                            page.as_uri(), tmp=tmp_path)
            assert shot.is_file(), proc.stderr[-2000:]
            with Image.open(shot) as img:
                assert img.size == (width, height)
                grey = img.convert("L")
                assert len(grey.getcolors(256 * 256) or []) > 20  # text and colours drawn
                means[width, scheme] = ImageStat.Stat(grey).mean[0]
    # the dark scheme is dark, the light one light (the page follows prefers-color-scheme)
    for width in (390, 1280):
        assert means[width, "light"] > 180 and means[width, "dark"] < 90, means


# ---------------------------------------------------------------- the text parts
def test_status_mail_has_one_build_line_per_company_and_legal_has_them_all(mails):
    from moderator.render import BEST_BUILDS, best_builds

    t = mails["_table"]
    game = t.load().game
    mover = game.to_move
    summary = game.legal_summary(mover)
    builds = [str(b) for b in summary.build_actions()]
    assert len(builds) > 2 * len(summary.builds)  # grouping shortens the list
    text = text_of(mails["dividend-on-move"])
    block = text[text.index("Good builds, at most two per company"):text.index("  Then one of:")]
    rows = block.splitlines()[1:]
    best = best_builds(game, mover, summary)
    assert [r.split(":")[0].strip() for r in rows] == [b["company"] for b in best]  # one line each
    assert sorted(b["company"] for b in best) == sorted(summary.builds)  # every company
    for row, entry in zip(rows, best):
        shown = row.split(":", 1)[1].split(" (+")[0].split(" | ")
        assert [x.strip() for x in shown] == [f"{b['section']} {b['type']}" for b in entry["builds"]]
        assert len(shown) <= BEST_BUILDS
        every = sum(len(fits) for fits in summary.builds[entry["company"]].values())
        assert row.endswith(f" (+{every - len(shown)})") == (every > len(shown)), row
    assert not any(line.strip().startswith("build ") for line in block.splitlines())
    example = f"{best[0]['builds'][0]['action']}; take stack"
    assert f"    {example}\n" in text  # one complete line, as an example: the first best build
    # the legal command: every build line, the complete example, the draws
    legal = text_of(mails["legal"])
    lines = [line.strip() for line in legal.splitlines()]
    assert [line for line in lines if line.startswith("build ") and "(" not in line] == builds
    assert f"{builds[0]}; take stack   (a build and its draw on ONE line)" in lines
    assert "after a build, on the same line, one of: " + " | ".join(map(str, summary.takes)) in lines
    assert "<li>" + builds[-1] + "</li>" in html_of(mails["legal"])


def _dividend_rows(text: str, number: int) -> dict[str, dict[str, int]]:
    """``{share: {name: millions}}`` read from a mail's DIVIDENDS section."""
    block = text[text.index("DIVIDENDS (by company"):]
    block = block[block.index(f"  Dividend {number}"):]
    rows: dict[str, dict[str, int]] = {}
    for line in block.splitlines()[1:]:
        if not line.startswith("    ") or line.strip().startswith("total"):
            break
        share = line.split()[0]
        rows[share] = {n: int(m) for n, m in re.findall(r"(\w+) \+(\d+)", line)}
    return rows


def test_dividends_by_company_in_the_status_mail_and_history(mails):
    game = mails["_table"].load().game
    (pay,) = game.payouts
    # the public log's line: what each player got in all
    logged = next(e for e in english(game.events) if e.startswith("Dividend 1 paid: "))
    totals = {n: int(m) for n, m in re.findall(r"(\w+) \+(\d+)", logged)}
    for name in ("dividend-on-move", "history"):
        rows = _dividend_rows(text_of(mails[name]), 1)
        assert rows == pay["paid"], name
        summed: dict[str, int] = {}
        for who in rows.values():
            for n, m in who.items():
                summed[n] = summed.get(n, 0) + m
        assert summed == totals, name
        for share, value in pay["values"].items():
            if share in rows:
                assert re.search(rf"^    {share}\s+value\s+{value}\s", text_of(mails[name]), re.M)
    html = html_of(mails["dividend-on-move"])
    assert "<h2>DIVIDENDS</h2>" in html and "<strong>Dividend 1</strong>" in html


def test_dividends_respect_hidden_money():
    """Option hidden_money: while the game runs, a reader sees every company's
    value but only their own takings (as the public log hides the amounts);
    once the game is over, everything."""
    import random

    from game_helpers import default_board
    from moderator.render import dividends, render
    from moderator.rules.engine import Game

    g = Game.new(default_board(), ["Ann", "Bob", "Cy"], 5, options={"hidden_money": True})
    rng = random.Random(5)
    while g.dividends_paid < 1:
        p = g.waiting_for()[0]
        g.push(p, g.random_action(p, rng))
    assert any("amounts hidden" in e for e in english(g.events))
    (d,) = dividends(g, "Bob")
    assert d["hidden"] is True
    for c in d["companies"]:
        assert all(n == "Bob" for n, _ in c["paid"])
        assert c["value"] == g.payouts[0]["values"].get(c["company"])
    assert d["totals"] == [("Bob", g.payouts[0]["totals"]["Bob"])]
    text = render("dividends.txt", dividends=dividends(g, "Bob"))
    assert "Ann +" not in text and "Cy +" not in text
    assert "  Dividend 1 (others' amounts hidden: option hidden_money):" in text
    while g.phase != "over":
        p = g.waiting_for()[0]
        g.push(p, g.random_action(p, rng))
    shown = dividends(g, "Bob")
    assert not any(d["hidden"] for d in shown)
    assert shown[0]["totals"] == sorted(g.payouts[0]["totals"].items())
