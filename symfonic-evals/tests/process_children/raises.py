"""A deployment over the Python companion whose every turn raises a
``ValueError`` quoting a secret, for the test that the harness reports the
exception's type and frames and never its text.

``--opt-in`` serves with ``exception_messages=True``.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))

from symfonic_evals_protocol import Capabilities, Deployment, serve  # noqa: E402

SECRET = "secret-text 9f2c"


def parse_amount(prompt):
    raise ValueError(f"{SECRET}: no amount in {prompt!r}")  # the raising line


class Raises(Deployment):
    def capabilities(self):
        return Capabilities().capability("tools").contributes("extensions", "weather_lookup")

    def run_turn(self, request, turn):
        return parse_amount(request.prompt)


if __name__ == "__main__":
    sys.exit(serve(Raises, exception_messages="--opt-in" in sys.argv))
