"""``pbem auth login``, ``auth status``: OAuth2 for the mail servers
(``moderator/mail/oauth.py``)."""
from __future__ import annotations

import click

from . import _config


@click.group()
def auth():
    """OAuth2 sign-in for the mail servers (imap/smtp auth: oauth2)."""


def _oauth(ctx: click.Context, provider: str | None = None):
    """``(settings, username)`` of the configuration's oauth section; a clear
    error when there is none or it names another provider."""
    config = _config(ctx)
    if config.oauth is None:
        raise click.ClickException(
            "the configuration has no oauth section: add one (provider, client_id, token_file; "
            "see docs/operations.md) and set auth: oauth2 for imap and smtp")
    if provider is not None and provider != config.oauth.provider:
        raise click.ClickException(f"the configuration's oauth.provider is {config.oauth.provider}, "
                                   f"not {provider}")
    server = next((s for s in (config.imap, config.smtp) if s is not None and s.auth == "oauth2"), None)
    return config.oauth, server.username if server is not None else None


def _when(moment) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "unknown"


@auth.command("login")
@click.argument("provider", type=click.Choice(["microsoft", "google", "generic"]))
@click.option("--port", type=click.IntRange(0, 65535), default=0,
              help="google: the loopback port the browser returns to (default: any free one).")
@click.pass_context
def auth_login(ctx, provider, port):
    """Sign in once and store the refresh token in the token file (mode 0600):
    microsoft and generic with a device code (a URL and a code to enter in any
    browser); google in a browser that returns to this machine (Google refuses
    its mail scope to device codes)."""
    from moderator.mail.oauth import OAuthError, browser_login, device_login

    settings, _ = _oauth(ctx, provider)
    try:
        if provider == "google":
            found = browser_login(settings, echo=click.echo, port=port)
        else:
            found = device_login(settings, echo=click.echo)
    except OAuthError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot write {settings.token_file}: {exc.strerror or exc}") from None
    who = f" as {found['account']}" if found["account"] else ""
    click.echo(f"Signed in{who}. The refresh token is in {settings.token_file} (mode 0600); "
               f"each cycle gets new access tokens with it.")


@auth.command("status")
@click.pass_context
def auth_status(ctx):
    """Show the stored sign-in and get a fresh access token with it (exit 1 when
    that fails)."""
    from moderator.mail.oauth import OAuthError, TokenSource

    settings, username = _oauth(ctx)
    source = TokenSource(settings, username)
    try:
        found = source.status()
    except OAuthError as exc:
        try:  # what a mail server said last, when the file says it
            last = source.load().get("last_login")
        except OAuthError:
            last = None
        said = ""
        if isinstance(last, dict) and not last.get("ok"):
            said = (f"\nLast login: {last.get('server')} refused the access token at "
                    f"{str(last.get('at', '')).replace('T', ' ')}: {last.get('said', '')}")
        raise click.ClickException(f"{exc}{said}") from None
    click.echo(f"{found['provider']} sign-in of {found['account'] or username or 'an unnamed account'} "
               f"in {settings.token_file}, made {_when(found['obtained'])}; "
               f"access token valid until {_when(found['expiry'])}.")
    last = found.get("last_login")
    if last is not None and last["ok"]:
        click.echo(f"Last login: {last['server']} accepted the access token at {_when(last['at'])}.")
    elif last is not None:
        click.echo(f"Last login: {last['server']} refused the access token at {_when(last['at'])}: "
                   f"{last['said']}" + ("" if last["said"].endswith(".") else "."))
