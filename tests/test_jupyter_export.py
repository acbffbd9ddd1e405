"""Static figure export (lmdk_core.save_figure): PNG/SVG/PDF through kaleido and the local
Chromium (Debian's chromium-headless-shell, what `make chromium` installs, is enough), offline
HTML without a browser; without a browser, an error that says what to install."""

from __future__ import annotations

import os
import struct
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import lmdk_core as lk
from lmdk_core import figures
from lmdk_core.errors import FigureExportError, LmdkError, ParameterError

HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"  # Debian's, installed by `make chromium`


@pytest.fixture(scope="module")
def fig():
    mask = np.arange(200) % 10 == 0
    return lk.allocation_figure(np.where(mask, 0.0, 0.5), mask, epsilon=1.0,
                                title="Export test: Skip allocation")


def _browser_or_skip():
    pytest.importorskip("kaleido")
    if figures.browser_path() is None:
        pytest.skip("no Chromium/Chrome for kaleido (make chromium)")


@pytest.mark.skipif(not os.access(HEADLESS_SHELL, os.X_OK), reason="no chromium-headless-shell")
def test_the_headless_shell_make_chromium_installs_is_found(monkeypatch):
    """kaleido alone looks only for chrome/chromium; save_figure also finds the headless shell."""
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    monkeypatch.setenv("PATH", os.path.dirname(HEADLESS_SHELL))
    assert os.path.realpath(figures.browser_path()) == os.path.realpath(HEADLESS_SHELL)


def test_html_export_is_standalone_and_offline(fig, tmp_path):
    out = lk.save_figure(fig, tmp_path / "alloc.html")
    text = out.read_text(encoding="utf-8")
    assert out.stat().st_size > 1_000_000  # plotly.js inlined
    assert "Export test: Skip allocation" in text
    assert '<script src="http' not in text and "cdn.plot.ly" not in text.split("</script>")[-1]


@pytest.mark.slow
def test_png_and_svg_exports_are_real_images(fig, tmp_path):
    _browser_or_skip()
    png = lk.save_figure(fig, tmp_path / "alloc.png", width=800, height=500, scale=2)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # IHDR
    assert (width, height) == (1600, 1000)
    assert 20_000 < len(data) < 2_000_000

    svg = lk.save_figure(fig, tmp_path / "figure.out", format="svg")
    root = ET.fromstring(svg.read_bytes())
    assert root.tag.endswith("svg")
    assert (root.get("width"), root.get("height")) == ("1000", "620")  # the figure's own height
    text = svg.read_text(encoding="utf-8")
    assert "Export test: Skip allocation" in text and "landmark (20)" in text
    assert 5_000 < len(text) < 2_000_000


def test_kaleido_page_loads_nothing_from_the_network():
    """save_figure turns MathJax off: kaleido's page then loads only the local plotly.js."""
    kaleido = pytest.importorskip("kaleido")
    from kaleido._page_generator import PageGenerator

    page = PageGenerator(mathjax=False).generate_index()
    srcs = [part.split('"')[1] for part in page.split("<script src=")[1:]]
    assert srcs and all(s.startswith("file://") for s in srcs), srcs
    default = PageGenerator().generate_index()  # kaleido's default fetches MathJax from a CDN
    assert "https://" in default
    assert kaleido


@pytest.mark.parametrize("name, fmt", [("a.gif", None), ("a", None), ("a.png", "bmp")])
def test_unknown_format_is_refused(fig, tmp_path, name, fmt):
    with pytest.raises(ParameterError, match="format"):
        lk.save_figure(fig, tmp_path / name, format=fmt)
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("kw", [{"width": 0}, {"height": -5}, {"scale": float("nan")},
                                {"width": True}, {"width": 1e9}, {"timeout_s": 0}])
def test_bad_size_is_refused(fig, tmp_path, kw):
    with pytest.raises(ParameterError):
        lk.save_figure(fig, tmp_path / "a.html", **kw)


def test_missing_browser_gives_the_html_route(fig, tmp_path, monkeypatch):
    pytest.importorskip("kaleido")
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-chromium"))
    with pytest.raises(FigureExportError, match=r"no-such-chromium.*\.html"):
        lk.save_figure(fig, tmp_path / "a.png")
    assert not (tmp_path / "a.png").exists()


