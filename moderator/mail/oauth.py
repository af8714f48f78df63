"""OAuth2 for the mail servers: the token file, unattended refresh, the device-code login.

Outlook.com, Microsoft 365 and Google Workspace take no passwords for IMAP and
SMTP any more: the client logs in with SASL XOAUTH2 (an access token, valid
about an hour) and gets new access tokens with a long-lived refresh token
(RFC 6749 6). ``pbem auth login`` runs the device-code flow (RFC 8628) once: it
prints a URL and a code, the operator signs in there in any browser, and the
refresh token is stored in the *token file*. Google does not allow its mail
scope in the device-code flow, so for Google it runs the browser sign-in with a
loopback redirect instead (:func:`browser_login`). From then on every cycle, run
by cron, refreshes the access token by itself (:class:`TokenSource`).

The providers (``OAuthSettings.provider``):

- ``microsoft``: through ``msal`` (a ``PublicClientApplication`` whose token
  cache is kept in the token file); ``tenant`` is ``consumers`` for
  Outlook.com/Hotmail accounts, the organisation's tenant (id or domain) for
  Microsoft 365, ``common`` for either;
- ``google``: through ``google-auth`` (``google.oauth2.credentials.Credentials``
  refreshed at ``token_uri``); the sign-in goes through ``auth_uri``;
- ``generic``: any RFC 6749/8628 server (``token_uri`` and ``device_uri``
  required), refreshed like Google.

The token file is JSON, written atomically with mode 0600 and refused (not
read) when its group or others may read it::

    {"version": 1, "provider": "google", "account": "up@example.org",
     "obtained": "2026-12-01T03:00:00+00:00",
     "refresh_token": "...", "access_token": "...", "expiry": "2026-12-01T04:00:00+00:00"}

(for Microsoft ``"msal_cache"`` holds msal's serialized token cache instead of
the three token keys).  ``"last_login"`` keeps what a mail server last said to
an access token, ``{"at": ISO time, "server": "IMAP host:port", "ok": bool,
"said": str}`` (written on a refusal and on the first acceptance after one), and
``"force_refresh": true`` marks an access token a server refused: it is not used
again, the next :meth:`TokenSource.token` refreshes it whatever its stored
expiry says (a clock behind, a token revoked early).

``msal``, ``google-auth`` and ``requests`` are the ``oauth`` extra of the
package (``pip install 'pbem[oauth]'``); they are imported only when a token is
needed, and their absence is an :class:`OAuthError` that says how to install them.

Failures are :class:`OAuthError` (a :class:`TransportError`: the token endpoint
could not be reached, try later) or :class:`OAuthRefused` (also a
:class:`LoginRefused`: the token file is missing, unsafe or its refresh token
was refused; the operator has to run ``pbem auth login`` again). Their text is
meant for the operator as it stands.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from .transport.base import LoginRefused, TransportError

__all__ = [
    "PROVIDERS",
    "SCOPES",
    "OAuthSettings",
    "OAuthError",
    "OAuthRefused",
    "TokenSource",
    "browser_login",
    "device_login",
    "read_private_file",
    "write_private_json",
    "xoauth2_string",
]

PROVIDERS = ("microsoft", "google", "generic")

#: The scopes asked for: IMAP and SMTP of the one account (Microsoft adds
#: ``offline_access``, which gives the refresh token, by itself).
SCOPES = {
    "microsoft": ("https://outlook.office.com/IMAP.AccessAsUser.All",
                  "https://outlook.office.com/SMTP.Send"),
    "google": ("https://mail.google.com/",),
    "generic": (),
}
MICROSOFT_AUTHORITY = "https://login.microsoftonline.com"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
GOOGLE_DEVICE_URI = "https://oauth2.googleapis.com/device/code"
GOOGLE_AUTH_URI = "https://accounts.google.com/o/oauth2/v2/auth"
#: Seconds to wait for each answer of a token endpoint.
HTTP_TIMEOUT = 30
#: An access token with less than this left is refreshed before use.
REFRESH_MARGIN = timedelta(minutes=5)
_INSTALL = "the OAuth2 libraries are not installed: pip install 'pbem[oauth]' (msal, google-auth)"


class OAuthError(TransportError):
    """No access token now: the token endpoint could not be reached or answered
    nonsense (try again later), or the libraries are missing. The message is in
    the operator's words."""


