"""What the moderator does with one mail: a verdict, decided by ``decide`` and
carried out by ``act``.

Verdicts are values (frozen dataclasses).  Every verdict carries ``key``, the
identity of the mail it answers (its Message-ID, else its delivery key, see
``interpret.mail_id``): the replies it causes are spooled under ``reply_key`` and
the answers to its commands under ``key + "#commands"`` (``commands_key``), so
that a mail is answered once even across interrupted cycles.  Only mails of
authenticated players enter the duplicate record under ``key`` itself (applied,
or answered); an answer to an unauthenticated sender is recorded under ``key +
"#unauthenticated"``, so that a forged mail cannot block the real player's mail
that carries the same Message-ID.

``reason`` names why (a notice of ``templates/words/notices.txt`` for ``Refuse``;
a name for the log otherwise).  ``outcome`` is the inbox folder the mail goes
to: ``"processed"`` or ``"ignored"``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping

from ..rules.actions import Action

ANSWERED = "answered"
"""``Duplicate.reason``: the mail was answered in an earlier, interrupted cycle."""
UNAUTHENTICATED = "#unauthenticated"
"""Suffix of ``Verdict.reply_key`` for answers to mails whose sender is not
authenticated: they are answered once, but their key is never a duplicate of the
real player's mail."""
ALREADY_APPLIED = "already_applied"
"""``Duplicate.reason``: the mail's order is in the game's history already."""


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The base of every verdict: ``key`` is the mail id its answers are kept under."""

    key: str
    # press (issue 29): the messages below the mail's orders (``press.Split``), relayed
    # after the verdict is carried out (``act``); None: none, or not an authenticated player's
    press: Any = field(default=None, compare=False)

    @property
    def commands_key(self) -> str:
        """The key the answers to the mail's commands are kept under."""
        return self.key + "#commands"

    @property
    def reply_key(self) -> str:
        """The key the verdict's reply is recorded under: ``key`` itself only for an
        answer to an authenticated player (see ``Refuse.reply_key``)."""
        return self.key

    @property
    def outcome(self) -> str:
        """The folder the mail goes to: ``"processed"`` (default) or ``"ignored"``."""
        return "processed"


@dataclass(frozen=True, kw_only=True)
class Ignore(Verdict):
    """Do not answer the mail (RFC 3834: machine mail; no backscatter to strangers).

    ``reason``: ``machine_mail`` (``detail``: why, from ``read_mail``),
    ``no_sender``, ``stranger_unreadable`` (an unreadable or oversized mail from an
    address that plays no game), ``stranger_no_game``, or ``sender_unregistered``
    (the From address is no player of ``game_id``; ``warn`` names the player whose
    secret the mail carried: they are told, the sender is not)."""

    reason: str
    sender: str = ""
    detail: str = ""
    game_id: str | None = None
    warn: str | None = None

    @property
    def reply_key(self) -> str:
        # the warning to the player named is no answer to the sender: it must not
        # make the mail's key (a Message-ID anyone can copy) a duplicate
        return self.key + UNAUTHENTICATED

    @property
    def outcome(self) -> str:
        return "ignored"


@dataclass(frozen=True, kw_only=True)
class RecordBounce(Verdict):
    """A bounce notice (an RFC 3464 report or a plain notice, ``mail/bounces.py``)
    for ``address``, from ``sender``: not answered; remembered, shown in that
    player's next status mail, by ``pbem bounces list`` and doctor, and told to
    the game master.

    ``address``: the canonical address that failed (``''`` until a player is
    matched, when the notice names no failed recipient in its fields);
    ``ours``: the Message-IDs of ours it quotes; ``recipients``: the failed
    addresses its fields name; ``game_id``: the game of the first of ``ours``
    (None: none quoted); ``player``: the player matched by the token of
    ``ours`` (``decide.bounce_in_game``), else None; ``status``: the server's
    reason as it wrote it; ``form``: how the notice was told (``Bounce.form``)."""

    address: str
    sender: str = ""
    # what the notice says beyond the address (not compared: equality keeps its old meaning)
    ours: tuple[str, ...] = field(default=(), compare=False)
    recipients: tuple[str, ...] = field(default=(), compare=False)
    game_id: str | None = field(default=None, compare=False)
    player: str | None = field(default=None, compare=False)
    status: str = field(default="", compare=False)
    form: str = field(default="", compare=False)

    @property
    def outcome(self) -> str:
        return "ignored"


