"""Mail transports and configuration, against real servers on 127.0.0.1."""

from __future__ import annotations

import mailbox
import os
import socket
from email.message import EmailMessage
from pathlib import Path

import pytest

from moderator.config import Config, ConfigError, ImapConfig, SmtpConfig, load_config
from moderator.mail.transport import InboundMail, LoginRefused, TransportError, envelope_of
from moderator.mail.transport.imap import ImapInbox
from moderator.mail.transport.maildir import MaildirInbox, MaildirOutbox
from moderator.mail.transport.smtp import SmtpOutbox
from servers import Dovecot, SmtpSink

MODERATOR = "Union Pacific moderator <moderator@pbem.localhost>"

TURN_BYTES = (
    b"From: Union Pacific moderator <moderator@pbem.localhost>\n"
    b"To: Alice <alice@example.org>\n"
    b"Cc: bob@example.org\n"
    b"Subject: Game 1: your turn\n"
    b'Content-Type: text/plain; charset="utf-8"\n'
    b"Content-Transfer-Encoding: 7bit\n"
    b"MIME-Version: 1.0\n"
    b"\n"
    b"Place your stock.\n"
)

ORDER_1 = (
    b"From: Alice <alice@example.org>\r\n"
    b"To: moderator@pbem.localhost\r\n"
    b"Subject: Game 1 order\r\n"
    b"Message-ID: <order-1@example.org>\r\n"
    b"\r\n"
    b"build Chicago-Omaha\r\n"
)
ORDER_2 = (
    b"From: Bob <bob@example.org>\r\n"
    b"To: moderator@pbem.localhost\r\n"
    b"Subject: Game 1 order\r\n"
    b"Message-ID: <order-2@example.org>\r\n"
    b"\r\n"
    b"pass\r\n"
)


def turn_message(subject: str = "Game 1: your turn", to: str = "Alice <alice@example.org>",
                 cc: str | None = "bob@example.org") -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = MODERATOR
    msg["To"] = to
    if cc:
        msg["Cc"] = cc
    msg["Subject"] = subject
    msg.set_content("Place your stock.\n")
    return msg


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------
# envelope
# --------------------------------------------------------------------------


def test_envelope_is_from_and_to_cc_addresses():
    msg = turn_message(to="Alice <alice@example.org>, carol@example.org",
                       cc="bob@example.org, ALICE@example.org")
    assert envelope_of(msg) == (
        "moderator@pbem.localhost",
        ["alice@example.org", "carol@example.org", "bob@example.org"],
    )


def test_envelope_needs_from_and_recipient():
    msg = turn_message()
    del msg["From"]
    with pytest.raises(ValueError, match="^message must have exactly one From address, has 0$"):
        envelope_of(msg)
    msg = turn_message(cc=None)
    del msg["To"]
    with pytest.raises(ValueError, match="^message has no To or Cc address$"):
        envelope_of(msg)


# --------------------------------------------------------------------------
# Maildir
# --------------------------------------------------------------------------


def test_maildir_outbox_inbox_round_trip(tmp_path):
    with MaildirOutbox(tmp_path / "mail" / "outbox") as outbox:
        outbox.send(turn_message())
        key = outbox.last_key
    assert os.listdir(tmp_path / "mail" / "outbox" / "new") == [key]
    with MaildirInbox(tmp_path / "mail" / "outbox") as inbox:
        mails = inbox.fetch()
    assert mails == [InboundMail(key=key, raw=TURN_BYTES)]


def test_maildir_outbox_refuses_message_without_recipient(tmp_path):
    msg = turn_message(cc=None)
    del msg["To"]
    outbox = MaildirOutbox(tmp_path / "out")
    with pytest.raises(ValueError, match="^message has no To or Cc address$"):
        outbox.send(msg)
    assert os.listdir(tmp_path / "out" / "new") == []


def _deliver(path: Path, subdir: str, name: str, raw: bytes) -> None:
    (path / subdir / name).write_bytes(raw)


