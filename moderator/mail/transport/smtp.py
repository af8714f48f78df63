"""SMTP outbox: mail submission with aiosmtplib.

Mail is submitted as in RFC 6409 (port 587 with STARTTLS, RFC 3207) or over
implicit TLS (port 465, RFC 8314), logging in with AUTH (RFC 4954) when a user
name is configured. This is the only transport module that imports asyncio;
its methods are synchronous and run their own event loop.
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import ssl
from email.message import EmailMessage
from typing import Any, Callable, Coroutine, Iterable, Sequence, TypeVar

import aiosmtplib

from ..compose import seven_bit
from .base import (
    LoginRefused,
    Outbox,
    StoredMail,
    TransportError,
    check_security,
    describe_error,
    envelope_of,
)

__all__ = ["SmtpOutbox"]

T = TypeVar("T")


class SmtpOutbox(Outbox):
    """An outbox that submits mail to an SMTP server (with aiosmtplib).

    ``SmtpOutbox(host, port, username=None, password=None, security="ssl",
    timeout=30, ssl_context=None, oauth2=None)``

    - ``security``: ``"ssl"`` (implicit TLS, aiosmtplib ``use_tls``),
      ``"starttls"`` (aiosmtplib ``start_tls=True``; fails if the server does
      not offer it) or ``"none"`` (never upgrades).
    - ``username``/``password``: log in (AUTH) when both are given.
    - ``timeout``: seconds for connecting and for each server reply.
    - ``oauth2``: a callable returning an OAuth2 access token (e.g. a
      :class:`moderator.mail.oauth.TokenSource`); with a ``username`` and no
      ``password`` the login is ``AUTH XOAUTH2`` with a token asked for at
      each connection. It raises TransportError/LoginRefused when it has no
      token.

    Each :meth:`send` uses its own connection; :meth:`send_many` sends a
    batch over one. The methods are synchronous (each runs its own asyncio
    event loop), so they must not be called from a thread that is running an
    event loop (use ``asyncio.to_thread`` there).

    Raises ValueError for a bad ``security``, a username with neither
    password nor ``oauth2``, or a password or ``oauth2`` without username.
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
        oauth2: Callable[[], str] | None = None,
    ) -> None:
        if password is not None and oauth2 is not None:
            raise ValueError("give a password or oauth2, not both")
        if oauth2 is not None and username is None:
            raise ValueError("oauth2 needs a username")
        if oauth2 is None and (username is None) != (password is None):
            raise ValueError("give both username and password, or neither")
        self.host = host
        self.port = int(port)
        self.username = username
        self._password = password
        self.security = check_security(security)
        self.timeout = timeout
        self._ssl_context = ssl_context
        self._oauth2 = oauth2
        self._closed = False
        # keep_connection(): the connection and the event loop it lives on, kept
        # from one send_many to the next
        self._keep = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._kept: aiosmtplib.SMTP | None = None

    def keep_connection(self) -> None:
        """Keep the connection open from one :meth:`send_many` to the next
        (``pbem run --loop``: one connect, TLS and login for many cycles, as a
        mail client does) until :meth:`close`.  Before a batch the kept
        connection is checked with ``NOOP``; a connection the server closed
        meanwhile (RFC 5321 4.5.3.2.7: servers may close one idle for 5
        minutes), or any failure of it, is dropped and a new one opened, so
        that no mail is tried on a dead connection.  The methods stay
        synchronous: the connection lives on an event loop of this outbox's
        own."""
        self._keep = True

    def _where(self) -> str:
        return f"SMTP {self.host}:{self.port}"

    def _error(self, what: str, exc: BaseException, code: int | None = None) -> TransportError:
        if code is None:
            code = getattr(exc, "code", None)
            if not isinstance(code, int):
                code = None
        kind = LoginRefused if isinstance(exc, aiosmtplib.SMTPAuthenticationError) else TransportError
        return kind(
            f"{self._where()}: {what} failed: {describe_error(exc)}",
            host=self.host,
            port=self.port,
            code=code,
            step=what,
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

    def send_many(self, msgs: Iterable[EmailMessage],
                  on_result: Callable[[int, Exception | None], None] | None = None) -> list[Exception | None]:
        """Send messages in order over one connection.

        Returns one entry per message: ``None`` if it was accepted, else the
        ValueError/TransportError :meth:`send` would raise for it. A message
        refused by the server does not stop the others; after the connection
        drops, the remaining messages each get a TransportError.
        ``on_result(index, outcome)`` is called as soon as each message's
        outcome is known, before the next message is sent; when it returns
        True (the server's sending limit, say) the rest are not tried: each
        gets a TransportError without ``code``.  A refusal of the
        envelope sender (``MAIL FROM``) has ``step == "MAIL FROM"``.

        Raises TransportError (nothing sent) when connecting, TLS or login
        fails.
        """
        msgs = list(msgs)
        if not msgs:
            return []
        if self._closed:
            raise TransportError(f"{self._where()}: outbox is closed",
                                 host=self.host, port=self.port)
        if self._keep:
            _not_in_a_loop()
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
            return self._loop.run_until_complete(self._send_all(msgs, on_result))
        return _run(self._send_all(msgs, on_result))

    async def _connection(self) -> aiosmtplib.SMTP:
        """The kept connection when it still answers ``NOOP``, else a new one
        (kept when ``keep_connection`` was asked).  Raises as :meth:`_open`."""
        smtp, self._kept = self._kept, None
        if smtp is not None:
            try:
                if smtp.is_connected and (await smtp.noop()).code == 250:
                    return smtp
            except (aiosmtplib.SMTPException, OSError, asyncio.TimeoutError):
                pass
            smtp.close()
        smtp, _ = await self._open()
        return smtp

    async def _send_all(self, msgs: Sequence[EmailMessage],
                        on_result: Callable[[int, Exception | None], None] | None = None
                        ) -> list[Exception | None]:
        prepared: list[tuple[str, list[str]] | Exception] = []
        for msg in msgs:
            try:
                prepared.append(envelope_of(msg))
            except ValueError as exc:
                prepared.append(exc)
        if all(isinstance(item, Exception) for item in prepared):
            for i, item in enumerate(prepared):
                if on_result is not None:
                    on_result(i, item)  # type: ignore[arg-type]
            return list(prepared)  # type: ignore[arg-type]

        smtp = await self._connection() if self._keep else (await self._open())[0]
        results: list[Exception | None] = []
        kept = False
        try:
            for i, (msg, item) in enumerate(zip(msgs, prepared)):
                if isinstance(item, Exception):
                    results.append(item)
                else:
                    sender, recipients = item
                    results.append(await self._send_one(smtp, msg, sender, recipients))
                if on_result is not None and on_result(i, results[-1]) is True:
                    break
            # kept only when every mail went through (a refusal may have left the
            # session in any state: the next batch starts on a new connection)
            kept = self._keep and smtp.is_connected and all(r is None or isinstance(r, ValueError)
                                                            for r in results)
        finally:
            if kept:
                self._kept = smtp
            else:
                await _quit(smtp)
        for i in range(len(results), len(msgs)):  # not tried: the caller stopped the batch
            results.append(TransportError(f"{self._where()}: not tried (the batch was stopped)",
                                          host=self.host, port=self.port, step="stopped"))
            if on_result is not None:
                on_result(i, results[-1])
        return results

    async def _open(self, ehlo: bool = False) -> tuple[aiosmtplib.SMTP, Any]:
        """A connection (TLS as ``security`` says) that has logged in when a
        username is set, and the reply to an explicit EHLO when ``ehlo``.
        Raises TransportError/LoginRefused naming the failed step."""
        smtp = aiosmtplib.SMTP(
            hostname=self.host,
            port=self.port,
            timeout=self.timeout,
            use_tls=self.security == "ssl",
            start_tls=self.security == "starttls",
            tls_context=self._ssl_context,
        )
        step = "connect"
        response = None
        try:
            await smtp.connect()
            if ehlo:
                step = "EHLO"
                response = await smtp.ehlo()
            if self.username is not None and self._oauth2 is not None:
                step = "getting an OAuth2 access token"
                token = await asyncio.to_thread(self._oauth2)
                step = f"XOAUTH2 login as {self.username!r}"
                try:
                    await _auth_xoauth2(smtp, self.username, token)
                except aiosmtplib.SMTPAuthenticationError as exc:
                    await self._xoauth2_again(smtp, exc)
                accepted = getattr(self._oauth2, "accepted", None)
                if accepted is not None:
                    await asyncio.to_thread(accepted, f"SMTP {self.host}:{self.port}")
            elif self.username is not None:
                step = f"login as {self.username!r}"
                await smtp.login(self.username, self._password)
        except TransportError:  # from oauth2: no token
            smtp.close()
            raise
        except (aiosmtplib.SMTPException, OSError, asyncio.TimeoutError) as exc:
            smtp.close()
            raise self._error(step, exc) from exc
        return smtp, response

    async def _xoauth2_again(self, smtp: aiosmtplib.SMTP, exc: aiosmtplib.SMTPAuthenticationError) -> None:
        """The server refused the access token (535): when ``oauth2`` can
        refresh on a refusal (:meth:`moderator.mail.oauth.TokenSource.refused`),
        AUTH once more with a freshly refreshed token.  Raises ``exc`` when it
        cannot, TransportError/OAuthRefused when the refresh fails (naming
        ``pbem auth login PROVIDER``), LoginRefused when the fresh token is
        refused too."""
        server = f"SMTP {self.host}:{self.port}"
        refresh = getattr(self._oauth2, "refused", None)
        if refresh is None:
            raise exc
        token = await asyncio.to_thread(refresh, server, describe_error(exc))
        try:
            await _auth_xoauth2(smtp, self.username, token)
        except aiosmtplib.SMTPAuthenticationError as again:
            said = describe_error(again)
            remember = getattr(self._oauth2, "record_login", None)
            if remember is not None:
                await asyncio.to_thread(remember, server, False, said, True)
            command = getattr(self._oauth2, "login_command", "pbem auth login")
            raise LoginRefused(f"{self._where()}: XOAUTH2 login as {self.username!r} failed: the server refused "
                               f"a freshly refreshed access token too ({said}): the sign-in gives no access "
                               f"to this account; run  {command}", host=self.host, port=self.port,
                               code=again.code, step=f"XOAUTH2 login as {self.username!r}") from again

    @classmethod
    def probe(
        cls,
        host: str,
        port: int,
        username: str | None = None,
        password: str | None = None,
        security: str = "ssl",
        timeout: float = 30,
        ssl_context: ssl.SSLContext | None = None,
        oauth2: Callable[[], str] | None = None,
    ) -> dict[str, Any]:
        """Connect, say EHLO and log in (when a username is given), send nothing.

        Takes the constructor's arguments. Returns ``{"ehlo_code": int (the
        EHLO reply code, RFC 5321 4.1.1.1), "extensions": [str] (the EHLO
        keywords, upper case, sorted), "tls": bool (the connection is
        encrypted: implicit TLS, RFC 8314, or STARTTLS, RFC 3207),
        "auth_mechanisms": [str] (the AUTH mechanisms offered, RFC 4954),
        "login": bool | None (True when the login worked, None when no
        username is configured)}``.

        Raises LoginRefused when the server refuses the login,
        TransportError when connecting, TLS or EHLO fails (``.step`` says
        which, ``.detail`` the library error); ValueError for bad arguments.
        """
        return _run(cls(host, port, username, password, security, timeout, ssl_context,
                        oauth2)._probe())

    async def _probe(self) -> dict[str, Any]:
        smtp, response = await self._open(ehlo=True)
        try:
            return {
                "ehlo_code": int(response.code),
                "extensions": sorted(k.upper() for k in smtp.esmtp_extensions),
                "tls": self.security != "none",
                "auth_mechanisms": sorted(m.upper() for m in smtp.server_auth_methods),
                "login": True if self.username is not None else None,
            }
        finally:
            await _quit(smtp)

    async def _send_one(
        self, smtp: aiosmtplib.SMTP, msg: EmailMessage, sender: str, recipients: list[str]
    ) -> TransportError | None:
        def what() -> str:  # for an error only: the Subject is parsed then
            return f"sending {msg.get('Subject', '')!r} from {sender} to {', '.join(recipients)}"

        if not smtp.is_connected:
            return TransportError(f"{self._where()}: {what()} failed: connection lost",
                                  host=self.host, port=self.port)
        try:
            raw = await _as_stored(smtp, msg, sender, recipients)
            if raw is not None:  # the stored bytes, not parsed and flattened again
                refused, _ = await smtp.sendmail(sender, recipients, raw, mail_options=["BODY=8BITMIME"])
            else:
                if isinstance(msg, StoredMail):  # flattened anew: parsed whole first
                    msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(msg.raw)
                if not smtp.supports_extension("8BITMIME"):  # RFC 6152: no 8-bit data to it
                    msg = seven_bit(msg)
                refused, _ = await smtp.send_message(msg, sender=sender, recipients=recipients)
        except aiosmtplib.SMTPRecipientsRefused as exc:
            first = exc.recipients[0] if exc.recipients else None
            detail = "; ".join(f"{r.recipient}: {r.code} {r.message}" for r in exc.recipients)
            return TransportError(
                f"{self._where()}: {what()} failed: all recipients refused ({detail})",
                host=self.host, port=self.port, code=first.code if first else None,
            )
        except aiosmtplib.SMTPSenderRefused as exc:
            error = self._error(what(), exc)
            error.step = "MAIL FROM"
            return error
        except (aiosmtplib.SMTPException, OSError, asyncio.TimeoutError) as exc:
            return self._error(what(), exc)
        if refused:
            detail = "; ".join(f"{addr}: {resp.code} {resp.message}" for addr, resp in refused.items())
            first = next(iter(refused.values()))
            return TransportError(
                f"{self._where()}: {what()}: accepted for some recipients but refused for {detail}",
                host=self.host, port=self.port, code=first.code,
            )
        return None

    def close(self) -> None:
        """Mark the outbox closed; later sends raise TransportError.  A kept
        connection (``keep_connection``) says QUIT."""
        self._closed = True
        smtp, self._kept = self._kept, None
        loop, self._loop = self._loop, None
        if loop is not None:
            try:
                if smtp is not None:
                    loop.run_until_complete(_quit(smtp))
            finally:
                loop.close()

    def __repr__(self) -> str:
        return (f"SmtpOutbox({self.host!r}, {self.port}, username={self.username!r}, "
                f"security={self.security!r})")


async def _as_stored(smtp: aiosmtplib.SMTP, msg: EmailMessage, sender: str,
                     recipients: list[str]) -> bytes | None:
    """The bytes to submit as they are for a ``StoredMail`` (``msg.raw``) that
    ``send_message`` would send unchanged: ASCII addresses (no SMTPUTF8), no
    ``Bcc``/``Resent-Bcc`` to strip, and a server that takes 8BITMIME (the
    stored bytes may hold 8-bit text); else None (then the mail goes through
    ``send_message``, a ``StoredMail`` parsed whole first).  Says EHLO first
    if needed (raises as ``send_message`` would)."""
    if not isinstance(msg, StoredMail):
        return None
    if smtp.is_ehlo_or_helo_needed:
        try:
            await smtp.ehlo()
        except aiosmtplib.SMTPHeloError:
            await smtp.helo()
    if (not smtp.supports_extension("8BITMIME") or not (sender + "".join(recipients)).isascii()
            or "Bcc" in msg or "Resent-Bcc" in msg):
        return None
    return msg.raw


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a new event loop; RuntimeError (and ``coro`` closed)
    when called from a thread that is already running one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise RuntimeError("SmtpOutbox is synchronous; call it outside the "
                       "event loop's thread (e.g. asyncio.to_thread)")


def _not_in_a_loop() -> None:
    """RuntimeError when called from a thread that is running an event loop
    (as ``_run``)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError("SmtpOutbox is synchronous; call it outside the "
                       "event loop's thread (e.g. asyncio.to_thread)")


async def _auth_xoauth2(smtp: aiosmtplib.SMTP, username: str, token: str) -> None:
    """``AUTH XOAUTH2`` with the initial response (RFC 4954; the SASL string
    of Google's and Microsoft's XOAUTH2). A refusal comes as a 334 challenge
    holding a JSON error, answered with an empty line to get the final
    reply. Raises SMTPAuthenticationError unless the reply is 235
    (recent aiosmtplib versions have the same as ``SMTP.auth_xoauth2``; done
    here so that the older versions allowed by setup.cfg work too)."""
    import base64

    if smtp.last_ehlo_response is None:
        await smtp.ehlo()
    initial = base64.b64encode(f"user={username}\x01auth=Bearer {token}\x01\x01".encode())
    response = await smtp.execute_command(b"AUTH", b"XOAUTH2", initial)
    if response.code == 334:
        response = await smtp.execute_command(b"")
    if response.code != 235:
        raise aiosmtplib.SMTPAuthenticationError(response.code, response.message)


async def _quit(smtp: aiosmtplib.SMTP) -> None:
    """Say QUIT if still connected; drop the connection when that fails."""
    if smtp.is_connected:
        try:
            await smtp.quit()
        except (aiosmtplib.SMTPException, OSError, asyncio.TimeoutError):
            smtp.close()
