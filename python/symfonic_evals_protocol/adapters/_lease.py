"""This start of the process, alive while it runs: claims name a run, so a
claim left by a dead run is a client's retry and is honoured, while one
held by a live run is a concurrent or repeated redemption and is refused."""

from __future__ import annotations

import os
import secrets

__all__ = [
    "RunLease",
]

# -- this start of the process -------------------------------------------------


class RunLease:
    """This start of the deployment, alive while the process is.

    The run holds an exclusive ``flock`` on its own file under
    ``runs/`` in the durable directory; the operating system drops it when
    the process dies, so "the claimant's lock can be taken" means "the
    claimant is gone", with no clock and no timeout. Where ``fcntl`` is
    missing (Windows), every other run counts as gone.
    """

    def __init__(self, durable_dir: str) -> None:
        self._dir = os.path.join(durable_dir, "runs")
        os.makedirs(self._dir, exist_ok=True)
        self.id = secrets.token_hex(8)
        self._held = open(os.path.join(self._dir, f"{self.id}.lock"), "w")
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not Unix
            self._fcntl = None
        else:
            self._fcntl = fcntl
            fcntl.flock(self._held, fcntl.LOCK_EX)

    def is_alive(self, run: str) -> bool:
        """Whether the run named ``run`` still holds its lease. This run is
        alive; a run with no lease file is gone; an unreadable one counts as
        alive (refusing a retry is safe, admitting a concurrent redemption
        is not)."""
        if run == self.id:
            return not self._held.closed
        if self._fcntl is None:  # pragma: no cover - not Unix
            return False
        try:
            probe = open(os.path.join(self._dir, f"{run}.lock"))
        except FileNotFoundError:
            return False
        except OSError:
            return True
        with probe:
            try:
                self._fcntl.flock(probe, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB)
            except OSError:
                return True
            self._fcntl.flock(probe, self._fcntl.LOCK_UN)
            return False

    def close(self) -> None:
        """Gives the lease up (the run counts as gone from now on)."""
        self._held.close()
