"""``--shard K/N``: a run's cases (or a matrix's cells) split into N parts, balanced, the same on
every machine.

The units are (subject or column, check id) pairs, each with a cost: its recorded duration from
an earlier run (``--history``) or, without one, an estimate (:func:`estimated_cost`). The cells of
one subject are grouped: every shard that holds some of them starts one ``tooluse run`` for that
subject (the suite's start-up and the subject's first start, :attr:`Setup.start`) and, for a matrix
column in an environment of its own, builds that environment (:attr:`Setup.build`, paid once per
shard and environment). :func:`split`:

1. cuts a group into pieces of at most a limit (its cells dealt largest first), only when it is
   larger than the limit: at a limit of a shard's fair share (the total over N) a column that fits
   stays whole, costing one start-up and one environment build; a column larger than the share
   (in the committed tool matrix, one bash column holds 29 % of the work) is cut;
2. deals the pieces largest first, each to the shard on which it finishes earliest, counting the
   start-up and the environment build that shard would add (a piece of a column whose environment a
   shard already builds goes there when it is no later);
3. tries the limit at the share, half and a quarter of it, and keeps the split whose largest shard
   is smallest (ties: fewer pieces).

Everything is sorted by (cost, key) before it is dealt, so every shard of a CI job matrix computes
the same split from the same history, and the merge can check that the shards cover every unit
once (:func:`plan_digest`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from conformance.catalog import Check
from conformance.errors import UsageError

#: Estimated seconds of a check without history: a property, slow or timeout check, and any other
#: (the medians of the committed tool matrix's cells: 22 s and 1.9 s).
SLOW_CHECK_ESTIMATE, CHECK_ESTIMATE = 20.0, 2.0
#: Seconds one more ``tooluse run`` costs a shard (the suite's start-up, the subject's first
#: start); ``nox -s bench`` measures it on this machine.
START_ESTIMATE = 5.0
#: Seconds to build (or restore from a cache and check) a column's own environment on a shard.
BUILD_ESTIMATE = 60.0
_SHARD = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*")

Key = tuple[str, str]


@dataclass(frozen=True, order=True)
class Shard:
    """The ``index``-th (1-based) of ``count`` shards."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def to_json(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}


def parse_shard(text: str, option: str = "--shard") -> Shard:
    """``"2/4"`` -> ``Shard(2, 4)``; a :class:`UsageError` naming ``option`` otherwise."""
    m = _SHARD.fullmatch(text or "")
    if m is None:
        raise UsageError(f"{option} {text!r}: give K/N, e.g. 2/4 (the second of four shards)")
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"{option} {text}: K must be between 1 and N (1/{max(n, 1)} to "
                         f"{max(n, 1)}/{max(n, 1)})")
    return Shard(k, n)


def estimated_cost(chk: Check) -> float:
    """A check's cost when no earlier run recorded it."""
    slow = bool({"property", "slow"} & chk.tags) or ".timeout." in chk.id
    return SLOW_CHECK_ESTIMATE if slow else CHECK_ESTIMATE


@dataclass(frozen=True)
class Unit:
    """One cell: ``key`` = (subject or column name, check id), its cost in seconds, the group it
    runs in (one ``tooluse run`` per shard) and the environment that group needs (None: the
    suite's own)."""

    key: Key
    cost: float
    group: str
    env: str | None = None


@dataclass(frozen=True)
class Setup:
    """What a shard pays besides its cells' own time."""

    start: float = START_ESTIMATE
    build: float = BUILD_ESTIMATE


@dataclass
class ShardLoad:
    """One shard of a split: its units and what it costs."""

    units: list[Unit] = field(default_factory=list)
    groups: set[str] = field(default_factory=set)
    envs: set[str] = field(default_factory=set)
    work: float = 0.0  # the cells' own time
    setup: float = 0.0  # start-ups and environment builds

    @property
    def load(self) -> float:
        return self.work + self.setup

    def extra(self, piece: Sequence[Unit], setup: Setup) -> float:
        group, env = piece[0].group, piece[0].env
        more = 0.0 if group in self.groups else setup.start
        if env is not None and env not in self.envs:
            more += setup.build
        return more

    def take(self, piece: Sequence[Unit], setup: Setup) -> None:
        self.setup += self.extra(piece, setup)
        self.units.extend(piece)
        self.groups.add(piece[0].group)
        if piece[0].env is not None:
            self.envs.add(piece[0].env)
        self.work += sum(u.cost for u in piece)


def _order(units: Iterable[Unit]) -> list[Unit]:
    return sorted(units, key=lambda u: (-u.cost, u.key))


def _deal(units: Sequence[Unit], n: int) -> list[list[Unit]]:
    """``units`` dealt largest first into ``n`` bins, each to the lightest (LPT)."""
    bins: list[list[Unit]] = [[] for _ in range(n)]
    loads = [0.0] * n
    for u in _order(units):
        i = min(range(n), key=lambda j: (loads[j], j))
        bins[i].append(u)
        loads[i] += u.cost
    return [b for b in bins if b]


def _pieces(units: Sequence[Unit], limit: float) -> list[list[Unit]]:
    groups: dict[str, list[Unit]] = {}
    for u in sorted(units, key=lambda u: u.key):
        groups.setdefault(u.group, []).append(u)
    out: list[list[Unit]] = []
    for members in groups.values():
        cost = sum(u.cost for u in members)
        k = 1 if cost <= limit or limit <= 0 else min(len(members), math.ceil(cost / limit))
        out.extend(_deal(members, k))
    return sorted(out, key=lambda p: (-sum(u.cost for u in p), p[0].key))


