"""Steps taken on one shared, costly object (a page) in a fixed order, whichever test asks first.

A page load or a first page run costs far more than the checks made on it, so several tests of a
module share one page; to keep them independent of the order they run in (issue 29), the page is
taken through named steps, each once and always in the same order, and each step records what its
test checks. Used by tests/test_attacks_page.py (AppTest) and tests/test_guide_browser.py
(Chromium)."""

from __future__ import annotations


class OrderedSteps:
    """Subclasses name their steps in :attr:`STEPS` and define ``_<step>()`` for each, returning
    what its test checks. :meth:`upto` takes every step up to the one asked for that has not been
    taken yet, in :attr:`STEPS` order, and returns the asked step's record. A step that raises is
    recorded, raised to each test that asks for it, and handed to :meth:`failed`."""

    STEPS: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.seen: dict[str, object] = {}

    def upto(self, step: str):
        for name in self.STEPS[:self.STEPS.index(step) + 1]:
            if name not in self.seen:
                try:
                    self.seen[name] = getattr(self, f"_{name}")()
                except Exception as e:
                    self.seen[name] = e
                    self.failed(name)
        found = self.seen[step]
        if isinstance(found, Exception):
            raise found
        return found

    def failed(self, step: str) -> None:
        """``step`` raised. By default each step builds on what the one before left, so the
        later steps are not taken: each is recorded as failing, naming ``step``'s error.
        Override for steps that can start afresh (e.g. on a new page load)."""
        error = self.seen[step]
        for later in self.STEPS[self.STEPS.index(step) + 1:]:
            self.seen.setdefault(later, RuntimeError(f"not taken: step {step!r} failed: {error!r}"))
