"""``pbem archive --out DIR``: a static site of every game, built from the Jinja
templates in ``templates/archive/`` (HTML, autoescaped), needing no server.

Layout of DIR::

    index.html              every game (a table sortable by a small inline script)
    stats.html              statistics across games (players, companies)
    style.css               the one style sheet
    games/GAME/index.html   one game: players, standings, options, payouts, pictures, history
    games/GAME/move-N.html  one page per order (previous / next links), N from 1
    games/GAME/*.png        the board (public view) after each dividend and at the end
    manifest.json           per game file its sha256 and what the index and statistics need

Each game is replayed with the rules engine (``seed`` + ``history``, strict
notation) to split the public log into the events of each order and to draw the
board after each dividend.  Only public information is put in a page: the public
log, the orders with the share returned in an UP swap hidden (and the initial
investments while they are still secret), ``Game.public_view()`` money (hidden
during a game with option ``hidden_money``); never a hand, a deck, a secret or an
address.

Incremental: a game whose file's sha256 (and the templates' and catalogues'
digest) equals the manifest's is not rendered again; the index and the
statistics are rebuilt from the manifest every run (cheap).

Languages: a game's pages are rendered in the game's language
(``settings.language``, inside ``moderator.i18n.speaking``; its move times
formatted by ``render.when``); the index and the statistics, which list games
of every language, in ``index_language`` (English unless the operator's
configuration says ``archive: {language: CODE}``).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..store.gamefile import GameStore, StoreError, load_board_ref
from .listing import IMAGINARY, final_dividend, short_time, winners_of
from .records import seat_rows
from ..rules.notation import public_order  # noqa: F401 (used by the pages; re-exported)

MANIFEST = "manifest.json"
SITE_FORMAT = 1
TEMPLATE_NAMES = ("base.html", "index.html", "stats.html", "game.html", "move.html", "titles.html",
                  "charts.html", "style.css")


def environment():
    """A Jinja environment over the ``archive/`` folder of the template folders
    (``moderator.render.template_dirs``: ``$PBEM_TEMPLATES``, then the shipped
    ones), autoescaping ``.html``; undefined variables fail."""
    import jinja2

    from .. import i18n
    from ..render import template_loader
    from ..render.orders import localize
    from ..render.events import event_text

    env = jinja2.Environment(
        loader=template_loader(),
        autoescape=jinja2.select_autoescape(["html"], default_for_string=False, default=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    i18n.install(env)
    env.filters["event"] = event_text
    env.filters["order"] = localize
    from .charts import GLOBALS

    env.globals.update(GLOBALS)
    return env


def templates_digest(env) -> str:
    """sha256 of the archive templates' sources and of the translation catalogues
    (``moderator/locale/*/LC_MESSAGES/pbem.po``): a changed template or a new
    translation renders every game again."""
    from .. import i18n

    h = hashlib.sha256(str(SITE_FORMAT).encode())
    for name in TEMPLATE_NAMES:
        source, _, _ = env.loader.get_source(env, f"archive/{name}")
        h.update(name.encode() + b"\0" + source.encode("utf-8") + b"\0")
    for code in i18n.LANGUAGES:
        path = i18n.catalogue_path(code)
        if path.is_file():
            h.update(code.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@dataclass
class ArchiveReport:
    """What ``build_site`` did: games ``rendered``, ``unchanged`` (skipped),
    ``removed`` (their pages deleted) and ``errors`` (``GAME: message``)."""

    rendered: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (f"archive: {len(self.rendered)} game(s) rendered, {len(self.unchanged)} unchanged, "
                f"{len(self.removed)} removed")
        return text + (f", {len(self.errors)} error(s)" if self.errors else "")


def _received(stamp: str, language: str) -> str:
    """When a move was received, as a game's pages show it: English keeps
    ``2026-11-30 12:00`` (``short_time``), other languages the locale's form in
    UTC (``render.when.format_iso``)."""
    from .. import i18n

    if language == i18n.DEFAULT or not stamp:
        return short_time(stamp)
    from ..render.when import format_iso

    return format_iso(stamp, None, language)


def game_language(data: dict[str, Any]) -> str:
    """The language of a game file's mapping (``settings.language``; English when
    unset or unknown)."""
    from .. import i18n

    code = (data.get("settings") or {}).get("language")
    return code if code in i18n.LANGUAGES else i18n.DEFAULT


def replay_game(data: dict[str, Any]) -> dict[str, Any]:
    """Replay a game file's mapping move by move.  Returns the ``game`` (the final
    ``Game``), ``setup_events`` (the log before the first order), ``moves`` (per
    order: ``number``, ``player``, ``order`` (public), ``received``, ``events``,
    ``dividend`` (the number of a dividend paid by it, or None)) and ``pictures``
    (``(file name, title, move number, Game copy)`` after each dividend and at
    the end) and ``values``: ``companies`` (abbreviations, in order) and ``after``
    (``(turn, values)`` at the start and after each order: ``Game.turn`` and each
    company's dividend value, ``Game.value``, in millions).  Raises StoreError when
    the history does not apply or does not give the recorded state."""
    from ..rules.engine import Game
    from ..rules.events import to_data as event_to_data
    from ..rules.notation import parse_action

    board = load_board_ref(data["board"])
    names = [p["name"] for p in data["players"]]
    game = Game.new(board, names, data["seed"], data["ruleset"], data.get("options") or {})
    setup_events = list(game.events)
    history = data.get("history") or []
    # the final phase decides whether initial investments are public yet
    initial_open = (data.get("state") or {}).get("phase", "initial") != "initial"
    moves, pictures = [], []
    from ..rules.components import COMPANIES

    companies = tuple(COMPANIES)
    values = [(0, tuple(game.value(c) for c in companies))]  # (turn, values) at the start and after each order
    for i, h in enumerate(history):
        before, paid = len(game.events), game.dividends_paid
        try:
            game.push(h["player"], parse_action(h["order"]))
        except Exception as exc:  # noqa: BLE001 - a corrupt history
            raise StoreError(f"history entry {i + 1} does not apply: {exc}") from exc
        values.append((game.turn, tuple(game.value(c) for c in companies)))
        dividend = game.dividends_paid if game.dividends_paid > paid else None
        moves.append({
            "number": i + 1,
            "player": h["player"],
            "order": public_order(h["order"], initial_open),
            "received": _received(h.get("received", ""), game_language(data)),
            "events": game.events[before:],
            "dividend": dividend,
        })
        if dividend is not None:
            pictures.append((f"dividend-{dividend}.png", f"After dividend {dividend}", i + 1, game.copy()))
    if game.to_dict() != data.get("state"):
        raise StoreError("replaying the history does not give the recorded state")
    if "log" in data and data["log"] != [event_to_data(e) for e in game.events]:
        raise StoreError("replaying the history does not give the recorded log")
    pictures.append(("end.png", "At the end" if game.phase == "over" else "Now",
                     len(history), game))
    return {"game": game, "setup_events": setup_events, "moves": moves, "pictures": pictures,
            "values": {"companies": companies, "after": values}}


def game_summary(gid: str, data: dict[str, Any], game) -> dict[str, Any]:
    """What the index and the statistics need of one game (kept in the manifest)."""
    state = data.get("state") or {}
    view = game.public_view()
    history = data.get("history") or []
    over = game.phase == "over"
    return {
        "id": gid,
        "created": short_time(data.get("created", "")),
        "last": short_time((history[-1].get("received") if history else "") or data.get("created", "")),
        "ruleset": game.ruleset,
        "players": list(game.players),
        "phase": game.phase,
        "waiting": game.waiting_for(),
        "orders": len(history),
        "dividends": game.dividends_paid,
        "final_dividend": final_dividend(len(game.players)),
        "winners": winners_of(state.get("money") or {}) if over else [],
        "standings": [list(s) for s in game.standings()] if over else [],
        "paid": [sorted(c for c in p["paid"] if c != "UP") for p in game.payouts],
        "values": {c["abbr"]: c["value"] for c in view["companies"]},
    }


def _money_public(game) -> bool:
    return game.phase == "over" or not game.options.get("hidden_money")


def chart_data(replayed: dict[str, Any], money_public: bool) -> dict[str, Any]:
    """The numbers of a game page's charts, from the replay (``replay_game``):

    * ``money``: per player (the imaginary player too, from the dividend it took
      part in), the money at the start (0) and after each dividend paid: the sums
      of the payouts' ``totals`` (money comes only from dividends: rules, Company
      dividends), ``[(name, [money or None, ...])]``; None while the money is hidden
      (option ``hidden_money``, the game not over) or no dividend was paid;
    * ``values``: each company's dividend value (``Game.value``: 1 + its trains on
      the board, in millions) at the start and after each round (the players' orders
      of one turn each: ``Game.turn`` a multiple of the number of players), the last
      point at the last order if it ended a round part way: ``turns`` (the turn of
      each point), ``series`` (``[(abbr, [value, ...])]``) and ``marks``
      (``[(x, [dividend numbers])]``: where in the rounds, as a fractional point
      index, the dividends were paid); None before the play phase;
    * ``dividends``: per company that paid in any dividend (the ten, then UP) the
      amount it paid at each dividend (its payouts summed over the investors),
      ``[(abbr, [amount, ...])]``, and ``count``; None while the money is hidden or
      no dividend was paid.
    """
    from ..rules.components import COMPANIES, UP

    game = replayed["game"]
    payouts = game.payouts
    out: dict[str, Any] = {"money": None, "values": None, "dividends": None}
    if payouts and money_public:
        names = list(game.players) + [n for n in game.money if n not in game.players]
        series = []
        for name in names:
            run, points = 0, [0 if name in game.players else None]
            for p in payouts:
                if name in p["holdings"] or name in p["totals"]:
                    run += p["totals"].get(name, 0)
                    points.append(run)
                else:
                    points.append(None if points[-1] is None else run)
            series.append((name, points))
        out["money"] = series
        bars = []
        for abbr in [*COMPANIES, UP]:
            if any(abbr in p["paid"] for p in payouts):
                bars.append((abbr, [sum(p["paid"].get(abbr, {}).values()) for p in payouts]))
        out["dividends"] = {"bars": bars, "count": len(payouts)}
    moves = replayed["moves"]
    after = replayed["values"]["after"]
    n = len(game.players)
    if game.phase != "initial" and game.turn > 0:
        keep = [0] + [i for i in range(1, len(after)) if after[i][0] % n == 0 and after[i][0] != after[i - 1][0]]
        if after[keep[-1]][0] != after[-1][0]:
            keep.append(len(after) - 1)
        turns = [after[i][0] for i in keep]
        companies = replayed["values"]["companies"]
        series = [(abbr, [after[i][1][k] for i in keep]) for k, abbr in enumerate(companies)]
        marks: dict[float, list[int]] = {}
        for m in moves:
            if m["dividend"] is None:
                continue
            t = after[m["number"]][0]
            j = next(j for j, tj in enumerate(turns) if tj >= t)
            x = float(j) if turns[j] == t else j - 1 + (t - turns[j - 1]) / (turns[j] - turns[j - 1])
            first = m["dividend"] - sum(1 for e in m["events"] if e.kind in ("dividend_paid", "dividend_hidden")) + 1
            marks.setdefault(round(x, 3), []).extend(range(first, m["dividend"] + 1))
        out["values"] = {"turns": turns, "players": n, "series": series, "marks": sorted(marks.items())}
    return out


def game_context(gid: str, data: dict[str, Any], replayed: dict[str, Any],
                 show_addresses: bool = False) -> dict[str, Any]:
    """The context of a game's pages: only public information, and the players'
    addresses (``addresses``: name -> address) when the configuration says so
    (``archive: {show_addresses: true}``), else an empty mapping."""
    from ..rules.components import COMPANIES
    from ..rules.options import OPTION_TABLE

    game = replayed["game"]
    view = game.public_view()
    money_public = _money_public(game)
    options = [{"name": o.name, "on": bool(game.options.get(o.name)), "help": o.help} for o in OPTION_TABLE]
    payouts = []
    for p in game.payouts:
        rows = []
        for abbr in COMPANIES:
            paid = p["paid"].get(abbr)
            rows.append({"company": abbr, "value": p["values"].get(abbr, 0),
                         "paid": sorted(paid.items()) if (paid and money_public) else [],
                         "any": bool(paid)})
        up = p["paid"].get("UP")
        payouts.append({"number": p["dividend"], "rows": rows,
                        "up": sorted(up.items()) if (up and money_public) else [],
                        "totals": sorted(p["totals"].items()) if money_public else []})
    return {
        "gid": gid,
        "created": short_time(data.get("created", "")),
        "view": view,
        "over": game.phase == "over",
        "money_public": money_public,
        "standings": game.standings() if game.phase == "over" else [],
        "imaginary": IMAGINARY,
        "options": options,
        "payouts": payouts,
        "companies": COMPANIES,
        "setup_events": replayed["setup_events"],
        "moves": replayed["moves"],
        "pictures": [{"file": f, "title": t, "move": m} for f, t, m, _ in replayed["pictures"]],
        "addresses": {p["name"]: p["address"] for p in data.get("players") or []} if show_addresses else {},
        "press": public_press(data, game.phase == "over"),
        "charts": chart_data(replayed, money_public),
    }


def public_press(data: dict[str, Any], over: bool) -> list[dict[str, Any]]:
    """The players' messages (the game file's ``press``) the archive shows, oldest
    first, each ``{from, to (names, or None for everyone), at, text}``: all of them
    when ``settings.press_archive`` is ``always``, or ``after-end`` and the game is
    ``over`` (or ended by the game master); none otherwise (``never``, the default,
    ``moderation/press.py``)."""
    rule = (data.get("settings") or {}).get("press_archive") or "never"
    if not (rule == "always" or (rule == "after-end" and (over or data.get("ended") is not None))):
        return []
    out = []
    for e in data.get("press") or []:
        if not isinstance(e, dict):
            continue
        to = e.get("to")
        out.append({"from": str(e.get("from", "")), "to": None if to == "all" else list(to or []),
                    "at": short_time(str(e.get("at", ""))), "text": str(e.get("text", ""))})
    return out


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(text, str):
        tmp.write_text(text, encoding="utf-8")
    else:
        tmp.write_bytes(text)
    os.replace(tmp, path)


def render_game(env, out: Path, gid: str, data: dict[str, Any], show_addresses: bool = False) -> dict[str, Any]:
    """Write the pages and pictures of one game into ``out/games/GAME/`` (replacing
    the folder), in the game's language (``game_language``); returns its summary
    for the manifest."""
    from .. import i18n

    with i18n.speaking(game_language(data)):
        return _render_game(env, out, gid, data, show_addresses)


def _render_game(env, out: Path, gid: str, data: dict[str, Any], show_addresses: bool) -> dict[str, Any]:
    from ..render.board_map import render_map

    replayed = replay_game(data)
    ctx = game_context(gid, data, replayed, show_addresses)
    gdir = out / "games" / gid
    tmp = out / "games" / f".{gid}.new"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, _, _, g in replayed["pictures"]:
        (tmp / name).write_bytes(render_map(g))
    (tmp / "index.html").write_text(env.get_template("archive/game.html").render(root="../../", **ctx),
                                    encoding="utf-8")
    move_tpl = env.get_template("archive/move.html")
    pictures = ctx["pictures"]
    moves = ctx["moves"]
    for i, m in enumerate(moves):
        shown = [p for p in pictures[:-1] if p["move"] <= m["number"]]
        picture = shown[-1] if shown else None
        if i == len(moves) - 1:
            picture = pictures[-1]
        page = move_tpl.render(root="../../", gid=gid, move=m, total=len(moves), picture=picture,
                               prev=moves[i - 1]["number"] if i else None,
                               next=moves[i + 1]["number"] if i + 1 < len(moves) else None)
        (tmp / f"move-{m['number']}.html").write_text(page, encoding="utf-8")
    shutil.rmtree(gdir, ignore_errors=True)
    os.replace(tmp, gdir)
    return game_summary(gid, data, replayed["game"])


def statistics(games: list[dict[str, Any]]) -> dict[str, Any]:
    """Statistics across games from their summaries: per person (an address,
    ``summary["people"]``, ``records.seat_rows``: shown by the seat name of their
    latest game, never by address; the other names they played under in
    ``also``; two people of one name told apart by ``(2)``, ``(3)`` in the order
    first seen) the games, finished games, wins, average rank (finished games),
    moves in time, missed moves and median time to move (``records``); per
    company how many dividends it paid (of all paid) and its average value at
    the end of the finished games (``avg_rank`` and ``avg_value`` as the table
    writes them, ``avg_rank_value`` and ``avg_value_number`` the numbers the
    charts draw, None without a finished game); ``dividends``: the dividends
    paid in all games."""
    import statistics as _stats

    from ..render.when import format_duration
    from ..rules.components import COMPANIES

    people: dict[str, dict[str, Any]] = {}
    for s in sorted(games, key=lambda s: (s["created"], s["id"])):  # oldest first: the latest name last
        for r in s.get("people") or []:
            p = people.setdefault(r["key"], {"names": [], "games": 0, "finished": 0, "wins": 0, "ranks": [],
                                             "in_time": 0, "missed": 0, "times": []})
            for n in r["names"]:
                if n in p["names"]:
                    p["names"].remove(n)
                p["names"].append(n)
            p["games"] += 1
            p["finished"] += r["finished"]
            p["wins"] += r["won"]
            p["ranks"] += r["ranks"]
            p["in_time"] += r["in_time"]
            p["missed"] += r["missed"]
            p["times"] += r["times"]
    prows, seen = [], {}
    for p in people.values():  # first seen first: the (2) goes to the later one
        name = p["names"][-1]
        seen[name] = seen.get(name, 0) + 1
        p["name"] = name if seen[name] == 1 else f"{name} ({seen[name]})"
        p["also"] = [n for n in p["names"][:-1]]
    for p in sorted(people.values(), key=lambda p: (-p["wins"], p["name"])):
        avg = sum(p["ranks"]) / len(p["ranks"]) if p["ranks"] else None
        median = _stats.median(p["times"]) if p["times"] else None
        prows.append({"name": p["name"], "also": p["also"], "games": p["games"], "finished": p["finished"],
                      "wins": p["wins"], "avg_rank": None if avg is None else f"{avg:.2f}", "avg_rank_value": avg,
                      "in_time": p["in_time"], "missed": p["missed"],
                      "in_time_share": (100 * p["in_time"] / (p["in_time"] + p["missed"])
                                        if p["in_time"] + p["missed"] else None),
                      "median": None if median is None else _median_words(median)})
    dividends = sum(len(s["paid"]) for s in games)
    finished = [s for s in games if s["phase"] == "over"]
    crows = []
    for abbr, company in COMPANIES.items():
        paid = sum(abbr in p for s in games for p in s["paid"])
        values = [s["values"].get(abbr, 0) for s in finished]
        crows.append({"abbr": abbr, "name": company.name, "paid": paid, "dividends": dividends,
                      "avg_value": f"{sum(values) / len(values):.1f}" if values else None,
                      "avg_value_number": sum(values) / len(values) if values else None})
    return {"players": prows, "companies": crows, "finished": len(finished), "games": len(games),
            "dividends": dividends}


def _median_words(seconds: float) -> str:
    """A median time to move in the reader's words: ``format_duration``'s two
    largest units, or the seconds under a minute (a demo's built-in players
    answer at once: "0 days" read wrongly; a new user's check)."""
    from babel.units import format_unit

    from .. import i18n
    from ..render.when import format_duration

    if seconds >= 60:
        return format_duration(int(seconds))
    return format_unit(int(seconds), "duration-second", length="long", locale=i18n.LOCALES[i18n.current()])


PERSON_SALT = ".archive-person-key"
"""The file in the games directory holding the archive's secret for the people's
keys in its statistics (``records.person_key``); made on the first build."""


def person_salt(store: GameStore) -> str:
    """The archive's secret for the people's keys (``PERSON_SALT`` in the games
    directory, made when missing: its loss re-renders every game once, the keys
    change, the statistics stay whole)."""
    import secrets

    path = Path(store.dir) / PERSON_SALT
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        text = ""
    if not text:
        text = secrets.token_hex(16)
        from ..store.files import atomic_write

        atomic_write(path, (text + "\n").encode("ascii"))
    return text


def unchanged_bytes(store: GameStore, gid: str, digest: str | None) -> bool:
    """Whether game ``gid``'s file holds the bytes whose sha256 is ``digest``
    (the manifest's, as ``GameFile.digest``), without parsing it; False when it
    cannot be read (``read_file`` then says why)."""
    if not digest:
        return False
    try:
        return hashlib.sha256(store.path(gid).read_bytes()).hexdigest() == digest
    except (OSError, ValueError):
        return False


def build_site(store: GameStore, out: str | os.PathLike[str], force: bool = False,
               show_addresses: bool = False, index_language: str = "en") -> ArchiveReport:
    """Build or update the site in ``out`` from every game of ``store``: render the
    games whose file changed since the last run (all with ``force``), remove the
    pages of games that are gone, rewrite the index, the statistics (in
    ``index_language``), the style sheet and the manifest.  A game that cannot be read or replayed is reported
    in ``errors`` and keeps its old pages.  ``show_addresses`` (configuration
    ``archive: {show_addresses: true}``) puts the players' addresses on the game
    pages; changing it renders every game again."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    env = environment()
    salt = person_salt(store)
    tdigest = templates_digest(env) + (":addresses" if show_addresses else "") + \
        ":people:" + hashlib.sha256(salt.encode()).hexdigest()[:8]
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != SITE_FORMAT or manifest.get("templates") != tdigest:
            manifest = {}
    except (OSError, ValueError):
        manifest = {}
    old = manifest.get("games", {}) if isinstance(manifest.get("games"), dict) else {}
    report = ArchiveReport()
    entries: dict[str, Any] = {}
    for gid in store.ids():
        prev = old.get(gid)
        if (not force and prev and unchanged_bytes(store, gid, prev.get("digest"))
                and (out / "games" / gid / "index.html").is_file()):
            entries[gid] = prev  # the same bytes as last time: not parsed (1,000 games: no YAML read)
            report.unchanged.append(gid)
            continue
        try:
            gf = store.read_file(gid)
        except (StoreError, ValueError) as exc:
            report.errors.append(f"{gid}: {exc}")
            if gid in old:
                entries[gid] = old[gid]
            continue
        prev = old.get(gid)
        if (not force and prev and prev.get("digest") == gf.digest
                and (out / "games" / gid / "index.html").is_file()):
            entries[gid] = prev
            report.unchanged.append(gid)
            continue
        try:
            summary = render_game(env, out, gid, gf.data, show_addresses)
            summary["people"] = seat_rows(gf.data, salt)  # per person, keyed without the address
            entries[gid] = {"digest": gf.digest, "summary": summary}
        except Exception as exc:  # noqa: BLE001 - one broken game must not stop the site
            report.errors.append(f"{gid}: {exc}")
            if prev:
                entries[gid] = prev
            continue
        report.rendered.append(gid)
    for gid in sorted(set(old) - set(entries)):
        shutil.rmtree(out / "games" / gid, ignore_errors=True)
        report.removed.append(gid)
    games = [e["summary"] for _, e in sorted(entries.items())]
    games.sort(key=lambda s: (s["last"], s["id"]), reverse=True)
    _write(out / "style.css", env.loader.get_source(env, "archive/style.css")[0])
    from .. import i18n

    with i18n.speaking(index_language):
        _write(out / "index.html", env.get_template("archive/index.html").render(root="", games=games))
        _write(out / "stats.html", env.get_template("archive/stats.html").render(
            root="", stats=statistics(games)))
    _write(out / MANIFEST, json.dumps({"format": SITE_FORMAT, "templates": tdigest, "games": entries},
                                      indent=1, sort_keys=True) + "\n")
    return report
