"""Small in-process subjects for the framework's own tests (well-behaved and hostile ones)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _mark(text: str) -> None:
    """Append a line to $TOOLUSE_TEST_MARK (how a test sees what happened in the subject)."""
    path = os.environ.get("TOOLUSE_TEST_MARK")
    if path:
        with open(path, "a") as f:
            f.write(text + "\n")


def returns_str(workdir: Path) -> Any:
    return lambda tool_input: f"cwd={os.getcwd()} workdir={workdir} input={tool_input}"


def returns_blocks(workdir: Path) -> Any:
    return lambda tool_input: [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]


def returns_dict(workdir: Path) -> Any:
    return lambda tool_input: {"content": "bad", "is_error": True}


def returns_none(workdir: Path) -> Any:
    return lambda tool_input: None


def async_handler(workdir: Path) -> Any:
    async def handle(tool_input: dict[str, Any]) -> str:
        import asyncio

        await asyncio.sleep(0)
        return "async ok"
    return handle


def raises(workdir: Path) -> Any:
    def handle(tool_input: dict[str, Any]) -> str:
        raise ValueError("no such command")
    return handle


def prints(workdir: Path) -> Any:
    def handle(tool_input: dict[str, Any]) -> str:
        print("noise on stdout")
        print("noise on stderr", file=sys.stderr)
        return "clean"
    return handle


def with_timeout(workdir: Path, timeout: float = 99.0) -> Any:
    return lambda tool_input: f"timeout={timeout:g}"


def without_timeout(workdir: Path) -> Any:
    return lambda tool_input: "no timeout parameter"


def with_option(workdir: Path, max_characters: int | None = None) -> Any:
    return lambda tool_input: f"max_characters={max_characters}"


class Closing:
    def __init__(self, workdir: Path) -> None:
        _mark("opened")

    def __call__(self, tool_input: dict[str, Any]) -> str:
        return "ok"

    def close(self) -> None:
        _mark("closed")


class AsyncClosing(Closing):
    async def aclose(self) -> None:
        _mark("aclosed")


def factory_raises(workdir: Path) -> Any:
    raise RuntimeError("cannot open the sandbox")


def not_callable(workdir: Path) -> Any:
    return 42


# --- hostile -------------------------------------------------------------------------------------

def hangs(workdir: Path) -> Any:
    def handle(tool_input: dict[str, Any]) -> str:
        if tool_input.get("command") == "hang":
            time.sleep(3600)
        return "ok"
    return handle


def exits(workdir: Path) -> Any:
    def handle(tool_input: dict[str, Any]) -> str:
        os._exit(3)
    return handle


def aborts(workdir: Path) -> Any:
    def handle(tool_input: dict[str, Any]) -> str:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file
        os.abort()
    return handle


def system_exit(workdir: Path) -> Any:
    def handle(tool_input: dict[str, Any]) -> str:
        raise SystemExit(4)
    return handle


def endless_print(workdir: Path) -> Any:
    def handle(tool_input: dict[str, Any]) -> str:
        while True:
            print("spam " * 100)
    return handle


def leaks(workdir: Path) -> Any:
    """Starts a process in a session of its own and never stops it."""
    def handle(tool_input: dict[str, Any]) -> str:
        p = subprocess.Popen(["sleep", "3600"], start_new_session=True)
        return f"pid={p.pid}"
    return handle


def hangs_on_close(workdir: Path) -> Any:
    class Handler:
        def __call__(self, tool_input: dict[str, Any]) -> str:
            return "ok"

        def close(self) -> None:
            time.sleep(3600)
    return Handler()


NOT_A_FACTORY = 7


def hangs_always(workdir: Path) -> Any:
    def handle(tool_input: dict[str, Any]) -> str:
        time.sleep(3600)
        return "never"
    return handle


def hangs_at_start(workdir: Path) -> Any:
    time.sleep(3600)


def returns_env(workdir: Path) -> Any:
    return lambda tool_input: os.environ.get("TOOLUSE_TEST_VALUE", "unset")


def hangs_with_child(workdir: Path) -> Any:
    """Starts a process in a session of its own, writes its pid, then hangs."""
    def handle(tool_input: dict[str, Any]) -> str:
        p = subprocess.Popen(["sleep", "3600"], start_new_session=True)
        (workdir / "child.pid").write_text(str(p.pid))
        time.sleep(3600)
        return "never"
    return handle
