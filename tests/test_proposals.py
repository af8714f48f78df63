"""Proposals decided by the players' vote (issue 29): ``propose takeback``,
``propose pause DAYS``, ``propose end``, ``propose deadline DURATION``,
answered ``accept`` / ``reject`` by reply, through the real Moderator on local
Maildirs with real RFC 5322 mail, over simulated days (the clock set per cycle,
as ``pbem run --now`` does).

Each proposal accepted, rejected and timed out; a takeback refused after
hidden information; a takeback, then the game replays exactly (``GameStore``
load with the full replay).  Times are derived by hand from the game's
creation time T0 and the settings."""
from __future__ import annotations

import random
from datetime import timedelta
from email import policy
from email.message import EmailMessage
from email.utils import make_msgid

import pytest

from moderator.moderation import gm
from moderator.moderation.ballot import proposal_command
from moderator.moderation.deadlines import _proposal_times, due, next_event
from moderator.moderation.proposals import REVEALING, revealed
from moderator.rules import events as ev
from moderator.store.gamefile import GameStore
from test_deadlines import H, T0, Clocked, body, deliver

D = timedelta(days=1)
ADDR = {"Ann": "ann@example.org", "Bob": "bob@example.org", "Cy": "cy@example.net"}


class Voting(Clocked):
    """``Clocked`` with replies to a given mail of ours (the token of its
    Message-ID authenticates them; no secret in the Subject)."""

    def reply(self, name, to_msg, text):
        msg = EmailMessage(policy=policy.default)
        msg["From"] = self.addr[name]
        msg["To"] = self.config.moderator_address
        msg["Subject"] = "Re: " + str(to_msg["Subject"])
        msg["Message-ID"] = make_msgid(domain="example.org")
        msg["In-Reply-To"] = str(to_msg["Message-ID"])
        msg["References"] = str(to_msg["Message-ID"])
        msg.set_content(text + "\n\n> " + body(to_msg).replace("\n", "\n> ") + "\n")
        deliver(self.inbox, msg.as_bytes(), self.now)


def quiet_action(rec, who, seed=0):
    """A legal action of ``who`` whose events show nobody anything hidden
    (``REVEALING``): found by trying random legal actions on a replayed copy."""
    rng = random.Random(seed)
    for _ in range(500):
        action = rec.game.random_action(who, rng)
        copy = gm.replay_prefix(rec, 0)
        start = len(copy.events)
        copy.push(who, action)
        if not any(isinstance(e, REVEALING) for e in copy.events[start:]):
            return action
    raise AssertionError("no quiet action found")


def revealing_action(rec, who, kind=ev.ReplacedBy):
    """A legal action of ``who`` that causes an event of ``kind``."""
    rng = random.Random(1)
    for _ in range(2000):
        action = rec.game.random_action(who, rng)
        copy = gm.replay_prefix(rec, 0)
        start = len(copy.events)
        copy.push(who, action)
        if any(isinstance(e, kind) for e in copy.events[start:]):
            return action
    raise AssertionError(f"no action causing {kind.kind} found")


def started(tmp_path, **kw):
    """A three-player game (deadline 72 h) past the initial investments, at T0 + 1 h."""
    h = Voting(tmp_path, settings=kw.pop("settings", {"deadline": 72 * 3600}), **kw)
    for name in ("Ann", "Bob", "Cy"):
        if not h.load().player_by_name(name).bot:
            rec = h.load()
            h.mail(name, f"start {sorted(rec.game.share_hands[name])[0]}")
    h.run(T0 + H)
    assert h.load().game.phase == "play"
    h.sent()
    return h


def by_to(mails):
    out = {}
    for m in mails:
        out.setdefault(str(m["To"]), []).append(m)
    return out


def asks(mails):
    """The ask mails by player name (their first line names the proposal)."""
    return {name: m for m in mails for name, a in ADDR.items()
            if str(m["To"]) == a and "makes a proposal: please answer" in body(m).partition("\n")[0]}


def move_quietly(h, at):
    rec = h.load()
    who = rec.game.to_move
    action = quiet_action(rec, who)
    h.mail(who, str(action).replace("; ", "\n"))
    h.run(at)
    assert len(h.load().history) == len(rec.history) + 1
    h.sent()
    return who, str(action)


