"""The moderator's configuration: who it is, where games live, how mail moves.

A YAML file (see ``docs/pbem.example.yaml``) shaped like::

    moderator: {address: moderator@example.org, name: Union Pacific moderator}
    games_dir: games
    imap: {host: imap.example.org, port: 993, security: ssl, username: up@example.org,
           password_env: PBEM_IMAP_PASSWORD, mailbox: INBOX, processed: Processed,
           ignored: Ignored}
    smtp: {host: smtp.example.org, port: 465, security: ssl, username: up@example.org,
           password_env: PBEM_SMTP_PASSWORD, daily_limit: 500}
    maildir: {inbox: mail/inbox, outbox: mail/outbox}
    oauth: {provider: microsoft, client_id: ..., tenant: consumers,
            token_file: oauth-token.json}

Each server section may also say ``auth: oauth2`` (log in with SASL XOAUTH2
using the tokens of the ``oauth`` section, see :mod:`moderator.mail.oauth`;
no password then), ``password_file`` (a file, mode 0600, holding the
password, instead of ``password_env``) and ``ca_file`` (PEM CA certificates
trusted for this server instead of the system's: a self-hosted server with
its own CA; certificates are always checked, host name included).

Every section and key is optional except ``imap.host``, ``imap.username``,
``imap.password_env`` or ``imap.password_file`` (when there is an ``imap``
section with password login) and ``smtp.host`` (when there is an ``smtp``
section). Passwords are never written in the file: ``password_env`` names the
environment variable holding them, ``password_file`` a file only the operator
may read; both are read when the file is loaded. Relative paths are resolved against the file's directory.

Without a file the built-in default is used: moderator
``moderator@pbem.localhost``, ``games_dir: games`` and the local Maildirs
``mail/inbox`` and ``mail/outbox``, relative to the current directory.

Importing this module is cheap: PyYAML is imported when a file is loaded, and a
transport's module (imapclient for IMAP, aiosmtplib and asyncio for SMTP) when
that transport is opened or probed.
"""

from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass, field
from email.headerregistry import Address
from email.errors import HeaderParseError
from pathlib import Path
from typing import Any, Mapping

from .mail.oauth import MICROSOFT_AUTHORITY, PROVIDERS, OAuthError, OAuthSettings, TokenSource, read_private_file
from .mail.transport.base import SECURITY_MODES, Inbox, Outbox

__all__ = [
    "CONFIG_FILENAME",
    "DEFAULT_ADDRESS",
    "DEFAULT_NAME",
    "Config",
    "ConfigError",
    "ImapConfig",
    "OAuthSettings",
    "SmtpConfig",
    "load_config",
]

#: The file looked for in the current directory when no path is given.
CONFIG_FILENAME = "pbem.yaml"
DEFAULT_ADDRESS = "moderator@pbem.localhost"
DEFAULT_NAME = "Union Pacific moderator"

_DEFAULT_PORTS = {
    "imap": {"ssl": 993, "starttls": 143, "none": 143},
    "smtp": {"ssl": 465, "starttls": 587, "none": 25},
}


class ConfigError(ValueError):
    """The configuration is missing, unreadable or wrong.

    The message names the file and the offending key (e.g. ``imap.security``).
    """


AUTH_MODES = ("password", "oauth2")


class _Server:
    """What the IMAP and SMTP settings share: TLS trust and the login kind."""

    ca_file: Path | None
    auth: str
    oauth: OAuthSettings | None
    username: str | None

    @property
    def secret_source(self) -> str:
        """Where the login secret comes from, for messages: ``$VAR``, the
        password file's path or the OAuth2 token file's."""
        if self.auth == "oauth2" and self.oauth is not None:
            return f"the OAuth2 token file {self.oauth.token_file}"
        if getattr(self, "password_file", None) is not None:
            return f"the password file {self.password_file}"
        return f"${self.password_env}"

    def ssl_context(self):
        """The client TLS context: the system's trusted CAs, or only those of
        ``ca_file``; host names always checked. Raises ConfigError when the CA
        file cannot be loaded."""
        import ssl

        try:
            return ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"ca_file {self.ca_file}: cannot be loaded as PEM CA "
                              f"certificates: {exc}") from None

    def token_source(self) -> TokenSource | None:
        """The access-token source for ``auth: oauth2``, else None."""
        if self.auth != "oauth2" or self.oauth is None:
            return None
        return TokenSource(self.oauth, self.username)

    def keywords(self) -> dict[str, Any]:
        """The keyword arguments of the transport and its ``probe``:
        ``{"ssl_context": SSLContext | None, "oauth2": TokenSource | None}``; no
        TLS context for ``security: none`` (none is used: loading the trusted
        CAs costs about 25 ms of CPU, twice a cycle)."""
        context = None if getattr(self, "security", None) == "none" else self.ssl_context()
        return {"ssl_context": context, "oauth2": self.token_source()}


