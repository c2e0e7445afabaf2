"""tests/scheduling.py: the order ``pytest -n N`` hands the long tests out (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scheduling import UNKNOWN_INTENSITY, Unit, order


def _busy(key: str, seconds: float) -> Unit:
    return Unit(key, seconds, cpu=seconds)  # a core all along


def _waiting(key: str, seconds: float) -> Unit:
    return Unit(key, seconds, cpu=seconds / 50)  # waits for its subjects' deadlines


def test_alike_units_go_longest_first() -> None:
    units = [_busy("a", 10), _busy("b", 30), _busy("c", 20), _busy("d", 25)]
    assert order(units, workers=4, cpus=2) == ["b", "d", "c", "a"]


def test_busy_and_waiting_units_are_mixed_not_bunched() -> None:
    """Longest first would start the four busy units together (four on two cores) and then the
    four waiting ones together (the cores idle)."""
    busy = [_busy(k, s) for k, s in (("b1", 100), ("b2", 98), ("b3", 96), ("b4", 94))]
    waiting = [_waiting(k, s) for k, s in (("w1", 90), ("w2", 88), ("w3", 86), ("w4", 84))]
    got = order(busy + waiting, workers=4, cpus=2)
    assert sorted(got) == sorted(u.key for u in busy + waiting)
    first = got[:4]
    assert sum(k.startswith("b") for k in first) == 2, got
    assert sum(k.startswith("b") for k in got[4:]) == 2, got


def test_a_much_shorter_unit_never_jumps_ahead_of_the_long_ones() -> None:
    units = [_busy(k, 100) for k in "abcd"] + [_waiting("short", 20)]
    assert order(units, workers=4, cpus=2)[-1] == "short"


def test_unrecorded_units_follow_in_their_order() -> None:
    units = [Unit("x", 0), _busy("long", 5), Unit("y", 0), Unit("a", 0)]
    assert order(units, workers=2, cpus=2) == ["long", "x", "y", "a"]


def test_intensity() -> None:
    assert Unit("u", 10, cpu=None).intensity == UNKNOWN_INTENSITY
    assert Unit("u", 10, cpu=5).intensity == 0.5
    assert Unit("u", 10, cpu=100).intensity == 2.0  # its subprocesses' too, up to 2 cores
    assert Unit("u", 0, cpu=3).intensity == 0.0


def test_the_order_is_the_same_every_time() -> None:
    units = [Unit(f"u{i}", float(i % 7 + 1), cpu=float(i % 3)) for i in range(40)]
    assert order(units, workers=4, cpus=2) == order(list(units), workers=4, cpus=2)


def test_recorded_durations_hold_seconds_or_seconds_and_cpu(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import conftest

    f = tmp_path / "durations.json"
    f.write_text(json.dumps({"t.py::a": 3.5, "t.py::b": [4.0, 1.5], "t.py::c": "junk"}))
    monkeypatch.setattr(conftest, "DURATIONS", f)
    assert conftest._recorded_durations() == {"t.py::a": (3.5, None), "t.py::b": (4.0, 1.5)}
