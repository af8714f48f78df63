"""The moderator's configuration: who it is, where games live, how mail moves.

A YAML file (see ``docs/pbem.example.yaml``) shaped like::

    moderator: {address: moderator@example.org, name: Union Pacific moderator}
    games_dir: games
    imap: {host: imap.example.org, port: 993, security: ssl, username: up@example.org,
           password_env: PBEM_IMAP_PASSWORD, mailbox: INBOX, processed: Processed,
           ignored: Ignored}
    smtp: {host: smtp.example.org, port: 465, security: ssl, username: up@example.org,
           password_env: PBEM_SMTP_PASSWORD}
    maildir: {inbox: mail/inbox, outbox: mail/outbox}

Every section and key is optional except ``imap.host``, ``imap.username``,
``imap.password_env`` (when there is an ``imap`` section) and ``smtp.host``
(when there is an ``smtp`` section). Passwords are never written in the file:
``password_env`` names the environment variable holding them, read when the
file is loaded. Relative paths are resolved against the file's directory.

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

from .mail.transport.base import SECURITY_MODES, Inbox, Outbox

__all__ = [
    "CONFIG_FILENAME",
    "DEFAULT_ADDRESS",
    "DEFAULT_NAME",
    "Config",
    "ConfigError",
    "ImapConfig",
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


@dataclass(frozen=True)
class ImapConfig:
    """Where incoming mail is read (the arguments of :class:`ImapInbox`)."""

    host: str
    port: int
    security: str
    username: str
    password: str = field(repr=False)
    password_env: str
    mailbox: str = "INBOX"
    processed: str = "Processed"
    ignored: str = "Ignored"
    timeout: float = 30

    def arguments(self) -> tuple:
        """The positional arguments of :class:`ImapInbox` and its ``probe``:
        ``(host, port, username, password, security, mailbox, processed,
        ignored, timeout)``."""
        return (self.host, self.port, self.username, self.password, self.security,
                self.mailbox, self.processed, self.ignored, self.timeout)


@dataclass(frozen=True)
class SmtpConfig:
    """Where outgoing mail is submitted (the arguments of :class:`SmtpOutbox`).

    ``username``/``password``/``password_env`` are all None for a server
    that needs no login.
    """

    host: str
    port: int
    security: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    password_env: str | None = None
    timeout: float = 30

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

            return ImapInbox(*self.imap.arguments(), max_size=self.max_size)
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

            return SmtpOutbox(*self.smtp.arguments())
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

            return ImapInbox.probe(*self.imap.arguments())
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

            return SmtpOutbox.probe(*self.smtp.arguments())
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
    type or value (security, port, address), a missing required key, or an
    unset password environment variable.
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


def _build(data: Any, path: Path) -> Config:
    base = path.parent
    top = _Reader(path, data, "")
    top.check_keys(("moderator", "games_dir", "imap", "smtp", "maildir", "spool_dir",
                    "operator", "outage_after", "max_size", "max_replies_per_sender", "archive"))

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

    imap = None
    if top.data.get("imap") is not None:
        r = _Reader(path, top.data["imap"], "imap")
        r.check_keys(("host", "port", "security", "username", "password_env", "mailbox",
                      "processed", "ignored", "timeout"))
        host = r.text("host", required=True)
        security = r.security("security")
        port = r.port("port", _DEFAULT_PORTS["imap"][security])
        username = r.text("username", required=True)
        env, password = r.password("password_env")
        imap = ImapConfig(
            host=host, port=port, security=security, username=username,
            password=password, password_env=env,
            mailbox=r.text("mailbox", "INBOX"),
            processed=r.text("processed", "Processed"),
            ignored=r.text("ignored", "Ignored"),
            timeout=r.number("timeout", 30),
        )

    smtp = None
    if top.data.get("smtp") is not None:
        r = _Reader(path, top.data["smtp"], "smtp")
        r.check_keys(("host", "port", "security", "username", "password_env", "timeout"))
        host = r.text("host", required=True)
        security = r.security("security")
        port = r.port("port", _DEFAULT_PORTS["smtp"][security])
        username = r.text("username")
        env = password = None
        if username is not None:
            env, password = r.password("password_env")
        elif r.data.get("password_env") is not None:
            raise r.error("password_env", "given without smtp.username")
        smtp = SmtpConfig(host=host, port=port, security=security, username=username,
                          password=password, password_env=env,
                          timeout=r.number("timeout", 30))

    show_addresses = False
    if top.data.get("archive") is not None:
        a = _Reader(path, top.data["archive"], "archive")
        a.check_keys(("show_addresses",))
        value = a.data.get("show_addresses", False)
        if not isinstance(value, bool):
            raise a.error("show_addresses", f"must be true or false, not {value!r}")
        show_addresses = value

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
    )
