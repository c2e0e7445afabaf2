"""Issue 9: bad fixtures and options, for every ``tooluse`` subcommand that takes them.

A corrupt cassette, an unknown subject spec, a subject whose import fails, a missing file: each is
ONE line on stderr naming the problem (and, where there is one, the fix), exit 2, no traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main

HOSTILE = Path(__file__).resolve().parent / "hostile"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corrupt.json").write_text("{not json")
    (tmp_path / "notcassette.json").write_text('{"id": 3}')
    (tmp_path / "empty").mkdir()
    (tmp_path / "syntax.py").write_text("def factory(:\n")
    return tmp_path


# (argv, words that must appear in the one line)
CASES = [
    (["run", "--bash", "nosuchmodule:factory"], ["nosuchmodule", "PYTHONPATH"]),
    (["run", "--bash", f"{HOSTILE}/broken_import.py:factory"], ["ImportError", "frobnicate", "fix"]),
    (["run", "--bash", "syntax.py:factory"], ["SyntaxError", "fix"]),
    (["run", "--bash", "/nope/missing.py:factory"], ["does not exist", "give"]),
    (["run", "--bash", "notaspec"], ["notaspec", "module:attr"]),
    (["run", "--bash", "conformance.reference.bash:nosuch"], ["no attribute", "factory"]),
    (["run", "--bash-cmd", "'unclosed"], ["does not parse", "quote"]),
    (["run", "--editor", "reference-editor-20250728", "--editor-type", "text_editor_29990101"],
     ["text_editor_29990101", "text_editor_20250728"]),
    (["run", "--bash", "reference-bash", "--expected-failures", "missing.txt", "--out", "o"],
     ["missing.txt", "not found"]),
    (["run", "--bash", "reference-bash", "--check", "nosuch.check"], ["nosuch.check", "tooluse checks"]),
    (["run", "--bash", "reference-bash", "--out", "/proc/nope"], ["/proc/nope", "writable"]),
    (["run", "--bash", "reference-bash", "--memory-limit", "lots"], ["lots", "512M"]),
    (["run", "--bash", "reference-bash", "--timeout", "-1"], ["--timeout", "positive"]),
    (["run"], ["no subject", "--bash"]),
    (["serve", "missing.json"], ["missing.json", "point at another file"]),
    (["serve", "corrupt.json"], ["corrupt.json", "broken JSON", "fix the cassette"]),
    (["serve", "notcassette.json"], ["notcassette.json", "version"]),
    (["serve", "empty"], ["no cassettes", "empty"]),
    (["serve", "{cassette}", "--fault", "meteor=2"], ["meteor", "KIND=RATE"]),
    (["replay", "missing.json"], ["missing.json", "point at another file"]),
    (["replay", "corrupt.json"], ["corrupt.json", "broken JSON", "fix the cassette"]),
    (["diff", "missing.json", "corrupt.json"], ["missing.json", "no such file"]),
    (["diff", "corrupt.json", "corrupt.json"], ["corrupt.json", "results.json"]),
    (["diff", "notcassette.json", "notcassette.json"], ["notcassette.json", "results.json"]),
    (["lint-fixtures", "/nope"], ["/nope", "fixtures directory"]),
    (["lint-tools", "missing.json"], ["missing.json", "no such file"]),
    (["lint-tools", "corrupt.json"], ["corrupt.json", "broken JSON"]),
    (["validate", "missing.json"], ["missing.json", "no such file"]),
    (["validate", "corrupt.json"], ["corrupt.json", "broken JSON"]),
    (["record", "--upstream", "notaurl", "--out", "rec"], ["notaurl", "https://"]),
    (["record", "--upstream", "http://127.0.0.1:9", "--out", "/proc/nope", "--port", "0"],
     ["/proc/nope", "writable"]),
    (["checks", "--tool-type", "nosuch_1"], ["nosuch_1", "known tool types"]),
    (["fixtures", "nosuch/prefix"], ["nosuch/prefix", "families"]),
    (["probe", "--model", "m", "--out", "o", "--base-url", "http://127.0.0.1:9", "missing.json"],
     ["missing.json", "no such file"]),
    (["probe", "--model", "m", "--out", "o", "--base-url", "http://127.0.0.1:9", "corrupt.json"],
     ["corrupt.json", "broken JSON", "fix the cassette"]),
    (["matrix", "missing.toml", "--out", "m"], ["missing.toml", "cannot read the matrix config"]),
    (["matrix", "corrupt.json", "--out", "m"], ["corrupt.json", "not valid TOML"]),
    (["fidelity", "/nope"], ["/nope", "no such captures directory"]),
    (["findings", "/nope"], ["/nope", "no matrix.json"]),
    (["init", "bash", "--out", "/nope/dir/tool.py"], ["/nope/dir", "not a directory"]),
    (["fidelity", "corrupt.json"], ["corrupt.json", "directory of capture files"]),
    # `tooluse run merge` / `tooluse matrix merge` (the second word picks these commands)
    (["run-merge", "missing", "--out", "o"], ["missing", "file not found"]),
    (["run-merge", "corrupt.json", "--out", "o"], ["corrupt.json", "broken JSON"]),
    (["matrix-merge", "/nope", "--out", "o"], ["/nope", "no shard.json"]),
    (["matrix", "merge", "/nope", "--out", "o"], ["tooluse matrix merge", "no shard.json"]),
]


@pytest.mark.parametrize("argv,words", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_one_line_naming_the_problem_exit_2(files: Path, capsys: pytest.CaptureFixture[str],
                                            argv: list[str], words: list[str]) -> None:
    from simulator.cassette import iter_corpus

    cassette = str(next(c.path for c in iter_corpus() if c.path is not None))
    code = main([a.replace("{cassette}", cassette) for a in argv])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert "error:" in lines[0], lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_every_subcommand_that_takes_a_file_is_covered() -> None:
    from conformance.cli import COMMANDS

    covered = {argv[0] for argv, _ in CASES}
    assert set(COMMANDS) <= covered, set(COMMANDS) - covered


def test_lint_fixtures_refuses_a_corrupt_cassette(files: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # Linting is that command's job: a broken cassette is a finding (exit 1), not a usage error.
    assert main(["lint-fixtures", "corrupt.json"]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert "corrupt.json" in out.out + out.err
