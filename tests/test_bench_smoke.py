"""Smoke test of bench/bench.py: a tiny --quick run prints the table, the core's
merges equal the reference's, and every encoder's ids equal tiktoken's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BYTEPAIR_SHARED_DATA", REPO.parent / "shared" / "data"))
NEEDED = [
    "corpus/large_en.txt.gz",
    "corpus/large_code.txt.gz",
    "models/gpt2/encoder.json",
    "models/gpt2/vocab.bpe",
    "models/tiktoken/r50k_base.tiktoken",
]


@pytest.mark.slow
def test_bench_quick_run(tmp_path):
    missing = [name for name in NEEDED if not (SHARED_DATA / name).is_file()]
    if missing:
        pytest.skip(f"shared data absent at {SHARED_DATA} (set BYTEPAIR_SHARED_DATA): {missing}")
    readme = tmp_path / "README.md"
    readme.write_text(
        "# t\n<!-- bench:start -->\nold\n<!-- bench:end -->\nafter\n", encoding="utf-8"
    )
    cmd = [
        sys.executable,
        str(REPO / "bench" / "bench.py"),
        "--quick",
        "--train-mb",
        "0.3",
        "--vocab-size",
        "400",
        "--encode-mb",
        "0.2",
        "--ref-kb",
        "10",
        "--ref-vocab-size",
        "290",
        "--data",
        str(SHARED_DATA),
        "--write-readme",
        str(readme),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{proc.stderr[-3000:]}"
    assert "| what | tool | median s |" in out
    for task in ("train ", "encode ", "decode "):
        assert f"| {task}" in out, f"no {task!r} rows:\n{out}"
    assert "merges identical: yes" in out
    assert "ids DIFFER" not in out
    written = readme.read_text(encoding="utf-8")
    assert "\nold\n" not in written and "merges identical: yes" in written
    assert written.endswith("<!-- bench:end -->\nafter\n")