@dataclass(frozen=True, kw_only=True)
class Duplicate(Verdict):
    """The mail was handled before.  ``reason``: ``answered`` (answered in an earlier
    cycle; nothing to do) or ``already_applied`` (its order is applied; the
    ``commands`` not yet answered are answered now)."""

    reason: str
    game_id: str | None = None
    player: str | None = None
    commands: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Refuse(Verdict):
    """Answer ``to`` why nothing changed, with the notice ``reason`` and its
    ``values`` (``templates/words/notices.txt``; the reply's title is the notice
    ``reason + "_title"``).

    For an order: ``player`` who sent it, the order lines ``orders`` (``failed``
    the one that could not be read), ``legal`` what the engine says is legal
    instead: complete orders in the game's notation, or ``summary`` (the
    engine's ``LegalSummary``, builds of company ``first`` first), both worded
    for the player by ``render.legal``; ``with_legal`` adds what is legal now
    when neither is given;
    ``position`` adds the unchanged position.  ``commands`` beside the order are
    answered after the refusal; ``repeat_commands``: they were answered before.
    ``kinds``: what the mail reader made of each line of ``orders``
    (``OrderMail.kinds``: the reply says why a signature line was not read).
    ``orderless``: the mail had no order and no command (a vacation responder?):
    such answers are limited per sender, game and day.  ``addressee``: the
    registered player an unauthenticated refusal goes to (``secret_wrong``):
    the reply carries their tag and goes to their registered address.
    ``words``: the words file (``templates/words/WORDS.txt``) of ``reason`` and
    ``reason + "_title"``: ``notices``, or ``limits`` (the mail's size, too
    many lines, an order in the Subject only)."""

    reason: str
    to: str
    game_id: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    player: str | None = None
    orders: tuple[str, ...] = ()
    failed: str = ""
    legal: tuple[str, ...] = ()
    with_legal: bool = False
    position: bool = False
    commands: tuple[str, ...] = ()
    repeat_commands: bool = False
    # added for issue 12; not compared, so that equality keeps its old meaning
    kinds: tuple[str, ...] = field(default=(), compare=False)
    orderless: bool = field(default=False, compare=False)
    addressee: str | None = field(default=None, compare=False)
    summary: Any = field(default=None, compare=False)
    first: str | None = field(default=None, compare=False)
    words: str = field(default="notices", compare=False)

    @property
    def authenticated(self) -> bool:
        """Whether the refusal answers an authenticated player (right address and
        secret): only then does it enter the duplicate record under ``key``."""
        return self.player is not None

    @property
    def reply_key(self) -> str:
        # a refusal of an unauthenticated mail (a forged From, a wrong secret, an
        # unreadable mail) is kept apart: the same Message-ID from the real player
        # is still new
        return self.key if self.authenticated else self.key + UNAUTHENTICATED

    @property
    def outcome(self) -> str:
        # a mail that could not be read at all is set aside with the machine mail
        return "ignored" if self.reason in ("mail_too_large", "mail_unreadable") else "processed"


@dataclass(frozen=True, kw_only=True)
class Apply(Verdict):
    """Apply ``action`` (legal now: checked with ``Game.resolve``; read from the
    lines ``orders``) for ``player`` of ``game_id``, save the game file, then answer ``commands`` (``status`` is left
    out: the status mail follows the order); ``repeat_commands``: they were
    answered before.  ``unread``: ``(line, kind)`` of the mail's lines the turn was
    not read from (the whole set was no turn, see ``interpret``): the player is
    told in a short reply.  ``arrived``: when the mail reached the mailbox (UTC),
    kept as the history entry's ``arrived``; None when not known.
    ``alternatives``: the order's text when it named several choices (``or``) or
    a standing choice filled it in (the history's ``alternatives``), ``tried``:
    ``[(order, IllegalAction or None)]`` of ``advance.first_legal``."""

    game_id: str
    player: str
    action: Action
    orders: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    repeat_commands: bool = False
    unread: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    arrived: datetime | None = field(default=None, compare=False)
    alternatives: str | None = field(default=None, compare=False)
    tried: tuple = field(default=(), compare=False)


@dataclass(frozen=True, kw_only=True)
class Answer(Verdict):
    """A mail of commands only: answer ``commands`` of ``player`` in ``game_id``;
    ``repeat_commands``: they were answered before (then ``commands`` is empty)."""

    game_id: str
    player: str
    commands: tuple[str, ...] = ()
    repeat_commands: bool = False


@dataclass(frozen=True, kw_only=True)
class Manage(Verdict):
    """A mail of ``game_id``'s game master (their address and secret): carry out
    its lines as game-master commands (``moderation/gm.py``) and answer them."""

    game_id: str
    by: str


@dataclass(frozen=True, kw_only=True)
class Decline(Verdict):
    """Answer ``to`` that the mail is not taken, with the notice ``reason`` of
    ``templates/words/gm.txt`` (its title ``reason + "_title"``): ``gm_only`` (a
    player wrote a game-master command), ``observer_no_orders``,
    ``gm_secret_wrong``, ``resigned_no_orders``, ``game_ended_no_orders``.
    ``player``: the authenticated player it answers (None: the answer is kept
    apart from the duplicate record, as ``Refuse.reply_key``)."""

    reason: str
    to: str
    game_id: str
    player: str | None = None

    @property
    def reply_key(self) -> str:
        return self.key if self.player is not None else self.key + UNAUTHENTICATED


@dataclass(frozen=True, kw_only=True)
class Relay(Verdict):
    """A mail of ``player`` of ``game_id`` with messages to relay (``press``, see
    ``moderation/press.py``) and no order or command."""

    game_id: str
    player: str
