"""Mail transports: where the moderator reads orders from and sends mail to.

Two kinds of object live here:

*Inboxes* hand out the mails currently waiting and, once the caller has dealt
with one, move it out of the way:

- :class:`MaildirInbox` reads a local Maildir (what the local demo uses);
- :class:`ImapInbox` reads a folder of an IMAP account.

*Outboxes* send :class:`email.message.EmailMessage` objects:

- :class:`MaildirOutbox` writes them into a local Maildir (the demo's "sent" mails);
- :class:`SmtpOutbox` submits them to an SMTP server.

Every failure to reach, log in to or talk to a mail store or server is raised
as :class:`TransportError`; asking for a message key that the inbox does not
hold raises :class:`KeyError`.

The envelope of an outgoing mail is taken from its headers: the envelope
sender is the single ``From`` address, the recipients are the ``To`` and
``Cc`` addresses (``Bcc`` is not used, and aiosmtplib strips it from what is
sent).
"""

from __future__ import annotations

import abc

import asyncio
import email.policy
import email.utils
import mailbox
import os
import re
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Iterable, Sequence

import aiosmtplib
import imapclient
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

__all__ = [
    "SECURITY_MODES",
    "InboundMail",
    "TransportError",
    "Inbox",
    "Outbox",
    "MaildirInbox",
    "ImapInbox",
    "MaildirOutbox",
    "SmtpOutbox",
    "envelope_of",
]

#: The accepted values of the ``security`` argument of IMAP and SMTP transports:
#: ``"ssl"`` (implicit TLS from the first byte, ports 993/465), ``"starttls"``
#: (plain connection upgraded with STARTTLS, ports 143/587) and ``"none"``
#: (no encryption at all; only sensible on loopback or in tests).
SECURITY_MODES = ("ssl", "starttls", "none")


@dataclass(frozen=True)
class InboundMail:
    """One mail waiting in an inbox.

    ``key`` is opaque to callers and is only good for passing back to the
    same inbox's :meth:`Inbox.mark_processed` / :meth:`Inbox.mark_ignored`
    (a Maildir key, or ``f"{uidvalidity}:{uid}"`` for IMAP).
    ``raw`` is the complete message exactly as stored (headers and body).
    """

    key: str
    raw: bytes