def _assign(pieces: Sequence[Sequence[Unit]], n: int, setup: Setup) -> list[ShardLoad]:
    shards = [ShardLoad() for _ in range(n)]
    for piece in pieces:
        cost = sum(u.cost for u in piece)
        i = min(range(n), key=lambda j: (shards[j].load + cost + shards[j].extra(piece, setup),
                                         shards[j].load, j))
        shards[i].take(piece, setup)
    return shards


def split(units: Sequence[Unit], n: int, setup: Setup | None = None) -> list[ShardLoad]:
    """``units`` in ``n`` shards (see the module docstring); always ``n`` shards, some may be
    empty when there are fewer units than shards."""
    if n < 1:
        raise ValueError("n must be at least 1")
    setup = setup or Setup()
    keys = [u.key for u in units]
    if len(set(keys)) != len(keys):
        raise ValueError("a unit key appears twice")
    share = math.fsum(u.cost for u in units) / n  # exact: the same whatever the order
    best: list[ShardLoad] | None = None
    best_rank: tuple[float, int] | None = None
    for limit in (share, share / 2, share / 4):
        pieces = _pieces(units, limit)
        shards = _assign(pieces, n, setup)
        rank = (round(max((s.load for s in shards), default=0.0), 6), len(pieces))
        if best_rank is None or rank < best_rank:
            best, best_rank = shards, rank
    assert best is not None
    for s in best:
        s.units.sort(key=lambda u: u.key)
    return best


def lower_bound(units: Sequence[Unit], n: int) -> float:
    """No split of ``units`` in ``n`` shards has a largest shard below this (setup left out)."""
    costs = [u.cost for u in units]
    return max(math.fsum(costs) / n, max(costs, default=0.0))


def shard_set_problem(shards: Sequence[tuple[int, str, str]], count: int) -> str:
    """What keeps ``shards`` (each ``(index, label, where)``) from being the shards ``1..count``
    each once, in words (the first shard given twice, or those missing); ``""``: nothing."""
    seen: dict[int, str] = {}
    for index, _label, where in shards:
        if index in seen:
            return f"shard {index}/{count} is given twice: {seen[index]} and {where}"
        seen[index] = where
    absent = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if absent:
        return (f"missing shard{'s' if len(absent) > 1 else ''} {', '.join(absent)} (given: "
                f"{', '.join(label for _i, label, _w in shards)})")
    return ""


@dataclass(frozen=True)
class Coverage:
    """How shards cover a plan (:func:`coverage`): the first unit two shards both ran (with the
    two shards' labels), the plan's units no shard ran (in plan order), and the units a shard
    ran that the plan lacks (with that shard's label)."""

    overlap: tuple[Key, str, str] | None
    missing: list[Key]
    extra: list[tuple[Key, str]]


def coverage(pieces: Iterable[tuple[str, Iterable[Key]]], plan: Sequence[Key]) -> Coverage:
    """What each shard ran (``(label, units)``, in shard order) against the ``plan``: one pass
    serves ``tooluse matrix merge`` (cells) and ``tooluse run merge`` (cases), which word it."""
    ran: dict[Key, str] = {}
    for label, units in pieces:
        for unit in units:
            if unit in ran:
                return Coverage((unit, ran[unit], label), [], [])
            ran[unit] = label
    planned = set(plan)
    return Coverage(None, [k for k in plan if k not in ran],
                    [(k, label) for k, label in ran.items() if k not in planned])


def first_few(words: Sequence[str], most: int = 5) -> str:
    """``a, b, c`` for at most ``most`` words, then `` and N more``."""
    more = f" and {len(words) - most} more" if len(words) > most else ""
    return ", ".join(words[:most]) + more


def plan_digest(keys: Iterable[Key]) -> str:
    """A short hash of the whole plan (every unit's key), the same on every shard."""
    text = json.dumps(sorted([list(k) for k in keys]))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def durations_of(results: Iterable[Mapping[str, object]]) -> dict[Key, float]:
    """(subject, check id) -> recorded duration, from a results document's ``results``."""
    out: dict[Key, float] = {}
    for r in results:
        d = r.get("duration")
        if isinstance(d, int | float) and isinstance(r.get("subject"), str):
            out[(str(r["subject"]), str(r["check_id"]))] = float(d)
    return out


@dataclass(frozen=True)
class ShardPlan:
    """One shard of a run: its cases, and the whole plan (every shard's) for the merge."""

    shard: Shard
    cases: frozenset[Key]
    plan: tuple[Key, ...]
    history: str | None = None

    def to_json(self) -> dict[str, object]:
        return {**self.shard.to_json(), "plan_digest": plan_digest(self.plan),
                "plan": [list(k) for k in self.plan], "history": self.history}


def run_shard(shard: Shard, cases: Sequence[tuple[Key, Check]], history: Mapping[Key, float],
              history_name: str | None = None, setup: Setup | None = None) -> ShardPlan:
    """The ``shard`` of a run's ``cases`` ((subject, check id), check), balanced by ``history``
    (recorded seconds; a case it lacks is estimated). The cases of one subject share one run, so
    no start-up or build cost sets them apart: the split deals cases, not groups."""
    units = [Unit(key, history.get(key, estimated_cost(chk)), f"{key[0]}\0{key[1]}")
             for key, chk in cases]
    loads = split(units, shard.count, setup or Setup(start=0.0, build=0.0))
    mine = frozenset(u.key for u in loads[shard.index - 1].units)
    return ShardPlan(shard, mine, tuple(k for k, _ in cases), history_name)


def split_whole(units: Sequence[Unit], n: int, setup: Setup | None = None) -> list[ShardLoad]:
    """``units`` in ``n`` shards with no group ever cut (what :func:`split` is measured against)."""
    return _assign(_pieces(units, math.inf), n, setup or Setup())
