"""OAuth2 for the mail servers, with no internet: a local identity server
(tests/oauth_server.py, HTTPS with the tests' own CA) answers the refresh-token
and device-code grants for google-auth and msal; Dovecot checks XOAUTH2 tokens
by introspection at that server (oauth2 passdb); aiosmtpd takes AUTH XOAUTH2."""
from __future__ import annotations

import json
import os
import random
import stat
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage

import pytest
import yaml
from click.testing import CliRunner

from moderator.config import ConfigError, load_config
from moderator.mail.oauth import (
    OAuthRefused,
    OAuthSettings,
    TokenSource,
    browser_login,
    device_login,
    write_private_json,
)
from moderator.mail.transport.base import LoginRefused
from moderator.mail.transport.imap import ImapInbox
from moderator.mail.transport.smtp import SmtpOutbox
from oauth_server import TokenServer
from servers import Dovecot, SmtpSink

ACCOUNT = "up@example.org"


@pytest.fixture(scope="module")
def token_server(certificate):
    with TokenServer(certificate, account=ACCOUNT) as server:
        yield server


@pytest.fixture
def ts(token_server):
    """The module's token server with its requests and tokens reset."""
    token_server.reset()
    return token_server


@pytest.fixture(scope="module")
def oauth_dovecot(token_server, certificate):
    server = Dovecot(tls=certificate, oauth2_introspection=token_server.introspection_url)
    server.start()
    server.username = ACCOUNT
    yield server
    server.cleanup()


def google(ts, tmp_path, certificate, **kw) -> OAuthSettings:
    return OAuthSettings(provider="google", client_id=ts.client_id, client_secret="not-secret",
                         token_file=tmp_path / "token.json", token_uri=ts.token_uri,
                         device_uri=ts.device_uri, ca_file=certificate.cert_path, **kw)


def microsoft(ts, tmp_path, certificate) -> OAuthSettings:
    return OAuthSettings(provider="microsoft", client_id=ts.client_id, tenant="consumers",
                         authority=ts.base, token_file=tmp_path / "token.json",
                         ca_file=certificate.cert_path)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ------------------------------------------------------------ private files
def test_token_file_is_written_0600_and_refused_when_others_may_read_it(tmp_path, ts, certificate):
    path = tmp_path / "token.json"
    write_private_json(path, {"provider": "google", "refresh_token": "rt-good"})
    assert mode(path) == 0o600
    os.chmod(path, 0o640)
    source = TokenSource(google(ts, tmp_path, certificate))
    with pytest.raises(OAuthRefused) as err:
        source()
    assert str(err.value) == (f"the OAuth2 token file {path} may be read by others (mode 0640), "
                              f"so it is not used: run  chmod 600 {path}")
    assert ts.requests == []  # nothing was sent anywhere
    os.chmod(path, 0o600)
    assert source() == "at-1"


def test_password_file_is_read_and_its_mode_checked(tmp_path, monkeypatch):
    secret = tmp_path / "imap-password"
    secret.write_text("hunter2\n")
    os.chmod(secret, 0o644)
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text("imap: {host: h, username: u, password_file: imap-password}\n")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value) == (f"{cfg}: imap.password_file: the password file {secret} may be read by "
                              f"others (mode 0644), so it is not used: run  chmod 600 {secret}")
    os.chmod(secret, 0o600)
    config = load_config(cfg)
    assert (config.imap.password, config.imap.password_file, config.imap.password_env) == (
        "hunter2", secret, None)
    monkeypatch.setenv("PW", "x")
    cfg.write_text("imap: {host: h, username: u, password_file: imap-password, password_env: PW}\n")
    with pytest.raises(ConfigError, match="imap.password_file: give password_env or password_file, not both$"):
        load_config(cfg)
    cfg.write_text("smtp: {host: h, username: u, password_file: missing}\n")
    with pytest.raises(ConfigError, match=f"smtp.password_file: the password file {tmp_path}/missing does not exist$"):
        load_config(cfg)