class TransportError(Exception):
    """A mail store or server could not be reached, logged in to, or talked to.

    The message names the host and port (or the path) and what failed.
    ``host``, ``port`` and ``path`` say where (``None`` when not applicable);
    ``code`` is the SMTP reply code (e.g. 450, 550) when the failure came
    with one, else ``None``: a ``4xx`` code is a temporary failure worth
    retrying later, a ``5xx`` one is permanent.
    """

    def __init__(
        self,
        message: str,
        *,
        host: str | None = None,
        port: int | None = None,
        path: str | None = None,
        code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.host = host
        self.port = port
        self.path = path
        self.code = code

    @property
    def temporary(self) -> bool:
        """True when the server answered with a 4xx (try again later) code."""
        return self.code is not None and 400 <= self.code < 500


def _check_security(security: str) -> str:
    if security not in SECURITY_MODES:
        raise ValueError(
            f"security must be one of {', '.join(SECURITY_MODES)}, not {security!r}"
        )
    return security


def _describe(exc: BaseException) -> str:
    """A one-line description of a library exception for an error message."""
    text = str(exc).strip()
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def envelope_of(msg: EmailMessage) -> tuple[str, list[str]]:
    """The SMTP envelope of ``msg``: ``(sender, recipients)``.

    ``sender`` is the address of the one ``From`` header; ``recipients`` are
    the addresses of all ``To`` and ``Cc`` headers, in header order, without
    duplicates (compared case-insensitively).

    Raises ValueError when there is no single ``From`` address or no
    recipient at all.
    """
    senders = [addr for _, addr in email.utils.getaddresses(msg.get_all("From", []))]
    senders = [addr for addr in senders if addr]
    if len(senders) != 1:
        raise ValueError(
            f"message must have exactly one From address, has {len(senders)}"
        )
    recipients: list[str] = []
    seen: set[str] = set()
    fields = list(msg.get_all("To", [])) + list(msg.get_all("Cc", []))
    for _, addr in email.utils.getaddresses(fields):
        if addr and addr.lower() not in seen:
            seen.add(addr.lower())
            recipients.append(addr)
    if not recipients:
        raise ValueError("message has no To or Cc address")
    return senders[0], recipients


def _maildir_bytes(msg: EmailMessage) -> bytes:
    """``msg`` serialised with ``\\n`` line ends, as stored in a Maildir."""
    policy = getattr(msg, "policy", None) or email.policy.default
    return msg.as_bytes(policy=policy.clone(linesep="\n"))


# --------------------------------------------------------------------------
# Base classes
# --------------------------------------------------------------------------


class Inbox(abc.ABC):
    """Where incoming mail waits; subclasses are the concrete stores.

    Use as a context manager (``with MaildirInbox(...) as inbox:``) or call
    :meth:`close` when done.
    """

    @abc.abstractmethod
    def fetch(self) -> list[InboundMail]:
        """All mails currently in the inbox, oldest first.

        Fetching does not change the mails (nothing is marked seen); a mail
        stays in the inbox, and comes back from the next fetch, until it is
        moved away with :meth:`mark_processed` or :meth:`mark_ignored`.

        Raises TransportError when the store cannot be read.
        """

    @abc.abstractmethod
    def mark_processed(self, key: str) -> None:
        """Move the mail with ``key`` into the "processed" folder.

        Raises KeyError when the inbox holds no mail with that key (any
        more), TransportError when the store cannot be changed.
        """

    @abc.abstractmethod
    def mark_ignored(self, key: str) -> None:
        """Move the mail with ``key`` into the "ignored" folder.

        Raises KeyError when the inbox holds no mail with that key (any
        more), TransportError when the store cannot be changed.
        """

    def close(self) -> None:
        """Release the store (log out, close files). Calling it twice is fine."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class Outbox(abc.ABC):
    """Where outgoing mail goes; subclasses are the concrete transports.

    Use as a context manager or call :meth:`close` when done.
    """

    @abc.abstractmethod
    def send(self, msg: EmailMessage) -> None:
        """Send one message; its envelope comes from :func:`envelope_of`.

        Raises ValueError when the message has no usable From/To/Cc
        addresses, TransportError when it could not be sent.
        """

    def send_many(self, msgs: Iterable[EmailMessage]) -> list[Exception | None]:
        """Send several messages, carrying on past individual failures.

        Returns one entry per message, in order: ``None`` when it was sent,
        else the exception that :meth:`send` would have raised for it
        (ValueError or TransportError).
        """
        results: list[Exception | None] = []
        for msg in msgs:
            try:
                self.send(msg)
            except (ValueError, TransportError) as exc:
                results.append(exc)
            else:
                results.append(None)
        return results

    def close(self) -> None:
        """Release the transport. Calling it twice is fine."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


# --------------------------------------------------------------------------
# Maildir
# --------------------------------------------------------------------------

_MAILDIR_NAME = re.compile(r"^(\d+)\.([^.]*)")


def _open_maildir(path: Path) -> mailbox.Maildir:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return mailbox.Maildir(str(path), factory=None, create=True)
    except OSError as exc:
        raise TransportError(
            f"cannot open Maildir {path}: {_describe(exc)}", path=str(path)
        ) from exc


def _check_folder_name(name: str, what: str) -> str:
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"{what} folder name must be non-empty, without '/' "
                         f"and not start with '.': {name!r}")
    return name


