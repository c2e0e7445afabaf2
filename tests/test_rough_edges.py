"""Issue 14, point 6: the rough edges a new user met, each a clear one-line error or a true
statement now.

Unreadable files and directories are simulated by making their reads fail with ``EACCES``
(``chmod 000`` is not enough: root, and some file systems, read them anyway).
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import COMMANDS, main
from simulator.cassette import (
    CassetteError,
    default_fixtures_root,
    iter_cassette_paths,
    load_cassette,
)

CASSETTE = next(iter_cassette_paths(default_fixtures_root() / "web"))


@pytest.fixture
def deny(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """``deny(path)``: reading ``path`` (a file) or listing it (a directory) fails with EACCES."""
    denied: set[str] = set()
    real_open, real_scandir = Path.open, os.scandir

    def fake_open(self: Path, *a: Any, **k: Any) -> Any:
        if os.path.abspath(self) in denied:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_open(self, *a, **k)

    def fake_scandir(path: Any = ".") -> Any:
        # shutil.rmtree lists directories by file descriptor (tmp_path's removal, say)
        if not isinstance(path, int) and os.path.abspath(os.fspath(path)) in denied:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(Path, "open", fake_open)
    monkeypatch.setattr(os, "scandir", fake_scandir)

    def add(path: Path) -> None:
        denied.add(os.path.abspath(path))
        path.chmod(0)  # and for real, where the mode is honoured

    return add


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus" / "sub").mkdir(parents=True)
    shutil.copy(CASSETTE, tmp_path / "corpus" / "sub" / "a.json")
    (tmp_path / "locked").mkdir()
    shutil.copy(CASSETTE, tmp_path / "locked" / "b.json")
    (tmp_path / "empty").mkdir()
    yield tmp_path
    for p in (tmp_path / "corpus" / "sub", tmp_path / "locked",  # directories first
              tmp_path / "corpus" / "sub" / "a.json"):
        p.chmod(0o755)


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[str, str]:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"tooluse {argv[0]}: error: "), err
    return out, err


# --- unreadable cassettes and directories -------------------------------------------------------

def test_an_unreadable_cassette_is_a_cassette_error(corpus: Path, deny: Callable[[Path], None]
                                                    ) -> None:
    deny(corpus / "corpus" / "sub" / "a.json")
    with pytest.raises(CassetteError, match="a.json:/: cannot read the file: permission denied"):
        load_cassette(corpus / "corpus" / "sub" / "a.json", cache=False)
    with pytest.raises(CassetteError, match="cannot read the file: permission denied"):
        load_cassette(corpus / "corpus" / "sub" / "a.json")


def test_an_unreadable_directory_is_not_called_empty(corpus: Path, deny: Callable[[Path], None]
                                                     ) -> None:
    deny(corpus / "locked")
    with pytest.raises(CassetteError, match="locked:/: cannot read the directory: permission"):
        list(iter_cassette_paths(corpus / "locked"))
    deny(corpus / "corpus" / "sub")  # below the directory given, too
    with pytest.raises(CassetteError, match="sub:/: cannot read the directory"):
        list(iter_cassette_paths(corpus / "corpus"))


def test_serve_names_an_unreadable_cassette_in_one_line(
        corpus: Path, deny: Callable[[Path], None], capsys: pytest.CaptureFixture[str]) -> None:
    deny(corpus / "corpus" / "sub" / "a.json")
    _, err = one_error_line(capsys, ["serve", "corpus", "--port", "0"])
    assert "a.json" in err and "cannot read the file: permission denied" in err
    assert "check its permissions or point at another file" in err


def test_serve_names_an_unreadable_directory(
        corpus: Path, deny: Callable[[Path], None], capsys: pytest.CaptureFixture[str]) -> None:
    deny(corpus / "locked")
    _, err = one_error_line(capsys, ["serve", "locked", "--port", "0"])
    assert "locked" in err and "cannot read the directory: permission denied" in err
    assert "no cassettes" not in err


def test_lint_fixtures_reports_an_unreadable_cassette_as_a_problem(
        corpus: Path, deny: Callable[[Path], None], capsys: pytest.CaptureFixture[str]) -> None:
    deny(corpus / "corpus" / "sub" / "a.json")
    assert main(["lint-fixtures", "corpus"]) == 1
    out, err = capsys.readouterr()
    assert "sub/a.json:/: cannot read the file: permission denied" in out
    assert "Traceback" not in out + err
    assert "1 cassette(s) linted: 1 problem(s) in 1 file(s)" in err


def test_lint_fixtures_names_an_unreadable_directory(
        corpus: Path, deny: Callable[[Path], None], capsys: pytest.CaptureFixture[str]) -> None:
    deny(corpus / "locked")
    out, err = one_error_line(capsys, ["lint-fixtures", "locked"])
    assert "cannot read the directory: permission denied" in err and out == ""


def test_lint_fixtures_prints_no_clean_summary_before_its_error(
        corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, err = one_error_line(capsys, ["lint-fixtures", "empty"])
    assert "no cassettes found" in err
    assert "linted" not in out + err


def test_a_file_path_is_not_called_a_fixtures_directory(
        corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, err = one_error_line(capsys, ["serve", "missing.json", "--port", "0"])
    assert "no such file or directory" in err and "fixtures directory" not in err


# --- wording -------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv,words", [
    (["run", "--editor", "reference-editor-20250728", "--editor-type", "bash_20250124"],
     "'bash_20250124' is not an editor tool type"),
    (["run", "--editor", "reference-bash"],
     "'reference-bash' is a bash reference subject, not an editor one"),
    (["run", "--bash", "reference-editor-20250728"],
     "is an editor reference subject, not a bash one"),
])
def test_articles(argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, err = one_error_line(capsys, argv)
    assert words in err


def test_a_bad_host_is_told_about_the_host(capsys: pytest.CaptureFixture[str]) -> None:
    _, err = one_error_line(capsys, ["serve", str(CASSETTE), "--host", "no-such-host.invalid",
                                     "--port", "0"])
    assert "--host 'no-such-host.invalid' is not a known host name" in err
    assert "--port" not in err.split(";", 1)[1]


def test_an_address_of_another_machine_is_told_about_the_host(
        capsys: pytest.CaptureFixture[str]) -> None:
    _, err = one_error_line(capsys, ["serve", str(CASSETTE), "--host", "192.0.2.1",
                                     "--port", "0"])  # TEST-NET-1: never this machine's
    assert "--host '192.0.2.1' is not an address of this machine" in err


def test_a_port_in_use_is_told_about_the_port(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        _, err = one_error_line(capsys, ["serve", str(CASSETTE), "--port", str(port)])
    assert "the port is in use: choose another --port" in err


@pytest.mark.parametrize("command", [[], *([c] for c in COMMANDS)])
def test_help_has_no_rst_markup(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main([*command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    typed = " ".join(command).replace("-merge", " merge")  # run-merge is `tooluse run merge`
    assert out.startswith(f"usage: tooluse {typed}".rstrip()), out[:200]
    for markup in ("`", ":func:", ":class:", ":mod:"):
        assert markup not in out, out
    if not command:
        assert "one module per subcommand" not in out  # developer text stays in the docstring


def test_an_unreadable_results_file_is_a_results_file_error(
        tmp_path: Path, deny: Callable[[Path], None]) -> None:
    from conformance.reports.results_file import ResultsFileError, load_results

    path = tmp_path / "results.json"
    path.write_text("{}")
    deny(path)
    try:
        with pytest.raises(ResultsFileError, match="cannot read the file: Permission denied"):
            load_results(path)
    finally:
        path.chmod(0o644)
