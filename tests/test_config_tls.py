"""The TLS context handed to the transports: the system's trusted CAs for
``ssl`` and ``starttls``, none at all for ``security: none`` (loading the CAs
costs about 25 ms of CPU for a context no connection would use)."""
from __future__ import annotations

import ssl

from moderator.config import load_config


def test_a_tls_context_only_where_tls_is_spoken(tmp_path, monkeypatch):
    monkeypatch.setenv("TLS_TEST_PASSWORD", "pw")
    (tmp_path / "pbem.yaml").write_text(
        "moderator: {address: moderator@up.example, name: UP moderator}\n"
        "imap: {host: imap.example.org, port: 143, security: none, username: up, "
        "password_env: TLS_TEST_PASSWORD}\n"
        "smtp: {host: smtp.example.org, port: 587, security: starttls, username: up, "
        "password_env: TLS_TEST_PASSWORD}\n")
    config = load_config(tmp_path / "pbem.yaml")
    assert config.imap.keywords()["ssl_context"] is None
    context = config.smtp.keywords()["ssl_context"]
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
