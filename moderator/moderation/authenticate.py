"""Authenticate a mail within its game: the From address must be a player's
(compared canonically) and the secret must be that player's (constant-time).

A mail from an address that is no player is ignored (no backscatter); if it
carried a player's secret, that player is warned.  A player's mail without
their secret is refused.  Reads nothing but the loaded game.
"""
from __future__ import annotations

from ..mail.read import OrderMail
from ..store.gamefile import GameRecord, Player
from .route import same_secret
from .verdict import Ignore, Refuse, Verdict


def authenticate(om: OrderMail, key: str, record: GameRecord) -> Player | Verdict:
    """The player who sent ``om`` (the mail ``key``) to ``record``'s game, or the
    verdict on a mail that is not theirs: ``Ignore(reason="sender_unregistered")``
    or ``Refuse(reason="secret_wrong")``."""
    player = record.player_by_address(om.sender)
    if player is None:
        named = next((p for p in record.players if p.address and same_secret(p.secret, om.secret)), None)
        return Ignore(key=key, reason="sender_unregistered", sender=om.sender, game_id=record.id,
                      warn=named.name if named else None)
    if not same_secret(player.secret, om.secret):
        return Refuse(key=key, reason="secret_wrong", to=player.address, game_id=record.id,
                      addressee=player.name)
    return player
