"""Smoke test of bench/bench.py: a tiny --quick run of every suite prints all the
tables, its correctness lines say bytepair's ids, decodings and merges are right,
the goals are listed, and --write-report replaces only the marked block.
The scale suite runs on a corpus of a few MB and writes only its own block."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BYTEPAIR_SHARED_DATA", REPO.parent / "shared" / "data"))
NEEDED = [
    "corpus/large_en.txt.gz",
    "corpus/large_en.manifest.tsv",
    "corpus/large_code.txt.gz",
    "corpus/large_multilingual.txt.gz",
    "models/tiktoken/cl100k_base.tiktoken",
    "models/tiktoken/o200k_base.tiktoken",
    "models/hf/roberta-base.tokenizer.json",
]
SECTIONS = [
    "### Encoding, one thread",
    "### Encoding, batch",
    "### Worst case",
    "### Training",
    "### Decoding",
    "### Loading",
    "### Unigram LM",
    "### SentencePiece model files",
    "### Correctness",
    "### Goals",
]


SCALE_BLOCK = "<!-- bench-scale:start -->\nscale before\n<!-- bench-scale:end -->\nend\n"


@pytest.mark.slow
def test_bench_quick_run(tmp_path):
    missing = [name for name in NEEDED if not (SHARED_DATA / name).is_file()]
    if missing:
        pytest.skip(f"shared data absent at {SHARED_DATA} (set BYTEPAIR_SHARED_DATA): {missing}")
    pytest.importorskip("tiktoken", reason="the benchmark's ids oracle is tiktoken")
    readme = tmp_path / "README.md"
    readme.write_text(
        "# t\n<!-- bench:start -->\nold\n<!-- bench:end -->\nafter\n" + SCALE_BLOCK,
        encoding="utf-8",
    )
    cmd = [sys.executable, str(REPO / "bench" / "bench.py"), "--quick"]
    cmd += ["--encode-mb", "0.05", "--tiny-reps", "1"]
    cmd += ["--worst-small-kb", "5", "--worst-large-kb", "20", "--worst-huge-mb", "0.1"]
    cmd += ["--worst-budget", "5", "--worst-budget-ours", "10"]
    cmd += ["--train-mb", "0.3", "--train-small-mb", "0.1", "--vocab-size", "400"]
    cmd += ["--small-vocab-size", "300", "--train-timeout", "60"]
    cmd += ["--ref-kb", "20", "--ref-vocab-size", "290"]
    cmd += ["--unigram-mb", "0.2", "--unigram-vocab-sizes", "3000"]
    cmd += ["--data", str(SHARED_DATA), "--write-report", str(readme)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{proc.stderr[-3000:]}"
    for heading in SECTIONS:
        assert heading in out, f"no {heading!r}:\n{out}"
    assert "**PROBLEM**" not in out
    assert re.match(r"^\S.*; commit \S+; nproc \d+;", out), out.splitlines()[0]
    # The correctness lines, one per suite.
    assert "merges identical: yes" in out
    for suite in ("encode", "batch", "decode"):
        assert re.search(rf"^- {suite}: .* bytepair: identical in all \d+ rows", out, re.M), (
            f"no passing {suite} line:\n{out}"
        )
    match = re.search(
        r"^- worst case: bytepair's ids equal .* in (\d+) of (\d+) comparisons", out, re.M
    )
    assert match and match.group(1) == match.group(2) and int(match.group(2)) > 0, out
    assert re.search(r"^- load: .* bytepair: same ids as tiktoken / HF in all \d+ loads", out, re.M)
    if importlib.util.find_spec("sentencepiece") is not None:
        assert re.search(r"^- sentencepiece llama2_tokenizer, en .*: bytepair's ids are", out, re.M)
    # A row whose ids differ never gets a ratio (only its notes cell may say why).
    for line in out.splitlines():
        if line.startswith("|") and "**ids DIFFER**" in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert not any("×" in c for c in cells[:-1]), line
    # The goals list names every suite's goals.
    for name in (
        "encode, one thread",
        "batch",
        "worst case",
        "training",
        "decode_bytes",
        "loading",
    ):
        assert re.search(
            rf"^- (\*\*met\*\*|\*\*NOT met\*\*|not measured) — {re.escape(name)}", out, re.M
        ), f"no goal {name}:\n{out}"
    assert re.search(r"^- (\*\*met\*\*|\*\*NOT met\*\*) — unigram: held-out", out, re.M), out
    written = readme.read_text(encoding="utf-8")
    assert "\nold\n" not in written and "merges identical: yes" in written
    assert written.startswith("# t\n<!-- bench:start -->\n")
    assert written.endswith("<!-- bench:end -->\nafter\n" + SCALE_BLOCK)  # not run: untouched


def _needs_scale_data() -> None:
    missing = [name for name in NEEDED[:4] if not (SHARED_DATA / name).is_file()]
    if missing:
        pytest.skip(f"shared data absent at {SHARED_DATA} (set BYTEPAIR_SHARED_DATA): {missing}")


@pytest.mark.slow
def test_scale_corpus_is_built_once_and_mixed(tmp_path):
    """The scale corpus: parts of about equal size, all three sources, documents
    whole, and the cache reused for the same recipe (rebuilt for another)."""
    _needs_scale_data()
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import bench_scale
    finally:
        sys.path.pop(0)
    cache = tmp_path / "cache"
    text, info = bench_scale.build_corpus(SHARED_DATA, cache, 3.0)
    assert not info["reused"] and text.name == "text"
    files = sorted(text.iterdir())
    assert [f.name for f in files] == sorted(info["files"]) and len(files) > 1
    total = sum(f.stat().st_size for f in files)
    assert total == info["bytes"] <= 3_000_000 and total > 2_000_000
    assert all(info["sources"][name]["bytes"] > 0 for name in bench_scale.SOURCES)
    assert all(f.read_bytes().endswith(b"\n\n") for f in files)
    again, info2 = bench_scale.build_corpus(SHARED_DATA, cache, 3.0)
    assert again == text and info2["reused"]
    recipe = json.loads((text.parent / "recipe.json").read_text())["recipe"]
    assert recipe == bench_scale.recipe(SHARED_DATA, 3.0)
    other, info3 = bench_scale.build_corpus(SHARED_DATA, cache, 2.0)
    assert other != text and not info3["reused"]


@pytest.mark.slow
def test_bench_scale_tiny_run(tmp_path):
    """bench.py scale on a 2 MB corpus: every step runs (the dataset one when the
    module exists), b's merges equal c's, and --write-report replaces only the
    scale block."""
    _needs_scale_data()
    pytest.importorskip("tokenizers", reason="the scale suite compares with HF tokenizers")
    readme = tmp_path / "README.md"
    main_block = "# t\n<!-- bench:start -->\nmain before\n<!-- bench:end -->\n"
    readme.write_text(main_block + SCALE_BLOCK, encoding="utf-8")
    cmd = [sys.executable, str(REPO / "bench" / "bench.py"), "scale", "--scale-mb", "2"]
    cmd += ["--scale-hf-mb", "0.5", "--scale-vocab-size", "400", "--scale-max-memory", "1"]
    cmd += ["--scale-cache", str(tmp_path / "cache"), "--data", str(SHARED_DATA)]
    cmd += ["--write-report", str(readme)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{proc.stderr[-3000:]}"
    assert "### Corpus scale" in out and "### Goals" in out
    assert "### Encoding, one thread" not in out  # the other suites did not run
    assert "**PROBLEM**" not in out
    assert "merges from counts identical: yes" in out
    rows = [line for line in out.splitlines() if line.startswith("| ")][1:]
    steps = ["read_documents", "a.", "b.", "a + b", "c.", "d.", "e.", "e."]
    assert len(rows) == len(steps), out
    for step, row in zip(steps, rows):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert step in cells[0], row
        if step == "d." and "dataset module missing" in cells[-1]:
            continue
        assert cells[4] != "—" and cells[6] != "—", row  # seconds and peak RSS
    assert re.search(r"^- (\*\*met\*\*|\*\*NOT met\*\*) — scale: counting", out, re.M), out
    written = readme.read_text(encoding="utf-8")
    assert written.startswith(main_block)  # the other suites' block is untouched
    assert "scale before" not in written and "merges from counts identical: yes" in written
    assert written.endswith("<!-- bench-scale:end -->\nend\n")


def _bench_modules(*names):
    """The bench modules, imported from bench/ (they import each other by name)."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        return [__import__(name) for name in names]
    finally:
        sys.path.pop(0)