@dataclass(frozen=True)
class ImapConfig(_Server):
    """Where incoming mail is read (the arguments of :class:`ImapInbox`).

    ``password`` is None with ``auth == "oauth2"`` (the token comes from
    ``oauth``, see :meth:`keywords`)."""

    host: str
    port: int
    security: str
    username: str
    password: str | None = field(repr=False)
    password_env: str | None
    mailbox: str = "INBOX"
    processed: str = "Processed"
    ignored: str = "Ignored"
    timeout: float = 30
    password_file: Path | None = None
    ca_file: Path | None = None
    auth: str = "password"
    oauth: OAuthSettings | None = None

    def arguments(self) -> tuple:
        """The positional arguments of :class:`ImapInbox` and its ``probe``:
        ``(host, port, username, password, security, mailbox, processed,
        ignored, timeout)``."""
        return (self.host, self.port, self.username, self.password, self.security,
                self.mailbox, self.processed, self.ignored, self.timeout)


@dataclass(frozen=True)
class SmtpConfig(_Server):
    """Where outgoing mail is submitted (the arguments of :class:`SmtpOutbox`).

    ``username``/``password``/``password_env`` are all None for a server
    that needs no login; ``password`` is None with ``auth == "oauth2"``.
    ``daily_limit``: at most this many mails are submitted per UTC day (None:
    no limit), e.g. 500 for Gmail; the rest wait in the spool for the next day.
    """

    host: str
    port: int
    security: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    password_env: str | None = None
    timeout: float = 30
    password_file: Path | None = None
    ca_file: Path | None = None
    auth: str = "password"
    oauth: OAuthSettings | None = None
    daily_limit: int | None = None

    def arguments(self) -> tuple:
        """The positional arguments of :class:`SmtpOutbox` and its ``probe``:
        ``(host, port, username, password, security, timeout)``."""
        return (self.host, self.port, self.username, self.password, self.security,
                self.timeout)


