"""Call a download button's deferred data the way Streamlit does: in another thread, without
the session (a callable that read st.session_state there produced no file). Shared by the
AppTest modules that read what a download button carries."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def call_without_session(func: Callable[[], Any], timeout_s: float = 120) -> str:
    """The callable's data as text; fails with the callable's own exception if it raised."""
    out: dict = {}

    def target() -> None:
        try:
            out["value"] = func()
        except Exception as err:  # reported with the failing file
            out["error"] = err

    t = threading.Thread(target=target)
    t.start()
    t.join(timeout_s)
    assert "error" not in out, out.get("error")
    data = out["value"]
    return data.decode() if isinstance(data, bytes) else data


def record_downloads(monkeypatch: Any) -> dict[str, dict]:
    """Record every download button's label, data and file name as a page draws it (the
    ``seen`` dict, filled on each run). Patches both the container method and
    ``st.download_button`` (the main container's method, bound when streamlit is imported)."""
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    seen: dict[str, dict] = {}
    original = DeltaGenerator.download_button

    def recording(self: Any, label: str, data: Any, file_name: Any = None, *args: Any,
                  **kwargs: Any) -> Any:
        seen[label] = {"data": data, "file_name": file_name}
        return original(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", recording)
    monkeypatch.setattr(st, "download_button",
                        lambda *a, **kw: recording(st._main, *a, **kw))
    return seen
