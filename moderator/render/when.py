"""Dates and times as players read them: in their language's locale and their time zone.

Every moment a player reads (a deadline, the end of a vacation, when a move was
received) is formatted here and nowhere else, by :func:`format_when`:

* English keeps the form pbem always wrote, which tests and players' filters
  know: ``2026-12-03 14:05 UTC``, or in a time zone ``2026-12-03 15:05 CET``.
* Every other language is formatted by Babel (CLDR) in the language's locale
  (``moderator.i18n.LOCALES``): the date of skeleton ``yMMMEd`` and the time of
  skeleton ``Hm`` joined by the locale's medium date-time pattern, then the zone's
  short name (``UTC``, ``MEZ``, ``SEČ``), or its IANA name in brackets where the
  locale has only an offset for it (``2026年12月3日周四 15:05 (Europe/Prague)``).

Every length of time a player reads (a vacation, a deadline, an extension) is
worded by :func:`format_duration`: whole units in the language's own words.

The language is the one in force (``moderator.i18n.speaking``) unless given.
"""
from __future__ import annotations

from datetime import datetime, timezone
import re
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .. import i18n

_UTC = "UTC"


def zone_of(name: str | None) -> ZoneInfo | None:
    """The ``ZoneInfo`` of the IANA name ``name`` (a player's ``timezone``), or
    None for None, an empty or an unknown name."""
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


_ETC = re.compile(r"Etc/GMT([+-])(\d{1,2})")


def zone_name(zone: str) -> str:
    """``zone`` as a player writes it: an ``Etc/GMT`` zone of a whole-hour offset
    with the sign people use (POSIX inverts it: ``"Etc/GMT-2"`` -> ``"UTC+2"``,
    ``"Etc/GMT+5"`` -> ``"UTC-5"``), any other IANA name as it is."""
    m = _ETC.fullmatch(zone or "")
    if m is None:
        return zone
    return f"UTC{'-' if m.group(1) == '+' else '+'}{int(m.group(2))}"


@lru_cache(maxsize=None)
def _patterns(locale: str):
    """The Babel ``Locale`` of ``locale``, its compiled date pattern (skeleton
    ``yMMMEd``), time pattern (skeleton ``Hm``) and medium date-time pattern
    (``{1}`` the date, ``{0}`` the time): read once per process (what
    ``babel.dates.format_skeleton`` would look up on every call)."""
    from babel import Locale
    from babel.dates import match_skeleton, parse_pattern

    loc = Locale.parse(locale)
    skeletons = loc.datetime_skeletons
    date = parse_pattern(skeletons[match_skeleton("yMMMEd", skeletons)])
    time = parse_pattern(skeletons[match_skeleton("Hm", skeletons)])
    return loc, date, time, str(loc.datetime_formats["medium"])


@lru_cache(maxsize=None)
def _seconds_pattern(locale: str):
    """The compiled time pattern of ``locale`` to the second (skeleton ``Hms``)."""
    from babel.dates import match_skeleton, parse_pattern

    skeletons = _patterns(locale)[0].datetime_skeletons
    return parse_pattern(skeletons[match_skeleton("Hms", skeletons)])


_LABELS: dict[tuple, str] = {}


def _zone_label(zone: str, locale: str, local: datetime) -> str:
    """The short name of ``zone`` at the moment ``local`` (in that zone) in
    ``locale`` (``MEZ``, ``SEČ``), or the IANA name in brackets where the locale
    has only an offset for it; remembered by zone, locale, UTC offset and
    daylight saving."""
    key = (zone, locale, local.utcoffset(), local.dst())
    label = _LABELS.get(key)
    if label is None:
        from babel.dates import parse_pattern

        short = parse_pattern("z").apply(local, _patterns(locale)[0])
        if _ETC.fullmatch(zone):
            label = zone_name(zone)
        else:
            label = f"({zone})" if short[:1] in "+-" or short.startswith("GMT") else short
        _LABELS[key] = label
    return label


