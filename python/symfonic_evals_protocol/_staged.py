"""A deployment factory in two stages, so a restart waits only for the
part that reads the durable directory.

A framework deployment spends most of its start building what does not
depend on the durable directory: the graph or agent, its model clients
(whose TLS trust store alone is tens of milliseconds per client). The
handshake names the durable directory, so :func:`serve` can only call a
plain factory after it. A :class:`Staged` factory says which part may come
first: :func:`serve` calls its ``prepare`` before reading the handshake,
then builds the rest once the handshake names the durable directory.

The harness starts a spare process ahead of a restart while the trial runs
on (``ProcessSpec::spare``); a staged factory's spare has its graph built
by then, and answers the handshake as soon as its durable part is open.
``prepare`` must not read or write the durable directory: the spare runs
it while the previous process still serves.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Optional, TypeVar

Built = TypeVar("Built")
Deployed = TypeVar("Deployed")


class Staged(Generic[Built, Deployed]):
    """A factory :func:`serve` takes, built in two stages: ``prepare()``
    before the handshake, ``build(prepared, durable_dir)`` after it.

    Calling it with the durable directory prepares first if nothing did.
    An exception in ``prepare`` is kept and raised by that call, after the
    handshake, where a plain factory's would have been: the harness then
    reports it as a failed start, with the stderr tail, as it would for a
    plain factory."""

    def __init__(self, prepare: Callable[[], Built], build: Callable[[Built, str], Deployed]) -> None:
        self._prepare = prepare
        self._build = build
        self._prepared: Optional[Built] = None
        self._error: Optional[BaseException] = None
        self._done = False

    def prepare(self) -> None:
        """Builds the first stage, once; keeps its exception, if any."""
        if self._done:
            return
        self._done = True
        try:
            self._prepared = self._prepare()
        except Exception as error:  # noqa: BLE001 - raised again after the handshake
            self._error = error

    def __call__(self, durable_dir: str) -> Deployed:
        self.prepare()
        if self._error is not None:
            raise self._error
        return self._build(self._prepared, durable_dir)  # type: ignore[arg-type]


def staged(prepare: Callable[[], Built], build: Callable[[Built, str], Deployed]) -> Staged[Built, Deployed]:
    """A two-stage factory: ``prepare()`` builds what reads no durable
    state (a graph, an agent), ``build(prepared, durable_dir)`` the
    deployment over it. See :class:`Staged`."""
    return Staged(prepare, build)


def prepare_early(factory: Any) -> None:
    """Runs a staged factory's first stage; a plain factory waits for the
    handshake."""
    if isinstance(factory, Staged):
        factory.prepare()


class StagedFactory:
    """A mixin for deployments built as ``cls(durable_dir, built,
    **options)`` over a graph or agent: :meth:`factory` is their two-stage
    factory."""

    @classmethod
    def factory(cls, make: Callable[[], Any], **options: Any) -> Staged[Any, Any]:
        """The factory :func:`serve` takes: ``make()`` builds the graph or
        agent before the handshake (in the process that serves it, after
        the fork server forked, so its model clients read that process's
        environment), and the deployment over it is opened once the
        handshake names the durable directory, with ``options`` as the
        class takes them. A subclass's ``factory`` builds the subclass."""
        return Staged(make, lambda built, durable_dir: cls(durable_dir, built, **options))  # type: ignore[call-arg]
