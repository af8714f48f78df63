"""Mail transports: where the moderator reads orders from and sends mail to.

One module per transport, so that a process imports only the libraries of the
transports it uses:

- :mod:`.base`: :class:`Inbox`, :class:`Outbox`, :class:`InboundMail`, :class:`StoredMail`,
  :class:`TransportError`, :class:`LoginRefused`, :func:`envelope_of`
  (standard library only);
- :mod:`.maildir`: ``MaildirInbox``, ``MaildirOutbox`` (standard library only);
- :mod:`.imap`: ``ImapInbox`` (imports imapclient);
- :mod:`.smtp`: ``SmtpOutbox`` (imports aiosmtplib and asyncio).

This package re-exports the base names. The concrete classes are best imported
from their modules (``from moderator.mail.transport.imap import ImapInbox``);
reaching them as attributes of this package (``transport.ImapInbox``) still
works and imports their module on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import base
from .base import (
    DEFAULT_FETCH_LIMIT,
    SECURITY_MODES,
    HeadersOnly,
    InboundMail,
    Inbox,
    MailStream,
    LoginRefused,
    Outbox,
    StoredMail,
    TransportError,
    check_security,
    describe_error,
    envelope_of,
)

__all__ = list(base.__all__)

_CONCRETE = {
    "MaildirInbox": "maildir",
    "MaildirOutbox": "maildir",
    "ImapInbox": "imap",
    "SmtpOutbox": "smtp",
}


def __getattr__(name: str) -> Any:
    """The concrete transport classes, imported from their module on first use
    (PEP 562); AttributeError for any other unknown name."""
    module = _CONCRETE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
