"""The package as the README uses it: ``import bytepair`` alone reaches every
submodule the README names as ``bytepair.<module>.<function>``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import bytepair

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_submodule_paths_work_after_a_plain_import():
    named = set(re.findall(r"`bytepair\.([a-z_]+)\.[a-z_]+", README.read_text(encoding="utf-8")))
    assert {"gage", "counts", "char_bpe"} <= named
    # A fresh interpreter: in this one, other tests may have imported them already.
    probe = "import bytepair\n" + "".join(f"bytepair.{name}\n" for name in sorted(named))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_unknown_attributes_are_still_attribute_errors():
    try:
        bytepair.no_such_thing  # noqa: B018
    except AttributeError as e:
        assert "no_such_thing" in str(e)
    else:
        raise AssertionError("bytepair.no_such_thing was found")
