"""Envelope caching is explicit, per caller and thread-safe (issue 12, item 2).

Streamlit runs each session in its own thread. The former process-wide LRU cache raised
KeyError under 8 threads (a lookup moved an entry another thread had just evicted) and kept
matrices estimated from one user's trajectory alive for every other session.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from lmdk_core.correlation import envelope, loss_increment_fixed_point, temporal_loss

THREADS = 8
ROUNDS = 30
CACHING_FILE = "increment.py"  # lmdk_core/correlation/increment.py: envelope() and its cache
CACHING_FUNCTIONS = {"envelope", "get"}


def _matrices(k: int, n: int = 3, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        W = rng.random((n, n)) + 0.05
        out.append(W / W.sum(1, keepdims=True))
    return out


def _hammer(work) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def run(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except BaseException as exc:  # collected and reported by the test
            errors.append(exc)

    def preempt(frame, event, arg):
        """Pause a thread right after a cache hit (local ``hit`` set), before it touches the
        entry again: the interleaving that is rare by chance (another thread evicting the entry
        in between) then happens on every run."""
        code = frame.f_code
        if code.co_filename.endswith(CACHING_FILE) and code.co_name in CACHING_FUNCTIONS:
            def local(frame, event, arg):
                if event == "line" and frame.f_locals.get("hit") is not None:
                    time.sleep(1e-3)
                return local
            return local
        return None

    threading.settrace(preempt)
    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        threading.settrace(None)
    return errors


def test_envelope_from_eight_threads_without_a_cache():
    # six threads cycle over 16 matrices: in a 16-entry LRU each lookup hits the least recently
    # used entry; two threads now and then insert a new matrix, which evicts that entry
    hot = _matrices(16)
    cold = [_matrices(ROUNDS, seed=10 + i) for i in range(2)]

    def work(i: int) -> None:
        if i < THREADS - 2:
            for r in range(ROUNDS):
                assert envelope(hot[r % len(hot)]).n_states == 3
        else:
            for P in cold[i - THREADS + 2]:
                assert envelope(P).n_states == 3

    errors = _hammer(work)
    assert not errors, f"{len(errors)} thread(s) failed, first: {errors[0]!r}"


def test_shared_explicit_cache_from_eight_threads_gives_correct_values():
    from lmdk_core.correlation import EnvelopeCache

    mats = _matrices(12, seed=1)
    want = [loss_increment_fixed_point(P, 0.7) for P in mats]
    cache = EnvelopeCache(size=3)  # much smaller than the working set: constant eviction
    got: dict[tuple[int, int], float] = {}

    def work(i: int) -> None:
        for r in range(ROUNDS):
            k = (i * 5 + r) % len(mats)
            got[i, r] = (k, envelope(mats[k], cache=cache)(0.7))

    errors = _hammer(work)
    assert not errors, f"{len(errors)} thread(s) failed, first: {errors[0]!r}"
    assert len(cache) <= 3
    for k, v in got.values():
        assert v == pytest.approx(want[k], rel=1e-9, abs=1e-12)


def test_no_module_state_keeps_user_matrices():
    import lmdk_core.correlation.increment as inc

    P = _matrices(1, seed=2)[0]
    temporal_loss([0.1, 0.2], P, P)
    held = [name for name, v in vars(inc).items()
            if isinstance(v, (dict, list)) and not name.startswith("__") and len(v) > 0]
    assert held == [], f"module-level containers hold data: {held}"


def test_cache_size_is_validated():
    from lmdk_core.correlation import EnvelopeCache
    from lmdk_core.errors import ParameterError

    for bad in (0, -1, 1.5, True, "4"):
        with pytest.raises(ParameterError):
            EnvelopeCache(size=bad)
