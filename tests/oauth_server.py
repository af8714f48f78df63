"""A local OAuth2 identity server for the tests (no internet): ``TokenServer``.

It speaks just enough of RFC 6749 (refresh-token grant), RFC 8628 (device
code), RFC 7662 (token introspection, what Dovecot's oauth2 passdb asks) and
Microsoft's OpenID discovery for msal, over HTTPS with the tests' own
certificate (msal accepts only https authorities) and, for Dovecot, over plain
HTTP on a second loopback port.

Endpoints (all on 127.0.0.1):

- ``POST /token``: ``grant_type=refresh_token`` answers a new access token
  when the refresh token is in :attr:`refresh_tokens` (else ``400
  invalid_grant``); ``grant_type=urn:ietf:params:oauth:grant-type:device_code``
  answers ``authorization_pending`` :attr:`pending` times, then the tokens;
  ``grant_type=authorization_code`` answers them for a code in :attr:`codes`
  whose PKCE challenge the ``code_verifier`` matches;
- ``POST /device``: a device code, the user code ``WDJB-MJHT`` and the
  verification URL ``https://example.org/device``;
- ``GET /TENANT/v2.0/.well-known/openid-configuration`` and ``POST
  /TENANT/oauth2/v2.0/token`` / ``devicecode``: the same for msal (with an
  ``id_token`` and ``client_info`` naming :attr:`account`);
- ``POST /introspect`` (plain HTTP, :attr:`introspection_url`): ``{"active":
  true, "username": ...}`` for an access token it issued, ``{"active": false}``
  else.

:attr:`requests` records ``(path, form)`` of every request; access tokens are
``at-1``, ``at-2``, ... and live :attr:`lifetime` seconds (by this server's
clock: :meth:`revoke` ends one early, as a provider revoking a token or a
clock running ahead of the moderator's does).  With :attr:`rotate` a refresh
token works once: each refresh answers a new one and revokes the one used
(RFC 6749 10.4, as Microsoft and many identity servers do).
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import itertools
import json
import threading
import time
import urllib.parse

LOOPBACK = "127.0.0.1"


def _b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


class TokenServer:
    """See the module doc. ``TokenServer(certificate, account=..., client_id=...)``;
    use as a context manager (starts and stops both listeners)."""

    def __init__(self, certificate, account: str = "up@example.org",
                 client_id: str = "test-client", tenant: str = "consumers") -> None:
        self.certificate = certificate
        self.account = account
        self.client_id = client_id
        self.tenant = tenant
        self._servers: list[http.server.ThreadingHTTPServer] = []
        self.reset()

    def reset(self) -> None:
        """Forget every token and request: only ``rt-good`` is a valid refresh
        token, the next access token is ``at-1``."""
        self.refresh_tokens = {"rt-good"}
        self.access_tokens: dict[str, str] = {}  # token -> username
        self.expires: dict[str, float] = {}  # token -> time.time() when it stops working
        self.rotate = False
        self.requests: list[tuple[str, dict]] = []
        self.pending = 0
        self.lifetime = 3600
        self.codes: dict[str, str] = {}  # authorization code -> its PKCE code_challenge
        self._counter = itertools.count(1)

    # -- addresses
    @property
    def base(self) -> str:
        return f"https://{LOOPBACK}:{self._servers[0].server_address[1]}"

    @property
    def token_uri(self) -> str:
        return f"{self.base}/token"

    @property
    def device_uri(self) -> str:
        return f"{self.base}/device"

    @property
    def introspection_url(self) -> str:
        return f"http://{LOOPBACK}:{self._servers[1].server_address[1]}/introspect"

    def issue(self, username: str | None = None) -> dict:
        """A new access token (and refresh token) response, recorded as valid."""
        token = f"at-{next(self._counter)}"
        self.access_tokens[token] = username or self.account
        self.expires[token] = time.time() + self.lifetime
        refresh = f"rt-{token}"
        self.refresh_tokens.add(refresh)
        return {"access_token": token, "token_type": "Bearer", "expires_in": self.lifetime,
                "refresh_token": refresh, "scope": "https://mail.google.com/"}

    def valid(self, token: str, username: str | None = None) -> bool:
        """Whether access token ``token`` works now (for ``username`` when given)."""
        user = self.access_tokens.get(token)
        return user is not None and time.time() < self.expires.get(token, 0) and username in (None, user)

    def revoke(self, token: str) -> None:
        """Access token ``token`` stops working now."""
        self.access_tokens.pop(token, None)

    def _microsoft(self, answer: dict) -> dict:
        now = int(time.time())
        claims = {"iss": f"{self.base}/{self.tenant}/v2.0", "aud": self.client_id, "iat": now,
                  "nbf": now, "exp": now + 3600, "sub": "subject", "oid": "object-id",
                  "tid": "tenant-id", "preferred_username": self.account, "ver": "2.0"}
        answer["id_token"] = f"{_b64url({'alg': 'none', 'typ': 'JWT'})}.{_b64url(claims)}."
        answer["client_info"] = _b64url({"uid": "object-id", "utid": "tenant-id"})
        answer["scope"] = ("https://outlook.office.com/IMAP.AccessAsUser.All "
                           "https://outlook.office.com/SMTP.Send")
        answer["ext_expires_in"] = self.lifetime
        return answer

    # -- the handler's logic: (status, json)
    def answer(self, method: str, path: str, form: dict) -> tuple[int, dict]:
        self.requests.append((path, form))
        ms = f"/{self.tenant}"
        if method == "GET" and path == f"{ms}/v2.0/.well-known/openid-configuration":
            return 200, {"issuer": f"{self.base}/{self.tenant}/v2.0",
                         "authorization_endpoint": f"{self.base}{ms}/oauth2/v2.0/authorize",
                         "token_endpoint": f"{self.base}{ms}/oauth2/v2.0/token",
                         "device_authorization_endpoint": f"{self.base}{ms}/oauth2/v2.0/devicecode"}
        if path in ("/device", f"{ms}/oauth2/v2.0/devicecode"):
            if form.get("client_id") != self.client_id:
                return 400, {"error": "invalid_client", "error_description": "unknown client"}
            answer = {"device_code": "dc-1", "user_code": "WDJB-MJHT", "expires_in": 900,
                      "interval": 1}
            key = "verification_url" if path == "/device" else "verification_uri"
            answer[key] = "https://example.org/device"
            if path != "/device":
                answer["message"] = "sign in"
            return 200, answer
        if path in ("/token", f"{ms}/oauth2/v2.0/token"):
            grant = form.get("grant_type")
            if grant == "refresh_token":
                if form.get("refresh_token") not in self.refresh_tokens:
                    return 400, {"error": "invalid_grant",
                                 "error_description": "Token has been expired or revoked."}
                if self.rotate:
                    self.refresh_tokens.discard(form.get("refresh_token"))
                answer = self.issue()
            elif grant == "authorization_code":
                challenge = self.codes.pop(form.get("code"), None)
                verifier = form.get("code_verifier", "").encode()
                made = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).decode().rstrip("=")
                if challenge is None or made != challenge:
                    return 400, {"error": "invalid_grant", "error_description": "Bad code or verifier."}
                answer = self.issue()
            elif grant in ("urn:ietf:params:oauth:grant-type:device_code", "device_code"):
                if self.pending > 0:
                    self.pending -= 1
                    return 400, {"error": "authorization_pending"}
                answer = self.issue()
            else:
                return 400, {"error": "unsupported_grant_type"}
            return 200, (answer if path == "/token" else self._microsoft(answer))
        if path == "/introspect":
            token = form.get("token", "")
            user = self.access_tokens.get(token) if self.valid(token) else None
            return 200, ({"active": True, "username": user} if user else {"active": False})
        return 404, {"error": "not_found"}

    # -- lifecycle
    def start(self) -> None:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _reply(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                url = urllib.parse.urlsplit(self.path)
                form = dict(urllib.parse.parse_qsl(body or url.query))
                status, data = owner.answer(method, url.path, form)
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                self._reply("GET")

            def do_POST(self):
                self._reply("POST")

            def log_message(self, *args):
                pass

        secure = http.server.ThreadingHTTPServer((LOOPBACK, 0), Handler)
        secure.socket = self.certificate.server_context().wrap_socket(secure.socket, server_side=True)
        plain = http.server.ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self._servers = [secure, plain]
        for server in self._servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> "TokenServer":
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()