# ---------------------------------------------------------------- reading the lines


@pytest.mark.parametrize("line, cmd", [
    ("propose takeback", "propose takeback"), ("Propose take back", "propose takeback"),
    ("I propose a takeback.", "propose takeback"), ("propose pause 3", "propose pause 259200"),
    ("propose pause 3 days", "propose pause 259200"), ("propose pause 36h", "propose pause 129600"),
    ("propose pause 31", "propose ? pause"), ("propose pause", "propose ? pause"),
    ("propose end", "propose end"), ("propose deadline 48h", "propose deadline 172800"),
    ("propose deadline none", "propose deadline none"), ("propose deadline 3", "propose ? deadline"),
    ("propose lunch", "propose ?"), ("accept", "accept"), ("Reject!", "reject"), ("I agree.", "accept"),
    ("proponer pausa 2 días", "propose pause 172800"), ("acepto", "accept"), ("rechazo", "reject"),
    ("Vorschlag: Ende", "propose end"), ("annehmen", "accept"), ("ablehnen", "reject"),
    ("navrhuji lhůta 24h", "propose deadline 86400"), ("přijímám", "accept"), ("odmítám", "reject"),
    ("提议暂停3天", "propose pause 259200"), ("提议悔棋", "propose takeback"), ("接受", "accept"), ("拒绝", "reject"),
    ("accepted, thanks, see you", None), ("I accept your offer of a beer", None), ("endless", None),
    # the answer word first and a word or two after it (a new user's check: "Accept, sure.")
    ("Accept, sure.", "accept"), ("同意！", "accept"), ("acepto, claro", "accept"), ("I don't accept", None),
    # a deadline of minutes is not put to a vote (at least MIN_DEADLINE, an hour)
    ("propose deadline 5m", "propose ? deadline"), ("propose deadline 1h", "propose deadline 3600"),
    ("build KCC DEN-KCY white", None), ("Propose we all meet in Denver for a beer next week", None),
])
def test_proposal_lines_in_every_language(line, cmd):
    assert proposal_command(line) == cmd


# ---------------------------------------------------------------- takeback


def test_takeback_accepted_by_reply_is_the_game_masters_undo_and_replays_exactly(tmp_path):
    h = started(tmp_path)
    who, order = move_quietly(h, T0 + 2 * H)
    before = h.load()
    assert before.history[-1]["player"] == who
    h.mail(who, "propose takeback")
    h.run(T0 + 3 * H)
    mails = h.sent()
    others = [n for n in ADDR if n != who]
    ask = asks(mails)
    assert sorted(ask) == others  # one mail to each other player, in their thread
    for name, m in ask.items():
        assert str(m["Subject"]) == f"Union Pacific ridge ({name})"
        text = body(m)
        assert f"Proposal 1 of {who}: take back their last move (" in text
        # answers due 48 h after the proposal: sooner than the next move's deadline (72 h after the move)
        assert "Your answer is due by 2026-12-03 15:00 UTC" in text
    (mine,) = by_to(mails)[ADDR[who]]
    assert f"Sent to {', '.join(others)} for their answer, due by 2026-12-03 15:00 UTC." in body(mine)
    rec = h.load()
    (p,) = rec.proposals
    assert p["by"] == who and p["what"] == "takeback" and p["outcome"] is None
    assert p["at"] == "2026-12-01T15:00:00+00:00" and p["due"] == "2026-12-03T15:00:00+00:00"
    assert set(p["asked"]) == set(others) and p["order"] == order and p["moves"] == len(before.history)
    assert rec.history == before.history  # nothing changes before the vote
    # the first accept: noted, the other player still to answer
    h.reply(others[0], ask[others[0]], "accept")
    h.run(T0 + 4 * H)
    (noted,) = h.sent()
    assert str(noted["To"]) == ADDR[others[0]]
    assert f"You accept. Still to answer, by 2026-12-03 15:00 UTC: {others[1]}." in body(noted)
    # the last accept: done as the game master's undo 1
    h.reply(others[1], ask[others[1]], "Accept")
    h.run(T0 + 5 * H)
    mails = h.sent()
    rec = h.load(check=True)  # the full replay gives the recorded state
    assert rec.history == before.history[:-1]
    expected = gm.replay_prefix(before, 1)
    assert rec.game.to_dict() == expected.to_dict()
    assert rec.game.waiting_for() == [who]
    (p,) = rec.proposals
    assert p["outcome"] == "accepted" and p["closed"] == "2026-12-01T17:00:00+00:00"
    assert [a["answer"] for a in p["answers"].values()] == ["accept", "accept"]
    entry = rec.gm_log[-1]
    assert entry["by"] == "proposal 1" and entry["command"] == "undo 1"
    assert entry["undone"] == [before.history[-1]]  # the history keeps both and says why
    assert entry["reason"] == f"proposal 1 of {who}, accepted by every player asked"
    statuses = [m for m in mails if f"Every player agreed to proposal 1 of {who}: the last move (" in body(m)]
    assert sorted(str(m["To"]) for m in statuses) == sorted(ADDR.values())
    (done,) = [m for m in mails if str(m["To"]) == ADDR[others[1]] and "You accept, and so has" in body(m)]
    # the game goes on: the proposer moves again, and the file replays exactly
    h.mail(who, str(quiet_action(rec, who, seed=9)).replace("; ", "\n"))
    h.run(T0 + 6 * H)
    again = h.load(check=True)
    assert len(again.history) == len(before.history)
    assert GameStore(h.config.games_dir).load("ridge", check=True).game.to_dict() == again.game.to_dict()


