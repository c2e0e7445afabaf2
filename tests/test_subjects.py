"""Subjects: spec resolution, what handlers may return, factories' keywords, teardown, commands."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

import pytest

from conformance.errors import UsageError
from conformance.run import subject_from_option
from conformance.subjects import (
    SubjectStartError,
    command_subject,
    factory_subject,
    resolve_factory,
)
from conformance.subjects.case import CaseSettings
from conformance.subjects.launch import Confinement

HERE = Path(__file__).resolve().parent
PY = HERE / "subjects" / "py_subjects.py"


def spec(attr: str) -> str:
    return f"{PY}:{attr}"


@pytest.fixture
def open_subject(tmp_path: Path):
    sessions = []

    def start(subject, timeout: float = 2.0):
        workdir = Path(tempfile.mkdtemp(dir=tmp_path))
        s = subject.open(workdir.resolve(), CaseSettings(confinement=Confinement.from_environ(os.environ), timeout=timeout))
        sessions.append(s)
        return s

    yield start
    for s in sessions:
        s.close(grace=1.0)


# --- resolution and usage errors -----------------------------------------------------------------

@pytest.mark.parametrize("bad, words", [
    ("no_colon_here", ["module:attr"]),
    ("tooluse_surely_absent_module:make", ["no module named", "PYTHONPATH"]),
    (f"{PY}:no_such_factory", ["no attribute 'no_such_factory'", "factories ("]),
    (f"{PY}:returns_strr", ["no attribute 'returns_strr'", "(returns_str,"]),
    (f"{PY}:NOT_A_FACTORY", ["not a factory", "callable"]),
    ("/nonexistent/dir/subject.py:factory", ["does not exist"]),
    ("json:", ["module:attr"]),
])
def test_bad_specs_are_usage_errors_naming_the_fix(bad: str, words: list[str]) -> None:
    with pytest.raises(UsageError) as e:
        resolve_factory(bad)
    for w in words:
        assert w in str(e.value)


def test_import_error_inside_the_module_names_the_dependency(tmp_path: Path) -> None:
    mod = tmp_path / "needs_dep.py"
    mod.write_text("import tooluse_missing_dependency_xyz\n\ndef factory(workdir):\n    pass\n")
    with pytest.raises(UsageError, match="tooluse_missing_dependency_xyz"):
        resolve_factory(f"{mod}:factory")
    broken = tmp_path / "raises_at_import.py"
    broken.write_text("raise RuntimeError('boom at import')\n")
    with pytest.raises(UsageError, match="boom at import"):
        resolve_factory(f"{broken}:factory")


def test_tool_type_is_validated_against_the_registry() -> None:
    with pytest.raises(UsageError, match="bash_20250124"):
        factory_subject(spec("returns_str"), family="bash", tool_type="bash_20990101")
    with pytest.raises(UsageError, match="text_editor_20250728"):
        factory_subject(spec("returns_str"), family="editor", tool_type="bash_20250124")
    assert factory_subject(spec("returns_str"), family="editor").tool_type == "text_editor_20250728"


def test_reference_names_and_option_checks() -> None:
    ref = subject_from_option("reference-bash", family="bash")
    assert (ref.name, ref.tool_type, ref.spec) == (
        "reference-bash", "bash_20250124", "conformance.reference.bash:factory")
    with pytest.raises(UsageError, match="reference-bash"):
        subject_from_option("nonsense", family="bash")
    with pytest.raises(UsageError, match="takes no 'max_characters'"):
        factory_subject(spec("without_timeout"), family="editor", options={"max_characters": 5})


def test_relative_path_specs_are_made_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE)
    s = factory_subject("subjects/py_subjects.py:returns_str", family="bash")
    assert s.spec == f"{PY}:returns_str"
    assert s.name == "py_subjects.py:returns_str"


# --- what handlers return ------------------------------------------------------------------------

def test_str_result_runs_in_the_workdir_with_the_input(open_subject) -> None:
    s = open_subject(factory_subject(spec("returns_str"), family="bash"))
    r = s.call({"command": "x"})
    assert not r.is_error and r.raised is None
    assert f"cwd={s.workdir} workdir={s.workdir}" in r.text
    assert "{'command': 'x'}" in r.text
    assert s.history == [{"command": "x"}]


@pytest.mark.parametrize("attr, content, is_error", [
    ("returns_blocks", [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}], False),
    ("returns_dict", "bad", True),
    ("async_handler", "async ok", False),
    ("prints", "clean", False),
    ("with_timeout", "timeout=1.5", False),
    ("without_timeout", "no timeout parameter", False),
])
def test_result_shapes(open_subject, attr: str, content: object, is_error: bool) -> None:
    s = open_subject(factory_subject(spec(attr), family="bash"), timeout=1.5)
    r = s.call({"command": "x"})
    assert (r.content, r.is_error) == (content, is_error)
    assert s.faults == []


def test_blocks_text_is_joined(open_subject) -> None:
    r = open_subject(factory_subject(spec("returns_blocks"), family="bash")).call({})
    assert r.text == "one\ntwo"


def test_exception_is_an_error_result_not_a_fault(open_subject) -> None:
    s = open_subject(factory_subject(spec("raises"), family="bash"))
    r = s.call({"command": "x"})
    assert r.is_error and "ValueError: no such command" in r.text
    assert r.raised is not None and "ValueError" in r.raised
    assert s.faults == []
    assert not s.call({"command": "again"}).timed_out  # still alive


def test_returning_something_else_is_a_fault(open_subject) -> None:
    s = open_subject(factory_subject(spec("returns_none"), family="bash"))
    r = s.call({"command": "x"})
    assert r.is_error
    assert s.faults and "NoneType" in s.faults[0]


def test_options_reach_the_factory_and_the_session(open_subject) -> None:
    s = open_subject(factory_subject(spec("with_option"), family="editor",
                                     options={"max_characters": 123}))
    assert s.call({}).text == "max_characters=123"
    assert s.max_characters == 123 and s.options == {"max_characters": 123}


@pytest.mark.parametrize("attr, lines", [("Closing", ["opened", "closed"]),
                                         ("AsyncClosing", ["opened", "aclosed"])])
def test_close_or_aclose_at_teardown(open_subject, tmp_path: Path, monkeypatch, attr, lines) -> None:
    mark = tmp_path / "mark.txt"
    monkeypatch.setenv("TOOLUSE_TEST_MARK", str(mark))
    monkeypatch.setenv("TOOLUSE_SANDBOX", "off")  # the mark is outside the case: read-only there
    s = open_subject(factory_subject(spec(attr), family="bash"))
    assert s.call({}).text == "ok"
    s.close()
    assert mark.read_text().splitlines() == lines


def test_environment_is_the_harness_environment_at_each_start(open_subject, monkeypatch) -> None:
    sub = factory_subject(spec("returns_env"), family="bash")
    monkeypatch.setenv("TOOLUSE_TEST_VALUE", "first")
    assert open_subject(sub).call({}).text == "first"
    monkeypatch.setenv("TOOLUSE_TEST_VALUE", "second")
    assert open_subject(sub).call({}).text == "second"
    monkeypatch.delenv("TOOLUSE_TEST_VALUE")
    assert open_subject(sub).call({}).text == "unset"


def test_factory_failure_is_a_start_error(open_subject) -> None:
    with pytest.raises(SubjectStartError, match="cannot open the sandbox"):
        open_subject(factory_subject(spec("factory_raises"), family="bash"))
    with pytest.raises(SubjectStartError, match="not callable"):
        open_subject(factory_subject(spec("not_callable"), family="bash"))


# --- commands (any language) ---------------------------------------------------------------------

def _py_command(code: str) -> str:
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


ECHO_ENV = """
import json, os, sys
for line in sys.stdin:
    inp = json.loads(line)
    out = {"cwd": os.getcwd(), "workdir": os.environ["TOOLUSE_WORKDIR"],
           "timeout": os.environ["TOOLUSE_TIMEOUT"], "mc": os.environ.get("TOOLUSE_MAX_CHARACTERS"),
           "input": inp}
    print(json.dumps({"content": json.dumps(out), "is_error": bool(inp.get("fail"))}), flush=True)
