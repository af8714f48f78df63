"""Rendering mails with Jinja2 templates (``templates/``).

Every template gets only what its recipient may see: ``status_context`` builds the
context from ``Game.view(player)`` (the public position plus that player's own hand),
never from the full state.  Templates are plain text (``*.txt``); the HTML
alternative is the same text, escaped, in ``<pre>`` blocks with inline styles (it
renders alike in Gmail and Outlook: no SVG, no scripts, no style sheets); a status
mail's map is an inline PNG between them (``to_html`` images, ``MAP_HERE``).
"""
from __future__ import annotations

import html
import importlib.resources
import os
from functools import lru_cache
from pathlib import Path
from collections.abc import Sequence
from typing import Any

import jinja2

try:
    from importlib.resources.abc import Traversable
except ImportError:  # Python 3.10
    from importlib.abc import Traversable

from ..rules.components import COMPANIES, UP
from ..rules.engine import Game


def packaged_templates() -> Traversable | None:
    """The templates shipped with pbem, found through ``importlib.resources``: the
    package data ``moderator/templates/`` of an installed copy (every install mode:
    venv, ``--user``, pipx, wheel), else the ``templates/`` folder beside
    ``moderator/`` in a source tree or an editable install (where setup.cfg maps
    the data package ``moderator.templates`` to that folder).  None when neither
    exists."""
    root = importlib.resources.files("moderator")
    packaged = root.joinpath("templates")
    if packaged.is_dir():
        return packaged
    if isinstance(root, Path):  # a source tree: the folder holding setup.cfg and moderator/
        source = root.parent
        if (source / "setup.cfg").is_file() and (source / "templates").is_dir():
            return source / "templates"
    return None


def template_dirs() -> list[Traversable]:
    """Where templates are looked for, in order: ``$PBEM_TEMPLATES`` (an operator's
    own wording; a template missing there comes from the shipped ones), then the
    shipped templates (:func:`packaged_templates`).  Only folders that exist."""
    dirs: list[Traversable] = []
    override = os.environ.get("PBEM_TEMPLATES")
    if override and Path(override).is_dir():
        dirs.append(Path(override))
    packaged = packaged_templates()
    if packaged is not None:
        dirs.append(packaged)
    return dirs


def _loader(root: Traversable) -> jinja2.BaseLoader:
    """A Jinja loader over one template folder: a file system loader (it notices
    edited templates) where the folder is one, as in every install mode, else one
    reading through ``importlib.resources`` (a zip)."""
    if isinstance(root, Path):
        return jinja2.FileSystemLoader(str(root))

    def load(name: str) -> str | None:
        node = root.joinpath(*name.split("/"))
        return node.read_text(encoding="utf-8") if node.is_file() else None

    return jinja2.FunctionLoader(load)


def template_loader() -> jinja2.BaseLoader:
    """One Jinja loader over every template folder (``template_dirs``: an operator's
    ``$PBEM_TEMPLATES`` first, then the shipped ones), for the mail templates and
    the archive site alike.  RuntimeError when no folder is found."""
    dirs = template_dirs()
    if not dirs:
        raise RuntimeError("pbem templates not found: the package data moderator/templates/ is "
                           "missing (reinstall pbem, or set PBEM_TEMPLATES to a templates folder); "
                           "`pbem doctor` tells more")
    return jinja2.ChoiceLoader([_loader(d) for d in dirs])


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The Jinja environment (plain text: no autoescape; undefined variables fail)."""
    return jinja2.Environment(
        loader=template_loader(),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(name: str, **context: Any) -> str:
    """Render template ``name`` with ``context``."""
    return environment().get_template(name).render(**context)


MAP_HERE = "\x00pbem-map\x00"
"""A line of its own in a rendered status mail where its HTML part shows the map
(``to_html``); ``Post.message`` takes it out of the plain text."""

_PRE = ("<pre style=\"font-family:Consolas,'Courier New',monospace;font-size:13px;"
        "line-height:1.35;white-space:pre-wrap;color:#1a1a1a;\">")


def to_html(text: str, images: Sequence[tuple[str, str, int]] = ()) -> str:
    """The HTML alternative of a plain-text mail: escaped text in a ``<pre>`` with
    inline styles only.  ``images``: inline pictures ``(cid, alt, width)``, shown
    as ``<img src="cid:...">`` (the cid without angle brackets) at most ``width``
    pixels wide and never wider than the screen, where the text has the line
    ``MAP_HERE`` (else below the text)."""
    before, sep, after = text.partition(MAP_HERE + "\n")
    if not sep:
        before, sep, after = text.partition(MAP_HERE)
    figures = "".join(
        f"<p style=\"margin:8px 0;\"><img src=\"cid:{html.escape(cid.strip('<>'))}\" "
        f"alt=\"{html.escape(alt)}\" width=\"{int(width)}\" "
        f"style=\"display:block;max-width:100%;height:auto;border:0;\"></p>"
        for cid, alt, width in images)
    body = _PRE + html.escape(before) + "</pre>"
    if figures:
        body += figures
        if after:
            body += _PRE + html.escape(after) + "</pre>"
    elif after:  # a marker without a picture: one block, as before
        body = _PRE + html.escape(before + after) + "</pre>"
    return "<!DOCTYPE html><html><body style=\"margin:0;padding:12px;\">" + body + "</body></html>"


def legal_summary(game: Game, player: str) -> dict[str, list[str]]:
    """Short lists of what ``player`` may order now, for the status mail: ``starts``
    (initial investment), ``redraw`` (dead track cards that may be replaced first,
    option dead_track_redraw), ``builds`` (one line per placement and card kind), ``takes``
    (share draws after a build), ``invest`` (share kinds in hand), ``pass`` (discard
    choices when neither BUILD nor INVEST is possible).  Empty lists when it is not
    their move.  A formatter over ``Game.legal_summary`` (``LegalSummary``)."""
    out: dict[str, list[str]] = {"starts": [], "builds": [], "takes": [], "invest": [], "pass": [],
                                 "redraw": []}
    summary = game.legal_summary(player)
    if not summary.on_move:
        return out
    if summary.phase == "initial":
        out["starts"] = sorted({str(a) for a in summary.starts})
        return out
    out["redraw"] = [f"redraw {c}" for c in summary.redraw]
    out["builds"] = [str(b) for b in summary.build_actions()]
    out["takes"] = [str(t) for t in summary.takes]
    out["invest"] = list(summary.invest)
    out["pass"] = [f"pass; discard {p.discard}" for p in summary.passes if p.discard]
    return out


def status_context(record: Any, player: str, events: list[str]) -> dict[str, Any]:
    """Context of a status mail to ``player``: their view of the game (public
    position + own hand), the events since the last mail, what they can order now,
    and their secret."""
    game: Game = record.game
    view = game.view(player)
    me = record.player_by_name(player)
    hand = list(view["you"]["shares"])
    if view["you"]["initial_choice"] in hand:
        hand.remove(view["you"]["initial_choice"])  # set aside, revealed with the others
    return {
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
    }


def headline(view: dict[str, Any]) -> str:
    """The first line of a status mail (not its Subject, which is the same for the
    whole game): whose move it is and the turn, or the end."""
    if view["phase"] == "over":
        return "game over"
    if view["phase"] == "initial":
        if view["you"]["on_move"]:
            return "choose your initial investment"
        return "waiting for initial investments"
    if view["you"]["on_move"]:
        return f"your turn (turn {view['turn'] + 1})"
    return f"{view['to_move']} to move (turn {view['turn'] + 1})"


