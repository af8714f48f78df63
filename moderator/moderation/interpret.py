"""Interpret a mail: its identity, and its lines as commands and one order.

``mail_id`` names a mail (RFC 5322 Message-ID, else a hash of its bytes);
``interpret`` splits the order lines of an ``OrderMail`` into commands (``help``,
``status``, ``history``, ``rules``, ``secret new``) and order lines, and parses
the order lines into one action with the board's names (``parse_turn``).
Nothing here reads or writes a file.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable

from ..mail.read import OrderMail
from ..orders.parser import NoOrderFound, OrderError, command, parse_turn
from ..rules.actions import Action
from ..rules.board import Board


def mail_id(om: OrderMail, raw: bytes) -> str:
    """The identity of a mail: its Message-ID, else ``sha256:`` + hash of the bytes."""
    return om.message_id or "sha256:" + hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class Orders:
    """What a mail asks: ``commands`` (each once, in order of appearance), the
    other ``lines``, and those lines parsed: ``action`` when they are one valid
    turn, else ``error`` (an ``OrderError``; ``NoOrderFound`` when no line looks
    like an order).  Both None when there are no order lines."""

    commands: tuple[str, ...]
    lines: tuple[str, ...]
    action: Action | None = None
    error: OrderError | None = None

    @property
    def has_order(self) -> bool:
        """Whether some line is an order (valid or not): then it is applied or
        refused, and the commands are answered after it."""
        return self.action is not None or (self.error is not None and not isinstance(self.error, NoOrderFound))


def interpret(lines: Iterable[str], board: Board) -> Orders:
    """Split ``lines`` into commands and order lines and parse the order lines
    with ``board``'s names.  Never raises: a parse error is kept in ``error``."""
    lines = list(lines)
    commands = tuple(dict.fromkeys(c for c in (command(l) for l in lines) if c))
    orders = tuple(l for l in lines if command(l) is None)
    if not orders:
        return Orders(commands, orders)
    try:
        return Orders(commands, orders, action=parse_turn(list(orders), board))
    except OrderError as exc:
        return Orders(commands, orders, error=exc)
