"""The one sandboxed launch: every process the suite starts on a subject's behalf starts here.

:class:`Confinement` is the run's sandbox mode and limits as a value (``tooluse run --sandbox``,
``--memory-limit``, ``--cpu-limit``, ``--file-size-limit``, ``--process-limit``, ``--pass-env``
over the ``TOOLUSE_*`` variables, read once at the entry point). The run carries
it to :func:`launch`, which writes it into the child's environment (``TOOLUSE_*``, read there by
the subject host) and nowhere else.

:func:`launch` builds the child's environment (the allow-list, never a credential), its private
``HOME`` and ``TMPDIR``, its limits, and under the sandbox its ``bwrap`` command line (read-only
root, the writable folders, the overlays and the credential decoys), starts it, and returns a
:class:`Launch`: the process, what is needed to tell what it tried outside its case
(:meth:`Launch.escapes`), and :meth:`Launch.cleanup`. The subject sessions
(:mod:`.process`), the fork server (:mod:`.forkserver`), the preflight (:mod:`.spec`), worker
commands and the probe's bash all call it; only :mod:`.sandbox` and this module know about
bubblewrap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conformance.errors import ToolUseError
from conformance.subjects import sandbox
from conformance.subjects.isolation import DEFAULT_MEMORY_LIMIT


class SubjectStartError(ToolUseError):
    """The subject could not be started (its factory raised, or the command died at once)."""


def _limit(environ: Mapping[str, str], name: str, default: int) -> int | None:
    raw = environ.get(name, "")
    try:
        value = int(raw) if raw else default
    except ValueError:
        value = default
    return value if value > 0 else None


@dataclass(frozen=True)
class Confinement:
    """The sandbox mode and the limits every subject process of a run gets (None: no limit)."""

    #: ``auto`` (the sandbox where it works), ``required`` or ``off``.
    mode: str = sandbox.DEFAULT_MODE
    #: Address space (``RLIMIT_AS``), bytes.
    memory: int | None = DEFAULT_MEMORY_LIMIT
    #: CPU seconds (``RLIMIT_CPU``).
    cpu: int | None = sandbox.DEFAULT_CPU_LIMIT
    #: Largest file written (``RLIMIT_FSIZE``), bytes.
    file_size: int | None = sandbox.DEFAULT_FSIZE_LIMIT
    #: Processes at once (``RLIMIT_NPROC``, in the sandbox only).
    processes: int | None = sandbox.DEFAULT_NPROC_LIMIT
    #: Environment variables given to subjects beside the allow-list (never a credential).
    pass_env: tuple[str, ...] = ()
    #: A private ``HOME`` and ``TMPDIR`` per case (``TOOLUSE_SANDBOX_HOME=0``: the user's).
    private_home: bool = True

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> Confinement:
        """The confinement the ``TOOLUSE_*`` variables of ``env`` describe (defaults where unset;
        an entry point passes its environment, :meth:`conformance.run.Run.from_args`)."""
        mode = env.get("TOOLUSE_SANDBOX", sandbox.DEFAULT_MODE) or sandbox.DEFAULT_MODE
        return cls(
            mode=mode if mode in sandbox.MODES else sandbox.DEFAULT_MODE,
            memory=_limit(env, "TOOLUSE_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT),
            cpu=_limit(env, "TOOLUSE_CPU_LIMIT", sandbox.DEFAULT_CPU_LIMIT),
            file_size=_limit(env, "TOOLUSE_FSIZE_LIMIT", sandbox.DEFAULT_FSIZE_LIMIT),
            processes=_limit(env, "TOOLUSE_NPROC_LIMIT", sandbox.DEFAULT_NPROC_LIMIT),
            pass_env=tuple(n.strip() for n in env.get("TOOLUSE_PASS_ENV", "").split(",")
                           if n.strip()),
            private_home=env.get("TOOLUSE_SANDBOX_HOME", "1") != "0")

    def child_env(self) -> dict[str, str]:
        """The ``TOOLUSE_*`` variables a child process gets (the subject host applies the limits
        to itself from them; a ``tooluse`` started by a subject inherits the mode)."""
        env = {"TOOLUSE_SANDBOX": self.mode,
               "TOOLUSE_MEMORY_LIMIT": str(self.memory or 0),
               "TOOLUSE_CPU_LIMIT": str(self.cpu or 0),
               "TOOLUSE_FSIZE_LIMIT": str(self.file_size or 0),
               "TOOLUSE_NPROC_LIMIT": str(self.processes or 0)}
        if self.pass_env:
            env["TOOLUSE_PASS_ENV"] = ",".join(self.pass_env)
        if not self.private_home:
            env["TOOLUSE_SANDBOX_HOME"] = "0"
        return env

    def environment(self, extra: Mapping[str, str] | None = None,
                    environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """A child's environment: the allow-list of ``environ`` (default: this process's), the
        ``--pass-env`` names, :meth:`child_env`, then ``extra``; never a credential."""
        return sandbox.subject_env(os.environ if environ is None else environ,
                                   {**self.child_env(), **(extra or {})}, pass_env=self.pass_env)

    def status(self, *, notice: bool = True) -> sandbox.Status:
        """The sandbox for processes started now. ``notice``: ``auto`` without one prints a
        one-line notice (once per reason) and ``required`` raises
        :class:`~conformance.subjects.sandbox.SandboxUnavailable`; without, only the status."""
        return sandbox.active(self.mode) if notice else sandbox.status(self.mode)

    def ulimits(self, *, memory: bool, sandboxed: bool) -> str:
        """``ulimit`` commands for ``/bin/sh`` (``RLIMIT_NPROC`` only when ``sandboxed``)."""
        return sandbox.ulimit_script(self.memory if memory else None, sandboxed, cpu=self.cpu,
                                     fsize=self.file_size, nproc=self.processes)


@dataclass
class Launch:
    """A process :func:`launch` started, and what it needs to be judged and cleaned up after."""

    proc: Any
    box: sandbox.Status
    #: The folder holding the private ``HOME`` and ``TMPDIR`` (removed by :meth:`cleanup`).
    private: Path | None = None
    home: Path | None = None
    #: Decoys hiding the user's credential files: {decoy: the real path}, and their access times.
    hidden: dict[Path, Path] = field(default_factory=dict)
    decoys: dict[Path, float] = field(default_factory=dict)
    #: Overlays on the checkout and HOME: {upper folder: the real one}; their scratch folder.
    uppers: dict[Path, Path] = field(default_factory=dict)
    scratch: Path | None = None
    #: The shim's tag for its report of what was left in the namespace (on stderr).
    leftovers: str | None = None
    #: Held to its process limit by the watchdog (root, where RLIMIT_NPROC does not hold).
    watched: bool = False
    #: Without the sandbox: what changed outside the case, seen after the fact.
    outside: sandbox.Watch | None = None
    #: The folder holding the private ``/tmp`` when it is not in ``private`` (``tmp_in``).
    tmp: Path | None = None

    def cleanup(self) -> None:
        """Remove the private HOME and TMPDIR (under the sandbox: what the subject wrote to its
        ``/tmp`` and ``/var/tmp`` too) and the overlays' scratch folder."""
        for folder in (self.private, self.tmp, self.scratch):
            if folder is not None:
                sandbox.remove_tree(folder)

    def escapes(self, net_before: Mapping[str, int], net_after: Mapping[str, int],
                written_before: set[str] | None = None) -> list[str]:
        """What the process tried outside its case: network, credential files, writes."""
        found: list[str] = []
        tried = sandbox.network_attempts(net_before, net_after)
        if tried:
            found.append(f"network: {tried} (the sandbox has no network)")
        for decoy in sandbox.read_since(self.decoys):
            real = self.hidden.get(decoy, decoy)
            found.append(f"read a credential file outside its case directory: {real} "
                         "(the sandbox gave it a decoy)")
        written = sorted(sandbox.overlay_listing(self.uppers) - (written_before or set()))
        if written:
            found.append(f"wrote outside its case directory: {', '.join(written[:5])}"
                         f"{', ...' if len(written) > 5 else ''} (kept out of the real "
                         "folders by the sandbox)")
        if self.outside is not None:
            found.extend(self.outside.changes())
        return found


