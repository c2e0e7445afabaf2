"""docs/ci.md's sharded workflow runs: the steps of ``docs/examples/github-matrix-shards.yml``
(the same text as in docs/ci.md), played on this machine. Each job gets a directory of its own
(its runner); ``run:`` steps run with bash as written, ``${{ matrix.shard }}`` and
``${{ strategy.job-total }}`` filled in; the ``uses:`` steps are stood in for (checkout copies the
config, artifacts and the cache are copies between directories); the suite's installation is the
test's own. Two shards, two reference columns; then the merge and its report."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "docs" / "examples" / "github-matrix-shards.yml"
CONFIG = textwrap.dedent("""\
    [matrix]
    timeout = 10.0

    [[subject]]
    name = "reference-editor"
    tool_type = "text_editor_20250728"
    factory = "conformance.reference.editor:text_editor_20250728"

    [[subject]]
    name = "reference-editor-20250124"
    tool_type = "text_editor_20250124"
    factory = "conformance.reference.editor:text_editor_20250124"
    """)


def test_the_workflow_in_the_docs_is_the_one_tested() -> None:
    assert WORKFLOW.read_text() in (ROOT / "docs" / "ci.md").read_text()


def _expand(text: str, values: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        return values.get(m.group(1), m.group(0))

    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", one, text)


class Runner:
    """One machine playing the jobs: artifacts and the cache are directories beside them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.artifacts = root / "artifacts"
        self.cache = root / "cache"
        self.env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                    f"{os.environ.get('PATH', '')}", "XDG_CACHE_HOME": str(root / "xdg"),
                    "GITHUB_STEP_SUMMARY": str(root / "summary.md")}

    def job(self, name: str, job: dict[str, Any], values: dict[str, str]) -> Path:
        work = self.root / name
        work.mkdir()
        for step in job["steps"]:
            step = yaml.safe_load(_expand(yaml.safe_dump(step), values))
            uses = str(step.get("uses", ""))
            if "run" in step:
                if step.get("name") == "Install the suite":
                    continue  # the test's interpreter has it
                subprocess.run(["bash", "-euo", "pipefail", "-c", step["run"]], cwd=work,
                               env=self.env, check=True, timeout=600)
            elif uses.startswith("actions/checkout@"):
                (work / "matrix.toml").write_text(CONFIG)
            elif uses.startswith("actions/upload-artifact@"):
                shutil.copytree(work / step["with"]["path"],
                                self.artifacts / step["with"]["name"])
            elif uses.startswith("actions/download-artifact@"):
                for a in sorted(self.artifacts.iterdir()):
                    if fnmatch.fnmatch(a.name, step["with"]["pattern"]):
                        shutil.copytree(a, work / step["with"]["path"] / a.name)
            elif uses.startswith("actions/cache/restore@"):
                if self.cache.is_dir():
                    shutil.copytree(self.cache, work / step["with"]["path"])
            elif uses.startswith("actions/cache/save@"):
                shutil.rmtree(self.cache, ignore_errors=True)
                shutil.copytree(work / step["with"]["path"], self.cache)
            else:
                assert uses.startswith("actions/setup-python@"), f"a step not stood in for: {step}"
        return work


@pytest.mark.slow(30)
def test_two_shards_then_the_merge_as_the_workflow_says(tmp_path: Path) -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    shard_job, merge_job = flow["jobs"]["shard"], flow["jobs"]["merge"]
    assert merge_job["needs"] == "shard"
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert shards == [1, 2]
    runner = Runner(tmp_path)
    for k in shards:
        runner.job(f"shard-{k}", shard_job, {"matrix.shard": str(k),
                                             "strategy.job-total": str(len(shards)),
                                             "github.run_id": "1"})
    merged = runner.job("merge", merge_job, {"github.run_id": "1"})
    import json

    doc = json.loads((merged / "matrix-report" / "matrix.json").read_text())
    assert [i["name"] for i in doc["implementations"]] == ["reference-editor",
                                                           "reference-editor-20250124"]
    assert all(i["status"] == "ran" for i in doc["implementations"])
    cells = [c for r in doc["checks"] for c in r["cells"].values() if c["outcome"] != "n-a"]
    assert cells and all(c["outcome"] in ("pass", "skip") for c in cells)
    assert (runner.artifacts / "tool-matrix" / "matrix.html").is_file()
    assert (runner.cache / "matrix.json").is_file()  # the next run's history
    assert "reference-editor" in (tmp_path / "summary.md").read_text()
