"""The IMAP inbox on more than Dovecot: the transport's fetch, move and UIDVALIDITY
checks on Dovecot and on Courier-IMAP (Debian's ``courier-imap``, which keeps every
folder under ``INBOX.`` and refuses ``CREATE Processed``), the folder placement by
the personal namespace (RFC 2342), ``doctor``'s folder check, and a whole game
through the moderator on Courier."""
from __future__ import annotations

import random
import re

import pytest
import yaml
from click.testing import CliRunner
from imapclient.exceptions import IMAPClientError

import pbem
from moderator.config import load_config
from moderator.demo import Bot, play
from moderator.mail.transport import InboundMail
from moderator.mail.transport.imap import ImapInbox
from moderator.moderation.cycle import Moderator
from moderator.store.gamefile import GameStore
from test_e2e import PLAYERS, recompute_money

ORDER_1 = (b"From: Ann <ann@example.org>\r\nTo: moderator@up.example\r\nSubject: [up-1] turn\r\n"
           b"Message-ID: <o1@example.org>\r\n\r\nbuild KCC Chicago-Detroit\r\n")
ORDER_2 = (b"From: Bob <bob@example.org>\r\nTo: moderator@up.example\r\nSubject: [up-1] turn\r\n"
           b"Message-ID: <o2@example.org>\r\n\r\ninvest UP\r\n")
ORDER_3 = (b"From: Cy <cy@example.org>\r\nTo: moderator@up.example\r\nSubject: [up-1] turn\r\n"
           b"Message-ID: <o3@example.org>\r\n\r\npass\r\n")


@pytest.fixture(params=["dovecot", "courier"])
def server(request):
    """Each IMAP server in turn, with a fresh account."""
    return request.getfixturevalue(request.param)


def full(server, name: str) -> str:
    """The server's name for the configured folder ``name`` (Courier: under INBOX.)."""
    return name if type(server).__name__ == "Dovecot" else f"INBOX.{name}"


def test_fetch_in_uid_order_changes_no_flag(server):
    uid1 = server.append(ORDER_1)
    uid2 = server.append(ORDER_2)
    validity = server.uidvalidity()
    assert uid2 == uid1 + 1
    with ImapInbox(**server.inbox_kwargs()) as inbox:
        assert inbox.fetch() == [InboundMail(f"{validity}:{uid1}", ORDER_1),
                                 InboundMail(f"{validity}:{uid2}", ORDER_2)]
        assert [m.key for m in inbox.fetch()] == [f"{validity}:{uid1}", f"{validity}:{uid2}"]
    stored = server.messages()
    assert [(m.uid, m.raw) for m in stored] == [(uid1, ORDER_1), (uid2, ORDER_2)]
    assert all(b"\\Seen" not in m.flags and b"\\Deleted" not in m.flags for m in stored)


def test_move_to_processed_and_ignored(server):
    server.append(ORDER_1)
    server.append(ORDER_2)
    uid3 = server.append(ORDER_3)
    with ImapInbox(**server.inbox_kwargs()) as inbox:
        assert inbox.folders == {"processed": full(server, "Processed"),
                                 "ignored": full(server, "Ignored")}
        first, second, third = inbox.fetch()
        inbox.mark_processed(first.key)
        inbox.mark_ignored(second.key)
        assert inbox.fetch() == [third]
        with pytest.raises(KeyError):
            inbox.mark_processed(first.key)  # gone from the inbox
    assert [(m.uid, m.raw) for m in server.messages()] == [(uid3, ORDER_3)]
    assert [m.raw for m in server.messages(full(server, "Processed"))] == [ORDER_1]
    assert [m.raw for m in server.messages(full(server, "Ignored"))] == [ORDER_2]
    assert server.folders() == sorted(["INBOX", full(server, "Ignored"), full(server, "Processed")])


def test_key_from_before_the_mailbox_was_recreated_is_refused(server):
    orders = full(server, "Orders")
    server.append(ORDER_1, folder=orders)
    old = server.uidvalidity(orders)
    with ImapInbox(**server.inbox_kwargs(), mailbox=orders) as inbox:
        [mail] = inbox.fetch()
        assert mail.key == f"{old}:1"
        client = server.connect()
        client.delete_folder(orders)
        client.logout()
        server.append(ORDER_2, folder=orders)  # UID 1 again, in a new UIDVALIDITY
        new = server.uidvalidity(orders)
        assert new != old
        assert inbox.fetch() == [InboundMail(f"{new}:1", ORDER_2)]
        with pytest.raises(KeyError, match="UIDVALIDITY"):
            inbox.mark_processed(mail.key)
    assert [m.raw for m in server.messages(orders)] == [ORDER_2]  # not taken for the old mail
    assert server.messages(full(server, "Processed")) == []


def test_courier_refuses_top_level_folders(courier):
    client = courier.connect()
    try:
        assert client.namespace().personal == (("INBOX.", "."),)
        with pytest.raises(IMAPClientError, match="Invalid mailbox name"):
            client.create_folder("Processed")
    finally:
        client.logout()


def test_configured_names_are_relative_to_the_personal_namespace(courier):
    courier.append(ORDER_1)
    with ImapInbox(**courier.inbox_kwargs(), processed="Games/Done", ignored="INBOX.Junk") as inbox:
        assert inbox.folders == {"processed": "INBOX.Games.Done", "ignored": "INBOX.Junk"}
        [mail] = inbox.fetch()
        inbox.mark_processed(mail.key)
    assert [m.raw for m in courier.messages("INBOX.Games.Done")] == [ORDER_1]
    assert courier.folders() == ["INBOX", "INBOX.Games", "INBOX.Games.Done", "INBOX.Junk"]


