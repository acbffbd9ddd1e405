"""Importing lmdk_core stays light; the map helpers load on first use."""

import subprocess
import sys


def test_import_does_not_load_folium_until_a_map_is_asked_for():
    code = (
        "import sys, lmdk_core as lk\n"
        "assert 'folium' not in sys.modules, 'folium imported eagerly'\n"
        "assert lk.trajectory_map is lk.maps.trajectory_map\n"
        "assert 'folium' in sys.modules\n"
        "try:\n    lk.no_such_name\nexcept AttributeError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "has no attribute 'no_such_name'" in out.stdout