def format_when(when: datetime, zone: str | None = None, language: str | None = None,
                label: bool = True, seconds: bool = False) -> str:
    """``when`` (an aware ``datetime``; a naive one is taken as UTC) as a player
    reading ``language`` (default: the language in force) reads it, in the time
    zone ``zone`` (IANA name; None or unknown: UTC).  English:
    ``2026-12-03 14:05 UTC`` / ``2026-12-03 15:05 CET``; Czech in Europe/Prague:
    ``čt 3. 12. 2026 15:05 SEČ``; Chinese in Asia/Shanghai:
    ``2026年12月3日周四 22:05 (Asia/Shanghai)``.  Never raises for an aware
    datetime and any zone name.  ``label=False``: without the zone's name (for a
    wording that names the zone itself, ``... by {{ until }} UTC``).
    ``seconds``: the time to the second (``14:05:09``; the time skeleton
    ``Hms``), where a minute decides (when a mail arrived, against a deadline)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    tz = zone_of(zone)
    local = when.astimezone(tz or timezone.utc)
    language = language if language in i18n.LANGUAGES else i18n.current()
    if language == i18n.DEFAULT:
        text = local.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
        if not label:
            return text
        if tz is None:
            return f"{text} {_UTC}"
        return f"{text} {zone_name(str(zone)) if _ETC.fullmatch(str(zone)) else local.strftime('%Z')}"
    loc, date_pattern, time_pattern, joined = _patterns(i18n.LOCALES[language])
    if seconds:
        time_pattern = _seconds_pattern(i18n.LOCALES[language])
    text = joined.format(time_pattern.apply(local, loc), date_pattern.apply(local, loc))
    if not label:
        return text
    if tz is None:
        return f"{text} {_UTC}"
    return f"{text} {_zone_label(str(zone), i18n.LOCALES[language], local)}"


def format_iso(text: str | None, zone: str | None = None, language: str | None = None) -> str:
    """:func:`format_when` of an ISO 8601 text (a game file's stamp); the text as
    it is when it is not one (``''`` for None)."""
    if not text:
        return ""
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return str(text)
    return format_when(when, zone, language)


_UNITS = (("duration-day", 86400), ("duration-hour", 3600), ("duration-minute", 60))


def format_duration(seconds: int | float, language: str | None = None, exact: bool = False) -> str:
    """A length of ``seconds`` as a player reading ``language`` (default: the
    language in force) reads it: its two largest whole units, rounded down (a
    length left is never overstated), or with ``exact`` every unit to the
    minute (a length by which a deadline moved: ``(24*60+35)*60`` -> ``1 day,
    35 minutes``, never ``1 day``), in the language's words (CLDR units and
    list pattern through Babel): ``20158*60`` -> English ``13 days, 23 hours``,
    German ``13 Tage, 23 Stunden``, Spanish ``13 días y 23 horas``, Chinese
    ``13天23小时``; ``3*86400`` -> ``3 days``; ``90*60`` -> ``1 hour, 30 minutes``;
    0 or less -> ``0 days``; under a minute -> ``0 minutes``.  Never raises for
    a number."""
    from babel.lists import format_list
    from babel.units import format_unit

    language = language if language in i18n.LANGUAGES else i18n.current()
    locale = i18n.LOCALES[language]
    rest = max(0, int(seconds))
    parts: list[tuple[str, int]] = []
    for unit, size in _UNITS:
        if rest >= size or parts:
            parts.append((unit, rest // size))
            rest %= size
        if len(parts) == 2 and not exact:
            break
    parts = [(u, n) for u, n in parts if n] or [("duration-day" if seconds <= 0 else "duration-minute", 0)]
    words = [format_unit(n, u, length="long", locale=locale) for u, n in parts]
    try:
        return format_list(words, style="unit", locale=locale)
    except KeyError:  # a locale without a unit list pattern in Babel's data (es)
        return format_list(words, style="standard", locale=locale)


_BYTE_UNITS = (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024))
"""The binary (IEC 80000-13) units of ``byte_size``: CLDR has only the decimal
kB, MB, GB (``digital-kilobyte``: 1000 bytes), and the limits (``max_size``,
default 262,144 bytes) are whole binary units, as the README and docs write them."""


def byte_size(size: int, language: str | None = None) -> str:
    """A mail's size in bytes as ``language`` (default: the language in force)
    writes it with a unit: the number by Babel (the locale's decimal sign and
    grouping, one decimal at most), then the IEC binary unit, the same in every
    language (``_BYTE_UNITS``): ``byte_size(28698579)`` is ``'27.4 MiB'`` in
    English, ``'27,4 MiB'`` in German; ``262144`` is ``'256 KiB'``; under 1024,
    grouped bytes in CLDR's unit (``'999 byte'``)."""
    from babel.numbers import format_decimal
    from babel.units import format_unit

    locale = i18n.babel_locale(language)
    for unit, factor in _BYTE_UNITS:
        if size >= factor:
            return f"{format_decimal(size / factor, format='#,##0.#', locale=locale)} {unit}"
    return format_unit(size, "digital-byte", length="short", format="#,##0", locale=locale)


def number(value: int, language: str | None = None) -> str:
    """A whole number as ``language`` (default: the language in force) groups its
    digits, by Babel: ``number(64000)`` is ``'64,000'`` in English, ``'64.000'``
    in German."""
    from babel.numbers import format_decimal

    return format_decimal(value, locale=i18n.babel_locale(language))
