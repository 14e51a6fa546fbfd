"""What the encode, batch and decode suites share: tiktoken's ids as the
oracle, the check of every tool's output against them before it is timed,
and the round-by-round ratios, the fastest peer and the verdicts drawn
from them."""

from __future__ import annotations

from typing import Optional

from bench_harness import (
    DIFFER,
    OK,
    Results,
    Row,
    paired_ratio,
    rounds_caveat,
)
from bench_peers import Encoder

SHORT = {"cl100k_base": "cl100k", "o200k_base": "o200k"}
NUMPY = " (numpy)"  # the suffix of the numpy-path rows ("bytepair (numpy)", "tokie (numpy)")


def first_difference(
    got: list[list[int]], want: list[list[int]], texts: Optional[list[str]] = None, decode=None
) -> str:
    """Where ``got`` first differs from tiktoken's ``want``, with the text there."""
    if len(got) != len(want):
        return f"{len(got)} results for {len(want)} texts"
    for d, (a, b) in enumerate(zip(got, want)):
        if a != b:
            pos = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            where = ""
            if texts is not None and decode is not None and d < len(texts):
                byte_pos = len(decode(b[:pos]))
                data = texts[d].encode("utf-8")
                context = data[max(0, byte_pos - 30) : byte_pos + 30].decode("utf-8", "replace")
                where = f", byte {byte_pos} of the text, near {context!r}"
            return (
                f"text {d}, token {pos}{where}: {list(a[pos : pos + 6])} vs tiktoken's "
                f"{b[pos : pos + 6]} ({len(a)} vs {len(b)} tokens)"
            )
    return "same"


def check(
    row: Row,
    got: list[list[int]],
    want: Optional[list[list[int]]],
    results: Results,
    what: str,
    texts: Optional[list[str]] = None,
    decode=None,
) -> None:
    """Compares ``got`` with tiktoken's ids: bytepair's difference is a problem
    (exit status 1); a peer's is reported and its row gets no ratio."""
    if want is None:
        row.add_note("ids not checked (no tiktoken ids: tiktoken not installed or failed)")
        return
    row.checked = True
    if got != want:
        row.status = DIFFER
        line = f"{row.tool}, {what}: {first_difference(got, want, texts, decode)}"
        if row.is_peer:
            results.peer_diffs.append(line)
        else:
            results.problems.append(f"ids DIFFER — {line}")


def try_call(row: Row):
    """The first call (warm-up and correctness check); None and an error status on failure.
    It runs after the row's ``before_round``, as the timed rounds do, so that the ids checked
    come from the same (cold-cache) path as the ones timed."""
    try:
        if row.before_round is not None:
            row.before_round()
        return row.fn()
    except Exception as e:
        row.status = f"error: {type(e).__name__}: {e}"[:200]
        row.fn = None
        return None


def ratio(numerator: Optional[Row], row: Row) -> Optional[float]:
    """How many times faster ``row`` is than ``numerator``: the median over the rounds of
    their race of ``numerator``'s time / ``row``'s in that round (see ``paired_ratio``)."""
    if numerator is None or not numerator.timed_ok or not row.timed_ok:
        return None
    return paired_ratio(numerator.times, row.times)


def is_numpy(row: Row) -> bool:
    return row.tool.endswith(NUMPY)


def fastest_peer(group: list[Row], row: Optional[Row] = None) -> Optional[Row]:
    """The fastest peer whose ids were checked and found identical, like for like with
    ``row``: a list path against the peers' list calls, a numpy path against their numpy
    calls where one was timed (else against every peer). Fastest for a timed ``row``: the
    peer it is the fewest times faster than, by the same round-by-round ratio that is
    reported; else the lowest median time."""
    peers = [r for r in group if r.is_peer and r.timed_ok and r.checked]
    if row is not None:
        same_kind = [r for r in peers if is_numpy(r) == is_numpy(row)]
        if same_kind or not is_numpy(row):
            peers = same_kind
    if not peers:
        return None
    if row is not None and row.timed_ok:
        return min(peers, key=lambda r: ratio(r, row))
    return min(peers, key=lambda r: r.median)


def judge(values: list[tuple], failed: list[str], unmeasured: list[str], threshold: float):
    """The verdict of a target over groups: NOT met when a measured group falls short or
    bytepair failed in one (no missing figure can change that); else not measured while a
    group lacks its comparison; else met. ``values`` are (ratio, ...) tuples."""
    if failed or any(v[0] < threshold for v in values):
        return False
    if unmeasured or not values:
        return None
    return True


def listed(items: list[str], limit: int = 6) -> str:
    return ", ".join(items[:limit]) + (
        f" and {len(items) - limit} more" if len(items) > limit else ""
    )


class Truth:
    """tiktoken's ids (the oracle), computed once per encoding and text set."""

    def __init__(self, tiktoken: Encoder) -> None:
        self.tk = tiktoken if tiktoken.status == OK else None
        self.cache: dict[str, list[list[int]]] = {}

    def get(self, key: str, texts: list[str]) -> Optional[list[list[int]]]:
        if self.tk is None:
            return None
        if key not in self.cache:
            self.cache[key] = [self.tk.encode(t) for t in texts]
        return self.cache[key]


def missing_and_rounds(failed: list[str], unmeasured: list[str], rounds: list[int]) -> str:
    """The end of a target's detail: groups bytepair did not time, groups
    without their comparison, and the rounds caveat."""
    detail = ""
    if failed:
        detail += "; bytepair not timed: " + listed(failed)
    if unmeasured:
        detail += "; not measured: " + listed(unmeasured)
    return detail + rounds_caveat(rounds)


def ids_line(suite: str, groups: list[list[Row]]) -> str:
    """The correctness line of a suite: how many rows were checked, whose differ, and
    which ran without a check (no tiktoken ids to compare with)."""
    rows = [r for g in groups for r in g if r.fn is not None or r.status == DIFFER]
    ours = [r for r in rows if not r.is_peer]
    bad_ours = sorted({r.tool for r in ours if r.status == DIFFER})
    bad_peers = sorted({r.tool for r in rows if r.is_peer and r.status == DIFFER})
    unchecked_ours = [r for r in ours if not r.checked]
    unchecked_peers = sorted({r.tool for r in rows if r.is_peer and not r.checked})
    what = (
        "output compared with the input text"
        if suite == "decode"
        else "ids compared with tiktoken's"
    )
    line = (
        f"{suite}: {what} before timing, {len(rows)} rows in {len(groups)} groups; bytepair: "
        + (
            "**DIFFERENT** (" + ", ".join(bad_ours) + ")"
            if bad_ours
            else f"identical in {len(ours) - len(unchecked_ours)} of {len(ours)} rows, "
            f"**{len(unchecked_ours)} not checked** (no tiktoken ids to compare with)"
            if unchecked_ours
            else f"identical in all {len(ours)} rows"
        )
    )
    if bad_peers:
        line += f"; peers that differ somewhere (no ratio there): {', '.join(bad_peers)}"
    if unchecked_peers:
        line += (
            f"; peers not checked somewhere (never the fastest peer there): "
            f"{', '.join(unchecked_peers)}"
        )
    return line
