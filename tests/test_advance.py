"""Orders in advance (``next: ORDER``) through the real Moderator on local Maildirs,
with the clock set per cycle as ``pbem run --now`` does (issue 30): played the
moment the turn comes, in the same cycle as the previous player's move and across
cycles (the built-in player's move at a deadline); alternatives resolved against
the position then; an order become illegal dropped and told; secrecy; the game
master's undo dropping queues; exact replay."""
from __future__ import annotations

import random

import pytest

from moderator.moderation.advance import advance_command
from moderator.orders.alternatives import candidates
from moderator.players.heuristic import choose
from moderator.rules.engine import IllegalAction
from moderator.rules.notation import parse_action
from moderator.store.gamefile import GameStore
from test_deadlines import H, T0, Clocked, body, to

THREE = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.net")]


def started(tmp_path, **kw):
    """A game of three on the clock in its play phase (every initial investment
    mailed), the mails so far read."""
    c = Clocked(tmp_path, **kw)
    for name, _ in THREE:
        c.move(name)
    c.run(T0 + H)
    c.sent()
    return c


def legal_now(rec, name, seed=0):
    """A legal action of ``name`` in ``rec``'s game (the built-in player's)."""
    return choose(rec.game, name, random.Random(seed))


def after(rec, name, action):
    """The game of ``rec`` after ``name`` plays ``action`` (a copy)."""
    from moderator.moderation.gm import replay_prefix

    g = replay_prefix(rec, 0)
    g.push(name, action)
    return g


def gm_mail(c, text):
    """The game master (the operator of ``Clocked``) mails ``text`` with their secret."""
    from email import policy
    from email.message import EmailMessage
    from email.utils import make_msgid

    from test_deadlines import deliver

    msg = EmailMessage(policy=policy.default)
    msg["From"] = c.config.operator
    msg["To"] = c.config.moderator_address
    msg["Subject"] = f"[pbem:{c.gid}:{c.load().game_master['secret']}] Union Pacific {c.gid}"
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg.set_content(text + "\n")
    deliver(c.inbox, msg.as_bytes(), c.now)


def test_commands_read_in_every_language():
    assert advance_command("next: take stack", "en") == "next 1: take stack"
    assert advance_command("Next 2: invest KCC or DM; discard plain", "en") == \
        "next 2: invest KCC or DM; discard plain"
    assert advance_command("next: none", "en") == "next 1: none"
    assert advance_command("next?", "en") == "next?"
    assert advance_command("siguiente: tomar pila", "es") == "next 1: tomar pila"
    assert advance_command("Nächster: Stapel nehmen", "de") == "next 1: Stapel nehmen"
    assert advance_command("příště: vezmi balíček", "cs") == "next 1: vezmi balíček"
    assert advance_command("下一步：拿股票堆", "zh") == "next 1: 拿股票堆"
    assert advance_command("auto take stack", "en") == "auto take stack"
    assert advance_command("auto off", "en") == "auto off"
    assert advance_command("auto?", "en") == "auto?"
    # prose that starts with the word is no command (an out-of-office line too)
    assert advance_command("next time I will build", "en") is None
    assert advance_command("Auto-reply: I am away until Monday", "en") is None
    assert advance_command("auto I am away until Monday", "en") is None
    assert advance_command("Automatic reply", "en") is None
    assert advance_command("take stack", "en") is None


