"""What every mail transport shares: the base classes, the error, the envelope.

A transport is one of two kinds of object:

*Inboxes* (:class:`Inbox`) hand out the mails currently waiting and, once the
caller has dealt with one, move it out of the way. The concrete inboxes live in
their own modules, each importing only what it needs:

- :class:`~moderator.mail.transport.maildir.MaildirInbox` reads a local
  Maildir (what the local demo uses);
- :class:`~moderator.mail.transport.imap.ImapInbox` reads a folder of an IMAP
  account (RFC 3501, with imapclient).

*Outboxes* (:class:`Outbox`) send :class:`email.message.EmailMessage` objects:

- :class:`~moderator.mail.transport.maildir.MaildirOutbox` writes them into a
  local Maildir (the demo's "sent" mails);
- :class:`~moderator.mail.transport.smtp.SmtpOutbox` submits them to an SMTP
  server (RFC 5321/6409, with aiosmtplib).

Every failure to reach, log in to or talk to a mail store or server is raised
as :class:`TransportError` (:class:`LoginRefused` when the server turned the
credentials down); asking for a message key that the inbox does not hold
raises :class:`KeyError`.

The envelope of an outgoing mail is taken from its headers: the envelope
sender is the single ``From`` address, the recipients are the ``To`` and
``Cc`` addresses (``Bcc`` is not used, and aiosmtplib strips it from what is
sent).

Each concrete transport also has a ``probe`` class method taking the same
arguments as its constructor: it looks at the store or server without changing
anything (no folder created, no mail sent or moved) and returns a dict of what
it found; ``pbem doctor`` words those dicts for the operator.

This module imports nothing beyond the standard library's ``email`` package, so
importing it (or the package ``moderator.mail.transport``) is cheap.
"""

from __future__ import annotations

import abc
import email.utils
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import EmailMessage
from typing import Any, Callable, Iterable, Iterator

__all__ = [
    "SECURITY_MODES",
    "InboundMail",
    "MailStream",
    "HeadersOnly",
    "StoredMail",
    "DEFAULT_FETCH_LIMIT",
    "TransportError",
    "LoginRefused",
    "Inbox",
    "Outbox",
    "envelope_of",
    "check_security",
    "describe_error",
]

#: The accepted values of the ``security`` argument of IMAP and SMTP transports:
#: ``"ssl"`` (implicit TLS from the first byte, ports 993/465), ``"starttls"``
#: (plain connection upgraded with STARTTLS, ports 143/587) and ``"none"``
#: (no encryption at all; only sensible on loopback or in tests).
SECURITY_MODES = ("ssl", "starttls", "none")


#: Mails larger than this many bytes are fetched headers only unless an
#: inbox is given another ``max_size`` (the moderator's own limit is usually
#: much lower, see ``moderator.mail.read.DEFAULT_MAX_SIZE``).
DEFAULT_FETCH_LIMIT = 10 * 1024 * 1024


class HeadersOnly(bytes):
    """The header section of a mail whose body was not fetched (too large).

    It is ``bytes`` (the header lines and the blank line after them) with one
    more attribute, ``size``: the whole mail's size in bytes as the store
    reported it. :func:`moderator.mail.read.read_mail` recognises it, so a
    caller that passes ``InboundMail.raw`` on gets an ``oversize`` reading
    with the right size without knowing about it.
    """

    size: int

    def __new__(cls, data: bytes, size: int) -> "HeadersOnly":
        obj = super().__new__(cls, data)
        obj.size = int(size)
        return obj

    def __reduce__(self):
        return (HeadersOnly, (bytes(self), self.size))


class StoredMail(EmailMessage):
    """An outgoing mail as it was stored (the spool's ``.eml``): the header
    section parsed (``email.policy.default``), the whole mail kept as the bytes
    written (``raw``: ``as_bytes(policy=email.policy.SMTP)``, CRLF line ends).

    The body is not parsed (``get_body``, ``walk`` and the like do not see its
    parts): what it is for is sending the stored bytes unchanged.
    :class:`~moderator.mail.transport.smtp.SmtpOutbox` submits ``raw`` as it
    is (no parse and flatten again); ``as_bytes`` and ``bytes()`` give ``raw``
    with the line ends the policy asks for, so any outbox that flattens
    with ``as_bytes`` (the Maildir outbox) writes the same mail.
    :meth:`of` makes one.
    """

    raw: bytes

    @classmethod
    def of(cls, raw: bytes, headers: Iterable[tuple[str, Any]] | None = None) -> "StoredMail":
        """The ``StoredMail`` of ``raw`` (a whole mail with CRLF line ends, as
        ``as_bytes(policy=email.policy.SMTP)`` writes it): its header section is
        parsed, up to the first empty line.  ``headers``: the ``raw_items()`` of
        the message that ``raw`` was flattened from (``email.policy.default``),
        taken instead of parsing them again."""
        import email.parser
        import email.policy

        if headers is not None:
            msg = cls(policy=email.policy.default)
            for name, value in headers:
                msg.set_raw(name, value)
            msg.raw = raw
            return msg
        end = raw.find(b"\r\n\r\n")
        head = raw if end < 0 else raw[:end + 4]
        msg = email.parser.BytesParser(_class=cls, policy=email.policy.default).parsebytes(
            head, headersonly=True)
        msg.raw = raw
        return msg

    def as_bytes(self, unixfrom: bool = False, policy=None) -> bytes:
        """``raw``, with ``\\n`` line ends when ``policy`` (default: the
        message's) asks for them; ``unixfrom`` is not supported (ValueError)."""
        if unixfrom:
            raise ValueError("a StoredMail has no Unix From line")
        linesep = (policy or self.policy).linesep
        return self.raw if linesep == "\r\n" else self.raw.replace(b"\r\n", linesep.encode("ascii"))

    def __bytes__(self) -> bytes:
        return self.as_bytes()


