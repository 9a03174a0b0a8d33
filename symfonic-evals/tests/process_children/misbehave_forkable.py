"""``misbehave.py`` behind a main guard, for the fork server to preload.

``misbehave.py`` does its work at import; the fork server imports its
script without running it, so the robustness cases that run forked start
this file, which runs ``misbehave.py`` only as ``__main__``.
"""

import os
import runpy

if __name__ == "__main__":
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "misbehave.py"), run_name="__main__")
