"""The features of issue 26-30 together. Press and proposals: a reply to a relayed message that holds a vote
(`accept`), a command or an order is read as that, never relayed back as a message
(the press helper's warning at the merge: `accept` in reply to a relayed mail)."""
from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.utils import make_msgid

from test_deadlines import H, T0, Clocked, deliver


def _reply(h, name, to_msg, body):
    rec = h.load()
    msg = EmailMessage(policy=policy.default)
    msg["From"] = h.addr[name]
    msg["To"] = h.config.moderator_address
    msg["Subject"] = "Re: " + str(to_msg["Subject"])
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg["In-Reply-To"] = to_msg["Message-ID"]
    msg["References"] = to_msg["Message-ID"]
    msg.set_content(body + "\n\n> quoted text of the relayed message\n")
    deliver(h.inbox, msg.as_bytes(), h.now)


def test_accept_in_reply_to_a_relayed_message_is_a_vote(tmp_path):
    h = Clocked(tmp_path, players=[("Ann", "ann@example.org"), ("Bob", "bob@example.org")])
    for name in ("Ann", "Bob"):
        h.move(name)
    h.run(T0 + H)
    h.sent()
    h.mail("Ann", "to Bob: shall we pause for the holidays?")
    h.run(T0 + 2 * H)
    relayed = [m for m in h.sent() if m["To"] == "bob@example.org" and "Ann (game ridge)" in str(m["From"])]
    assert len(relayed) == 1
    h.mail("Ann", "propose pause 3")
    h.run(T0 + 3 * H)
    h.sent()
    assert [p["outcome"] for p in h.load().proposals] == [None]
    _reply(h, "Bob", relayed[0], "accept")
    h.run(T0 + 4 * H)
    rec = h.load()
    assert [(p["what"], p["outcome"]) for p in rec.proposals] == [("pause", "accepted")]
    assert [e["from"] for e in rec.press] == ["Ann"]  # nothing relayed back from Bob
    assert rec.settings["paused"] is not None


def test_a_takeback_the_players_agreed_drops_queues_in_their_words(tmp_path):
    """A queued order dropped by an agreed takeback is told as the players' decision,
    not as the game master's (a new user's check: "The game master took moves back")."""
    h = Clocked(tmp_path, players=[("Ann", "ann@example.org"), ("Bob", "bob@example.org")])
    for name in ("Ann", "Bob"):
        h.move(name)
    h.run(T0 + H)
    rec = h.load()
    (first,) = rec.game.waiting_for()
    other = "Bob" if first == "Ann" else "Ann"
    build = next(str(a) for a in rec.game.legal_actions(first)
                 if str(a).startswith("build ") and str(a).endswith("take stack"))
    h.mail(first, build.replace("; ", "\n"))
    h.run(T0 + 2 * H)
    share = sorted(s for s in h.load().game.share_hands[other] if s != "UP")[0]
    h.mail(other, f"next: invest {share}; discard plain or black or white or black-white")
    h.run(T0 + 3 * H)
    assert h.load().queued[other]
    h.sent()
    h.mail(first, "propose takeback")
    h.run(T0 + 4 * H)
    h.sent()
    h.mail(other, "accept")
    h.run(T0 + 5 * H)
    rec = h.load()
    assert [(p["what"], p["outcome"]) for p in rec.proposals] == [("takeback", "accepted")]
    assert not rec.queued.get(other)
    texts = [" ".join(m.get_body(preferencelist=("plain",)).get_content().split())
             for m in h.sent() if m["To"] == h.addr[other]]
    assert any("Moves were taken back, so your queued orders are dropped" in t for t in texts), texts
    assert not any("The game master took moves back" in t for t in texts)


def test_the_order_given_is_kept_without_its_sign_off(tmp_path):
    """A standing choice fills in an order that ends with a sign-off: the history's
    ``alternatives`` (and the status mail's echo) hold the order lines only, not
    "Best regards / Ann" (a new user's check: "investuj UP / S pozdravem / Cyril")."""
    h = Clocked(tmp_path)
    for name in ("Ann", "Bob", "Cy"):
        h.move(name)
    h.run(T0 + H)
    rec = h.load()
    (first,) = rec.game.waiting_for()
    h.mail(first, "auto take stack")
    h.run(T0 + 2 * H)
    build = next(str(a) for a in h.load().game.legal_actions(first)
                 if str(a).startswith("build ") and str(a).endswith("; take stack")).removesuffix("; take stack")
    h.mail(first, f"{build}\n\nBest regards,\n{first}")
    h.run(T0 + 3 * H)
    last = h.load().history[-1]
    assert last["player"] == first and last["order"] == f"{build}; take stack"
    assert last["alternatives"] == build
