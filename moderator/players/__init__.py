"""Built-in players on the pure engine: the strategy (``choose``), the seat's
determinised game (``determinise``) and the baselines it is measured against
(``random_rule``, ``demo_rule``).  ``benchmarks/bench_players.py`` measures them."""
from .baselines import demo_rule, random_rule
from .heuristic import Position, choose
from .hidden import determinise, dividend_outlook, stack_segments

__all__ = ["choose", "Position", "determinise", "dividend_outlook", "stack_segments",
           "demo_rule", "random_rule"]