#: How the limits are applied: not at all (the process applies them itself, or has none), by a
#: ``/bin/sh`` wrapper, or by the shim that also lists what a sandboxed case left running.
Limits = Literal["none", "shell", "shim"]


@dataclass(frozen=True)
class Folders:
    """Where a launched process may write, and the folders of its own it gets."""

    #: Bound read-write under the sandbox (besides the private folder).
    writable: tuple[Path, ...] = ()
    #: The directory it starts in under the sandbox (default: the spec's ``cwd``).
    chdir: Path | None = None
    #: Make a private ``HOME`` and ``TMPDIR`` in a new folder here (when the confinement keeps
    #: them private); writable under the sandbox, removed by :meth:`Launch.cleanup`.
    private_in: Path | None = None
    private_prefix: str = "tooluse-home-"
    #: Under the sandbox: credential decoys in a new folder here (default: the private folder).
    decoys_in: Path | None = None
    #: Under the sandbox: overlays on the checkout and HOME in a new folder here.
    overlays_in: Path | None = None
    #: Without a private folder: the private ``/tmp`` in a new folder here.
    tmp_in: Path | None = None


@dataclass(frozen=True)
class LaunchSpec:
    """What :func:`launch` starts, and how: one value instead of a long list of keywords."""

    argv: tuple[str, ...]
    #: The run's sandbox mode and limits.
    confinement: Confinement
    #: Its working directory (None: the harness's).
    cwd: Path | None = None
    #: The harness's ``TOOLUSE_*`` entries for it, added to the allow-list of ``environ``
    #: (default: this process's environment), credentials dropped.
    env: Mapping[str, str] = field(default_factory=dict)
    environ: Mapping[str, str] | None = None
    #: What the harness itself hands it, kept as is (a worker's environment key and base URL).
    granted: Mapping[str, str] = field(default_factory=dict)
    folders: Folders = Folders()
    #: How the limits are applied (``memory``: the address-space limit too); a sandboxed
    #: process that applies them (or whose host does) is told ``TOOLUSE_SANDBOXED``.
    limits: Limits = "none"
    memory: bool = True
    #: Share the harness's network in the sandbox (a worker reaches the simulation on loopback).
    network: bool = False
    #: Without the sandbox: note what changes outside the case (:meth:`Launch.escapes`).
    watch: bool = False
    #: Hold a sandboxed process to its process limit from its start (the fork server, which
    #: must be up first, starts the watch itself).
    watchdog: bool = True
    #: The sandbox notice and ``--sandbox required``'s refusal (a preflight only asks).
    notice: bool = True
    #: A sandbox status already resolved for this launch.
    box: sandbox.Status | None = None
    #: Who it is, in errors.
    label: str = "subject"
    #: Start it another way (the fork server forks the host: no ``bwrap`` here).
    spawn: Callable[[dict[str, str]], Any] | None = None
    #: :class:`subprocess.Popen`'s own keywords (``stdin``, ``stdout``, ``stderr``, ``pass_fds``).
    popen: Mapping[str, Any] = field(default_factory=dict)


