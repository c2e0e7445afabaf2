"""``--shard K/N`` and the merges (issue 42): the split (every unit once, the same on every
machine, balanced), ``tooluse run --shard`` + ``tooluse run merge`` equal to one run, and
``tooluse matrix --shard`` at N = 2 and 3 + ``tooluse matrix merge`` equal to one matrix cell for
cell (fingerprints included), with overlapping, missing and mismatched shards refused by name.

Only wall times and timestamps are set aside when comparing, and the random markers the checks
write into their commands (two single runs differ there too). No assertion is about time."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.cli import main
from conformance.errors import UsageError
from conformance.reports import normalise
from conformance.shards import Setup, Unit, lower_bound, parse_shard, split

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "broken"
MARKER = re.compile(r"(?<=[-_])[0-9a-f]{8}(?![0-9a-f])")


def _masked(doc: Any) -> Any:
    return json.loads(MARKER.sub("<marker>", json.dumps(doc)))


def _main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# --- the split ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "shard"), [("1/1", (1, 1)), ("2/4", (2, 4)), (" 3 / 3 ", (3, 3))])
def test_parse_shard(text: str, shard: tuple[int, int]) -> None:
    s = parse_shard(text)
    assert (s.index, s.count) == shard and str(s) == f"{shard[0]}/{shard[1]}"


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", ""])
def test_parse_shard_refuses(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)


units_strategy = st.dictionaries(
    st.tuples(st.sampled_from("abcdef"), st.integers(0, 20)), st.integers(0, 500), max_size=30)


#: Pure functions: no deadline, no health check on a loaded machine (CI runs with -n 4).
CALM = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


@CALM
@given(units_strategy, st.integers(1, 6), st.randoms(use_true_random=False))
def test_split_deals_every_unit_once_the_same_way_whatever_the_order(
        raw: dict[tuple[str, int], int], n: int, rnd: random.Random) -> None:
    units = [Unit((g, f"check{c:02d}"), cost / 7, g, "env" if g in "ab" else None)
             for (g, c), cost in raw.items()]
    shards = split(units, n)
    assert len(shards) == n
    dealt = [u.key for s in shards for u in s.units]
    assert sorted(dealt) == sorted(u.key for u in units)
    shuffled = list(units)
    rnd.shuffle(shuffled)
    assert [[u.key for u in s.units] for s in split(shuffled, n)] == \
        [[u.key for u in s.units] for s in shards]


@CALM
@given(st.lists(st.integers(0, 1000), max_size=40), st.integers(1, 8))
def test_split_of_independent_cases_is_within_one_case_of_the_ideal(ints: list[int],
                                                                    n: int) -> None:
    """Cases with no start-up between them (``tooluse run --shard``): the largest shard is at
    most the fair share plus the largest case (list scheduling's bound)."""
    costs = [i / 3 for i in ints]
    units = [Unit(("s", f"c{i:03d}"), c, f"s\0c{i:03d}") for i, c in enumerate(costs)]
    largest = max((s.work for s in split(units, n, Setup(0.0, 0.0))), default=0.0)
    assert largest <= sum(costs) / n + max(costs, default=0.0) + 1e-6
    assert largest >= lower_bound(units, n) - 1e-6 if units else True


def test_columns_that_fit_a_share_stay_whole_and_share_their_environment() -> None:
    """Four equal columns on four shards: one whole column each (one start-up, one build), not
    cells scattered over every shard."""
    units = [Unit((g, f"c{i}"), 1.0, g, f"env-{g}") for g in "wxyz" for i in range(10)]
    shards = split(units, 4, Setup(start=5.0, build=60.0))
    assert sorted(sorted(s.groups) for s in shards) == [["w"], ["x"], ["y"], ["z"]]
    # two columns sharing one environment, on two shards of a smaller matrix: built once each
    shared = [Unit((g, f"c{i}"), 1.0, g, "one-env") for g in "ab" for i in range(10)]
    assert all(len(s.envs) == 1 for s in split(shared, 2, Setup(start=5.0, build=60.0)))


def test_a_column_larger_than_a_share_is_cut() -> None:
    units = [Unit(("big", f"c{i:02d}"), 10.0, "big") for i in range(20)]
    units += [Unit(("small", f"c{i}"), 1.0, "small") for i in range(10)]
    shards = split(units, 2, Setup(start=5.0, build=0.0))
    assert all("big" in s.groups for s in shards)


# --- tooluse run --shard + tooluse run merge -----------------------------------------------------

RUN = ["run", "--bash", "conformance.reference.bash:factory", "--name", "ref",
       "--bash", f"{BROKEN}/bash_no_stderr.py:factory", "--name", "no-stderr",
       "--check", "bash.output.stdout_and_stderr", "bash.session.cwd_persists",
       "bash.session.env_persists", "bash.input.*", "bash.errors.failure_flagged", "-q",
       "--timeout", "10"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("run-shards")
    assert _main([*RUN, "--out", str(tmp / "one")])[0] == 1  # no-stderr fails its check
    for n in (2, 3):
        for k in range(1, n + 1):
            _main([*RUN, "--shard", f"{k}/{n}", "--out", str(tmp / f"n{n}-{k}")])
    return tmp


def _results(d: Path) -> dict[str, Any]:
    return json.loads((d / "results.json").read_text())


@pytest.mark.slow(20)
@pytest.mark.parametrize("n", [2, 3])
def test_run_shards_merged_equal_one_run(runs: Path, n: int) -> None:
    shards = [str(runs / f"n{n}-{k}") for k in range(1, n + 1)]
    assert all(_results(Path(s))["run"]["shard"]["count"] == n for s in shards)
    code, out, _ = _main(["run", "merge", *reversed(shards), "--out", str(runs / f"m{n}")])
    assert code == 1, out  # as the single run: a MUST check fails
    merged, one = _results(runs / f"m{n}"), _results(runs / "one")
    assert "shard" not in merged["run"] and "--shard" not in merged["run"]["argv"]
    assert merged["run"]["planned"] == one["run"]["planned"]
    assert _masked(normalise(merged)) == _masked(normalise(one))
    for name in ("junit.xml", "report.md", "report.html"):
        assert (runs / f"m{n}" / name).is_file()
    assert "bash.output.stdout_and_stderr" in (runs / f"m{n}" / "report.md").read_text()


def _copy(src: Path, dst: Path, edit: Any = None) -> Path:
    shutil.copytree(src, dst)
    if edit is not None:
        doc = _results(dst)
        edit(doc)
        (dst / "results.json").write_text(json.dumps(doc))
    return dst


@pytest.mark.slow(20)
def test_run_merge_refuses_naming_the_shards(runs: Path, tmp_path: Path) -> None:
    a, b = runs / "n2-1", runs / "n2-2"

    def refused(*dirs: Path) -> str:
        code, _, err = _main(["run", "merge", *map(str, dirs), "--out", str(tmp_path / "m")])
        assert code == 2
        assert not (tmp_path / "m" / "results.json").exists()
        return err

    assert "missing shard 2/2" in refused(a)
    assert "given twice" in refused(a, a, b)
    assert "one of 3 shards" in refused(a, runs / "n3-2")
    assert "not a shard" in refused(a, runs / "one")

    def overlap(doc: dict[str, Any]) -> None:
        doc["results"].append(_results(a)["results"][0])

    assert re.search(r"overlapping shards: \S+:bash\.\S+ is in .*n2-1 .* and in "
                     r".*overlap", refused(a, _copy(b, tmp_path / "overlap", overlap)))

    def lose(doc: dict[str, Any]) -> None:
        doc["results"].pop()

    assert "missing cases: no shard ran" in refused(a, _copy(b, tmp_path / "lost", lose))

    def other_suite(doc: dict[str, Any]) -> None:
        doc["suite"]["version"] = "9.9.9"

    assert "run by tooluse-conformance 9.9.9" in refused(a, _copy(b, tmp_path / "v", other_suite))

    def other_plan(doc: dict[str, Any]) -> None:
        doc["run"]["shard"]["plan_digest"] = "0" * 16

    assert "shards of different runs" in refused(a, _copy(b, tmp_path / "p", other_plan))


# --- tooluse matrix --shard + tooluse matrix merge -----------------------------------------------

CHECKS = ["editor.view.*", "bash.output.stdout_and_stderr", "bash.session.cwd_persists"]


def _config(tmp: Path) -> Path:
    cfg = tmp / "matrix.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [matrix]
        timeout = 10.0

        [[subject]]
        name = "reference-bash"
        tool_type = "bash_20250124"
        factory = "conformance.reference.bash:factory"

        [[subject]]
        name = "no-stderr"
        tool_type = "bash_20250124"
        factory = "{BROKEN}/bash_no_stderr.py:factory"

        [[subject]]
        name = "reference-editor"
        tool_type = "text_editor_20250728"
        factory = "conformance.reference.editor:text_editor_20250728"

        [[subject]]
        name = "reference-editor-old"
        tool_type = "text_editor_20250124"
        factory = "conformance.reference.editor:text_editor_20250124"
        """))
    return cfg


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("matrix-shards")
    cfg = str(_config(tmp))
    common = ["--envs", str(tmp / "envs"), "--check", *CHECKS]
    assert _main(["matrix", cfg, "--out", str(tmp / "one"), *common])[0] == 0
    for n in (2, 3):
        for k in range(1, n + 1):
            code, out, _ = _main(["matrix", cfg, "--out", str(tmp / f"n{n}-{k}"), *common,
                                  "--shard", f"{k}/{n}"])
            assert code == 0, out
    return tmp


def _matrix(d: Path) -> dict[str, Any]:
    doc = json.loads((d / "matrix.json").read_text())
    doc.pop("generated_at"), doc.pop("duration")  # wall time and timestamp
    for impl in doc["implementations"]:
        impl.pop("duration")
    return _masked(doc)


def _files(d: Path) -> list[str]:
    return sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file())


@pytest.mark.slow(40)
@pytest.mark.parametrize("n", [2, 3])
def test_matrix_shards_merged_equal_one_matrix_cell_for_cell(matrices: Path, n: int) -> None:
    shards = [str(matrices / f"n{n}-{k}") for k in range(1, n + 1)]
    code, out, _ = _main(["matrix", "merge", *shards, "--out", str(matrices / f"m{n}")])
    assert code == 0, out
    assert re.search(rf"critical path: shard [1-{n}]/{n}", out)
    merged, one = _matrix(matrices / f"m{n}"), _matrix(matrices / "one")
    assert [r["fingerprint"] for r in merged["checks"]] == [r["fingerprint"] for r in
                                                            one["checks"]]
    assert merged == one  # every cell, count, review flag, implementation and fingerprint
    assert _files(matrices / f"m{n}") == _files(matrices / "one")
    for name in (impl["runs_dir"] for impl in one["implementations"]):
        a = _masked(normalise(json.loads((matrices / f"m{n}" / name / "results.json")
                                         .read_text())))
        b = _masked(normalise(json.loads((matrices / "one" / name / "results.json").read_text())))
        assert a == b


@pytest.mark.slow(40)
def test_three_shards_cut_a_column_and_two_keep_columns_whole(matrices: Path) -> None:
    """Estimated costs: at N = 3 a column's cells run on two shards (the merge joined them
    above); at N = 2 every column fits a share and stays on one shard."""
    def columns(n: int) -> list[str]:
        return [c["name"] for k in range(1, n + 1) for c in
                json.loads((matrices / f"n{n}-{k}" / "shard.json").read_text())["columns"]]

    assert len(columns(2)) == len(set(columns(2))) == 4
    assert len(columns(3)) > len(set(columns(3))) == 4


def _shard_copy(src: Path, dst: Path, edit: Any) -> Path:
    shutil.copytree(src, dst)
    doc = json.loads((dst / "shard.json").read_text())
    edit(doc)
    (dst / "shard.json").write_text(json.dumps(doc))
    return dst


@pytest.mark.slow(40)
def test_matrix_merge_refuses_naming_the_shards(matrices: Path, tmp_path: Path) -> None:
    a, b = matrices / "n2-1", matrices / "n2-2"

    def refused(*dirs: Path) -> str:
        code, _, err = _main(["matrix", "merge", *map(str, dirs), "--out", str(tmp_path / "m")])
        assert code == 2
        assert not (tmp_path / "m" / "matrix.json").exists()
        return err

    assert "missing shard 2/2" in refused(a)
    assert "shard 1/2 is given twice" in refused(a, a, b)
    assert "split the matrix differently" in refused(a, matrices / "n3-2", matrices / "n3-3")
    assert "no shard.json" in refused(a, matrices / "one")

    def other_config(doc: dict[str, Any]) -> None:
        doc["config_sha256"] = "0" * 16

    assert re.search(r"n2-1 \(shard 1/2\) .*different configs",
                     refused(a, _shard_copy(b, tmp_path / "cfg", other_config)))

    def other_suite(doc: dict[str, Any]) -> None:
        doc["suite"]["version"] = "9.9.9"

    assert "run by tooluse-conformance 9.9.9" in refused(
        a, _shard_copy(b, tmp_path / "suite", other_suite))

    first = json.loads((a / "shard.json").read_text())["columns"][0]

    def overlap(doc: dict[str, Any]) -> None:
        doc["columns"].append(first)

    assert re.search(rf"overlapping shards: the cell {first['name']} × \S+ is in .*n2-1 "
                     r"\(shard 1/2\) and in .*overlap \(shard 2/2\)",
                     refused(a, _shard_copy(b, tmp_path / "overlap", overlap)))

    def lose(doc: dict[str, Any]) -> None:
        doc["columns"][0]["checks"].pop()

    assert "missing cells: no shard ran" in refused(a, _shard_copy(b, tmp_path / "lost", lose))


@pytest.mark.slow(40)
def test_matrix_merge_refuses_a_column_whose_environment_differs(matrices: Path,
                                                                 tmp_path: Path) -> None:
    shards = [matrices / f"n3-{k}" for k in (1, 2, 3)]
    docs = [json.loads((s / "shard.json").read_text()) for s in shards]
    names = [[c["name"] for c in d["columns"]] for d in docs]
    cut = next(n for n in names[0] + names[1] + names[2]
               if sum(n in ns for ns in names) > 1)
    last = max(i for i in range(3) if cut in names[i])

    def other_python(doc: dict[str, Any]) -> None:
        next(c for c in doc["columns"] if c["name"] == cut)["python"] = "3.99.0"

    shards[last] = _shard_copy(shards[last], tmp_path / "py", other_python)
    code, _, err = _main(["matrix", "merge", *map(str, shards), "--out", str(tmp_path / "m")])
    assert code == 2
    assert f"the column {cut} ran in different environments" in err and "3.99.0" in err


def test_coverage_names_the_first_overlap_then_the_missing_and_extra_units() -> None:
    """One pass serves both merges: the first unit two shards ran, else the plan's units no
    shard ran (in plan order) and the units no plan has."""
    from conformance.shards import coverage, first_few

    plan = [("s", "a"), ("s", "b"), ("s", "c")]
    twice = coverage([("1/2", [("s", "a")]), ("2/2", [("s", "b"), ("s", "a")])], plan)
    assert twice.overlap == (("s", "a"), "1/2", "2/2")
    gaps = coverage([("1/2", [("s", "c")]), ("2/2", [("t", "x")])], plan)
    assert gaps.overlap is None and gaps.missing == [("s", "a"), ("s", "b")]
    assert gaps.extra == [(("t", "x"), "2/2")]
    assert coverage([("1/1", plan)], plan) == coverage([], []) == type(gaps)(None, [], [])
    assert first_few(list("abcde")) == "a, b, c, d, e"
    assert first_few(list("abcdefg")) == "a, b, c, d, e and 2 more"
