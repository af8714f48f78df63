"""The command line's commands, grouped like the rooms of ``moderator/``
(``pbem.py`` is the click entry point and adds them to its group ``main``):

- ``games``: a game and its moderation (``new``, ``run``, ``replay``, ``gm``,
  ``rules``, ``show``, ``board check``, ``demo``);
- ``archive``: ``list``, ``archive``, ``export`` (``moderator/archive/``);
- ``mail``: ``auth login``, ``auth status`` (OAuth2, ``moderator/mail/oauth.py``);
- ``operator``: ``doctor``, ``spool``, ``bounces``, ``player set-address``,
  ``restore``, ``forget``, ``repair`` (``moderator/admin.py``, ``doctor.py``).

This package's modules import only click at module level: each command imports
what it uses when it runs, so ``pbem --help`` stays quick (``tests/test_startup.py``).
Here: the helpers the commands share.
"""
from __future__ import annotations

import click


def _config(ctx: click.Context, passwords: bool = True):
    """The configuration named by ``--config`` (or the default); a ConfigError
    becomes a ClickException (exit status 1).  ``passwords`` False: the mail
    passwords need not be set (commands that talk to no mail server)."""
    from moderator.config import ConfigError, load_config

    try:
        return load_config(ctx.obj.get("config"), passwords=passwords)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def _load(ctx: click.Context, game: str, check: bool = True):
    """The game record of GAME, or a clear error (exit status 1)."""
    from moderator.store.gamefile import GameStore, StoreError

    store = GameStore(_config(ctx, passwords=False).games_dir)
    try:
        return store.load(game, check=check)
    except (StoreError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _clock(now: str | None) -> dict:
    """The ``Moderator`` keywords for ``--now TIMESTAMP``: ``{"clock": ...}`` fixed
    at that time, or ``{}`` (the wall clock) when ``now`` is None."""
    if now is None:
        return {}
    fixed = _timestamp(now)
    return {"clock": lambda: fixed}


def _timestamp(text: str):
    """``--now TIMESTAMP`` as an aware ``datetime``: ISO 8601, UTC when no offset;
    click.BadParameter otherwise."""
    from datetime import datetime, timezone

    try:
        fixed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not an ISO 8601 time, e.g. 2026-12-24T18:00:00+00:00",
                                 param_hint="--now") from None
    return fixed if fixed.tzinfo is not None else fixed.replace(tzinfo=timezone.utc)
