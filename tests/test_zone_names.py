"""A whole-hour offset is shown as players write it: `timezone UTC+2` is stored as
the IANA zone ``Etc/GMT-2`` (POSIX inverts the sign) and was shown as such; now the
answer and every deadline say ``UTC+2`` (found by a new user's check)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from moderator import i18n
from moderator.render.when import format_when, zone_name
from test_deadlines import H, T0, Clocked


@pytest.mark.parametrize("zone, shown", [("Etc/GMT-2", "UTC+2"), ("Etc/GMT+5", "UTC-5"),
                                         ("Etc/GMT-14", "UTC+14"), ("Europe/Prague", "Europe/Prague"),
                                         ("UTC", "UTC")])
def test_zone_name(zone, shown):
    assert zone_name(zone) == shown


WHEN = datetime(2026, 12, 3, 14, 5, tzinfo=timezone.utc)


@pytest.mark.parametrize("language, text", [
    ("en", "2026-12-03 16:05 UTC+2"),
    ("de", "Do., 3. Dez. 2026, 16:05 UTC+2"),
])
def test_deadlines_in_an_offset_zone_name_it_with_the_usual_sign(language, text):
    with i18n.speaking(language):
        assert format_when(WHEN, "Etc/GMT-2") == text


def test_the_timezone_answer_says_utc_plus_2(tmp_path):
    h = Clocked(tmp_path)
    h.sent()
    h.mail("Ann", "timezone UTC+2")
    h.run(T0 + H)
    (answer,) = [m for m in h.sent() if m["To"] == "ann@example.org"]
    body = answer.get_body(preferencelist=("plain",)).get_content()
    assert "Your time zone is now UTC+2 (it is 2026-12-01 15:00 UTC+2 there)." in body
    assert "Etc/GMT" not in body
    assert h.load().player_by_name("Ann").timezone == "Etc/GMT-2"
