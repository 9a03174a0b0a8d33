"""The token a person redeems, apart from the pause it names.

The adapters keep every pause in their durable table under a key of their
own (32 url-safe random bytes). What the turn hands out as the pause's token
is the codec's business: by default the key itself, an opaque random token;
a desk whose tokens must be JWTs, signed, or carry a tenant passes its own
:class:`TokenCodec` (``token_codec=`` on every adapter's deployment, or
``AdapterStore(..., codec=...)``) instead of subclassing the pause table.

The table still decides everything the packs judge: the token's
conversation and question id, whether it was spent, whether a live run
holds it. A codec only turns a key into a token (:meth:`TokenCodec.issue`),
a token back into the key it names (:meth:`TokenCodec.verify`; anything it
cannot read is an unknown token, never an error of the turn), and hears
when a pause is spent for good (:meth:`TokenCodec.spend`, e.g. to revoke a
token elsewhere too). Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Optional, Union

__all__ = ["SignedTokenCodec", "TokenCodec"]


class TokenCodec:
    """Opaque tokens: the token is the pause's key. Override any of the
    three methods; each runs in the process that serves the turn, and all
    of a trial's processes must agree (build the codec from the same secret
    in every start of the deployment)."""

    def issue(self, key: str, conversation: str, question_id: str) -> str:
        """The token for the pause stored under ``key`` (of ``conversation``,
        asking ``question_id``). Called again, for the same pause, when a
        turn that died after pausing is retried: a codec may mint another
        token then, and every one it issued must verify to ``key``."""
        return key

    def verify(self, token: str) -> Optional[str]:
        """The key ``token`` names, or ``None`` for a token this codec did
        not issue (forged, tampered, malformed, expired). Raising counts as
        ``None``: the resume is refused as an unknown token."""
        return token

    def spend(self, key: str) -> None:
        """The pause under ``key`` was redeemed and its continuation
        finished: every later redemption is refused as a replay whatever
        the codec does; a codec that also revokes tokens elsewhere does it
        here."""


class SignedTokenCodec(TokenCodec):
    """Tokens signed with HMAC-SHA256 under ``secret``: ``<key>.<signature>``.
    A token whose signature does not match is unknown before the table is
    read, so a guessed or altered token never reaches a stored pause."""

    def __init__(self, secret: Union[str, bytes]) -> None:
        if not secret:
            raise ValueError("a signing secret must not be empty")
        self._secret = secret.encode() if isinstance(secret, str) else bytes(secret)

    def _signature(self, key: str) -> str:
        digest = hmac.new(self._secret, key.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def issue(self, key: str, conversation: str, question_id: str) -> str:
        return f"{key}.{self._signature(key)}"

    def verify(self, token: str) -> Optional[str]:
        key, dot, signature = token.rpartition(".")
        if not dot or not key or not hmac.compare_digest(signature, self._signature(key)):
            return None
        return key