class OAuthRefused(OAuthError, LoginRefused):
    """No access token until the operator acts: the token file is missing,
    unreadable, readable by others, or its refresh token was refused
    (``invalid_grant``: revoked, expired, password changed). The message says
    what to run."""


@dataclass(frozen=True)
class OAuthSettings:
    """The ``oauth`` section of the configuration.

    - ``provider``: one of :data:`PROVIDERS`;
    - ``client_id`` (and ``client_secret``, which Google's device clients need
      and which is not a secret for such "installed" clients): the app
      registration;
    - ``token_file``: absolute path of the token file;
    - ``tenant`` (Microsoft): ``consumers``, ``organizations``, ``common`` or a
      tenant id/domain; ``authority`` the Microsoft login host (default
      :data:`MICROSOFT_AUTHORITY`; another for national clouds);
    - ``token_uri``/``device_uri`` (Google, generic): the endpoints;
      ``auth_uri`` (Google) the authorization endpoint of the browser sign-in
      (:func:`browser_login`);
    - ``scopes``: what to ask for (default :data:`SCOPES` of the provider);
    - ``ca_file``: CA certificates (PEM) trusted for the provider's HTTPS
      endpoints instead of the system's (a self-hosted identity server).
    """

    provider: str
    client_id: str
    token_file: Path
    client_secret: str | None = field(default=None, repr=False)
    tenant: str = "common"
    authority: str = MICROSOFT_AUTHORITY
    token_uri: str | None = None
    device_uri: str | None = None
    auth_uri: str | None = None
    scopes: tuple[str, ...] = ()
    ca_file: Path | None = None

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, not {self.provider!r}")
        if not self.scopes:
            object.__setattr__(self, "scopes", SCOPES[self.provider])
        if self.provider == "google":
            object.__setattr__(self, "token_uri", self.token_uri or GOOGLE_TOKEN_URI)
            object.__setattr__(self, "device_uri", self.device_uri or GOOGLE_DEVICE_URI)
            object.__setattr__(self, "auth_uri", self.auth_uri or GOOGLE_AUTH_URI)

    @property
    def authority_url(self) -> str:
        """Microsoft: ``f"{authority}/{tenant}"``, what msal is given."""
        return f"{self.authority.rstrip('/')}/{self.tenant}"

    @property
    def login_command(self) -> str:
        """The command that stores a new refresh token."""
        return f"pbem auth login {self.provider}"


def xoauth2_string(username: str, access_token: str) -> str:
    """The SASL XOAUTH2 initial response (before base64), as Google and
    Microsoft define it: ``"user=USER\\x01auth=Bearer TOKEN\\x01\\x01"``."""
    return f"user={username}\x01auth=Bearer {access_token}\x01\x01"


