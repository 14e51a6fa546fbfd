"""The interactive page: one self-contained HTML file (no network, vanilla
JS) that steps through BPE training — next / previous / play / a slider over
the merges, the pair-count table with the winner and the ties marked, the
corpus after each merge, and a box that tokenizes typed text with the merges
learned so far (token boundaries, ids on hover). The steps come from
:func:`bytepair.trace`; the page holds the top pairs and the most frequent
words of each step, so corpora of a few MB give pages of a few hundred KB.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Union

from ...training.corpus import CorpusItem
from ..display import readable
from ..trace import trace

# The pre-tokenizers the page can run in the browser (JavaScript regexes with
# the same cuts as the Python ones on the text people type). JavaScript's \s
# is not the core's (it has U+FEFF and lacks U+0085); White_Space is.
_S, _NOT_S = r"\p{White_Space}", r"\P{White_Space}"
JS_PATTERNS = {
    "gpt2": (
        rf"'s|'t|'re|'ve|'m|'ll|'d| ?\p{{L}}+| ?\p{{N}}+| ?[^{_S}\p{{L}}\p{{N}}]+"
        rf"|{_S}+(?!{_NOT_S})|{_S}+"
    ),
    "whitespace": rf"{_S}*{_NOT_S}+|{_S}+",
    "none": None,
}
TEMPLATE = Path(__file__).with_name("page.html")
# The text in the page's box when it opens.
SAMPLE = "the lowest newer tokens"


def page_data(
    corpus: Union[CorpusItem, Iterable[CorpusItem]],
    merges: int = 100,
    *,
    pretokenizer: str = "gpt2",
    top: int = 12,
    show: int = 12,
) -> dict:
    """What the page shows, as plain data (JSON-ready)."""
    if pretokenizer not in JS_PATTERNS:
        raise ValueError(
            f"the page cuts typed text in the browser; it knows the pre-tokenizers "
            f"{', '.join(JS_PATTERNS)}, not {pretokenizer!r}"
        )
    steps = []
    for step in trace(corpus, merges=merges, pretokenizer=pretokenizer, top=top, show=show):
        left, right = step.pair
        steps.append(
            {
                "left": list(left),
                "right": list(right),
                "id": step.token_id,
                "count": step.count,
                "shown": [readable(left), readable(right), readable(step.token)],
                "why": step.why,
                "top": [
                    [
                        readable(a),
                        readable(b),
                        count,
                        "winner" if (a, b) == step.pair else "tie" if (a, b) in step.tied else "",
                    ]
                    for (a, b), count in step.top_pairs
                ],
                "corpus": [
                    [[[readable(s), s == step.token] for s in symbols], count]
                    for symbols, count in step.corpus
                ],
            }
        )
    return {
        "pattern": JS_PATTERNS[pretokenizer],
        "steps": steps,
        "about": f"{len(steps)} merges, pre-tokenizer {pretokenizer}; ties go to the smallest "
        "(left, right) bytes",
    }


def write_page(
    corpus: Union[CorpusItem, Iterable[CorpusItem]],
    path: Union[str, os.PathLike],
    merges: int = 100,
    *,
    pretokenizer: str = "gpt2",
    top: int = 12,
    show: int = 12,
    sample: str = SAMPLE,
    overwrite: bool = False,
) -> Path:
    """Write the page to ``path`` (never over an existing file unless ``overwrite``)."""
    path = Path(path)
    # What would fail only when writing, checked before the trace.
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory; give the .html file to write")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} already exists; pass overwrite=True to replace it")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path}: the directory {path.parent} does not exist")
    data = page_data(corpus, merges, pretokenizer=pretokenizer, top=top, show=show)
    write_page_data(data, path, sample)
    return path


def write_page_data(data: dict, path: Path, sample: str) -> None:
    """Write the page of :func:`page_data`'s ``data`` to ``path``."""
    fill = {"__SAMPLE__": sample_html(sample), "__DATA__": embedded_json(data)}
    # One pass: a sample that reads "__DATA__" stays the sample.
    html = re.sub("__SAMPLE__|__DATA__", lambda m: fill[m[0]], TEMPLATE.read_text("utf-8"))
    path.write_text(html, encoding="utf-8")


def embedded_json(data: object) -> str:
    """``data`` as JSON with no markup for the HTML parser: inside <script>,
    "</script" ends the element and "<!--" then "<script" makes the parser
    skip the real end tag (the rest of the page becomes data). ``<``, ``>``
    and ``&`` occur in JSON only inside strings, where their \\u escapes are
    the same characters to JSON.parse."""
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def sample_html(sample: str) -> str:
    """``sample`` as the text of the page's <textarea>."""
    return sample.replace("&", "&amp;").replace("<", "&lt;")
