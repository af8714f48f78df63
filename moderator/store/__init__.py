"""Storage: game files (the YAML archive), the outgoing spool and the moderator's bookkeeping.

``GAME_ID_PATTERN`` is the one pattern of a game id, used by the store (file names),
mail reading (the subject tag) and routing (our Message-IDs)."""

GAME_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}"
"""A game id: a letter or digit, then up to 39 letters, digits, ``_``, ``.``, ``-``."""
