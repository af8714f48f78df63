"""The moderator process's collector settings (``moderator.runtime``)."""
from __future__ import annotations

import gc

from moderator.runtime import GEN0_THRESHOLD, tune_gc


def test_tune_gc_collects_less_often_and_leaves_the_start_up_out():
    before = gc.get_threshold()
    try:
        alive = [{"made": "before"}]  # tracked by the collector until frozen
        assert gc.is_tracked(alive) and gc.get_freeze_count() == 0
        tune_gc()
        frozen = gc.get_freeze_count()
        assert frozen > 0 and gc.get_threshold() == (GEN0_THRESHOLD, before[1], before[2])
        assert not any(o is alive for o in gc.get_objects())  # out of every collection
        later = [{"made": "after"}]
        assert any(o is later for o in gc.get_objects(generation=0))  # collected as usual
        tune_gc()  # again: the same settings
        assert gc.get_threshold() == (GEN0_THRESHOLD, before[1], before[2]) and gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
