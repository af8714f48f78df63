"""Shared fixtures: real mail servers on 127.0.0.1 (see tests/servers.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from servers import INSTALL_HINT, Certificate, Courier, Dovecot, SmtpSink, make_certificate


@pytest.fixture(scope="session")
def certificate(tmp_path_factory) -> Certificate:
    """A self-signed certificate for 127.0.0.1/localhost (client_context() trusts it)."""
    return make_certificate(Path(tmp_path_factory.mktemp("tls")))


@pytest.fixture(scope="session")
def dovecot_server(certificate):
    """One Dovecot for the whole session (stopping takes ~2.5 s); prefer `dovecot`."""
    if shutil.which("dovecot") is None and not Path("/usr/sbin/dovecot").exists():
        pytest.fail(f"dovecot is not installed: {INSTALL_HINT}", pytrace=False)
    server = Dovecot(tls=certificate)
    server.start()
    yield server
    server.cleanup()


@pytest.fixture
def dovecot(dovecot_server):
    """The session's Dovecot with a fresh, empty account as `.username`.

    Plain IMAP on `.port` (STARTTLS offered), implicit TLS on `.ssl_port`,
    password `.password`; `inbox_kwargs()` gives ImapInbox arguments. A test
    may stop/restart it; it is started again afterwards if needed.
    """
    username = dovecot_server.new_user()
    yield dovecot_server
    if not dovecot_server.running:
        dovecot_server.start()
    dovecot_server.remove_user(username)


@pytest.fixture(scope="session")
def courier_server():
    """One private Courier-IMAP for the whole session; prefer `courier`."""
    server = Courier()
    try:
        server.start()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.cleanup()


@pytest.fixture
def courier(courier_server):
    """The session's Courier-IMAP with a fresh, empty account as `.username`
    (plain IMAP on `.port`, password `.password`, folders under ``INBOX.``)."""
    username = courier_server.new_user()
    yield courier_server
    if not courier_server.running:
        courier_server.start()
    courier_server.remove_user(username)


@pytest.fixture
def smtp_sink():
    """A plain SMTP sink on 127.0.0.1 (no TLS, no auth); `.messages` records mail."""
    with SmtpSink() as sink:
        yield sink
