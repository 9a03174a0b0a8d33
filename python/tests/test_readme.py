"""The snippets ``python/README.md`` marks ``<!-- runs -->`` (or
``<!-- runs: MODULE -->``, needing ``MODULE`` installed) run as they stand,
so the documented seams cannot drift from the code. Each runs in a fresh
namespace; one whose framework is missing is skipped with the install hint."""

from __future__ import annotations

import importlib.util
import os
import re
import unittest
from typing import List, Optional, Tuple

import harness  # noqa: F401  (puts the package on the path)

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
_MARKED = re.compile(r"<!-- runs(?:: (?P<module>[\w.]+))? -->\n```python\n(?P<code>.*?)\n```", re.DOTALL)
_EXTRAS = {"agents": "openai-agents", "langgraph": "langgraph", "pydantic_ai": "pydantic-ai", "google.adk": "google-adk"}


def snippets() -> List[Tuple[int, Optional[str], str]]:
    """Each marked snippet: its line in the README, the module it needs, its code."""
    with open(README, encoding="utf-8") as readme:
        text = readme.read()
    return [
        (text.count("\n", 0, match.start()) + 1, match.group("module"), match.group("code"))
        for match in _MARKED.finditer(text)
    ]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


class ReadmeSnippets(unittest.TestCase):
    def test_there_are_snippets_to_run(self) -> None:
        self.assertGreaterEqual(len(snippets()), 4)

    def test_every_marked_snippet_runs(self) -> None:
        for line, module, code in snippets():
            with self.subTest(line=line):
                if module is not None and not _installed(module):
                    self.skipTest(f"{module} is not installed (pip install './python[{_EXTRAS.get(module, module)}]')")
                exec(compile(code, f"README.md:{line}", "exec"), {"__name__": f"readme_{line}"})


if __name__ == "__main__":
    unittest.main()
