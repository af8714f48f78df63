"""Names a player types, matched as people type them, and the nearest ones.

Everything a mail names (a time zone, a language, a player, a track card; the
order words, companies and cities go through the same folding in
:mod:`moderator.orders.parser`) is compared by :func:`moderator.orders.lexicon.fold`:
NFKC (full-width ``ＫＣＣ`` is ``KCC``), accents stripped (``Zoë`` is ``zoe``),
case folded.  When nothing matches, :func:`nearest` gives the closest names
(``difflib``, by the folded forms) for the refusal to offer.

No clock, no game state: the installed zone names
(``zoneinfo.available_timezones``) and Babel's CLDR city names are read once
per process, when a time zone is first looked up.
"""
from __future__ import annotations

import difflib
import functools
import re
from typing import Iterable, Mapping
from zoneinfo import available_timezones

from .lexicon import fold

NEAREST = 3
"""How many near matches a refusal offers at most."""
CUTOFF = 0.6
"""The least ``difflib`` ratio (0-1, of the folded forms) of a near match."""


def key(text: str) -> str:
    """``text`` as a name is compared: :func:`~moderator.orders.lexicon.fold`
    with ``_``, ``-`` and spaces alike (``"New York"`` / ``"new_york"`` /
    ``"NEW-YORK"`` → ``"new_york"``)."""
    return "_".join(fold(str(text).replace("_", " ").replace("-", " ")).split())


def index(names: Iterable[str]) -> dict[str, str]:
    """``{key(name): name}`` for ``names`` (the first of two with one key wins)."""
    out: dict[str, str] = {}
    for name in names:
        out.setdefault(key(name), name)
    return out


def find(typed: str, names: Iterable[str] | Mapping[str, str]) -> str | None:
    """The one of ``names`` that ``typed`` names regardless of case, accents and
    full-width forms (``find("zoe", ["Ann", "Zoë"])`` → ``"Zoë"``), or None.
    ``names`` may be an :func:`index` already."""
    table = names if isinstance(names, Mapping) else index(names)
    return table.get(key(typed))


def nearest(typed: str, names: Iterable[str] | Mapping[str, str], n: int = NEAREST,
            cutoff: float = CUTOFF) -> list[str]:
    """Up to ``n`` of ``names`` closest to ``typed`` (``difflib.get_close_matches``
    on the folded forms, ratio at least ``cutoff``), closest first, as the names
    are written: ``nearest("Deutch", ["Deutsch", "English"])`` → ``["Deutsch"]``.
    ``[]`` when none is close or ``typed`` is blank."""
    table = names if isinstance(names, Mapping) else index(names)
    k = key(typed)
    if not k:
        return []
    return [table[m] for m in difflib.get_close_matches(k, list(table), n=n, cutoff=cutoff)]


# ------------------------------------------------------------------ time zones

@functools.lru_cache(maxsize=1)
def _zones() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """``(full, places)``: every IANA zone ``zoneinfo`` knows by :func:`key`
    (``"europe/prague"`` → ``"Europe/Prague"``), and by the key of a place the
    zones so named: the last part of a zone's name (``"prague"``, ``"eastern"``
    → ``US/Eastern``, ``Canada/Eastern``) and the zone's city in each language
    pbem writes (Unicode CLDR's exemplar cities through Babel: ``"praha"``,
    ``"prag"``, ``"nueva_york"``, ``"上海"``; the canonical zone of an alias)."""
    zones = sorted(available_timezones())
    full = index(zones)
    places: dict[str, list[str]] = {}
    area = [z for z in zones if "/" in z and not z.startswith(("Etc/", "posix/", "right/"))]
    for z in area:
        places.setdefault(key(z.rsplit("/", 1)[1]), []).append(z)
    for k, found in _cldr_cities(tuple(area)).items():
        mine = places.setdefault(k, [])
        mine.extend(z for z in found if z not in mine)
    return full, {k: tuple(v) for k, v in places.items()}


@functools.lru_cache(maxsize=1)
def _canonical() -> dict[str, str]:
    """CLDR's canonical zone of each alias (``Europe/Kiev`` → ``Europe/Kyiv``,
    ``US/Eastern`` → ``America/New_York``) that ``zoneinfo`` knows."""
    from babel.core import get_global

    known = set(available_timezones())
    return {a: z for a, z in get_global("zone_aliases").items() if z in known}


