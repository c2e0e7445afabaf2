"""The cassette format and its one loader.

A cassette is one JSON file holding one scenario (see ``docs/cassette-format.md``)::

    {"version": 1, "id": "...", "title": "...", "source": {...} | [...], "model": "...",
     "tools": [...], "streamed": false, "tags": {...}, "exchanges": [
        {"request": {"method", "path", "headers", "query", "body"},
         "response": {"status", "headers", "body"} | {"status", "headers", "events": [...]},
         "expect_rule": "rule.id"?, "at": "RFC 3339"?}], "clock_start": "RFC 3339"?}

No other code reads fixture files: everything goes through :func:`load_cassette` and
:func:`iter_corpus`, which raise :class:`CassetteError` naming the file and the JSON pointer.

A file is parsed once per process while it is unchanged (same size, modification time and inode):
the tests of a suite replaying the same cassette share one parsed :class:`Cassette`, and with it
what the engine derives from each exchange once (:attr:`Exchange.memo`: the encoded response, the
recorded request's matcher keys). Cassettes are values: the engine never changes one; treat a
loaded one as read-only too (``copy.deepcopy`` it, or ``load_cassette(path, cache=False)``, to
edit one in memory).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CASSETTE_VERSION = 1


class CassetteError(ValueError):
    """A broken cassette: which file, where in it (a JSON pointer), and what is wrong."""

    def __init__(self, path: str | Path, pointer: str, message: str) -> None:
        self.path = str(path)
        self.pointer = pointer or "/"
        self.message = message
        super().__init__(f"{self.path}:{self.pointer}: {message}")


@dataclass
class Exchange:
    request: dict[str, Any]
    response: dict[str, Any]
    expect_rule: str | None = None
    index: int = 0
    #: Simulated time the request is sent (RFC 3339); the replay clock moves to it first.
    at: str | None = None
    #: What the engine derives from this exchange once (encoded response, recorded matcher
    #: keys), by the engine's own keys. Not part of the value: not compared, not copied.
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def is_stream(self) -> bool:
        return "events" in self.response

    @property
    def request_body(self) -> Any:
        return self.request.get("body")


@dataclass
class Cassette:
    id: str
    title: str
    source: list[dict[str, Any]]
    model: str | None
    tools: list[dict[str, Any]]
    exchanges: list[Exchange]
    path: Path | None = None
    streamed: bool = False
    tags: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    #: Simulated time of the first exchange (RFC 3339); None: the replayer's own clock.
    clock_start: str | None = None
    #: What the engine derives from the whole cassette once (see :attr:`Exchange.memo`).
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def family(self) -> str:
        return str(self.tags.get("family") or self.id.split("/")[0])

    @property
    def tool_type(self) -> str | None:
        t = self.tags.get("tool_type")
        return str(t) if t else None


def default_fixtures_root() -> Path:
    """The corpus: ``$TOOLUSE_FIXTURES``; else the one shipped in the package (``fixtures/`` of
    the checkout, mapped to ``simulator/fixtures`` in the wheel at build time, found through
    :mod:`importlib.resources`); else, in a checkout, the top-level ``fixtures/``."""
    env = os.environ.get("TOOLUSE_FIXTURES")
    if env:
        return Path(env)
    return _shipped_fixtures()


@functools.cache
def _shipped_fixtures() -> Path:
    """Where the corpus was installed: found once per process (a scenario of the loop checks
    asked for it at every load: 5% of their CPU, issue 21)."""
    packaged = importlib.resources.files(__package__ or "simulator") / "fixtures"
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "fixtures"


def resolve_fixture(source: str | Path) -> Path:
    """A cassette file or directory by path, or by its name in the corpus.

    ``source`` when it exists (or is absolute); else the corpus entry of that name under
    :func:`default_fixtures_root` (``ptc``, ``ptc/<tool type>/<scenario>.json``; a leading
    ``fixtures/`` is dropped, so the checkout's paths work from any directory). Unchanged when
    neither exists: the caller reports the path as given.
    """
    p = Path(source)
    if p.is_absolute() or os.path.lexists(p):
        return p
    root = default_fixtures_root()
    parts = p.parts
    named = [root / p] if parts else []
    if len(parts) > 1 and parts[0] == "fixtures":
        named.append(root.joinpath(*parts[1:]))
    for candidate in named:
        if os.path.lexists(candidate):
            return candidate
    return p


def _require(obj: Any, key: str, typ: type | tuple[type, ...], path: Path | str, ptr: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise CassetteError(path, ptr, f"missing required field {key!r}")
    val = obj[key]
    if not isinstance(val, typ):
        want = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
        raise CassetteError(path, f"{ptr}/{key}", f"{key!r} must be {want}, got {type(val).__name__}")
    return val


def parse_cassette(data: Any, path: str | Path = "<memory>") -> Cassette:
    """Build a :class:`Cassette` from parsed JSON, checking the envelope."""
    if not isinstance(data, dict):
        raise CassetteError(path, "", "a cassette must be a JSON object")
    version = _require(data, "version", int, path, "")
    if version != CASSETTE_VERSION:
        raise CassetteError(path, "/version", f"unsupported cassette version {version}; "
                            f"this tool reads version {CASSETTE_VERSION}")
    cid = _require(data, "id", str, path, "")
    title = _require(data, "title", str, path, "")
    source = _require(data, "source", (dict, list), path, "")
    sources = [source] if isinstance(source, dict) else source
    for i, s in enumerate(sources):
        ptr = "/source" if isinstance(source, dict) else f"/source/{i}"
        if not isinstance(s, dict) or "document" not in s or "section" not in s:
            raise CassetteError(path, ptr, "a source needs 'document' and 'section'")
    exchanges_raw = _require(data, "exchanges", list, path, "")
    if not exchanges_raw:
        raise CassetteError(path, "/exchanges", "a cassette needs at least one exchange")
    exchanges = []
    for i, ex in enumerate(exchanges_raw):
        ptr = f"/exchanges/{i}"
        req = _require(ex, "request", dict, path, ptr)
        resp = _require(ex, "response", dict, path, ptr)
        _require(req, "method", str, path, f"{ptr}/request")
        _require(req, "path", str, path, f"{ptr}/request")
        _require(resp, "status", int, path, f"{ptr}/response")
        if "events" in resp and not isinstance(resp["events"], list):
            raise CassetteError(path, f"{ptr}/response/events", "'events' must be a list")
        at = ex.get("at")
        if at is not None and not isinstance(at, str):
            raise CassetteError(path, f"{ptr}/at", "'at' must be an RFC 3339 timestamp string")
        exchanges.append(Exchange(req, resp, ex.get("expect_rule"), i, at))
    tools = data.get("tools", [])
    if not isinstance(tools, list):
        raise CassetteError(path, "/tools", "'tools' must be a list")
    return Cassette(
        id=cid, title=title, source=sources, model=data.get("model"), tools=tools,
        exchanges=exchanges, path=Path(path) if not isinstance(path, Path) else path,
        streamed=bool(data.get("streamed", False)), tags=dict(data.get("tags", {})), raw=data,
        clock_start=data.get("clock_start") if isinstance(data.get("clock_start"), str) else None,
    )


#: Parsed cassettes by file identity (path, device, inode, size, mtime), most recent last, with
#: the file's bytes while the entry is racy (see :func:`load_cassette`).
_LOADED: OrderedDict[tuple[str, int, int, int, int], tuple[Cassette, bytes | None]] = OrderedDict()
_LOADED_LIMIT = 1024
_LOADED_LOCK = threading.Lock()
#: File timestamps are coarse (a kernel tick): a file rewritten with the same size within this
#: many seconds of its mtime may keep its stat identity, so such an entry is checked by content.
_RACY_SECONDS = 2.0


def clear_loaded() -> None:
    """Forget every cached parse (the next :func:`load_cassette` of each file reads it again)."""
    with _LOADED_LOCK:
        _LOADED.clear()


def load_cassette(path: str | Path, *, cache: bool = True) -> Cassette:
    """The cassette in ``path``. ``cache``: reuse this process's parse of the unchanged file (same
    path, inode, size and modification time; a file modified in the last two seconds is also
    compared byte for byte, as git does for racily clean files); see the module docstring."""
    if not cache:
        p = resolve_fixture(path)
        return _parse_file(p, _read_bytes(p))
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        found = resolve_fixture(path)
        if found != Path(path):  # a cassette of the corpus, by name
            return load_cassette(found, cache=cache)
        raise CassetteError(path, "", "file not found") from None
    except OSError as e:  # a parent directory that cannot be searched, a name too long...
        raise CassetteError(path, "", f"cannot read the file: {_why(e)}") from None
    key = (name, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _LOADED_LOCK:
        hit = _LOADED.get(key)
        if hit is not None:
            _LOADED.move_to_end(key)
    if hit is not None and hit[1] is None:
        return hit[0]
    p = Path(path)
    data = _read_bytes(p)
    racy = time.time() - st.st_mtime_ns / 1e9 <= _RACY_SECONDS
    if hit is not None and data == hit[1]:
        if not racy:
            with _LOADED_LOCK:  # old enough now: the stat identity suffices from here on
                _LOADED[key] = (hit[0], None)
        return hit[0]
    cassette = _parse_file(p, data)
    with _LOADED_LOCK:
        _LOADED[key] = (cassette, data if racy else None)
        while len(_LOADED) > _LOADED_LIMIT:
            _LOADED.popitem(last=False)
    return cassette


def _read_bytes(p: Path) -> bytes:
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise CassetteError(p, "", "file not found") from None
    except IsADirectoryError:
        raise CassetteError(p, "", "a directory, not a cassette file") from None
    except OSError as e:  # permission denied, an I/O error...
        raise CassetteError(p, "", f"cannot read the file: {_why(e)}") from None


def _why(e: OSError) -> str:
    return e.strerror.lower() if e.strerror else str(e)


def _walk_json(base: Path) -> Iterator[Path]:
    """Every ``*.json`` under ``base`` (at any depth); a directory that cannot be listed is a
    :class:`CassetteError` (``Path.rglob`` would skip it silently, calling it empty)."""
    def fail(e: OSError) -> None:
        where = Path(e.filename) if e.filename else base
        raise CassetteError(where, "", f"cannot read the directory: {_why(e)}")

    for folder, dirs, files in os.walk(base, onerror=fail):
        dirs.sort()
        for name in files:
            if name.endswith(".json"):
                yield Path(folder) / name


def _parse_file(p: Path, data: bytes) -> Cassette:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CassetteError(p, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as e:
        raise CassetteError(p, "", f"broken JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    return parse_cassette(parsed, p)


def iter_cassette_paths(root: str | Path | None = None) -> Iterator[Path]:
    """The cassette files of ``root`` (a file, a directory, or a name in the corpus: see
    :func:`resolve_fixture`; default: the whole corpus), sorted by path."""
    base = resolve_fixture(root) if root is not None else default_fixtures_root()
    if base.is_file():
        yield base
        return
    if not base.exists():
        raise CassetteError(base, "", "no such file or directory (nor a cassette or folder of "
                            f"that name in the corpus at {default_fixtures_root()})")
    yield from sorted(p for p in _walk_json(base) if not p.name.startswith("_"))


def iter_corpus(root: str | Path | None = None) -> Iterator[Cassette]:
    """Every cassette under ``root`` (default: the bundled corpus), sorted by path."""
    for p in iter_cassette_paths(root):
        yield load_cassette(p)
