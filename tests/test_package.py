"""The package's surface: every public name resolves, ``import bytepair``
alone does not load numpy, and every ``bytepair.<module>.<name>`` path the
README and the docs name can be imported."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import bytepair

ROOT = Path(__file__).resolve().parent.parent
DOTTED = re.compile(r"`(bytepair(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def _resolve(dotted: str) -> object:
    """The object at ``dotted``: its longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ModuleNotFoundError(dotted)


def test_every_public_name_resolves():
    for name in bytepair.__all__:
        assert getattr(bytepair, name) is not None, name
    assert bytepair.load.__module__ == "bytepair.api"
    assert bytepair.train.__module__ == "bytepair.api"


def test_a_plain_import_does_not_load_numpy():
    probe = "import sys, bytepair\nprint('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_paths_the_docs_name_are_importable():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    named = {m for page in pages if page.exists() for m in DOTTED.findall(page.read_text("utf-8"))}
    for dotted in sorted(named):
        assert _resolve(dotted) is not None, dotted


def test_unknown_attributes_are_still_attribute_errors():
    try:
        bytepair.no_such_thing  # noqa: B018
    except AttributeError as e:
        assert "no_such_thing" in str(e)
    else:
        raise AssertionError("bytepair.no_such_thing was found")
