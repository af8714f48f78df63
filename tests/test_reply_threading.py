"""The answer to a player's order replies to their order mail (In-Reply-To)
also when the built-in player moves right after it in the same cycle: the
status mail of the order, unsent, is replaced by one telling both moves, and
that one replied only to the player's thread (found by the load benchmark:
orders of the seat before a built-in player's had no recognised answer)."""
from __future__ import annotations

import mailbox

from test_deadlines import H, T0, Clocked, to


def test_the_seat_before_the_built_in_player_gets_a_reply_to_its_order(tmp_path):
    c = Clocked(tmp_path, players=[("Ann", "ann@example.org"), ("Bob", "bob@example.org")], bots=["Cy"])
    c.run(T0)
    c.sent()
    checked = 0
    for step in range(1, 14):
        rec = c.load()
        humans = [n for n in rec.game.waiting_for() if not rec.player_by_name(n).bot]
        if not humans:
            break
        name = humans[0]
        inbox = mailbox.Maildir(str(c.config.maildir_inbox))
        before = set(inbox.keys())
        c.move(name)
        (key,) = set(inbox.keys()) - before
        order_id = str(inbox.get_message(key)["Message-ID"])
        moved_by_bot = len(rec.history)
        c.run(T0 + step * H)
        after = c.load()
        (mail,) = to(c.sent(), c.addr[name])
        assert str(mail["In-Reply-To"]) == order_id, (step, name)
        assert order_id in str(mail["References"]).split()
        if any(h.get("by") == "bot" for h in after.history[moved_by_bot:]):
            checked += 1  # the built-in player moved in the same cycle: the merged mail
    assert checked >= 3