@pytest.mark.parametrize("text, message", [
    ("imap: {host: h, username: u, auth: oauth2}\n",
     "imap.auth: oauth2 needs an oauth section (provider, client_id, token_file)"),
    ("oauth: {provider: yahoo, client_id: c}\n",
     "oauth.provider: must be one of microsoft, google, generic, not 'yahoo'"),
    ("oauth: {provider: google, client_id: c}\n", "oauth.client_secret: is required"),
    ("oauth: {provider: google, client_id: c, client_secret: s, token_uri: 'http://x/token'}\n",
     "oauth.token_uri: must be an https:// URL, not 'http://x/token'"),
    ("oauth: {provider: generic, client_id: c, token_uri: 'https://x/t'}\n",
     "oauth.device_uri: is required"),
    ("oauth: {provider: google, client_id: c, client_secret: s}\nsmtp: {host: h, auth: oauth2}\n",
     "smtp.auth: oauth2 needs smtp.username (the account that logs in)"),
    ("oauth: {provider: google, client_id: c, client_secret: s}\nimap: {host: h, username: u, auth: oauth2, password_env: P}\n",
     "imap.password_env: not used with auth: oauth2 (the token file is)"),
    ("smtp: {host: h, daily_limit: 0}\n",
     "smtp.daily_limit: must be a whole number of mails per day, at least 1, not 0"),
    ("smtp: {host: h, ca_file: nowhere.pem}\n", "smtp.ca_file: "),
])
def test_oauth_config_errors(tmp_path, text, message):
    cfg = tmp_path / "pbem.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value).startswith(f"{cfg}: {message}")


# ------------------------------------------------------------------- Google
def test_google_token_is_refreshed_at_the_token_uri_and_kept_until_near_expiry(tmp_path, ts, certificate):
    settings = google(ts, tmp_path, certificate)
    write_private_json(settings.token_file, {"version": 1, "provider": "google",
                                             "refresh_token": "rt-good"})
    offset = [timedelta(0)]
    source = TokenSource(settings, ACCOUNT, clock=lambda: datetime.now(timezone.utc) + offset[0])
    before = datetime.now(timezone.utc)
    assert source() == "at-1"
    assert [path for path, _ in ts.requests] == ["/token"]
    form = ts.requests[0][1]
    assert (form["grant_type"], form["refresh_token"], form["client_id"], form["client_secret"]) == (
        "refresh_token", "rt-good", "test-client", "not-secret")
    data = json.loads(settings.token_file.read_text())
    assert data["access_token"] == "at-1" and data["refresh_token"] == "rt-at-1"
    expiry = datetime.fromisoformat(data["expiry"])
    assert before + timedelta(seconds=3590) <= expiry <= before + timedelta(seconds=3610)
    assert mode(settings.token_file) == 0o600
    # valid for 60 minutes: used as it is for the next 55
    offset[0] = timedelta(minutes=54)
    assert source() == "at-1"
    assert len(ts.requests) == 1
    # less than 5 minutes left: refreshed with the refresh token the server rotated to
    offset[0] = timedelta(minutes=56)
    assert source() == "at-2"
    assert ts.requests[1][1]["refresh_token"] == "rt-at-1"


def test_a_revoked_google_refresh_token_says_to_log_in_again(tmp_path, ts, certificate):
    settings = google(ts, tmp_path, certificate)
    write_private_json(settings.token_file, {"version": 1, "provider": "google",
                                             "refresh_token": "rt-revoked"})
    with pytest.raises(OAuthRefused) as err:
        TokenSource(settings)()
    assert str(err.value) == (
        f"the google refresh token in {settings.token_file} was refused (invalid_grant: Token has "
        "been expired or revoked.); it may have expired or been revoked: run  pbem auth login google")
    assert isinstance(err.value, LoginRefused)


def test_google_browser_login_with_loopback_redirect_and_pkce(tmp_path, ts, certificate):
    import threading
    import urllib.parse
    import urllib.request

    settings = google(ts, tmp_path, certificate, auth_uri="https://accounts.example/auth")
    lines, pages = [], []

    def browser(line):
        """What the operator's browser and Google do: sign in, redirect back."""
        lines.append(line)
        if not line.startswith("https://accounts.example/auth?"):
            return
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(line).query))
        ts.codes["c-1"] = query["code_challenge"]
        back = f"{query['redirect_uri']}?{urllib.parse.urlencode({'code': 'c-1', 'state': query['state']})}"
        threading.Thread(target=lambda: pages.append(urllib.request.urlopen(back, timeout=10).read())).start()

    found = browser_login(settings, echo=browser, timeout=20)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(lines[1]).query))
    assert lines[0].startswith("Open this URL in a browser on this machine (from another machine, forward "
                               "the port first: ssh -L ")
    assert (query["scope"], query["access_type"], query["code_challenge_method"], query["response_type"]) == (
        "https://mail.google.com/", "offline", "S256", "code")
    assert query["redirect_uri"].startswith("http://127.0.0.1:")
    assert pages == [b"pbem: the sign-in is done; you may close this page.\n"]
    form = ts.requests[-1][1]
    assert (form["grant_type"], form["code"], form["redirect_uri"]) == (
        "authorization_code", "c-1", query["redirect_uri"])
    data = json.loads(settings.token_file.read_text())
    assert (data["provider"], data["refresh_token"], data["access_token"]) == ("google", "rt-at-1", "at-1")
    assert mode(settings.token_file) == 0o600
    assert found["account"] is None


