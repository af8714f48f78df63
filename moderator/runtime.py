"""Settings of a moderator process (``pbem run``), applied once at start-up.

Python's cyclic garbage collector runs a young collection whenever 700 more
container objects (lists, dicts, tuples ...) were made than freed.  One order at
turn 150 keeps about a thousand alive at once (the game file's mapping, its
history and log, the game), against a few hundred at turn 1, so the collector ran
about once per order late in a game and never early (0.9 collections per order at
turn 150, 0.01 at turn 1: benchmarks/bench_turns.py), each scanning everything
the order had made.  What a cycle makes it frees again by reference counting; the
collector only finds reference cycles, which a cycle makes few of.  So a
moderator process collects less often (``GEN0_THRESHOLD``).
"""
from __future__ import annotations

import gc

GEN0_THRESHOLD = 3_000
"""Container objects made (net) between young collections (Python's default is
700): above what one order keeps alive at once late in a game (no collection
during 200 orders at turn 150), so that the collector runs every few orders
instead of during each; the cyclic garbage waiting for it is at most a few
thousand objects (the peak memory of a cycle of 10 orders 2 MB higher, of 135)."""


def tune_gc() -> None:
    """Set the collector for a moderator process (call once, after the imports):
    young collections every ``GEN0_THRESHOLD`` objects, the older generations'
    thresholds unchanged.  Idempotent; never raises."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, older, oldest)