def test_takeback_rejected_changes_nothing_and_is_told_to_all(tmp_path):
    h = started(tmp_path)
    who, _ = move_quietly(h, T0 + 2 * H)
    h.mail(who, "propose takeback")
    h.run(T0 + 3 * H)
    ask = asks(h.sent())
    history = h.load().history
    other = sorted(ask)[0]
    h.reply(other, ask[other], "reject")
    h.run(T0 + 4 * H)
    mails = h.sent()
    rec = h.load(check=True)
    assert rec.history == history
    (p,) = rec.proposals
    assert p["outcome"] == "rejected" and p["answers"][other]["answer"] == "reject"
    told = [m for m in mails if f"Rejected by {other}: nothing changes." in body(m)]
    assert sorted(str(m["To"]) for m in told) == sorted(ADDR.values())
    # a late accept to the rejected proposal's mail is told it was decided
    third = [n for n in ask if n != other][0]
    h.reply(third, ask[third], "accept")
    h.run(T0 + 5 * H)
    (reply,) = h.sent()
    assert "This proposal is decided: rejected." in body(reply)
    assert h.load().proposals[0]["answers"] == {other: {"answer": "reject", "at": "2026-12-01T16:00:00+00:00"}}


def test_takeback_timed_out_after_48_hours(tmp_path):
    h = started(tmp_path)
    who, _ = move_quietly(h, T0 + 2 * H)
    h.mail(who, "propose takeback")
    h.run(T0 + 3 * H)
    ask = asks(h.sent())
    first = sorted(ask)[0]
    h.reply(first, ask[first], "accept")
    h.run(T0 + 4 * H)
    h.sent()
    rec = h.load()
    # the clock wakes for the answers' due time (and for the next move's reminder, a day before its deadline)
    assert _proposal_times(rec.to_data()) == [T0 + 3 * H + 48 * H]
    assert next_event(rec.to_data()) == T0 + 2 * H + 72 * H - 24 * H
    h.run(T0 + 3 * H + 48 * H - timedelta(minutes=1))
    assert h.load().proposals[0]["outcome"] is None
    h.sent()
    h.run(T0 + 3 * H + 48 * H)
    mails = h.sent()
    rec = h.load()
    assert rec.proposals[0]["outcome"] == "timed_out"
    second = [n for n in ask if n != first][0]
    told = [m for m in mails if f"Not every player accepted in time (no answer from {second}): nothing changes."
            in body(m)]
    assert sorted(str(m["To"]) for m in told) == sorted(ADDR.values())
    assert len(rec.history) == len(h.load().history)
    # the late answer: too late
    h.reply(second, ask[second], "accept")
    h.run(T0 + 52 * H)
    (reply,) = h.sent()
    assert "This proposal is decided: not accepted in time." in body(reply)