def test_generic_device_login_polls_until_signed_in(tmp_path, ts, certificate):
    settings = OAuthSettings(provider="generic", client_id=ts.client_id, client_secret="not-secret",
                             token_file=tmp_path / "token.json", token_uri=ts.token_uri,
                             device_uri=ts.device_uri, scopes=("https://mail.google.com/",),
                             ca_file=certificate.cert_path)
    ts.pending = 2
    lines, sleeps = [], []
    found = device_login(settings, echo=lines.append, sleep=sleeps.append)
    assert lines == ["Open https://example.org/device in a browser and enter the code WDJB-MJHT."]
    assert sleeps == [1.0, 1.0]  # the interval the server asked for, twice pending
    assert [path for path, _ in ts.requests] == ["/device", "/token", "/token", "/token"]
    assert ts.requests[0][1] == {"client_id": "test-client", "client_secret": "not-secret",
                                 "scope": "https://mail.google.com/"}
    data = json.loads(settings.token_file.read_text())
    assert (data["provider"], data["refresh_token"], data["access_token"]) == ("generic", "rt-at-1", "at-1")
    assert mode(settings.token_file) == 0o600
    assert found["account"] is None


def test_device_login_with_an_unknown_client_is_refused(tmp_path, ts, certificate):
    settings = OAuthSettings(provider="generic", client_id="someone-else", token_file=tmp_path / "t.json",
                             token_uri=ts.token_uri, device_uri=ts.device_uri,
                             ca_file=certificate.cert_path)
    with pytest.raises(OAuthRefused) as err:
        device_login(settings, echo=lambda _: None, sleep=lambda _: None)
    assert str(err.value) == f"{ts.device_uri} refused to start the sign-in: invalid_client: unknown client"
    assert not settings.token_file.exists()


# ---------------------------------------------------------------- Microsoft
def test_microsoft_device_login_and_refresh_through_msal(tmp_path, ts, certificate):
    settings = microsoft(ts, tmp_path, certificate)
    ts.lifetime = 120  # msal refreshes tokens with less than 5 minutes left
    lines = []
    found = device_login(settings, echo=lines.append)
    assert lines == ["Open https://example.org/device in a browser and enter the code WDJB-MJHT."]
    assert found["account"] == ACCOUNT
    paths = [path for path, _ in ts.requests]
    assert paths == ["/consumers/v2.0/.well-known/openid-configuration",
                     "/consumers/oauth2/v2.0/devicecode", "/consumers/oauth2/v2.0/token"]
    scopes = set(ts.requests[1][1]["scope"].split())
    assert {"https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send",
            "offline_access"} <= scopes
    data = json.loads(settings.token_file.read_text())
    assert data["provider"] == "microsoft" and data["account"] == ACCOUNT and "msal_cache" in data
    assert "rt-at-1" in data["msal_cache"]
    assert mode(settings.token_file) == 0o600
    ts.requests.clear()
    # unattended (a new process: only the file): the refresh-token grant
    assert TokenSource(settings, ACCOUNT)() == "at-2"
    token_calls = [form for path, form in ts.requests if path == "/consumers/oauth2/v2.0/token"]
    assert [(f["grant_type"], f["refresh_token"]) for f in token_calls] == [("refresh_token", "rt-at-1")]
    assert "rt-at-2" in json.loads(settings.token_file.read_text())["msal_cache"]
    # revoked: the operator is told what to run
    ts.refresh_tokens.clear()
    with pytest.raises(OAuthRefused) as err:
        TokenSource(settings, ACCOUNT)()
    assert str(err.value).startswith(f"the microsoft refresh token in {settings.token_file} was refused "
                                     "(invalid_grant: Token has been expired or revoked.)")
    assert str(err.value).endswith("run  pbem auth login microsoft")