def launch(spec: LaunchSpec) -> Launch:
    """Start ``spec.argv`` for a subject, confined as ``spec.confinement`` (the run's) says:
    its environment (the allow-list, never a credential), a private ``HOME`` and ``TMPDIR``
    (``folders.private_in``), its limits, and under the sandbox its ``bwrap`` line: the
    writable folders bound read-write, credential decoys, overlays on the checkout and HOME
    (where overlayfs works), a private system temp directory (``/tmp`` and ``/var/tmp`` bound to
    folders of the private folder, or of ``folders.tmp_in`` without one:
    :func:`~.sandbox.private_tmp_options`), ``TMPDIR`` then ``/tmp``. See :class:`LaunchSpec`.

    Raises :class:`SubjectStartError` naming ``spec.label`` when it cannot start; nothing is
    left behind then.
    """
    conf, folders, label, limits = spec.confinement, spec.folders, spec.label, spec.limits
    cwd, spawn, private_in = spec.cwd, spec.spawn, folders.private_in
    extra = dict(spec.env)
    private = home = None
    if private_in is not None and conf.private_home:
        private = Path(tempfile.mkdtemp(prefix=folders.private_prefix, dir=private_in))
        home, tmp = private / "home", private / "tmp"
        home.mkdir()
        tmp.mkdir()
        extra.update(HOME=str(home), TMPDIR=str(tmp))
    started = Launch(None, sandbox.Status(conf.mode, False), private, home)
    try:
        started.box = spec.box if spec.box is not None else conf.status(notice=spec.notice)
    except sandbox.SandboxUnavailable as e:
        started.cleanup()
        raise SubjectStartError(str(e)) from None
    st = started.box
    if st.active and (limits != "none" or spawn is not None):
        extra["TOOLUSE_SANDBOXED"] = "1"
    if spec.watch and not st.active:
        started.outside = sandbox.Watch(credentials=True)
    child_env = {**conf.environment(extra, spec.environ), **spec.granted}
    words = list(spec.argv)
    if spawn is None:
        if shutil.which(words[0]) is None:
            started.cleanup()  # the wrappers below would hide it: said as exec says it
            raise SubjectStartError(f"cannot start {label}: no such program {words[0]!r} (or "
                                    "not executable)")
        script = conf.ulimits(memory=spec.memory, sandboxed=st.active) if limits != "none" else ""
        if st.active:
            hide: list[str] = []
            if st.overlay and folders.overlays_in is not None:  # outside what it may write in
                started.scratch = Path(tempfile.mkdtemp(prefix="tooluse-overlay-",
                                                        dir=folders.overlays_in))
                hide, started.uppers = sandbox.overlay_options(started.scratch)
            where = (Path(tempfile.mkdtemp(prefix="tooluse-decoys-", dir=folders.decoys_in))
                     if folders.decoys_in is not None else
                     private / "decoys" if private is not None else None)
            if where is not None:
                where.mkdir(exist_ok=True)
                decoys, started.hidden = sandbox.decoy_options(where)
                hide += decoys
                started.decoys = sandbox.atimes(started.hidden)
            holder = private
            if holder is None and folders.tmp_in is not None:
                holder = started.tmp = Path(tempfile.mkdtemp(prefix="tooluse-tmp-",
                                                             dir=folders.tmp_in))
            if holder is not None:  # first: the overlays and writable folders go on top
                hide = sandbox.private_tmp_options(
                    holder, [*words, *child_env.values()]) + hide
                if private is not None and "TMPDIR" in child_env:
                    child_env["TMPDIR"] = "/tmp"  # the same folder, by its short name
            if limits == "shim":
                started.leftovers = f"tooluse-left-{os.urandom(8).hex()}"
                words = sandbox.shim_argv(words, script, started.leftovers)
            elif limits == "shell":
                words = ["/bin/sh", "-c", f'{script}exec "$@"', "sh", *words]
            inside = folders.chdir if folders.chdir is not None else cwd
            assert inside is not None, "a sandboxed process needs a directory to start in"
            words = sandbox.wrap(words, st,
                                 writable=[*folders.writable, *([private] if private else [])],
                                 chdir=inside, extra=hide, network=spec.network)
        elif script:
            words = ["/bin/sh", "-c", f'{script}exec "$@"', "sh", *words]
    try:
        if spawn is not None:
            started.proc = spawn(child_env)
        else:
            started.proc = subprocess.Popen(words, cwd=cwd, env=child_env,
                                            start_new_session=True, **spec.popen)
    except (OSError, ToolUseError) as e:
        started.cleanup()
        raise SubjectStartError(f"cannot start {label}: {e}") from e
    if spec.watchdog and st.active and spawn is None and limits != "none" and sandbox.WATCHDOG.needed(
            conf.processes):
        sandbox.WATCHDOG.watch(started.proc.pid, conf.processes)  # root: RLIMIT_NPROC fails
        started.watched = True
    return started


