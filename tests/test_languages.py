"""The translation catalogues (issue 15): complete, current and well-formed.

The message ids are extracted from the templates here, with Babel and the project's
own ``babel.cfg`` (the same extraction as ``pybabel extract``), and compared with
the committed ``moderator/locale/pbem.pot`` and with every language's ``.po``:

- the ``.pot`` is current (an id added to a template and not extracted fails);
- every id has a translation in every language, none fuzzy, none empty, one per
  plural form of the language (Czech three, Chinese one);
- a translation uses the same named placeholders as its id (``%(player)s``), so
  no value is dropped or invented;
- Babel's own checks (python-format) pass.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

babel = pytest.importorskip("babel")
from babel.messages.extract import extract_from_dir  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

from moderator import i18n  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TRANSLATED = [code for code in i18n.LANGUAGES if code != i18n.DEFAULT]
PLACEHOLDER = re.compile(r"%\((\w+)\)[sdrif]")
NPLURALS = {"es": 2, "de": 2, "cs": 3, "zh": 1}
"""Plural forms per language, from the CLDR rules Babel ships (independent of the
catalogues): Czech one / few (2-4) / other, Chinese one form."""


def _mapping():
    from babel.messages import frontend

    with (ROOT / "babel.cfg").open(encoding="utf-8") as f:
        if hasattr(frontend, "parse_mapping_cfg"):
            return frontend.parse_mapping_cfg(f, filename=str(ROOT / "babel.cfg"))
        return frontend.parse_mapping(f)  # Babel < 2.14


@pytest.fixture(scope="module")
def extracted() -> dict[tuple[str, str | None], tuple]:
    """(msgid, context) -> the id as extracted (a str, or (singular, plural))."""
    method_map, options_map = _mapping()
    found: dict[tuple[str, str | None], tuple] = {}
    for _file, _line, message, _comments, context in extract_from_dir(
            str(ROOT), method_map, options_map, comment_tags=("Translators:",)):
        key = message[0] if isinstance(message, tuple) else message
        found[(key, context)] = message
    return found


def _catalog(path: Path, locale: str | None = None):
    with path.open("rb") as f:
        return read_po(f, locale=locale)


def test_the_templates_have_message_ids(extracted):
    # the order guide and the status mail are translated: a sure id of each
    assert len(extracted) > 300


def test_the_pot_is_current(extracted):
    pot = _catalog(i18n.locale_dir() / "pbem.pot")
    committed = {(m.id[0] if isinstance(m.id, tuple) else m.id, m.context) for m in pot if m.id}
    missing = sorted(k[0] for k in set(extracted) - committed)
    stale = sorted(k[0] for k in committed - set(extracted))
    assert not missing and not stale, (
        f"moderator/locale/pbem.pot is not current ({len(missing)} ids missing, {len(stale)} "
        f"gone; first: {(missing or stale)[:3]}): run the extraction of docs/languages.md")


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_is_translated(extracted, language):
    catalog = _catalog(i18n.catalogue_path(language), i18n.LOCALES[language])
    assert catalog.num_plurals == NPLURALS[language]
    untranslated, fuzzy, wrong_forms, placeholders = [], [], [], []
    for (key, context), message in extracted.items():
        entry = catalog.get(key, context=context)
        if entry is None or not entry.string or (
                isinstance(entry.string, tuple) and not all(entry.string)):
            untranslated.append(key)
            continue
        if entry.fuzzy:
            fuzzy.append(key)
        ids = message if isinstance(message, tuple) else (message,)
        forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if isinstance(message, tuple) and len(forms) != NPLURALS[language]:
            wrong_forms.append(key)
        allowed = set().union(*(PLACEHOLDER.findall(i) for i in ids))
        # every form keeps the values every English form has (a form may leave out
        # the number itself, as English "one share" may)
        needed = set.intersection(*(set(PLACEHOLDER.findall(i)) for i in ids)) - {"count", "num", "n"}
        for form in forms:
            used = set(PLACEHOLDER.findall(form))
            if not used <= allowed or not needed <= used:
                placeholders.append((key, form))
    assert not untranslated, f"{language}: {len(untranslated)} untranslated, first {untranslated[:5]}"
    assert not fuzzy, f"{language}: {len(fuzzy)} fuzzy, first {fuzzy[:5]}"
    assert not wrong_forms, f"{language}: wrong number of plural forms: {wrong_forms[:5]}"
    assert not placeholders, f"{language}: placeholders differ: {placeholders[:3]}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_babel_checks_pass(language):
    catalog = _catalog(i18n.catalogue_path(language), i18n.LOCALES[language])
    errors = [(m.id, [str(e) for e in errs]) for m, errs in catalog.check() if errs]
    assert not errors, errors[:5]


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_catalogue_is_read_at_run_time(language):
    """A translated id comes back translated, and its plural forms follow the
    language: Czech 1 / 3 / 5 are three different forms."""
    i18n.translations.cache_clear()
    catalog = _catalog(i18n.catalogue_path(language), i18n.LOCALES[language])
    entry = next(m for m in catalog if m.id and not isinstance(m.id, tuple) and m.string and m.string != m.id)
    with i18n.speaking(language):
        assert i18n.gettext_(entry.id) == entry.string
    plural = next((m for m in catalog if isinstance(m.id, tuple) and all(m.string)), None)
    if plural is not None:
        with i18n.speaking(language):
            got = {n: i18n.ngettext_(plural.id[0], plural.id[1], n) for n in (1, 3, 5)}
        expected_forms = {"es": (0, 1, 1), "de": (0, 1, 1), "cs": (0, 1, 2), "zh": (0, 0, 0)}[language]
        assert [got[n] for n in (1, 3, 5)] == [plural.string[i] for i in expected_forms]
