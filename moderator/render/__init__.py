"""Rendering mails with Jinja2 templates (``templates/``).

Every template gets only what its recipient may see: ``status_context`` builds the
context from ``Game.view(player)`` (the public position plus that player's own hand),
never from the full state.  The mails are plain text (``*.txt``); their HTML
alternative is laid out by ``templates/mail/*.html`` (``to_html``): a status mail
and the welcome from the same context in tables (company colours inline), every
other mail from its text (``text_blocks``: headings, paragraphs, lists).  No SVG,
no scripts; what must survive clients that drop ``<style>`` is styled inline, and
the style block adds the dark scheme and the phone widths.  A status mail's map is
an inline PNG below the position (``to_html`` images, ``MAP_HERE``).
"""
from __future__ import annotations

import re
from functools import cached_property
from collections.abc import Sequence
from typing import Any

from . import templates
from .events import event_text
from .orders import localize
# the environments, their loader and the track card filter live in templates.py; their names stay here
from .templates import (MAP_HERE, TRACK_TYPES, _loader, card_text, environment, html_environment,  # noqa: F401
                        packaged_templates, render, render_html, template_dirs, template_loader)

from ..rules.actions import Build
from ..rules.components import COMPANIES, UP
from ..rules.engine import Game
from ..rules.options import IMAGINARY, ruleset as ruleset_of



def position_key(view: dict[str, Any], you: dict[str, Any] | None = None) -> tuple:
    """The key (``{% shared %}``, ``templates.SharedExtension``) of the position
    as a status mail shows it below the reader's hand (players, companies,
    shares, track deck, dividends: ``templates/position.txt``,
    ``mail/status.html``): ``view`` (``Game.view``) without the reader's own
    part ``you`` and the log (``log``), which those parts never read; with the
    reader's name and money when the view hides the players' money (option
    hidden_money: the reader's row shows their own), else None there.  The
    same for every reader of one position in a game without hidden money."""
    public = {k: v for k, v in view.items() if k not in ("you", "log")}
    hidden = any(p.get("money") is None for p in view.get("players", ()))
    mine = (you.get("name"), you.get("money")) if hidden and you else None
    return public, mine


templates.FILTERS.update(event=event_text, order=localize)  # the filters the environments word with


_HEADING = re.compile(r"^[^\W\d_][\w ,'()/&:.=*-]*(?:[^\W\d_]|[):])$")
"""A heading line's shape; with ``_is_heading`` its letters are capitals in any
alphabet (``CÓMO RESPONDER``, ``JAK ODPOVĚDĚT``): translated headings stay headings."""


def _is_heading(line: str) -> bool:
    """``line`` (not indented) is a heading: the ``_HEADING`` shape, more than three
    letters, none of them lower case, no ``_``.  Scripts without capitals (Chinese)
    never make a heading this way."""
    letters = [c for c in line if c.isalpha()]
    return (bool(_HEADING.match(line)) and "_" not in line and len(letters) > 3
            and all(c.isupper() for c in letters))
_ITEM = re.compile(r"^\s+(?:[-*>]\s)?")
_REFLOW = 60
"""A line of a text paragraph at least this long was wrapped by the template:
the next line continues it (the HTML part reflows it); a shorter one ends a line."""


def text_blocks(text: str) -> list[dict[str, Any]]:
    """The blocks of a plain-text mail for its HTML part (``mail/text.html``):
    ``{"kind": "heading" | "para" | "list" | "rule" | "map", ...}``.  A paragraph
    (text between blank lines) whose first line is in capitals (``WHAT HAPPENED``)
    starts with a heading; indented lines are list ``items`` (their ``- ``, ``* ``
    or ``> `` mark dropped; a ``> `` line keeps ``quote``); other lines are a
    paragraph's ``lines``, a line of 60 characters or more joined with the next
    (the template wrapped it); a line of dashes is a ``rule``; the line
    ``MAP_HERE`` is where the pictures go (``map``)."""
    blocks: list[dict[str, Any]] = []
    for chunk in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")):
        lines = [line.rstrip() for line in chunk.split("\n") if line.strip()]
        while lines:
            line = lines[0]
            if line == MAP_HERE:
                blocks.append({"kind": "map"})
                lines.pop(0)
            elif set(line.strip()) == {"-"} and len(line.strip()) > 8:
                blocks.append({"kind": "rule"})
                lines.pop(0)
            elif not line[:1].isspace() and _is_heading(line):
                blocks.append({"kind": "heading", "text": line.rstrip(":")})
                lines.pop(0)
            elif line[:1].isspace():
                items = []
                while lines and lines[0][:1].isspace() and lines[0] != MAP_HERE:
                    raw = lines.pop(0)
                    mark = _ITEM.match(raw)
                    items.append({"text": raw[mark.end() if mark else 0:].strip(),
                                  "quote": raw.lstrip().startswith(">")})
                blocks.append({"kind": "list", "items": items})
            else:
                para: list[str] = []
                while lines and not lines[0][:1].isspace() and lines[0] != MAP_HERE:
                    raw = lines.pop(0)
                    if para and len(para[-1]) >= _REFLOW and not para[-1].endswith(":"):
                        para[-1] += " " + raw.strip()
                    else:
                        para.append(raw.strip())
                blocks.append({"kind": "para", "lines": para})
    return blocks


