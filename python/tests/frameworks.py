"""What a framework test does when its framework is not installed: it is
skipped, so the companion's own run (standard library only) passes
without them; unless ``SYMFONIC_EVALS_REQUIRE_FRAMEWORKS=1`` says the
frameworks were installed on purpose (CI's framework-adapters step), and
then a missing one is an error, never a skip that hides a broken install,
a renamed import or an adapter that no longer imports.

Every framework test module skips through :func:`needs` (a test or a
test class) or :func:`missing` (inside a running test), so the rule lives
here once."""

from __future__ import annotations

import functools
import importlib.util
import os
import unittest
from typing import Any, Callable, TypeVar

__all__ = ["REQUIRE_FRAMEWORKS", "FrameworkMissing", "installed", "missing", "needs", "required"]

REQUIRE_FRAMEWORKS = "SYMFONIC_EVALS_REQUIRE_FRAMEWORKS"
"""The environment variable that turns a missing framework into an error."""

T = TypeVar("T")


class FrameworkMissing(RuntimeError):
    """A framework test's framework is missing where every one is required."""


def required() -> bool:
    """Whether every framework must be installed (the variable is set,
    and not to ``0``)."""
    return os.environ.get(REQUIRE_FRAMEWORKS, "") not in ("", "0")


def installed(module: str) -> bool:
    """Whether ``module`` (dotted, e.g. ``google.adk``) can be imported."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent is missing
        return False


def _reason(framework: str, extra: str) -> str:
    return f"{framework} is not installed (pip install './python[{extra}]')"


def _error(reason: str) -> FrameworkMissing:
    return FrameworkMissing(f"{reason}, and {REQUIRE_FRAMEWORKS}=1 requires it")


def missing(framework: str, extra: str) -> None:
    """Inside a running test whose framework (``extra``'s) is missing:
    skips it, or raises :class:`FrameworkMissing` when frameworks are
    required."""
    reason = _reason(framework, extra)
    if required():
        raise _error(reason)
    raise unittest.SkipTest(reason)


def needs(available: bool, framework: str, extra: str) -> Callable[[T], T]:
    """``unittest.skipUnless(available, ...)`` for a test or a test class
    needing ``framework`` (installed by the pip extra ``extra``); when
    frameworks are required, an unavailable one errors the test, or every
    test of the class (through its ``setUpClass``), instead."""
    if available:
        return lambda item: item
    reason = _reason(framework, extra)
    if not required():
        return unittest.skip(reason)

    def erroring(item: Any) -> Any:
        if isinstance(item, type):

            def set_up_class(cls: Any) -> None:
                raise _error(reason)

            item.setUpClass = classmethod(set_up_class)
            return item

        @functools.wraps(item)
        def test(*args: Any, **kwargs: Any) -> None:
            raise _error(reason)

        return test

    return erroring
