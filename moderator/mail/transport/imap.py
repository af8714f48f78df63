"""IMAP inbox: one folder of an IMAP account, read with imapclient.

The protocol is IMAP4rev1 (RFC 3501); handled mails are moved with ``UID
MOVE`` (RFC 6851) when offered, else ``UID COPY`` + ``\\Deleted`` + ``UID
EXPUNGE`` (RFC 4315 UIDPLUS), else ``UID COPY`` + ``\\Deleted`` and a plain
``EXPUNGE`` only when no other mail of the folder is flagged ``\\Deleted``
(see :class:`ImapInbox`). Keys carry the UIDVALIDITY (RFC 3501 2.3.1.1), so a
key from before the mailbox was recreated is never taken for another mail.

The processed and ignored folders are placed where the server keeps folders
(:func:`place_folder`): a configured name is relative to the personal
namespace (RFC 2342 NAMESPACE; Courier and Cyrus keep every folder under
``INBOX.``), unless it already is a full name there. ``--loop`` waits for mail
with IDLE (RFC 2177, :meth:`ImapInbox.wait_for_mail`) where the server offers it.
"""

from __future__ import annotations

import contextlib
import secrets
import ssl
import time
from datetime import datetime
from typing import Any, Callable, Iterator

import imapclient
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError, LoginError

from .base import (
    DEFAULT_FETCH_LIMIT,
    HeadersOnly,
    InboundMail,
    Inbox,
    LoginRefused,
    MailStream,
    TransportError,
    check_security,
    describe_error,
)

__all__ = ["ImapInbox", "place_folder", "IDLE_RENEW"]

