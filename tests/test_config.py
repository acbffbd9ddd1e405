"""The app's Streamlit configuration keeps the user's data on the machine."""

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parent.parent / ".streamlit" / "config.toml"


def test_no_telemetry_loopback_only_and_an_upload_limit():
    cfg = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert cfg["browser"]["gatherUsageStats"] is False
    # a wildcard or LAN address would expose uploaded data and trigger Streamlit's
    # external-IP lookup (an outside request) at start-up
    assert cfg["server"]["address"] in {"127.0.0.1", "localhost", "::1"}
    assert cfg["server"]["headless"] is True
    assert 0 < cfg["server"]["maxUploadSize"] <= 1000
