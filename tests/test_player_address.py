"""Player addresses at game creation: exactly one valid address, parsed strictly
(issue: hostile input at `pbem new`)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import pbem
from moderator.mail.read import player_address


@pytest.mark.parametrize("text,address", [
    ("ann@example.org", "ann@example.org"),
    ("Ann@Example.ORG", "ann@example.org"),
    ("Ann Smith <ann@example.org>", "ann@example.org"),
    ('"Smith, Ann" <ann@example.org>', "ann@example.org"),
    ("  bob@mail.example.net ", "bob@mail.example.net"),
])
def test_one_address_is_read(text, address):
    assert player_address(text) == address


@pytest.mark.parametrize("text,why", [
    ("b@x.org\r\nBcc: v@e.org", "control characters"),
    ("b@x.org\nBcc: v@e.org", "control characters"),
    ('"e" <a@x.org>, o@evil.org', "2 addresses"),
    ("a@x.org, b@y.org", "2 addresses"),
    ("annexample.org", ""),
    ("ann@", ""),
    ("", "control characters"),
    ("<ann@example.org>@strangers.example", ""),
])
def test_anything_else_is_refused(text, why):
    with pytest.raises(ValueError) as info:
        player_address(text)
    assert "mail address" in str(info.value)
    assert why in str(info.value)


def test_pbem_new_refuses_an_injected_bcc(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(f"games_dir: {games}\nmaildir: {{inbox: {tmp_path}/in, outbox: {tmp_path}/out}}\n"
                   f"spool_dir: {tmp_path}/spool\n")
    result = CliRunner().invoke(pbem.main, [
        "--config", str(cfg), "new", "ridge", "--player", "Ann=ann@example.org",
        "--player", "Bob=b@x.org\r\nBcc: v@e.org"])
    assert result.exit_code != 0
    assert "is not one mail address (control characters) (player Bob)" in result.output
    assert not list(games.iterdir())