def test_answers_are_due_by_the_moves_deadline_when_it_comes_sooner(tmp_path):
    h = started(tmp_path, settings={"deadline": 24 * 3600})
    who, _ = move_quietly(h, T0 + 2 * H)
    rec = h.load()
    nxt = rec.player_by_name(rec.game.to_move)
    assert due(rec, nxt) == T0 + 2 * H + 24 * H
    h.mail(who, "propose takeback")
    h.run(T0 + 3 * H)
    assert h.load().proposals[0]["due"] == "2026-12-02T14:00:00+00:00"


def test_takeback_refused_after_a_share_from_the_stack_was_shown(tmp_path):
    h = started(tmp_path)
    rec = h.load()
    who = rec.game.to_move
    action = revealing_action(rec, who, ev.ReplacedBy)
    h.mail(who, str(action).replace("; ", "\n"))
    h.run(T0 + 2 * H)
    h.sent()
    rec = h.load()
    assert any(isinstance(e, ev.ReplacedBy) for e in revealed(rec))
    h.mail(who, "propose takeback")
    h.run(T0 + 3 * H)
    (reply,) = h.sent()
    assert str(reply["To"]) == ADDR[who]
    assert ("Your last move cannot be taken back by agreement: it showed what was hidden (a share from the "
            "stack). Only the game master can take it back.") in body(reply)
    assert h.load().proposals == [] and h.load().history == rec.history


def test_revealed_names_a_dividend_card_and_the_initial_investments(tmp_path):
    h = Voting(tmp_path, settings={"deadline": 72 * 3600})
    for name in ("Ann", "Bob"):
        rec = h.load()
        h.mail(name, f"start {sorted(rec.game.share_hands[name])[0]}")
    h.run(T0 + H)
    rec = h.load()
    assert revealed(rec) == []  # an initial choice stays hidden until the last
    h.mail("Cy", f"start {sorted(rec.game.share_hands['Cy'])[0]}")
    h.run(T0 + 2 * H)
    h.sent()
    rec = h.load()
    assert [type(e) for e in revealed(rec)][:1] == [ev.InitialRevealed]
    h.mail("Cy", "propose takeback")
    h.run(T0 + 3 * H)
    (reply,) = h.sent()
    assert "it showed what was hidden (the initial investments" in body(reply)
    # play until a move draws a dividend card: that move is refused too
    for i in range(400):
        rec = h.load()
        who = rec.game.to_move
        h.mail(who, str(rec.game.random_action(who, random.Random(i))).replace("; ", "\n"))
        h.run(T0 + (4 + i) * H)
        h.sent()
        rec = h.load()
        if any(isinstance(e, ev.DividendAnnounced) for e in revealed(rec)):
            break
    else:
        raise AssertionError("no dividend drawn")
    h.mail(who, "propose takeback")
    h.run(h.now + H)
    (reply,) = h.sent()
    assert "it showed what was hidden (" in body(reply) and "a dividend card" in body(reply)
    assert h.load().proposals == []


def test_takeback_of_another_players_move_is_refused(tmp_path):
    h = started(tmp_path)
    who, _ = move_quietly(h, T0 + 2 * H)
    other = h.load().game.to_move
    h.mail(other, "propose takeback")
    h.run(T0 + 3 * H)
    (reply,) = h.sent()
    assert (f"The last move is {who}'s: you may propose to take back only your own last move, before the next "
            "player has moved.") in body(reply)
    assert h.load().proposals == []


def test_takeback_lapses_when_the_next_player_moves(tmp_path):
    h = started(tmp_path)
    who, _ = move_quietly(h, T0 + 2 * H)
    h.mail(who, "propose takeback")
    h.run(T0 + 3 * H)
    h.sent()
    move_quietly(h, T0 + 4 * H)  # the next player moves during the vote
    rec = h.load()
    assert rec.proposals[0]["outcome"] == "lapsed"
    assert len(rec.history) == rec.proposals[0]["moves"] + 1


# ---------------------------------------------------------------- pause, end, deadline