@dataclass(frozen=True)
class InboundMail:
    """One mail waiting in an inbox.

    ``key`` is opaque to callers and is only good for passing back to the
    same inbox's :meth:`Inbox.mark_processed` / :meth:`Inbox.mark_ignored`
    (a Maildir key, or ``f"{uidvalidity}:{uid}"`` for IMAP).

    ``size`` is the whole mail's size in bytes as the store reports it
    (IMAP ``RFC822.SIZE``, the Maildir file's size), known before the body is
    read. ``headers_only`` is True when the mail is larger than the inbox's
    ``max_size``: then only its header section was fetched (IMAP
    ``BODY.PEEK[HEADER]``, the Maildir file read up to the blank line) and
    ``raw`` is a :class:`HeadersOnly` carrying ``size``; otherwise ``raw`` is
    the complete message exactly as stored (headers and body) and ``size``
    is ``len(raw)`` unless the store said otherwise.

    ``arrived`` is when the mail reached the mailbox, as the store records
    it (an aware ``datetime`` in UTC, to the second): the IMAP
    ``INTERNALDATE`` (RFC 3501 2.3.3), the delivery time of a Maildir file's
    unique name (else its modification time, see ``MaildirInbox``); None when
    the store does not say.  It is never the sender's ``Date`` header, which
    the sender's machine writes.
    The moderator judges an order's lateness by it.

    ``InboundMail(key, raw)`` still works: ``size`` then defaults to
    ``raw.size`` for a :class:`HeadersOnly`, else ``len(raw)``, and
    ``headers_only`` to whether ``raw`` is a :class:`HeadersOnly`.
    """

    key: str
    raw: bytes
    size: int = -1
    headers_only: bool | None = None
    arrived: datetime | None = field(default=None, compare=False)  # added for issue 23: equality as before

    def __post_init__(self) -> None:
        if self.headers_only is None:
            object.__setattr__(self, "headers_only", isinstance(self.raw, HeadersOnly))
        if self.size < 0:
            size = self.raw.size if isinstance(self.raw, HeadersOnly) else len(self.raw)
            object.__setattr__(self, "size", size)
        if self.arrived is not None:
            object.__setattr__(self, "arrived", as_utc(self.arrived))


def as_utc(when: datetime) -> datetime:
    """``when`` in UTC, to the second (an IMAP INTERNALDATE has no finer
    part); a naive ``when`` is taken as the local time of this machine (what
    imapclient's ``normalise_times`` gives)."""
    return when.astimezone(timezone.utc).replace(microsecond=0)


class MailStream:
    """The mails waiting in an inbox, oldest first, read one batch at a time
    (:meth:`Inbox.stream`).

    ``keys`` (the mails' keys, in order) and ``sizes`` (``{key: bytes}``, as
    the store reports them; empty when the store tells a size only on reading)
    are known at once; iterating reads the mails themselves through
    ``read(keys) -> list[InboundMail]`` (a mail that vanished meanwhile is left
    out), a batch of less than ``batch_bytes`` bytes at a time (at least one
    mail; 0: one mail at a time; a mail over ``max_size`` counts as its headers
    only, a size not known as 0), so that no more than one batch is held here:
    memory is bounded by the inbox's size limit, not by the inbox.  Iterating
    again reads again.  Iterating raises TransportError when the store fails."""

    def __init__(self, keys: list[str], sizes: dict[str, int],
                 read: Callable[[list[str]], list["InboundMail"]], batch_bytes: int,
                 max_size: int | None = None) -> None:
        self.keys = list(keys)
        self.sizes = dict(sizes)
        self._read = read
        self.batch_bytes = int(batch_bytes)
        self.max_size = self.batch_bytes if max_size is None else int(max_size)

    @classmethod
    def of(cls, mails: list["InboundMail"]) -> "MailStream":
        """A stream of mails already read (for an inbox that only has ``fetch``)."""
        by_key = {m.key: m for m in mails}
        return cls([m.key for m in mails], {m.key: m.size for m in mails},
                   lambda keys: [by_key[k] for k in keys], batch_bytes=1 << 62)

    def __len__(self) -> int:
        return len(self.keys)

    def batches(self) -> Iterator[list[str]]:
        """The keys in order, cut into the batches iteration reads."""
        batch: list[str] = []
        total = 0
        for key in self.keys:
            size = self.sizes.get(key, 0)
            size = size if size <= self.max_size else 0  # headers only
            if batch and total + size >= self.batch_bytes:
                yield batch
                batch, total = [], 0
            batch.append(key)
            total += size
        if batch:
            yield batch

    def __iter__(self) -> Iterator["InboundMail"]:
        for batch in self.batches():
            mails = self._read(batch)
            while mails:
                yield mails.pop(0)  # handed on: not kept here


