"""Authenticate a mail within its game: the From address must be a player's
(compared canonically), and the mail must carry that player's proof: a
Message-ID of a mail the moderator sent them in its In-Reply-To or References
(its token, ``mail/threads.py``: what hitting Reply gives), else their secret
(a ``secret:`` line, or the old Subject tag ``[pbem:GAME:SECRET]``; compared in
constant time).

A mail from an address that is no player is ignored (no backscatter); if it
carried a player's secret or token, that player is warned.  A player's mail
without their own proof is refused (another player's token is no proof).
Reads nothing but the loaded game.
"""
from __future__ import annotations

from ..mail.read import OrderMail
from ..mail.threads import carries_token
from ..store.gamefile import GameRecord, Player
from .route import same_secret
from .verdict import Ignore, Refuse, Verdict


def proves(om: OrderMail, game_id: str, player: Player) -> bool:
    """Whether ``om`` carries ``player``'s proof for game ``game_id``: the token of
    their current secret in In-Reply-To or References, or the secret itself."""
    refs = om.thread_refs
    return carries_token(refs, game_id, player.secret) or same_secret(player.secret, om.secret)


def authenticate(om: OrderMail, key: str, record: GameRecord) -> Player | Verdict:
    """The player who sent ``om`` (the mail ``key``) to ``record``'s game, or the
    verdict on a mail that is not theirs: ``Ignore(reason="sender_unregistered")``
    (``warn``: the player whose secret or token it carried) or
    ``Refuse(reason="secret_wrong")``."""
    player = record.player_by_address(om.sender)
    if player is None:
        named = next((p for p in record.players if p.address and proves(om, record.id, p)), None)
        return Ignore(key=key, reason="sender_unregistered", sender=om.sender, game_id=record.id,
                      warn=named.name if named else None)
    if not proves(om, record.id, player):
        return Refuse(key=key, reason="secret_wrong", to=player.address, game_id=record.id,
                      addressee=player.name)
    return player