def test_existing_folder_is_used_by_its_name(dovecot):
    # Dovecot has no prefix: names stay, "/" becomes its separator "."
    with ImapInbox(**dovecot.inbox_kwargs(), processed="Games/Done") as inbox:
        assert inbox.folders == {"processed": "Games.Done", "ignored": "Ignored"}
    with ImapInbox(**dovecot.inbox_kwargs(), processed="Games.Done") as inbox:
        assert inbox.folders["processed"] == "Games.Done"
    assert dovecot.folders() == ["Games", "Games.Done", "INBOX", "Ignored"]


def test_probe_places_folders_and_tries_one(courier):
    found = ImapInbox.probe(**courier.inbox_kwargs())
    assert found["namespace"] == ("INBOX.", ".")
    assert found["placed"] == {"Processed": "INBOX.Processed", "Ignored": "INBOX.Ignored"}
    assert found["folders"] == {"Processed": False, "Ignored": False}
    assert re.fullmatch(r"INBOX\.pbem-doctor-[0-9a-f]{8}", found["test_folder"])
    assert (found["create_error"], found["delete_error"]) == (None, None)
    assert courier.folders() == ["INBOX"]  # the test folder is gone again
    # a name the server refuses
    found = ImapInbox.probe(**courier.inbox_kwargs(), processed="a..b")
    assert found["placed"]["a..b"] == "INBOX.a..b"
    assert found["create_error"] == "Invalid mailbox name."
    assert courier.folders() == ["INBOX"]


ENV = "SERVERS_IMAP_PASSWORD"


def write_config(path, server, smtp_sink, **imap):
    (path.parent / "games").mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump({
        "moderator": {"address": "moderator@up.example", "name": "UP moderator"},
        "games_dir": "games",
        "imap": {"host": server.host, "port": server.port, "security": "none",
                 "username": server.username, "password_env": ENV, "timeout": 10, **imap},
        "smtp": {"host": smtp_sink.host, "port": smtp_sink.port, "security": "none", "timeout": 10},
    }))
    return path


def doctor_line(cfg, start):
    result = CliRunner().invoke(pbem.main, ["--config", str(cfg), "doctor"], catch_exceptions=False)
    hits = [line for line in result.output.splitlines() if line.startswith(start)]
    assert hits, result.output
    section = "  [docs/operations.md: Mail servers]"  # where the guide explains the folders
    assert hits[0].endswith(section), hits[0]
    return result.exit_code, hits[0][:-len(section)]


def test_doctor_on_courier(courier, smtp_sink, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, courier.password)
    cfg = write_config(tmp_path / "pbem.yaml", courier, smtp_sink)
    code, line = doctor_line(cfg, "NOTE  IMAP folders: ")
    assert code == 0
    assert line.startswith("NOTE  IMAP folders: folders are under 'INBOX.' (separator '.'); "
                           "INBOX.Processed, INBOX.Ignored missing: created by the next cycle "
                           "(a test folder was created and removed (INBOX.pbem-doctor-")
    assert Moderator(load_config(cfg)).run_cycle().ok
    code, line = doctor_line(cfg, "OK    IMAP folders: ")
    assert line.startswith("OK    IMAP folders: Processed as INBOX.Processed, Ignored as INBOX.Ignored: "
                           "folders are under 'INBOX.' (separator '.'); a test folder was created and removed")
    write_config(cfg, courier, smtp_sink, processed="a..b")
    code, line = doctor_line(cfg, "FAIL  IMAP folders: ")
    assert code == 1
    assert "INBOX.a..b missing and cannot be created (the server refused to create the test folder " in line
    assert line.endswith(": Invalid mailbox name.); folders are under 'INBOX.' (separator '.'): set "
                         "imap.processed/imap.ignored to folders that exist (full names work)")
    assert courier.folders() == ["INBOX", "INBOX.Ignored", "INBOX.Processed"]


def test_whole_game_on_courier(courier, smtp_sink, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, courier.password)
    config = load_config(write_config(tmp_path / "pbem.yaml", courier, smtp_sink))
    moderator = Moderator(config)
    moderator.create_game("courier", PLAYERS, seed=7)
    bots = [Bot(n, a, config.moderator_address, random.Random(i)) for i, (n, a) in enumerate(PLAYERS)]
    seen = [0]

    def collect():
        new = smtp_sink.messages[seen[0]:]
        seen[0] += len(new)
        return [m.message for m in new]

    store = GameStore(config.games_dir)
    play(moderator, bots, lambda msg: courier.append(msg.as_bytes()), collect,
         lambda: store.read_data("courier")["state"]["phase"] == "over", max_cycles=1000)
    data = store.read_data("courier")
    assert data["state"]["phase"] == "over"
    assert data["state"]["money"] == recompute_money(data)
    assert sum(b.refused for b in bots) == 0
    assert courier.messages() == []
    assert len(courier.messages("INBOX.Processed")) == len(data["history"])
    assert courier.folders() == ["INBOX", "INBOX.Ignored", "INBOX.Processed"]
    store.load("courier", check=True)