def test_maildir_inbox_fetch_is_in_delivery_order(tmp_path):
    inbox = MaildirInbox(tmp_path / "inbox")
    _deliver(tmp_path / "inbox", "new", "1700000002.M5P10Q1.host", b"Subject: third\n\n3\n")
    _deliver(tmp_path / "inbox", "new", "1700000001.M900P10Q3.host", b"Subject: second\n\n2\n")
    _deliver(tmp_path / "inbox", "new", "1700000001.M10P10Q2.host", b"Subject: first\n\n1\n")
    _deliver(tmp_path / "inbox", "cur", "1700000000.M7P10Q9.host:2,S", b"Subject: zeroth\n\n0\n")
    assert inbox.fetch() == [
        InboundMail("1700000000.M7P10Q9.host", b"Subject: zeroth\n\n0\n"),
        InboundMail("1700000001.M10P10Q2.host", b"Subject: first\n\n1\n"),
        InboundMail("1700000001.M900P10Q3.host", b"Subject: second\n\n2\n"),
        InboundMail("1700000002.M5P10Q1.host", b"Subject: third\n\n3\n"),
    ]
    # Fetching changes nothing.
    assert sorted(os.listdir(tmp_path / "inbox" / "new")) == [
        "1700000001.M10P10Q2.host", "1700000001.M900P10Q3.host", "1700000002.M5P10Q1.host"]
    assert os.listdir(tmp_path / "inbox" / "cur") == ["1700000000.M7P10Q9.host:2,S"]


def test_maildir_inbox_sees_mail_delivered_after_it_opened(tmp_path):
    inbox = MaildirInbox(tmp_path / "inbox")
    assert inbox.fetch() == []
    key = mailbox.Maildir(tmp_path / "inbox").add(b"Subject: late\n\nx\n")
    assert inbox.fetch() == [InboundMail(key, b"Subject: late\n\nx\n")]


def test_maildir_mark_processed_and_ignored(tmp_path):
    path = tmp_path / "inbox"
    inbox = MaildirInbox(path)
    _deliver(path, "new", "1700000001.M1P1Q1.host", b"Subject: a\n\na\n")
    _deliver(path, "cur", "1700000002.M1P1Q2.host:2,S", b"Subject: b\n\nb\n")
    _deliver(path, "new", "1700000003.M1P1Q3.host", b"Subject: c\n\nc\n")

    inbox.mark_processed("1700000001.M1P1Q1.host")
    inbox.mark_ignored("1700000002.M1P1Q2.host")

    assert inbox.fetch() == [InboundMail("1700000003.M1P1Q3.host", b"Subject: c\n\nc\n")]
    assert os.listdir(path / ".processed" / "new") == ["1700000001.M1P1Q1.host"]
    assert os.listdir(path / ".ignored" / "cur") == ["1700000002.M1P1Q2.host:2,S"]
    root = mailbox.Maildir(path, create=False)
    assert sorted(root.list_folders()) == ["ignored", "processed"]
    processed = root.get_folder("processed")
    assert processed.get_bytes("1700000001.M1P1Q1.host") == b"Subject: a\n\na\n"
    ignored = root.get_folder("ignored")
    assert ignored.get_bytes("1700000002.M1P1Q2.host") == b"Subject: b\n\nb\n"
    assert ignored.get_message("1700000002.M1P1Q2.host").get_flags() == "S"


def test_maildir_custom_folder_names(tmp_path):
    inbox = MaildirInbox(tmp_path / "inbox", processed="Done", ignored="Junk")
    assert inbox.processed_path == tmp_path / "inbox" / ".Done"
    assert inbox.ignored_path == tmp_path / "inbox" / ".Junk"
    assert (tmp_path / "inbox" / ".Done" / "maildirfolder").is_file()
    assert (tmp_path / "inbox" / ".Junk" / "new").is_dir()


def test_maildir_unknown_key_raises_key_error(tmp_path):
    inbox = MaildirInbox(tmp_path / "inbox")
    _deliver(tmp_path / "inbox", "new", "1700000001.M1P1Q1.host", b"Subject: a\n\na\n")
    inbox.mark_processed("1700000001.M1P1Q1.host")
    with pytest.raises(KeyError):
        inbox.mark_processed("1700000001.M1P1Q1.host")
    with pytest.raises(KeyError):
        inbox.mark_ignored("nonexistent")
    with pytest.raises(KeyError):
        inbox.mark_ignored("../.processed/new/1700000001.M1P1Q1.host")


