"""A real Ctrl-C in the test's own process, for the CLI's Ctrl-C tests."""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence

import pytest


def run_until_ctrl_c(main: Callable[[Sequence[str]], int], argv: Sequence[str]) -> int:
    """``main(argv)`` under Python's default SIGINT handler, as in a terminal (pytest-xdist
    workers ignore SIGINT), restored afterwards. The test raises the signal itself
    (``signal.raise_signal``) from the CLI's own progress call; an interrupt escaping ``main``
    fails the test instead of ending the test session."""
    held = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return main(argv)
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped the CLI instead of exiting with 130")
    finally:
        signal.signal(signal.SIGINT, held)