def launch_networked(command: str, workdir: Path, extra: Mapping[str, str] | None = None, *,
                     granted: Mapping[str, str] | None = None, prefix: str = "tooluse-subject-home-",
                     confinement: Confinement, label: str = "the command",
                     **popen: Any) -> tuple[Launch, Path]:
    """:func:`launch` ``command`` (``/bin/sh -c``) for a subject that reaches the simulation on
    loopback (a ``--worker-cmd`` worker, a ``--loop-cmd`` loop): a private HOME and TMPDIR (one
    folder, which the caller removes; returned), ``TOOLUSE_WORKDIR`` and ``extra`` in its
    environment, ``granted`` as is (the base URL, the environment key). In the sandbox it
    shares the harness's network; everything else is as for tool subjects: read-only root, only
    its working directory, private HOME and private ``/tmp`` (in the HOME folder) writable, own
    PID namespace, no capabilities, gone with the run."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    env = {"HOME": str(home), "TMPDIR": str(home), "TOOLUSE_WORKDIR": str(workdir),
           **(extra or {})}
    try:
        started = launch(LaunchSpec(
            ("/bin/sh", "-c", command), confinement, cwd=workdir, env=env,
            granted=dict(granted or {}), folders=Folders(writable=(workdir, home), tmp_in=home),
            network=True, label=label, popen=popen))
    except BaseException:
        shutil.rmtree(home, ignore_errors=True)
        raise
    return started, home