def test_no_browser_names_what_to_install_and_html_still_works(fig, tmp_path, monkeypatch):
    """With no browser at all, static export refuses with the package's error (before starting
    kaleido, and without downloading Chrome) naming what to install; .html is unaffected."""
    pytest.importorskip("kaleido")
    monkeypatch.setattr(figures, "browser_path", lambda: None)
    with pytest.raises(FigureExportError) as err:
        lk.save_figure(fig, tmp_path / "x.svg")
    assert isinstance(err.value, LmdkError)
    message = str(err.value)
    assert "make chromium" in message and "apt-get install chromium" in message
    assert "x.html" in message and "BROWSER_PATH" in message
    assert not (tmp_path / "x.svg").exists()
    out = lk.save_figure(fig, tmp_path / "x.html")
    assert "Export test: Skip allocation" in out.read_text(encoding="utf-8")


FAKE_KALEIDO = '''
import os, pathlib, time
def calc_fig_sync(fig, opts, kopts):
    calls = pathlib.Path(os.environ["FAKE_KALEIDO_CALLS"])
    n = len(list(calls.iterdir()))
    (calls / str(n)).write_text(opts["format"])
    if n < int(os.environ["FAKE_KALEIDO_HANGS"]):
        time.sleep(600)  # a renderer whose browser never answers (kaleido 1.5 then waits for good)
    if os.environ.get("FAKE_KALEIDO_FAILS"):
        raise RuntimeError("the browser closed unexpectedly")
    return b"rendered " + fig["layout"]["title"]["text"].encode()
'''


@pytest.fixture
def fake_kaleido(tmp_path, monkeypatch):
    """The export's child interpreter imports this kaleido (first on its PYTHONPATH), which
    hangs in its first ``FAKE_KALEIDO_HANGS`` calls and records each call in ``calls``."""
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "kaleido.py").write_text(FAKE_KALEIDO)
    calls = tmp_path / "calls"
    calls.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake"))
    monkeypatch.setenv("FAKE_KALEIDO_CALLS", str(calls))
    monkeypatch.setenv("BROWSER_PATH", sys.executable)  # any executable: the fake opens nothing
    return calls


def test_an_export_that_hangs_is_stopped_and_tried_once_more(fig, tmp_path, fake_kaleido,
                                                             monkeypatch):
    """kaleido waits for good when its browser dies before answering (CI's run hung 80 minutes
    in test_png_and_svg_exports_are_real_images): the export runs in a child process that is
    stopped after ``timeout_s`` and started once more with a new browser."""
    monkeypatch.setenv("FAKE_KALEIDO_HANGS", "1")
    out = lk.save_figure(fig, tmp_path / "a.png", timeout_s=2)
    assert out.read_bytes() == b"rendered Export test: Skip allocation"
    assert sorted(p.name for p in fake_kaleido.iterdir()) == ["0", "1"]  # stopped, then again


def test_an_export_that_never_answers_fails_clearly_and_writes_nothing(fig, tmp_path,
                                                                       fake_kaleido, monkeypatch):
    monkeypatch.setenv("FAKE_KALEIDO_HANGS", "99")
    with pytest.raises(FigureExportError, match=r"did not finish within 0\.5 s, 2 times.*\.html"):
        lk.save_figure(fig, tmp_path / "a.svg", timeout_s=0.5)
    assert not (tmp_path / "a.svg").exists()
    assert len(list(fake_kaleido.iterdir())) <= figures.EXPORT_ATTEMPTS


def test_a_failing_renderer_is_named_and_not_retried(fig, tmp_path, fake_kaleido, monkeypatch):
    monkeypatch.setenv("FAKE_KALEIDO_HANGS", "0")
    monkeypatch.setenv("FAKE_KALEIDO_FAILS", "1")
    with pytest.raises(FigureExportError, match="RuntimeError: the browser closed unexpectedly"):
        lk.save_figure(fig, tmp_path / "a.pdf")
    assert not (tmp_path / "a.pdf").exists()
    assert [p.read_text() for p in fake_kaleido.iterdir()] == ["pdf"]