# ----------------------------------------------------------- private files
def read_private_file(path: Path, what: str) -> str:
    """The text of a file holding a secret (``what`` names it in messages).

    Raises OAuthRefused when it is missing or unreadable, or when its group or
    others have any permission on it (the message gives the ``chmod 600``
    command to run).
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise OAuthRefused(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise OAuthRefused(f"{what} {path} cannot be read: {exc.strerror}") from None
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o077:
            raise OAuthRefused(f"{what} {path} may be read by others (mode {mode:04o}), so it is "
                               f"not used: run  chmod 600 {path}")
        with os.fdopen(fd, encoding="utf-8") as handle:
            fd = -1
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise OAuthRefused(f"{what} {path} cannot be read: {exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)


def write_private_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a temporary file in the
    same directory, mode 0600, fsynced, renamed over it). Raises OSError."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            fd = -1
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds") if moment else None


def _parse(text: str | None) -> datetime | None:
    if not text:
        return None
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _session(settings: OAuthSettings):
    try:
        import requests
    except ImportError:
        raise OAuthError(_INSTALL) from None
    session = requests.Session()
    # given with each request (a caller's own arguments win): a timeout, so that
    # a silent endpoint never hangs a cron run (msal sets none on a session it is
    # given), and the CA file, since a session's own ``verify`` loses to the
    # REQUESTS_CA_BUNDLE variable (requests' rule)
    defaults: dict[str, Any] = {"timeout": HTTP_TIMEOUT}
    if settings.ca_file is not None:
        defaults["verify"] = str(settings.ca_file)
    session.request = functools.partial(session.request, **defaults)
    return session


def _describe_response(data: Any) -> str:
    if isinstance(data, dict) and data.get("error"):
        text = str(data["error"])
        if data.get("error_description"):
            text += f": {str(data['error_description']).splitlines()[0]}"
        return text
    return repr(data)[:200]


# ------------------------------------------------------------ token source
class TokenSource:
    """Access tokens for ``username`` from the token file of ``settings``:
    called with no arguments it returns one valid for at least
    :data:`REFRESH_MARGIN`, refreshing it (and rewriting the file) first when
    needed. It is what the IMAP and SMTP transports are given as ``oauth2``.

    ``clock`` gives the current time (default: the system clock, UTC).

    Raises OAuthRefused (file missing, unsafe, for another provider, refresh
    token refused) or OAuthError (endpoint unreachable, libraries missing).
    """

    def __init__(self, settings: OAuthSettings, username: str | None = None,
                 clock: Callable[[], datetime] = _now) -> None:
        self.settings = settings
        self.username = username
        self.clock = clock
        self.last_expiry: datetime | None = None

    def __call__(self) -> str:
        return self.token()[0]

    @property
    def login_command(self) -> str:
        """The command that signs in again (``pbem auth login PROVIDER``)."""
        return self.settings.login_command

    def refused(self, server: str, said: str) -> str:
        """A mail server (``server``: ``'IMAP host:port'``) refused the access
        token with ``said``: remember that in the token file (``last_login``,
        ``force_refresh``), then return a freshly refreshed access token (the
        stored expiry notwithstanding), for one more login.  Called by the
        IMAP and SMTP transports (XOAUTH2).  Raises OAuthRefused when the
        refresh token is refused too (the message names ``pbem auth login
        PROVIDER``), OAuthError when the token endpoint cannot be reached."""
        self.record_login(server, ok=False, said=said, force=True)
        return self.token(force=True)[0]

    def accepted(self, server: str) -> None:
        """``server`` took the access token: remembered when the last login
        said otherwise (the token file is not written at every login).
        Never raises."""
        try:
            last = self.load().get("last_login")
        except OAuthError:
            return
        if not isinstance(last, dict) or not last.get("ok"):
            self.record_login(server, ok=True, said="")

    def record_login(self, server: str, ok: bool, said: str, force: bool = False) -> None:
        """Write what ``server`` said to an access token into the token file
        (``last_login``; ``force_refresh`` when ``force``: the stored token is
        not used again); a file that cannot be read or written is left as it
        is (the login's own error says more).  Never raises."""
        try:
            data = self.load()
            data["last_login"] = {"at": _iso(self.clock()), "server": server, "ok": ok,
                                  "said": " ".join(str(said).split())[:300]}
            if force:
                data["force_refresh"] = True
            write_private_json(self.settings.token_file, data)
        except (OAuthError, OSError):
            pass

    def load(self) -> dict[str, Any]:
        """The token file's content. Raises OAuthRefused as described above."""
        s = self.settings
        if not s.token_file.exists():
            raise OAuthRefused(f"the OAuth2 token file {s.token_file} does not exist: sign in once "
                               f"with  {s.login_command}")
        text = read_private_file(s.token_file, "the OAuth2 token file")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise OAuthRefused(f"the OAuth2 token file {s.token_file} is not JSON ({exc}): "
                               f"run  {s.login_command}") from None
        if not isinstance(data, dict) or data.get("provider") != s.provider:
            found = data.get("provider") if isinstance(data, dict) else None
            raise OAuthRefused(f"the OAuth2 token file {s.token_file} holds a {found!r} login, "
                               f"the configuration says {s.provider!r}: run  {s.login_command}")
        return data

    def token(self, force: bool = False) -> tuple[str, datetime | None]:
        """``(access_token, expiry)`` (expiry in UTC, None if unknown),
        refreshed when less than :data:`REFRESH_MARGIN` is left (a clock a few
        minutes off stops nothing), when a server refused the stored one
        (``force_refresh`` in the file) or when ``force``; see the class doc for
        the errors."""
        data = self.load()
        force = force or bool(data.get("force_refresh"))
        if self.settings.provider == "microsoft":
            token, expiry = self._microsoft(data, force)
        else:
            token, expiry = self._google(data, force)
        self.last_expiry = expiry
        return token, expiry

    def _refused(self, detail: str) -> OAuthRefused:
        s = self.settings
        return OAuthRefused(f"the {s.provider} refresh token in {s.token_file} was refused ({detail}); "
                            f"it may have expired or been revoked: run  {s.login_command}")

    # -- Google and generic: google-auth
    def _google(self, data: dict[str, Any], force: bool = False) -> tuple[str, datetime | None]:
        s = self.settings
        expiry = _parse(data.get("expiry"))
        if not force and data.get("access_token") and expiry and expiry - self.clock() > REFRESH_MARGIN:
            return data["access_token"], expiry
        if not data.get("refresh_token"):
            raise OAuthRefused(f"the OAuth2 token file {s.token_file} has no refresh token: "
                               f"run  {s.login_command}")
        try:
            import google.auth.exceptions
            import google.auth.transport.requests
            from google.oauth2.credentials import Credentials
        except ImportError:
            raise OAuthError(_INSTALL) from None
        creds = Credentials(token=None, refresh_token=data["refresh_token"],
                            token_uri=s.token_uri, client_id=s.client_id,
                            # a public client (generic provider) has no secret; google-auth
                            # wants one: sent empty
                            client_secret=s.client_secret or "", scopes=list(s.scopes) or None)
        try:
            creds.refresh(google.auth.transport.requests.Request(session=_session(s)))
        except google.auth.exceptions.RefreshError as exc:
            detail = exc.args[0] if exc.args else str(exc)
            if getattr(exc, "retryable", False):
                raise OAuthError(f"{s.token_uri} did not give a new access token now ({detail}); "
                                 "the next cycle tries again") from None
            raise self._refused(str(detail)) from None
        except google.auth.exceptions.TransportError as exc:
            raise OAuthError(f"the token endpoint {s.token_uri} cannot be reached ({exc}); "
                             "the next cycle tries again") from None
        # google-auth keeps expiry as naive UTC
        expiry = creds.expiry.replace(tzinfo=timezone.utc) if creds.expiry else None
        data.update(access_token=creds.token, expiry=_iso(expiry),
                    refresh_token=creds.refresh_token or data["refresh_token"])
        data.pop("force_refresh", None)
        self._save(data)
        return creds.token, expiry

    def _save(self, data: dict[str, Any]) -> None:
        try:
            write_private_json(self.settings.token_file, data)
        except OSError as exc:
            raise OAuthError(f"the OAuth2 token file {self.settings.token_file} cannot be "
                             f"written: {exc.strerror or exc}") from None

    # -- Microsoft: msal
    def _microsoft(self, data: dict[str, Any], force: bool = False) -> tuple[str, datetime | None]:
        s = self.settings
        app, cache = _msal_app(s, data.get("msal_cache"))
        accounts = app.get_accounts(username=self.username or data.get("account"))
        if not accounts:
            accounts = app.get_accounts()
        if not accounts:
            raise OAuthRefused(f"the OAuth2 token file {s.token_file} holds no Microsoft account"
                               f"{' ' + repr(self.username) if self.username else ''}: "
                               f"run  {s.login_command}")
        try:
            result = app.acquire_token_silent_with_error(list(s.scopes), account=accounts[0],
                                                         force_refresh=force)
        except (OSError, ValueError) as exc:  # requests' errors are OSErrors
            raise OAuthError(f"the Microsoft token endpoint under {s.authority_url} cannot be "
                             f"reached ({exc}); the next cycle tries again") from None
        if not result or "access_token" not in result:
            detail = _describe_response(result) if result else "no refresh token in the cache"
            if result and result.get("error") in ("temporarily_unavailable", "server_error"):
                raise OAuthError(f"the Microsoft token endpoint failed ({detail}); the next "
                                 "cycle tries again")
            raise self._refused(detail)
        expiry = self.clock() + timedelta(seconds=int(result.get("expires_in", 0)))
        if cache.has_state_changed or force:
            data["msal_cache"] = cache.serialize()
            data["expiry"] = _iso(expiry)
            data.pop("force_refresh", None)
            self._save(data)
        return result["access_token"], expiry

    # -- status for doctor and `pbem auth status`
    def status(self) -> dict[str, Any]:
        """What the token file says, after getting a valid access token
        (which may refresh it): ``{"provider": str, "account": str | None,
        "obtained": datetime | None (when `pbem auth login` ran), "expiry":
        datetime | None (the access token's), "last_login": None or ``{"at":
        datetime, "server": str, "ok": bool, "said": str}`` (what a mail server
        last said to an access token, see the module doc)}``. Raises as
        :meth:`token` (a token a server refused is refreshed first)."""
        _, expiry = self.token()
        data = self.load()
        last = data.get("last_login") if isinstance(data.get("last_login"), dict) else None
        if last is not None:
            last = {"at": _parse(last.get("at")), "server": str(last.get("server", "")),
                    "ok": bool(last.get("ok")), "said": str(last.get("said", ""))}
        return {"provider": data["provider"], "account": data.get("account"),
                "obtained": _parse(data.get("obtained")), "expiry": expiry, "last_login": last}


def _msal_app(settings: OAuthSettings, serialized: str | None):
    try:
        import msal
    except ImportError:
        raise OAuthError(_INSTALL) from None
    cache = msal.SerializableTokenCache()
    if serialized:
        cache.deserialize(serialized)
    try:
        app = msal.PublicClientApplication(
            settings.client_id, authority=settings.authority_url, token_cache=cache,
            http_client=_session(settings),
            # the login host is named in the configuration: no look-up of it at
            # login.microsoftonline.com (which also lets the tests use loopback)
            instance_discovery=False if settings.authority != MICROSOFT_AUTHORITY else None)
    except ValueError as exc:
        raise OAuthRefused(f"oauth: Microsoft authority {settings.authority_url}: {exc}") from None
    except OSError as exc:
        raise OAuthError(f"the Microsoft login service {settings.authority_url} cannot be "
                         f"reached ({exc}); try again later") from None
    return app, cache


# ----------------------------------------------------------- device login
def device_login(settings: OAuthSettings, echo: Callable[[str], None] = print,
                 clock: Callable[[], datetime] = _now, sleep: Callable[[float], None] = time.sleep
                 ) -> dict[str, Any]:
    """Run the device-code flow (RFC 8628) once: ``echo`` the verification URL
    and the code, wait while the operator signs in, and store the tokens in the
    token file (mode 0600). Returns ``{"account": str | None, "expiry":
    datetime | None}``.

    Raises OAuthRefused when the provider refuses (unknown client, code
    expired, sign-in declined), OAuthError when it cannot be reached.
    """
    if settings.provider == "microsoft":
        return _device_microsoft(settings, echo, clock)
    return _device_rfc8628(settings, echo, clock, sleep)


def browser_login(settings: OAuthSettings, echo: Callable[[str], None] = print,
                  port: int = 0, timeout: float = 600,
                  clock: Callable[[], datetime] = _now) -> dict[str, Any]:
    """The sign-in Google allows for mail (its device-code flow refuses the
    ``https://mail.google.com/`` scope): the authorization-code flow with a
    loopback redirect and PKCE (RFC 8252, RFC 7636). A one-request HTTP server
    listens on 127.0.0.1:``port`` (0: any free port); ``echo`` prints the URL
    to open in a browser on this machine, or on another one with the port
    forwarded (``ssh -L PORT:127.0.0.1:PORT``); the code the browser brings
    back is exchanged at ``token_uri`` and the tokens stored in the token file
    (mode 0600). Returns ``{"account": None, "expiry": datetime}``.

    Raises OAuthRefused when the sign-in is declined, the answer does not
    match (``state``), nothing comes back within ``timeout`` seconds, or the
    code is refused; OAuthError when the token endpoint cannot be reached.
    """
    import base64
    import hashlib
    import http.server
    import secrets
    import urllib.parse

    s = settings
    if not s.auth_uri or not s.token_uri:
        raise OAuthRefused("oauth: auth_uri and token_uri are needed for the browser sign-in")
    verifier = secrets.token_urlsafe(64)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    state = secrets.token_urlsafe(16)
    got: dict[str, str] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            if "code" not in query and "error" not in query:
                self.send_error(404)
                return
            got.update(query)
            body = b"pbem: the sign-in is done; you may close this page.\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    try:
        server = http.server.HTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise OAuthError(f"cannot listen on 127.0.0.1:{port} for the browser's answer: "
                         f"{exc.strerror or exc}") from None
    redirect = f"http://127.0.0.1:{server.server_address[1]}/"
    url = s.auth_uri + "?" + urllib.parse.urlencode({
        "client_id": s.client_id, "redirect_uri": redirect, "response_type": "code",
        "scope": " ".join(s.scopes), "code_challenge": challenge, "code_challenge_method": "S256",
        "access_type": "offline", "prompt": "consent", "state": state})
    echo(f"Open this URL in a browser on this machine (from another machine, forward the port "
         f"first: ssh -L {server.server_address[1]}:127.0.0.1:{server.server_address[1]} THIS-HOST):")
    echo(url)
    server.timeout = 1
    deadline = time.monotonic() + timeout
    try:
        while not got and time.monotonic() < deadline:
            server.handle_request()
    finally:
        server.server_close()
    if not got:
        raise OAuthRefused(f"no answer from the browser within {timeout:.0f} seconds: run the command again")
    if got.get("state") != state:
        raise OAuthRefused("the browser's answer is not for this sign-in (state differs): run the command again")
    if "code" not in got:
        raise OAuthRefused(f"the sign-in was not completed: {_describe_response(got)}")
    form = {"grant_type": "authorization_code", "code": got["code"], "redirect_uri": redirect,
            "client_id": s.client_id, "code_verifier": verifier}
    if s.client_secret:
        form["client_secret"] = s.client_secret
    try:
        answer = _session(s).post(s.token_uri, data=form, timeout=30).json()
    except OSError as exc:
        raise OAuthError(f"{s.token_uri} cannot be reached ({exc})") from None
    except ValueError:
        raise OAuthError(f"{s.token_uri} answered without JSON") from None
    if "access_token" not in answer:
        raise OAuthRefused(f"{s.token_uri} refused the sign-in: {_describe_response(answer)}")
    if not answer.get("refresh_token"):
        raise OAuthRefused(f"{s.token_uri} gave no refresh token (access_type=offline was asked for)")
    expiry = clock() + timedelta(seconds=int(answer.get("expires_in", 3600)))
    write_private_json(s.token_file, {
        "version": 1, "provider": s.provider, "account": None, "obtained": _iso(clock()),
        "refresh_token": answer["refresh_token"], "access_token": answer["access_token"],
        "expiry": _iso(expiry)})
    return {"account": None, "expiry": expiry}


def _device_microsoft(settings, echo, clock) -> dict[str, Any]:
    app, cache = _msal_app(settings, None)
    try:
        flow = app.initiate_device_flow(scopes=list(settings.scopes))
    except (OSError, ValueError) as exc:
        raise OAuthError(f"the Microsoft login service {settings.authority_url} cannot be "
                         f"reached ({exc})") from None
    if "user_code" not in flow:
        raise OAuthRefused(f"Microsoft refused to start the sign-in: {_describe_response(flow)}")
    echo(f"Open {flow['verification_uri']} in a browser and enter the code {flow['user_code']}.")
    try:
        result = app.acquire_token_by_device_flow(flow)
    except (OSError, ValueError) as exc:
        raise OAuthError(f"the Microsoft login service {settings.authority_url} cannot be "
                         f"reached ({exc})") from None
    if "access_token" not in result:
        raise OAuthRefused(f"Microsoft did not sign in: {_describe_response(result)}")
    account = (result.get("id_token_claims") or {}).get("preferred_username")
    expiry = clock() + timedelta(seconds=int(result.get("expires_in", 0)))
    write_private_json(settings.token_file, {
        "version": 1, "provider": "microsoft", "account": account, "obtained": _iso(clock()),
        "expiry": _iso(expiry), "msal_cache": cache.serialize()})
    return {"account": account, "expiry": expiry}


def _device_rfc8628(settings, echo, clock, sleep) -> dict[str, Any]:
    s = settings
    if not s.token_uri or not s.device_uri:
        raise OAuthRefused("oauth: token_uri and device_uri are needed for the generic provider")
    session = _session(s)
    base = {"client_id": s.client_id}
    if s.client_secret:
        base["client_secret"] = s.client_secret

    def post(url: str, form: dict[str, str]) -> dict[str, Any]:
        try:
            answer = session.post(url, data=form, timeout=30)
        except OSError as exc:
            raise OAuthError(f"{url} cannot be reached ({exc})") from None
        try:
            return answer.json()
        except ValueError:
            raise OAuthError(f"{url} answered {answer.status_code} without JSON") from None

    flow = post(s.device_uri, {**base, "scope": " ".join(s.scopes)})
    if "device_code" not in flow:
        raise OAuthRefused(f"{s.device_uri} refused to start the sign-in: {_describe_response(flow)}")
    url = flow.get("verification_uri") or flow.get("verification_url")
    echo(f"Open {url} in a browser and enter the code {flow['user_code']}.")
    interval = float(flow.get("interval", 5))
    deadline = clock() + timedelta(seconds=int(flow.get("expires_in", 1800)))
    while True:
        answer = post(s.token_uri, {**base, "device_code": flow["device_code"],
                                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code"})
        if "access_token" in answer:
            break
        error = answer.get("error")
        if error == "slow_down":
            interval += 5
        elif error != "authorization_pending":
            raise OAuthRefused(f"{s.token_uri} did not sign in: {_describe_response(answer)}")
        if clock() >= deadline:
            raise OAuthRefused("the code expired before the sign-in was finished: run the command again")
        sleep(interval)
    if not answer.get("refresh_token"):
        raise OAuthRefused(f"{s.token_uri} gave no refresh token (ask for offline access)")
    expiry = clock() + timedelta(seconds=int(answer.get("expires_in", 3600)))
    write_private_json(s.token_file, {
        "version": 1, "provider": s.provider, "account": None, "obtained": _iso(clock()),
        "refresh_token": answer["refresh_token"], "access_token": answer["access_token"],
        "expiry": _iso(expiry)})
    return {"account": None, "expiry": expiry}
