"""The ``sdk_*`` nox sessions run every test that drives the ``anthropic`` SDK, at the lowest
release pyproject admits and at the newest; CI runs the lowest after ``nox -s tests`` (issue 41)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _noxfile() -> dict[str, object]:
    """SDK_TESTS and sdk_lower_bound from noxfile.py, without importing nox (not a test
    dependency): the constant read as a literal, the function compiled on its own."""
    import ast
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    found: dict[str, object] = {"Path": Path, "__file__": str(ROOT / "noxfile.py")}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "SDK_TESTS" for t in node.targets):
            found["SDK_TESTS"] = ast.literal_eval(node.value)
        if isinstance(node, ast.FunctionDef) and node.name == "sdk_lower_bound":
            exec(compile(ast.Module([node], []), "noxfile.py", "exec"), found)  # noqa: S102
    return found


def test_every_test_that_imports_the_sdk_runs_at_both_ends_of_the_range() -> None:
    nox_module = _noxfile()
    importing = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_*.py")
                 if re.search(r"^\s*(import anthropic|from anthropic\b)|importorskip\(\"anthropic",
                              p.read_text(encoding="utf-8"), re.MULTILINE)}
    listed = set(nox_module["SDK_TESTS"])  # type: ignore[call-overload]
    # test_wheel installs its own wheel: it runs in `tests` only
    assert importing - {"tests/test_wheel.py"} == listed, (
        f"add to noxfile.py SDK_TESTS: {sorted(importing - listed - {'tests/test_wheel.py'})}; "
        f"not SDK-facing: {sorted(listed - importing)}")
    assert all((ROOT / t).is_file() for t in listed)


def test_the_lowest_is_pyprojects_lower_bound_and_ci_runs_it() -> None:
    nox_module = _noxfile()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bound = re.search(r'"anthropic>=([0-9.]+)', pyproject)
    assert bound is not None
    assert nox_module["sdk_lower_bound"]().startswith(bound.group(1))  # type: ignore[operator]
    assert "sdk_lowest" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
