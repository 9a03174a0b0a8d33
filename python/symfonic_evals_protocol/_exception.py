"""The code half of a traceback: what a failed turn's exception reports.

An exception's message, arguments and locals may quote turn content (a
prompt, a state value, a token), so by default a turn error carries none of
them: only the exception's type, its qualified name and the frames it passed
through (file, line, function), which is what tells a ``KeyError`` in the
adopter's code from one in an adapter. The file is relative to the working
directory, or labelled by where it lives (``<site-packages>/...``,
``<stdlib>/...``): an absolute path names a home directory and a machine.

The message is added only when the adopter opts in with
``serve(..., exception_messages=True)``, for deployments whose exception
texts are known to hold no turn content.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import traceback
from types import TracebackType
from typing import Any, Dict, List, Optional, Tuple

MAX_FRAMES = 32
"""The innermost frames kept; the outer ones are counted, not listed."""

MAX_CAUSES = 3
"""How many causes (``raise ... from``, or the exception being handled)
are reported beneath the exception."""

MAX_MESSAGE_CHARS = 2000
"""The longest opted-in message sent, in characters."""

_SERVE_LOOPS = {
    os.path.join(os.path.dirname(os.path.abspath(__file__)), name) for name in ("_sync.py", "_async.py")
}


def trace(error: BaseException, *, messages: bool = False) -> Dict[str, Any]:
    """The wire form of ``error``'s trace (the protocol's ``exception``):
    its type, qualified name and frames, outermost first, and its causes;
    each message only when ``messages`` is true."""
    return _trace(error, messages, MAX_CAUSES, set())


def _trace(error: BaseException, messages: bool, causes: int, seen: set) -> Dict[str, Any]:
    seen.add(id(error))
    kind = type(error)
    frames = _frames(error.__traceback__)
    kept = frames[-MAX_FRAMES:]
    body: Dict[str, Any] = {
        "type": kind.__name__,
        "qualified_name": f"{kind.__module__}.{kind.__qualname__}",
        "frames": [{"file": file, "line": line, "function": function} for file, line, function in kept],
    }
    if len(frames) > len(kept):
        body["frames_omitted"] = len(frames) - len(kept)
    if messages:
        try:
            body["message"] = str(error)[:MAX_MESSAGE_CHARS]
        except Exception:  # a __str__ that raises has no message to give
            pass
    cause = cause_of(error)
    if cause is not None and causes > 0 and id(cause) not in seen:
        body["cause"] = _trace(cause, messages, causes - 1, seen)
    return body


def cause_of(error: BaseException) -> Optional[BaseException]:
    """What ``error`` was raised from, or was raised while handling, as
    Python's own traceback shows it."""
    if error.__cause__ is not None:
        return error.__cause__
    if not error.__suppress_context__:
        return error.__context__
    return None


def _frames(tb: Optional[TracebackType]) -> List[Tuple[str, int, str]]:
    """The frames a traceback passed through, outermost first, without the
    serve loop's own frame at the top."""
    frames = []
    for frame, line in traceback.walk_tb(tb):
        code = frame.f_code
        frames.append((code.co_filename, line or 0, getattr(code, "co_qualname", code.co_name)))
    while frames and os.path.abspath(frames[0][0]) in _SERVE_LOOPS:
        frames.pop(0)
    return [(shown_path(file), line, function) for file, line, function in frames]


def _roots() -> List[Tuple[str, str]]:
    """Directories a file outside the working directory is shown relative
    to, each with its label, longest first."""
    labelled = []
    for key, label in (("purelib", "<site-packages>"), ("platlib", "<site-packages>"), ("stdlib", "<stdlib>")):
        path = sysconfig.get_paths().get(key)
        if path:
            labelled.append((os.path.realpath(path), label))
    for entry in sys.path:
        if entry and os.path.isdir(entry):
            labelled.append((os.path.realpath(entry), "<sys.path>"))
    return sorted(labelled, key=lambda pair: len(pair[0]), reverse=True)


def shown_path(file: str) -> str:
    """``file`` relative to the working directory, or to the library root
    holding it (labelled), or its base name under ``<elsewhere>``; never an
    absolute path. Pseudo-files such as ``<string>`` stay as they are."""
    if file.startswith("<") and file.endswith(">"):
        return file
    real = os.path.realpath(file)
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the working directory was removed
        cwd = os.path.sep
    if cwd != os.path.sep and _under(real, cwd):
        return _portable(os.path.relpath(real, cwd))
    for root, label in _roots():
        if _under(real, root):
            return f"{label}/{_portable(os.path.relpath(real, root))}"
    return f"<elsewhere>/{os.path.basename(real)}"


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.path.sep) + os.path.sep)


def _portable(relative: str) -> str:
    return relative.replace(os.path.sep, "/")
