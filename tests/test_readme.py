"""The README's library example runs as printed and its claims hold."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_runs_and_keeps_its_promises():
    code = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    assert ns["G"].max() <= 1.0 + 1e-9
    assert int(ns["L"].sum()) == 7046 and len(ns["traj"]) == 11373  # as the comment says
    assert len(ns["tl"].tpl) == len(ns["traj"])
    assert (ns["tl"].tpl >= ns["rel"].budget - 1e-12).all()
    assert ns["public_csv"].splitlines()[0] == "time,lat,lon"


def test_readme_quick_start_names_the_two_make_targets():
    text = README.read_text(encoding="utf-8")
    assert "make run" in text and "make test" in text
    makefile = (README.parent / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^run:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert (README.parent / ".ci" / "run").read_text(encoding="utf-8").strip().endswith("make test")