@dataclass
class Config:
    """The loaded configuration.

    - ``moderator_address``/``moderator_name``: the moderator's mailbox, used
      as ``From`` of everything it sends (see :attr:`moderator`).
    - ``games_dir``: absolute path of the directory holding the games.
    - ``imap``/``smtp``: the servers, or None to use the local Maildirs.
    - ``maildir_inbox``/``maildir_outbox``: absolute paths of the local
      Maildirs (always set; used when ``imap``/``smtp`` is None).
    - ``source``: the file it was loaded from, None for the default.
    """

    moderator_address: str = DEFAULT_ADDRESS
    moderator_name: str = DEFAULT_NAME
    games_dir: Path = field(default_factory=lambda: Path.cwd() / "games")
    imap: ImapConfig | None = None
    smtp: SmtpConfig | None = None
    maildir_inbox: Path = field(default_factory=lambda: Path.cwd() / "mail" / "inbox")
    maildir_outbox: Path = field(default_factory=lambda: Path.cwd() / "mail" / "outbox")
    source: Path | None = None
    spool_dir: Path = field(default_factory=lambda: Path.cwd() / "spool")
    operator: str | None = None
    outage_after: float = 86400
    max_size: int = 256 * 1024
    max_replies_per_sender: int = 10
    archive_show_addresses: bool = False  # archive.show_addresses: players' addresses on the archive site
    archive_language: str = "en"  # archive.language: the language of the archive's index and statistics
    oauth: OAuthSettings | None = None  # the oauth section (auth: oauth2 servers use it)
    unsubscribe_url: str | None = None
    """The HTTPS address of the operator's one-click unsubscribe hook (RFC 8058):
    digests and pool offers then carry ``<URL?t=TOKEN>`` and
    ``List-Unsubscribe-Post``; the hook calls ``pbem unsubscribe TOKEN``.
    None: the ``mailto`` URI only (``mail/unsubscribe.py``)."""

    @property
    def moderator(self) -> Address:
        """The moderator as an :class:`email.headerregistry.Address`;
        ``str()`` of it is a ready ``From`` value."""
        return Address(display_name=self.moderator_name, addr_spec=self.moderator_address)

    def open_inbox(self) -> Inbox:
        """An :class:`ImapInbox` when ``imap`` is configured, else a
        :class:`MaildirInbox` on ``maildir_inbox``.

        Raises TransportError when the server or directory cannot be reached.
        """
        if self.imap is not None:
            from .mail.transport.imap import ImapInbox

            return ImapInbox(*self.imap.arguments(), max_size=self.max_size,
                             **self.imap.keywords())
        from .mail.transport.maildir import MaildirInbox

        return MaildirInbox(self.maildir_inbox, max_size=self.max_size)

    def open_outbox(self) -> Outbox:
        """An :class:`SmtpOutbox` when ``smtp`` is configured, else a
        :class:`MaildirOutbox` on ``maildir_outbox``.

        Raises TransportError when the directory cannot be created (SMTP
        connects only when sending).
        """
        if self.smtp is not None:
            from .mail.transport.smtp import SmtpOutbox

            return SmtpOutbox(*self.smtp.arguments(), **self.smtp.keywords())
        from .mail.transport.maildir import MaildirOutbox

        return MaildirOutbox(self.maildir_outbox)

    def probe_inbox(self) -> dict[str, Any]:
        """What the configured inbox looks like, changing nothing:
        :meth:`ImapInbox.probe <moderator.mail.transport.imap.ImapInbox.probe>`
        when ``imap`` is configured, else :meth:`MaildirInbox.probe
        <moderator.mail.transport.maildir.MaildirInbox.probe>` on
        ``maildir_inbox`` (the dict shapes are documented there).

        Raises LoginRefused or TransportError as those do.
        """
        if self.imap is not None:
            from .mail.transport.imap import ImapInbox

            return ImapInbox.probe(*self.imap.arguments(), **self.imap.keywords())
        from .mail.transport.maildir import MaildirInbox

        return MaildirInbox.probe(self.maildir_inbox)

    def probe_outbox(self) -> dict[str, Any]:
        """What the configured outbox looks like, sending nothing:
        :meth:`SmtpOutbox.probe <moderator.mail.transport.smtp.SmtpOutbox.probe>`
        when ``smtp`` is configured, else :meth:`MaildirOutbox.probe
        <moderator.mail.transport.maildir.MaildirOutbox.probe>` on
        ``maildir_outbox``.

        Raises LoginRefused or TransportError as those do.
        """
        if self.smtp is not None:
            from .mail.transport.smtp import SmtpOutbox

            return SmtpOutbox.probe(*self.smtp.arguments(), **self.smtp.keywords())
        from .mail.transport.maildir import MaildirOutbox

        return MaildirOutbox.probe(self.maildir_outbox)


_PASSWORDS: contextvars.ContextVar[bool] = contextvars.ContextVar("pbem_passwords", default=True)
"""Whether ``load_config`` requires the password variables to be set."""