def test_pause_accepted_stops_the_clock_and_ends_by_itself(tmp_path):
    h = started(tmp_path)
    rec = h.load()
    waited = rec.player_by_name(rec.game.to_move)
    assert due(rec, waited) == T0 + H + 72 * H
    h.mail("Bob", "propose pause 2")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    assert sorted(ask) == ["Ann", "Cy"]
    assert "Proposal 1 of Bob: pause the game for 2 days." in body(ask["Ann"])
    h.reply("Ann", ask["Ann"], "accept")
    h.reply("Cy", ask["Cy"], "accept")
    h.run(T0 + 3 * H)
    mails = h.sent()
    rec = h.load()
    assert rec.settings["paused"] == "2026-12-01T15:00:00+00:00"
    assert rec.proposals[0]["until"] == "2026-12-03T15:00:00+00:00"
    assert rec.gm_log[-1]["by"] == "proposal 1" and rec.gm_log[-1]["command"] == "pause"
    told = [m for m in mails if "Every player agreed to proposal 1 of Bob: the game is paused for 2 days." in body(m)]
    assert sorted(str(m["To"]) for m in told) == sorted(ADDR.values())
    assert next_event(rec.to_data()) == T0 + 3 * H + 48 * H
    h.run(T0 + 3 * H + 48 * H)
    mails = h.sent()
    rec = h.load()
    assert rec.settings["paused"] is None and rec.proposals[0]["resumed"] == "2026-12-03T15:00:00+00:00"
    # the wait under way lost nothing: its deadline moved by the 48 h of the pause
    assert due(rec, rec.player_by_name(waited.name)) == T0 + H + 72 * H + 48 * H
    assert any("The pause the players agreed on (proposal 1 of Bob) is over: the game goes on." in body(m)
               for m in mails if str(m["To"]) == ADDR["Ann"])


def test_pause_rejected_and_pause_timed_out(tmp_path):
    h = started(tmp_path)
    h.mail("Bob", "propose pause 3")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    h.reply("Cy", ask["Cy"], "reject")
    h.run(T0 + 3 * H)
    h.sent()
    rec = h.load()
    assert rec.proposals[0]["outcome"] == "rejected" and not rec.settings.get("paused")
    h.mail("Cy", "propose pause 1")
    h.run(T0 + 4 * H)
    h.sent()
    h.run(T0 + 4 * H + 48 * H)
    rec = h.load()
    assert [p["outcome"] for p in rec.proposals] == ["rejected", "timed_out"] and not rec.settings.get("paused")


def test_end_accepted_records_the_standings_as_the_game_masters_end(tmp_path):
    h = started(tmp_path)
    h.mail("Cy", "propose end")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    standings = h.load().game.standings()
    h.reply("Ann", ask["Ann"], "accept")
    h.reply("Bob", ask["Bob"], "accept")
    h.run(T0 + 3 * H)
    mails = h.sent()
    rec = h.load()
    assert rec.ended == {"by": "proposal 1", "at": "2026-12-01T15:00:00+00:00",
                         "standings": [[pl, p, m] for pl, p, m in standings],
                         "reason": "proposal 1 of Cy, accepted by every player asked"}
    assert any("Every player agreed to proposal 1 of Cy: the game ends now. The standings at this point: 1. "
               in body(m) for m in mails)
    assert next_event(rec.to_data()) is None


def test_end_rejected_and_timed_out(tmp_path):
    h = started(tmp_path)
    h.mail("Cy", "propose end")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    h.reply("Ann", ask["Ann"], "rejected")
    h.run(T0 + 3 * H)
    assert h.load().ended is None and h.load().proposals[0]["outcome"] == "rejected"
    h.mail("Ann", "propose end")
    h.run(T0 + 4 * H)
    h.run(T0 + 52 * H)
    rec = h.load()
    assert rec.ended is None and rec.proposals[1]["outcome"] == "timed_out"


