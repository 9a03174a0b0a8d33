"""The token codec seam (``adapters/tokens.py``) through the pause table:
the token handed out is the codec's, the table still binds it to its
conversation and question and spends it once, and a token the codec cannot
read names no pause. Standard library only."""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
import unittest
from typing import List, Optional

import harness  # noqa: F401  (puts the package on the path)
from symfonic_evals_protocol import ResumeRequest, TurnFailure
from symfonic_evals_protocol.adapters import SignedTokenCodec, TokenCodec
from symfonic_evals_protocol.adapters._common import AdapterStore, RunLease


class TenantTokens(TokenCodec):
    """A desk's own format, JWT-like: a readable header naming the tenant,
    then the key, verified against the tenant it serves; it counts spends."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.spent: List[str] = []

    def issue(self, key: str, conversation: str, question_id: str) -> str:
        header = base64.urlsafe_b64encode(json.dumps({"tenant": self.tenant}).encode()).decode()
        return f"{header}~{key}"

    def verify(self, token: str) -> Optional[str]:
        header, _, key = token.partition("~")
        if json.loads(base64.urlsafe_b64decode(header))["tenant"] != self.tenant:
            return None
        return key

    def spend(self, key: str) -> None:
        self.spent.append(key)


class Codecs(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="tokens-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.run = RunLease(self.dir)
        self.addCleanup(self.run.close)

    def store(self, codec: Optional[TokenCodec]) -> AdapterStore:
        store = AdapterStore(self.dir, codec=codec)
        self.addCleanup(store.close)
        return store

    def code(self, store: AdapterStore, token: str, conversation: str = "c", question: str = "q-1") -> Optional[str]:
        try:
            store.pauses.lookup(ResumeRequest(conversation, token, {"approved": True}, question))
        except TurnFailure as refusal:
            return refusal.code
        return None

    def test_the_default_token_is_the_key(self) -> None:
        store = self.store(None)
        token = store.pauses.mint("c", "q-1", "escalate_ticket", [], {})
        pause = store.pauses.get(token)
        assert pause is not None
        self.assertEqual(pause.token, token)
        self.assertGreaterEqual(len(token), 43)

    def test_signed_tokens_verify_and_a_tampered_one_is_unknown(self) -> None:
        store = self.store(SignedTokenCodec("a secret"))
        token = store.pauses.mint("c", "q-1", "escalate_ticket", [], {})
        key, _, signature = token.rpartition(".")
        self.assertEqual(store.pauses.get(token).token, key)  # type: ignore[union-attr]
        self.assertIsNone(self.code(store, token))
        self.assertEqual(self.code(store, key), "pause.unknown", "the bare key is not a token")
        flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
        self.assertEqual(self.code(store, f"{key}.{flipped}"), "pause.unknown")
        other = SignedTokenCodec("another secret").issue(key, "c", "q-1")
        self.assertEqual(self.code(store, other), "pause.unknown", "signed under another secret")
        # Still bound to its conversation and question, by the table.
        self.assertEqual(self.code(store, token, conversation="c-elsewhere"), "pause.foreign")
        self.assertEqual(self.code(store, token, question="q-forged"), "question.mismatch")

    def test_the_same_secret_verifies_after_a_restart(self) -> None:
        token = self.store(SignedTokenCodec(b"k")).pauses.mint("c", "q-1", "t", [], {})
        self.assertIsNone(self.code(self.store(SignedTokenCodec(b"k")), token))

    def test_a_codec_of_the_desks_own_needs_no_subclass_of_the_table(self) -> None:
        codec = TenantTokens("tenant-a")
        store = self.store(codec)
        token = store.pauses.mint("c", "q-1", "t", [], {})
        self.assertTrue(token.endswith("~" + store.pauses.get(token).token))  # type: ignore[union-attr]
        # An attempt that died after pausing hands the same pause out again.
        self.assertEqual(store.pauses.get(store.pauses.mint("c", "q-1", "t", [], {})), store.pauses.get(token))
        foreign = TenantTokens("tenant-b").issue(store.pauses.get(token).token, "c", "q-1")  # type: ignore[union-attr]
        self.assertEqual(self.code(store, foreign), "pause.unknown")
        self.assertEqual(self.code(store, "not base64 at all~x"), "pause.unknown", "a codec that raises names no pause")

        pause = store.pauses.lookup(ResumeRequest("c", token, {"approved": True}, "q-1"))
        self.assertTrue(store.pauses.claim(pause.token, self.run))
        store.pauses.finish(pause.token)
        store.pauses.finish(pause.token)
        self.assertEqual(codec.spent, [pause.token], "the codec hears of the spend once")
        with self.assertRaises(TurnFailure) as replay:
            store.pauses.refuse_replay(store.pauses.lookup(ResumeRequest("c", token, {"approved": True}, "q-1")), self.run)
        self.assertEqual(replay.exception.code, "pause.replayed")

    def test_an_empty_secret_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            SignedTokenCodec("")


if __name__ == "__main__":
    unittest.main()
