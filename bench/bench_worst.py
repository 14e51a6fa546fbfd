"""Worst-case scaling: time(1 MB) / time(100 KB) on adversarial inputs, and a
10 MB run for bytepair. Every tool runs in a worker subprocess with a time
limit per job: a peer that blows up or hangs is a note, not a crash."""

from __future__ import annotations

import json
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from bench_harness import (
    ENCODINGS,
    KB,
    MB,
    Results,
    Section,
    Target,
    fmt_seconds,
    fmt_size,
    log,
    md_table,
    optional_import,
    paired_ratio,
    rounds_caveat,
    tiktoken_file,
)
from bench_worker import KINDS

WORKER = Path(__file__).resolve().parent / "bench_worker.py"
TOOLS = ("bytepair", "tiktoken", "HF tokenizers")
MODULES = {"bytepair": "bytepair", "tiktoken": "tiktoken", "HF tokenizers": "tokenizers"}
SHORT = {"cl100k_base": "cl100k", "o200k_base": "o200k"}


class Worker:
    """A ``bench_worker.py worst`` process; restarted after a job that times out."""

    def __init__(self, tool: str, encoding: str, setup: Path, load_timeout: float = 120) -> None:
        self.cmd = [sys.executable, str(WORKER), "worst", tool, encoding, str(setup)]
        self.load_timeout = load_timeout
        self.proc: Optional[subprocess.Popen] = None
        self.load_error = ""

    def _start(self) -> bool:
        self.proc = subprocess.Popen(
            self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        ready = self._read(self.load_timeout)
        if ready is None or not ready.get("ready"):
            self.load_error = "could not load" if ready is None else str(ready)
            self.stop()
            return False
        return True

    def _read(self, timeout: float) -> Optional[dict]:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([self.proc.stdout], [], [], left)
            if readable:
                line = self.proc.stdout.readline()
                if not line:  # the process died
                    return {"error": f"worker exited ({self.proc.wait()})"}
                if line.startswith("{"):
                    return json.loads(line)

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()  # our own child, by its pid
            self.proc.wait()
            self.proc = None

    def job(self, kind: str, n: int, rounds: int, budget: float, pair: int = 0) -> dict:
        """Times ``n`` bytes of ``kind``; with ``pair``, each round times that size first."""
        if self.proc is None and not self._start():
            return {"error": f"worker did not start: {self.load_error}"}
        assert self.proc is not None and self.proc.stdin is not None
        job = {"kind": kind, "n": n, "rounds": rounds, "budget": budget, "pair": pair}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        reply = self._read(budget)
        if reply is None:
            self.stop()
            return {"timeout": budget}
        reply["rounds_asked"] = rounds
        if "error" in reply and "worker exited" in reply["error"]:
            self.stop()
        return reply


def median_time(reply: Optional[dict]) -> Optional[float]:
    if not reply or "error" in reply or "timeout" in reply:
        return None
    times = reply.get("times") or [reply["first"]]
    return statistics.median(times)


def scaling(r_small: Optional[dict], r_large: Optional[dict]) -> Optional[float]:
    """time(large) / time(small): the median of the ratios of the rounds that timed both
    sizes (see ``paired_ratio``), else of the two jobs' medians."""
    t_small, t_large = median_time(r_small), median_time(r_large)
    if not t_small or not t_large:
        return None
    assert r_large is not None
    pairs = r_large.get("pair_times")
    if pairs and len(pairs) == len(r_large.get("times") or []):
        return paired_ratio(r_large["times"], pairs)
    return t_large / t_small


def rounds_of(reply: Optional[dict]) -> int:
    """The rounds behind median_time (the first call alone when no timed round fitted)."""
    return len(reply.get("times") or [reply["first"]]) if reply and "first" in reply else 0


def describe(reply: Optional[dict]) -> str:
    if reply is None:
        return "not run"
    if "timeout" in reply:
        return f"> {reply['timeout']:g} s (killed)"
    if "error" in reply:
        return reply["error"]
    return ""


def run(args, ctx, results: Results) -> None:
    small, large, huge = (
        int(args.worst_small_kb * KB),
        int(args.worst_large_kb * KB),
        int(args.worst_huge_mb * MB),
    )
    table = []
    ours_ratios: list[tuple[float, str]] = []
    ours_huge: list[tuple[float, str]] = []
    missing: list[str] = []
    missing_huge: list[str] = []
    ratio_rounds: list[int] = []  # rounds behind each of bytepair's timings, per target
    huge_rounds: list[int] = []
    peer_notes: list[str] = []
    compared = {"same": 0, "differ": 0, "roundtrip": 0}
    for encoding in ENCODINGS:
        setup = ctx.workdir / f"worst-{encoding}.json"
        hf_json = ""
        if optional_import("tokenizers") is not None:
            from bench_peers import hf_json as convert

            hf_json = str(convert(ctx.data, encoding, ctx.workdir))
        setup.write_text(
            json.dumps(
                {
                    "rank_file": str(tiktoken_file(ctx.data, encoding)),
                    "data": str(ctx.data),
                    "hf_json": hf_json,
                }
            )
        )
        replies: dict[tuple[str, str, int], dict] = {}
        for tool in TOOLS:
            if optional_import(MODULES[tool]) is None:
                continue
            worker = Worker(tool, encoding, setup)
            budget = args.worst_budget if tool != "bytepair" else args.worst_budget_ours
            try:
                for kind in KINDS:
                    sizes = [small, large] + ([huge] if tool == "bytepair" else [])
                    for n in sizes:
                        log(f"worst {SHORT[encoding]} {kind} {fmt_size(n)}: {tool}")
                        rounds = args.rounds if n < huge else max(1, min(3, args.rounds))
                        # The larger size's rounds also time the smaller: the ratio is taken
                        # round by round.
                        pair = small if n == large else 0
                        reply = worker.job(kind, n, rounds, budget, pair)
                        replies[(tool, kind, n)] = reply
                        if median_time(reply) is None:
                            break  # a larger size would only be worse
            finally:
                worker.stop()
        for kind in KINDS:
            r = replies.get(("bytepair", kind, huge))
            if r and r.get("roundtrip"):
                compared["roundtrip"] += 1
            elif r and r.get("roundtrip") is False:
                results.problems.append(
                    f"worst case {SHORT[encoding]} {kind} {fmt_size(huge)}: bytepair's decode_bytes(ids) is not the input"
                )
            # The ids of every tool, per size, against tiktoken's (or bytepair's when tiktoken did not finish).
            for n in (small, large):
                ours = replies.get(("bytepair", kind, n))
                others = {t: replies.get((t, kind, n)) for t in TOOLS if t != "bytepair"}
                inputs = {r.get("input") for r in [ours, *others.values()] if r and "input" in r}
                if len(inputs) > 1:
                    results.problems.append(
                        f"worst case {kind} {fmt_size(n)}: the tools got different inputs"
                    )
                if ours is None or "hash" not in ours:
                    continue
                if ours.get("roundtrip"):
                    compared["roundtrip"] += 1
                if ours.get("roundtrip") is False:
                    results.problems.append(
                        f"worst case {SHORT[encoding]} {kind} {fmt_size(n)}: bytepair's decode_bytes(ids) is not the input"
                    )
                tk = others.get("tiktoken")
                for tool, r in others.items():
                    if r and "hash" in r:
                        compared["same" if r["hash"] == ours["hash"] else "differ"] += 1
                    if r and "hash" in r and r["hash"] != ours["hash"]:
                        r["differ"] = True
                        if tool == "tiktoken" or not (tk and "hash" in tk):
                            results.problems.append(
                                f"ids DIFFER — worst case {SHORT[encoding]} {kind} {fmt_size(n)}: bytepair "
                                f"{ours['ntokens']} tokens vs {tool} {r['ntokens']}"
                            )
            for tool in TOOLS:
                if optional_import(MODULES[tool]) is None:
                    if encoding == ENCODINGS[0] and kind == next(iter(KINDS)):
                        peer_notes.append(f"{tool} not installed")
                    continue
                r_small, r_large = (
                    replies.get((tool, kind, small)),
                    replies.get((tool, kind, large)),
                )
                t_small, t_large = median_time(r_small), median_time(r_large)
                ratio = scaling(r_small, r_large)
                r_huge = replies.get((tool, kind, huge)) if tool == "bytepair" else None
                t_huge = median_time(r_huge)
                notes = []
                for label, r in (
                    (fmt_size(small), r_small),
                    (fmt_size(large), r_large),
                    (fmt_size(huge), r_huge),
                ):
                    if r is None:
                        continue
                    if describe(r):
                        notes.append(f"{label}: {describe(r)}")
                    elif r.get("differ"):
                        notes.append(f"{label}: **ids DIFFER** from bytepair's")
                    elif len(r.get("times", [])) < r.get("rounds_asked", 0):
                        notes.append(f"{label}: {len(r['times']) or 1} round(s) (slow)")
                where = f"{SHORT[encoding]} {kind}"
                if tool == "bytepair":
                    if ratio is not None:
                        ours_ratios.append((ratio, where))
                        ratio_rounds += [rounds_of(r_small), rounds_of(r_large)]
                    else:
                        missing.append(where)
                    if t_huge is not None:
                        ours_huge.append((t_huge, where))
                        huge_rounds.append(rounds_of(r_huge))
                    else:
                        missing_huge.append(where)
                if tool == "bytepair" and r_large and "ntokens" in r_large:
                    notes.insert(0, f"{r_large['ntokens']:,} tokens at {fmt_size(large)}")
                table.append(
                    [
                        KINDS[kind],
                        SHORT[encoding],
                        tool,
                        fmt_seconds(t_small),
                        fmt_seconds(t_large),
                        "—" if ratio is None else f"{ratio:.1f}",
                        fmt_seconds(t_huge) if tool == "bytepair" else "",
                        "; ".join(notes),
                    ]
                )
    body = md_table(
        [
            "input",
            "encoding",
            "tool",
            f"{fmt_size(small)} s",
            f"{fmt_size(large)} s",
            f"{fmt_size(large)} / {fmt_size(small)}",
            f"{fmt_size(huge)} s",
            "notes",
        ],
        table,
        right={3, 4, 5, 6},
    )
    body += (
        f"\n\nencode_ordinary (HF: encode) of one text of the size in the column header (UTF-8 bytes). "
        f"Each tool runs in its own worker process; a job gets {args.worst_budget:g} s for a peer and "
        f"{args.worst_budget_ours:g} s for bytepair (first call, which is the check, then up to "
        f"{args.rounds} timed rounds while they fit; median), after which the worker is killed and "
        "the row says so; a tool that fails at the smaller size is not run at the larger. "
        f'"{fmt_size(large)} / {fmt_size(small)}" is taken round by round: each timed round '
        f"at {fmt_size(large)} first encodes the {fmt_size(small)} input again, and the column "
        "is the median of those rounds' ratios (the machine drifts by tens of percent over "
        "seconds; the two medians beside it come from different moments). The ids "
        "of every tool are compared (as hashes) with bytepair's at both sizes; at "
        f"{fmt_size(huge)} (bytepair only, ≤ 3 rounds) the check is that decode_bytes gives the input back."
    )
    if peer_notes:
        body += " " + "; ".join(peer_notes) + "."
    results.sections.append(Section("Worst case", body))
    results.checks.append(
        f"worst case: bytepair's ids equal tiktoken's / HF's in {compared['same']} of "
        f"{compared['same'] + compared['differ']} comparisons where the peer finished; "
        f"decode_bytes(ids) gave the input back in {compared['roundtrip']} bytepair runs"
    )
    worst_ratio = max(ours_ratios) if ours_ratios else None
    over = [f"{w} {r:.1f}" for r, w in ours_ratios if r > 12]
    results.targets.append(
        Target(
            f"worst case: time({fmt_size(large)}) / time({fmt_size(small)}) ≤ 12 for bytepair",
            None if not ours_ratios else (not over and not missing),
            "not measured"
            if worst_ratio is None
            else f"highest {worst_ratio[0]:.1f} ({worst_ratio[1]}) over {len(ours_ratios)} inputs"
            + (f"; above 12: {', '.join(over)}" if over else "")
            + (f"; not measured: {', '.join(missing)}" if missing else "")
            + rounds_caveat(ratio_rounds),
        )
    )
    slow = [f"{w} {t:.2f} s" for t, w in ours_huge if t >= 2.0]
    worst_huge = max(ours_huge) if ours_huge else None
    results.targets.append(
        Target(
            f"worst case: no {fmt_size(huge)} input takes 2 s or more (bytepair)",
            None if not ours_huge else not slow and not missing_huge,
            "not measured"
            if worst_huge is None
            else f"slowest {worst_huge[0]:.2f} s ({worst_huge[1]}) over {len(ours_huge)} inputs"
            + (f"; ≥ 2 s: {', '.join(slow)}" if slow else "")
            + (
                f"; not measured (failed or over the limit): {', '.join(missing_huge)}"
                if missing_huge
                else ""
            )
            + rounds_caveat(huge_rounds, " (at most 3 rounds at this size)"),
        )
    )
