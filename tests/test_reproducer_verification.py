"""Every reproducer is verified before it is printed: replayed exactly as written (its setup
steps before the inputs they name, then the inputs) on a fresh subject in a fresh directory, and
marked 'verified' or 'did not reproduce'. What a check planted is stated as setup, never as a
tool call; what it plants outside the case's directory is written relative to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from broken.editor_harness import make_session
from broken.editor_kit import by_name

import conformance.checks.editor  # noqa: F401
from conformance.catalog import CATALOG, CheckFailure
from conformance.reference.editor import TextEditor
from conformance.reproducers import apply_setup, materialize, relativize_value, remove_outside
from conformance.results import NOT_REPRODUCED, VERIFIED, Outcome
from conformance.runner import run_case
from conformance.session import allow_spawn
from conformance.subjects import factory_subject

TABS = "editor.bytes.tabs_preserved"


def _run(name: str, check: str, tmp_path: Path) -> Any:
    b = by_name(name)
    subject = factory_subject(b.spec, family="editor", tool_type=b.tool_type, name=name)
    return run_case(subject, CATALOG[check], timeout=5.0, tmp_root=tmp_path)


def _replay(result: Any, editor_cls: type[TextEditor], tool_type: str, where: Path) -> list[Any]:
    """Replay a printed reproducer by hand, as a user would: setup steps, then inputs."""
    where.mkdir(parents=True)
    editor = editor_cls(where, tool_type=tool_type)
    made: list[Path] = []
    answers = []
    try:
        for i, tool_input in enumerate(materialize(result.reproducer, where), 1):
            apply_setup(result.setup, i, where, made)
            answers.append(editor(tool_input))
    finally:
        remove_outside(made)
    return answers


def test_a_failure_that_replays_is_verified_and_plants_are_setup(tmp_path: Path) -> None:
    r = _run("ExpandsTabs", TABS, tmp_path)
    assert r.outcome is Outcome.FAIL, r.message
    assert r.reproduced == VERIFIED
    assert r.setup and all(x["before_input"] == 1 and "text" in x for x in r.setup)
    assert all(x["command"] != "create" for x in r.reproducer)  # nothing disguised as a call


class _FirstInstanceExpandsTabs(TextEditor):
    """Expands tabs in the first instance only: a replay on a fresh instance is clean."""

    instances = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        type(self).instances += 1
        self.broken = type(self).instances == 1

    def _write(self, path: Path, data: bytes, previous: bytes) -> None:
        super()._write(path, data.expandtabs() if self.broken else data, previous)


def test_a_failure_that_does_not_replay_is_labelled_so(tmp_path: Path) -> None:
    tool_type = "text_editor_20250728"

    def factory(workdir: Path) -> Any:
        return make_session(lambda w, timeout=None: _FirstInstanceExpandsTabs(
            w, tool_type=tool_type), tool_type, workdir)

    s = factory(tmp_path / "case")
    (tmp_path / "case").mkdir()
    allow_spawn(s, factory)
    with pytest.raises(CheckFailure) as e:
        CATALOG[TABS].func(s)
    assert e.value.reproduced == NOT_REPRODUCED
    # and the same check on an editor broken in every instance: verified
    _FirstInstanceExpandsTabs.instances = 0

    class Always(_FirstInstanceExpandsTabs):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.broken = True

    def always(workdir: Path) -> Any:
        return make_session(lambda w, timeout=None: Always(w, tool_type=tool_type), tool_type,
                            workdir)

    s = always(tmp_path / "case2")
    (tmp_path / "case2").mkdir()
    allow_spawn(s, always)
    with pytest.raises(CheckFailure) as e:
        CATALOG[TABS].func(s)
    assert e.value.reproduced == VERIFIED


def test_directory_view_reproducer_plants_the_directory_and_replays(tmp_path: Path) -> None:
    name = "ShellDirectoryView"
    r = _run(name, "editor.paths.never_executed_by_directory_view", tmp_path)
    assert r.outcome is Outcome.FAIL, r.message
    assert r.reproduced == VERIFIED
    assert [x["command"] for x in r.reproducer] == ["view"]  # no create of a file in a new dir
    assert r.setup and r.setup[0]["path"].endswith("/inside.txt")
    b = by_name(name)
    where = tmp_path / "by-hand"
    _replay(r, b.cls, b.tool_type, where)
    assert list(where.glob("PWNED*")), "replayed as printed, the payload runs again"


def test_outside_workdir_reproducer_plants_its_file_relative_to_the_case(tmp_path: Path) -> None:
    name = "Unconfined"
    r = _run(name, "editor.paths.outside_workdir_refused", tmp_path)
    assert r.outcome is Outcome.FAIL, r.message
    assert r.reproduced == VERIFIED
    outside = [x for x in r.setup if x["path"].startswith("$TOOLUSE_WORKDIR.outside/")]
    assert outside and outside[0]["text"] == "TOP-SECRET\n"
    b = by_name(name)
    answers = _replay(r, b.cls, b.tool_type, tmp_path / "by-hand")
    assert "TOP-SECRET" in str(answers[-1]) or not answers[-1].get("is_error")
    assert not (tmp_path / "by-hand.outside").exists()  # removed after the replay


def test_relativize_keeps_the_outside_sibling_relative(tmp_path: Path) -> None:
    wd = tmp_path / "tooluse-x-abc"
    assert relativize_value(f"{wd}.outside/secret.txt", wd) == "$TOOLUSE_WORKDIR.outside/secret.txt"