"""


def test_command_subject_gets_cwd_env_and_json_lines(open_subject) -> None:
    subject = command_subject(_py_command(ECHO_ENV), family="editor",
                              options={"max_characters": 9})
    assert subject.kind == "command" and subject.info.spec.startswith("cmd:")
    s = open_subject(subject, timeout=2.5)
    first = json.loads(s.call({"command": "view", "path": "a b"}).text)
    assert first == {"cwd": str(s.workdir), "workdir": str(s.workdir), "timeout": "2.5",
                     "mc": "9", "input": {"command": "view", "path": "a b"}}
    assert s.call({"fail": True}).is_error
    assert s.faults == []


@pytest.mark.parametrize("answer, fault", [
    ("not json at all", "not JSON"),
    ('{"text": "no content key"}', 'no "content"'),
    ('{"content": 5}', "content is int"),
    ('{"content": "x", "is_error": "yes"}', "is_error"),
])
def test_command_protocol_violations_are_faults(open_subject, answer: str, fault: str) -> None:
    code = f"import sys\nfor line in sys.stdin:\n    print({answer!r}, flush=True)\n"
    s = open_subject(command_subject(_py_command(code), family="bash"))
    r = s.call({"command": "x"})
    assert r.is_error
    assert s.faults and fault in s.faults[0]


def test_relative_file_paths_in_a_plain_command_are_made_absolute(monkeypatch) -> None:
    monkeypatch.chdir(HERE)
    assert command_subject("node subjects/bash_tool.mjs --x", family="bash").spec == (
        f"node {HERE}/subjects/bash_tool.mjs --x")
    for left_alone in ("node subjects/bash_tool.mjs | cat", "node subjects/absent.mjs",
                       'node "subjects/bash_tool.mjs"'):
        assert command_subject(left_alone, family="bash").spec == left_alone


def test_bad_commands_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="empty"):
        command_subject("   ", family="bash")
    with pytest.raises(UsageError, match="does not parse"):
        command_subject("node 'unclosed", family="bash")
