"""Dividend payouts: pure functions from invested shares to money.

Money is in millions of dollars.  Holdings are ``{player: number of invested
shares}``; players holding 0 shares are ignored.  Results are ``{player: amount}``
listing only players who receive something (possibly 0 after rounding down, for
tied secondary holders, so that every payout recipient is visible).
"""
from __future__ import annotations

from typing import Mapping

from .components import UP_TABLE


def _groups(holdings: Mapping[str, int]) -> list[list[str]]:
    """Investors grouped by equal holdings, largest first; names sorted in a group."""
    by_count: dict[int, list[str]] = {}
    for player, n in holdings.items():
        if n > 0:
            by_count.setdefault(n, []).append(player)
    return [sorted(by_count[n]) for n in sorted(by_count, reverse=True)]


def company_payout(holdings: Mapping[str, int], value: int) -> dict[str, int]:
    """Pay one company's dividend (rules: Company dividends).

    ``value`` is the company's dividend value (1 + its trains on the board).  The
    primary (most shares) gets ``value``, the secondary (second most) ``value // 2``;
    a sole investor gets both; a tie for most splits ``value + value // 2`` equally,
    rounded down, and nobody gets the secondary amount; one primary and a tie for
    second: the tied players split ``value // 2``, rounded down (possibly 0 each).
    A company nobody invested in pays nothing (empty dict).

    >>> company_payout({"A": 3, "B": 1}, 5)
    {'A': 5, 'B': 2}
    >>> company_payout({"A": 2, "B": 2, "C": 1}, 5)
    {'A': 3, 'B': 3}
    """
    secondary = value // 2
    if len(holdings) <= 2:  # the common cases without grouping, as the groups give them
        (a, na), *rest = holdings.items() if holdings else ((None, 0),)
        if not rest:
            return {a: value + secondary} if na > 0 else {}
        (b, nb), = rest
        if na > 0 and nb > 0:
            if na == nb:
                each = (value + secondary) // 2
                return {a: each, b: each} if a < b else {b: each, a: each}
            return {a: value, b: secondary} if na > nb else {b: value, a: secondary}
    groups = _groups(holdings)
    if not groups:
        return {}
    first = groups[0]
    if len(first) > 1:
        each = (value + secondary) // len(first)
        return {p: each for p in first}
    (primary,) = first
    if len(groups) == 1:
        return {primary: value + secondary}
    result = {primary: value}
    second = groups[1]
    for p in second:
        result[p] = secondary // len(second)
    return result


def up_payout(holdings: Mapping[str, int], dividend_number: int) -> dict[str, int]:
    """Pay Union Pacific for the ``dividend_number``-th dividend (1-4) (rules: Union
    Pacific dividends).

    Investors are ranked by invested UP shares; ranks 1-5 pay the table amounts for
    that dividend, ranks beyond 5 pay 0.  Tied players occupy as many consecutive ranks
    as there are of them and split the sum of those ranks' amounts equally, rounded
    down.  Raises ValueError for a dividend number outside 1-4.

    >>> up_payout({"A": 3, "B": 3, "C": 1}, 2)
    {'A': 9, 'B': 9, 'C': 6}
    """
    if dividend_number not in UP_TABLE:
        raise ValueError(f"dividend number must be 1-4, not {dividend_number}")
    table = UP_TABLE[dividend_number]
    result: dict[str, int] = {}
    # most shares first, names sorted among equals: the groups of ``_groups``
    ranked = sorted([(-n, p) for p, n in holdings.items() if n > 0])
    rank, end = 0, len(ranked)  # ranks already taken
    while rank < end:
        n = ranked[rank][0]
        size = 1
        while rank + size < end and ranked[rank + size][0] == n:
            size += 1
        each = sum(table[rank : rank + size]) // size  # ranks beyond 5 pay 0
        for _, p in ranked[rank : rank + size]:
            result[p] = each
        rank += size
    return result