def load_config(path: str | os.PathLike[str] | None = None, passwords: bool = True) -> Config:
    """Load the configuration.

    ``path`` None means ``./pbem.yaml`` if that file exists, else the
    built-in default (relative paths against the current directory).
    Passwords are read from the environment variables named by
    ``password_env`` now; with ``passwords`` False an unset variable gives the
    password ``None`` instead of an error (``pbem doctor``, ``show``, ``replay``
    and the other commands that need no mail server).

    Raises ConfigError for a missing or unreadable file, invalid YAML, a
    top level or section that is not a mapping, an unknown key, a wrong
    type or value (security, port, address), a missing required key, an
    unset password environment variable, a password file that is missing or
    readable by others (the message gives the ``chmod`` to run), a CA file
    that does not load, or ``auth: oauth2`` without an ``oauth`` section.
    """
    import yaml

    if path is None:
        candidate = Path.cwd() / CONFIG_FILENAME
        if not candidate.is_file():
            return Config()
        path = candidate
    path = Path(path).expanduser().absolute()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration file: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from None
    if data is None:
        data = {}
    token = _PASSWORDS.set(passwords)
    try:
        return _build(data, path)
    finally:
        _PASSWORDS.reset(token)


class _Reader:
    """Typed access to one mapping of the file, with key-naming errors."""

    def __init__(self, path: Path, data: Any, prefix: str) -> None:
        self.path = path
        self.prefix = prefix
        if not isinstance(data, Mapping):
            where = f"{prefix!r}" if prefix else "the top level"
            raise ConfigError(f"{path}: {where} must be a mapping, "
                              f"not {type(data).__name__}")
        self.data = dict(data)

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def error(self, name: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.path}: {self.key(name)}: {problem}")

    def check_keys(self, allowed: tuple[str, ...]) -> None:
        for name in self.data:
            if name not in allowed:
                raise self.error(repr(name) if not isinstance(name, str) else name, f"unknown key (known: {', '.join(allowed)})")

    def text(self, name: str, default: str | None = None, required: bool = False) -> str | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise self.error(name, "is required")
            return default
        if not isinstance(value, str) or not value.strip():
            raise self.error(name, f"must be a non-empty string, not {value!r}")
        return value.strip()

    def number(self, name: str, default: float) -> float:
        value = self.data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise self.error(name, f"must be a positive number, not {value!r}")
        return value

    def port(self, name: str, default: int) -> int:
        value = self.data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
            raise self.error(name, f"must be a port number 1-65535, not {value!r}")
        return value

    def security(self, name: str) -> str:
        value = self.data.get(name, "ssl")
        if value not in SECURITY_MODES:
            raise self.error(name, f"must be one of {', '.join(SECURITY_MODES)}, not {value!r}")
        return value

    def path_value(self, name: str, default: str, base: Path) -> Path:
        value = self.text(name, default)
        return (base / Path(value).expanduser()).resolve()

    def password(self, name: str) -> tuple[str, str]:
        env = self.text(name, required=True)
        value = os.environ.get(env)
        if value is None and _PASSWORDS.get():
            raise self.error(name, f"environment variable {env} is not set")
        return env, value

    def secret(self, base: Path, required: bool) -> tuple[str | None, Path | None, str | None]:
        """``(password_env, password_file, password)`` from ``password_env``
        or ``password_file`` (exactly one; neither when not ``required``)."""
        has_env = self.data.get("password_env") is not None
        has_file = self.data.get("password_file") is not None
        if has_env and has_file:
            raise self.error("password_file", "give password_env or password_file, not both")
        if has_file:
            path = self.path_value("password_file", "", base)
            try:
                value = read_private_file(path, "the password file")
            except OAuthError as exc:
                raise self.error("password_file", str(exc)) from None
            value = value.rstrip("\r\n")
            if not value:
                raise self.error("password_file", f"{path} is empty")
            return None, path, value
        if has_env or required:
            env, value = self.password("password_env")
            return env, None, value
        return None, None, None

    def ca_file(self, base: Path) -> Path | None:
        if self.data.get("ca_file") is None:
            return None
        path = self.path_value("ca_file", "", base)
        import ssl

        try:
            ssl.create_default_context(cafile=str(path))
        except (OSError, ssl.SSLError) as exc:
            raise self.error("ca_file", f"{path} cannot be loaded as PEM CA certificates: "
                                        f"{getattr(exc, 'strerror', None) or exc}") from None
        return path

    def auth(self, oauth: OAuthSettings | None) -> str:
        value = self.data.get("auth", "password")
        if value not in AUTH_MODES:
            raise self.error("auth", f"must be one of {', '.join(AUTH_MODES)}, not {value!r}")
        if value == "oauth2":
            if oauth is None:
                raise self.error("auth", "oauth2 needs an oauth section (provider, client_id, "
                                         "token_file)")
            for name in ("password_env", "password_file"):
                if self.data.get(name) is not None:
                    raise self.error(name, "not used with auth: oauth2 (the token file is)")
        return value


