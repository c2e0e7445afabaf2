"""``python -m benchmarks --smoke``: every section runs and reports the documented JSON shape.

Speed is never asserted here (that is what the benchmark itself reports, as ratios in one run).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Every test here waits for the whole smoke run (the module fixture).
pytestmark = pytest.mark.slow(50)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True)  # no wall cap: load
    # makes it slower, never a failure (issue 21)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"wrote {out}" in proc.stdout
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def test_every_section_is_there(bench: dict[str, Any]) -> None:
    assert bench["smoke"] is True
    assert set(bench["sections"]) == {"replay", "serve", "validation", "suite", "scaleout",
                                      "sandbox", "startpool", "shards", "tests"}
    for rows in bench["sections"].values():
        assert rows and all(isinstance(r, dict) for r in rows)


def test_replay_rows_compare_the_variants(bench: dict[str, Any]) -> None:
    rows = bench["sections"]["replay"]
    assert {(r["exchanges"], r["stream"]) for r in rows} == {(2, False), (2, True), (20, False),
                                                             (20, True)}
    for r in rows:
        assert "note" not in r, r.get("note")  # the simulator replayed every conversation
        assert set(r["us_per_request"]) == {"floor", "vcr", "simulator", "simulator_cold",
                                            "simulator_fresh"}
        assert all(v > 0 for v in r["us_per_request"].values())
        assert r["ratio_vs_floor"] == pytest.approx(
            r["us_per_request"]["simulator"] / r["us_per_request"]["floor"], rel=0.01)
        assert isinstance(r["met"], bool)


def test_serve_rows_report_rps_and_percentiles(bench: dict[str, Any]) -> None:
    rows = bench["sections"]["serve"]
    assert [r["stream"] for r in rows] == [False, True]
    for r in rows:
        assert r["requests"] > 0 and r["errors"] == 0, r
        assert r["rps"] > 0
        lat = r["latency_ms"]
        assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"]
    assert "met" in rows[0] and "target" in rows[0]


def test_validation_rows(bench: dict[str, Any]) -> None:
    rows = bench["sections"]["validation"]
    assert [r.get("strict") for r in rows[:2]] == [False, True]
    assert all(r["value"] > 0 for r in rows[:2])
    growth = rows[2:]
    assert len(growth) == 2 and {"cold)" in g["what"] or "warm)" in g["what"] for g in growth}
    for g in growth:
        assert len(g["per_turn_us"]) == 3 and all(v > 0 for v in g["per_turn_us"].values())


def test_suite_and_scaleout_rows(bench: dict[str, Any]) -> None:
    s, progress = bench["sections"]["suite"]
    assert s["run_exit"] == 0 and s["lint_exit"] == 0 and s["verdict"] == "pass"
    bar, quiet = progress["with_progress_seconds"], progress["quiet_seconds"]
    # The seconds are rounded to 3 places and the ratio is taken before rounding: on a
    # smoke run of half a second that rounding alone moves bar/quiet by up to 0.2 %.
    assert progress["ratio"] == pytest.approx(bar / quiet, abs=0.0005 * (1 + bar / quiet) / quiet
                                              + 0.0005)
    assert progress["target"] == "ratio < 1.05" and "met" in progress
    assert s["checks"] == sum(f["checks"] for f in s["by_family"].values())
    one, two, speed = bench["sections"]["scaleout"]
    assert (one["workers"], two["workers"]) == (1, 2)
    assert one["results_in_one_report"] == two["results_in_one_report"] > 0
    assert one["pytest_exit"] == two["pytest_exit"] == 0
    assert speed["same_results"] is True and speed["speedup"] > 0


def test_sandbox_rows(bench: dict[str, Any]) -> None:
    rows = bench["sections"]["sandbox"]
    if "skipped" in rows[0]:
        assert rows[0]["skipped"].startswith("no sandbox here")
        return
    *startup, run = rows
    assert len(startup) == 2 and all(r["off_ms"] > 0 and r["sandboxed_ms"] > 0 for r in startup)
    assert run["exit_codes"] == [0, 0] and run["wall_ratio"] > 0 and run["cpu_ratio"] > 0
    assert isinstance(run["met"], bool)


def test_the_start_pool_row(bench: dict[str, Any]) -> None:
    (row,) = bench["sections"]["startpool"]
    assert row["startup_delay_seconds"] == 1 and row["checks"] > 0
    assert row["verdicts_equal"] is True, row.get("verdicts")
    assert row["exit_codes"] == [0, 0], row.get("stderr")
    assert row["seconds"] > 0 and row["before_seconds"] is None  # smoke: no run without the pool
    assert row["startup"]["started"] >= row["checks"]
    assert row["target"].startswith("seconds < 120") and isinstance(row["met"], bool)


def test_the_shards_rows(bench: dict[str, Any]) -> None:
    """The committed tool matrix's split at N = 1, 2, 4 (its recorded durations: the same numbers
    on every machine), a real merge of synthetic shards, one more shard's start-up."""
    rows = bench["sections"]["shards"]
    balance = [r for r in rows if "shards" in r]
    assert [r["shards"] for r in balance] == [1, 2, 4]
    for r in balance:
        n = r["shards"]
        assert len(r["work_seconds"]) == len(r["setup_seconds"]) == n and r["ideal_speedup"] == n
        assert 0 < r["real_speedup"] <= n
        assert r["max_load_seconds"] >= r["lower_bound_seconds"] > 0
    (merge,) = [r for r in rows if "merge_shards" in r]  # smoke: 2 shards
    assert merge["merge_shards"] == 2 and merge["cells_equal_committed"] is True
    assert merge["merge_seconds"] > 0
    (extra,) = [r for r in rows if "extra_shard" in r]
    assert extra["exit"] == 0 and extra["run_seconds"] > 0


def test_the_project_tests_have_a_budget(bench: dict[str, Any]) -> None:
    (row,) = bench["sections"]["tests"]
    assert row["exit"] == 0 and row["counts"] == {"passed": 2}, row
    assert row["wall_seconds"] > 0 and row["cpu_seconds"] > 0
    assert row["budget"].startswith("wall_seconds <= 300")
    assert row["ratio_to_budget"] == pytest.approx(row["wall_seconds"] / 300, abs=0.01)
    assert isinstance(row["met"], bool) and isinstance(row["idle"], bool)
