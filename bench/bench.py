#!/usr/bin/env python3
"""Side-by-side benchmark of bytepair against its peers.

    python bench/bench.py [SUITE ...] [--quick] [--rounds N]
                          [--write-report docs/performance.md] [--write-summary README.md]
    python bench/bench.py --summary-from docs/performance.md --write-summary README.md

SUITE is any of encode, batch, worst, train, decode, load, unigram, sentencepiece (default:
all, in that order), or scale (counting, training and dataset encoding on a ~1 GB
corpus; run only when named: `bench.py scale`, or `bench.py all scale`
for everything). The report goes between markers in the documentation's
performance page; the summary table in README.md is derived from that report
(bench_summary.py), so neither is typed by hand. Every figure comes after a correctness gate: encoders' ids are
compared with tiktoken's (a row whose ids differ gets no ratio and the run
exits with status 1), decoders must give the input back, and bytepair's
trained merges must equal the pure-Python reference's on a slice in the same
run. Peers that are not installed get a row that says so; nothing is
installed or downloaded by the benchmark. See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_harness import (  # noqa: E402
    MB,
    REPO,
    Corpus,
    Results,
    background_load,
    cpu_snapshot,
    find_data,
    load_corpus,
    log,
    nproc,
)
from bench_summary import SUMMARY_END, SUMMARY_START, write_summary  # noqa: E402

START_MARKER = "<!-- bench:start -->"  # (markers of the report, in docs/performance.md)
END_MARKER = "<!-- bench:end -->"
# The scale suite has a block of its own, so that running it does not
# replace the other suites' report and running those does not replace it.
SCALE_START_MARKER = "<!-- bench-scale:start -->"
SCALE_END_MARKER = "<!-- bench-scale:end -->"
SUITES = (
    "encode",
    "batch",
    "worst",
    "train",
    "decode",
    "load",
    "unigram",
    "sentencepiece",
)  # "all"
GOALS_TITLE = "Goals"
EXTRA_SUITES = ("scale",)  # run only when named (it takes about as long as all the rest)

DEFAULTS = dict(
    rounds=5,
    batch_rounds=11,
    encode_mb=3.0,
    tiny_reps=10,
    worst_small_kb=100.0,
    worst_large_kb=1000.0,
    worst_huge_mb=10.0,
    worst_budget=20.0,
    worst_budget_ours=60.0,
    train_mb=100.0,
    train_small_mb=10.0,
    vocab_size=32768,
    small_vocab_size=8192,
    train_rounds=3,
    train_timeout=900.0,
    ref_kb=1000.0,
    ref_vocab_size=756,
    unigram_mb=10.0,
    unigram_vocab_sizes=(8000, 32000),
    scale_mb=1024.0,
    scale_hf_mb=200.0,
    scale_vocab_size=32768,
    scale_max_memory=32.0,
    scale_timeout=3600.0,
)
QUICK = dict(
    rounds=1,
    batch_rounds=1,
    encode_mb=0.2,
    tiny_reps=1,
    worst_small_kb=10.0,
    worst_large_kb=100.0,
    worst_huge_mb=1.0,
    worst_budget=3.0,
    worst_budget_ours=10.0,
    train_mb=2.0,
    train_small_mb=0.5,
    vocab_size=2048,
    small_vocab_size=512,
    train_rounds=1,
    train_timeout=120.0,
    ref_kb=100.0,
    ref_vocab_size=306,
    unigram_mb=0.5,
    unigram_vocab_sizes=(4000,),
    scale_mb=16.0,
    scale_hf_mb=4.0,
    scale_vocab_size=2048,
    scale_max_memory=8.0,
    scale_timeout=600.0,
)


class Context:
    """What the suites share: the data folder, a scratch folder, the encoding slices."""

    def __init__(self, args, data: Path, workdir: Path) -> None:
        self.args, self.data, self.workdir = args, data, workdir
        self._corpora: dict[str, Corpus] = {}

    def corpus(self, name: str) -> Corpus:
        if name not in self._corpora:
            self._corpora[name] = load_corpus(self.data, name, int(self.args.encode_mb * MB))
        return self._corpora[name]


def commit() -> str:
    """``git describe --always --dirty`` of the repository, or "unknown" without git."""
    try:
        proc = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else "unknown"


def machine_line(argv: list[str]) -> str:
    from bench_peers import versions_line

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python " + shlex.join(argv)
    return (
        f"{date}; commit {commit()}; nproc {nproc()}; CPU {cpu}; "
        f"{platform.system()} {platform.release()}; Python {platform.python_version()}; "
        f"{versions_line()}; command: `{command}`"
    )


def render(
    results,
    header: str,
    seconds: float,
    targets_title: str = GOALS_TITLE,
) -> str:
    out = [header, ""]
    for section in results.sections:
        out += [f"### {section.title}", "", section.body, ""]
    out += ["### Correctness", ""]
    out += [f"- {line}" for line in results.checks]
    if results.problems:
        out += [f"- **PROBLEM**: {p}" for p in results.problems]
    if results.peer_diffs:
        out += [
            "- Peers whose output differs from tiktoken's (their rows get no ratio; not a bytepair failure):"
        ]
        out += [f"  - {line}" for line in results.peer_diffs]
    elif not results.checks:
        out += ["- (no correctness check ran)"]
    out += ["", f"### {targets_title}", ""]
    for t in results.targets:
        verdict = {True: "**met**", False: "**NOT met**", None: "not measured"}[t.met]
        out.append(f"- {verdict} — {t.name}: {t.detail}")
    met = sum(t.met is True for t in results.targets)
    out += [
        "",
        f"{met} of {len(results.targets)} goals met; the whole run took {seconds / 60:.1f} min.",
    ]
    return "\n".join(out)


def replace_between_markers(
    path: Path, block: str, start_marker: str = START_MARKER, end_marker: str = END_MARKER
) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.find(start_marker), text.find(end_marker)
    if start < 0 or end < 0 or end < start:
        raise ValueError(
            f"{path}: needs the markers {start_marker} and {end_marker}, in that order"
        )
    text = text[: start + len(start_marker)] + "\n" + block + "\n" + text[end:]
    path.write_text(text, encoding="utf-8")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench.py",
        description="Benchmark bytepair against tiktoken, HF tokenizers, bpe-openai, tokendagger, "
        "tokie, kitoken and rustbpe (same inputs, ids checked before timing).",
    )
    p.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help=f"any of {', '.join(SUITES)} (default: all of those), or scale (only when named)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run of everything with small sizes and 1 round (explicit options still win)",
    )
    p.add_argument(
        "--rounds", type=int, help="timed rounds per row, the median is reported (default 5)"
    )
    p.add_argument(
        "--batch-rounds",
        type=int,
        help="timed rounds per row of the batch suite (default 11: its rows take tens of "
        "milliseconds, and the two-thread ratios need more samples on a noisy machine)",
    )
    p.add_argument(
        "--encode-mb", type=float, help="MB of each corpus to encode and decode (default 3)"
    )
    p.add_argument(
        "--tiny-reps",
        type=int,
        help="small inputs: the 1000-text rows get --rounds × this many rounds of one call each "
        "(cache cleared before each); the one-text rows repeat their call 50 × this per round "
        "(default 10)",
    )
    p.add_argument(
        "--worst-small-kb", type=float, help="worst case: the smaller size in KB (default 100)"
    )
    p.add_argument(
        "--worst-large-kb", type=float, help="worst case: the larger size in KB (default 1000)"
    )
    p.add_argument(
        "--worst-huge-mb", type=float, help="worst case: bytepair's largest size in MB (default 10)"
    )
    p.add_argument(
        "--worst-budget", type=float, help="worst case: seconds a peer gets per input (default 20)"
    )
    p.add_argument(
        "--worst-budget-ours",
        type=float,
        help="worst case: seconds bytepair gets per input (default 60)",
    )
    p.add_argument(
        "--train-mb",
        type=float,
        help="MB of large_en to train on (default 100; capped at the corpus)",
    )
    p.add_argument(
        "--train-small-mb", type=float, help="MB of the smaller training runs (default 10)"
    )
    p.add_argument(
        "--vocab-size", type=int, help="vocabulary size of the main training runs (default 32768)"
    )
    p.add_argument(
        "--small-vocab-size", type=int, help="the smaller vocabulary size (default 8192)"
    )
    p.add_argument(
        "--train-rounds",
        type=int,
        help="rounds of the --train-mb runs (default 3; the smaller runs use --rounds)",
    )
    p.add_argument(
        "--train-timeout", type=float, help="seconds one training run may take (default 900)"
    )
    p.add_argument(
        "--ref-kb", type=float, help="KB of large_en for the reference merges check (default 1000)"
    )
    p.add_argument(
        "--ref-vocab-size", type=int, help="vocabulary size of that check (default 756: 500 merges)"
    )
    p.add_argument(
        "--unigram-mb", type=float, help="unigram: MB of large_en to train on (default 10)"
    )
    p.add_argument(
        "--unigram-vocab-sizes",
        type=lambda text: tuple(int(v) for v in text.split(",")),
        help="unigram: vocabulary sizes, comma-separated (default 8000,32000)",
    )
    p.add_argument("--scale-mb", type=float, help="scale: MB of the built corpus (default 1024)")
    p.add_argument(
        "--scale-cache",
        help="scale: where the built corpus is kept and reused (default $BYTEPAIR_BENCH_CACHE, "
        "else bytepair-bench-scale in the system temp dir)",
    )
    p.add_argument(
        "--scale-hf-mb",
        type=float,
        help="scale: MB of the corpus (its first files) HF tokenizers trains on (default 200)",
    )
    p.add_argument(
        "--scale-hf-full",
        action="store_true",
        help="scale: HF tokenizers trains on the whole corpus (slow on few cores)",
    )
    p.add_argument(
        "--scale-vocab-size",
        type=int,
        help="scale: vocabulary size of the training (default 32768)",
    )
    p.add_argument(
        "--scale-max-memory",
        type=float,
        help="scale: the max_memory of counting, in MiB (default 32: below the corpus's "
        "counts, so that counting writes several runs)",
    )
    p.add_argument(
        "--scale-timeout", type=float, help="scale: seconds one step may take (default 3600)"
    )
    p.add_argument(
        "--data", help="the shared data folder (default $BYTEPAIR_SHARED_DATA, else ../shared/data)"
    )
    p.add_argument(
        "--write-report",
        metavar="PATH",
        help=f"replace the text between {START_MARKER} and {END_MARKER} in PATH (the "
        "documentation's docs/performance.md) with the report (the scale suite's: between "
        f"{SCALE_START_MARKER} and {SCALE_END_MARKER})",
    )
    p.add_argument(
        "--write-summary",
        metavar="README",
        help=f"replace the text between {SUMMARY_START} and {SUMMARY_END} in README with a "
        "summary table derived from the report (the one this run writes with --write-report, "
        "or the one --summary-from names)",
    )
    p.add_argument(
        "--summary-from",
        metavar="PATH",
        help="run no suite: read the report in PATH (docs/performance.md) and only write the "
        "summary (--write-summary)",
    )
    args = p.parse_args(argv)
    if args.summary_from and (args.suites or not args.write_summary or args.write_report):
        p.error("--summary-from takes only --write-summary (it runs no suite)")
    if args.write_summary and not (args.summary_from or args.write_report):
        p.error(
            "--write-summary needs --write-report (the report it is derived from) or --summary-from"
        )
    known = SUITES + EXTRA_SUITES
    unknown = [s for s in args.suites if s not in known and s != "all"]
    if unknown:
        p.error(f"unknown suite(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    named = set(args.suites)
    if not named or "all" in named:
        named = (named - {"all"}) | set(SUITES)
    args.suites = named
    defaults = QUICK if args.quick else DEFAULTS
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if min(args.rounds, args.batch_rounds, args.train_rounds) < 1:
        p.error("rounds must be at least 1")
    if args.scale_mb <= 0 or args.scale_hf_mb <= 0 or args.scale_max_memory <= 0:
        p.error("--scale-mb, --scale-hf-mb and --scale-max-memory must be positive")
    if (
        min(args.ref_vocab_size, args.vocab_size, args.small_vocab_size, args.scale_vocab_size)
        < 257
    ):
        p.error("vocabulary sizes must be above 256")
    return args


def run_main_suites(args, ctx) -> Results:
    """The suites of "all" (encode ... sentencepiece): one report, with its goals."""
    import bench_encode
    import bench_load
    import bench_sentencepiece
    import bench_train
    import bench_unigram
    import bench_worst

    results = Results()
    plan = [
        (
            {"encode", "batch", "decode"},
            lambda: bench_encode.run(args, ctx, args.suites, results),
        ),
        ({"worst"}, lambda: bench_worst.run(args, ctx, results)),
        ({"train"}, lambda: bench_train.run(args, ctx, results)),
        ({"load"}, lambda: bench_load.run(args, ctx, results)),
        ({"unigram"}, lambda: bench_unigram.run(args, ctx, results)),
        ({"sentencepiece"}, lambda: bench_sentencepiece.run(args, ctx, results)),
    ]
    for names, run_suite in plan:
        if not args.suites & names:
            continue
        first_section, before = len(results.sections), cpu_snapshot()
        run_suite()
        shared = [n for n in SUITES if n in args.suites & names]
        what = (
            "this suite"
            if len(shared) == 1
            else "the " + "/".join(shared) + " suites (run together)"
        )
        load = background_load(before, cpu_snapshot(), what)
        for section in results.sections[first_section:]:
            if load:
                section.body += "\n\n" + load
    # Sections in this order: encoding, batch, worst case, training, decoding, loading, ...
    order = [
        "Encoding, one thread",
        "Encoding, batch",
        "Worst case",
        "Training",
        "Decoding",
        "Loading",
        "Unigram",
        "SentencePiece",
    ]
    results.sections.sort(
        key=lambda s: next(i for i, o in enumerate(order) if s.title.startswith(o))
    )
    return results


def run_scale_suite(args, ctx) -> Results:
    import bench_scale

    results = Results()
    before = cpu_snapshot()
    bench_scale.run(args, ctx, results)
    load = background_load(before, cpu_snapshot())
    for section in results.sections:
        if load:
            section.body += "\n\n" + load
    return results


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    summary = Path(args.write_summary) if args.write_summary else None
    if summary is not None:  # fail before the long run, not after
        content = summary.read_text(encoding="utf-8") if summary.is_file() else ""
        if SUMMARY_START not in content or SUMMARY_END not in content:
            sys.exit(f"bench.py: {summary} lacks the markers {SUMMARY_START} and {SUMMARY_END}")
    if args.summary_from:
        write_summary(Path(args.summary_from), summary)
        log(f"wrote the summary of {args.summary_from} into {summary}")
        return 0
    # (runner, report markers, title of the goals list), one report each.
    reports = []
    if args.suites & set(SUITES):
        reports.append((run_main_suites, (START_MARKER, END_MARKER), GOALS_TITLE))
    if "scale" in args.suites:
        reports.append((run_scale_suite, (SCALE_START_MARKER, SCALE_END_MARKER), GOALS_TITLE))
    report_page = Path(args.write_report) if args.write_report else None
    if report_page is not None:  # fail before the long run, not after
        content = report_page.read_text(encoding="utf-8") if report_page.is_file() else ""
        for _, (start, end), _ in reports:
            if start not in content or end not in content:
                sys.exit(f"bench.py: {report_page} lacks the markers {start} and {end}")
    data = find_data(args.data)
    try:
        import bytepair  # noqa: F401
    except ImportError as e:
        sys.exit(f"bench.py: cannot import bytepair ({e}); install it (maturin develop --release)")

    header = machine_line([sys.argv[0], *argv])
    failed = False
    whole = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bytepair-bench-") as tmp:
        ctx = Context(args, data, Path(tmp))
        for runner, (start, end), targets_title in reports:
            started = time.perf_counter()
            results = runner(args, ctx)
            report = render(results, header, time.perf_counter() - started, targets_title)
            print(report + "\n", flush=True)
            failed |= bool(results.problems)
            if report_page is not None:
                if results.problems:
                    print(
                        f"\n{report_page} not updated ({start}): a correctness check failed.",
                        file=sys.stderr,
                    )
                else:
                    replace_between_markers(report_page, report, start, end)
                    log(f"wrote the report into {report_page} (between {start} and {end})")
    if summary is not None and report_page is not None and not failed:
        write_summary(report_page, summary)
        log(f"wrote the summary of {report_page} into {summary}")
    log(f"done in {time.perf_counter() - whole:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
