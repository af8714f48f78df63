"""Benchmark of a status mail in each language against English (issue 15).

    python benchmarks/bench_languages.py [N] [--seed S]

renders one status mail (its text, ``templates/status.txt``, and its HTML part,
``templates/mail/status.html`` through ``render.to_html``; not the map's PNG
(benchmarks/bench_map.py measures it)) of a 4-player game late in play, as one player with
a deadline and a time zone sees it, N times per language (default 40), the
languages interleaved round by round so that a busy machine slows them alike.
Each language is rendered inside ``moderator.i18n.speaking`` with whatever
catalogue ``moderator/locale/LANG/LC_MESSAGES/pbem.po`` exists (none: the
English message ids; the catalogue is compiled once per process, before the
timing).  Prints ``status_render_en_median_ms`` and, per language, the median
of the per-round ratios ``status_render_LANG_vs_en: VALUE`` (target: at most
1.2), and whether the language had a catalogue.

``--synthetic`` measures with full catalogues before the translators' exist: the
message ids are extracted from the templates as ``docs/languages.md`` says
(``pybabel extract -F babel.cfg``, into a temporary folder) and every one is
"translated" into itself in guillemets (plural forms as many as the language
has), and the catalogues are read from there.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator import i18n  # noqa: E402
from moderator.moderation.notify import status_text  # noqa: E402
from moderator.render import to_html  # noqa: E402
from moderator.rules.board import Board  # noqa: E402
from moderator.rules.engine import Game  # noqa: E402
from moderator.store.gamefile import GameRecord, Player, default_clock, default_settings  # noqa: E402

PLAYERS = ["Ana", "Bob", "Jana", "Dee"]
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def played(seed: int, actions: int = 10_000) -> Game:
    """A game after up to ``actions`` random legal actions, stopped before its end."""
    g = Game.new(Board.default(), PLAYERS, seed)
    rng = random.Random(seed)
    for _ in range(actions):
        p = g.waiting_for()[0]
        nxt = g.copy()
        nxt.push(p, nxt.random_action(p, rng))
        if nxt.phase == "over":
            break
        g = nxt
    return g


def record_of(game: Game) -> GameRecord:
    """The game as the moderator holds it: players with addresses, a 72-hour
    deadline whose wait started an hour ago, the reader in a time zone."""
    players = [Player(n, f"{n.lower()}@example.org", "abcdefgh") for n in PLAYERS]
    players[0].timezone = "Europe/Madrid"
    return GameRecord(id="bench", game=game, players=players, board_ref="default",
                      settings=default_settings(), clock=default_clock((NOW - timedelta(hours=1)).isoformat()))


def synthetic_catalogues(folder: Path) -> None:
    """Extract the message ids of the templates into ``folder/pbem.pot`` and write
    ``folder/LANG/LC_MESSAGES/pbem.po`` for every language but English, each id
    translated into ``«id»`` (every plural form)."""
    from babel import Locale
    from babel.messages.frontend import CommandLineInterface
    from babel.messages.pofile import read_po, write_po

    root = Path(__file__).resolve().parent.parent
    pot = folder / "pbem.pot"
    here = os.getcwd()
    os.chdir(root)
    try:
        CommandLineInterface().run(["pybabel", "-q", "extract", "-F", "babel.cfg", "-o", str(pot), "."])
    finally:
        os.chdir(here)
    for lang, locale in i18n.LOCALES.items():
        if lang == i18n.DEFAULT:
            continue
        with pot.open("rb") as f:
            catalog = read_po(f, locale=Locale.parse(locale), domain=i18n.DOMAIN)
        for message in catalog:
            if not message.id:
                continue
            if isinstance(message.id, (list, tuple)):
                forms = catalog.num_plurals
                message.string = tuple(f"«{message.id[0 if n == 0 else 1]}»" for n in range(forms))
            else:
                message.string = f"«{message.id}»"
        out = folder / lang / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
        out.parent.mkdir(parents=True)
        with out.open("wb") as f:
            write_po(f, catalog)


def render_once(record: GameRecord, reader: Player, events: list[str]) -> int:
    """One status mail's text and HTML part in the language in force; returns
    their length in characters (so that the work cannot be skipped)."""
    text, html_template, ctx = status_text(record, reader, events, moderator_address="pbem@example.org")
    html = to_html(text, [("map.bench@example.org", "Map of the board", 640)], html_template, **ctx)
    return len(text) + len(html)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("renders", nargs="?", type=int, default=40, help="renders per language (default 40)")
    ap.add_argument("--seed", type=int, default=3, help="seed of the game (default 3)")
    ap.add_argument("--synthetic", action="store_true",
                    help="full catalogues made from the templates' message ids (see above)")
    args = ap.parse_args(argv)
    if not args.synthetic:
        return measure(args)
    folder = Path(tempfile.mkdtemp(prefix="pbem-bench-locale-"))
    try:
        synthetic_catalogues(folder)
        i18n.locale_dir = lambda: folder  # read by i18n.catalogue_path
        i18n.translations.cache_clear()
        ids = sum(1 for line in (folder / "pbem.pot").read_text(encoding="utf-8").splitlines()
                  if line.startswith("msgid ")) - 1
        print(f"synthetic_message_ids: {ids}")
        return measure(args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(args: argparse.Namespace) -> int:
    """Time the renders (see the module) and print the figures."""
    record = record_of(played(args.seed))
    reader = record.player_by_name(record.game.waiting_for()[0])
    events = record.game.events[-6:]
    languages = list(i18n.LANGUAGES)
    for lang in languages:  # warm up: templates compiled, catalogues read
        with i18n.speaking(lang):
            render_once(record, reader, events)
    times: dict[str, list[float]] = {lang: [] for lang in languages}
    for _ in range(args.renders):
        for lang in languages:
            with i18n.speaking(lang):
                t = time.perf_counter()
                render_once(record, reader, events)
                times[lang].append(time.perf_counter() - t)
    print(f"status_render_en_median_ms: {statistics.median(times['en']) * 1000:.2f}")
    for lang in languages:
        if lang == i18n.DEFAULT:
            continue
        ratio = statistics.median(a / b for a, b in zip(times[lang], times["en"]))
        print(f"status_render_{lang}_vs_en: {ratio:.3f}")
        print(f"status_render_{lang}_catalogue: {'yes' if i18n.catalogue_path(lang).is_file() else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
