"""List-Unsubscribe (RFC 2369) and one-click unsubscribe (RFC 8058) on the
mails a person may want to stop without a game's thread: the daily digest
and the substitute pool's offers (issue 28).

``add_headers`` writes ``List-Unsubscribe: <mailto:MODERATOR?subject=unsubscribe%20TOKEN>``
and, when the operator configured an HTTPS ``unsubscribe_url``, also
``<URL?t=TOKEN>`` and ``List-Unsubscribe-Post: List-Unsubscribe=One-Click``
(RFC 8058 section 3.1 needs an HTTPS URI for the POST; pbem runs no web server:
the operator's web hook calls ``pbem unsubscribe TOKEN``).  ``token_in`` finds
the token in a mail that a mail program sent for the ``mailto`` URI (Gmail,
Yahoo and Apple Mail send a mail from the reader's address with the URI's
subject, ``unsubscribe TOKEN``, and a body of their own; some add a prefix).
Both headers must be covered by the operator MTA's DKIM signature (RFC 8058
section 4: ``h=`` names them), see docs/operations.md.
"""
from __future__ import annotations

import re
from email.message import EmailMessage
from urllib.parse import quote, urlencode, urlsplit, urlunsplit, parse_qsl

TOKEN_RE = re.compile(r"\bunsubscribe[\s:]+([A-Za-z0-9_-]{20,64})(?![A-Za-z0-9_-])", re.IGNORECASE)
"""``unsubscribe TOKEN`` in a Subject or a body line (case ignored)."""


def mailto(moderator_address: str, token: str) -> str:
    """The ``mailto`` URI of ``token`` (RFC 6068): ``mailto:ADDR?subject=unsubscribe%20TOKEN``."""
    return f"mailto:{moderator_address}?subject={quote('unsubscribe ' + token)}"


def one_click(url: str, token: str) -> str:
    """``url`` (HTTPS) with the query parameter ``t=TOKEN`` added (kept: its own query)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True) + [("t", token)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def add_headers(msg: EmailMessage, moderator_address: str, token: str, url: str | None = None) -> None:
    """Put ``List-Unsubscribe`` (and with an HTTPS ``url`` also
    ``List-Unsubscribe-Post: List-Unsubscribe=One-Click``) on ``msg``, replacing
    any.  RFC 2369 section 3.2 (angle brackets, comma-separated), RFC 8058."""
    uris = [f"<{mailto(moderator_address, token)}>"]
    if url:
        uris.insert(0, f"<{one_click(url, token)}>")
    for name in ("List-Unsubscribe", "List-Unsubscribe-Post"):
        del msg[name]
    msg["List-Unsubscribe"] = ", ".join(uris)
    if url:
        msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"


def token_in(subject: str, lines: list[str] | tuple[str, ...] = ()) -> str | None:
    """The token of ``unsubscribe TOKEN`` in ``subject``, else in the first of
    ``lines`` (the body) that has one; None when neither has."""
    for text in [subject or "", *lines]:
        found = TOKEN_RE.search(text or "")
        if found:
            return found.group(1)
    return None
