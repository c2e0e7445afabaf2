"""Editor checks of paths: shell metacharacters are plain characters, never run; paths outside the
working directory are refused; how a relative path is taken is reported (INFO: seed 001's own
examples write ``"path": "primes.py"``, and no sentence requires or forbids either way).

A directory view that shells out with the path interpolated (``find {path} -maxdepth 2``) is a
real bug found in published editors: the payload paths below create a marker file when any shell
sees them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conformance.catalog import CheckFailure, CheckSkipped, Severity, check
from conformance.session import ToolSession

from .editor_support import (
    EDITOR_TYPES,
    FAMILY,
    SRC_COMMANDS,
    SRC_SECURITY,
    SRC_VIEW,
    expect_bytes,
    expect_success,
    fail,
    insert_input,
    plant,
    plant_symlink,
    read,
    refused,
)

PLAIN_NAMES = ("with space.txt", "it's \"quoted\".txt", "semi;colon.txt", "$(echo hi).txt",
               "`echo hi`.txt", "dollar $HOME.txt", "star*?.txt", "dir with space/inner file.txt",
               "pipe | amp & gt >.txt", "back\\slash.txt")


def payloads(workdir: Path) -> list[tuple[str, Path]]:
    """(relative path, marker) pairs: a shell that sees the path creates the marker."""
    out = []
    forms = ("a;touch {m};b", "$(touch {m})", "`touch {m}`", "x' ; touch {m} ; echo '",
             'y" ; touch {m} ; echo "', "z && touch {m} #", "w | touch {m}")
    for i, form in enumerate(forms):
        marker = workdir / f"PWNED{i}"
        out.append((form.format(m=marker).lstrip("/"), marker))
    return out


def _markers(s: ToolSession, pairs: list[tuple[str, Path]]) -> list[str]:
    found = [m.name for _, m in pairs if m.exists()]
    found += [x.name for x in Path(s.workdir).glob("PWNED*") if x.name not in found]
    return found


@check("editor.paths.special_characters_are_plain", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_COMMANDS,
       statement="paths with spaces, quotes and shell metacharacters work as plain paths for "
                 "create, view, str_replace and insert.")
def special_characters(s: ToolSession) -> None:
    try:  # the same commands on a plain path first: their own checks report a failure there
        _plain_path_sequence(s, "plain.txt")
    except CheckFailure as e:
        raise CheckSkipped(f"the commands fail on a plain path too ({e.message.splitlines()[0]}); "
                           "the editor.create, view, str_replace and insert checks report "
                           "that") from None
    for name in PLAIN_NAMES:
        if "/" in name:  # the directory exists (planted, so the reproducer recreates it)
            plant(s, f"{name.rpartition('/')[0]}/.keep", b"")
        _plain_path_sequence(s, name)


def _plain_path_sequence(s: ToolSession, name: str) -> None:
    path = str(Path(s.workdir) / name)
    r = s.call({"command": "create", "path": path, "file_text": "one\ntwo\n"})
    expect_success(s, r, f"create of {name!r}")
    expect_bytes(s, path, b"one\ntwo\n", f"create of {name!r}")
    r = s.call({"command": "view", "path": path})
    expect_success(s, r, f"view of {name!r}")
    if "two" not in r.text:
        fail(s, f"view of {name!r} did not show the file", received=r,
             documented="the file's lines")
    r = s.call({"command": "str_replace", "path": path, "old_str": "two", "new_str": "2"})
    expect_success(s, r, f"str_replace in {name!r}")
    expect_bytes(s, path, b"one\n2\n", f"str_replace in {name!r}")
    r = s.call(insert_input(s, path, 1, "zero\n"))
    expect_success(s, r, f"insert in {name!r}")
    # Any documented-compatible insert (as written or split into lines) will do: how the text's
    # final "\n" is treated is editor.insert.newline_convention's business.
    got = read(path) or b""
    if sorted(x for x in got.splitlines() if x) != [b"2", b"one", b"zero"]:
        fail(s, f"insert in {name!r} did not insert the line", received=got,
             documented=b"one\nzero\n2\n")


@check("editor.paths.never_executed_by_directory_view", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_SECURITY,
       statement="view of a directory whose path holds ;, $(...), backticks or quotes never runs "
                 "it in a shell.")
def directory_view_not_executed(s: ToolSession) -> None:
    pairs = payloads(Path(s.workdir))
    for rel, _ in pairs:
        d = Path(s.workdir) / rel
        plant(s, f"{rel}/inside.txt", b"x\n")
        s.call({"command": "view", "path": str(d)})
        found = _markers(s, pairs)
        if found:
            fail(s, f"viewing the directory {rel!r} ran a shell command (created {found})",
                 received=found, documented="paths are plain paths, never shell input",
                 watch=tuple(str(m) for _, m in pairs))


@check("editor.paths.never_executed_by_file_commands", family=FAMILY, severity=Severity.MUST,
       applies_to=EDITOR_TYPES, source=SRC_SECURITY,
       statement="view, create, str_replace and insert never run a path holding ;, $(...), "
                 "backticks or quotes in a shell.")
def file_commands_not_executed(s: ToolSession) -> None:
    pairs = payloads(Path(s.workdir))
    for rel, _ in pairs:
        d = Path(s.workdir) / rel
        plant(s, f"{rel}/.keep", b"")
        f = str(d / "f.txt")
        for tool_input in ({"command": "create", "path": f, "file_text": "a\nb\n"},
                           {"command": "view", "path": f},
                           {"command": "view", "path": str(d / "missing.txt")},
                           {"command": "str_replace", "path": f, "old_str": "b", "new_str": "c"},
                           insert_input(s, f, 1, "mid\n")):
            s.call(tool_input)
            found = _markers(s, pairs)
            if found:
                fail(s, f"{tool_input['command']} of {rel!r} ran a shell command (created "
                        f"{found})", received=found,
                     documented="paths are plain paths, never shell input",
                     watch=tuple(str(m) for _, m in pairs))
        for rel_file in (rel + ".txt",):
            s.call({"command": "create", "path": str(Path(s.workdir) / rel_file),
                    "file_text": "x\n"})
            found = _markers(s, pairs)
            if found:
                fail(s, f"create of {rel_file!r} ran a shell command (created {found})",
                     received=found, documented="paths are plain paths, never shell input",
                     watch=tuple(str(m) for _, m in pairs))


@check("editor.paths.outside_workdir_refused", family=FAMILY, severity=Severity.SHOULD,
       applies_to=EDITOR_TYPES, source=SRC_SECURITY,
       statement="paths outside the working directory (absolute, ../ traversal, symlinks) are "
                 "refused by every command.")
def outside_refused(s: ToolSession) -> None:
    # The file outside is a sibling of the working directory named after it, planted like any
    # other file: the reproducer states it ($TOOLUSE_WORKDIR.outside/secret.txt) and plants it
    # itself, relative to the case's directory.
    outside = Path(f"{s.workdir}.outside")
    try:
        secret = Path(plant(s, str(outside / "secret.txt"), b"TOP-SECRET\n"))
        link = plant_symlink(s, "link.txt", str(secret)) or str(secret)
        traversal = f"{s.workdir}/../{outside.name}/secret.txt"
        watch = (str(secret), str(outside / "created.txt"))
        for path in (str(secret), traversal, str(link)):
            r = s.call({"command": "view", "path": path})
            if "TOP-SECRET" in r.text or not refused(r):
                fail(s, f"view of {path} (outside the working directory) was answered", received=r,
                     documented="an error: the path is outside the working directory",
                     watch=watch)
            for tool_input in ({"command": "str_replace", "path": path, "old_str": "TOP",
                                "new_str": "OWNED"},
                               insert_input(s, path, 0, "owned\n")):
                r = s.call(tool_input)
                if not refused(r):
                    fail(s, f"{tool_input['command']} of {path} was accepted", received=r,
                         documented="an error: the path is outside the working directory",
                         watch=watch)
                if read(str(secret)) != b"TOP-SECRET\n":
                    fail(s, f"{tool_input['command']} changed a file outside the working "
                            "directory", received=read(str(secret)), documented=b"TOP-SECRET\n",
                         watch=watch)
        # the working directory's parent: a path that sorts before the working directory (a
        # tool comparing paths as strings lets it through)
        parent = f"{s.workdir}/.."
        r = s.call({"command": "view", "path": parent})
        if not refused(r):
            fail(s, f"view of {parent} (the working directory's parent) was answered",
                 received=r, documented="an error: the path is outside the working directory",
                 watch=watch)
        created = outside / "created.txt"
        r = s.call({"command": "create", "path": str(created), "file_text": "x"})
        if not refused(r):
            fail(s, "create outside the working directory was accepted", received=r,
                 documented="an error: the path is outside the working directory", watch=watch)
        if created.exists():
            fail(s, "create wrote a file outside the working directory", received=str(created),
                 documented="no file written", watch=watch)
    finally:
        shutil.rmtree(outside, ignore_errors=True)


@check("editor.paths.relative_paths", family=FAMILY, severity=Severity.INFO,
       applies_to=EDITOR_TYPES, source=SRC_VIEW,
       statement="reports how a relative path (as the text editor docs' own examples write them: "
                 "\"primes.py\") is taken: resolved against the working directory, or refused "
                 "(absolute paths only); both are conformant.")
def relative_paths(s: ToolSession) -> str:
    marker = "relative-path-marker-7f3a"
    plant(s, "relative-probe.txt", f"{marker}\n".encode())
    r = s.call({"command": "view", "path": "relative-probe.txt"})
    if refused(r):
        return "relative paths: refused (absolute paths only)"
    if marker in r.text:
        return "relative paths: resolved against the working directory"
    return "relative paths: answered, not from the working directory (resolved elsewhere)"
