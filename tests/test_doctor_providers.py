"""``pbem doctor`` on the mail-provider checks: TLS handshakes that fail, said in
words (unknown CA, a certificate not naming the host as configured, an expired
one) and fixed by ``ca_file``; the OAuth2 sign-in; the From address against the
SMTP account; the daily sending limit."""
from __future__ import annotations

import datetime as dt
import ipaddress
import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import pbem
from moderator.mail.oauth import write_private_json
from oauth_server import TokenServer
from servers import Certificate, SmtpSink

ENV = "PROVIDERS_IMAP_PASSWORD"


def certificate(directory, names=("127.0.0.1",), days=(-1, 2)) -> Certificate:
    """A self-signed certificate for ``names`` (IP addresses or DNS names),
    valid from ``days[0]`` to ``days[1]`` days from now (made with the
    cryptography package: openssl's command cannot date one in the past)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    alt = []
    for name in names:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alt.append(x509.DNSName(name))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now + dt.timedelta(days=days[0]))
            .not_valid_after(now + dt.timedelta(days=days[1]))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return Certificate(cert_path, key_path)


def write_config(tmp_path, imap=None, smtp=None, **top):
    cfg = tmp_path / "pbem.yaml"
    data = {"moderator": {"address": "moderator@up.example"}, "games_dir": "games", **top}
    if imap:
        data["imap"] = imap
    if smtp:
        data["smtp"] = smtp
    cfg.write_text(yaml.safe_dump(data))
    return cfg


def doctor(cfg):
    result = CliRunner().invoke(pbem.main, ["--config", str(cfg), "doctor"], catch_exceptions=False)
    return result.exit_code, result.output.splitlines()


OPERATIONS = (Path(__file__).resolve().parent.parent / "docs" / "operations.md").read_text()
SECTION = re.compile(r"  \[docs/operations\.md: ([^\]]+)\]$")


def line(lines, start):
    """The one report line starting with ``start``, without the section of
    docs/operations.md it names (checked here: one of the page's headings)."""
    found = [x for x in lines if x.startswith(start)]
    assert len(found) == 1, lines
    named = SECTION.search(found[0])
    assert named and f"\n## {named.group(1)}\n" in OPERATIONS, found[0]
    return found[0][:named.start()]


def test_imap_with_its_own_ca_unknown_then_trusted_by_ca_file(tmp_path, dovecot, monkeypatch):
    monkeypatch.setenv(ENV, dovecot.password)
    imap = {"host": dovecot.host, "port": dovecot.ssl_port, "security": "ssl",
            "username": dovecot.username, "password_env": ENV, "timeout": 5}
    code, lines = doctor(write_config(tmp_path, imap=imap))
    assert code == 1
    assert line(lines, "FAIL  IMAP") == (
        f"FAIL  IMAP {dovecot.host}:{dovecot.ssl_port} (ssl): connect failed: the server's certificate "
        "is self-signed and this machine does not trust it: if it is your own CA, put its "
        "certificate (PEM) in a file and name that file in imap.ca_file")
    imap["ca_file"] = str(dovecot.tls.cert_path)
    code, lines = doctor(write_config(tmp_path, imap=imap))
    assert line(lines, "OK    IMAP 127.0.0.1").startswith(
        f"OK    IMAP {dovecot.host}:{dovecot.ssl_port} (ssl): login as {dovecot.username!r} works")
    # implicit TLS on the plain port: said as such
    imap.update(port=dovecot.port)
    code, lines = doctor(write_config(tmp_path, imap=imap))
    assert line(lines, "FAIL  IMAP") == (
        f"FAIL  IMAP {dovecot.host}:{dovecot.port} (ssl): connect failed: the TLS handshake failed "
        "(WRONG_VERSION_NUMBER): check imap.security and port (ssl is TLS from the first byte, ports "
        "993/465; starttls upgrades a plain connection, ports 143/587)")
    # STARTTLS on the plain port uses the same CA file
    imap.update(port=dovecot.port, security="starttls")
    code, lines = doctor(write_config(tmp_path, imap=imap))
    assert line(lines, "OK    IMAP 127.0.0.1").startswith(f"OK    IMAP {dovecot.host}:{dovecot.port} (starttls)")


@pytest.mark.parametrize("names, days, words", [
    (("elsewhere.example",), (-1, 2),
     "the server's certificate does not name the host as configured (smtp.host: 127.0.0.1); use a "
     "name the certificate lists in smtp.host (an IP address such as 127.0.0.1 must itself be in the "
     "certificate)"),
    (("127.0.0.1",), (-10, -1),
     "the server's certificate has expired: the server's operator must renew it"),
])
def test_smtp_handshake_failures_in_words(tmp_path, names, days, words):
    cert = certificate(tmp_path / "tls", names, days)
    with SmtpSink(tls=cert, implicit_tls=True) as sink:
        smtp = {"host": sink.host, "port": sink.port, "security": "ssl", "timeout": 5,
                "ca_file": str(cert.cert_path)}
        code, lines = doctor(write_config(tmp_path, smtp=smtp))
    assert code == 1
    assert line(lines, "FAIL  SMTP") == f"FAIL  SMTP {sink.host}:{sink.port} (ssl): connect failed: {words}"


def test_smtp_trusts_a_ca_file_and_checks_the_sender(tmp_path):
    cert = certificate(tmp_path / "tls")
    secret = tmp_path / "smtp-password"
    secret.write_text("pw\n")
    os.chmod(secret, 0o600)
    with SmtpSink(tls=cert, implicit_tls=True, username="up@gmail.example", password="pw") as sink:
        smtp = {"host": sink.host, "port": sink.port, "security": "ssl", "timeout": 5,
                "ca_file": str(cert.cert_path), "username": "up@gmail.example",
                "password_file": str(secret)}
        code, lines = doctor(write_config(tmp_path, smtp=smtp))
        assert line(lines, "OK    SMTP").endswith("login as 'up@gmail.example' works; no mail sent")
        assert line(lines, "NOTE  sender") == (
            "NOTE  sender: warning: the From address moderator@up.example (moderator.address) is not "
            "the SMTP account up@gmail.example (smtp.username): Gmail rewrites From to the account "
            "and Outlook refuses such mail unless the address is an alias (send-as) of the account; "
            "use the same address for both if you can")
        cfg = write_config(tmp_path, smtp=smtp, moderator={"address": "Up@Gmail.example"})
        code, lines = doctor(cfg)
        assert line(lines, "OK    sender") == (
            "OK    sender: the From address Up@Gmail.example is the account that logs in to SMTP")
        # a wrong password in the file is named as where to look
        secret.write_text("wrong\n")
        code, lines = doctor(cfg)
        assert code == 1
        assert line(lines, "FAIL  SMTP").startswith(
            f"FAIL  SMTP {sink.host}:{sink.port} (ssl): the server refused the login as "
            f"'up@gmail.example' (check the password in the password file {secret}): ")


def test_oauth_sign_in_reported_and_its_failure_named(tmp_path):
    cert = certificate(tmp_path / "tls")
    with TokenServer(cert) as ts, SmtpSink(
            oauth2_check=lambda user, token: ts.access_tokens.get(token) == user) as sink:
        oauth = {"provider": "google", "client_id": ts.client_id, "client_secret": "not-secret",
                 "token_uri": ts.token_uri,
                 "token_file": "token.json", "ca_file": str(cert.cert_path)}
        smtp = {"host": sink.host, "port": sink.port, "security": "none", "timeout": 5,
                "username": "up@example.org", "auth": "oauth2"}
        cfg = write_config(tmp_path, smtp=smtp, oauth=oauth, moderator={"address": "up@example.org"})
        code, lines = doctor(cfg)
        token_file = tmp_path / "token.json"
        assert line(lines, "FAIL  OAuth2") == (
            f"FAIL  OAuth2 (google): no access token: the OAuth2 token file {token_file} does not exist: "
            "sign in once with  pbem auth login google")
        write_private_json(token_file, {"version": 1, "provider": "google", "refresh_token": "rt-good",
                                        "obtained": "2026-11-30T10:00:00+00:00"})
        code, lines = doctor(cfg)
        ok = line(lines, "OK    OAuth2")
        assert ok.startswith(f"OK    OAuth2 (google): signed in as up@example.org on 2026-11-30 10:00 UTC "
                             f"({token_file}); access token valid until ")
        assert line(lines, "OK    SMTP").endswith("login as 'up@example.org' works; no mail sent"), lines
        assert sink.logins == ["up@example.org"]
        ts.refresh_tokens.clear()
        write_private_json(token_file, {"version": 1, "provider": "google", "refresh_token": "rt-good"})
        code, lines = doctor(cfg)
        assert code == 1
        assert line(lines, "FAIL  OAuth2") == (
            f"FAIL  OAuth2 (google): no access token: the google refresh token in {token_file} was "
            "refused (invalid_grant: Token has been expired or revoked.); it may have expired or been "
            "revoked: run  pbem auth login google")


def test_daily_limit_holds_mails_for_the_next_day(tmp_path):
    from datetime import datetime, timedelta, timezone

    from moderator.config import load_config
    from moderator.moderation.cycle import Moderator

    now = [datetime(2026, 12, 1, 22, 0, tzinfo=timezone.utc)]
    players = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.org")]
    with SmtpSink() as sink:
        cfg = write_config(tmp_path, smtp={"host": sink.host, "port": sink.port, "security": "none",
                                           "daily_limit": 2})
        mod = Moderator(load_config(cfg), clock=lambda: now[0])
        mod.create_game("g", players, seed=1)  # three welcome mails
        assert len(sink.messages) == 2
        assert len(list((tmp_path / "spool").glob("*.eml"))) == 1
        # the same day: nothing is tried, the run is not a failure
        report = mod.run_cycle()
        assert (report.sent, report.deferred, report.held, report.ok) == (0, 0, 1, True)
        assert report.summary().endswith("0 mail(s) sent, 0 deferred, 1 held for the next day by the "
                                         "daily sending limit, 1 waiting in the spool; 0 error(s)")
        assert len(sink.messages) == 2
        # the next UTC day: sent
        now[0] += timedelta(hours=3)
        report = mod.run_cycle()
        assert (report.sent, report.held, report.ok) == (1, 0, True)
        assert len(sink.messages) == 3
        assert sorted(m.rcpt_tos[0] for m in sink.messages) == [a for _, a in players]


def test_doctor_says_when_the_games_would_exceed_the_daily_limit(tmp_path):
    from datetime import datetime, timezone

    from moderator.config import load_config
    from moderator.moderation.cycle import Moderator

    players = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.org")]
    with SmtpSink() as sink:
        cfg = write_config(tmp_path, smtp={"host": sink.host, "port": sink.port, "security": "none",
                                           "daily_limit": 2})
        mod = Moderator(load_config(cfg), clock=lambda: datetime.now(timezone.utc))
        mod.create_game("g", players, seed=1)
        code, lines = doctor(cfg)
    assert line(lines, "NOTE  daily sending limit") == (
        "NOTE  daily sending limit: 2 of 2 mails sent today (UTC), 0 yesterday; 1 waiting in the "
        "spool; the limit is reached: the waiting mails go out after midnight UTC; one round of "
        "status mails to the 3 players of the running games is more than the limit: every turn "
        "will be delayed by a day (raise smtp.daily_limit if the provider allows, or run fewer games)")
