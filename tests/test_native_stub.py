"""The stub python/bytepair/_native/_ext.pyi describes the compiled extension: every
class, method, function and constant it has, with the same parameters and
defaults (mypy's stubtest compares the two)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_native_stub_matches_the_compiled_module():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install mypy): stubtest is part of it")
    # From the repository root, as CI runs it, so mypy reads the project's settings.
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "bytepair._native._ext"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"stubtest found problems:\n{result.stdout}{result.stderr}"
    assert "Success: no issues found" in result.stdout
