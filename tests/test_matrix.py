"""`tooluse matrix`: a small config end to end (cells, counts, the review flag, a missing
interpreter), the reports, and the config's usage errors (exit 2)."""

from __future__ import annotations

import json
import platform
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.matrix.config import load_config
from conformance.matrix.model import REVIEW_LABEL, review, validate_matrix

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "broken"

#: A JSON-lines bash tool that runs each command in a fresh shell and drops stderr: it fails
#: bash.output.stdout_and_stderr (like the broken factory) and bash.session.cwd_persists.
FORGETFUL = textwrap.dedent("""\
    import json, os, subprocess, sys
    if os.environ.get("MATRIX_DEMO") != "on" or os.environ.get("TERM") != "dumb":
        sys.exit("the config's env did not reach the subject")
    for line in sys.stdin:
        cmd = json.loads(line).get("command", "")
        p = subprocess.run(["/bin/bash", "-c", cmd], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        print(json.dumps({"content": p.stdout.decode(errors="replace"), "is_error": False}),
              flush=True)
    """)

CHECKS = ["bash.output.stdout_and_stderr", "bash.session.cwd_persists",
          "editor.view.returns_file_content"]


def _config(tmp_path: Path) -> Path:
    (tmp_path / "forgetful.py").write_text(FORGETFUL)
    cfg = tmp_path / "matrix.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [matrix]
        timeout = 3.0

        [[subject]]
        name = "reference-bash"
        tool_type = "bash_20250124"
        factory = "conformance.reference.bash:factory"
        version_of = "tooluse-conformance"

        [[subject]]
        name = "no-stderr"
        tool_type = "bash_20250124"
        factory = "{BROKEN}/bash_no_stderr.py:factory"

        [[subject]]
        name = "forgetful"
        tool_type = "bash_20250124"
        command = "{sys.executable} forgetful.py"
        env = {{ TERM = "dumb", MATRIX_DEMO = "on" }}

        [[subject]]
        name = "never-starts"
        tool_type = "bash_20250124"
        factory = "{ROOT}/tests/subjects/py_subjects.py:factory_raises"

        [[subject]]
        name = "future-python"
        tool_type = "bash_20250124"
        factory = "conformance.reference.bash:factory"
        python = "3.99"

        [[subject]]
        name = "reference-editor"
        tool_type = "text_editor_20250728"
        factory = "conformance.reference.editor:text_editor_20250728"
        """))
    return cfg


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, str]:
    tmp = tmp_path_factory.mktemp("matrix")
    out = tmp / "out"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["matrix", str(_config(tmp)), "--out", str(out), "--envs", str(tmp / "envs"),
                     "--check", *CHECKS])
    return code, out, buf.getvalue()


def _row(doc: dict, check_id: str) -> dict:
    return next(r for r in doc["checks"] if r["id"] == check_id)


@pytest.mark.slow(25)  # the first to use the matrix fixture: it pays for the run
def test_cells_counts_and_flag(matrix: tuple[int, Path, str]) -> None:
    code, out, printed = matrix
    assert code == 0, printed
    doc = json.loads((out / "matrix.json").read_text())
    validate_matrix(doc)
    assert [r["id"] for r in doc["checks"]] == sorted(CHECKS)
    both = _row(doc, "bash.output.stdout_and_stderr")
    assert {n: c["outcome"] for n, c in both["cells"].items()} == {
        "reference-bash": "pass", "no-stderr": "fail", "forgetful": "fail",
        "never-starts": "not-run", "future-python": "unavailable", "reference-editor": "n-a"}
    # a case that never ran is no failure (issue 36): not-run, outside the review counts
    assert both["counts"]["fail"] == 2 and both["counts"]["applies"] == 3
    assert both["counts"]["not-run"] == 1 and both["counts"]["start_failures"] == 0
    assert "did not start" in both["cells"]["never-starts"]["message"]
    assert "start_failure" not in both["cells"]["no-stderr"]
    # flagged on the two that started (2 of 3); the one that never started is no evidence
    assert both["review"] and both["evidence"] == ["no-stderr", "forgetful"]
    cwd = _row(doc, "bash.session.cwd_persists")
    assert cwd["cells"]["forgetful"]["outcome"] == "fail"
    assert cwd["cells"]["no-stderr"]["outcome"] == "pass"
    assert cwd["counts"]["fail"] == 1 and not cwd["review"]  # one of three that started
    view = _row(doc, "editor.view.returns_file_content")
    assert view["cells"]["reference-editor"]["outcome"] == "pass"
    assert view["counts"]["n-a"] == 5 and view["counts"]["unavailable"] == 0  # not its type
    # the failure's evidence: message and a rerun command naming the subject and the check
    cell = both["cells"]["no-stderr"]
    assert cell["message"]
    assert "bash_no_stderr.py:factory" in cell["rerun"]
    assert cell["rerun"].endswith("--check bash.output.stdout_and_stderr")
    again = both["cells"]["forgetful"]["rerun"]
    assert again.startswith("MATRIX_DEMO=on TERM=dumb tooluse run --bash-cmd")
    assert "--pass-env MATRIX_DEMO" in again  # the subject gets it inside the sandbox too


def test_implementations_versions_and_unavailable_column(matrix: tuple[int, Path, str]) -> None:
    _, out, printed = matrix
    doc = json.loads((out / "matrix.json").read_text())
    impl = {i["name"]: i for i in doc["implementations"]}
    assert impl["reference-bash"]["version"] == doc["suite"]["version"]
    assert impl["reference-bash"]["python"] == platform.python_version()
    future = impl["future-python"]
    assert future["status"] == "unavailable" and future["reason"].startswith("no python3.99")
    assert future["summary"] is None
    assert "future-python: unavailable: no python3.99" in printed
    assert impl["forgetful"]["kind"] == "command" and impl["forgetful"]["summary"]["fail"] == 2
    # each column's own run output is kept
    assert (out / impl["no-stderr"]["runs_dir"] / "results.json").is_file()
    assert doc["checks"][0]["fingerprint"] and doc["generated_at"].endswith("Z")
    from conformance.matrix.stale import stale_checks

    assert stale_checks(doc) == []  # a fresh matrix matches the catalog
    doc["checks"][0]["severity"] = "INFO"
    doc["checks"][0]["fingerprint"] = "0" * 16
    assert stale_checks(doc)[0].startswith(f"{doc['checks'][0]['id']}: severity changed")


def test_markdown_and_html(matrix: tuple[int, Path, str]) -> None:
    _, out, _ = matrix
    md = (out / "matrix.md").read_text()
    assert "### `bash.output.stdout_and_stderr` (MUST)" in md
    assert f"{REVIEW_LABEL}: failed by 2 of the 3 implementations it applies to." in md
    assert "| `bash.output.stdout_and_stderr` ⚑ | MUST | pass | **FAIL** | **FAIL** | " \
           "not run | — | n/a | 2/3 |" in md
    assert "no python3.99" in md
    # the flagged check's source as a user opens it, and the sentence it rests on (issue 26)
    assert ("(source: How it works — https://platform.claude.com/docs/en/agents-and-tools/"
            "tool-use/bash-tool (text: docs/protocol-notes.md § 4))") in md
    assert "> Rests on: \u201cReturn stdout and stderr combined in one `tool_result`.\u201d" in md
    html = (out / "matrix.html").read_text()
    assert "rests on: \u201cReturn stdout and stderr combined in one `tool_result`.\u201d" in html
    assert html.count("<details>") >= 3  # every failing cell, and the flagged evidence
    assert "--check bash.output.stdout_and_stderr</code>" in html
    assert "<td class=n-a>n/a</td>" in html


@pytest.mark.parametrize(("counts", "flagged"), [
    ({"pass": 1, "fail": 2, "error": 0}, True),
    ({"pass": 1, "fail": 3, "error": 0, "start_failures": 1}, True),
    ({"pass": 2, "fail": 3, "error": 0, "start_failures": 1}, False),  # 2 of 4 that started
    ({"pass": 0, "fail": 2, "error": 0, "start_failures": 1}, False),  # 1 that started
    ({"pass": 2, "fail": 2, "error": 0}, False),  # half is not most
    ({"pass": 0, "fail": 1, "error": 0}, False),  # one implementation is not a pattern
    ({"pass": 0, "fail": 2, "error": 1}, True),
    ({"pass": 1, "fail": 2, "error": 1}, False),  # an error counts where the check applies
])
def test_review_rule(counts: dict[str, int], flagged: bool) -> None:
    assert review(counts) is flagged


BASE = """\
[[subject]]
name = "a"
tool_type = "bash_20250124"
factory = "conformance.reference.bash:factory"
"""


@pytest.mark.parametrize(("text", "expected"), [
    (BASE + "colour = 'red'\n", "unknown key 'colour'"),
    (BASE + "timout = 3\n", "did you mean 'timeout'"),
    (BASE + "command = 'python x.py'\n", "give either factory (module:attr) or command, not both"),
    (BASE.replace('factory = "conformance.reference.bash:factory"\n', ""),
     "give either factory (module:attr) or command, one of them"),
    (BASE + BASE, "name 'a' is used twice"),
    (BASE.replace("bash_20250124", "bash_1999"), "tool_type 'bash_1999' is not a bash or text "
                                                 "editor tool type"),
    (BASE.replace("bash_20250124", "web_search_20250305"), "is not a bash or text editor"),
    (BASE + "python = 'latest'\n", "python 'latest': give a version such as \"3.12\""),
    (BASE + "timeout = -1\n", "timeout = -1: give a positive number"),
    ("[matrix]\nspeed = 1\n" + BASE, "[matrix]: unknown key 'speed'"),
    ("[matrix]\n", "no [[subject]] entry"),
    (BASE + "requirements = 'x'\n", "requirements must be a list"),
    (BASE + "max_characters = 100\n", "max_characters is a positive integer, for text editor"),
    (BASE + "env = { MY_API_KEY = 'x' }\n", "env MY_API_KEY: a credential never reaches"),
    (BASE + "env = { TERM = 1 }\n", "env must be a table of strings"),
    ("[[subject]\n", "not valid TOML"),
])
def test_bad_config_exits_2_naming_the_problem(tmp_path: Path, capsys, text: str,
                                               expected: str) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text(text)
    assert main(["matrix", str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tooluse matrix: error: ") and str(cfg) in err
    assert expected in err
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_missing_config_and_bad_check(tmp_path: Path, capsys) -> None:
    assert main(["matrix", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o")]) == 2
    assert "cannot read the matrix config" in capsys.readouterr().err
    cfg = tmp_path / "m.toml"
    cfg.write_text(BASE)
    assert main(["matrix", str(cfg), "--out", str(tmp_path / "o"), "--check", "no.such.*"]) == 2
    assert "matches no check" in capsys.readouterr().err


def test_unknown_subject_filter(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text(BASE)
    assert main(["matrix", str(cfg), "--out", str(tmp_path / "o"), "--subject", "b"]) == 2
    assert "--subject 'b' is not in" in capsys.readouterr().err


def test_config_defaults_and_overrides(tmp_path: Path) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text("[matrix]\ntimeout = 5\njobs = 3\n" + BASE
                   + "startup_timeout = 60.0\nenv = { TERM = 'dumb' }\n"
                   + "requirements = ['x==1']\n")
    config = load_config(cfg)
    (entry,) = config.subjects
    assert config.timeout == 5.0 and config.jobs == 3 and config.startup_timeout == 30.0
    assert entry.family == "bash" and entry.startup_timeout == 60.0 and entry.own_env
    assert entry.env == {"TERM": "dumb"} and entry.requirements == ("x==1",)
    assert config.base_dir == tmp_path.resolve()


def test_find_python_skips_what_does_not_run(tmp_path: Path, monkeypatch) -> None:
    from conformance.matrix import envs

    fake = tmp_path / "bin" / "python3.77"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'pyenv: python3.77: command not found' >&2\nexit 127\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    envs.find_python.cache_clear()
    assert envs.find_python("3.77") is None  # a shim that does not run is no interpreter
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    real = tmp_path / "no-pyenv" / "versions" / f"{here}.0" / "bin" / "python"
    real.parent.mkdir(parents=True)
    real.symlink_to(sys.executable)
    envs.find_python.cache_clear()
    assert envs.find_python(here) == str(real)
    envs.find_python.cache_clear()


@pytest.mark.slow(45)  # builds a virtual environment (~40 s; needs the package index)
def test_a_column_in_its_own_python(tmp_path: Path, capsys) -> None:
    from conformance.matrix.envs import find_python

    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    other = next((v for v in ("3.12", "3.13", "3.11") if v != here and find_python(v)), None)
    if other is None:
        pytest.skip("no second Python interpreter on this machine")
    cfg = tmp_path / "m.toml"
    cfg.write_text(BASE + f'python = "{other}"\nversion_of = "jsonschema"\n')
    args = ["matrix", str(cfg), "--out", str(tmp_path / "out"), "--envs", str(tmp_path / "envs"),
            "--check", "bash.output.roundtrip"]
    assert main(args) == 0, capsys.readouterr()
    doc = json.loads((tmp_path / "out" / "matrix.json").read_text())
    (impl,) = doc["implementations"]
    assert impl["python"].startswith(other + ".") and impl["version"]  # its own interpreter
    assert doc["checks"][0]["cells"]["a"]["outcome"] == "pass"
    (env,) = [d for d in (tmp_path / "envs").iterdir() if d.is_dir()]
    assert (env / ".tooluse-ready").is_file()
    assert impl["launcher"].endswith(f"{env.name}/bin/tooluse")
    built = (env / ".tooluse-ready").stat().st_mtime
    assert main(args) == 0  # the environment is reused, not rebuilt
    assert (env / ".tooluse-ready").stat().st_mtime == built
    shutil.rmtree(tmp_path / "envs")  # ~110 MB: not left in pytest's kept temporary directories


def test_the_matrix_page_explains_pass_star_and_folds_reproducers(
        matrix: tuple[int, Path, str]) -> None:
    """Issue 26, point 8: the legend says what ``pass*`` is; reproducers start folded."""
    html = (matrix[1] / "matrix.html").read_text()
    assert "pass* (passed, and noted the convention it observed" in html
    assert "<details class=reproducer><summary class=small>reproducer" in html \
        or "<pre>" not in html
