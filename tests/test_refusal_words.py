"""A refused order lists what is legal in the player's own words (issue 15): the
lines of "What is legal now:" of a refusal to a Spanish and a Chinese player, for
a mail the parser cannot read, for a BUILD and an INVEST the rules refuse and for
an order before the initial investment, through the real Moderator on local
Maildirs with the shipped catalogues.

The expected lines are derived here from the position (``Game.legal_summary``),
the canonical order words (``moderator.orders.languages.CANONICAL``) and the
catalogues' translations of the sentences around them, not from the code that
renders them."""
from __future__ import annotations

from collections import Counter

from babel.messages.pofile import read_po

from moderator import i18n
from moderator.orders.languages import CANONICAL
from moderator.rules.components import COMPANIES
from test_language_mail import Table, text

PLAYERS = [("Ana", "ana@example.es"), ("Li", "li@example.cn"), ("Ann", "ann@example.org")]


def catalogue(lang: str) -> dict[str, str]:
    """The shipped translations of ``lang`` (msgid -> msgstr)."""
    with open(i18n.locale_dir() / lang / "LC_MESSAGES" / "pbem.po", "rb") as fh:
        return {m.id: m.string for m in read_po(fh) if m.id and isinstance(m.id, str)}


def card(lang: str, space: str, played: str) -> str:
    """A space type as an order writes it (``blanca``, ``comodín como blanca``)."""
    w = CANONICAL[lang]
    return w[space] if played == space else f"{w['joker']} {w['as']} {w[space]}"


def take(lang: str, t) -> str:
    w = CANONICAL[lang]
    if t.source == "stack":
        return f"{w['take']} {w['stack']}"
    if t.source == "none":
        return w["take none"]
    return f"{w['take']} {t.company if t.source == 'display' else 'UP'}"


def expected(lang: str, game, player: str, first: str | None = None) -> list[str]:
    """What is legal for ``player`` on move in the play phase, in ``lang``: the
    example line, one line per company (sections with the same types grouped),
    the draws, the INVEST line."""
    po, w, s = catalogue(lang), CANONICAL[lang], game.legal_summary(player)
    assert s.builds and s.invest and not s.redraw and not s.passes  # the lines this test covers
    companies = sorted(s.builds, key=lambda c: c != first)
    company = companies[0]
    sid, fits = next(iter(s.builds[company].items()))
    stack = next(t for t in s.takes if t.source == "stack")
    example = f"{w['build']} {company} {sid} {card(lang, *fits[0])}; {take(lang, stack)}"
    out = [po["%(example)s   (a build and its draw on ONE line)"] % {"example": example}]
    for company in companies:
        groups: dict[tuple[str, ...], list[str]] = {}
        for sid, fits in s.builds[company].items():
            groups.setdefault(tuple(card(lang, t, c) for t, c in fits), []).append(sid)
        out.append(f"{company}: " + "; ".join(f"{', '.join(sids)} ({', '.join(types)})"
                                               for types, sids in groups.items()))
    out.append(po["after a build, on the same line, one of: %(takes)s"]
               % {"takes": " | ".join(take(lang, t) for t in s.takes)})
    held = Counter(game.share_hands[player])
    kinds = sorted(held)
    cards = sorted(set(game.track_hands[player]))
    shares = ", ".join(f"{held[k]} {k}" if held[k] > 1 else k for k in kinds)
    most = max(kinds, key=lambda k: held[k])
    examples = [f"{w['invest']} {held[most]} {most}" if held[most] > 1 else f"{w['invest']} {most}"]
    if len(kinds) > 1:
        examples.append(f"{w['invest']} {kinds[0]} {kinds[1]}")
    examples = [f"{e}; {w['discard']} {w[cards[0]]}" for e in examples]
    out.append(po["invest shares you hold (any number of ONE company, or one each of TWO): %(shares)s; "
                  "then discard one of: %(cards)s; e.g. %(examples)s"]
               % {"shares": shares, "cards": ", ".join(w[c] for c in cards), "examples": " | ".join(examples)})
    return out


def legal_listed(lang: str, reply) -> list[str]:
    """The lines under the reply's "What is legal now:" (its translation)."""
    lines = text(reply).splitlines()
    start = lines.index(catalogue(lang)["What is legal now:"]) + 1
    end = lines.index("", start)
    assert all(line.startswith("  ") for line in lines[start:end])
    return [line[2:] for line in lines[start:end]]


def refusal(t: Table, name: str, body: str):
    t.mail(name, body)
    t.run()
    (reply,) = [m for m in t.sent() if str(m["To"]) == t.addr[name]]
    return reply


def test_refusals_list_what_is_legal_in_spanish_and_chinese(tmp_path):
    t = Table(tmp_path, PLAYERS, languages={"Ana": "es", "Li": "zh"})
    t.sent()
    game = t.load().game
    # before the initial investment: the starts, with the language's start word
    for name, lang in (("Ana", "es"), ("Li", "zh")):
        starts = [f"{CANONICAL[lang]['start']} {s.share}" for s in game.legal_summary(name).starts]
        assert len(starts) >= 2
        assert legal_listed(lang, refusal(t, name, "pass")) == starts
    for name, _ in PLAYERS:
        t.mail(name, f"start {game.legal_summary(name).starts[0].share}")
    t.run()
    t.sent()
    mover = t.load().game.to_move
    for lang in ("es", "zh"):
        refusal(t, mover, f"language {lang}")
        game = t.load().game
        # a mail the parser cannot read
        assert legal_listed(lang, refusal(t, mover, "fly KCC to the moon")) == expected(lang, game, mover)
        # a BUILD the rules refuse: the company it named first
        held = set(game.track_hands[mover])
        company = [c for c in COMPANIES if any(k in held or "joker" in held for _, k in game.placements(c))][-1]
        assert company != next(iter(game.legal_summary(mover).builds))  # else the order alone would pass
        far = next(s for s in sorted(game.board.sections) if s not in {sid for sid, _ in game.placements(company)}
                   and company not in game.network.companies_on(s))
        reply = refusal(t, mover, f"build {company} {far}; take stack")
        assert legal_listed(lang, reply) == expected(lang, game, mover, first=company)
        # an INVEST of more shares than held
        share = game.share_hands[mover][0]
        reply = refusal(t, mover, f"invest 9 {share}")
        assert legal_listed(lang, reply) == expected(lang, game, mover)
    assert t.load().game.to_dict() == game.to_dict()  # nothing changed
    t.close()