def test_targets_with_a_missing_comparison_are_not_measured():
    """A group whose comparison is missing (a peer absent, failed or unchecked) makes a
    target not measured, never met; a measured shortfall still makes it NOT met."""
    bench_harness, bench_checks, bench_encode, bench_train = _bench_modules(
        "bench_harness", "bench_checks", "bench_encode", "bench_train"
    )

    def row(tool, seconds, peer=True, status="ok", checked=True):
        labels = {"encoding": "e", "text": tool}
        r = bench_harness.Row("g", tool, 1, fn=lambda: None, is_peer=peer, labels=labels)
        r.status, r.checked, r.times = status, checked, [seconds] * 5
        return r

    full = [row("bytepair", 1, False), row("bytepair (numpy)", 1, False), row("tiktoken", 6)]
    full += [row("tokie", 2), row("tokie (numpy)", 1.5)]
    no_tiktoken = [row("bytepair", 1, False), row("bytepair (numpy)", 1, False)]
    no_tiktoken += [row("tiktoken", 2, status="error: x"), row("tokie", 2)]
    targets = {t.name: t for t in bench_encode.encode_targets([full, no_tiktoken])}
    vs_tk = targets["encode, one thread, list[int] path: ≥ 5x tiktoken"]
    assert vs_tk.met is None and vs_tk.detail.startswith("1/2 groups"), vs_tk
    assert "not measured" in vs_tk.detail
    # Like for like: the numpy path meets tokie (numpy) where it ran (1.5x), else tokie.
    numpy_peer = targets["encode, one thread, numpy path: ≥ 1.2x the fastest peer"]
    assert numpy_peer.met is True, numpy_peer
    assert "lowest 1.50× (e bytepair (numpy), vs tokie (numpy)); highest 2.00×" in numpy_peer.detail
    # A peer whose ids were not checked is never the fastest peer.
    unchecked = [row("bytepair", 1, False), row("bytepair (numpy)", 1, False)]
    unchecked += [row("tiktoken", 6), row("tokie", 0.5, checked=False)]
    assert bench_checks.fastest_peer(unchecked, unchecked[0]).tool == "tiktoken"
    assert "1 not checked" in bench_checks.ids_line(
        "encode", [[row("bytepair", 1, False, checked=False)]]
    )

    def run(tool, seconds=None, peak=None, error=""):
        r = bench_train.Run(tool)
        r.error = error
        r.results = [] if error else [{"train_s": seconds, "peak_kb": peak, "base_kb": 1}]
        return r

    runs = {
        "bytepair": run("bytepair", 1.0, 300_000),
        "HF tokenizers": run("HF tokenizers", error="not installed"),
        "rustbpe": run("rustbpe", 3.5, 400_000),
    }
    speed, memory = bench_train.train_targets({"gpt2, 79 MB": runs})
    assert speed.met is None and "HF tokenizers not measured" in speed.detail, speed
    assert memory.met is None and "HF tokenizers not measured" in memory.detail, memory
    assert "median of 1 round, where the goal asks for 5" in speed.detail
    runs["rustbpe"] = run("rustbpe", 2.0, 200_000)  # measured and short: NOT met
    speed, memory = bench_train.train_targets({"gpt2, 79 MB": runs})
    assert speed.met is False and memory.met is False


