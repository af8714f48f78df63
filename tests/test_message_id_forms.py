"""Message-IDs in In-Reply-To and References as real mail carries them (issue 24).

Some clients and gateways write In-Reply-To without angle brackets, fold a long
References over lines (even inside an id), add comments, or name several ids in
one header.  Each form, in In-Reply-To alone and in References alone, answering
the welcome mail the moderator sent Ben, must authenticate Ben's ``rules``
command (answered ``rules in force``), never "secret missing or wrong"."""
from __future__ import annotations

import pytest

from moderator.mail.read import read_mail
from moderator.mail.threads import message_ids
from test_threads import OWN, Table, first_line

BEN = "ben.carter@gmail.com"
OTHER = "<CAF=other.id@mail.gmail.com>"


def forms(mid: str) -> dict[str, str]:
    """The header values naming our Message-ID ``mid`` (``'<x@y>'``), by form."""
    bare = mid[1:-1]
    left, _, right = bare.partition("@")
    return {
        "angle brackets": mid,
        "no angle brackets": bare,
        "no angle brackets, several": f"{OTHER[1:-1]} {bare}",
        "folded between ids": f"{OTHER}\r\n\t{mid}",
        "folded inside the id": f"<{left[:9]}\r\n {left[9:]}@{right}>",
        "comment after": f"{mid} (Ben's mail of Tue, 1 Dec 2026)",
        "comment with an address before": f"(from \"Ann\" <ann@example.org>) {mid}",
        "quoted phrase (RFC 822 form)": f"\"Your message of Tue, 1 Dec 2026 10:00\" {mid}",
        "several, comma separated": f"{OTHER},{mid}",
        "several, ours last": f"{OTHER} <a.b@c.example> {mid}",
    }


def test_message_ids_reads_each_form():
    mid = "<abcdefghijklm.aaaaaaaaaaaaaaaa.pbem.ridge@up.example.org>"
    got = {name: message_ids(value) for name, value in forms(mid).items()}
    assert got == {
        "angle brackets": [mid],
        "no angle brackets": [mid],
        "no angle brackets, several": [OTHER, mid],
        "folded between ids": [OTHER, mid],
        "folded inside the id": [mid],
        "comment after": [mid],
        "comment with an address before": [mid],
        "quoted phrase (RFC 822 form)": [mid],
        "several, comma separated": [OTHER, mid],
        "several, ours last": [OTHER, "<a.b@c.example>", mid],
    }
    assert message_ids(None) == [] and message_ids("") == [] and message_ids("no id here") == []
    assert message_ids("<a@b> <a@b>") == ["<a@b>"]  # no repeats
    assert message_ids("<broken@x") == []  # unclosed: nothing invented


def _raw(header: str, value: str) -> bytes:
    return (f"From: Ben Carter <{BEN}>\r\nTo: {OWN}\r\nSubject: Re: Union Pacific ridge\r\n"
            f"Message-ID: <reply.{abs(hash(header + value))}@mail.gmail.com>\r\n"
            f"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\n{header}: {value}\r\n"
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nrules\r\n").encode()


@pytest.mark.parametrize("header", ["In-Reply-To", "References"])
@pytest.mark.parametrize("form", list(forms("<x@y>")))
def test_each_form_is_read_by_read_mail(header, form):
    mid = "<abcdefghijklm.aaaaaaaaaaaaaaaa.pbem.ridge@up.example.org>"
    om = read_mail(_raw(header, forms(mid)[form]), own_address=OWN)
    assert mid in om.thread_refs
    if header == "In-Reply-To":
        assert om.replied_to[-1] == mid and om.in_reply_to == om.replied_to[0] and om.references == []
    else:
        assert om.references[-1] == mid and om.in_reply_to is None


@pytest.mark.parametrize("header", ["In-Reply-To", "References"])
@pytest.mark.parametrize("form", ["no angle brackets", "no angle brackets, several", "folded inside the id",
                                  "comment with an address before", "quoted phrase (RFC 822 form)",
                                  "several, ours last"])
def test_each_form_authenticates_the_player(tmp_path, header, form):
    """The whole loop: Ben's reply in that form is his; his command is answered."""
    table = Table(tmp_path, corpus_secret=False)
    welcome = next(str(m["Message-ID"]) for m in table.sent() if str(m["To"]).lower() == BEN)
    table.inbox.add(_raw(header, forms(welcome)[form]))
    report = table.mod.run_cycle()
    (answer,) = table.sent()
    assert (str(answer["To"]).lower(), first_line(answer)) == (BEN, "Union Pacific, game ridge: rules in force")
    assert (report.commands, report.refused) == (1, 0)