class MaildirInbox(Inbox):
    """An inbox that is a local Maildir (``new/``, ``cur/``, ``tmp/``).

    ``MaildirInbox(path, processed="processed", ignored="ignored")``

    The directory (and its parents) is created if missing. The processed and
    ignored folders are Maildir++ sub-folders of the inbox, made with
    :meth:`mailbox.Maildir.add_folder`: ``PATH/.processed`` and
    ``PATH/.ignored`` (each a Maildir with a ``maildirfolder`` marker), the
    layout Dovecot and Courier use, so a mail client pointed at ``PATH``
    shows them as folders.

    Keys are Maildir unique names. :meth:`fetch` returns mails ordered by
    the delivery time encoded in their file names (seconds, then
    microseconds, then the delivery counter); a file name not in the
    ``SECONDS.UNIQUE.HOST`` form is placed by its modification time.
    Moving renames the file into the folder (same sub-directory, same name,
    flags kept), which is atomic on one file system.

    Raises TransportError when the Maildir cannot be created or opened,
    ValueError for a bad folder name.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        processed: str = "processed",
        ignored: str = "ignored",
    ) -> None:
        self.path = Path(path)
        _check_folder_name(processed, "processed")
        _check_folder_name(ignored, "ignored")
        box = _open_maildir(self.path)
        #: The Maildir++ folders the mails are moved to.
        self.processed_path = self.path / f".{processed}"
        self.ignored_path = self.path / f".{ignored}"
        try:
            box.add_folder(processed)
            box.add_folder(ignored)
        except OSError as exc:
            raise TransportError(
                f"cannot create folders in Maildir {self.path}: {_describe(exc)}",
                path=str(self.path),
            ) from exc
        self._colon = box.colon

    def _order(self, key: str) -> tuple:
        match = _MAILDIR_NAME.match(key)
        if match:
            unique = match.group(2)
            micro = re.search(r"M(\d+)", unique)
            count = re.search(r"Q(\d+)", unique)
            return (
                float(match.group(1)),
                int(micro.group(1)) if micro else 0,
                int(count.group(1)) if count else 0,
                key,
            )
        try:
            subdir, name = self._locate(key)
            mtime = os.path.getmtime(self.path / subdir / name)
        except (KeyError, OSError):
            mtime = 0.0
        return (mtime, 0, 0, key)

    def fetch(self) -> list[InboundMail]:
        """All mails in ``new/`` and ``cur/``, oldest first (see the class doc).

        Raises TransportError when the Maildir cannot be read.
        """
        try:
            # A fresh Maildir object always re-reads the directories; a kept
            # one may miss deliveries that land in the same mtime tick.
            box = mailbox.Maildir(str(self.path), factory=None, create=False)
            keys = sorted(box.keys(), key=self._order)
        except (OSError, mailbox.Error) as exc:
            raise TransportError(
                f"cannot read Maildir {self.path}: {_describe(exc)}", path=str(self.path)
            ) from exc
        mails = []
        for key in keys:
            try:
                raw = box.get_bytes(key)
            except (KeyError, FileNotFoundError):
                continue  # moved away by someone else since the listing
            except OSError as exc:
                raise TransportError(
                    f"cannot read mail {key} in {self.path}: {_describe(exc)}",
                    path=str(self.path),
                ) from exc
            mails.append(InboundMail(key=key, raw=raw))
        return mails

    def _locate(self, key: str) -> tuple[str, str]:
        """``(subdir, filename)`` of the mail with ``key``; KeyError if none."""
        if not key or "/" in key or self._colon in key or key.startswith("."):
            raise KeyError(key)
        if (self.path / "new" / key).is_file():
            return "new", key
        try:
            with os.scandir(self.path / "cur") as entries:
                for entry in entries:
                    if entry.name.split(self._colon)[0] == key and entry.is_file():
                        return "cur", entry.name
        except OSError as exc:
            raise TransportError(
                f"cannot read Maildir {self.path}: {_describe(exc)}", path=str(self.path)
            ) from exc
        raise KeyError(key)

    def _move(self, key: str, folder: Path) -> None:
        subdir, name = self._locate(key)
        try:
            os.rename(self.path / subdir / name, folder / subdir / name)
        except FileNotFoundError as exc:
            if not (self.path / subdir / name).exists():
                raise KeyError(key) from exc
            raise TransportError(
                f"cannot move {key} to {folder}: {_describe(exc)}", path=str(self.path)
            ) from exc
        except OSError as exc:
            raise TransportError(
                f"cannot move {key} to {folder}: {_describe(exc)}", path=str(self.path)
            ) from exc

    def mark_processed(self, key: str) -> None:
        """Move the mail into ``PATH/.processed`` (KeyError if not in the inbox)."""
        self._move(key, self.processed_path)

    def mark_ignored(self, key: str) -> None:
        """Move the mail into ``PATH/.ignored`` (KeyError if not in the inbox)."""
        self._move(key, self.ignored_path)

    def __repr__(self) -> str:
        return f"MaildirInbox({str(self.path)!r})"


class MaildirOutbox(Outbox):
    """An outbox that files each sent message into a local Maildir's ``new/``.

    ``MaildirOutbox(path)``; the directory (and its parents) is created if
    missing. Messages are stored with ``\\n`` line ends, serialised with
    their own policy; the file can be read back with :class:`MaildirInbox`
    or any mail reader. The envelope is checked as for SMTP (so a message
    that SMTP would refuse is refused here too) but is not stored.

    Raises TransportError when the Maildir cannot be created.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._box = _open_maildir(self.path)
        #: Maildir key of the message written by the last successful send().
        self.last_key: str | None = None

    def send(self, msg: EmailMessage) -> None:
        """Write ``msg`` into the Maildir.

        Raises ValueError for a message without a From or without To/Cc,
        TransportError when the file cannot be written.
        """
        envelope_of(msg)
        data = _maildir_bytes(msg)
        try:
            self.last_key = self._box.add(data)
        except OSError as exc:
            raise TransportError(
                f"cannot write to Maildir {self.path}: {_describe(exc)}",
                path=str(self.path),
            ) from exc

    def __repr__(self) -> str:
        return f"MaildirOutbox({str(self.path)!r})"


