"""``--loop-cmd``: a loop program in any language, judged as ``--loop`` is.

The Node test runs the documented loop written with the TypeScript SDK (``tests/ts/loop.mjs``,
installed by ``.ci/setup-extras``); it skips with the reason without Node.js or that install. The
others run small Python programs (no Node needed).
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from conformance.checks.loop import judge
from conformance.loops.command import run_loop_command
from conformance.loops.run import CONVERSATION_DEADLINE, scenario_deadline
from conformance.loops.scenarios import BY_ID
from conformance.subjects.launch import Confinement

pytest.importorskip("uvicorn", reason="--loop-cmd serves the simulation over HTTP (the serve extra)")

TS = Path(__file__).parent / "ts"
PY = shlex.quote(sys.executable)


def _node_skip() -> str | None:
    if shutil.which("node") is None:
        return "Node.js is not installed (the --loop-cmd Node test needs `node`)"
    if not (TS / "node_modules" / "@anthropic-ai" / "sdk").is_dir():
        return f"{TS}/node_modules is absent: run `npm install` in tests/ts (.ci/setup-extras does)"
    return None


NODE = f"node {shlex.quote(str(TS / 'loop.mjs'))}"


@pytest.mark.skipif(_node_skip() is not None, reason=_node_skip() or "")
@pytest.mark.parametrize("check_id", ["loop.client_tools.several_per_turn", "loop.pause_turn.streamed",
                                      "loop.ptc.several_pauses", "loop.errors.transient_retried",
                                      "loop.container.expired"])
def test_a_node_loop_passes_through_loop_cmd(check_id: str, tmp_path: Path) -> None:
    outcome = run_loop_command(NODE, BY_ID[check_id], tmp_path,
                               confinement=Confinement())
    judge(outcome)  # raises CheckFailure with the reason
    assert outcome.requests and not outcome.unserved


@pytest.mark.skipif(_node_skip() is not None, reason=_node_skip() or "")
def test_a_node_loop_that_stops_on_pause_turn_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLUSE_TEST_BROKEN", "stop_on_pause")
    outcome = run_loop_command(NODE, BY_ID["loop.pause_turn.resend"], tmp_path,
                               confinement=Confinement())
    assert outcome.unserved == [1] and not outcome.raised and not outcome.timed_out


def _program(tmp_path: Path, body: str) -> str:
    script = tmp_path / "prog.py"
    script.write_text(body)
    return f"{PY} {shlex.quote(str(script))}"


PYTHON_LOOP = """
import json, os, anthropic
from conformance.reference.loop import loop
doc = json.load(open(os.environ["TOOLUSE_LOOP_PARAMS"]))
assert os.environ["TOOLUSE_SCENARIO"] == doc["scenario"]
assert int(os.environ["TOOLUSE_CONVERSATIONS"]) == len(doc["conversations"])
client = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["ANTHROPIC_API_KEY"])
for params in doc["conversations"]:
    loop(client, params, lambda name, input, tool_use_id=None: doc["tool_results"].get(tool_use_id, "ok"))
"""


def test_a_python_program_passes_and_gets_the_documented_parameters(tmp_path: Path) -> None:
    scenario = BY_ID["loop.client_tools.several_per_turn"]
    outcome = run_loop_command(_program(tmp_path, PYTHON_LOOP), scenario, tmp_path / "case",
                               confinement=Confinement())
    judge(outcome)
    doc = json.loads((tmp_path / "case" / "tooluse-loop-params.json").read_text())
    assert doc["conversations"][0]["messages"][0]["role"] == "user"
    # the recorded result of each call, by name and input, for frameworks that do not see ids
    calls = doc["tool_results_by_call"]
    assert [c["input"]["command"] for c in calls] == ["python3 --version", "df -h . | tail -1"]
    assert calls[0]["content"] == doc["tool_results"][next(iter(doc["tool_results"]))]


def test_a_rule_broken_by_the_program_is_reported(tmp_path: Path) -> None:
    # results sent with a text block before them: messages.tool_result.before_other_content
    body = PYTHON_LOOP.replace("from conformance.reference.loop import loop",
                               "from conformance.reference.loop import ReferenceLoop\n"
                               "class L(ReferenceLoop):\n"
                               "    def add_results(self, results):\n"
                               "        self.messages.append({'role': 'user', 'content': "
                               "[{'type': 'text', 'text': 'here:'}, *results]})\n"
                               "def loop(c, p, r): return L(c, p, r).run()")
    outcome = run_loop_command(_program(tmp_path, body), BY_ID["loop.client_tools.one_per_turn"],
                               tmp_path / "case", confinement=Confinement())
    assert [v[0] for v in outcome.violations] == ["messages.tool_result.before_other_content"]


def test_a_failing_program_is_reported_with_its_stderr(tmp_path: Path) -> None:
    cmd = _program(tmp_path, "import sys; sys.stderr.write('no API key found\\n'); sys.exit(3)")
    outcome = run_loop_command(cmd, BY_ID["loop.client_tools.one_per_turn"], tmp_path / "case",
                               confinement=Confinement())
    assert outcome.raised is not None and "status 3" in outcome.raised
    assert "no API key found" in outcome.raised and outcome.unserved == [0, 1]


def test_a_hanging_program_is_killed_at_its_deadline(tmp_path: Path) -> None:
    cmd = _program(tmp_path, "import time; time.sleep(120)")
    outcome = run_loop_command(cmd, BY_ID["loop.client_tools.one_per_turn"], tmp_path / "case",
                               deadline=1.0, confinement=Confinement())
    assert outcome.timed_out


def test_the_deadline_is_per_conversation_and_not_the_tool_timeout() -> None:
    one = BY_ID["loop.client_tools.one_per_turn"]
    assert scenario_deadline(one) == CONVERSATION_DEADLINE
    assert scenario_deadline(one, 3) == 3 * CONVERSATION_DEADLINE


def test_checks_a_program_declares_unsupported_are_skipped(tmp_path: Path) -> None:
    from conformance.cli import main

    body = ("import json, os, sys\n"
            "if os.environ.get('TOOLUSE_LOOP_DESCRIBE') == '1':\n"
            "    print(json.dumps({'unsupported': {'loop.pause_turn.resend': 'no code execution'}}))\n"
            "    sys.exit(0)\n" + PYTHON_LOOP)
    cmd = _program(tmp_path, body)
    out = tmp_path / "out"
    code = main(["run", "--loop-cmd", cmd, "--name", "py-loop", "--check", "loop.pause_turn.resend",
                 "loop.client_tools.one_per_turn", "--out", str(out)])
    results = {r["check_id"]: r for r in json.loads((out / "results.json").read_text())["results"]}
    assert code == 0
    assert results["loop.pause_turn.resend"]["outcome"] == "skip"
    assert "no code execution" in results["loop.pause_turn.resend"]["message"]
    assert results["loop.client_tools.one_per_turn"]["outcome"] == "pass"
    assert json.loads((out / "results.json").read_text())["subjects"][0]["name"] == "py-loop"