def test_deadline_accepted_rejected_and_timed_out(tmp_path):
    h = started(tmp_path)
    h.mail("Ann", "propose deadline 48h")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    h.reply("Bob", ask["Bob"], "accept")
    h.reply("Cy", ask["Cy"], "accept")
    h.run(T0 + 3 * H)
    mails = h.sent()
    rec = h.load()
    assert rec.settings["deadline"] == 48 * 3600
    assert rec.gm_log[-1]["command"] == "deadline 2d" and rec.gm_log[-1]["by"] == "proposal 1"
    # the move under way counts from the decision
    assert due(rec, rec.player_by_name(rec.game.to_move)) == T0 + 3 * H + 48 * H
    assert any("every move has a deadline of 2 days now" in body(m) for m in mails)
    h.mail("Bob", "propose deadline none")
    h.run(T0 + 4 * H)
    ask = asks(h.sent())
    h.reply("Ann", ask["Ann"], "reject")
    h.run(T0 + 5 * H)
    assert h.load().settings["deadline"] == 48 * 3600
    h.mail("Bob", "propose deadline 5d")
    h.run(T0 + 6 * H)
    h.run(T0 + 6 * H + 48 * H)
    rec = h.load()
    assert [p["outcome"] for p in rec.proposals] == ["accepted", "rejected", "timed_out"]
    assert rec.settings["deadline"] == 48 * 3600


# ---------------------------------------------------------------- the rules of the vote


def test_one_open_proposal_at_a_time_and_the_refusals_say_what_would_do(tmp_path):
    h = started(tmp_path)
    h.mail("Ann", "propose pause 2")
    h.run(T0 + 2 * H)
    h.sent()
    h.mail("Bob", "propose end")
    h.run(T0 + 3 * H)
    (reply,) = h.sent()
    assert "Proposal 1 of Ann: pause the game for 2 days." in body(reply)
    assert "This proposal is still open (answers due by 2026-12-03 14:00 UTC)" in body(reply)
    assert len(h.load().proposals) == 1


def test_usage_and_answers_without_a_proposal(tmp_path):
    h = started(tmp_path)
    h.mail("Bob", "propose lunch")
    h.run(T0 + 2 * H)
    (reply,) = h.sent()
    text = body(reply)
    assert "That is no proposal the moderator can put to the vote." in text
    assert "propose pause 3     a pause of 3 days (at most 30)" in text
    h.mail("Bob", "propose pause 45")
    h.run(T0 + 3 * H)
    (reply,) = h.sent()
    assert 'A pause is proposed in days, from 1 to 30: "propose pause 3".' in body(reply)
    h.mail("Cy", "accept")
    h.run(T0 + 4 * H)
    (reply,) = h.sent()
    assert "There is no open proposal to answer: nothing was changed." in body(reply)
    assert h.load().proposals == []


def test_the_proposer_withdraws_with_reject(tmp_path):
    h = started(tmp_path)
    h.mail("Ann", "propose end")
    h.run(T0 + 2 * H)
    h.sent()
    h.mail("Ann", "accept")
    h.run(T0 + 3 * H)
    (reply,) = h.sent()
    assert "This is your own proposal: it counts as accepted by you." in body(reply)
    h.mail("Ann", "reject")
    h.run(T0 + 4 * H)
    mails = h.sent()
    assert h.load().proposals[0]["outcome"] == "withdrawn"
    assert sorted(str(m["To"]) for m in mails if "Withdrawn by Ann: nothing changes." in body(m)) == \
        sorted(ADDR.values())


def test_the_built_in_players_seat_abstains(tmp_path):
    h = started(tmp_path, bots=("Dee",))
    assert h.load().player_by_name("Dee").bot
    h.mail("Ann", "propose pause 1")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    assert sorted(ask) == ["Bob", "Cy"]  # Dee is the built-in player's: not asked
    assert set(h.load().proposals[0]["asked"]) == {"Bob", "Cy"}
    h.reply("Bob", ask["Bob"], "accept")
    h.reply("Cy", ask["Cy"], "accept")
    h.run(T0 + 3 * H)
    assert h.load().proposals[0]["outcome"] == "accepted" and h.load().settings["paused"]


