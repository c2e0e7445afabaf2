"""Child-process host for in-process subjects: ``python -m conformance.subjects.host``.

The harness starts this once per test case, in the case's working directory, with
``TOOLUSE_SPEC`` (``module:attr`` or ``path/to/file.py:attr``), ``TOOLUSE_WORKDIR``,
``TOOLUSE_TIMEOUT`` and ``TOOLUSE_SYS_PATH`` (the harness's ``sys.path`` as JSON). It builds the
handler with the factory and then speaks the same protocol as an out-of-process subject: one JSON
tool input per line on stdin, one JSON result per line on stdout. Two additions for the harness:
a first line ``{"ready": true}`` (or ``{"ready": false, "error": ...}`` when the factory failed),
and ``"raised"``/``"fault"`` fields on results when the handler raised or returned something that
is not a tool result.

The protocol's file descriptors are private: the handler's ``print`` goes to stderr and the
handler's child processes get ``/dev/null`` as stdin, so neither can corrupt the conversation.
Only the standard library is imported here, to keep the start fast.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, BinaryIO


def load_attr(spec: str) -> Any:
    """Import ``module:attr`` (or ``file.py:attr``) and return the attribute; raises on failure."""
    modname, _, attr = spec.rpartition(":")
    if modname.endswith(".py") or os.sep in modname:
        from importlib.util import module_from_spec, spec_from_file_location

        path = Path(modname).resolve()
        name = f"_tooluse_subject_{abs(hash(str(path)))}"
        if name in sys.modules:
            module = sys.modules[name]
        else:
            mspec = spec_from_file_location(name, path)
            if mspec is None or mspec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = module_from_spec(mspec)
            sys.modules[name] = module
            mspec.loader.exec_module(module)
    else:
        module = importlib.import_module(modname)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def accepts_keyword(factory: Any, name: str) -> bool:
    """Does ``factory`` take ``name=`` (a parameter of that name, or ``**kwargs``)?"""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any((p.name == name and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
               or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def normalise(value: Any) -> dict[str, Any]:
    """A handler's return value as a wire result (``fault`` set when it is not a tool result)."""
    value = _jsonable(value)
    if isinstance(value, str):
        return {"content": value, "is_error": False}
    if isinstance(value, list):
        return {"content": value, "is_error": False}
    if isinstance(value, dict) and "content" in value:
        out = {"content": value["content"], "is_error": bool(value.get("is_error", False))}
        if not isinstance(out["content"], str | list):
            out["fault"] = f"content is {type(out['content']).__name__}; use a str or content blocks"
        return out
    return {"content": "", "is_error": True,
            "fault": f"the handler returned {type(value).__name__}; return a str, a list of "
                     "content blocks or {\"content\": ..., \"is_error\": bool}"}


class Host:
    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.loop: Any = None
        self.handler: Any = None

    def send(self, obj: dict[str, Any]) -> None:
        try:
            data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate ("\udc80"): sent as its JSON escape, as is
            data = json.dumps(obj).encode("ascii")
        self.out.write(data + b"\n")
        self.out.flush()

    def resolve(self, value: Any) -> Any:
        if inspect.isawaitable(value):
            if self.loop is None:
                import asyncio

                self.loop = asyncio.new_event_loop()
            return self.loop.run_until_complete(value)
        return value

    def start(self, spec: str, workdir: Path, timeout: float,
              options: dict[str, Any] | None = None) -> bool:
        try:
            factory = load_attr(spec)
            kwargs: dict[str, Any] = dict(options or {})
            if accepts_keyword(factory, "timeout"):
                kwargs["timeout"] = timeout
            self.handler = self.resolve(factory(workdir, **kwargs))
            if not callable(self.handler):
                raise TypeError(f"the factory returned a {type(self.handler).__name__}, which is "
                                "not callable; return a handler taking the tool input dict")
        except BaseException as e:  # noqa: B036 - report everything, SystemExit included
            self.send({"ready": False, "error": _describe(e)})
            return False
        self.send({"ready": True})
        return True

    def call(self, line: bytes) -> dict[str, Any]:
        try:
            tool_input = json.loads(line)
        except ValueError as e:
            return {"content": f"harness sent invalid JSON: {e}", "is_error": True,
                    "fault": "harness"}
        try:
            result = normalise(self.resolve(self.handler(tool_input)))
        except Exception as e:
            return {"content": f"{type(e).__name__}: {e}", "is_error": True,
                    "raised": _describe(e)}
        try:
            json.dumps(result)
        except (TypeError, ValueError) as e:
            return {"content": "", "is_error": True, "fault": f"result is not JSON: {e}"}
        return result

    def close(self) -> None:
        for name in ("aclose", "close"):
            fn = getattr(self.handler, name, None)
            if callable(fn):
                try:
                    self.resolve(fn())
                except Exception:
                    traceback.print_exc()
                return


def _describe(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" (at {tb[-1].filename}:{tb[-1].lineno})" if tb else ""
    return f"{type(e).__name__}: {e}{where}"


def main() -> int:
    from conformance.subjects.isolation import limit_memory
    from conformance.subjects.sandbox import apply_limits

    limit_memory()  # RLIMIT_AS: a handler that takes all the memory it can gets a MemoryError
    apply_limits()  # RLIMIT_CPU, RLIMIT_FSIZE (and RLIMIT_NPROC in the sandbox)
    # Private copies of the protocol pipes; fd 0 -> /dev/null, fd 1 -> stderr.
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _extend_sys_path()
    host = Host(proto_out)
    workdir = Path(os.environ.get("TOOLUSE_WORKDIR", os.getcwd()))
    if not host.start(os.environ["TOOLUSE_SPEC"], workdir,
                      float(os.environ.get("TOOLUSE_TIMEOUT", "30")),
                      json.loads(os.environ.get("TOOLUSE_OPTIONS", "{}"))):
        return 3
    reader = _LineReader(proto_in)
    while (line := reader.readline()) is not None:
        if line.strip():
            host.send(host.call(line))
    host.close()
    return 0


class _LineReader:
    """Unbuffered line reading, so nothing the handler's children could see is read ahead."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.buf = b""

    def readline(self) -> bytes | None:
        while b"\n" not in self.buf:
            chunk = self.f.read(65536)
            if not chunk:
                if self.buf:
                    line, self.buf = self.buf, b""
                    return line
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line


def _fork_server(fd: int) -> int:
    """``--fork-server FD``: import the subject once, then fork one host per request."""
    from conformance.subjects import forkserver

    _extend_sys_path()
    _become_subreaper()
    sock_out = os.fdopen(os.dup(fd), "wb")
    try:
        load_attr(os.environ["TOOLUSE_SPEC"])
    except BaseException as e:  # noqa: B036 - report everything
        Host(sock_out).send({"ready": False, "error": _describe(e)})
        return 3
    Host(sock_out).send({"ready": True})
    sock_out.close()
    return forkserver.serve(fd, main)


def _become_subreaper() -> None:
    """Orphans of the forked subjects (double-fork daemons) are re-parented to this server rather
    than to init, so the harness still finds and stops them when it closes the server."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):  # not Linux
        pass


def _extend_sys_path() -> None:
    for entry in reversed(json.loads(os.environ.get("TOOLUSE_SYS_PATH", "[]"))):
        if entry not in sys.path:
            sys.path.insert(0, entry)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--fork-server":
        sys.exit(_fork_server(int(sys.argv[2])))
    sys.exit(main())