# ------------------------------------------------------- IMAP and SMTP login
def test_xoauth2_login_at_dovecot_and_aiosmtpd(tmp_path, ts, certificate, oauth_dovecot):
    settings = google(ts, tmp_path, certificate)
    write_private_json(settings.token_file, {"version": 1, "provider": "google",
                                             "refresh_token": "rt-good"})
    source = TokenSource(settings, ACCOUNT)
    oauth_dovecot.append(b"From: a@b.example\r\nTo: up@example.org\r\nSubject: hi\r\n\r\nbody\r\n")
    with ImapInbox(oauth_dovecot.host, oauth_dovecot.ssl_port, ACCOUNT, None, security="ssl",
                   ssl_context=certificate.client_context(), oauth2=source) as inbox:
        mails = inbox.fetch()
    assert [m.raw.split(b"\r\n")[2] for m in mails] == [b"Subject: hi"]
    assert "Login: user=<up@example.org>, method=XOAUTH2" in oauth_dovecot.log_text()
    with SmtpSink(oauth2_check=lambda user, token: ts.access_tokens.get(token) == user) as sink:
        outbox = SmtpOutbox(sink.host, sink.port, ACCOUNT, security="none", oauth2=source)
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = "UP <up@example.org>", "ada@players.example", "status"
        msg.set_content("text\n")
        outbox.send(msg)
        assert sink.logins == [ACCOUNT]
        assert [m.rcpt_tos for m in sink.messages] == [("ada@players.example",)]
    # one refresh served both; Dovecot asked the server about the token
    assert [path for path, _ in ts.requests] == ["/token", "/introspect"]
    assert ts.requests[1][1] == {"token": "at-1"}


def test_a_token_the_servers_refuse_is_a_login_refusal(oauth_dovecot, certificate):
    with pytest.raises(LoginRefused) as err:
        ImapInbox(oauth_dovecot.host, oauth_dovecot.ssl_port, ACCOUNT, None, security="ssl",
                  ssl_context=certificate.client_context(), oauth2=lambda: "at-forged")
    assert err.value.step == "XOAUTH2 login as 'up@example.org'"
    assert "AUTHENTICATIONFAILED" in str(err.value)
    with SmtpSink(oauth2_check=lambda user, token: False) as sink:
        with pytest.raises(LoginRefused) as err:
            SmtpOutbox.probe(sink.host, sink.port, ACCOUNT, security="none", oauth2=lambda: "at-forged")
    assert err.value.step == "XOAUTH2 login as 'up@example.org'"
    assert err.value.code == 535


# ------------------------------------------------------ whole cycles, the CLI
PLAYERS = [("Ada", "ada@players.example"), ("Brunel", "brunel@players.example"),
           ("Crocker", "crocker@players.example")]


def oauth_config(tmp_path, ts, certificate, dovecot, sink, provider="google") -> object:
    """A pbem.yaml with IMAP (implicit TLS, own CA) and SMTP both on XOAUTH2."""
    cfg = tmp_path / "pbem.yaml"
    oauth = {"provider": provider, "client_id": ts.client_id, "token_file": "secret/token.json",
             "ca_file": str(certificate.cert_path)}
    if provider == "google":
        oauth.update(client_secret="not-secret", token_uri=ts.token_uri, device_uri=ts.device_uri)
    else:
        oauth.update(tenant="consumers", authority=ts.base)
    cfg.write_text(yaml.safe_dump({
        "moderator": {"address": ACCOUNT, "name": "UP moderator"},
        "games_dir": "games",
        "oauth": oauth,
        "imap": {"host": dovecot.host, "port": dovecot.ssl_port, "security": "ssl",
                 "username": ACCOUNT, "auth": "oauth2", "ca_file": str(certificate.cert_path)},
        "smtp": {"host": sink.host, "port": sink.port, "security": "none",
                 "username": ACCOUNT, "auth": "oauth2"},
    }))
    return cfg


