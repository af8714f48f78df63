"""A mail this process spooled is sent with the header section of the message
it was written from (``spool._KEPT``), not parsed again from its file: the same
headers as parsing gives, and a file that no longer holds those bytes is parsed."""
from __future__ import annotations

from datetime import datetime, timezone

from moderator.mail.compose import build_message
from moderator.mail.transport import StoredMail, envelope_of
from moderator.store import spool as spool_module
from moderator.store.spool import Spool

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)


def mail(to: str, subject: str):
    return build_message(
        from_addr="moderator@up.example", from_name="Union Pacific (ridge)", to=to, subject=subject,
        text="Your move.\n", html="<p>Your move.</p>\n", images=[("map.g1@up.example", b"\x89PNG fake")],
        in_reply_to="<b2@players.example>", references=["<r1@up.example>"], domain="up.example")


def same(kept: StoredMail, parsed: StoredMail) -> None:
    assert kept.raw == parsed.raw
    assert kept.keys() == parsed.keys()
    for name in parsed.keys():
        assert [str(v) for v in kept.get_all(name)] == [str(v) for v in parsed.get_all(name)], name
    assert envelope_of(kept) == envelope_of(parsed)
    assert kept.get_content_type() == parsed.get_content_type() == "multipart/alternative"
    assert ("Bcc" in kept, "Bcc" in parsed) == (False, False)


def test_a_spooled_mail_keeps_its_headers_for_sending(tmp_path):
    spool = Spool(tmp_path / "spool")
    msgs = [mail("Zoë Ångström <zoe@players.example>", "Union Pacific g1 (Zoë) " + "long " * 20),
            mail("ann@players.example", "Union Pacific g1 (Ann)")]
    spool.add_many([(m, {"kind": "status"}) for m in msgs], NOW)
    entries = spool.entries()
    assert len(entries) == 2
    for entry in entries:
        assert str(entry.path) in spool_module._KEPT
        kept = entry.stored
        parsed = StoredMail.of(entry.path.read_bytes())
        same(kept, parsed)
        assert kept["To"] is not parsed["To"]  # the very header object spooled, not a new parse
    assert envelope_of(entries[0].stored) == ("moderator@up.example", ["zoe@players.example"])
    spool.remove(entries[0].name)  # sent: nothing kept for it
    assert str(entries[0].path) not in spool_module._KEPT and str(entries[1].path) in spool_module._KEPT


def test_a_changed_file_is_parsed_again(tmp_path):
    spool = Spool(tmp_path / "spool")
    [name] = spool.add_many([(mail("ann@players.example", "Union Pacific g1 (Ann)"), {"kind": "status"})], NOW)
    path = tmp_path / "spool" / f"{name}.eml"
    path.write_bytes(path.read_bytes().replace(b"To: ann@players.example", b"To: bob@players.example"))
    [entry] = spool.entries()
    assert envelope_of(entry.stored) == ("moderator@up.example", ["bob@players.example"])
    same(entry.stored, StoredMail.of(path.read_bytes()))
