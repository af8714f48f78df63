"""The on-move status mail on a phone (issue 26), in every language: real mails of
a real five-language game in its late game (``tests/phone_game.py``), shown by
Debian's headless Chromium at 390 px (a phone) and 1280 px (a desktop), in the
light and the dark colour scheme (prefers-color-scheme).  The test fails when

* any element reaches beyond the viewport (the page scrolls sideways);
* the sections are not in the order a player needs them, top to bottom: what
  happened, what to do (one complete example line), the hand (``id="hand"``), the
  position (the players' table), the board picture (``id="board"``), then the
  companies' table (their values and trains are also in the picture's legend);
* at 390 px the hand ends below 1,300 CSS px or the picture starts below 1,700 px.

Screenshots are left in ``tests/artifacts/phone/`` (gitignored)."""
from __future__ import annotations

import html as _html
import json
import re
from email.message import EmailMessage
from pathlib import Path

import pytest

from browser import needs_chromium, run_chromium
from phone_game import LANGUAGES, shared_late_game
from test_mail_html import frame_file, html_of, text_of

ARTIFACTS = Path(__file__).parent / "artifacts" / "phone"
HAND_BY = 1300
"""At 390 px the hand's section ends within this many CSS px of the top."""
BOARD_BY = 1700
"""At 390 px the board picture starts within this many CSS px of the top."""
WIDTHS = (390, 1280)


@pytest.fixture(scope="module")
def late(tmp_path_factory):
    """(table, {language: on-move status mail}) of the late game."""
    return shared_late_game(tmp_path_factory)


PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>probe</title></head><body style="margin:0">
%(frames)s
<script>
var results = {};
function box(doc, w, sel) {
  var e = doc.querySelector(sel);
  if (!e) return null;
  var r = e.getBoundingClientRect();
  return {top: r.top + w.scrollY, bottom: r.bottom + w.scrollY};
}
function measure(frame) {
  var r = {};
  try {
    var doc = frame.contentDocument, w = frame.contentWindow;
    r.viewport = w.innerWidth;
    r.dark = w.matchMedia("(prefers-color-scheme: dark)").matches;
    r.scrollWidth = doc.documentElement.scrollWidth;
    r.tooWide = Array.prototype.filter.call(doc.querySelectorAll("body *"), function (e) {
      var b = e.getBoundingClientRect();
      return b.right > w.innerWidth + 0.5 || b.left < -0.5;
    }).map(function (e) { return e.tagName + "." + e.className + ":" + (e.textContent || "").slice(0, 30); });
    r.happened = box(doc, w, "ul");
    r.move = box(doc, w, ".move");
    r.example = box(doc, w, ".move code.order");
    r.examples = doc.querySelectorAll(".move code.order").length;
    r.hand = box(doc, w, "#hand");
    var tables = doc.querySelectorAll("table.position");
    r.position = Array.prototype.map.call(tables, function (t) {
      var b = t.getBoundingClientRect(); return {top: b.top + w.scrollY, bottom: b.bottom + w.scrollY}; });
    r.board = box(doc, w, "img#board");
    var img = doc.getElementById("board");
    r.boardLoaded = !!img && img.complete && img.naturalWidth > 0;
    r.height = doc.documentElement.scrollHeight;
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


def measure(mails: dict[str, EmailMessage], tmp: Path, dark: bool) -> dict[str, dict]:
    """``{"LANG@WIDTH": measurements}`` of each mail's HTML part in Chromium."""
    pages = tmp / ("dark" if dark else "light")
    pages.mkdir()
    names = {lang: frame_file(m, pages, lang) for lang, m in mails.items()}
    frames = "".join(
        f'<iframe data-key="{n}@{w}" src="{page}" style="width:{w}px;height:2400px;border:0"></iframe>'
        for n, page in names.items() for w in WIDTHS)
    probe = pages / "_probe.html"
    probe.write_text(PROBE % {"frames": frames}, encoding="utf-8")
    flags = ["--force-dark-mode"] if dark else []
    proc = run_chromium("--hide-scrollbars", *flags, "--allow-file-access-from-files",
                        "--window-size=1300,2400", "--dump-dom", probe.as_uri(), tmp=tmp)
    found = re.search(r'<pre id="results">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-3000:]
    return json.loads(_html.unescape(found.group(1)))


@needs_chromium
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_move_mail_order_and_fit_in_every_language(late, tmp_path, scheme):
    _, mails = late
    assert sorted(mails) == sorted(LANGUAGES.values())
    results = measure(mails, tmp_path, dark=scheme == "dark")
    assert sorted(results) == sorted(f"{lang}@{w}" for lang in mails for w in WIDTHS)
    for key, r in results.items():
        lang, width = key.split("@")
        width = int(width)
        assert "error" not in r, (key, r)
        assert r["viewport"] == width and r["dark"] is (scheme == "dark"), (key, r)
        # nothing reaches beyond the viewport: tables wrap or stack
        assert r["scrollWidth"] <= width, (key, r["scrollWidth"])
        assert r["tooWide"] == [], (key, r["tooWide"])
        # top to bottom: what happened, what to do, the hand, the position, the board
        assert r["examples"] == 1, key  # ONE complete line to copy
        assert len(r["position"]) == 2, key  # players, companies
        players, companies = r["position"]
        tops = [r["happened"]["top"], r["move"]["top"], r["example"]["top"], r["hand"]["top"],
                players["top"], r["board"]["top"], companies["top"]]
        assert tops == sorted(tops), (key, tops)
        assert r["move"]["bottom"] <= r["hand"]["top"] <= r["hand"]["bottom"] <= players["top"], key
        # the picture right below the players (its legend has the companies' values
        # and trains); the companies' table after it
        assert players["bottom"] <= r["board"]["top"] <= r["board"]["bottom"] <= companies["top"], key
        assert r["boardLoaded"], key
        if width == 390:
            assert r["hand"]["bottom"] <= HAND_BY, (key, r["hand"])
            assert r["board"]["top"] <= BOARD_BY, (key, r["board"])


@needs_chromium
def test_screenshots_in_every_language(late, tmp_path):
    """Screenshots of each language's on-move mail at 390 px (the first 1,800 px:
    down to the picture) and 1280 px, light and dark, in ``tests/artifacts/phone``;
    the dark scheme is dark and the light one light."""
    from PIL import Image, ImageStat

    _, mails = late
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pages = tmp_path / "pages"
    pages.mkdir()
    for lang, m in mails.items():
        page = pages / frame_file(m, pages, lang)
        for width, height in ((390, 1800), (1280, 1400)):
            means = {}
            for scheme, flags in (("light", []), ("dark", ["--force-dark-mode"])):
                shot = ARTIFACTS / f"{lang}-{width}-{scheme}.png"
                shot.unlink(missing_ok=True)
                proc = run_chromium("--hide-scrollbars", *flags, f"--screenshot={shot}",
                                    f"--window-size={width},{height}", page.as_uri(), tmp=tmp_path)
                assert shot.is_file(), proc.stderr[-2000:]
                with Image.open(shot) as img:
                    assert img.size == (width, height)
                    means[scheme] = ImageStat.Stat(img.convert("L")).mean[0]
            assert means["light"] > 170 and means["dark"] < 100, (lang, width, means)


def test_the_text_part_follows_the_same_order(late):
    """The plain part: what happened, what to do with one complete line, the hand,
    the position (players, companies); no board in words (the HTML part has the
    picture)."""
    from moderator import i18n

    t, mails = late
    for lang, m in mails.items():
        text = text_of(m)
        with i18n.speaking(lang):
            heads = [i18n.gettext_("WHAT HAPPENED"), i18n.gettext_("One complete line, for example:"),
                     i18n.gettext_("YOUR HAND (only you see this)"),
                     i18n.gettext_("PLAYERS (in turn order; * = on move)"),
                     i18n.gettext_("COMPANIES (value = 1 + trains on the board, in millions)"),
                     i18n.gettext_("SHARES")]
            board = i18n.gettext_("THE BOARD")
        lines = [line.strip() for line in text.splitlines()]
        at = [lines.index(h) for h in heads]  # each a line of its own
        assert at == sorted(at), (lang, at)
        assert board not in lines, lang
        # the HTML part has no board in words either, and its picture is #board
        assert re.search(r'<img id="board" src="cid:', html_of(m)), lang


def test_best_builds_are_few_ranked_and_the_legal_answer_has_them_all(late):
    """At most three builds per company, chosen as ``render.best_builds``
    documents (a card of the type before the joker, then a section reaching a city
    new to the company); the example line is the first of them."""
    from moderator.render import BEST_BUILDS, best_builds
    from moderator.rules.components import JOKER

    t, mails = late
    rec = t.load()
    g = rec.game
    mover = g.to_move
    s = g.legal_summary(mover)
    best = best_builds(g, mover, s)
    assert [b["company"] for b in best] == sorted(
        s.builds, key=lambda c: (-g.invested[mover].get(c, 0), list(s.builds).index(c)))
    for entry in best:
        c = entry["company"]
        every = [(sid, t, card) for sid, fits in s.builds[c].items() for t, card in fits]
        assert len(entry["builds"]) == min(BEST_BUILDS, len(every))
        assert entry["more"] == len(every) - len(entry["builds"])
        reach = g.network.network_cities(c)

        def rank(item):
            sid, t, card = item
            return (card == JOKER, all(x in reach for x in g.board.sections[sid].cities), sid, t)

        ordered = sorted(every, key=rank)
        sections = [item for i, item in enumerate(ordered) if item[0] not in {x[0] for x in ordered[:i]}]
        chosen = (sections + [item for item in ordered if item not in sections])[:BEST_BUILDS]
        assert len({sid for sid, _, _ in chosen}) == min(len(chosen), len(s.builds[c]))  # sections first
        assert [(b["section"], b["action"].card) for b in entry["builds"]] == [(sid, card) for sid, _, card in chosen]
    # the English mail of the mover (if English) or any: its rows have at most BEST_BUILDS builds a company
    text = text_of(mails["en"])
    block = text[text.index("Good builds, at most two per company"):text.index("  Then one of:")]
    for row in block.splitlines()[1:]:
        assert row.count(" | ") <= BEST_BUILDS - 1, row