def _oauth(path: Path, data: Any) -> OAuthSettings:
    r = _Reader(path, data, "oauth")
    r.check_keys(("provider", "client_id", "client_secret", "tenant", "token_file",
                  "authority", "token_uri", "device_uri", "auth_uri", "scopes", "ca_file"))
    provider = r.text("provider", required=True)
    if provider not in PROVIDERS:
        raise r.error("provider", f"must be one of {', '.join(PROVIDERS)}, not {provider!r}")
    scopes = r.data.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(x, str) and x for x in scopes):
        raise r.error("scopes", f"must be a list of scope strings, not {scopes!r}")
    if provider == "google":
        r.text("client_secret", required=True)
    if provider == "generic":
        r.text("token_uri", required=True)
        r.text("device_uri", required=True)
    for name in ("authority", "token_uri", "device_uri", "auth_uri"):
        value = r.text(name)
        if value is not None and not value.startswith("https://"):
            raise r.error(name, f"must be an https:// URL, not {value!r}")
    base = path.parent
    return OAuthSettings(
        provider=provider,
        client_id=r.text("client_id", required=True),
        client_secret=r.text("client_secret"),
        tenant=r.text("tenant", "common"),
        token_file=r.path_value("token_file", "oauth-token.json", base),
        authority=r.text("authority", MICROSOFT_AUTHORITY),
        token_uri=r.text("token_uri"),
        device_uri=r.text("device_uri"),
        auth_uri=r.text("auth_uri"),
        scopes=tuple(scopes),
        ca_file=r.ca_file(base),
    )


