"""IMAP inbox: one folder of an IMAP account, read with imapclient.

The protocol is IMAP4rev1 (RFC 3501); handled mails are moved with ``UID
MOVE`` (RFC 6851) when offered, else ``UID COPY`` + ``\\Deleted`` + ``UID
EXPUNGE`` (RFC 4315 UIDPLUS), else ``UID COPY`` + ``\\Deleted`` and a plain
``EXPUNGE`` only when no other mail of the folder is flagged ``\\Deleted``
(see :class:`ImapInbox`). Keys carry the UIDVALIDITY (RFC 3501 2.3.1.1), so a
key from before the mailbox was recreated is never taken for another mail.
"""

from __future__ import annotations

import ssl
from typing import Any, Callable

import imapclient
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError, LoginError

from .base import (
    DEFAULT_FETCH_LIMIT,
    HeadersOnly,
    InboundMail,
    Inbox,
    LoginRefused,
    TransportError,
    check_security,
    describe_error,
)

__all__ = ["ImapInbox"]

_IMAP_FETCH_BATCH = 200
_IMAP_FETCH_BYTES = 16 * 1024 * 1024  # bodies fetched in one command at most
#: The keyword we set, with \Deleted, on mails we copied away when the server has
#: neither MOVE nor UIDPLUS: ours to expunge later; any other \Deleted mail is not.
MOVED_KEYWORD = b"$PbemMoved"


