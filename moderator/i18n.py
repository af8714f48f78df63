"""The languages players read: catalogues, the language in force, locale formats.

pbem speaks English (the source language of every template), Spanish, German,
Czech and Simplified Chinese.  The wording stays in the templates; a translation
is a gettext catalogue per language (``moderator/locale/LANG/LC_MESSAGES/pbem.po``,
Babel's layout), never a copy of a template.  The message ids are extracted from
the templates with Babel (``pybabel extract -F babel.cfg``; ``docs/languages.md``
gives the steps), and a test fails when a message id lacks a translation in any
language.

The language in force is a context variable, as in Django's ``translation.override``:
whoever renders a mail for one recipient wraps it in ``with speaking(LANG):``, and
every template and words macro rendered inside uses that language's catalogue
(Jinja's ``i18n`` extension with new-style gettext: ``{% trans %}``, ``_()``,
plural forms from the catalogue's ``Plural-Forms``).  Nothing outside the
templates reads it; the rules engine never does.

Catalogues are read from the ``.po`` files themselves (compiled in memory once per
process and language), so there is no compiled ``.mo`` to go stale.
"""
from __future__ import annotations

import contextlib
import contextvars
import gettext
import io
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

LANGUAGES: dict[str, str] = {
    "en": "English",
    "es": "Español",
    "de": "Deutsch",
    "cs": "Čeština",
    "zh": "简体中文",
}
"""Language code -> the language's own name, in the order they are listed to players."""

DEFAULT = "en"
"""The source language of the templates, and every game's default unless set."""

LOCALES: dict[str, str] = {"en": "en_US", "es": "es_ES", "de": "de_DE", "cs": "cs_CZ", "zh": "zh_Hans_CN"}
"""Language code -> the Babel locale its dates and numbers are formatted in."""

DOMAIN = "pbem"
"""The gettext domain: ``moderator/locale/LANG/LC_MESSAGES/pbem.po``."""

_NAMES: dict[str, str] = {
    # code, English and own names, and the common tags a player may write
    "en": "en", "english": "en", "eng": "en", "inglés": "en", "ingles": "en", "englisch": "en",
    "angličtina": "en", "anglictina": "en", "英语": "en", "英文": "en",
    "es": "es", "spanish": "es", "español": "es", "espanol": "es", "castellano": "es",
    "spa": "es", "spanisch": "es", "španělština": "es", "spanelstina": "es", "西班牙语": "es",
    "de": "de", "german": "de", "deutsch": "de", "ger": "de", "deu": "de", "alemán": "de",
    "aleman": "de", "němčina": "de", "nemcina": "de", "德语": "de", "德文": "de",
    "cs": "cs", "cz": "cs", "czech": "cs", "čeština": "cs", "cestina": "cs", "česky": "cs",
    "cesky": "cs", "ces": "cs", "cze": "cs", "checo": "cs", "tschechisch": "cs", "捷克语": "cs",
    "zh": "zh", "chinese": "zh", "中文": "zh", "简体中文": "zh", "汉语": "zh", "chino": "zh",
    "chinesisch": "zh", "čínština": "zh", "cinstina": "zh", "zho": "zh", "chi": "zh",
    "zh-cn": "zh", "zh_cn": "zh", "zh-hans": "zh", "zh_hans": "zh", "zh-hans-cn": "zh",
    "中国话": "zh", "普通话": "zh",
}