def test_order_cycles_through_imap_and_smtp_with_oauth2(tmp_path, ts, certificate, oauth_dovecot):
    from moderator.demo import Bot, play
    from moderator.moderation.cycle import Moderator
    from moderator.store.gamefile import GameStore

    ts.lifetime = 200  # under the 5-minute margin: every login refreshes
    oauth_dovecot.remove_user(ACCOUNT)
    with SmtpSink(oauth2_check=lambda user, token: ts.access_tokens.get(token) == user) as sink:
        cfg = oauth_config(tmp_path, ts, certificate, oauth_dovecot, sink, provider="microsoft")
        runner = CliRunner()
        # the sign-in, as the operator runs it once
        result = runner.invoke(__import__("pbem").main, ["--config", str(cfg), "auth", "login", "microsoft"])
        assert result.exit_code == 0, result.output
        assert result.output.splitlines() == [
            "Open https://example.org/device in a browser and enter the code WDJB-MJHT.",
            f"Signed in as {ACCOUNT}. The refresh token is in {tmp_path}/secret/token.json (mode 0600); "
            "each cycle gets new access tokens with it."]
        config = load_config(cfg)
        moderator = Moderator(config)
        moderator.create_game("oauth", PLAYERS, seed=7)
        bots = [Bot(n, a, ACCOUNT, random.Random(i)) for i, (n, a) in enumerate(PLAYERS)]
        seen = [0]

        def collect():
            new = sink.messages[seen[0]:]
            seen[0] += len(new)
            return [m.message for m in new]

        store = GameStore(config.games_dir)
        play(moderator, bots, lambda msg: oauth_dovecot.append(msg.as_bytes()), collect,
             lambda: len(store.read_data("oauth")["history"]) >= 6, max_cycles=40)
        assert moderator.run_cycle().ok  # the mails delivered last
        history = store.read_data("oauth")["history"]
        assert len(history) >= 6
        # every order mail went through IMAP and was moved; every SMTP login was XOAUTH2
        assert oauth_dovecot.messages("INBOX") == []
        assert len(oauth_dovecot.messages("Processed")) == len(history)
        assert sink.logins and set(sink.logins) == {ACCOUNT}
        assert {m.mail_from for m in sink.messages} == {ACCOUNT}
        refreshes = [f for p, f in ts.requests
                     if p.endswith("/token") and f.get("grant_type") == "refresh_token"]
        assert len(refreshes) >= 2
        # `pbem auth status` refreshes and tells
        result = runner.invoke(__import__("pbem").main, ["--config", str(cfg), "auth", "status"])
        assert result.exit_code == 0, result.output
        assert result.output.startswith(f"microsoft sign-in of {ACCOUNT} in {tmp_path}/secret/token.json, made ")
        # revoked: `pbem run` names the fix, no traceback, exit 1
        ts.refresh_tokens.clear()
        ts.access_tokens.clear()
        (tmp_path / "secret" / "token.json").write_text(
            (tmp_path / "secret" / "token.json").read_text().replace('"expiry"', '"old_expiry"'))
        result = runner.invoke(__import__("pbem").main, ["--config", str(cfg), "run"])
        assert result.exit_code == 1
        assert "Traceback" not in result.output
        assert "was refused (invalid_grant: Token has been expired or revoked.)" in result.output
        assert "run  pbem auth login microsoft" in result.output


# ------------------------------------- a refused access token (issue 24)
def stale_token_file(settings, refresh_token="rt-good", minutes_left=50):
    """A token file whose access token the servers no longer take although its
    stored expiry is ``minutes_left`` ahead (revoked early, or a clock behind)."""
    write_private_json(settings.token_file, {
        "version": 1, "provider": "google", "refresh_token": refresh_token, "access_token": "at-stale",
        "expiry": (datetime.now(timezone.utc) + timedelta(minutes=minutes_left)).isoformat(timespec="seconds")})