class ImapInbox(Inbox):
    """An inbox that is one folder of an IMAP account (read with imapclient).

    ``ImapInbox(host, port, username, password, security="ssl",
    mailbox="INBOX", processed="Processed", ignored="Ignored", timeout=30,
    ssl_context=None, max_size=DEFAULT_FETCH_LIMIT, oauth2=None)``

    - ``security``: ``"ssl"`` (implicit TLS), ``"starttls"`` or ``"none"``;
      ``ssl_context`` is used for TLS (default: the system's trusted CAs
      with host name checking).
    - ``timeout``: seconds for connecting and for each server reply.
    - ``oauth2``: a callable returning an OAuth2 access token (e.g. a
      :class:`moderator.mail.oauth.TokenSource`); when given, the login is
      SASL XOAUTH2 (``AUTHENTICATE XOAUTH2``, imapclient's ``oauth2_login``)
      with a token asked for at each login, and ``password`` is not used.
      The callable raises TransportError/LoginRefused when it has no token.

    Connects and logs in at construction, selects ``mailbox`` read-write and
    creates (and subscribes) the ``processed`` and ``ignored`` folders when
    they are missing. Keys are ``f"{uidvalidity}:{uid}"``; :meth:`fetch`
    returns the mails not flagged ``\\Deleted`` (``SEARCH UNDELETED``) in UID
    order. It asks for each mail's ``RFC822.SIZE`` first, then fetches
    ``BODY.PEEK[]`` for mails up to ``max_size`` bytes and only
    ``BODY.PEEK[HEADER]`` for larger ones (``headers_only``); ``PEEK`` so no
    flag changes.

    Moving uses ``UID MOVE`` when the server advertises MOVE, else ``UID
    COPY`` + ``\\Deleted`` + ``UID EXPUNGE`` (with UIDPLUS, which removes
    only that mail). Without either, a plain ``EXPUNGE`` would also remove
    every mail that another client flagged ``\\Deleted`` (perhaps to be
    undeleted). So the mail is copied and flagged ``\\Deleted`` plus the
    keyword ``$PbemMoved`` (when the server takes keywords), and ``EXPUNGE``
    is sent only when ``SEARCH DELETED`` finds no mail but ours (mails with
    the keyword, or flagged by this connection); otherwise our copied mails
    stay flagged in the folder, never fetched again (``UNDELETED``), and are
    expunged by a later move once the others' deleted mails are gone. The
    only remaining window is a mail flagged by another client between our
    ``SEARCH`` and ``EXPUNGE`` (one round trip).

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
        max_size: int = DEFAULT_FETCH_LIMIT,
        oauth2: Callable[[], str] | None = None,
    ) -> None:
        self.max_size = int(max_size)
        self._flagged: set[int] = set()  # UIDs this connection flagged \Deleted
        self.host = host
        self.port = int(port)
        self.username = username
        self._password = password
        self.security = check_security(security)
        self.mailbox = mailbox
        self.processed = processed
        self.ignored = ignored
        self.timeout = timeout
        self._ssl_context = ssl_context
        self._oauth2 = oauth2
        self._client: imapclient.IMAPClient | None = None
        self.uidvalidity: int | None = None
        self._connect()

    # -- connection -------------------------------------------------------

    def _where(self) -> str:
        return f"IMAP {self.host}:{self.port}"

    def _error(self, what: str, exc: BaseException) -> TransportError:
        return _failure(self.host, self.port, what, exc)

    def _connect(self) -> imapclient.IMAPClient:
        client = _login(self.host, self.port, self.username, self._password,
                        self.security, self.timeout, self._ssl_context, self._oauth2)
        try:
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
        """The mails of the folder not flagged ``\\Deleted``, in UID order; a
        mail over ``max_size`` bytes with its headers only (see the class doc).

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
            uids = sorted(int(uid) for uid in client.search(["UNDELETED"]))
            sizes: dict[int, int] = {}
            for start in range(0, len(uids), _IMAP_FETCH_BATCH):
                batch = uids[start:start + _IMAP_FETCH_BATCH]
                for uid, item in client.fetch(batch, ["RFC822.SIZE"]).items():
                    if b"RFC822.SIZE" in item:
                        sizes[int(uid)] = int(item[b"RFC822.SIZE"])
            uids = [uid for uid in uids if uid in sizes]  # others expunged meanwhile
            small = [uid for uid in uids if sizes[uid] <= self.max_size]
            large = [uid for uid in uids if sizes[uid] > self.max_size]
            got: dict[int, InboundMail] = {}
            for batch in _batches(small, sizes):
                data = client.fetch(batch, ["BODY.PEEK[]"])
                for uid in batch:
                    item = data.get(uid)
                    if item is None or b"BODY[]" not in item:
                        continue  # expunged meanwhile
                    raw = bytes(item[b"BODY[]"])
                    got[uid] = InboundMail(key=f"{self.uidvalidity}:{uid}", raw=raw,
                                           size=len(raw))
            for start in range(0, len(large), _IMAP_FETCH_BATCH):
                batch = large[start:start + _IMAP_FETCH_BATCH]
                data = client.fetch(batch, ["BODY.PEEK[HEADER]"])
                for uid in batch:
                    item = data.get(uid)
                    if item is None or b"BODY[HEADER]" not in item:
                        continue
                    head = HeadersOnly(bytes(item[b"BODY[HEADER]"]), sizes[uid])
                    got[uid] = InboundMail(key=f"{self.uidvalidity}:{uid}", raw=head,
                                           size=sizes[uid], headers_only=True)
            return [got[uid] for uid in uids if uid in got]
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
            if uid not in client.search(["UID", str(uid), "UNDELETED"]):
                raise KeyError(key)
            step = f"moving UID {uid} to {folder!r}"
            if client.has_capability("MOVE"):
                client.move([uid], folder)
            else:
                client.copy([uid], folder)
                if client.has_capability("UIDPLUS"):
                    client.add_flags([uid], [imapclient.DELETED], silent=True)
                    client.uid_expunge([uid])
                else:
                    self._flag_ours(client, uid)
                    step = "expunging our moved mails"
                    self._expunge_if_only_ours(client)
        except (IMAPClientAbortError, OSError) as exc:
            self._lost()
            raise self._error(step, exc) from exc
        except IMAPClientError as exc:
            raise self._error(step, exc) from exc

    def _flag_ours(self, client: imapclient.IMAPClient, uid: int) -> None:
        """Flag a copied mail ``\\Deleted`` and, when the server takes keywords,
        ``$PbemMoved`` (so a later session knows it is ours)."""
        try:
            client.add_flags([uid], [imapclient.DELETED, MOVED_KEYWORD], silent=True)
        except IMAPClientError:  # no keywords allowed here: remember it ourselves
            client.add_flags([uid], [imapclient.DELETED], silent=True)
        self._flagged.add(uid)

    def _expunge_if_only_ours(self, client: imapclient.IMAPClient) -> bool:
        """A plain EXPUNGE, but only when every ``\\Deleted`` mail of the folder
        is one we copied away; True when it was sent."""
        deleted = {int(u) for u in client.search(["DELETED"])}
        try:
            ours = {int(u) for u in client.search(["DELETED", "KEYWORD", MOVED_KEYWORD])}
        except IMAPClientError:
            ours = set()
        ours |= self._flagged
        if deleted - ours:
            return False  # another client's \Deleted mail: leave everything be
        if deleted:
            client.expunge()
        self._flagged -= deleted
        return True

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

    @classmethod
    def probe(
        cls,
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
        oauth2: Callable[[], str] | None = None,
    ) -> dict[str, Any]:
        """Log in and look at the account without changing anything.

        Takes the constructor's arguments; creates no folder and selects
        ``mailbox`` read-only (``EXAMINE``, RFC 3501 6.3.2), so no flag
        changes. Returns ``{"capabilities": [str] (upper case, sorted),
        "move": bool (RFC 6851 MOVE offered), "uidplus": bool (RFC 4315
        UIDPLUS offered), "mailbox": str, "messages": int (EXISTS),
        "uidvalidity": int, "folders": {processed: bool, ignored: bool}
        (whether each folder exists)}``.

        Raises LoginRefused when the server refuses the login,
        TransportError (``.step`` says which: ``"connect"``, ``"STARTTLS"``,
        ``"listing folders"``, ``"selecting 'INBOX'"``) for any other
        failure; ValueError for a bad ``security``.
        """
        client = _login(host, int(port), username, password, check_security(security),
                        timeout, ssl_context, oauth2)
        step = "reading capabilities"
        try:
            caps = sorted({c.decode().upper() if isinstance(c, bytes) else str(c).upper()
                           for c in client.capabilities()})
            step = "listing folders"
            folders = {folder: bool(client.folder_exists(folder)) for folder in (processed, ignored)}
            step = f"selecting {mailbox!r}"
            info = client.select_folder(mailbox, readonly=True)
            result = {
                "capabilities": caps,
                "move": "MOVE" in caps,
                "uidplus": "UIDPLUS" in caps,
                "mailbox": mailbox,
                "messages": int(info.get(b"EXISTS", 0)),
                "uidvalidity": int(info[b"UIDVALIDITY"]),
                "folders": folders,
            }
        except (IMAPClientError, OSError, KeyError, ValueError) as exc:
            _drop_imap(client)
            raise _failure(host, int(port), step, exc) from exc
        try:
            client.logout()
        except (IMAPClientError, OSError):
            _drop_imap(client)
        return result

    def __repr__(self) -> str:
        return (f"ImapInbox({self.host!r}, {self.port}, {self.username!r}, "
                f"security={self.security!r}, mailbox={self.mailbox!r})")


