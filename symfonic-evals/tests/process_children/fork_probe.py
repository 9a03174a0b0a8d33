"""A deployment that reports what a fork server must not carry over.

Each turn answers with this process's id and parent's id, how many
deployments this process built, how many threads run, its arguments and
one environment variable, so a test can tell a forked child from a fresh
interpreter and one child from the next. ``FORK_PROBE_THREAD=1`` starts a
thread at import, which makes the script unsafe to fork. Building the
deployment imports a module the script does not import at its top, and says
whether it was in memory already (the fork server learned it from an
earlier child); ``FORK_PROBE_LAZY_THREAD=1`` also imports one that starts a
thread.
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))

from symfonic_evals_protocol import Deployment, TurnRecord, serve  # noqa: E402

BUILT = []
"""Every deployment this process built: one, in a child with nothing of another."""

if os.environ.get("FORK_PROBE_THREAD") == "1":
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()


class Probe(Deployment):
    def __init__(self, durable_dir: str) -> None:
        super().__init__(durable_dir)
        BUILT.append(durable_dir)
        self.lazy_preloaded = "xml.dom.minidom" in sys.modules
        import xml.dom.minidom  # noqa: F401 - imported while building

        if os.environ.get("FORK_PROBE_LAZY_THREAD") == "1":
            import threaded_at_import  # noqa: F401 - on PYTHONPATH, as an installed package would be

    def run_turn(self, request, turn):  # type: ignore[no-untyped-def]
        return TurnRecord(
            answer="ok",
            attributes={
                "pid": os.getpid(),
                "ppid": os.getppid(),
                "pgid": os.getpgid(0),
                "built": len(BUILT),
                "argv": sys.argv[1:],
                "marker": os.environ.get("FORK_PROBE_MARKER"),
                "lazy_preloaded": self.lazy_preloaded,
            },
        )


if __name__ == "__main__":
    sys.exit(serve(Probe))