def test_ratios_are_taken_round_by_round():
    """Two tools raced on a machine that slows down part way (in one round, between the two
    calls): the ratio is the median of the rounds' ratios, 4, where the ratio of the two
    medians, 2.5, sets a fast round of one against a slow round of the other. Lists of
    different lengths fall back to the medians."""
    (bench_harness, bench_worst) = _bench_modules("bench_harness", "bench_worst")
    speed = [1.0, 1.0, 1.6, 1.6, 1.6]  # the machine's slowness, round by round
    ours = [0.1 * s for s in speed]
    theirs = [0.4 * s for s in [1.0, 1.0, 1.0, 1.6, 1.6]]  # one round timed before the drift
    assert bench_harness.paired_ratio(theirs, ours) == pytest.approx(4.0)
    medians = bench_harness.statistics.median(theirs) / bench_harness.statistics.median(ours)
    assert medians == pytest.approx(2.5)
    assert bench_harness.paired_ratio([1.0, 3.0], [1.0]) == pytest.approx(2.0)
    # Worst case: the larger size's rounds also time the smaller one.
    small = {"first": 0.01, "times": [0.010] * 5}
    large = {"first": 0.1, "times": [0.1, 0.1, 0.15, 0.15, 0.15]}
    large["pair_times"] = [0.01, 0.01, 0.015, 0.015, 0.015]
    assert bench_worst.scaling(small, large) == pytest.approx(10.0)
    del large["pair_times"]
    assert bench_worst.scaling(small, large) == pytest.approx(15.0)
    assert bench_worst.scaling(small, {"error": "x"}) is None