def to_html(text: str, images: Sequence[tuple[str, str, int]] = (),
            template: str = "mail/text.html", **context: Any) -> str:
    """The HTML alternative of a mail, rendered by ``template`` (``templates/mail/``;
    its layout is ``mail/base.html``: a viewport meta tag, light and dark colour
    schemes, nothing wider than a 390-px phone).  The default template lays out
    the plain ``text`` (``text_blocks``: headings, paragraphs, lists); a status
    mail's template (``mail/status.html``) gets its own ``context``.  ``images``:
    inline pictures ``(cid, alt, width)`` shown as ``<img src="cid:...">`` (the
    cid without angle brackets) at most ``width`` pixels wide and never wider than
    the screen, where the text has the line ``MAP_HERE`` (else below the text)."""
    figures = [{"cid": cid.strip("<>"), "alt": alt, "width": int(width)} for cid, alt, width in images]
    return render_html(template, blocks=_Blocks(text, bool(figures)), figures=figures, **context)


class _Blocks(Sequence):
    """``text_blocks(text)`` (with a ``map`` block at the end when ``figures``
    and the text has no ``MAP_HERE``), worked out when a template first reads
    it: the layouts of a status mail and the welcome have their own context
    and never read ``blocks``."""

    def __init__(self, text: str, figures: bool):
        self._text, self._figures = text, figures

    @cached_property
    def _blocks(self) -> list[dict[str, Any]]:
        blocks = text_blocks(self._text)
        if self._figures and not any(b["kind"] == "map" for b in blocks):
            blocks.append({"kind": "map"})
        return blocks

    def __getitem__(self, index):
        return self._blocks[index]

    def __len__(self) -> int:
        return len(self._blocks)


def css_colour(rgb: tuple[int, int, int]) -> str:
    """``#rrggbb`` of an RGB triple."""
    return "#%02x%02x%02x" % tuple(rgb)


def build_groups(summary: Any, first: str | None = None) -> list[dict[str, Any]]:
    """The builds of a ``LegalSummary`` grouped, one entry per company (in the
    summary's order, company ``first`` first): ``{"company", "groups":
    [{"sections": [...], "types": [...]}], "text"}``.  Sections whose free space
    types (and cards) are the same form one group, e.g. ``KCC: DEN-KCY, KCY-STL
    (white); OMA-KCY (plain)``; a type played with the joker reads ``joker as
    white`` (the game's notation: the filter ``order`` words it)."""
    out = []
    for company, sections in sorted(summary.builds.items(), key=lambda item: item[0] != first):
        groups: dict[tuple[str, ...], list[str]] = {}
        for sid, fits in sections.items():
            key = tuple(t if card != "joker" else f"joker as {t}" for t, card in fits)
            groups.setdefault(key, []).append(sid)
        parts = [{"sections": sids, "types": list(key)} for key, sids in groups.items()]
        text = "; ".join(f"{', '.join(g['sections'])} ({', '.join(g['types'])})" for g in parts)
        out.append({"company": company, "groups": parts, "text": f"{company}: {text}"})
    return out


def example_build(summary: Any, first: str | None = None) -> str:
    """One complete BUILD order line of a ``LegalSummary`` with a draw, e.g.
    ``build KCC DEN-KCY white; take stack`` (the first build, of company ``first``
    when it has one, the stack when it may be drawn from, else the first draw);
    ``""`` when no BUILD is possible."""
    builds = summary.build_actions(first)
    if not builds or not summary.takes:
        return ""
    take = next((t for t in summary.takes if t.source == "stack"), summary.takes[0])
    return f"{builds[0]}; {take}"


BEST_BUILDS = 2
"""How many builds of each company a status mail shows (``best_builds``); the
``legal`` command lists them all."""