def _batches(uids: list[int], sizes: dict[int, int]):
    """``uids`` in batches of at most _IMAP_FETCH_BATCH mails and about
    _IMAP_FETCH_BYTES bytes (a batch holds at least one mail)."""
    batch: list[int] = []
    total = 0
    for uid in uids:
        if batch and (len(batch) >= _IMAP_FETCH_BATCH or total + sizes[uid] > _IMAP_FETCH_BYTES):
            yield batch
            batch, total = [], 0
        batch.append(uid)
        total += sizes[uid]
    if batch:
        yield batch


class _ConnectionLost(Exception):
    """Internal: the IMAP connection broke during a read-only operation."""


def _failure(host: str, port: int, step: str, exc: BaseException) -> TransportError:
    """The TransportError for ``exc`` raised while doing ``step``: a
    LoginRefused for imapclient's LoginError, else a plain TransportError."""
    kind = LoginRefused if isinstance(exc, LoginError) else TransportError
    return kind(f"IMAP {host}:{port}: {step} failed: {describe_error(exc)}",
                host=host, port=port, step=step)


def _login(
    host: str,
    port: int,
    username: str,
    password: str,
    security: str,
    timeout: float,
    ssl_context: ssl.SSLContext | None,
    oauth2: Callable[[], str] | None = None,
) -> imapclient.IMAPClient:
    """A client connected (implicit TLS, STARTTLS or plain, by ``security``)
    and logged in (XOAUTH2 with a token from ``oauth2`` when given, else
    LOGIN); raises LoginRefused or TransportError (see :func:`_failure`), or
    what ``oauth2`` raises."""
    step = "connect"
    client = None
    try:
        client = imapclient.IMAPClient(host, port=port, ssl=security == "ssl",
                                       ssl_context=ssl_context, timeout=timeout)
        if security == "starttls":
            step = "STARTTLS"
            client.starttls(ssl_context)
        if oauth2 is not None:
            step = "getting an OAuth2 access token"
            try:
                token = oauth2()
            except TransportError:
                _drop_imap(client)
                raise
            step = f"XOAUTH2 login as {username!r}"
            client.oauth2_login(username, token)
        else:
            step = f"login as {username!r}"
            client.login(username, password)
    except (IMAPClientError, OSError) as exc:
        if client is not None:
            _drop_imap(client)
        raise _failure(host, port, step, exc) from exc
    return client


def _drop_imap(client: imapclient.IMAPClient) -> None:
    try:
        client.shutdown()
    except (IMAPClientError, OSError):
        pass