def test_the_tables_and_the_fastest_peer_use_the_round_by_round_ratio():
    """bench_checks' ratio() is the paired ratio, the fastest peer is the one a row is the
    fewest times faster than by it, and the calls of the unigram and sentencepiece suites take
    turns."""
    bench_harness, bench_checks = _bench_modules("bench_harness", "bench_checks")

    def row(tool, times, peer=True):
        r = bench_harness.Row("g", tool, 1, fn=lambda: None, is_peer=peer, labels={})
        r.checked, r.times = True, times
        return r

    ours = row("bytepair", [0.10, 0.10, 0.16, 0.16, 0.16], peer=False)
    # tokie's median is the lower, but round by round bytepair is ahead of it by more.
    tokie = row("tokie", [0.15, 0.15, 0.15, 0.40, 0.40])
    kitoken = row("kitoken", [0.20, 0.20, 0.20, 0.20, 0.20])
    assert bench_checks.ratio(kitoken, ours) == pytest.approx(1.25)
    assert bench_checks.ratio(tokie, ours) == pytest.approx(1.5)
    assert bench_checks.fastest_peer([ours, tokie, kitoken], ours) is kitoken
    assert bench_checks.fastest_peer([ours, tokie, kitoken]) is tokie  # by median, no row

    calls = []
    times = bench_harness.taking_turns(
        [lambda t: calls.append("a"), lambda t: calls.append("b")], "text", 4
    )
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert [len(t) for t in times] == [4, 4]


def test_the_worst_case_worker_times_both_sizes_in_each_round(tmp_path):
    """The 1 MB job's rounds also time the 100 KB input (here 20 KB and 5 KB), as many of
    each, so that the scaling ratio is taken round by round."""
    rank_file = SHARED_DATA / "models" / "tiktoken" / "cl100k_base.tiktoken"
    if not rank_file.is_file():
        pytest.skip(f"shared data absent at {SHARED_DATA} (set BYTEPAIR_SHARED_DATA)")
    (bench_worst,) = _bench_modules("bench_worst")
    setup = tmp_path / "setup.json"
    setup.write_text(json.dumps({"rank_file": str(rank_file), "data": str(SHARED_DATA)}))
    worker = bench_worst.Worker("bytepair", "cl100k_base", setup)
    try:
        paired = worker.job("letters", 20_000, 3, 30.0, pair=5_000)
        alone = worker.job("letters", 5_000, 3, 30.0)
    finally:
        worker.stop()
    assert "error" not in paired and "timeout" not in paired, paired
    assert len(paired["times"]) == len(paired["pair_times"]) == 3, paired
    assert "pair_times" not in alone and len(alone["times"]) == 3, alone
    rounds = zip(paired["times"], paired["pair_times"])
    assert bench_worst.scaling(alone, paired) == pytest.approx(
        statistics.median(large / small for large, small in rounds)
    )