def test_maildir_unusable_path_raises_transport_error(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(TransportError) as info:
        MaildirInbox(tmp_path / "file" / "inbox")
    assert str(info.value).startswith(f"cannot open Maildir {tmp_path / 'file' / 'inbox'}: ")
    assert info.value.path == str(tmp_path / "file" / "inbox")


# --------------------------------------------------------------------------
# IMAP
# --------------------------------------------------------------------------


def test_imap_fetch_returns_mails_in_uid_order_without_marking_seen(dovecot):
    uid1 = dovecot.append(ORDER_1)
    uid2 = dovecot.append(ORDER_2)
    validity = dovecot.uidvalidity()
    assert uid2 == uid1 + 1

    with ImapInbox(**dovecot.inbox_kwargs()) as inbox:
        assert inbox.fetch() == [
            InboundMail(f"{validity}:{uid1}", ORDER_1),
            InboundMail(f"{validity}:{uid2}", ORDER_2),
        ]
        # A second fetch returns the same: nothing was consumed.
        assert [m.key for m in inbox.fetch()] == [f"{validity}:{uid1}", f"{validity}:{uid2}"]

    stored = dovecot.messages("INBOX")
    assert [(m.uid, m.raw) for m in stored] == [(uid1, ORDER_1), (uid2, ORDER_2)]
    # No \Seen (and \Recent went to the inbox's session, which saw them first).
    assert [m.flags for m in stored] == [(), ()]
    assert dovecot.folders() == ["INBOX", "Ignored", "Processed"]


def test_imap_fetch_empty_inbox(dovecot):
    with ImapInbox(**dovecot.inbox_kwargs()) as inbox:
        assert inbox.fetch() == []


def test_imap_mark_processed_moves_to_processed(dovecot):
    dovecot.append(ORDER_1)
    with ImapInbox(**dovecot.inbox_kwargs()) as inbox:
        [mail] = inbox.fetch()
        inbox.mark_processed(mail.key)
        assert inbox.fetch() == []
    assert dovecot.messages("INBOX") == []
    assert [m.raw for m in dovecot.messages("Processed")] == [ORDER_1]
    assert dovecot.messages("Ignored") == []


def test_imap_mark_ignored_moves_to_ignored_and_keeps_the_rest(dovecot):
    dovecot.append(ORDER_1)
    uid2 = dovecot.append(ORDER_2)
    with ImapInbox(**dovecot.inbox_kwargs(), processed="Done", ignored="Junk") as inbox:
        first, second = inbox.fetch()
        inbox.mark_ignored(first.key)
        assert inbox.fetch() == [second]
    assert [(m.uid, m.raw) for m in dovecot.messages("INBOX")] == [(uid2, ORDER_2)]
    assert [m.raw for m in dovecot.messages("Junk")] == [ORDER_1]
    assert dovecot.messages("Done") == []
    assert dovecot.folders() == ["Done", "INBOX", "Junk"]


def test_imap_reading_another_mailbox(dovecot):
    dovecot.append(ORDER_2, folder="Orders")
    validity = dovecot.uidvalidity("Orders")
    with ImapInbox(**dovecot.inbox_kwargs(), mailbox="Orders") as inbox:
        assert inbox.fetch() == [InboundMail(f"{validity}:1", ORDER_2)]
        inbox.mark_processed(f"{validity}:1")
    assert dovecot.messages("Orders") == []
    assert [m.raw for m in dovecot.messages("Processed")] == [ORDER_2]


def test_imap_bad_keys(dovecot):
    uid = dovecot.append(ORDER_1)
    validity = dovecot.uidvalidity()
    with ImapInbox(**dovecot.inbox_kwargs()) as inbox:
        with pytest.raises(KeyError):
            inbox.mark_processed(f"{validity}:{uid + 1}")
        with pytest.raises(KeyError):
            inbox.mark_processed(f"{validity + 1}:{uid}")
        with pytest.raises(ValueError, match="^not an IMAP inbox key"):
            inbox.mark_ignored("1700000001.M1P1Q1.host")
        inbox.mark_processed(f"{validity}:{uid}")
        with pytest.raises(KeyError):
            inbox.mark_processed(f"{validity}:{uid}")
    assert [m.raw for m in dovecot.messages("Processed")] == [ORDER_1]


def test_imap_wrong_password_raises_transport_error(dovecot):
    kwargs = dovecot.inbox_kwargs() | {"password": "wrong"}
    with pytest.raises(TransportError) as info:
        ImapInbox(**kwargs)
    assert str(info.value) == (
        f"IMAP 127.0.0.1:{dovecot.port}: login as {dovecot.username!r} failed: "
        "LoginError: b'[AUTHENTICATIONFAILED] Authentication failed.'"
    )
    assert (info.value.host, info.value.port, info.value.code) == ("127.0.0.1", dovecot.port, None)


def test_imap_closed_port_raises_transport_error():
    port = closed_port()
    with pytest.raises(TransportError) as info:
        ImapInbox("127.0.0.1", port, "user", "secret", security="none", timeout=5)
    assert str(info.value) == (
        f"IMAP 127.0.0.1:{port}: connect failed: "
        "ConnectionRefusedError: [Errno 111] Connection refused"
    )


def test_imap_starttls_and_ssl(dovecot, certificate):
    dovecot.append(ORDER_1)
    validity = dovecot.uidvalidity()
    expected = [InboundMail(f"{validity}:1", ORDER_1)]
    kwargs = dovecot.inbox_kwargs() | {"ssl_context": certificate.client_context()}
    with ImapInbox(**(kwargs | {"security": "starttls"})) as inbox:
        assert inbox.fetch() == expected
    with ImapInbox(**(kwargs | {"security": "ssl", "port": dovecot.ssl_port})) as inbox:
        assert inbox.fetch() == expected


def test_imap_ssl_with_untrusted_certificate_fails(dovecot):
    kwargs = dovecot.inbox_kwargs() | {"security": "ssl", "port": dovecot.ssl_port}
    with pytest.raises(TransportError) as info:
        ImapInbox(**kwargs)
    assert str(info.value).startswith(
        f"IMAP 127.0.0.1:{dovecot.ssl_port}: connect failed: SSLCertVerificationError: ")
    assert "certificate verify failed: self-signed certificate" in str(info.value)


def test_imap_fetch_reconnects_after_server_restart(dovecot):
    dovecot.append(ORDER_1)
    validity = dovecot.uidvalidity()
    with ImapInbox(**dovecot.inbox_kwargs()) as inbox:
        assert [m.key for m in inbox.fetch()] == [f"{validity}:1"]
        dovecot.restart()
        assert inbox.fetch() == [InboundMail(f"{validity}:1", ORDER_1)]
        inbox.mark_processed(f"{validity}:1")
    assert [m.raw for m in dovecot.messages("Processed")] == [ORDER_1]


@pytest.mark.parametrize("capability", [
    "IMAP4rev1 LITERAL+ UIDPLUS",  # COPY + \Deleted + UID EXPUNGE
    "IMAP4rev1 LITERAL+",          # COPY + \Deleted + EXPUNGE
])
def test_imap_move_without_move_capability(capability):
    with Dovecot(imap_capability=capability) as server:
        client = server.connect()
        advertised = client.capabilities()
        client.logout()
        assert advertised == tuple(capability.upper().encode().split())
        uid1 = server.append(ORDER_1)
        uid2 = server.append(ORDER_2)
        validity = server.uidvalidity()
        with ImapInbox(**server.inbox_kwargs()) as inbox:
            inbox.mark_processed(f"{validity}:{uid1}")
            assert inbox.fetch() == [InboundMail(f"{validity}:{uid2}", ORDER_2)]
            inbox.mark_ignored(f"{validity}:{uid2}")
            assert inbox.fetch() == []
        assert server.messages("INBOX") == []
        # Copied without the \Deleted flag (\Recent: first session to look).
        assert [(m.raw, m.flags) for m in server.messages("Processed")] == [
            (ORDER_1, (b"\\Recent",))]
        assert [(m.raw, m.flags) for m in server.messages("Ignored")] == [
            (ORDER_2, (b"\\Recent",))]


# --------------------------------------------------------------------------
# SMTP
# --------------------------------------------------------------------------


def test_smtp_send_to_sink(smtp_sink):
    with SmtpOutbox("127.0.0.1", smtp_sink.port, security="none", timeout=10) as outbox:
        outbox.send(turn_message())
    [mail] = smtp_sink.messages
    assert mail.mail_from == "moderator@pbem.localhost"
    assert mail.rcpt_tos == ("alice@example.org", "bob@example.org")
    assert mail.message["Subject"] == "Game 1: your turn"
    assert mail.message["From"] == MODERATOR
    assert mail.message["To"] == "Alice <alice@example.org>"
    assert mail.message["Cc"] == "bob@example.org"
    assert mail.message.get_content() == "Place your stock.\n"
    assert mail.raw.endswith(b"\r\n\r\nPlace your stock.\r\n")


def test_smtp_send_many_over_one_connection(smtp_sink):
    smtp_sink.reject_recipients["gone@example.org"] = "550 5.1.1 No such user"
    smtp_sink.reject_recipients["busy@example.org"] = "451 4.3.0 Try again later"
    msgs = [
        turn_message("one", to="carol@example.org", cc=None),
        turn_message("two", to="gone@example.org", cc=None),
        turn_message("three", to="busy@example.org", cc=None),
        turn_message("four", to="dave@example.org", cc=None),
    ]
    outbox = SmtpOutbox("127.0.0.1", smtp_sink.port, security="none", timeout=10)
    results = outbox.send_many(msgs)
    assert [r is None for r in results] == [True, False, False, True]
    assert (results[1].code, results[1].temporary) == (550, False)
    assert str(results[1]) == (
        f"SMTP 127.0.0.1:{smtp_sink.port}: sending 'two' from moderator@pbem.localhost "
        "to gone@example.org failed: all recipients refused "
        "(gone@example.org: 550 5.1.1 No such user)")
    assert (results[2].code, results[2].temporary) == (451, True)
    assert [(m.message["Subject"], m.rcpt_tos) for m in smtp_sink.messages] == [
        ("one", ("carol@example.org",)), ("four", ("dave@example.org",))]
    assert smtp_sink.messages[0].peer == smtp_sink.messages[1].peer


def test_smtp_partly_refused_recipients(smtp_sink):
    smtp_sink.reject_recipients["bob@example.org"] = "550 5.1.1 No such user"
    outbox = SmtpOutbox("127.0.0.1", smtp_sink.port, security="none", timeout=10)
    with pytest.raises(TransportError) as info:
        outbox.send(turn_message())
    assert info.value.code == 550
    assert str(info.value) == (
        f"SMTP 127.0.0.1:{smtp_sink.port}: sending 'Game 1: your turn' from "
        "moderator@pbem.localhost to alice@example.org, bob@example.org: accepted for "
        "some recipients but refused for bob@example.org: 550 5.1.1 No such user")
    assert [m.rcpt_tos for m in smtp_sink.messages] == [("alice@example.org",)]


def test_smtp_closed_port_raises_transport_error():
    port = closed_port()
    outbox = SmtpOutbox("127.0.0.1", port, security="none", timeout=5)
    with pytest.raises(TransportError) as info:
        outbox.send(turn_message())
    assert str(info.value).startswith(f"SMTP 127.0.0.1:{port}: connect failed: SMTPConnectError: ")
    assert (info.value.host, info.value.port, info.value.code) == ("127.0.0.1", port, None)


def test_smtp_login(tmp_path):
    with SmtpSink(username="up@example.org", password="s3cret") as sink:
        SmtpOutbox("127.0.0.1", sink.port, "up@example.org", "s3cret",
                   security="none", timeout=10).send(turn_message())
        assert [m.rcpt_tos for m in sink.messages] == [("alice@example.org", "bob@example.org")]
        bad = SmtpOutbox("127.0.0.1", sink.port, "up@example.org", "wrong",
                         security="none", timeout=10)
        with pytest.raises(TransportError) as info:
            bad.send(turn_message())
        assert info.value.code == 535
        assert str(info.value) == (
            f"SMTP 127.0.0.1:{sink.port}: login as 'up@example.org' failed: "
            "SMTPAuthenticationError: (535, '5.7.8 Authentication credentials invalid')")
        assert len(sink.messages) == 1


def test_smtp_starttls_and_ssl(certificate):
    with SmtpSink(tls=certificate) as sink:
        SmtpOutbox("127.0.0.1", sink.port, security="starttls", timeout=10,
                   ssl_context=certificate.client_context()).send(turn_message("starttls"))
        assert [m.message["Subject"] for m in sink.messages] == ["starttls"]
    with SmtpSink(tls=certificate, implicit_tls=True) as sink:
        SmtpOutbox("127.0.0.1", sink.port, security="ssl", timeout=10,
                   ssl_context=certificate.client_context()).send(turn_message("ssl"))
        assert [m.message["Subject"] for m in sink.messages] == ["ssl"]


def test_smtp_starttls_required_but_not_offered(smtp_sink):
    outbox = SmtpOutbox("127.0.0.1", smtp_sink.port, security="starttls", timeout=10)
    with pytest.raises(TransportError) as info:
        outbox.send(turn_message())
    assert str(info.value).startswith(f"SMTP 127.0.0.1:{smtp_sink.port}: connect failed: ")
    assert smtp_sink.messages == []


def test_smtp_arguments_are_checked():
    with pytest.raises(ValueError, match="^security must be one of ssl, starttls, none, not 'tls'$"):
        SmtpOutbox("127.0.0.1", 25, security="tls")
    with pytest.raises(ValueError, match="^give both username and password, or neither$"):
        SmtpOutbox("127.0.0.1", 25, username="up@example.org")


# --------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------

FULL_CONFIG = """\
moderator: {address: moderator@example.org, name: UP moderator}
games_dir: data/games
imap: {host: imap.example.org, port: 993, security: ssl, username: up@example.org,
       password_env: PBEM_IMAP_PASSWORD, mailbox: Orders, processed: Done, ignored: Junk}
smtp: {host: smtp.example.org, port: 587, security: starttls, username: up@example.org,
       password_env: PBEM_SMTP_PASSWORD}
maildir: {inbox: m/in, outbox: /var/tmp/pbem-out}
spool_dir: data/spool
operator: ops@example.org
outage_after: 7200
max_size: 100000
max_replies_per_sender: 3
"""


def test_default_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    assert config == Config(
        moderator_address="moderator@pbem.localhost",
        moderator_name="Union Pacific moderator",
        games_dir=tmp_path / "games",
        imap=None,
        smtp=None,
        maildir_inbox=tmp_path / "mail" / "inbox",
        maildir_outbox=tmp_path / "mail" / "outbox",
        source=None,
    )
    assert str(config.moderator) == "Union Pacific moderator <moderator@pbem.localhost>"
    inbox = config.open_inbox()
    assert isinstance(inbox, MaildirInbox)
    assert inbox.path == tmp_path / "mail" / "inbox"
    outbox = config.open_outbox()
    assert isinstance(outbox, MaildirOutbox)
    assert outbox.path == tmp_path / "mail" / "outbox"
    assert sorted(os.listdir(tmp_path / "mail")) == ["inbox", "outbox"]


def test_config_file_in_working_directory_is_used(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pbem.yaml").write_text("moderator: {address: up@example.net}\n")
    config = load_config(None)
    assert config.moderator_address == "up@example.net"
    assert config.moderator_name == "Union Pacific moderator"
    assert config.source == tmp_path / "pbem.yaml"


def test_full_config(tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_IMAP_PASSWORD", "imap-pw")
    monkeypatch.setenv("PBEM_SMTP_PASSWORD", "smtp-pw")
    (tmp_path / "conf").mkdir()
    path = tmp_path / "conf" / "up.yaml"
    path.write_text(FULL_CONFIG)
    config = load_config(str(path))
    assert config == Config(
        moderator_address="moderator@example.org",
        moderator_name="UP moderator",
        games_dir=tmp_path / "conf" / "data" / "games",
        imap=ImapConfig(host="imap.example.org", port=993, security="ssl",
                        username="up@example.org", password="imap-pw",
                        password_env="PBEM_IMAP_PASSWORD", mailbox="Orders",
                        processed="Done", ignored="Junk", timeout=30),
        smtp=SmtpConfig(host="smtp.example.org", port=587, security="starttls",
                        username="up@example.org", password="smtp-pw",
                        password_env="PBEM_SMTP_PASSWORD", timeout=30),
        maildir_inbox=tmp_path / "conf" / "m" / "in",
        maildir_outbox=Path("/var/tmp/pbem-out"),
        source=path,
        spool_dir=tmp_path / "conf" / "data" / "spool",
        operator="ops@example.org",
        outage_after=7200,
        max_size=100000,
        max_replies_per_sender=3,
    )
    assert "imap-pw" not in repr(config)
    assert "smtp-pw" not in repr(config)


def test_example_config_loads(monkeypatch):
    monkeypatch.setenv("PBEM_IMAP_PASSWORD", "a")
    monkeypatch.setenv("PBEM_SMTP_PASSWORD", "b")
    path = Path(__file__).resolve().parent.parent / "docs" / "pbem.example.yaml"
    config = load_config(path)
    assert (config.imap.host, config.imap.port, config.imap.security) == (
        "imap.example.org", 993, "ssl")
    assert (config.smtp.host, config.smtp.port, config.smtp.username, config.smtp.password) == (
        "smtp.example.org", 465, "up@example.org", "b")
    assert config.maildir_inbox == path.parent / "mail" / "inbox"


def test_default_ports_and_smtp_without_login(tmp_path, monkeypatch):
    monkeypatch.setenv("PW", "x")
    path = tmp_path / "pbem.yaml"
    path.write_text("imap: {host: h, security: starttls, username: u, password_env: PW}\n"
                    "smtp: {host: h, security: none}\n")
    config = load_config(path)
    assert (config.imap.port, config.smtp.port) == (143, 25)
    assert (config.smtp.username, config.smtp.password, config.smtp.password_env) == (
        None, None, None)


def test_config_opens_imap_and_smtp(tmp_path, monkeypatch, dovecot, smtp_sink):
    monkeypatch.setenv("TEST_IMAP_PW", dovecot.password)
    path = tmp_path / "pbem.yaml"
    path.write_text(
        f"imap: {{host: 127.0.0.1, port: {dovecot.port}, security: none,"
        f" username: {dovecot.username}, password_env: TEST_IMAP_PW}}\n"
        f"smtp: {{host: 127.0.0.1, port: {smtp_sink.port}, security: none}}\n")
    config = load_config(path)
    dovecot.append(ORDER_1)
    with config.open_inbox() as inbox:
        assert isinstance(inbox, ImapInbox)
        assert [m.raw for m in inbox.fetch()] == [ORDER_1]
    with config.open_outbox() as outbox:
        assert isinstance(outbox, SmtpOutbox)
        outbox.send(turn_message())
    assert [m.rcpt_tos for m in smtp_sink.messages] == [("alice@example.org", "bob@example.org")]


@pytest.mark.parametrize("text, message", [
    ("- a\n- b\n", "the top level must be a mapping, not list"),
    ("imap: {host: h, security: tls, username: u, password_env: PW}\n",
     "imap.security: must be one of ssl, starttls, none, not 'tls'"),
    ("smtp: {host: h, security: SSL}\n",
     "smtp.security: must be one of ssl, starttls, none, not 'SSL'"),
    ("imap: {security: ssl, username: u, password_env: PW}\n", "imap.host: is required"),
    ("smtp: {port: 465}\n", "smtp.host: is required"),
    ("imap: {host: h, password_env: PW}\n", "imap.username: is required"),
    ("imap: {host: h, username: u}\n", "imap.password_env: is required"),
    ("imap: {host: h, username: u, password_env: PBEM_TEST_UNSET}\n",
     "imap.password_env: environment variable PBEM_TEST_UNSET is not set"),
    ("smtp: {host: h, username: u, password_env: PBEM_TEST_UNSET}\n",
     "smtp.password_env: environment variable PBEM_TEST_UNSET is not set"),
    ("smtp: {host: h, password_env: PW}\n", "smtp.password_env: given without smtp.username"),
    ("imap: {host: h, username: u, password: hunter2, password_env: PW}\n",
     "imap.password: unknown key (known: host, port, security, username, password_env, "
     "mailbox, processed, ignored, timeout, password_file, ca_file, auth)"),
    ("smpt: {host: h}\n",
     "smpt: unknown key (known: moderator, games_dir, imap, smtp, maildir, spool_dir, operator, outage_after, max_size, max_replies_per_sender, archive, oauth, unsubscribe_url)"),
    ("smtp: {host: h, port: 70000}\n", "smtp.port: must be a port number 1-65535, not 70000"),
    ("smtp: {host: h, port: '465'}\n", "smtp.port: must be a port number 1-65535, not '465'"),
    ("smtp: {host: h, timeout: 0}\n", "smtp.timeout: must be a positive number, not 0"),
    ("smtp: smtp.example.org\n", "'smtp' must be a mapping, not str"),
    ("moderator: {address: moderator}\n",
     "moderator.address: not an e-mail address: 'moderator' "
     "(addr-spec local part with no domain)"),
    ("maildir: {inbox: 5}\n", "maildir.inbox: must be a non-empty string, not 5"),
])
def test_config_errors(tmp_path, monkeypatch, text, message):
    monkeypatch.setenv("PW", "x")
    monkeypatch.delenv("PBEM_TEST_UNSET", raising=False)
    path = tmp_path / "pbem.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: {message}"
    assert isinstance(info.value, ValueError)


def test_config_missing_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.yaml")
    assert str(info.value) == f"{tmp_path / 'nope.yaml'}: configuration file not found"


def test_config_bad_yaml(tmp_path):
    path = tmp_path / "pbem.yaml"
    path.write_text("imap: {host: h\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: invalid YAML: ")


# --------------------------------------------------------------------------
# Probes (what `pbem doctor` reports): look, change nothing
# --------------------------------------------------------------------------


def test_maildir_probes_change_nothing(tmp_path):
    path = tmp_path / "mail" / "inbox"
    found = MaildirInbox.probe(path)
    assert found == {"path": path, "exists": False, "messages": 0, "writable": False,
                     "folders": {"processed": False, "ignored": False}}
    assert not (tmp_path / "mail").exists()
    assert MaildirOutbox.probe(path) == {"path": path, "exists": False, "writable": True}
    assert not (tmp_path / "mail").exists()
    MaildirOutbox(path).send(turn_message())
    MaildirInbox(path)  # makes the folders
    found = MaildirInbox.probe(path)
    assert (found["exists"], found["messages"], found["writable"]) == (True, 1, True)
    assert found["folders"] == {"processed": True, "ignored": True}
    (path / "cur").rmdir()
    with pytest.raises(TransportError) as info:
        MaildirInbox.probe(path)
    assert info.value.detail.startswith("FileNotFoundError: ")


def test_imap_probe_reads_and_changes_nothing(dovecot):
    dovecot.append(ORDER_1)
    found = ImapInbox.probe(**dovecot.inbox_kwargs(), processed="Done", ignored="Junk")
    assert found["move"] and found["uidplus"]
    assert "IMAP4REV1" in found["capabilities"]
    assert (found["mailbox"], found["messages"]) == ("INBOX", 1)
    assert found["uidvalidity"] == dovecot.uidvalidity()
    assert found["folders"] == {"Done": False, "Junk": False}
    assert dovecot.folders() == ["INBOX"]  # nothing created
    assert [m.flags for m in dovecot.messages("INBOX")] == [(b"\\Recent",)]  # nothing seen


def test_imap_probe_failures_name_the_step(dovecot):
    with pytest.raises(LoginRefused) as info:
        ImapInbox.probe(**(dovecot.inbox_kwargs() | {"password": "wrong"}))
    assert info.value.step == f"login as {dovecot.username!r}"
    assert info.value.detail.startswith("LoginError: ")
    port = closed_port()
    with pytest.raises(TransportError) as info:
        ImapInbox.probe("127.0.0.1", port, "user", "secret", security="none", timeout=5)
    assert not isinstance(info.value, LoginRefused)
    assert info.value.step == "connect"
    assert info.value.detail == "ConnectionRefusedError: [Errno 111] Connection refused"
    with pytest.raises(TransportError) as info:
        ImapInbox.probe(**dovecot.inbox_kwargs(), mailbox="Nowhere")
    assert info.value.step == "selecting 'Nowhere'"


def test_smtp_probe_sends_nothing(smtp_sink):
    found = SmtpOutbox.probe("127.0.0.1", smtp_sink.port, security="none", timeout=10)
    assert found["ehlo_code"] == 250
    assert found["tls"] is False and found["login"] is None
    assert "8BITMIME" in found["extensions"]
    assert smtp_sink.messages == []


def test_smtp_probe_login(certificate):
    with SmtpSink(username="up@example.org", password="s3cret") as sink:
        found = SmtpOutbox.probe("127.0.0.1", sink.port, "up@example.org", "s3cret",
                                 security="none", timeout=10)
        assert found["login"] is True
        assert "AUTH" in found["extensions"] and found["auth_mechanisms"]
        with pytest.raises(LoginRefused) as info:
            SmtpOutbox.probe("127.0.0.1", sink.port, "up@example.org", "wrong",
                             security="none", timeout=10)
        assert info.value.code == 535 and info.value.step == "login as 'up@example.org'"
    with SmtpSink(tls=certificate) as sink:
        found = SmtpOutbox.probe("127.0.0.1", sink.port, security="starttls", timeout=10,
                                 ssl_context=certificate.client_context())
        assert found["tls"] is True
    port = closed_port()
    with pytest.raises(TransportError) as info:
        SmtpOutbox.probe("127.0.0.1", port, security="none", timeout=5)
    assert info.value.step == "connect"
    assert info.value.detail.startswith(("ConnectionRefusedError", "SMTPConnectError"))


@pytest.mark.parametrize("text,message", [
    ("archive: {show_addresses: 1}\n", "archive.show_addresses: must be true or false, not 1"),
    ("archive: {show: true}\n", "archive.show: unknown key (known: show_addresses, language)"),
    ("archive: {language: fr}\n", "archive.language: must be one of en, es, de, cs, zh, not 'fr'"),
])
def test_archive_config_errors(tmp_path, text, message):
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert message in str(info.value)


def test_archive_config_default_and_on(tmp_path):
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text("games_dir: games\n")
    assert load_config(cfg).archive_show_addresses is False
    cfg.write_text("archive: {show_addresses: true}\n")
    assert load_config(cfg).archive_show_addresses is True
    assert load_config(cfg).archive_language == "en"
    cfg.write_text("archive: {language: Čeština}\n")
    assert load_config(cfg).archive_language == "cs"
