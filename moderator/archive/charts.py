"""The archive site's charts (issue 28): the numbers of a game or of the
statistics (``site.chart_data``, ``site.statistics``) drawn as ``render.charts``
charts, with the words the templates give (translated there: words at the edge).

The templates call these as Jinja globals (``site.environment``):
``money_chart``, ``values_chart`` and ``dividends_chart`` on a game's page,
``record_chart`` on the statistics page, then show each with the macro
``figure`` of ``templates/archive/charts.html`` (the SVG, its caption and its
table of numbers).  A word given by a template is markup (autoescaped
gettext): it is turned back into text here and escaped once when drawn.
"""
from __future__ import annotations

from typing import Any, Sequence

from markupsafe import Markup

from ..render.charts import (BAR_COLOUR, SERIES_COLOURS, SERIES_SHAPES, Bar, Chart, Series, bar_chart,
                             company_style, line_chart)


def _text(word: Any) -> str:
    """A template's word as plain text (markup unescaped)."""
    return Markup(word).unescape() if isinstance(word, Markup) else str(word)


def money_chart(money: Sequence[tuple[str, Sequence[int | None]]], *, title: str, desc: str, x_title: str,
                y_title: str, start: str, caption: str = "") -> Chart:
    """Each player's money (millions of dollars) at the start and after each
    dividend (``chart_data``'s ``money``), a line per player in
    ``SERIES_COLOURS`` with a marker of its own (``SERIES_SHAPES``) at every
    point; x labels ``start``, ``1``, ``2``, ..."""
    series = [Series(name, tuple(points), SERIES_COLOURS[i % len(SERIES_COLOURS)],
                     SERIES_SHAPES[i % len(SERIES_SHAPES)], marks_every_point=True)
              for i, (name, points) in enumerate(money)]
    n = len(money[0][1]) if money else 1
    labels = [_text(start)] + [str(i) for i in range(1, n)]
    return line_chart("money", _text(title), _text(desc), _text(x_title), _text(y_title), labels, series,
                      caption=_text(caption))


def values_chart(values: dict[str, Any], *, title: str, desc: str, x_title: str, y_title: str, start: str,
                 marks: Sequence[tuple[float, str]], marks_title: str, caption: str = "") -> Chart:
    """Each company's dividend value (millions) at the start and after each round
    (``chart_data``'s ``values``), a line per company in its colour with its shape
    at the end; ``marks``: ``(x, label)`` of the dividends (the template words
    them); x labels ``start``, then the round of each point."""
    series = []
    for abbr, points in values["series"]:
        colour, shape = company_style(abbr)
        series.append(Series(abbr, tuple(points), colour, shape))
    turns = values["turns"]
    n_rounds = [_text(start)] + [str(-(-t // max(values.get("players", 1), 1))) for t in turns[1:]]
    return line_chart("values", _text(title), _text(desc), _text(x_title), _text(y_title), n_rounds, series,
                      marks=[(x, _text(m)) for x, m in marks], marks_title=_text(marks_title),
                      caption=_text(caption))


def dividends_chart(dividends: dict[str, Any], *, title: str, desc: str, label_title: str,
                    part_titles: Sequence[str], total_title: str, caption: str = "") -> Chart:
    """Per company (``chart_data``'s ``dividends``) a bar of the amounts it paid
    (millions) at each dividend, laid end to end, in its colour and shape."""
    bars = []
    for abbr, amounts in dividends["bars"]:
        colour, shape = company_style(abbr)
        bars.append(Bar(abbr, tuple(amounts), colour, shape))
    return bar_chart("dividends", _text(title), _text(desc), _text(label_title), bars,
                     [_text(t) for t in part_titles], _text(total_title), caption=_text(caption))


def record_chart(chart_id: str, items: Sequence[Any], *, title: str, desc: str,
                 label_title: str, value_title: str, label: str | None = None, value: str | None = None,
                 companies: bool = False, decimals: int = 0, caption: str = "") -> Chart:
    """A generic chart of labelled numbers (a player's wins, a company's average
    value): ``items`` ``(label, number)`` pairs in order, or mappings whose keys
    ``label`` and ``value`` give them (a row of ``site.statistics``); a number
    None (none yet) is left out; a bar each, in ``BAR_COLOUR``, or with
    ``companies`` in the company's colour and shape (the label its
    abbreviation)."""
    if label is not None and value is not None:
        items = [(item[label], item[value]) for item in items]
    bars = []
    for label, value in items:
        if value is None:
            continue
        colour, shape = company_style(label) if companies else (BAR_COLOUR, None)
        bars.append(Bar(str(label), (value,), colour, shape))
    return bar_chart(chart_id, _text(title), _text(desc), _text(label_title), bars, [_text(value_title)],
                     _text(value_title), caption=_text(caption), decimals=decimals)


GLOBALS = {"money_chart": money_chart, "values_chart": values_chart, "dividends_chart": dividends_chart,
           "record_chart": record_chart}
"""The Jinja globals of the archive's environment."""