# --------------------------------------------------------------------------
# IMAP
# --------------------------------------------------------------------------

_IMAP_FETCH_BATCH = 200


class ImapInbox(Inbox):
    """An inbox that is one folder of an IMAP account (read with imapclient).

    ``ImapInbox(host, port, username, password, security="ssl",
    mailbox="INBOX", processed="Processed", ignored="Ignored", timeout=30,
    ssl_context=None)``

    - ``security``: ``"ssl"`` (implicit TLS), ``"starttls"`` or ``"none"``;
      ``ssl_context`` is used for TLS (default: the system's trusted CAs
      with host name checking).
    - ``timeout``: seconds for connecting and for each server reply.

    Connects and logs in at construction, selects ``mailbox`` read-write and
    creates (and subscribes) the ``processed`` and ``ignored`` folders when
    they are missing. Keys are ``f"{uidvalidity}:{uid}"``; :meth:`fetch`
    returns mails in UID order and uses ``BODY.PEEK[]`` so no flag changes.
    Moving uses ``UID MOVE`` when the server advertises MOVE, else ``UID
    COPY`` + ``\\Deleted`` + ``UID EXPUNGE`` (with UIDPLUS) or a plain
    ``EXPUNGE`` (which also removes any other mail flagged ``\\Deleted``).

    After the connection is lost an operation raises TransportError and the
    next one logs in again; :meth:`fetch` (which changes nothing) retries
    once on a fresh connection by itself.

    Raises TransportError when the server cannot be reached, TLS fails,
    login is refused or a folder cannot be selected or created;
    ValueError for a bad ``security``.
    """

    def __init__(
        self,
        host: str,
        port: int,
        username: str,
        password: str,
        security: str = "ssl",
        mailbox: str = "INBOX",
        processed: str = "Processed",
        ignored: str = "Ignored",
        timeout: float = 30,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.host = host
        self.port = int(port)
        self.username = username
        self._password = password
        self.security = _check_security(security)
        self.mailbox = mailbox
        self.processed = processed
        self.ignored = ignored
        self.timeout = timeout
        self._ssl_context = ssl_context
        self._client: imapclient.IMAPClient | None = None
        self.uidvalidity: int | None = None
        self._connect()

    # -- connection -------------------------------------------------------

    def _where(self) -> str:
        return f"IMAP {self.host}:{self.port}"

    def _error(self, what: str, exc: BaseException) -> TransportError:
        return TransportError(
            f"{self._where()}: {what} failed: {_describe(exc)}",
            host=self.host,
            port=self.port,
        )

    def _connect(self) -> imapclient.IMAPClient:
        step = "connect"
        client = None
        try:
            client = imapclient.IMAPClient(
                self.host,
                port=self.port,
                ssl=self.security == "ssl",
                ssl_context=self._ssl_context,
                timeout=self.timeout,
            )
            if self.security == "starttls":
                step = "STARTTLS"
                client.starttls(self._ssl_context)
            step = f"login as {self.username!r}"
            client.login(self.username, self._password)
            for folder in (self.processed, self.ignored):
                step = f"creating folder {folder!r}"
                if not client.folder_exists(folder):
                    try:
                        client.create_folder(folder)
                    except IMAPClientError:
                        if not client.folder_exists(folder):  # lost a race?
                            raise
                    try:
                        client.subscribe_folder(folder)
                    except IMAPClientError:
                        pass  # subscriptions are a convenience only
            step = f"selecting folder {self.mailbox!r}"
            self._select(client)
        except (IMAPClientError, OSError) as exc:
            if client is not None:
                _drop_imap(client)
            raise self._error(step, exc) from exc
        self._client = client
        return client

    def _select(self, client: imapclient.IMAPClient) -> None:
        info = client.select_folder(self.mailbox)
        self.uidvalidity = int(info[b"UIDVALIDITY"])

    def _connected(self) -> imapclient.IMAPClient:
        if self._client is None:
            return self._connect()
        return self._client

    def _lost(self) -> None:
        if self._client is not None:
            _drop_imap(self._client)
        self._client = None

    # -- inbox ------------------------------------------------------------

    def fetch(self) -> list[InboundMail]:
        """All mails in the folder in UID order, fetched with ``BODY.PEEK[]``.

        Raises TransportError when the server fails twice in a row (the
        second time on a fresh connection).
        """
        try:
            return self._fetch()
        except _ConnectionLost:
            return self._fetch(last_try=True)

    def _fetch(self, last_try: bool = False) -> list[InboundMail]:
        client = self._connected()
        try:
            self._select(client)
            uids = sorted(int(uid) for uid in client.search("ALL"))
            mails = []
            for start in range(0, len(uids), _IMAP_FETCH_BATCH):
                batch = uids[start:start + _IMAP_FETCH_BATCH]
                data = client.fetch(batch, ["BODY.PEEK[]"])
                for uid in batch:
                    item = data.get(uid)
                    if item is None or b"BODY[]" not in item:
                        continue  # expunged meanwhile
                    mails.append(
                        InboundMail(key=f"{self.uidvalidity}:{uid}", raw=bytes(item[b"BODY[]"]))
                    )
            return mails
        except (IMAPClientAbortError, OSError) as exc:
            self._lost()
            if last_try:
                raise self._error(f"fetching from {self.mailbox!r}", exc) from exc
            raise _ConnectionLost() from exc
        except IMAPClientError as exc:
            raise self._error(f"fetching from {self.mailbox!r}", exc) from exc

    def _parse_key(self, key: str) -> tuple[int, int]:
        try:
            validity, uid = key.split(":")
            return int(validity), int(uid)
        except (ValueError, AttributeError):
            raise ValueError(f"not an IMAP inbox key (UIDVALIDITY:UID): {key!r}") from None

    def _move(self, key: str, folder: str) -> None:
        validity, uid = self._parse_key(key)
        client = self._connected()
        if validity != self.uidvalidity:
            raise KeyError(
                f"{key}: mailbox {self.mailbox!r} now has UIDVALIDITY {self.uidvalidity}"
            )
        step = f"looking up UID {uid}"
        try:
            if uid not in client.search(["UID", str(uid)]):
                raise KeyError(key)
            step = f"moving UID {uid} to {folder!r}"
            if client.has_capability("MOVE"):
                client.move([uid], folder)
            else:
                client.copy([uid], folder)
                client.add_flags([uid], [imapclient.DELETED], silent=True)
                if client.has_capability("UIDPLUS"):
                    client.uid_expunge([uid])
                else:
                    client.expunge()
        except (IMAPClientAbortError, OSError) as exc:
            self._lost()
            raise self._error(step, exc) from exc
        except IMAPClientError as exc:
            raise self._error(step, exc) from exc

    def mark_processed(self, key: str) -> None:
        """Move the mail to the processed folder.

        Raises KeyError when the folder holds no such UID (or UIDVALIDITY
        changed), ValueError for a malformed key, TransportError on failure.
        """
        self._move(key, self.processed)

    def mark_ignored(self, key: str) -> None:
        """Move the mail to the ignored folder (errors as :meth:`mark_processed`)."""
        self._move(key, self.ignored)

    def close(self) -> None:
        """Log out (errors while doing so are ignored)."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.logout()
            except (IMAPClientError, OSError):
                _drop_imap(client)

    def __repr__(self) -> str:
        return (f"ImapInbox({self.host!r}, {self.port}, {self.username!r}, "
                f"security={self.security!r}, mailbox={self.mailbox!r})")


class _ConnectionLost(Exception):
    """Internal: the IMAP connection broke during a read-only operation."""


def _drop_imap(client: imapclient.IMAPClient) -> None:
    try:
        client.shutdown()
    except (IMAPClientError, OSError):
        pass


# --------------------------------------------------------------------------
# SMTP
# --------------------------------------------------------------------------


class SmtpOutbox(Outbox):
    """An outbox that submits mail to an SMTP server (with aiosmtplib).

    ``SmtpOutbox(host, port, username=None, password=None, security="ssl",
    timeout=30, ssl_context=None)``

    - ``security``: ``"ssl"`` (implicit TLS, aiosmtplib ``use_tls``),
      ``"starttls"`` (aiosmtplib ``start_tls=True``; fails if the server does
      not offer it) or ``"none"`` (never upgrades).
    - ``username``/``password``: log in (AUTH) when both are given.
    - ``timeout``: seconds for connecting and for each server reply.

    Each :meth:`send` uses its own connection; :meth:`send_many` sends a
    batch over one. The methods are synchronous (each runs its own asyncio
    event loop), so they must not be called from a thread that is running an
    event loop (use ``asyncio.to_thread`` there).

    Raises ValueError for a bad ``security`` or a username without password.
    """

    def __init__(
        self,
        host: str,
        port: int,
        username: str | None = None,
        password: str | None = None,
        security: str = "ssl",
        timeout: float = 30,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if (username is None) != (password is None):
            raise ValueError("give both username and password, or neither")
        self.host = host
        self.port = int(port)
        self.username = username
        self._password = password
        self.security = _check_security(security)
        self.timeout = timeout
        self._ssl_context = ssl_context
        self._closed = False

    def _where(self) -> str:
        return f"SMTP {self.host}:{self.port}"

    def _error(self, what: str, exc: BaseException, code: int | None = None) -> TransportError:
        if code is None:
            code = getattr(exc, "code", None)
            if not isinstance(code, int):
                code = None
        return TransportError(
            f"{self._where()}: {what} failed: {_describe(exc)}",
            host=self.host,
            port=self.port,
            code=code,
        )

    def send(self, msg: EmailMessage) -> None:
        """Send one message over a new connection.

        Raises ValueError for a message without a single From or without
        To/Cc; TransportError when connecting, TLS, login or the server's
        acceptance fails (``.code`` holds the SMTP reply code, if any), or
        when only some recipients were accepted (the mail did go to the
        others; the message lists the refused ones).
        """
        result = self.send_many([msg])[0]
        if result is not None:
            raise result

    def send_many(self, msgs: Iterable[EmailMessage]) -> list[Exception | None]:
        """Send messages in order over one connection.

        Returns one entry per message: ``None`` if it was accepted, else the
        ValueError/TransportError :meth:`send` would raise for it. A message
        refused by the server does not stop the others; after the connection
        drops, the remaining messages each get a TransportError.

        Raises TransportError (nothing sent) when connecting, TLS or login
        fails.
        """
        msgs = list(msgs)
        if not msgs:
            return []
        if self._closed:
            raise TransportError(f"{self._where()}: outbox is closed",
                                 host=self.host, port=self.port)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("SmtpOutbox is synchronous; call it outside the "
                               "event loop's thread (e.g. asyncio.to_thread)")
        return asyncio.run(self._send_all(msgs))

    async def _send_all(self, msgs: Sequence[EmailMessage]) -> list[Exception | None]:
        prepared: list[tuple[str, list[str]] | Exception] = []
        for msg in msgs:
            try:
                prepared.append(envelope_of(msg))
            except ValueError as exc:
                prepared.append(exc)
        if all(isinstance(item, Exception) for item in prepared):
            return list(prepared)  # type: ignore[arg-type]

        smtp = aiosmtplib.SMTP(
            hostname=self.host,
            port=self.port,
            timeout=self.timeout,
            use_tls=self.security == "ssl",
            start_tls=self.security == "starttls",
            tls_context=self._ssl_context,
        )
        step = "connect"
        try:
            await smtp.connect()
            if self.username is not None:
                step = f"login as {self.username!r}"
                await smtp.login(self.username, self._password)
        except (aiosmtplib.SMTPException, OSError, asyncio.TimeoutError) as exc:
            smtp.close()
            raise self._error(step, exc) from exc

        results: list[Exception | None] = []
        try:
            for msg, item in zip(msgs, prepared):
                if isinstance(item, Exception):
                    results.append(item)
                    continue
                sender, recipients = item
                results.append(await self._send_one(smtp, msg, sender, recipients))
        finally:
            if smtp.is_connected:
                try:
                    await smtp.quit()
                except (aiosmtplib.SMTPException, OSError, asyncio.TimeoutError):
                    smtp.close()
        return results

    async def _send_one(
        self, smtp: aiosmtplib.SMTP, msg: EmailMessage, sender: str, recipients: list[str]
    ) -> TransportError | None:
        what = f"sending {msg.get('Subject', '')!r} from {sender} to {', '.join(recipients)}"
        if not smtp.is_connected:
            return TransportError(f"{self._where()}: {what} failed: connection lost",
                                  host=self.host, port=self.port)
        try:
            refused, _ = await smtp.send_message(msg, sender=sender, recipients=recipients)
        except aiosmtplib.SMTPRecipientsRefused as exc:
            first = exc.recipients[0] if exc.recipients else None
            detail = "; ".join(f"{r.recipient}: {r.code} {r.message}" for r in exc.recipients)
            return TransportError(
                f"{self._where()}: {what} failed: all recipients refused ({detail})",
                host=self.host, port=self.port, code=first.code if first else None,
            )
        except (aiosmtplib.SMTPException, OSError, asyncio.TimeoutError) as exc:
            return self._error(what, exc)
        if refused:
            detail = "; ".join(f"{addr}: {resp.code} {resp.message}" for addr, resp in refused.items())
            first = next(iter(refused.values()))
            return TransportError(
                f"{self._where()}: {what}: accepted for some recipients but refused for {detail}",
                host=self.host, port=self.port, code=first.code,
            )
        return None

    def close(self) -> None:
        """Mark the outbox closed; later sends raise TransportError."""
        self._closed = True

    def __repr__(self) -> str:
        return (f"SmtpOutbox({self.host!r}, {self.port}, username={self.username!r}, "
                f"security={self.security!r})")
