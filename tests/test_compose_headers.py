"""The headers of the mails ``build_message`` makes are parsed once per value
and their classes made once per name (issue 31: a quarter of building a
status mail was the ``email`` package making a class for every header), and
they are the very headers ``email.policy.default`` makes: the same text, the
same folding, the same bytes."""
from __future__ import annotations

from email import policy
from email.parser import BytesParser

import pytest

from moderator.mail import compose

HEADERS = [
    ("Content-Type", 'text/plain; charset="utf-8"'),
    ("Content-Type", "multipart/alternative"),
    ("Content-Transfer-Encoding", "8bit"),
    ("MIME-Version", "1.0"),
    ("Content-Disposition", "inline"),
    ("Date", "Tue, 01 Dec 2026 12:00:00 +0000"),
    ("Message-ID", "<1.2.abcdefgh.pbem.ridge@up.example>"),
    ("References", "<a@up.example> <b@up.example>"),
    ("Subject", "Union Pacific, Spiel ridge: Zug von Ana – ein sehr langer Betreff, der gefaltet werden muss"),
    ("To", "Ana Müller <ana@example.org>"),
]


@pytest.mark.parametrize("name,value", HEADERS)
def test_a_header_is_the_one_policy_default_makes(name, value):
    mine = compose._POLICY.header_store_parse(name, value)
    theirs = policy.default.header_store_parse(name, value)
    assert mine[0] == theirs[0] == name
    assert str(mine[1]) == str(theirs[1])
    assert mine[1].fold(policy=policy.SMTP) == theirs[1].fold(policy=policy.SMTP)
    assert mine[1].defects == theirs[1].defects
    assert type(mine[1]).__mro__[1:] == type(theirs[1]).__mro__[1:]  # the same header class and BaseHeader


def test_recurring_values_share_one_header_and_each_name_one_class():
    first = compose._POLICY.header_store_parse("Content-Type", 'text/plain; charset="utf-8"')[1]
    again = compose._POLICY.header_store_parse("Content-Type", 'text/plain; charset="utf-8"')[1]
    assert again is first
    a = compose._POLICY.header_store_parse("Message-ID", "<x1@up.example>")[1]
    b = compose._POLICY.header_store_parse("Message-ID", "<x2@up.example>")[1]
    assert a is not b and type(a) is type(b)  # a new header, a class made once
    unique = 'multipart/related; boundary="===============0123456789abcdef0123456789abcdef=="'
    assert compose._POLICY.header_store_parse("Content-Type", unique)[1] is not \
        compose._POLICY.header_store_parse("Content-Type", unique)[1]  # a boundary is not kept


def test_a_given_message_id_is_the_last_header_and_the_only_one():
    msg = compose.build_message(from_addr="moderator@up.example", from_name="UP", to="ana@example.org",
                                subject="Union Pacific ridge", text="Hello\n", html="<p>Hello</p>",
                                images=[("map.ridge@up.example", b"\x89PNG\r\n\x1a\n")],
                                domain="up.example", message_id="<1.tok.pbem.ridge@up.example>")
    assert msg.keys()[-1] == "Message-ID" and msg.get_all("Message-ID") == ["<1.tok.pbem.ridge@up.example>"]
    plain = compose.build_message(from_addr="moderator@up.example", from_name="UP", to="ana@example.org",
                                  subject="Union Pacific ridge", text="Hello\n", domain="up.example")
    assert plain.keys()[:5] == ["From", "To", "Subject", "Date", "Message-ID"]  # made here: after the Date
    raw = compose.flatten(msg)
    back = BytesParser(policy=policy.default).parsebytes(raw)
    assert compose.flatten(back) == raw  # read again with policy.default: the same bytes
    assert back.get_body(("plain",)).get_content() == "Hello\r\n"  # read from the CRLF bytes it was sent as