def best_builds(game: Game, player: str, summary: Any, limit: int = BEST_BUILDS) -> list[dict[str, Any]]:
    """The few best builds of each company for ``player``'s status mail (issue 26:
    the full list is the ``legal`` answer): ``[{"company", "builds": [{"action"
    (a ``Build`` without draw), "section", "type" (the space's track type, or
    ``joker as TYPE``)}], "more" (how many builds of the company are left out)}]``.

    A build of a company always adds one train, so one million, to its value
    (rules: Company value); the builds differ in what they leave for later, and
    are ranked by it: (1) played with a track card of the space's type before the
    joker (the joker stays for a space no card fits); (2) a section reaching a city
    new to the company's network before one inside it (the network grows: more
    sections to build on next; the built-in player's preference too,
    ``players.heuristic``); (3) the section's id, then the type; a section's
    second type only after every section's first.  At most ``limit`` per company.
    Companies: those ``player`` has invested most in first (their value raises
    the reader's dividends: rules: Dividends), then in table order."""
    from ..rules.components import JOKER

    board, net = game.board, game.network
    invested = game.invested.get(player, {})
    order = {c: i for i, c in enumerate(COMPANIES)}
    out = []
    for company in sorted(summary.builds, key=lambda c: (-invested.get(c, 0), order.get(c, 99))):
        reach = net.network_cities(company)
        ranked = []
        for sid, fits in summary.builds[company].items():
            new_city = any(c not in reach for c in board.sections[sid].cities)
            for t, card in fits:
                ranked.append(((card == JOKER, not new_city, sid, t), sid, t, card))
        ranked.sort()
        firsts = {}
        for item in ranked:
            firsts.setdefault(item[1], item)  # each section's best type first
        ranked = list(firsts.values()) + [item for item in ranked if firsts[item[1]] is not item]
        builds = [{"action": Build(company, sid, card, t if card == JOKER else None), "section": sid,
                   "type": t if card != JOKER else f"joker as {t}"}
                  for _, sid, t, card in ranked[:limit]]
        out.append({"company": company, "builds": builds, "more": len(ranked) - len(builds)})
    return out


def best_example(best: list[dict[str, Any]], summary: Any) -> str:
    """One complete BUILD line for the status mail: the first of ``best``
    (``best_builds``) with a draw from the stack when it may be drawn from, else
    the first draw; ``""`` when no BUILD is possible."""
    if not best or not summary.takes:
        return ""
    take = next((t for t in summary.takes if t.source == "stack"), summary.takes[0])
    return f"{best[0]['builds'][0]['action']}; {take}"


def dividends(game: Game, player: str) -> list[dict[str, Any]]:
    """The dividends paid so far, broken down by company, as ``player`` may see
    them (rules: Dividends): ``[{"number", "hidden", "companies": [{"company",
    "value", "paid": [(name, millions), ...]}], "totals": [(name, millions)]}]``
    from the engine's ``payouts`` (``values``, ``paid`` {share: {name: money}},
    ``totals``); companies that paid nobody are left out; ``UP`` has no value
    (None).  With option hidden_money, while the game runs and for every dividend
    but the final one (as the public log: ``Game.pay_dividend``), each company
    shows only ``player``'s own takings and the totals only theirs (``hidden``
    True)."""
    hide = bool(game.options.get("hidden_money")) and game.phase != "over"
    out = []
    for pay in game.payouts:
        hidden = hide and pay["dividend"] < game.final_dividend
        companies = []
        for share, who in pay["paid"].items():
            rows = [(n, m) for n, m in who.items() if not hidden or n == player]
            companies.append({"company": share, "value": pay["values"].get(share),
                              "paid": rows})
        totals = [(n, m) for n, m in pay["totals"].items() if not hidden or n == player]
        out.append({"number": pay["dividend"], "hidden": hidden, "companies": companies,
                    "totals": totals})
    return out


def legal_summary(game: Game, player: str) -> dict[str, list[str]]:
    """Short lists of what ``player`` may order now, for the status mail: ``starts``
    (initial investment), ``redraw`` (dead track cards that may be replaced first,
    option dead_track_redraw), ``builds`` (one line per placement and card kind: the
    ``legal`` command's full list), ``build_groups`` (the builds grouped, one entry per
    company: ``build_groups``), ``best`` (the few best builds of each company:
    ``best_builds``), ``example`` (one complete BUILD line with its draw, the first
    of ``best``: ``best_example``), ``takes``
    (share draws after a build), ``invest`` (share kinds in hand), ``pass`` (discard
    choices when neither BUILD nor INVEST is possible).  Empty lists when it is not
    their move.  A formatter over ``Game.legal_summary`` (``LegalSummary``)."""
    out: dict[str, Any] = {"starts": [], "builds": [], "takes": [], "invest": [], "pass": [],
                           "redraw": [], "build_groups": [], "best": [], "example": ""}
    summary = game.legal_summary(player)
    if not summary.on_move:
        return out
    if summary.phase == "initial":
        out["starts"] = sorted({str(a) for a in summary.starts})
        return out
    out["redraw"] = [f"redraw {c}" for c in summary.redraw]
    out["builds"] = [str(b) for b in summary.build_actions()]
    out["build_groups"] = build_groups(summary)
    out["best"] = best_builds(game, player, summary)
    out["example"] = best_example(out["best"], summary)
    out["takes"] = [str(t) for t in summary.takes]
    out["invest"] = list(summary.invest)
    out["pass"] = [f"pass; discard {p.discard}" for p in summary.passes if p.discard]
    return out