def _cldr_cities(zones: tuple[str, ...]) -> dict[str, list[str]]:
    """``{key(city): [zone]}``: the exemplar city CLDR gives each of ``zones``
    in each language of :data:`moderator.i18n.LOCALES` (Babel's
    ``get_timezone_location``), each zone as CLDR's canonical one of its alias
    (``US/Eastern`` → ``America/New_York``) when ``zoneinfo`` has that one.
    Read once (about a second)."""
    from babel.dates import get_timezone, get_timezone_location

    from ..i18n import LOCALES

    aliases = _canonical()
    out: dict[str, list[str]] = {}
    for z in zones:
        canonical = aliases.get(z, z)
        try:
            tz = get_timezone(z)
        except LookupError:
            continue
        for locale in LOCALES.values():
            try:
                city = get_timezone_location(tz, locale=locale, return_city=True)
            except (LookupError, ValueError):
                continue
            found = out.setdefault(key(city), [])
            if canonical not in found:
                found.append(canonical)
    return out


_OFFSET_RE = re.compile(r"(?:utc|gmt)?\s*([+-])\s*(\d{1,2})(?::?(\d\d))?")


def _offset_zone(text: str) -> tuple[bool, str | None]:
    """``(is an offset, its zone)`` for ``UTC+2``, ``GMT-5``, ``utc +02:00``:
    the ``Etc/GMT`` zone of that whole-hour offset (whose sign POSIX inverts:
    UTC+2 is ``Etc/GMT-2``), None for an offset no such zone has (``UTC+5:30``,
    ``UTC+15``)."""
    m = _OFFSET_RE.fullmatch(fold(text))
    if m is None:
        return False, None
    sign, hours, minutes = m.group(1), int(m.group(2)), int(m.group(3) or 0)
    if minutes or not (hours <= 12 if sign == "-" else hours <= 14):
        return True, None
    if hours == 0:
        return True, "UTC"
    return True, f"Etc/GMT{'-' if sign == '+' else '+'}{hours}"


def timezone_named(typed: str) -> str | None:
    """The IANA time zone ``typed`` names (``zoneinfo.available_timezones``):
    the full name in any case, with spaces for ``_`` and without accents
    (``"europe/prague"``, ``"US/eastern"``, ``"America/New York"``), or a place
    that names one zone, in any language pbem writes (``"prague"``, ``"Praha"``,
    ``"São Paulo"``, ``"new york"``, ``"Nueva York"``, ``"上海"``), or a
    whole-hour offset (``"UTC+2"`` → ``"Etc/GMT-2"``, ``"GMT-5"`` →
    ``"Etc/GMT+5"``: POSIX signs); written as ``zoneinfo`` writes it
    (``"Europe/Prague"``).  None for anything
    else (an unknown name, a place of several zones)."""
    text = str(typed).strip()
    if not text or text.startswith("/") or ".." in text:
        return None
    full, places = _zones()
    hit = full.get(key(text))
    if hit:
        return hit
    offset, zone = _offset_zone(text)
    if offset:
        return zone if zone in full.values() else None
    found = {_canonical().get(z, z) for z in places.get(key(text), ())}
    return found.pop() if len(found) == 1 else None  # "kiev": Europe/Kiev and Kyiv are one


def timezone_nearest(typed: str, n: int = NEAREST) -> list[str]:
    """Up to ``n`` IANA zones near ``typed``, closest first, for a refusal: the
    zones of a place of several (``"Eastern"``), else the full names and places
    nearest it (``"Europe/Prag"`` → ``Europe/Prague``, ``"Pargue"`` →
    ``Europe/Prague``).  ``[]`` when none is close."""
    full, places = _zones()
    k = key(typed)
    if not k or _offset_zone(str(typed).strip())[0]:
        return []  # an offset of no zone (UTC+5:30): no name is near it
    if k in places:
        return list(places[k][:n])
    out: list[str] = []
    for m in difflib.get_close_matches(k, list(full), n=n, cutoff=CUTOFF):
        out.append(full[m])
    tail = k.rsplit("/", 1)[-1]
    for m in difflib.get_close_matches(tail, list(places), n=n, cutoff=0.75):
        out.extend(places[m])
    return list(dict.fromkeys(out))[:n]