_IMAP_FETCH_BATCH = 200
_IMAP_FETCH_BYTES = 16 * 1024 * 1024  # bodies fetched in one command at most
#: The keyword we set, with \Deleted, on mails we copied away when the server has
#: neither MOVE nor UIDPLUS: ours to expunge later; any other \Deleted mail is not.
MOVED_KEYWORD = b"$PbemMoved"
#: Seconds after which an IDLE command is ended and issued again: RFC 2177 asks
#: clients to do so at least every 29 minutes (servers may log out idle clients
#: after 30).
IDLE_RENEW = 25 * 60


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
    they are missing, under the names :func:`place_folder` gives them on this
    server (``"Processed"`` is ``"INBOX.Processed"`` on Courier); the names in
    use are :attr:`folders` (``{"processed": str, "ignored": str}``). Keys are
    ``f"{uidvalidity}:{uid}"``; :meth:`fetch` returns the mails not flagged
    ``\\Deleted`` (``SEARCH UNDELETED``) in UID order. It asks for each mail's
    ``RFC822.SIZE`` and ``INTERNALDATE`` (when it reached the mailbox: the
    mail's ``arrived``) first, then fetches ``BODY.PEEK[]`` for mails up to
    ``max_size`` bytes and only ``BODY.PEEK[HEADER]`` for larger ones
    (``headers_only``); ``PEEK`` so no flag changes.

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
        self._arrived: dict[int, datetime] = {}  # UID -> INTERNALDATE, of the last listing
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
        #: the server's names of the processed and ignored folders
        self.folders: dict[str, str] = {"processed": processed, "ignored": ignored}
        self._exists: int | None = None  # the mailbox's size as this connection knows it
        self._connect()

    # -- connection -------------------------------------------------------

    def _where(self) -> str:
        return f"IMAP {self.host}:{self.port}"

    def _error(self, what: str, exc: BaseException) -> TransportError:
        return _failure(self.host, self.port, what, exc)

    def _connect(self) -> imapclient.IMAPClient:
        client = _login(self.host, self.port, self.username, self._password,
                        self.security, self.timeout, self._ssl_context, self._oauth2)
        step = "asking where folders go (NAMESPACE, LIST)"
        try:
            prefix, delimiter = _personal_namespace(client)
            self.folders = {role: place_folder(client, name, prefix, delimiter)
                            for role, name in (("processed", self.processed), ("ignored", self.ignored))}
            for folder in self.folders.values():
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
        self._exists = int(info.get(b"EXISTS", 0))

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
        uids, sizes = self._listing(last_try)
        return self._read(uids, sizes, last_try)

    def stream(self) -> MailStream:
        """The mails of the folder not flagged ``\\Deleted``, in UID order, as
        a :class:`MailStream`: their UIDs and sizes (``RFC822.SIZE``) now, the
        mails read while iterating, ``max_size`` bytes of them at a time (one
        ``UID FETCH`` per batch, at least one mail; a mail over ``max_size``
        with its headers only), so that memory holds one batch, never the
        inbox.  A connection lost while listing or reading is opened again
        once (the UIDs stay valid while UIDVALIDITY does).  Raises
        TransportError (also while iterating)."""
        try:
            uids, sizes = self._listing()
        except _ConnectionLost:
            uids, sizes = self._listing(last_try=True)
        validity = self.uidvalidity

        def read(keys: list[str]) -> list[InboundMail]:
            batch = [self._parse_key(k)[1] for k in keys]
            try:
                return self._read(batch, sizes)
            except _ConnectionLost:
                self._connected()  # logs in and selects again
                if self.uidvalidity != validity:
                    raise TransportError(
                        f"{self._where()}: UIDVALIDITY of {self.mailbox!r} changed while reading",
                        host=self.host, port=self.port) from None
                return self._read(batch, sizes, last_try=True)

        keys = [f"{validity}:{uid}" for uid in uids]
        return MailStream(keys, {f"{validity}:{uid}": sizes[uid] for uid in uids}, read,
                          batch_bytes=self.max_size, max_size=self.max_size)

    @contextlib.contextmanager
    def _fetching(self, last_try: bool) -> Iterator[None]:
        """Errors of reading the inbox: a lost connection is _ConnectionLost (the
        caller opens it again once), or TransportError when ``last_try``; any
        other IMAP error is TransportError."""
        try:
            yield
        except (IMAPClientAbortError, OSError) as exc:
            self._lost()
            if last_try:
                raise self._error(f"fetching from {self.mailbox!r}", exc) from exc
            raise _ConnectionLost() from exc
        except IMAPClientError as exc:
            raise self._error(f"fetching from {self.mailbox!r}", exc) from exc

    def _listing(self, last_try: bool = False) -> tuple[list[int], dict[int, int]]:
        """The UIDs of the mails not flagged ``\\Deleted`` (selected again,
        UIDVALIDITY read) and their sizes; their ``INTERNALDATE`` (when each
        reached the mailbox) is kept in ``self._arrived`` for ``_read``. Raises
        _ConnectionLost (unless ``last_try``) or TransportError."""
        client = self._connected()
        with self._fetching(last_try):
            self._select(client)
            uids = sorted(int(uid) for uid in client.search(["UNDELETED"]))
            sizes: dict[int, int] = {}
            arrived: dict[int, datetime] = {}
            client.normalise_times = False  # INTERNALDATE with its zone, not local naive time
            for start in range(0, len(uids), _IMAP_FETCH_BATCH):
                batch = uids[start:start + _IMAP_FETCH_BATCH]
                for uid, item in client.fetch(batch, ["RFC822.SIZE", "INTERNALDATE"]).items():
                    if b"RFC822.SIZE" in item:
                        sizes[int(uid)] = int(item[b"RFC822.SIZE"])
                    if isinstance(item.get(b"INTERNALDATE"), datetime):
                        arrived[int(uid)] = item[b"INTERNALDATE"]
            self._arrived = arrived
            return [uid for uid in uids if uid in sizes], sizes  # others expunged meanwhile

    def _read(self, uids: list[int], sizes: dict[int, int], last_try: bool = False) -> list[InboundMail]:
        """The mails ``uids`` (in that order; those expunged meanwhile left out):
        whole up to ``max_size`` bytes, else their headers only. Raises
        _ConnectionLost (unless ``last_try``) or TransportError."""
        client = self._connected()
        with self._fetching(last_try):
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
                                           size=len(raw), arrived=self._arrived.get(uid))
                del data
            for start in range(0, len(large), _IMAP_FETCH_BATCH):
                batch = large[start:start + _IMAP_FETCH_BATCH]
                data = client.fetch(batch, ["BODY.PEEK[HEADER]"])
                for uid in batch:
                    item = data.get(uid)
                    if item is None or b"BODY[HEADER]" not in item:
                        continue
                    head = HeadersOnly(bytes(item[b"BODY[HEADER]"]), sizes[uid])
                    got[uid] = InboundMail(key=f"{self.uidvalidity}:{uid}", raw=head,
                                           size=sizes[uid], headers_only=True,
                                           arrived=self._arrived.get(uid))
            return [got[uid] for uid in uids if uid in got]

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
        self._move(key, self.folders["processed"])

    def mark_ignored(self, key: str) -> None:
        """Move the mail to the ignored folder (errors as :meth:`mark_processed`)."""
        self._move(key, self.folders["ignored"])

    def offers_idle(self) -> bool:
        """True when the server advertises IDLE (RFC 2177); logs in again
        first when the connection was lost (TransportError if that fails)."""
        try:
            return bool(self._connected().has_capability("IDLE"))
        except (IMAPClientError, OSError) as exc:
            self._lost()
            raise self._error("reading capabilities", exc) from exc

    def waiting(self) -> int:
        """How many mails of the mailbox are not flagged ``\\Deleted``
        (``SEARCH UNDELETED``). Raises TransportError."""
        client = self._connected()
        try:
            return len(client.search(["UNDELETED"]))
        except (IMAPClientError, OSError) as exc:
            self._lost()
            raise self._error(f"searching {self.mailbox!r}", exc) from exc

    def wait_for_mail(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for new mail in the mailbox with IDLE
        (RFC 2177) on this connection.

        Returns True as soon as the server reports more mail than this
        connection knew of (an ``EXISTS`` response larger than the size it
        last saw, counting the ``EXPUNGE`` responses for mails moved away
        meanwhile, also by other connections), False when ``timeout`` ran out.
        A mail that came while no IDLE was running is reported by the ``NOOP``
        sent first. IDLE is ended and sent again every :data:`IDLE_RENEW`
        seconds (RFC 2177: at least every 29 minutes).

        Raises TransportError (``step="IDLE"``) when the server does not offer
        IDLE, and when the connection fails (then the next call logs in
        again); the caller sleeps instead (polling).
        """
        client = self._connected()
        if not client.has_capability("IDLE"):
            raise TransportError(f"{self._where()}: the server does not offer IDLE",
                                 host=self.host, port=self.port, step="IDLE")
        deadline = time.monotonic() + max(0.0, float(timeout))
        step = "NOOP"
        try:
            if self._news(client.noop()[1]):
                return True
            while time.monotonic() < deadline:
                step = "IDLE"
                renew = min(deadline, time.monotonic() + IDLE_RENEW)
                client.idle()
                news = False
                while not news:
                    left = renew - time.monotonic()
                    if left <= 0:
                        break
                    responses = client.idle_check(timeout=left)
                    if _closed(responses, time.monotonic() - (renew - left), left):
                        raise IMAPClientAbortError("the server closed the connection during IDLE")
                    news = self._news(responses)
                step = "DONE (ending IDLE)"
                if self._news(client.idle_done()[1]) or news:
                    return True
            return False
        except (IMAPClientError, OSError) as exc:
            self._lost()
            raise self._error(step, exc) from exc

    def _news(self, responses: list) -> bool:
        """Count the mailbox's size from untagged ``EXISTS``/``EXPUNGE``
        responses; True when an ``EXISTS`` says it grew."""
        grew = False
        for response in responses:
            if len(response) < 2 or not isinstance(response[0], int):
                continue
            number, what = response[0], response[1]
            if what == b"EXPUNGE" and self._exists:
                self._exists -= 1
            elif what == b"EXISTS":
                if self._exists is None or number > self._exists:
                    grew = True
                self._exists = number
        return grew

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
        """Log in and look at the account; the one change is a test folder,
        created and removed again to prove that folders can be made where the
        processed and ignored folders go.

        Takes the constructor's arguments; selects ``mailbox`` read-only
        (``EXAMINE``, RFC 3501 6.3.2), so no flag changes. Returns
        ``{"capabilities": [str] (upper case, sorted), "move": bool (RFC 6851
        MOVE offered), "uidplus": bool (RFC 4315 UIDPLUS offered), "idle": bool
        (RFC 2177 IDLE offered), "mailbox": str, "messages": int (EXISTS),
        "uidvalidity": int, "namespace": (prefix, delimiter) (the personal
        namespace, e.g. ``("INBOX.", ".")``), "placed": {processed: str,
        ignored: str} (the server's names for the configured folders, see
        :func:`place_folder`), "folders": {processed: bool, ignored: bool}
        (whether each exists, keyed by the configured names), "test_folder":
        str (the name tried), "create_error": str | None (why CREATE of the
        test folder was refused; None when it worked), "delete_error": str |
        None (why it could not be removed again)}``.

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
            prefix, delimiter = _personal_namespace(client)
            placed = {name: place_folder(client, name, prefix, delimiter) for name in (processed, ignored)}
            folders = {name: bool(client.folder_exists(placed[name])) for name in (processed, ignored)}
            parent = placed[processed]
            parent = parent[:parent.rindex(delimiter) + 1] if delimiter and delimiter in parent else prefix
            test_folder = f"{parent}pbem-doctor-{secrets.token_hex(4)}"
            create_error = delete_error = None
            try:
                client.create_folder(test_folder)
            except IMAPClientAbortError:
                raise
            except IMAPClientError as exc:
                create_error = _reply_text(exc)
            else:
                try:
                    client.delete_folder(test_folder)
                except IMAPClientAbortError:
                    raise
                except IMAPClientError as exc:
                    delete_error = _reply_text(exc)
            step = f"selecting {mailbox!r}"
            info = client.select_folder(mailbox, readonly=True)
            result = {
                "capabilities": caps,
                "move": "MOVE" in caps,
                "uidplus": "UIDPLUS" in caps,
                "idle": "IDLE" in caps,
                "mailbox": mailbox,
                "messages": int(info.get(b"EXISTS", 0)),
                "uidvalidity": int(info[b"UIDVALIDITY"]),
                "namespace": (prefix, delimiter),
                "placed": placed,
                "folders": folders,
                "test_folder": test_folder,
                "create_error": create_error,
                "delete_error": delete_error,
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


def _closed(responses: list, waited: float, timeout: float) -> bool:
    """Did the connection end during ``idle_check``: a ``BYE``, or no response at
    all well before ``timeout`` (imapclient returns ``[]`` at end of file)?"""
    if any(r and r[0] == b"BYE" for r in responses):
        return True
    return not responses and waited < timeout - 0.05


def _personal_namespace(client: imapclient.IMAPClient) -> tuple[str, str]:
    """``(prefix, delimiter)`` of the account's personal folders: the first
    personal namespace (RFC 2342) when the server offers NAMESPACE, else no
    prefix and the hierarchy delimiter from ``LIST "" ""`` (``""`` when the
    server has no hierarchy). Raises IMAPClientError."""
    if client.has_capability("NAMESPACE"):
        personal = client.namespace().personal
        if personal:
            prefix, delimiter = personal[0]
            return _text(prefix), _text(delimiter)
    for _flags, delimiter, _name in client.list_folders("", ""):
        return "", _text(delimiter)
    return "", ""


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def place_folder(client: imapclient.IMAPClient, name: str, prefix: str, delimiter: str) -> str:
    """The name the server knows the configured folder ``name`` by.

    ``prefix``/``delimiter`` are the personal namespace (``("INBOX.", ".")``
    on Courier and on Cyrus in its usual setup, ``("", ".")`` or ``("", "/")``
    on Dovecot). A folder that already exists under ``name`` keeps it (an
    explicit full name, or one made before); so does ``INBOX`` and a name
    that starts with the prefix (``"INBOX.Processed"``). Any other name is
    relative to the namespace: ``prefix + name``, a ``/`` in it taken as the
    hierarchy separator (``"Games/Done"`` is ``"INBOX.Games.Done"`` on
    Courier). Raises IMAPClientError when the server fails the LIST.
    """
    if (name.upper() == "INBOX" or not prefix or name.upper().startswith(prefix.upper())
            or client.folder_exists(name)):
        return name if prefix or not delimiter else name.replace("/", delimiter)
    return prefix + (name.replace("/", delimiter) if delimiter else name)


def _reply_text(exc: BaseException) -> str:
    """The server's words from an imapclient error (``"create failed: Invalid
    mailbox name."`` -> ``"Invalid mailbox name."``)."""
    text = str(exc)
    return text.split(" failed: ", 1)[1] if " failed: " in text else text


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
            try:
                client.oauth2_login(username, token)
            except LoginError as exc:
                _oauth2_again(client, host, port, username, oauth2, exc)
            _oauth2_accepted(oauth2, f"IMAP {host}:{port}")
        else:
            step = f"login as {username!r}"
            client.login(username, password)
    except (IMAPClientError, OSError) as exc:
        if client is not None:
            _drop_imap(client)
        raise _failure(host, port, step, exc) from exc
    return client


def _oauth2_again(client: imapclient.IMAPClient, host: str, port: int, username: str,
                  oauth2: Callable[[], str], exc: LoginError) -> None:
    """The server refused the access token: when ``oauth2`` can refresh on a
    refusal (:meth:`moderator.mail.oauth.TokenSource.refused`), log in once
    more with a freshly refreshed token.  Raises LoginRefused when it cannot,
    when the refresh token is refused (OAuthRefused, naming ``pbem auth login
    PROVIDER``) or when the server refuses the fresh token too."""
    server = f"IMAP {host}:{port}"
    refresh = getattr(oauth2, "refused", None)
    if refresh is None:
        raise exc
    try:
        token = refresh(server, describe_error(exc))
    except TransportError:
        _drop_imap(client)
        raise
    try:
        client.oauth2_login(username, token)
    except LoginError as again:
        said = describe_error(again)
        remember = getattr(oauth2, "record_login", None)
        if remember is not None:
            remember(server, ok=False, said=said, force=True)
        _drop_imap(client)
        command = getattr(oauth2, "login_command", "pbem auth login")
        raise LoginRefused(f"{server}: XOAUTH2 login as {username!r} failed: the server refused a freshly "
                           f"refreshed access token too ({said}): the sign-in gives no access to this "
                           f"mailbox; run  {command}", host=host, port=port,
                           step=f"XOAUTH2 login as {username!r}") from again


def _oauth2_accepted(oauth2: Callable[[], str], server: str) -> None:
    accepted = getattr(oauth2, "accepted", None)
    if accepted is not None:
        accepted(server)


def _drop_imap(client: imapclient.IMAPClient) -> None:
    try:
        client.shutdown()
    except (IMAPClientError, OSError):
        pass