def status_context(record: Any, player: str, events: list[str]) -> dict[str, Any]:
    """Context of a status mail to ``player``: their view of the game (public
    position + own hand), the events since the last mail, what they can order now,
    their secret, the dividends as they may see them (``dividends``), the company
    colours and invested share counts of the HTML part, ``imaginary_took`` (a
    two-player game is over: the imaginary third player took the display, the
    stack and the UP pile, rules: Two players) and ``up_may_start`` (the ruleset
    lets the UP share be the initial investment); ``bot_seats``: the names of the
    seats the built-in player plays (``Player.bot``), listed below the players;
    ``shared_position``: the key of the position below the hand
    (``shared_position``)."""
    game: Game = record.game
    view = game.view(player)
    me = record.player_by_name(player)
    hand = list(view["you"]["shares"])
    if view["you"]["initial_choice"] in hand:
        hand.remove(view["you"]["initial_choice"])  # set aside, revealed with the others
    ctx = {
        "game_id": record.id,
        "view": view,
        "hand_after_choice": hand,
        "you": view["you"],
        "events": list(events),
        "legal": legal_summary(game, player),
        "secret": me.secret,
        "companies": COMPANIES,
        "board": game.board,
        "UP": UP,
        "headline": headline(view),
        "dividends": dividends(game, player),
        "imaginary_took": game.phase == "over" and IMAGINARY in game.money,
        "up_may_start": ruleset_of(game.ruleset).up_may_start,
        "colours": company_colours(),
        "invested": invested_counts(view),
        "bot_seats": [p.name for p in record.players if p.bot],
    }
    ctx["shared_position"] = shared_position(ctx)
    return ctx


def shared_position(ctx: dict[str, Any]) -> str:
    """The key (a text: ``repr``) by which a status mail's context ``ctx``
    (``status_context``) shares its position below the hand with the other
    status mails of the same position and language (``{% shared %}`` in
    ``templates/position.txt`` and ``mail/status.html``): everything those
    parts read, ``position_key`` of the view and ``bot_seats``,
    ``imaginary_took``, ``dividends`` (as the reader may see them),
    ``invested`` and ``colours``.  Made once per mail: the three parts of a
    mail that share it read it as it is."""
    return repr((position_key(ctx["view"], ctx["you"]), ctx["bot_seats"], ctx["imaginary_took"],
                 ctx["dividends"], ctx["invested"], ctx["colours"]))


def company_colours() -> dict[str, str]:
    """Each company's colour for the HTML part, ``{abbr: "#rrggbb"}`` (the map's
    ``COMPANY_COLOURS``, rules: Components)."""
    from .board_map import COMPANY_COLOURS  # Pillow: only where mails are built

    return {c: css_colour(rgb) for c, rgb in COMPANY_COLOURS.items()}


def invested_counts(view: dict[str, Any]) -> dict[str, int]:
    """How many shares of each company (and UP) the players have invested, from a
    view's ``players[].invested``."""
    out: dict[str, int] = {}
    for p in view["players"]:
        for share, n in p["invested"].items():
            out[share] = out.get(share, 0) + n
    return out


def headline(view: dict[str, Any]) -> str:
    """The first line of a status mail (not its Subject, which is the same for the
    whole game): whose move it is and the turn, or the end, worded by
    ``templates/words/headlines.txt`` in the language in force."""
    from .words import word

    if view["phase"] == "over":
        return word("headlines", "game_over")
    if view["phase"] == "initial":
        if view["you"]["on_move"]:
            return word("headlines", "choose_initial")
        return word("headlines", "waiting_initial")
    if view["you"]["on_move"]:
        return word("headlines", "your_turn", turn=view["turn"] + 1)
    return word("headlines", "to_move", player=view["to_move"], turn=view["turn"] + 1)


