"""``moderation.spooled``: what the cycle asks the spool after every mail (was a
mail answered by a spooled one, which status mails are stale), answered as
``Spool.entries`` answers it while each meta file is read once."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from email.message import EmailMessage

from moderator.moderation import spooled
from moderator.store.spool import SENDING, Spool

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def mail(to: str) -> EmailMessage:
    msg = EmailMessage()
    msg["To"], msg["From"], msg["Subject"] = to, "mod@example.org", f"to {to}"
    msg.set_content("hello\n")
    return msg


def status(player: str, game: str = "g", **extra) -> tuple[EmailMessage, dict]:
    return mail(f"{player}@example.org"), {"kind": "status", "game": game, "player": player, **extra}


def as_spool(spool: Spool, game: str) -> dict[str, list[str]]:
    """The stale status mails of ``game`` by player, as ``Spool.stale_status`` lists them."""
    out = {}
    for player in ("A", "B"):
        names = [e.name for e in spool.stale_status(game, player)]
        if names:
            out[player] = names
    return out


def test_the_view_answers_as_the_spool_does_as_it_grows_and_shrinks(tmp_path):
    spool = Spool(tmp_path / "spool")
    view = spooled.view(spool)
    assert view.entries() == [] and not view.answers("<m1>")
    a1, b1 = spool.add_many([status("A"), status("B")], NOW)
    (r1,) = spool.add_many([(mail("A@example.org"), {"kind": "reply", "answers": "<m1>"})], NOW)
    assert view.answers("<m1>") and not view.answers("<m2>")
    assert {p: [n for n, _ in v] for p, v in view.stale_status("g").items()} == as_spool(spool, "g") \
        == {"A": [a1], "B": [b1]}
    # a merged mail names the one it replaces: the replaced one is gone from both
    (a2,) = spool.add_many([status("A", replaces=[a1])], NOW)
    assert {p: [n for n, _ in v] for p, v in view.stale_status("g").items()} == {"A": [a2], "B": [b1]}
    assert as_spool(spool, "g") == {"A": [a2], "B": [b1]}
    # a mail whose sending is under way is no stale status mail; another game's neither
    (tmp_path / "spool" / SENDING).write_text(json.dumps({"at": NOW.isoformat(), "names": [b1]}))
    spool.add_many([status("B", game="other")], NOW)
    assert {p: [n for n, _ in v] for p, v in view.stale_status("g").items()} == {"A": [a2]} \
        == as_spool(spool, "g")
    # removed entries leave the view
    spool.remove(r1)
    assert not view.answers("<m1>")
    assert [n for n, _ in view.entries()] == [e.name for e in spool.entries()]


def test_an_entry_being_written_is_not_seen_until_its_meta_file_is_there(tmp_path):
    spool = Spool(tmp_path / "spool")
    view = spooled.view(spool)
    (tmp_path / "spool" / "00000000000000000001-00001-000001.eml").write_bytes(b"To: x\n\nhi\n")
    assert view.entries() == [] == spool.entries()
    (tmp_path / "spool" / "00000000000000000001-00001-000001.json").write_text(
        json.dumps({"kind": "reply", "answers": "<late>"}))
    assert view.answers("<late>")
