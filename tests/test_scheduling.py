"""tests/scheduling.py: the order ``pytest -n N`` hands the long tests out (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scheduling import AT_ONCE, Unit, order


def _busy(key: str, seconds: float) -> Unit:
    return Unit(key, seconds, cpu=seconds)  # a core all along


def _waiting(key: str, seconds: float) -> Unit:
    return Unit(key, seconds, cpu=seconds / 50)  # waits for its subjects' deadlines


def _short(n: int) -> list[Unit]:
    return [Unit(f"s{i}", 0) for i in range(n)]


def test_busy_units_go_longest_first_then_the_short_ones_in_their_order() -> None:
    units = [Unit("x", 0), _busy("a", 10), _busy("b", 30), Unit("y", 0), _busy("c", 20)]
    assert order(units, workers=4) == ["b", "c", "a", "x", "y"]
    assert order(units, workers=1) == ["b", "c", "a", "x", "y"]


def test_waiting_units_are_spread_not_bunched() -> None:
    """Longest first would hand the waiting units out one after the other once the longer busy
    ones are out: every worker waiting at once."""
    busy = [_busy(f"b{i}", 100 - i) for i in range(12)]
    waiting = [_waiting(f"w{i}", 60 - i) for i in range(8)]
    got = order(busy + waiting + _short(1000), workers=4)
    assert sorted(got) == sorted(u.key for u in busy + waiting + _short(1000))
    assert [k for k in got if k.startswith("w")] == [u.key for u in waiting]  # longest first
    assert [k for k in got if k.startswith("b")] == [u.key for u in busy]
    assert [k for k in got if k.startswith("s")] == [f"s{i}" for i in range(1000)]
    units = {u.key: u for u in busy + waiting + _short(1000)}
    assert _most_waiting_at_once(got, units, workers=4) <= AT_ONCE
    assert _most_waiting_at_once([u.key for u in busy + waiting] + [f"s{i}" for i in range(1000)],
                                 units, workers=4) == 4  # longest first: all four at once
    assert got.index("w0") < 4  # and they start at once: they are long


def _most_waiting_at_once(keys: list[str], units: dict[str, Unit], workers: int) -> int:
    """Hand ``keys`` out as pytest-xdist does (each worker runs a unit and holds the next, and
    is handed one more when its unit ends; a short test lasts 0.2 s): the most waiting units
    running at the same time."""
    queue = list(keys)
    held: list[list[str]] = [[queue.pop(0)] for _ in range(workers) if queue]
    for h in held:
        if queue:
            h.append(queue.pop(0))
    ends = [units[h[0]].seconds or 0.2 for h in held]
    most = 0
    while any(held):
        most = max(most, sum(units[h[0]].waits for h in held if h))
        w = min((i for i in range(len(held)) if held[i]), key=lambda i: ends[i])
        now = ends[w]
        held[w].pop(0)
        if queue:
            held[w].append(queue.pop(0))
        if held[w]:
            ends[w] = now + (units[held[w][0]].seconds or 0.2)
    return most


def test_without_cpu_records_the_order_is_longest_first() -> None:
    units = [Unit("a", 5.0), Unit("b", 50.0), Unit("c", 0), Unit("d", 20.0)]
    assert order(units, workers=1) == ["b", "d", "a", "c"]


def test_waits() -> None:
    assert _waiting("w", 10).waits and not _busy("b", 10).waits
    assert not Unit("u", 10, cpu=None).waits and not Unit("u", 0, cpu=0).waits
    # a slow mark's estimate (600 s) is not what the CPU use is judged against (what was
    # recorded, 40 s)
    assert not Unit("u", 600, cpu=30, recorded=40).waits and Unit("u", 600, cpu=3, recorded=40).waits


def test_the_order_is_the_same_every_time() -> None:
    units = [Unit(f"u{i}", float(i % 7), cpu=float(i % 3) / 10) for i in range(60)]
    assert order(units, workers=4) == order(list(units), workers=4)


def test_recorded_durations_hold_seconds_or_seconds_and_cpu(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import conftest

    f = tmp_path / "durations.json"
    f.write_text(json.dumps({"t.py::a": 3.5, "t.py::b": [4.0, 1.5], "t.py::c": "junk"}))
    monkeypatch.setattr(conftest, "DURATIONS", f)
    assert conftest._recorded_durations() == {"t.py::a": (3.5, None), "t.py::b": (4.0, 1.5)}