class TransportError(Exception):
    """A mail store or server could not be reached, logged in to, or talked to.

    The message names the host and port (or the path) and what failed.
    ``host``, ``port`` and ``path`` say where (``None`` when not applicable);
    ``code`` is the SMTP reply code (e.g. 450, 550) when the failure came
    with one, else ``None``: a ``4xx`` code is a temporary failure worth
    retrying later, a ``5xx`` one is permanent. ``step`` names what was being
    done when it failed (``"connect"``, ``"STARTTLS"``, ``"login as 'up'"``,
    ``"selecting 'INBOX'"`` ...) when the transport knows it, else ``None``; the
    library exception that caused it is ``__cause__`` (see :attr:`detail`).
    """

    def __init__(
        self,
        message: str,
        *,
        host: str | None = None,
        port: int | None = None,
        path: str | None = None,
        code: int | None = None,
        step: str | None = None,
    ) -> None:
        super().__init__(message)
        self.host = host
        self.port = port
        self.path = path
        self.code = code
        self.step = step

    @property
    def detail(self) -> str:
        """The underlying library error in one line (``"ConnectionRefusedError:
        [Errno 111] ..."``), or this error's own message when it has no cause."""
        cause = self.__cause__
        return describe_error(cause) if cause is not None else str(self)

    @property
    def temporary(self) -> bool:
        """True when the server answered with a 4xx (try again later) code."""
        return self.code is not None and 400 <= self.code < 500


class LoginRefused(TransportError):
    """The server answered but refused the login (wrong user name or password):
    IMAP ``NO`` to LOGIN (RFC 3501 6.2.3) or SMTP 535 to AUTH (RFC 4954).

    Retrying does not help; the operator has to fix the credentials.
    """


def check_security(security: str) -> str:
    """``security`` itself when it is one of :data:`SECURITY_MODES`.

    Raises ValueError otherwise.
    """
    if security not in SECURITY_MODES:
        raise ValueError(
            f"security must be one of {', '.join(SECURITY_MODES)}, not {security!r}"
        )
    return security


def describe_error(exc: BaseException) -> str:
    """A one-line description of a library exception for an error message:
    ``"TypeName: text"``, or just ``"TypeName"`` when the text is empty."""
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


# --------------------------------------------------------------------------
# Base classes
# --------------------------------------------------------------------------


class Inbox(abc.ABC):
    """Where incoming mail waits; subclasses are the concrete stores.

    Use as a context manager (``with MaildirInbox(...) as inbox:``) or call
    :meth:`close` when done.

    ``max_size`` (an attribute, also a constructor argument of the concrete
    inboxes; default :data:`DEFAULT_FETCH_LIMIT`): mails larger than this
    are fetched headers only (see :class:`InboundMail`), so a huge mail never
    sits in memory whole. Set it to the moderator's ``max_size`` (or above).
    """

    max_size: int = DEFAULT_FETCH_LIMIT

    @abc.abstractmethod
    def fetch(self) -> list[InboundMail]:
        """All mails currently in the inbox, oldest first; a mail larger than
        ``max_size`` with its headers only (``headers_only``, ``size``).

        Fetching does not change the mails (nothing is marked seen); a mail
        stays in the inbox, and comes back from the next fetch, until it is
        moved away with :meth:`mark_processed` or :meth:`mark_ignored`.

        Raises TransportError when the store cannot be read.
        """

    def stream(self) -> MailStream:
        """The mails currently in the inbox, oldest first, as a
        :class:`MailStream`: their keys and sizes now, the mails themselves
        read a batch at a time while iterating (as :meth:`fetch` reads them).
        This default reads them all with :meth:`fetch` first; the concrete
        inboxes read them as the iteration goes.  Raises TransportError."""
        return MailStream.of(self.fetch())

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

    def send_many(self, msgs: Iterable[EmailMessage],
                  on_result: Callable[[int, Exception | None], None] | None = None) -> list[Exception | None]:
        """Send several messages, carrying on past individual failures.

        Returns one entry per message, in order: ``None`` when it was sent,
        else the exception that :meth:`send` would have raised for it
        (ValueError or TransportError).  ``on_result(index, outcome)`` is
        called as soon as each message's outcome is known (the spool removes
        an accepted mail at once, before the next one is sent).
        """
        results: list[Exception | None] = []
        for i, msg in enumerate(msgs):
            try:
                self.send(msg)
            except (ValueError, TransportError) as exc:
                results.append(exc)
            else:
                results.append(None)
            if on_result is not None:
                on_result(i, results[-1])
        return results

    def close(self) -> None:
        """Release the transport. Calling it twice is fine."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

