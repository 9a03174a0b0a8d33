"""Two-stage factories: the first stage is built before the handshake is
read (so a spare process has it ready), the deployment over the durable
directory after it, and a first stage that fails is reported where a
plain factory's failure would be."""

from __future__ import annotations

import io
import json
import unittest
from typing import Any, List

from harness import HELLO, SHUTDOWN, async_session, session
from symfonic_evals_protocol import AsyncDeployment, Capabilities, Deployment, Staged, serve, staged


class Desk(Deployment):
    def __init__(self, durable_dir: str, built: Any) -> None:
        super().__init__(durable_dir)
        self.built = built

    def capabilities(self) -> Capabilities:
        return Capabilities()


class AsyncDesk(AsyncDeployment):
    def __init__(self, durable_dir: str, built: Any) -> None:
        super().__init__(durable_dir)
        self.built = built

    def capabilities(self) -> Capabilities:
        return Capabilities()


class Watched(io.BytesIO):
    """Standard input that notes, in ``log``, each time it is read."""

    def __init__(self, data: bytes, log: List[str]) -> None:
        super().__init__(data)
        self.log = log

    def readline(self, *args: Any) -> bytes:  # type: ignore[override]
        self.log.append("read")
        return super().readline(*args)


def lines(*messages: Any) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


class StagedFactoryTest(unittest.TestCase):
    def test_the_first_stage_is_built_before_the_handshake_is_read(self) -> None:
        log: List[str] = []
        factory = staged(lambda: log.append("prepare") or "graph", lambda graph, d: log.append(f"build {graph} {d}") or Desk(d, graph))
        reader, writer = Watched(lines(HELLO, SHUTDOWN), log), io.BytesIO()
        self.assertEqual(serve(factory, reader=reader, writer=writer), 0)
        self.assertEqual(log[:3], ["prepare", "read", f"build graph {HELLO['durable_dir']}"])
        self.assertEqual(json.loads(writer.getvalue().splitlines()[0])["type"], "ready")

    def test_the_first_stage_is_built_once_however_often_it_is_asked(self) -> None:
        built: List[int] = []
        factory = staged(lambda: built.append(1) or len(built), lambda n, d: Desk(d, n))
        factory.prepare()
        factory.prepare()
        self.assertEqual(factory("/tmp/t1").built, 1)
        self.assertEqual(built, [1])

    def test_a_failing_first_stage_fails_the_start_after_the_handshake(self) -> None:
        def broken() -> Any:
            raise KeyError("OPENAI_API_KEY")

        factory = staged(broken, lambda graph, d: Desk(d, graph))
        factory.prepare()  # kept, not raised: the handshake is still to come
        with self.assertRaises(KeyError):
            session(factory, [HELLO, SHUTDOWN])

    def test_an_asyncio_deployment_is_staged_the_same_way(self) -> None:
        log: List[str] = []
        factory = staged(lambda: log.append("prepare") or "agent", lambda agent, d: AsyncDesk(d, agent))
        written = async_session(factory, [HELLO, SHUTDOWN])
        self.assertEqual(written[0]["type"], "ready")
        self.assertEqual(log, ["prepare"])

    def test_a_class_factory_builds_the_class_it_is_called_on(self) -> None:
        from symfonic_evals_protocol._staged import StagedFactory

        class Base(StagedFactory, Desk):
            pass

        class Sub(Base):
            pass

        factory = Sub.factory(lambda: "graph")
        self.assertIsInstance(factory, Staged)
        desk = factory("/tmp/t2")
        self.assertIs(type(desk), Sub)
        self.assertEqual(desk.built, "graph")


if __name__ == "__main__":
    unittest.main()
