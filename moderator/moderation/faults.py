"""Fault injection for the crash tests (``tests/test_faults.py``).

Each stage that writes to disk or the network marks its crash points with
``faults.fault(POINT)``; callers look the function up through the module
(``faults.fault``) so that a test may replace it.
"""
from __future__ import annotations

import os
import signal

_counts: dict[str, int] = {}

def fault(point: str) -> None:
    """When ``$PBEM_FAULT`` is ``POINT`` or ``POINT:N``, the process kills itself
    (SIGKILL) the N-th time (default 1st) it reaches ``point``: ``after-fetch``
    (the inbox listed and its first batch of mails read, none handled),
    ``after-apply``, ``after-save``, ``after-accept`` (the server accepted a mail, not
    yet removed from the spool), ``after-send`` or ``before-move``; in the
    clock stage (``clock.run_clock``, per game due) ``clock-tick`` (ticked,
    nothing written), ``clock-spooled`` (its notices spooled, the game not yet
    saved), ``clock-saved`` (saved, the bookkeeping transaction not yet
    committed) and ``clock-committed`` (committed, nothing sent yet); a
    player's vacation (``commands``) ``vacation-spooled`` and ``vacation-saved``;
    a game master's command (``gm.execute``) ``gm-spooled`` (its mails spooled,
    the game not saved); a sign-up mail (``signup.handle``) ``signup-spooled``
    (its answers spooled, its bookkeeping not committed); a player's press
    (``press.relay``) ``press-spooled`` (the relayed mails and the answer spooled, the
    game not saved); the daily digest (``digest.run``) ``digest-marked`` (its
    day committed, the digest not spooled) and ``digest-spooled`` (spooled, the
    held mails not yet removed).  Without the variable this does nothing."""
    spec = os.environ.get("PBEM_FAULT")
    if not spec:
        return
    name, _, n = spec.partition(":")
    if name != point:
        return
    _counts[point] = _counts.get(point, 0) + 1
    if _counts[point] == int(n or 1):
        os.kill(os.getpid(), signal.SIGKILL)
