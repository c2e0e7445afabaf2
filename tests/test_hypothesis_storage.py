"""Where a check's hypothesis runs keep their files (conformance.properties.exploration.
private_storage): the suite's cache, reused by the next process (hypothesis' Unicode table was
built again in every ``tooluse run``, issue 21); a temporary directory, removed at exit, where the
cache cannot be written; never the working directory; the user's own setting wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: Uses hypothesis as a check does, and says where its files went.
PROBE = """
import sys
from hypothesis import given, strategies as st
from conformance.properties.exploration import (no_local_constants, private_storage,
                                                quiet_settings)

@quiet_settings(max_examples=3)
@given(st.characters(categories=("Lu",)))  # the Unicode table; not st.text()'s codec table
                                           # (2 CPU-s to build, each time, in a fresh cache)
def draw(s):
    pass

with no_local_constants():  # as a check runs (hypothesis would read every local module)
    draw()
print(private_storage())
"""


def _probe(tmp_path: Path, **env: str) -> tuple[Path | None, Path]:
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items()
            if k not in ("HYPOTHESIS_STORAGE_DIRECTORY", "XDG_CACHE_HOME")}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, env={**base, **env},
                         capture_output=True, text=True, check=True).stdout.strip()
    return (None if out == "None" else Path(out)), cwd


def _charmaps(root: Path) -> list[Path]:
    return sorted(root.glob("unicode_data/*/charmap.json.gz"))


def test_the_unicode_table_is_kept_in_the_suites_cache_for_the_next_run(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    where, cwd = _probe(tmp_path, XDG_CACHE_HOME=str(cache))
    assert where == cache / "tooluse" / "hypothesis"
    (table,) = _charmaps(where)
    built = table.stat().st_mtime_ns
    assert _probe(tmp_path, XDG_CACHE_HOME=str(cache))[0] == where
    assert _charmaps(where) == [table] and table.stat().st_mtime_ns == built  # reused
    assert list(cwd.iterdir()) == []  # no .hypothesis/ in the working directory


def test_an_unwritable_cache_falls_back_to_a_temporary_directory_removed_at_exit(
        tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")  # the cache cannot be made under a file
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    where, cwd = _probe(tmp_path, XDG_CACHE_HOME=str(blocked), TMPDIR=str(tmp))
    assert where is not None and where.parent == tmp and where.name.startswith("tooluse-")
    assert list(tmp.iterdir()) == [] and list(cwd.iterdir()) == []


def test_the_users_own_storage_setting_wins(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    where, _ = _probe(tmp_path, HYPOTHESIS_STORAGE_DIRECTORY=str(mine),
                      XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert where is None and _charmaps(mine) and not (tmp_path / "cache").exists()