def test_a_refused_access_token_is_refreshed_once_and_the_login_retried(tmp_path, ts, certificate, oauth_dovecot):
    settings = google(ts, tmp_path, certificate)
    stale_token_file(settings)
    source = TokenSource(settings, ACCOUNT)
    oauth_dovecot.append(b"From: a@b.example\r\nTo: up@example.org\r\nSubject: again\r\n\r\nbody\r\n")
    with ImapInbox(oauth_dovecot.host, oauth_dovecot.ssl_port, ACCOUNT, None, security="ssl",
                   ssl_context=certificate.client_context(), oauth2=source) as inbox:
        assert b"Subject: again" in inbox.fetch()[-1].raw
    # Dovecot asked about the stale token, refused it; one refresh; the fresh token taken
    assert [(p, f.get("token") or f.get("refresh_token")) for p, f in ts.requests] == [
        ("/introspect", "at-stale"), ("/token", "rt-good"), ("/introspect", "at-1")]
    data = json.loads(settings.token_file.read_text())
    assert data["access_token"] == "at-1" and "force_refresh" not in data
    imap = f"IMAP {oauth_dovecot.host}:{oauth_dovecot.ssl_port}"
    assert (data["last_login"]["server"], data["last_login"]["ok"]) == (imap, True)
    # the SMTP server refuses at-1 (revoked early): refreshed, AUTH again, sent
    ts.revoke("at-1")
    with SmtpSink(oauth2_check=lambda user, token: ts.valid(token, user)) as sink:
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = "UP <up@example.org>", "ada@players.example", "status"
        msg.set_content("text\n")
        SmtpOutbox(sink.host, sink.port, ACCOUNT, security="none", oauth2=source).send(msg)
        assert sink.logins == [ACCOUNT] and len(sink.messages) == 1
        smtp = f"SMTP {sink.host}:{sink.port}"
    assert [f.get("refresh_token") for p, f in ts.requests if p == "/token"] == ["rt-good", "rt-at-1"]
    data = json.loads(settings.token_file.read_text())
    assert data["access_token"] == "at-2" and data["last_login"]["server"] == smtp and data["last_login"]["ok"]


def test_a_refused_token_whose_refresh_is_refused_names_auth_login(tmp_path, ts, certificate, oauth_dovecot):
    settings = google(ts, tmp_path, certificate)
    stale_token_file(settings, refresh_token="rt-revoked")
    source = TokenSource(settings, ACCOUNT)
    with pytest.raises(OAuthRefused) as err:
        ImapInbox(oauth_dovecot.host, oauth_dovecot.ssl_port, ACCOUNT, None, security="ssl",
                  ssl_context=certificate.client_context(), oauth2=source)
    assert str(err.value) == (
        f"the google refresh token in {settings.token_file} was refused (invalid_grant: Token has "
        "been expired or revoked.); it may have expired or been revoked: run  pbem auth login google")
    assert isinstance(err.value, LoginRefused) and "password" not in str(err.value)
    data = json.loads(settings.token_file.read_text())
    last = data["last_login"]
    assert (last["server"], last["ok"], data["force_refresh"]) == (
        f"IMAP {oauth_dovecot.host}:{oauth_dovecot.ssl_port}", False, True)
    assert "AUTHENTICATIONFAILED" in last["said"]
    # `pbem auth status` no longer calls the stored token valid: it says what the server said
    with SmtpSink() as sink:
        cfg = oauth_config(tmp_path, ts, certificate, oauth_dovecot, sink)
    (tmp_path / "secret").mkdir()
    os.replace(settings.token_file, tmp_path / "secret" / "token.json")
    result = CliRunner().invoke(__import__("pbem").main, ["--config", str(cfg), "auth", "status"])
    assert result.exit_code == 1
    assert "was refused (invalid_grant: Token has been expired or revoked.)" in result.output
    assert "run  pbem auth login google" in result.output
    assert (f"Last login: IMAP {oauth_dovecot.host}:{oauth_dovecot.ssl_port} refused the access token at "
            in result.output) and "AUTHENTICATIONFAILED" in result.output
    # signed in again (a good refresh token): the status refreshes, then tells the refusal it saw last
    data = json.loads((tmp_path / "secret" / "token.json").read_text())
    data["refresh_token"] = "rt-good"
    write_private_json(tmp_path / "secret" / "token.json", data)
    result = CliRunner().invoke(__import__("pbem").main, ["--config", str(cfg), "auth", "status"])
    assert result.exit_code == 0, result.output
    assert "access token valid until" in result.output and "refused the access token at" in result.output
    assert [f.get("refresh_token") for p, f in ts.requests if p == "/token"][-1] == "rt-good"
    from moderator.doctor import OK, check_oauth

    (check,) = check_oauth(load_config(cfg))
    assert check.status == OK and (f"; IMAP {oauth_dovecot.host}:{oauth_dovecot.ssl_port} refused the access "
                                   "token at ") in check.text and check.text.endswith("it was refreshed since")


