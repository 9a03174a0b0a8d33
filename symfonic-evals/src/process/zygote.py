"""A fork server: import a deployment's modules once, fork a fresh child per start.

A framework deployment can spend seconds importing before it answers the
handshake, and a pack starts it again for every trial and restart. With
``ProcessSpec::fork_server``, the harness runs this file's source with the
spec's interpreter instead, once per interpreter, script and environment::

    python3 -c <this source> SCRIPT [MODULE...]

It needs nothing but the standard library (Python 3.9 or later, Linux or
another Unix with ``waitid``), so it serves any Python deployment.

It imports ``SCRIPT`` as a module (its ``if __name__ == "__main__"`` block
does not run, so nothing is built) and each ``MODULE`` after it (modules the
script imports only under some arguments), then serves fork requests on its
standard input, a Unix sequenced-packet socket the harness holds the other
end of. Each request carries the child's argument list, environment and
working directory as JSON, and three descriptors for its standard input,
output and error. The child is a new process in its own process group with
nothing of an earlier child in it: it takes the descriptors, the
environment and the arguments, and runs ``SCRIPT`` as ``__main__``, the
imports already in memory and the script compiled once by the zygote.

A deployment often imports more while it is built (a client's transport,
a framework's submodules) than its script imports at the top. Each child,
as it ends, names the modules it imported that the zygote had not (those
of installed packages and the standard library, never the deployment's
own directory's), and the zygote imports them before the next fork, so
only the first children pay for them. Nothing a child built or ran is
carried over: only imports. When such an import starts a thread, forking
is no longer safe, and every later fork request is refused, which the
harness answers by starting fresh interpreters.

Replies, one JSON object per packet:

- ``{"ready": true}`` once the script is imported, or ``{"ready": false,
  "why": ...}`` when forking it is unsafe (a thread is running, the import
  failed); the zygote then exits and the harness starts fresh interpreters.
- ``{"forked": PID}`` or ``{"error": ...}`` per request.
- ``{"exited": PID, "code": N}`` or ``{"exited": PID, "signal": N}`` when a
  child ends. The child stays unreaped (its process id and group id
  reserved, so the harness never signals a reused id) until the harness
  sends ``{"release": PID}``, answered with ``{"released": PID}`` once it is
  reaped.

The zygote exits when the harness closes its end.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import select
import signal
import socket
import sys
import threading
import traceback
from typing import Any, Dict, List, Optional, Set, Tuple

_PACKET = 1 << 20
_LEARNED = 1 << 16
"""The most a child reports of the modules it imported, in bytes."""


def _send(channel: socket.socket, message: Dict[str, Any]) -> None:
    channel.send(json.dumps(message).encode("utf-8"))


def _preload(script: str, modules: List[str]) -> Optional[str]:
    """Imports ``script`` without running its main block, then ``modules``;
    why it cannot be forked, or ``None``."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    spec = importlib.util.spec_from_file_location("__zygote_preload__", script)
    if spec is None or spec.loader is None:
        return f"{script} cannot be imported"
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001 - any failure means no fork
        return f"importing {os.path.basename(script)} failed: {type(error).__name__}"
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException as error:  # noqa: BLE001 - any failure means no fork
            return f"importing {name} failed: {type(error).__name__}"
    if threading.active_count() > 1:
        return "importing the script started a thread, which a fork would not carry"
    return None


def _learnable(script_dir: str, baseline: Set[str]) -> bytes:
    """The modules this child imported that the zygote had not, one name a
    line, at most one datagram's worth: those of an installed package or
    the standard library only (a module of the deployment's own directory
    may read the child's environment when imported)."""
    names = []
    size = 0
    # Only the modules the baseline lacks are looked at: touching a module
    # object (reading its ``__file__``, even listing it) writes its
    # reference count, and each page a forked child writes is copied, so
    # walking every module cost a framework desk's exit ten milliseconds.
    for name in sorted(sys.modules.keys() - baseline):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None) or ""
        if name.startswith("__") or not path:
            continue
        if os.path.abspath(path).startswith(script_dir + os.sep):
            continue
        size += len(name) + 1
        if size > _LEARNED:
            break
        names.append(name)
    return "\n".join(names).encode("utf-8")


_COMPILED: Dict[str, Tuple[Tuple[int, int], Any]] = {}
"""Each script's code object, compiled once in the zygote and keyed by its
file's modification time and size, so a child does not parse it again."""


def _compiled(path: str) -> Any:
    """``path``'s code object, compiled again only when the file changed."""
    stat = os.stat(path)
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _COMPILED.get(path)
    if cached is None or cached[0] != key:
        with open(path, "rb") as source:
            cached = (key, compile(source.read(), path, "exec", dont_inherit=True))
        _COMPILED[path] = cached
    return cached[1]


def _run_as_main(path: str) -> None:
    """Runs the script at ``path`` as ``__main__`` with the globals ``python
    SCRIPT`` gives it, from the code object the zygote compiled."""
    import builtins
    import importlib.machinery
    import types

    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=path,
        __cached__=None,
        __loader__=importlib.machinery.SourceFileLoader("__main__", path),
        __package__=None,
        __spec__=None,
        __builtins__=builtins,
    )
    sys.modules["__main__"] = main
    exec(_compiled(path), main.__dict__)


