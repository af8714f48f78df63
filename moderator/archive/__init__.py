"""The archive of game histories: ``pbem list`` (one line per game), ``pbem archive``
(a static HTML site of every game, ``site.py``) and ``pbem export`` (one game as a
self-contained file, ``export.py``).

Everything here reads game files through ``moderator.store.gamefile.GameStore`` and
shows only what every player may know: never a hand, a deck, a secret, the share
returned in an UP swap, an initial investment not yet revealed, or an address.
See docs/archive.md.
"""
