"""The sandbox is invisible to a conformant tool (issue 36): each sandboxed subject gets a private
writable ``/tmp`` and ``/var/tmp`` (and ``HOME``) inside its case, nothing else writable, and what
it wrote there goes with the case.

Two conformant subjects that need the system temp directory: ``tests/subjects/bash_tmux.py`` (its
shell in a tmux pane: tmux takes its socket and lock under ``/tmp/tmux-<uid>/`` whatever
``TMPDIR`` says) and ``tests/subjects/bash_tmp_writer.py`` (a lock file and a transcript in
``/tmp`` directly). Each passes every MUST check, and the escape check, with the default sandbox
and with ``--sandbox off`` alike. Measured before the private ``/tmp``: neither started under the
default sandbox (every case not-run: a read-only ``/tmp``); with ``--sandbox off`` both passed.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from conformance import runner
from conformance.catalog import CATALOG, Severity
from conformance.results import Outcome
from conformance.subjects import command_subject, sandbox
from conformance.subjects.isolation import processes_supported
from conformance.subjects.launch import Confinement

ROOT = Path(__file__).resolve().parents[1]
SUBJECTS = ROOT / "tests" / "subjects"
ESCAPE = "bash.sandbox.stays_in_its_case"
CHECKS = sorted(i for i, c in CATALOG.items()
                if i.startswith("bash.") and c.severity is Severity.MUST) + [ESCAPE]
_STATUS = sandbox.status("required")
TMUX = shutil.which("tmux")


def _names() -> list[str]:
    return ["bash_tmp_writer", *(["bash_tmux"] if TMUX else [])]


def _system_tmp_entries(tag: str) -> set[Path]:
    """What the subjects of one test would leave in the real system temp directory (``tag``:
    in their names, from ``TOOLUSE_TEST_TAG``)."""
    found: set[Path] = set()
    for pattern in (f"tooluse-tmux-{tag}*", f"bash-tool-{tag}*", f"editor-tool-{tag}*"):
        found.update(Path("/tmp").glob(pattern))
    found.update(Path(f"/tmp/tmux-{os.getuid()}").glob(f"tooluse-{tag}*"))
    return found


@pytest.mark.slow(90)
@pytest.mark.parametrize("mode", ["required", "off"])
def test_a_tool_that_needs_the_system_temp_directory_passes_alike(
        mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if mode == "required" and not (_STATUS.active and processes_supported()):
        pytest.skip(f"no sandbox here: {_STATUS.reason or 'needs /proc'}")
    if TMUX is None:  # the /tmp writer still runs; say what is not tried
        print("tmux is not installed: the tmux subject is not tried (.ci/setup-extras installs it)")
    tag = f"t{os.getpid()}x{mode}-"
    monkeypatch.setenv("TOOLUSE_TEST_TAG", tag)
    subjects = [command_subject(f"{sys.executable} {SUBJECTS / n}.py", family="bash", name=n)
                for n in _names()]
    try:
        summary = runner.run(subjects, checks=CHECKS, timeout=3.0, jobs=4,
                             confinement=Confinement(mode=mode))
    finally:
        left = _system_tmp_entries(tag)
        for p in left:  # without the sandbox, a killed subject's own files stay: not ours to keep
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
    # INCOMPLETE is no verdict (a model check whose fresh subjects did not start on a loaded
    # runner, twice): what this test is about is that nothing fails and nothing is left.
    bad = {(r.subject, r.check_id): f"{r.outcome.value}: {r.message[:300]}"
           for r in summary.results if r.outcome not in (Outcome.PASS, Outcome.INCOMPLETE)}
    assert bad == {}, bad
    assert len(summary.results) == len(CHECKS) * len(subjects)
    if mode == "required":  # the private /tmp went with each case: nothing in the real one
        assert left == set(), left


@pytest.mark.parametrize("mode", ["required", "off"])
def test_an_editor_writing_to_tmp_stays_in_its_case(mode: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor escape check: a write to the private /tmp is inside the case, not reported."""
    if mode == "required" and not (_STATUS.active and processes_supported()):
        pytest.skip(f"no sandbox here: {_STATUS.reason or 'needs /proc'}")
    tag = f"e{os.getpid()}x{mode}-"
    monkeypatch.setenv("TOOLUSE_TEST_TAG", tag)
    subject = command_subject(f"{sys.executable} {SUBJECTS / 'editor_tmp_writer.py'}",
                              family="editor", name="editor_tmp_writer")
    checks = ["editor.sandbox.stays_in_its_case", "editor.view.returns_file_content"]
    try:
        summary = runner.run([subject], checks=checks, timeout=3.0, jobs=2,
                             confinement=Confinement(mode=mode))
    finally:
        left = _system_tmp_entries(tag)
        for p in left:
            p.unlink(missing_ok=True)
    assert {r.check_id: r.outcome for r in summary.results} == dict.fromkeys(
        checks, Outcome.PASS), [r.message for r in summary.results]
    if mode == "required":
        assert left == set(), left


@pytest.mark.skipif(not TMUX, reason="tmux is not installed (.ci/setup-extras installs it)")
def test_the_tmux_subject_is_really_on_tmux(tmp_path: Path) -> None:
    sys.path.insert(0, str(SUBJECTS))
    try:
        import bash_tmux
    finally:
        sys.path.remove(str(SUBJECTS))
    tool = bash_tmux.factory(tmp_path, timeout=5)
    try:
        server = tool.session.server
        assert tool({"command": "echo $TMUX_PANE; pwd"})["content"].startswith("%")
        socket_dir = Path(f"/tmp/tmux-{os.getuid()}")
        assert (socket_dir / server).exists()  # its socket in the system temp directory
    finally:
        tool.close()
    assert not (socket_dir / server).exists()


def test_the_private_tmp_binds_back_what_the_subject_names(tmp_path: Path) -> None:
    """Read-only binds back of the real paths under /tmp the command line names (by their top
    entry), after the private /tmp and /var/tmp; nothing else of the real /tmp."""
    holder = tmp_path / "holder"
    holder.mkdir()
    named = Path("/tmp") / f"tooluse-named-{os.getpid()}"
    named.mkdir()
    try:
        opts = sandbox.private_tmp_options(holder, [f"python {named}/tool.py --x={named}/y"])
    finally:
        named.rmdir()
    assert opts[:3] == ["--bind", str(holder / "tmp"), "/tmp"]
    assert (holder / "tmp").is_dir() and (holder / "tmp").stat().st_mode & 0o1777 == 0o1777
    pairs = list(zip(opts[::3], opts[1::3], opts[2::3], strict=False))
    assert ("--ro-bind", str(named), str(named)) in pairs
    assert not any(o == "--ro-bind" and d == "/tmp" for o, _, d in pairs)
