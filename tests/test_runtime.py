"""The moderator process's collector settings (``moderator.runtime``)."""
from __future__ import annotations

import gc

from moderator.runtime import GEN0_THRESHOLD, tune_gc


def test_tune_gc_collects_less_often():
    before = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_threshold() == (3000, before[1], before[2]) and GEN0_THRESHOLD > 700
        tune_gc()  # again: the same settings
        assert gc.get_threshold() == (3000, before[1], before[2])
    finally:
        gc.set_threshold(*before)
