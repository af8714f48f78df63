"""The Jinja environments and where their templates are found (``templates/``).

Below every other module of ``render/``: it imports nothing of them, so
``words`` (the macro catalogues), ``events`` (the log's sentences) and
``board_map`` read the templates through it without a circle.  The Jinja
filters that word what other modules know (``event``: ``events.event_text``;
``order``: ``render.orders.localize``) are given by the package
(``moderator/render/__init__.py`` puts them in ``FILTERS`` when it is
imported, which is before any module of ``render/`` runs); ``card`` and
``pad`` are here.
"""
from __future__ import annotations

import importlib.resources
import itertools
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension

try:
    from importlib.resources.abc import Traversable
except ImportError:  # Python 3.10
    from importlib.abc import Traversable

from .. import i18n
from ..i18n import pad

FILTERS: dict[str, Callable[[Any], str]] = {}
"""The Jinja filters of both environments given from above: ``{name: function}``
(``event``, ``order``; filled by the package ``moderator.render``)."""


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


SHARED_CACHE = 64
"""How many rendered fragments (``SharedExtension``, a few KB each) the process
keeps: a cycle renders one game's status mails in a row, each of its
fragments once per language (two a template, two templates a mail)."""

_SHARED: dict[tuple[str, str, str], Any] = {}
_PARSES = itertools.count()  # a template parsed anew (edited, reloaded) never meets the old one's parts


class SharedExtension(Extension):
    """The tag ``{% shared KEY, ... %}...{% endshared %}``: the part between
    rendered once and its output reused by every later render of the same
    template site (template, line, and the parse: a template edited and
    loaded again starts anew) in the same language with an equal key
    (a text as it is, other values by their ``repr``: plain data only; a
    value without a ``repr`` of its own never repeats, so it only defeats
    the sharing; None: the part is rendered every time, nothing kept).  The
    key must hold everything the part reads besides the language, its
    templates and the filters (which word only by the language); ``set``
    inside the part stays inside it.  A status mail's position (players,
    companies, shares, dividends) is the same for every reader of one
    language (``position_key``), and rendering it was most of the mail's text
    and HTML parts.  The last ``SHARED_CACHE`` outputs are kept."""

    tags = {"shared"}

    def parse(self, parser: Any) -> nodes.Node:
        lineno = next(parser.stream).lineno
        key = parser.parse_tuple()
        body = parser.parse_statements(("name:endshared",), drop_needle=True)
        site = nodes.Const(f"{parser.name}:{lineno}:{next(_PARSES)}")
        return nodes.CallBlock(self.call_method("_shared", [site, key]), [], [], body).set_lineno(lineno)

    def _shared(self, site: str, key: Any, caller: Callable[[], str]) -> str:
        if key is None:  # nothing to share by: rendered as if the tag were not there
            return caller()
        slot = (site, i18n.current(), key if isinstance(key, str) else repr(key))
        out = _SHARED.get(slot)
        if out is None:
            out = caller()
            _SHARED[slot] = out
            while len(_SHARED) > SHARED_CACHE:
                del _SHARED[next(iter(_SHARED))]
        return out


def _extensions() -> list[Any]:
    """The extensions of both mail environments: ``{% trans %}``, ``{% shared %}``."""
    return ["jinja2.ext.i18n", SharedExtension]


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The Jinja environment (plain text: no autoescape; undefined variables fail;
    ``{% trans %}`` in the language in force, ``moderator.i18n.speaking``)."""
    env = jinja2.Environment(
        loader=template_loader(),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        extensions=_extensions(),
    )
    i18n.install(env)
    env.filters.update(FILTERS)  # event, order
    env.filters["card"] = card_text
    env.filters["pad"] = pad
    return env


TRACK_TYPES = ("plain", "black", "white", "black-white", "joker")


def card_text(card: Any) -> str:
    """A track card type (``plain``, ``black``, ``white``, ``black-white``,
    ``joker``) as the language in force names it (the catalogue's ``track card``
    values, which templates/words/illegal.txt uses too); anything else as it is.
    The Jinja filter ``card``."""
    text = str(card)
    if text in TRACK_TYPES:
        return i18n.pgettext_("track card", text)
    return text


def render(name: str, **context: Any) -> str:
    """Render template ``name`` with ``context``."""
    return environment().get_template(name).render(**context)


MAP_HERE = "\x00pbem-map\x00"
"""A line of its own in a rendered status mail where its HTML part shows the map
(``to_html``); ``Post.message`` takes it out of the plain text."""


@lru_cache(maxsize=1)
def html_environment() -> jinja2.Environment:
    """The Jinja environment of the HTML parts (``templates/mail/*.html``):
    autoescaped; undefined variables fail; ``{% trans %}`` in the language in
    force (``moderator.i18n.speaking``)."""
    env = jinja2.Environment(
        loader=template_loader(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=_extensions(),
    )
    i18n.install(env)
    env.filters.update(FILTERS)  # event, order
    env.filters["card"] = card_text
    return env


def render_html(name: str, **context: Any) -> str:
    """Render the HTML template ``name`` (e.g. ``mail/status.html``) with ``context``."""
    return html_environment().get_template(name).render(**context)