def test_the_server_refusing_the_fresh_token_too_is_a_login_refusal_naming_auth_login(tmp_path, ts, certificate,
                                                                                     oauth_dovecot):
    settings = google(ts, tmp_path, certificate)
    stale_token_file(settings)
    with SmtpSink(oauth2_check=lambda user, token: False) as sink:
        with pytest.raises(LoginRefused) as err:
            SmtpOutbox.probe(sink.host, sink.port, ACCOUNT, security="none", oauth2=TokenSource(settings, ACCOUNT))
    assert err.value.code == 535 and "refused a freshly refreshed access token too" in str(err.value)
    assert str(err.value).endswith("run  pbem auth login google")
    assert [p for p, _ in ts.requests] == ["/token"]  # one refresh, not a loop


def test_rotating_refresh_tokens_across_forced_refreshes(tmp_path, ts, certificate, oauth_dovecot):
    """A server that gives a new refresh token with each refresh and revokes the
    one used: every forced refresh uses the newest one, kept in the token file."""
    ts.rotate = True
    settings = google(ts, tmp_path, certificate)
    stale_token_file(settings)
    source = TokenSource(settings, ACCOUNT)
    for revoked in ("at-stale", "at-1", "at-2"):
        ts.revoke(revoked)
        ImapInbox(oauth_dovecot.host, oauth_dovecot.ssl_port, ACCOUNT, None, security="ssl",
                  ssl_context=certificate.client_context(), oauth2=source).close()
    assert [f["refresh_token"] for p, f in ts.requests if p == "/token"] == ["rt-good", "rt-at-1", "rt-at-2"]
    assert ts.refresh_tokens == {"rt-at-3"}
    data = json.loads(settings.token_file.read_text())
    assert (data["access_token"], data["refresh_token"]) == ("at-3", "rt-at-3")


def test_a_clock_minutes_behind_never_stops_a_cycle(tmp_path, ts, certificate, oauth_dovecot):
    """The moderator's clock 10 minutes behind the identity server's: the stored
    expiry looks 5+ minutes ahead when the token has expired already; the
    refusal is answered by a refresh and `pbem run` succeeds."""
    settings = google(ts, tmp_path, certificate)
    with SmtpSink(oauth2_check=lambda user, token: ts.valid(token, user)) as sink:
        cfg = oauth_config(tmp_path, ts, certificate, oauth_dovecot, sink)
        (tmp_path / "secret").mkdir()
        (tmp_path / "games").mkdir()
        stale_token_file(OAuthSettings(**{**settings.__dict__, "token_file": tmp_path / "secret" / "token.json"}),
                         minutes_left=8)
        runner = CliRunner()
        result = runner.invoke(__import__("pbem").main, ["--config", str(cfg), "run"])
        assert result.exit_code == 0, result.output
        assert [f.get("refresh_token") for p, f in ts.requests if p == "/token"] == ["rt-good"]
        assert "Login: user=<up@example.org>, method=XOAUTH2" in oauth_dovecot.log_text()
        # the next cycle uses the refreshed token as it is: no refresh, no refusal
        result = runner.invoke(__import__("pbem").main, ["--config", str(cfg), "run"])
        assert result.exit_code == 0, result.output
        assert len([p for p, _ in ts.requests if p == "/token"]) == 1


def test_microsoft_refused_token_is_refreshed_by_msal_although_its_cache_calls_it_valid(tmp_path, ts, certificate,
                                                                                       oauth_dovecot):
    settings = microsoft(ts, tmp_path, certificate)
    device_login(settings, echo=lambda line: None)  # at-1, valid for an hour in msal's cache
    ts.revoke("at-1")
    ts.requests.clear()
    source = TokenSource(settings, ACCOUNT)
    ImapInbox(oauth_dovecot.host, oauth_dovecot.ssl_port, ACCOUNT, None, security="ssl",
              ssl_context=certificate.client_context(), oauth2=source).close()
    token_calls = [f for p, f in ts.requests if p == "/consumers/oauth2/v2.0/token"]
    assert [(f["grant_type"], f["refresh_token"]) for f in token_calls] == [("refresh_token", "rt-at-1")]
    assert [f["token"] for p, f in ts.requests if p == "/introspect"] == ["at-1", "at-2"]
    data = json.loads(settings.token_file.read_text())
    assert "force_refresh" not in data and data["last_login"]["ok"] and "rt-at-2" in data["msal_cache"]