def _build(data: Any, path: Path) -> Config:
    base = path.parent
    top = _Reader(path, data, "")
    top.check_keys(("moderator", "games_dir", "imap", "smtp", "maildir", "spool_dir",
                    "operator", "outage_after", "max_size", "max_replies_per_sender", "archive",
                    "oauth", "unsubscribe_url"))
    oauth = _oauth(path, top.data["oauth"]) if top.data.get("oauth") is not None else None

    address, name = DEFAULT_ADDRESS, DEFAULT_NAME
    if top.data.get("moderator") is not None:
        mod = _Reader(path, top.data["moderator"], "moderator")
        mod.check_keys(("address", "name"))
        address = mod.text("address", DEFAULT_ADDRESS)
        name = mod.text("name", DEFAULT_NAME)
        try:
            parsed = Address(addr_spec=address)
        except (HeaderParseError, ValueError, IndexError) as exc:
            raise mod.error("address", f"not an e-mail address: {address!r} ({exc})") from None
        if not parsed.username or not parsed.domain:
            raise mod.error("address", f"not an e-mail address: {address!r}")

    games_dir = top.path_value("games_dir", "games", base)
    spool_dir = top.path_value("spool_dir", "spool", base)
    operator = top.text("operator", None)
    if operator is not None and "@" not in operator:
        raise top.error("operator", f"not an e-mail address: {operator!r}")
    outage_after = top.number("outage_after", 86400)
    max_size = int(top.number("max_size", 256 * 1024))
    max_replies = int(top.number("max_replies_per_sender", 10))
    unsubscribe_url = top.text("unsubscribe_url", None)
    if unsubscribe_url is not None:
        from urllib.parse import urlsplit

        parts = urlsplit(unsubscribe_url)
        if parts.scheme != "https" or not parts.netloc or parts.fragment:
            raise top.error("unsubscribe_url", f"must be an https:// URL without a #fragment (RFC 8058 "
                                               f"one-click unsubscribe), not {unsubscribe_url!r}")

    imap = None
    if top.data.get("imap") is not None:
        r = _Reader(path, top.data["imap"], "imap")
        r.check_keys(("host", "port", "security", "username", "password_env", "mailbox",
                      "processed", "ignored", "timeout", "password_file", "ca_file", "auth"))
        host = r.text("host", required=True)
        security = r.security("security")
        port = r.port("port", _DEFAULT_PORTS["imap"][security])
        username = r.text("username", required=True)
        auth = r.auth(oauth)
        env = password_file = password = None
        if auth == "password":
            env, password_file, password = r.secret(base, required=True)
        imap = ImapConfig(
            host=host, port=port, security=security, username=username,
            password=password, password_env=env,
            mailbox=r.text("mailbox", "INBOX"),
            processed=r.text("processed", "Processed"),
            ignored=r.text("ignored", "Ignored"),
            timeout=r.number("timeout", 30),
            password_file=password_file, ca_file=r.ca_file(base), auth=auth,
            oauth=oauth if auth == "oauth2" else None,
        )

    smtp = None
    if top.data.get("smtp") is not None:
        r = _Reader(path, top.data["smtp"], "smtp")
        r.check_keys(("host", "port", "security", "username", "password_env", "timeout",
                      "password_file", "ca_file", "auth", "daily_limit"))
        host = r.text("host", required=True)
        security = r.security("security")
        port = r.port("port", _DEFAULT_PORTS["smtp"][security])
        username = r.text("username")
        auth = r.auth(oauth)
        env = password_file = password = None
        if username is None:
            for name in ("password_env", "password_file"):
                if r.data.get(name) is not None:
                    raise r.error(name, "given without smtp.username")
            if auth == "oauth2":
                raise r.error("auth", "oauth2 needs smtp.username (the account that logs in)")
        elif auth == "password":
            env, password_file, password = r.secret(base, required=True)
        daily_limit = None
        if r.data.get("daily_limit") is not None:
            daily_limit = r.data["daily_limit"]
            if isinstance(daily_limit, bool) or not isinstance(daily_limit, int) or daily_limit < 1:
                raise r.error("daily_limit", f"must be a whole number of mails per day, "
                                             f"at least 1, not {daily_limit!r}")
        smtp = SmtpConfig(host=host, port=port, security=security, username=username,
                          password=password, password_env=env,
                          timeout=r.number("timeout", 30),
                          password_file=password_file, ca_file=r.ca_file(base), auth=auth,
                          oauth=oauth if auth == "oauth2" else None, daily_limit=daily_limit)

    show_addresses = False
    archive_language = "en"
    if top.data.get("archive") is not None:
        a = _Reader(path, top.data["archive"], "archive")
        a.check_keys(("show_addresses", "language"))
        value = a.data.get("show_addresses", False)
        if not isinstance(value, bool):
            raise a.error("show_addresses", f"must be true or false, not {value!r}")
        show_addresses = value
        if a.data.get("language") is not None:
            from .i18n import LANGUAGES, normalize

            archive_language = normalize(str(a.data["language"])) or ""
            if not archive_language:
                raise a.error("language", f"must be one of {', '.join(LANGUAGES)}, not {a.data['language']!r}")

    inbox, outbox = "mail/inbox", "mail/outbox"
    maildir = top.data.get("maildir")
    if maildir is not None:
        m = _Reader(path, maildir, "maildir")
        m.check_keys(("inbox", "outbox"))
        inbox = m.text("inbox", inbox)
        outbox = m.text("outbox", outbox)
    return Config(
        moderator_address=address,
        moderator_name=name,
        games_dir=games_dir,
        imap=imap,
        smtp=smtp,
        maildir_inbox=(base / Path(inbox).expanduser()).resolve(),
        maildir_outbox=(base / Path(outbox).expanduser()).resolve(),
        source=path,
        spool_dir=spool_dir,
        operator=operator,
        outage_after=outage_after,
        max_size=max_size,
        max_replies_per_sender=max_replies,
        archive_show_addresses=show_addresses,
        archive_language=archive_language,
        oauth=oauth,
        unsubscribe_url=unsubscribe_url,
    )