def test_queued_order_played_in_the_same_cycle_as_the_previous_move(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    first = rec.game.to_move
    order = rec.game.players
    second = order[(order.index(first) + 1) % 3]
    third = order[(order.index(first) + 2) % 3]
    mine = legal_now(rec, first)
    # what the second player will be able to do after the first player's move
    later = after(rec, first, mine)
    theirs = choose(later, second, random.Random(1))
    c.mail(second, f"next: {theirs}")
    c.run(T0 + 2 * H)
    (answer,) = to(c.sent(), c.addr[second])
    assert f"Queued for your next turn: '{theirs}'." in " ".join(body(answer).split())
    assert c.load().queued[second][0]["order"] == str(theirs)
    # the first player moves: in that one cycle, the second player's order is played too
    c.mail(first, str(mine))
    c.run(T0 + 3 * H)
    rec = c.load(check=True)
    assert [h["player"] for h in rec.history[-2:]] == [first, second]
    assert rec.history[-1]["order"] == str(rec.game.history[-1][1])
    assert rec.history[-1]["queued"] is True and rec.history[-1]["message_id"] is None
    assert "queued" not in rec.history[-2]
    assert rec.game.to_move == third
    assert rec.queued == {}
    mails = c.sent()
    (status,) = to(mails, c.addr[second])
    text = " ".join(body(status).split())
    assert f"Your queued order '{theirs}' was played:" in text


def test_alternatives_resolved_against_the_position_then(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    first = rec.game.to_move
    second = rec.game.players[(rec.game.players.index(first) + 1) % 3]
    mine = legal_now(rec, first)
    later = after(rec, first, mine)
    good = choose(later, second, random.Random(2))
    # a first choice that will not be legal then (a share the player does not hold)
    held = set(later.share_hands[second])
    missing = next(s for s in ("KCC", "DM", "WW", "ESL", "MRR", "SFP") if s not in held)
    bad = f"invest {missing}"
    with pytest.raises(IllegalAction):
        later.resolve(second, parse_action(bad))
    c.mail(second, f"next: {bad} or {good}" if not str(good).startswith("invest") or ";" not in str(good)
           else f"next: {bad}; discard plain or {good}")
    c.run(T0 + 2 * H)
    c.sent()
    c.mail(first, str(mine))
    c.run(T0 + 3 * H)
    rec = c.load(check=True)
    assert rec.history[-1]["player"] == second and rec.history[-1]["queued"] is True
    assert rec.history[-1]["order"] == str(rec.game.history[-1][1])
    assert rec.history[-1]["alternatives"].startswith(bad)
    (status,) = to(c.sent(), c.addr[second])
    assert f"Not {bad}:" in " ".join(body(status).split())


def test_queued_order_become_illegal_is_dropped_and_told(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    first = rec.game.to_move
    second = rec.game.players[(rec.game.players.index(first) + 1) % 3]
    later = after(rec, first, legal_now(rec, first))
    held = set(later.share_hands[second])
    missing = next(s for s in ("KCC", "DM", "WW", "ESL", "MRR", "SFP") if s not in held)
    c.mail(second, f"next: invest {missing}; discard plain")
    c.run(T0 + 2 * H)
    c.sent()
    before = len(c.load().history)
    c.move(first)
    c.run(T0 + 3 * H)
    rec = c.load(check=True)
    assert len(rec.history) == before + 1  # only the first player's move
    assert rec.game.to_move == second and rec.queued == {}
    mails = c.sent()
    (status,) = to(mails, c.addr[second])
    text = " ".join(body(status).split())
    assert f"Your queued order 'invest {missing}; discard plain' was not played and is dropped:" in text
    assert "Send your move as usual." in text
    # the others are not told of it
    for name, address in THREE:
        if name != second:
            for m in to(mails, address):
                assert f"invest {missing}" not in body(m)


def test_queued_order_played_across_cycles_after_the_built_in_players_move(tmp_path):
    c = started(tmp_path, settings={"deadline": 24 * 3600})
    rec = c.load()
    first = rec.game.to_move
    second = rec.game.players[(rec.game.players.index(first) + 1) % 3]
    # the first player says nothing: at the deadline the built-in player moves for them,
    # and the second player's queued order is played in that clock cycle
    from moderator.moderation.deadlines import bot_rng

    theirs = choose(after(rec, first, choose(rec.game, first, bot_rng(rec))), second, random.Random(3))
    c.mail(second, f"next: {theirs}")
    c.run(T0 + 2 * H)
    c.sent()
    for hour in range(8, 32, 6):  # a cycle every six hours, past the deadline
        c.run(T0 + hour * H)
    rec = c.load(check=True)
    players = [h["player"] for h in rec.history]
    at = players.index(second, 3)
    assert rec.history[at - 1]["player"] == first and rec.history[at - 1].get("by") == "bot"
    assert rec.history[at]["queued"] is True
    assert rec.history[at]["order"] == str(rec.game.history[at][1])
    assert parse_action(rec.history[at]["order"]) == rec.game.history[at][1]


def test_secrecy_no_other_mail_names_a_queued_order(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    first = rec.game.to_move
    third = rec.game.players[(rec.game.players.index(first) + 2) % 3]
    secret_text = "build KCC SEA-POR plain or build DM DEN-OMA white; take stack"
    c.mail(third, f"next 2: {secret_text}")
    c.mail(third, "next?")
    c.run(T0 + 2 * H)
    assert c.load().queued[third][0]["order"] == secret_text
    mails = c.sent()
    for m in mails:
        if str(m["To"]) != c.addr[third]:
            assert "SEA-POR" not in m.as_string()
    assert any("SEA-POR" in body(m) for m in to(mails, c.addr[third]))
    # moves go on; nobody else ever reads it
    for hour in range(3, 9):
        who = c.load().game.to_move
        if who == third:
            break
        c.move(who)
        c.run(T0 + hour * H)
        for m in c.sent():
            if str(m["To"]) != c.addr[third]:
                assert "SEA-POR" not in m.as_string()


def test_next_none_cancels_and_next_shows(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    second = rec.game.players[(rec.game.players.index(rec.game.to_move) + 1) % 3]
    c.mail(second, "next: take stack")
    c.run(T0 + 2 * H)
    (m,) = to(c.sent(), c.addr[second])
    assert "cannot be read" in body(m)  # a take alone is no turn
    assert c.load().queued == {}
    c.mail(second, "next: pass; discard plain")
    c.run(T0 + 3 * H)
    c.sent()
    c.mail(second, "next?")
    c.run(T0 + 4 * H)
    (m,) = to(c.sent(), c.addr[second])
    assert "Your next move is queued: 'pass; discard plain'." in " ".join(body(m).split())
    c.mail(second, "next: none")
    c.run(T0 + 5 * H)
    (m,) = to(c.sent(), c.addr[second])
    assert "Your queued orders are cancelled." in body(m)
    assert c.load().queued == {}


def test_game_masters_undo_drops_queues_and_tells_the_player(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    first = rec.game.to_move
    second = rec.game.players[(rec.game.players.index(first) + 1) % 3]
    c.move(first)
    c.run(T0 + 2 * H)
    c.sent()
    c.mail(first, "next: pass; discard plain")
    c.run(T0 + 3 * H)
    c.sent()
    assert c.load().queued[first]
    gm_mail(c, "undo 1")
    c.run(T0 + 4 * H)
    rec = c.load(check=True)
    assert rec.queued == {}
    assert rec.game.to_move == first
    assert rec.gm_log[-1]["queued_dropped"] == [first]
    mails = c.sent()
    (status,) = [m for m in to(mails, c.addr[first]) if "dropped" in body(m)]
    assert "so your queued orders are dropped: pass; discard plain." in " ".join(body(status).split())
    for m in to(mails, c.addr[second]):
        assert "discard plain" not in body(m) or "queued" not in body(m)


def test_replay_is_exact_with_queued_plays(tmp_path):
    c = started(tmp_path)
    for hour in range(2, 14):
        rec = c.load()
        who = rec.game.to_move
        nxt = rec.game.players[(rec.game.players.index(who) + 1) % 3]
        mine = legal_now(rec, who, hour)
        theirs = choose(after(rec, who, mine), nxt, random.Random(hour))
        c.mail(nxt, f"next: {theirs}")
        c.mail(who, str(mine))
        c.run(T0 + hour * H)
        c.sent()
    rec = c.load(check=True)
    assert sum(1 for h in rec.history if h.get("queued")) >= 6
    again = GameStore(c.config.games_dir).load(c.gid, check=True)
    assert again.game.to_dict() == rec.game.to_dict()
    assert [h["order"] for h in again.history] == [str(a) for _, a in again.game.history]


def test_candidates_are_the_orders_read_first_legal_played():
    from moderator.rules.board import Board

    board = Board.default()
    got = [str(a) for a in candidates(["build KCC DEN-KCY plain; take stack or build DM DEN-OMA black; take stack"],
                                      board, "en")]
    assert got == ["build KCC DEN-KCY plain; take stack", "build DM DEN-OMA black; take stack"]


def test_reminder_and_status_mail_say_the_queued_order_will_be_played(tmp_path):
    c = started(tmp_path, settings={"deadline": 24 * 3600})
    rec = c.load()
    who = rec.game.to_move
    c.mail(who, "next: pass; discard plain")  # for the turn after the one awaited now
    c.run(T0 + 2 * H)
    (answer,) = to(c.sent(), c.addr[who])
    said = " ".join(body(answer).split())
    assert "Queued for your turn after this one: 'pass; discard plain'." in said
    assert "Your move now is still awaited." in said
    reminders = []
    for hour in range(4, 24, 2):
        c.run(T0 + hour * H)
        reminders += [m for m in to(c.sent(), c.addr[who]) if "your move is due" in body(m).partition("\n")[0]]
        if reminders:
            break
    (reminder,) = reminders
    assert "Your queued orders are played when their turns come: pass; discard plain." in \
        " ".join(body(reminder).split())
    # the status mail after their move says what is queued
    c.move(who)
    c.run(c.now + H)
    rec = c.load()
    assert rec.history[-1]["player"] == who and "queued" not in rec.history[-1]
    assert rec.queued[who][0]["order"] == "pass; discard plain"  # played on their next turn
    (status,) = to(c.sent(), c.addr[who])
    assert "Your next move is queued: 'pass; discard plain'." in " ".join(body(status).split())


@pytest.mark.parametrize("language,take,discard,off,show,cancel", [
    ("en", "auto take stack", "auto discard plain", "auto off", "next?", "next: none"),
    ("es", "auto tomar pila", "auto descartar lisa", "auto nada", "siguiente?", "siguiente: nada"),
    ("de", "auto Stapel nehmen", "auto einfach abwerfen", "auto nichts", "nächster?", "nächster: nichts"),
    ("cs", "auto vezmi balíček", "auto odhoď obyčejná", "auto nic", "příště?", "příště: nic"),
    ("zh", "自动拿股票堆", "自动弃无条纹", "自动 无", "下一步？", "下一步：无"),
])
def test_the_guides_commands_in_every_language(language, take, discard, off, show, cancel):
    """The commands the help guide shows in each language (templates/help.txt and its catalogues)."""
    from moderator.moderation.advance import _read_standing

    assert _read_standing(advance_command(take, language)[5:], language) == ["take stack"]
    assert _read_standing(advance_command(discard, language)[5:], language) == ["discard plain"]
    assert advance_command(off, language) == "auto off"
    assert advance_command(show, language) == "next?"
    assert advance_command(cancel, language) == "next 1: none"


def test_public_export_leaves_out_queued_orders_and_standing_choices(tmp_path):
    from moderator.archive.export import dump, export_data

    c = started(tmp_path)
    rec = c.load()
    other = rec.game.players[(rec.game.players.index(rec.game.to_move) + 1) % 3]
    c.mail(other, "next: build KCC SEA-POR plain or build DM DEN-OMA white; take stack\nauto discard black-white")
    c.run(T0 + 2 * H)
    data = GameStore(c.config.games_dir).read_data(c.gid)
    assert data["queued"][other][0]["order"].startswith("build KCC SEA-POR")
    assert data["standing"] == {other: ["discard black-white"]}
    public = dump(export_data(data))
    assert "SEA-POR" not in public and "black-white" not in public.split("state:")[0].split("history:")[0]
    assert "queued" not in export_data(data) and "standing" not in export_data(data)
    assert export_data(data, with_secrets=True)["queued"] == data["queued"]


def test_next_2_is_played_on_the_turn_after_the_next(tmp_path):
    c = started(tmp_path)
    rec = c.load()
    order = rec.game.players
    first = rec.game.to_move
    second = order[(order.index(first) + 1) % 3]
    c.mail(second, "next 2: pass; discard plain")
    c.run(T0 + 2 * H)
    (answer,) = to(c.sent(), c.addr[second])
    assert "Queued for your turn number 2 from now: 'pass; discard plain'." in " ".join(body(answer).split())
    assert c.load().queued[second][0]["turn"] == 2  # one initial investment, one turn by mail, then this
    # a round by mail: the second player's own next turn is not the queued one
    hour = 3
    for name in (first, second, order[(order.index(first) + 2) % 3], first):
        assert c.load().game.to_move == name
        assert c.load().queued[second][0]["turn"] == 2
        c.move(name)
        c.run(T0 + hour * H)
        hour += 1
        mails = c.sent()
    rec = c.load(check=True)
    # now the second player's turn came: a pass is not legal while builds are, so the
    # order is dropped and they are told; the game waits for their move
    assert rec.game.to_move == second and rec.history[-1]["player"] == first
    with pytest.raises(IllegalAction):
        rec.game.resolve(second, parse_action("pass; discard plain"))
    (status,) = to(mails, c.addr[second])
    said = " ".join(body(status).split())
    assert "Your queued order 'pass; discard plain' was not played and is dropped: " in said
    assert "Send your move as usual." in said
    assert rec.queued == {}


def test_a_chain_of_queued_orders_is_played_in_one_cycle(tmp_path):
    """Two players' orders in advance after one mail: the first player's move makes
    it the second's turn (queued: played), which makes it the third's (queued:
    played), in the one cycle (OGS #1148, #2182: queued answers not played on)."""
    c = started(tmp_path)
    rec = c.load()
    order = rec.game.players
    first = rec.game.to_move
    second, third = order[(order.index(first) + 1) % 3], order[(order.index(first) + 2) % 3]
    mine = legal_now(rec, first)
    g2 = after(rec, first, mine)
    theirs = choose(g2, second, random.Random(7))
    g2.push(second, theirs)
    last = choose(g2, third, random.Random(8))
    c.mail(second, f"next: {theirs}")
    c.mail(third, f"next: {last}")
    c.run(T0 + 2 * H)
    c.sent()
    c.mail(first, str(mine))
    c.run(T0 + 3 * H)
    rec = c.load(check=True)
    assert [(h["player"], h["order"], h.get("queued")) for h in rec.history[-3:]] == [
        (first, str(mine), None), (second, str(theirs), True), (third, str(last), True)]
    assert rec.game.to_move == first and rec.queued == {}


def test_bare_next_and_next_0_are_answered_with_what_would_be_legal(tmp_path):
    """'next:' with the order left out is answered (not read as an order of now),
    and 'next 0:' says the turns count from 1 (a new user's check)."""
    c = started(tmp_path)
    rec = c.load()
    second = rec.game.players[(rec.game.players.index(rec.game.to_move) + 1) % 3]
    assert advance_command("next:") == "next 1: " and advance_command("Next 2 :") == "next 2: "
    c.mail(second, "next:")
    c.run(T0 + 2 * H)
    (m,) = to(c.sent(), c.addr[second])
    assert ("Nothing was queued: write the order on the same line, after 'next:', "
            "e.g. 'next: pass; discard plain'.") in " ".join(body(m).split())
    c.mail(second, "next 0: pass; discard plain")
    c.run(T0 + 3 * H)
    (m,) = to(c.sent(), c.addr[second])
    assert ("Nothing was queued: 'next N:' counts your coming turns from 1 ('next:' is your next one) "
            "to 3, not 0.") in " ".join(body(m).split())
    assert c.load().queued == {}


def test_a_refused_order_beside_a_queued_one_does_not_say_nothing_changed(tmp_path):
    """An unreadable line in the mail that queued an order: the refusal says the
    order was not played and the other lines are answered apart, not "Nothing was
    changed" (the queue did change)."""
    c = started(tmp_path)
    rec = c.load()
    second = rec.game.players[(rec.game.players.index(rec.game.to_move) + 1) % 3]
    c.mail(second, "next: pass; discard plain\nstatsu")
    c.run(T0 + 2 * H)
    refusal, queued = to(c.sent(), c.addr[second])
    text = " ".join(body(refusal).split())
    assert "Nothing was changed" not in text
    assert ("Your order was not played: the game is as it was. The other lines of your mail are "
            "answered separately.") in text
    assert "Queued for your next turn: 'pass; discard plain'." in body(queued)
    assert [e["order"] for e in c.load().queued[second]] == ["pass; discard plain"]


@pytest.mark.parametrize("language,command", [("es", "idioma es"), ("de", "Sprache: Deutsch"), ("cs", "jazyk cs"),
                                              ("zh", "语言 zh")])
def test_a_mail_that_switches_language_is_read_in_the_new_one(tmp_path, language, command):
    """'language es' and an order in Spanish in one mail: the order is read in
    Spanish (the English reader did not know 'invertir'), and a refusal in the
    same mail comes in Spanish (a new user's check)."""
    from moderator.render.orders import localize

    c = started(tmp_path)
    rec = c.load()
    who = rec.game.to_move
    action = legal_now(rec, who)
    order = localize(str(action), language)
    assert order != str(action)  # the order is in the language's own words
    c.mail(who, f"{command}\n{order}")
    c.run(T0 + 2 * H)
    c.sent()
    last = c.load().history[-1]
    assert (last["player"], last["order"]) == (who, str(action))
    nxt = c.load().game.to_move
    c.mail(nxt, f"{command}\ninvest 9 ZZZ; discard plain")
    c.run(T0 + 3 * H)
    refusal = [m for m in to(c.sent(), c.addr[nxt]) if "invest 9 ZZZ; discard plain" in body(m)]
    titles = {"es": "orden rechazada", "de": "Befehl abgelehnt", "cs": "příkaz odmítnut", "zh": "指令被拒"}
    assert len(refusal) == 1 and titles[language] in body(refusal[0]).partition("\n")[0]