def test_a_seat_that_resigns_during_the_vote_does_not_block_it(tmp_path):
    h = started(tmp_path)
    h.mail("Ann", "propose deadline 24h")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    h.reply("Bob", ask["Bob"], "accept")
    h.mail("Cy", "resign")
    h.run(T0 + 3 * H)
    h.mail("Cy", "resign confirm")
    h.run(T0 + 4 * H)
    h.sent()
    assert h.load().proposals[0]["outcome"] is None
    h.run(T0 + 2 * H + 48 * H)  # at the due time: every seat that still votes accepted
    rec = h.load()
    assert rec.proposals[0]["outcome"] == "accepted" and rec.settings["deadline"] == 24 * 3600


def test_a_spanish_player_is_asked_in_spanish_and_answers_in_spanish(tmp_path):
    h = started(tmp_path)
    h.mail("Bob", "idioma es")
    h.run(T0 + 2 * H)
    h.sent()
    h.mail("Ann", "propose pause 2")
    h.run(T0 + 3 * H)
    ask = asks(h.sent())
    assert sorted(ask) == ["Cy"]  # Bob's is in Spanish: not found by the English words
    rec = h.load()
    (bob,) = [m for m in _all(h) if str(m["Message-ID"]) == rec.proposals[0]["asked"]["Bob"]]
    assert str(bob["To"]) == ADDR["Bob"]
    assert str(bob["Subject"]) == "Union Pacific ridge (Bob)"
    text = body(bob)
    assert "Ann hace una propuesta: responde, por favor" in text.partition("\n")[0]
    assert "Propuesta 1 de Ann: poner la partida en pausa durante 2 días." in text
    assert "Responde a este correo con una línea: acepto, o rechazo." in text
    h.reply("Bob", bob, "Acepto")
    h.run(T0 + 4 * H)
    (noted,) = h.sent()
    assert "Aceptas. Faltan por responder, antes del jue, 3 dic 2026, 15:00 UTC: Cy." in body(noted)
    h.reply("Cy", ask["Cy"], "accept")
    h.run(T0 + 5 * H)
    assert h.load().proposals[0]["outcome"] == "accepted"


def _all(h):
    """Every mail in the outbox."""
    from email.parser import BytesParser

    return [BytesParser(policy=policy.default).parsebytes(h.outbox.get_bytes(k)) for k in h.outbox.keys()]


@pytest.mark.parametrize("language", ["en", "es", "de", "cs", "zh"])
def test_the_guides_lines_read_back_as_the_proposals_they_name(language):
    """Each line of the guide (help, welcome, a refusal), as the language writes
    it, is read back as the proposal it explains; the ask mail's answers too."""
    from moderator import i18n
    from moderator.render.words import word

    with i18n.speaking(language):
        lines = word("proposals", "guide_lines", max_days=30).split("\n")
        ask = word("proposals", "ask", kind="end", proposer="Ann", number=1, order=None, length=None,
                   others=[], due="x")
    examples = [line.split("  ")[0].strip() for line in lines]
    assert [proposal_command(e) for e in examples] == [
        "propose takeback", "propose pause 259200", "propose end", "propose deadline 172800"]
    answers = {"en": ("accept", "reject"), "es": ("acepto", "rechazo"), "de": ("annehmen", "ablehnen"),
               "cs": ("přijímám", "odmítám"), "zh": ("接受", "拒绝")}[language]
    for a, cmd in zip(answers, ("accept", "reject")):
        assert a in ask and proposal_command(a) == cmd


def test_a_game_file_without_proposals_has_no_key_and_one_with_them_keeps_them(tmp_path):
    h = started(tmp_path)
    assert "proposals" not in h.load().to_data()
    h.mail("Ann", "propose pause 2")
    h.run(T0 + 2 * H)
    data = h.load().to_data()
    assert [p["what"] for p in data["proposals"]] == ["pause"]
    assert GameStore(h.config.games_dir).load("ridge", check=True).proposals == data["proposals"]


def test_a_player_makes_at_most_three_proposals_a_day(tmp_path):
    h = started(tmp_path)
    for i in range(3):  # each made and withdrawn at once
        h.mail("Ann", "propose end")
        h.run(T0 + (2 + 2 * i) * H)
        h.mail("Ann", "reject")
        h.run(T0 + (3 + 2 * i) * H)
    h.sent()
    h.mail("Ann", "propose end")
    h.run(T0 + 9 * H)
    (reply,) = h.sent()
    assert ("You made 3 proposals today, the most one player may make in a day: propose again tomorrow (UTC)."
            in body(reply))
    assert [p["outcome"] for p in h.load().proposals] == ["withdrawn"] * 3
    h.mail("Ann", "propose end")  # the next UTC day
    h.run(T0 + 12 * H)
    assert len(h.load().proposals) == 4 and h.load().proposals[3]["outcome"] is None


