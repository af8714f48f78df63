"""Storage: game files (the YAML archive), the outgoing spool and the moderator's bookkeeping.

One module a job:

- ``files``: durable writes (``atomic_write``, ``fsync_dir``);
- ``gamefile``: game files (``GameRecord``, ``GameStore``, ``FORMAT``, ``MIGRATIONS``,
  ``migrate``, ``replay`` with the strict notation); the format is documented in
  ``docs/game-file.md``;
- ``spool``: the outgoing mail spool (``Spool``);
- ``bookkeeping``: the moderator's own bookkeeping in SQLite (``Bookkeeping``,
  ``spool/pbem.sqlite3``: answered mails, alerts, bounces, the IMAP inbox memory)
  plus the games index (routing, games owing mail, the digest of each file the
  moderator wrote, so that an unchanged file loads without a replay);
- ``state``: the reader of the older YAML bookkeeping (``ModeratorState``,
  ``spool/moderator.yaml``), which ``bookkeeping`` imports on first open.

Moved names stay importable from their old modules: ``atomic_write`` and
``fsync_dir`` from ``gamefile``, ``ModeratorState`` from ``spool``.

``GAME_ID_PATTERN`` is the one pattern of a game id, used by the store (file names),
mail reading (the subject tag) and routing (our Message-IDs)."""

GAME_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}"
"""A game id: a letter or digit, then up to 39 letters, digits, ``_``, ``.``, ``-``."""
