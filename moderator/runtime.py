"""Settings of a moderator process (``pbem run``), applied once at start-up.

Python's cyclic garbage collector runs a young collection whenever 700 more
container objects (lists, dicts, tuples ...) were made than freed.  One order at
turn 150 keeps about a thousand alive at once (the game file's mapping, its
history and log, the game), against a few hundred at turn 1, so the collector ran
about once per order late in a game and never early: about 0.1 ms an order, and
now and then an older collection of a millisecond (benchmarks/bench_turns.py).
What a cycle makes it frees again by reference counting; the collector only finds
cycles, which a cycle makes few of.  So a moderator process collects less often
(``GEN0_THRESHOLD``) and leaves what it imported at start-up out of every
collection (``gc.freeze``): the modules, classes and functions live as long as
the process.
"""
from __future__ import annotations

import gc

GEN0_THRESHOLD = 10_000
"""Container objects made (net) between young collections (Python's default is
700): above what one order keeps alive at once late in a game, so that the
collector runs every few orders instead of during each, and the cyclic garbage
waiting for it stays a few megabytes at most."""


def tune_gc() -> None:
    """Set the collector for a long-running moderator process: the objects alive
    now (call after the imports) moved out of the collections (``gc.freeze``),
    young collections every ``GEN0_THRESHOLD`` objects (the older generations'
    thresholds unchanged).  Idempotent; never raises."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, older, oldest)