def _run_child(
    channel: socket.socket, request: Dict[str, Any], fds: List[int], learn: Tuple[socket.socket, Set[str]]
) -> None:
    """In the forked child: become the deployment. Never returns."""
    code = 1
    script_dir = os.path.dirname(os.path.abspath(request["argv"][0]))
    try:
        channel.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.environ.clear()
        os.environ.update(request.get("env", {}))
        if request.get("cwd"):
            os.chdir(request["cwd"])
        argv = request["argv"]
        sys.argv = list(argv)
        gc.enable()
        _run_as_main(argv[0])
        code = 0
    except SystemExit as exit_:
        if exit_.code is None:
            code = 0
        elif isinstance(exit_.code, int):
            code = exit_.code
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - reported as a spawned child would
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - the pipe may be gone
                pass
        try:
            learn[0].send(_learnable(script_dir, learn[1]))
        except Exception:  # noqa: BLE001 - learning is an optimisation
            pass
        os._exit(code)


def _fork(
    channel: socket.socket,
    request: Dict[str, Any],
    fds: List[int],
    wakeup: Tuple[int, int],
    learning: Tuple[socket.socket, socket.socket],
) -> int:
    baseline = set(sys.modules)
    try:
        _compiled(request["argv"][0])
    except (OSError, SyntaxError, ValueError, TypeError):
        pass  # the child compiles it again and reports the error itself
    # Everything the zygote holds moves out of the collector's sight: a
    # child's collections then never walk (and copy, page by page) the
    # imported modules it shares with the zygote.
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        for fd in wakeup:
            os.close(fd)
        learning[0].close()
        _run_child(channel, request, fds, (learning[1], baseline))
    try:
        # Also set here, so the group exists before the harness can signal it.
        os.setpgid(pid, pid)
    except OSError:
        pass
    return pid


def _exited(pid: int) -> Optional[Dict[str, Any]]:
    """How ``pid`` ended, leaving it unreaped; ``None`` while it runs."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return {"exited": pid, "code": 255}
    if info is None or info.si_pid == 0:
        return None
    if info.si_code == os.CLD_EXITED:
        return {"exited": pid, "code": info.si_status}
    return {"exited": pid, "signal": info.si_status}


def _learn(names: List[str]) -> Optional[str]:
    """Imports what a child imported after the fork (``names``), so the next
    children find it in memory; why forking is no longer safe, or ``None``.
    A module that fails to import here is left to the children."""
    for name in names:
        if name and name not in sys.modules:
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: BLE001 - the child imports it itself
                pass
    if threading.active_count() > 1:
        return "a module a child imported started a thread in the fork server"
    return None


def serve(channel: socket.socket) -> None:
    """Serves fork and release requests until the harness hangs up. A
    child's end wakes the loop through ``SIGCHLD``'s wakeup descriptor; the
    modules it imported arrive on the learning socket."""
    running: List[int] = []
    learning = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    learning[0].setblocking(False)
    unsafe: Optional[str] = None
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    wakeup = (wake_read, wake_write)
    while True:
        ready, _, _ = select.select([channel, wake_read, learning[0]], [], [])
        if learning[0] in ready:
            names: List[str] = []
            try:
                while True:
                    names.extend(learning[0].recv(_LEARNED).decode("utf-8", "replace").split("\n"))
            except BlockingIOError:
                pass
            if unsafe is None:
                unsafe = _learn(names)
        if wake_read in ready:
            try:
                while os.read(wake_read, 512):
                    pass
            except BlockingIOError:
                pass
        for pid in list(running):
            ended = _exited(pid)
            if ended is not None:
                running.remove(pid)
                _send(channel, ended)
        if channel not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(channel, _PACKET, 3)
        if not data:
            return
        try:
            request = json.loads(data)
        except ValueError:
            for fd in fds:
                os.close(fd)
            _send(channel, {"error": "a request that is not JSON"})
            continue
        if "release" in request:
            try:
                pid = int(request["release"])
                os.waitpid(pid, 0)
            except (ChildProcessError, ValueError, TypeError):
                pass
            _send(channel, {"released": request["release"]})
            continue
        if len(fds) != 3 or not isinstance(request.get("argv"), list) or not request["argv"]:
            for fd in fds:
                os.close(fd)
            _send(channel, {"error": "a fork request needs argv and three descriptors", "id": request.get("id")})
            continue
        ident = request.get("id")
        if unsafe is not None:
            for fd in fds:
                os.close(fd)
            _send(channel, {"error": unsafe, "id": ident})
            continue
        try:
            pid = _fork(channel, request, fds, wakeup, learning)
        except OSError as error:
            _send(channel, {"error": f"fork failed: {error.strerror}", "id": ident})
            continue
        finally:
            for fd in fds:
                os.close(fd)
        running.append(pid)
        _send(channel, {"forked": pid, "id": ident})


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # The harness's end of the control socket arrives as standard input;
    # standard input proper becomes nothing, so no child inherits it.
    control = os.dup(0)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.close(null)
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=control)
    if not args:
        _send(channel, {"ready": False, "why": "no script to preload"})
        return 2
    # No collection in the zygote between forks: its heap stays as the
    # children share it. The children collect as usual.
    gc.disable()
    why = _preload(args[0], args[1:])
    if why is not None:
        _send(channel, {"ready": False, "why": why})
        return 0
    _send(channel, {"ready": True})
    serve(channel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