def fold(text: str) -> str:
    """``text`` as words are compared: NFKC (full-width forms), no accents, lower
    case, ``ß`` as ``ss``, runs of spaces as one (``"Construír"`` → ``"construir"``,
    ``"Weiß"`` → ``"weiss"``, ``"ＫＣＣ"`` → ``"kcc"``)."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return " ".join(text.casefold().split())


def normalize(tag: str | None) -> str | None:
    """The language code (a key of :data:`LANGUAGES`) that ``tag`` names: a code
    (``es``, ``ES``), a regional tag (``es-MX``, ``de_AT``, ``zh-CN``), or the
    language's English or own name (``Spanish``, ``Deutsch``, ``čeština``,
    ``中文``), in any case, accents or full-width forms (``ＥＳ``, ``ČEŠTINA``,
    ``espanol``; :func:`fold`).  None for anything
    else, and for Traditional Chinese (``zh-TW``, ``zh-Hant``), which pbem does
    not write; :func:`names_of_languages` is what near matches are chosen from."""
    if not tag:
        return None
    t = fold(tag)
    folded = _folded_names()
    if t in folded:
        return folded[t]
    if t.replace("_", "-").startswith(("zh-tw", "zh-hk", "zh-hant")):
        return None
    head = t.replace("_", "-").split("-")[0]
    return head if head in LANGUAGES else None


@lru_cache(maxsize=1)
def _folded_names() -> dict[str, str]:
    return {fold(name): code for name, code in _NAMES.items()}


def names_of_languages() -> dict[str, str]:
    """Every name and tag :func:`normalize` reads, as written in its table
    (``"Deutsch"`` as ``"deutsch"``), to its code: what a refusal's near
    matches of an unknown language are chosen from."""
    return dict(_NAMES)


def locale_dir() -> Path:
    """The folder of the catalogues (``moderator/locale``, package data)."""
    return Path(__file__).resolve().parent / "locale"


def catalogue_path(language: str) -> Path:
    """``moderator/locale/LANGUAGE/LC_MESSAGES/pbem.po``."""
    return locale_dir() / language / "LC_MESSAGES" / f"{DOMAIN}.po"


@lru_cache(maxsize=None)
def translations(language: str) -> gettext.NullTranslations:
    """The gettext translations of ``language``: English (the source language)
    and a language without a catalogue file get ``NullTranslations`` (the message
    ids themselves, English plural rule); every other is the ``.po`` catalogue
    compiled in memory by Babel, its plural forms from its ``Plural-Forms``
    header.  Fuzzy entries are left out, as gettext does.  KeyError for a code
    not in :data:`LANGUAGES`."""
    if language not in LANGUAGES:
        raise KeyError(f"pbem has no language {language!r}; it has {', '.join(LANGUAGES)}")
    path = catalogue_path(language)
    if language == DEFAULT or not path.is_file():
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        catalog = read_po(f, locale=LOCALES[language], domain=DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return gettext.GNUTranslations(buf)


_current: contextvars.ContextVar[str] = contextvars.ContextVar("pbem_language", default=DEFAULT)


def current() -> str:
    """The language in force (:func:`speaking`), ``en`` outside any."""
    return _current.get()


@contextlib.contextmanager
def speaking(language: str | None) -> Iterator[str]:
    """Render in ``language`` inside the ``with`` block: every template, words
    macro and locale format reads it.  None or an unknown code means the default
    (English).  Nests; the previous language is back after the block."""
    code = language if language in LANGUAGES else DEFAULT
    token = _current.set(code)
    try:
        yield code
    finally:
        _current.reset(token)


def gettext_(message: str) -> str:
    """``message`` translated into the language in force."""
    return translations(_current.get()).gettext(message)


def ngettext_(singular: str, plural: str, n: int) -> str:
    """The plural form for ``n`` in the language in force (Czech has three forms,
    Chinese one; the catalogue's ``Plural-Forms`` decides)."""
    return translations(_current.get()).ngettext(singular, plural, n)


def pgettext_(context: str, message: str) -> str:
    """``message`` in ``context`` (to tell apart one English word with two
    meanings) translated into the language in force."""
    return translations(_current.get()).pgettext(context, message)


def npgettext_(context: str, singular: str, plural: str, n: int) -> str:
    """:func:`ngettext_` with a context."""
    return translations(_current.get()).npgettext(context, singular, plural, n)


def install(env) -> None:
    """Give a Jinja environment (with the ``jinja2.ext.i18n`` extension) the
    gettext callables of the language in force, new-style (``%(name)s``
    placeholders filled by Jinja, autoescaping respected)."""
    env.install_gettext_callables(gettext_, ngettext_, newstyle=True,
                                  pgettext=pgettext_, npgettext=npgettext_)
    env.globals["html_lang"] = html_lang


HTML_LANG: dict[str, str] = {"en": "en", "es": "es", "de": "de", "cs": "cs", "zh": "zh-Hans"}
"""Language code -> the BCP 47 tag of an HTML page or mail part in that language."""


def html_lang() -> str:
    """The ``lang`` attribute of an HTML page in the language in force
    (``zh-Hans`` for Simplified Chinese): the Jinja global ``html_lang()``."""
    return HTML_LANG.get(current(), current())


def babel_locale(language: str | None = None):
    """The Babel ``Locale`` of ``language`` (default: the language in force)."""
    from babel import Locale

    return Locale.parse(LOCALES[language or current()])


def display_width(text: str) -> int:
    """The columns ``text`` takes in a fixed-width font: a wide or full-width
    character (East Asian Width W or F: CJK, e.g. "张") two, a combining mark none,
    any other one (docs/languages.md: aligned tables)."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
               for ch in text)


def pad(text: object, width: int) -> str:
    """``text`` with spaces after it up to ``width`` columns (``display_width``),
    as ``"%-14s"`` does for text of one column a character; longer text as it is.
    The Jinja filter ``pad`` (``{{ p.name|pad(14) }}``)."""
    text = str(text)
    return text + " " * max(0, width - display_width(text))