def test_an_answer_forged_by_a_stranger_or_another_player_counts_for_nothing(tmp_path):
    h = started(tmp_path)
    h.mail("Ann", "propose end")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    # a stranger replies to Bob's proposal mail, and Cy replies from Cy's address to Bob's mail
    h.addr["Eve"] = "eve@example.com"
    h.reply("Eve", ask["Bob"], "accept")
    h.reply("Cy", ask["Bob"], "accept")
    h.run(T0 + 3 * H)
    h.sent()
    rec = h.load()
    assert rec.proposals[0]["answers"] == {} and rec.proposals[0]["outcome"] is None and rec.ended is None
    # the real answers still count
    h.reply("Bob", ask["Bob"], "accept")
    h.reply("Cy", ask["Cy"], "accept")
    h.run(T0 + 4 * H)
    assert h.load().ended["by"] == "proposal 1"


def test_a_public_export_shows_a_takebacks_move_as_the_history_does(tmp_path):
    from moderator.archive.export import export_data
    from moderator.rules.notation import public_order

    h = started(tmp_path)
    rec = h.load()
    who = rec.game.to_move
    rng = random.Random(0)
    for _ in range(2000):  # a quiet move with an UP swap (the share returned is hidden)
        action = rec.game.random_action(who, rng)
        if "swap" not in str(action):
            continue
        copy = gm.replay_prefix(rec, 0)
        start = len(copy.events)
        copy.push(who, action)
        if not any(isinstance(e, REVEALING) for e in copy.events[start:]):
            break
    else:
        raise AssertionError("no quiet move with a swap")
    h.mail(who, str(action).replace("; ", "\n"))
    h.run(T0 + 2 * H)
    h.mail(who, "propose takeback")
    h.run(T0 + 3 * H)
    data = GameStore(h.config.games_dir).read_data("ridge")
    (p,) = data["proposals"]
    assert p["order"] == str(action)
    (out,) = export_data(data)["proposals"]
    assert out["order"] == public_order(str(action), True) != str(action)
    assert set(out["asked"]) == set(p["asked"]) and set(out["asked"].values()) == {None}
    assert "@" not in str(export_data(data))


def test_help_welcome_and_rules_explain_proposals(tmp_path):
    h = Voting(tmp_path, settings={"deadline": 72 * 3600})
    welcome = [m for m in h.sent() if str(m["To"]) == ADDR["Ann"]][0]
    assert "PROPOSALS\n  The players may agree to take back a move, pause, end the game or\n" in body(welcome)
    h.mail("Ann", "help\nrules")
    h.run(T0 + H)
    texts = [body(m) for m in h.sent()]
    assert any("    propose takeback    your last move, before the next player moved\n" in t for t in texts)
    assert any("Proposals (propose takeback, pause DAYS, end, deadline DURATION): every other\n" in t for t in texts)


def test_pbem_replay_names_the_players_decisions(tmp_path, monkeypatch):
    from click.testing import CliRunner
    import yaml

    import pbem

    h = started(tmp_path)
    h.mail("Cy", "propose end")
    h.run(T0 + 2 * H)
    ask = asks(h.sent())
    h.reply("Ann", ask["Ann"], "accept")
    h.reply("Bob", ask["Bob"], "accept")
    h.run(T0 + 3 * H)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pbem.yaml").write_text(yaml.safe_dump({"games_dir": "games", "spool_dir": "spool"}))
    r = CliRunner().invoke(pbem.main, ["replay", "ridge"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert ("  players: 2026-12-01T15:00:00+00:00 proposal 1: end (proposal 1 of Cy, accepted by every player "
            "asked)\n") in r.output
    assert "Ended by the players (proposal 1) at 2026-12-01T15:00:00+00:00." in r.output
