"""Every example in README.md and docs/ runs, as written.

Each page's fenced blocks run in the order of the page, in one temporary
working directory and one Python namespace per page:

- ``python`` blocks: a block that starts with ``>>>`` is a doctest session
  (its printed results are checked); any other block is executed;
- ``sh`` blocks: run with ``bash -e -o pipefail`` (so every ``bytepair ...``
  line in them must succeed);
- ``console`` blocks: each ``$ command`` is run and its output must equal the
  lines that follow it (a line ``...`` stands for any number of lines).

A block preceded by ``<!-- not run: REASON -->`` (HTML comments between the
two are allowed) is skipped; a block of any other kind that holds a
``bytepair`` command must carry such a comment.

The working directory holds what the pages assume: ``corpus.txt`` (Botchan,
as shipped in the package), the shared SentencePiece and HuggingFace model
files under their own names, and ``$BYTEPAIR_TIKTOKEN_DIR`` pointing at the
shared OpenAI encodings.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# Pages whose examples take more than a few seconds: a local Ray cluster (and a lot
# of memory); unigram training and large model files loaded by several commands.
SLOW_PAGES = {"docs/guides/ray.md", "docs/guides/sentencepiece-and-hf.md"}
BOTCHAN = REPO / "python" / "bytepair" / "data" / "botchan.txt"
# Model files the pages load by their plain names (linked into the working directory).
MODEL_DIRS = ("models/sentencepiece", "models/hf")
RUN_KINDS = {"python", "sh", "console"}
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(\S.*?)\s*-->")
COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
SHELL_TIMEOUT = 300


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    kind: str
    code: str
    not_run: str | None  # the reason, when marked

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, kind = m.group(1), m.group(2)
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1  # the closing fence
        reason = None
        j = start - 1
        while j >= 0 and (not lines[j].strip() or COMMENT.match(lines[j])):
            found = NOT_RUN.search(lines[j])
            if found:
                reason = found.group(1)
                break
            j -= 1
        out.append(Block(page, start + 1, kind, "\n".join(body) + "\n", reason))
    return out


def has_bytepair_command(code: str) -> bool:
    return any(re.match(r"^\s*(\$\s+)?(\S+=\S+\s+)*bytepair\s", line) for line in code.splitlines())


def page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


@pytest.fixture
def workdir(tmp_path, shared_data, monkeypatch):
    shutil.copyfile(BOTCHAN, tmp_path / "corpus.txt")
    for sub in MODEL_DIRS:
        for f in sorted((shared_data / sub).iterdir()):
            if f.is_file():
                (tmp_path / f.name).symlink_to(f)
    monkeypatch.setenv("BYTEPAIR_TIKTOKEN_DIR", str(shared_data / "models" / "tiktoken"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def shell_env() -> dict[str, str]:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["COLUMNS"] = "100"
    return env


def run_python(block: Block, namespace: dict) -> None:
    if block.code.lstrip().startswith(">>>"):
        parser = doctest.DocTestParser()
        test = parser.get_doctest(block.code, namespace, block.where, str(block.page), block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        out: list[str] = []
        runner.run(test, out=out.append, clear_globs=False)
        if runner.failures:
            pytest.fail(f"{block.where}: doctest failed\n" + "".join(out), pytrace=False)
        return
    try:
        exec(compile(block.code, block.where, "exec"), namespace)
    except Exception:
        pytest.fail(f"{block.where}:\n{traceback.format_exc(limit=-3)}", pytrace=False)


def run_shell(block: Block, cwd: Path) -> None:
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.code],
        cwd=cwd,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{block.where}: exit {proc.returncode}\n{block.code}\nstdout:\n{proc.stdout[-2000:]}"
            f"\nstderr:\n{proc.stderr[-2000:]}",
            pytrace=False,
        )


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` equals ``actual`` line by line (trailing spaces aside), where an
    expected line ``...`` matches any run of lines (none included)."""
    expected = [e.rstrip() for e in expected]
    actual = [a.rstrip() for a in actual]

    def match(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(actual)
        if expected[i] == "...":
            return any(match(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and expected[i] == actual[j] and match(i + 1, j + 1)

    return match(0, 0)


def run_console(block: Block, cwd: Path) -> None:
    commands: list[tuple[str, list[str]]] = []
    for line in block.code.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
        else:
            pytest.fail(f"{block.where}: a console block starts with '$ command'", pytrace=False)
    for command, expected in commands:
        proc = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=cwd,
            env=shell_env(),
            capture_output=True,
            text=True,
            timeout=SHELL_TIMEOUT,
        )
        actual = proc.stdout.splitlines()
        if proc.returncode != 0 or not output_matches(expected, actual):
            pytest.fail(
                f"{block.where}: `{command}` (exit {proc.returncode}) printed\n{proc.stdout}"
                f"{proc.stderr}\nwhere the page shows\n" + "\n".join(expected),
                pytrace=False,
            )


@pytest.mark.parametrize(
    "page",
    [pytest.param(p, marks=pytest.mark.slow) if page_id(p) in SLOW_PAGES else p for p in PAGES],
    ids=page_id,
)
@pytest.mark.filterwarnings(
    "error::UserWarning"
)  # an example that warns shows the reader a warning
def test_examples_run(page: Path, workdir: Path) -> None:
    namespace: dict = {"__name__": "__docs_example__"}
    ran = 0
    for block in blocks_of(page):
        if block.not_run is not None or block.kind not in RUN_KINDS:
            continue
        if block.kind == "python":
            run_python(block, namespace)
        elif block.kind == "sh":
            run_shell(block, workdir)
        else:
            run_console(block, workdir)
        ran += 1
    if ran == 0 and not any(b.kind in RUN_KINDS for b in blocks_of(page)):
        pytest.skip(f"{page_id(page)} has no examples")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_command_runs_or_says_why_not(page: Path) -> None:
    for block in blocks_of(page):
        if block.not_run is not None:
            continue
        if block.kind not in RUN_KINDS and has_bytepair_command(block.code):
            pytest.fail(
                f"{block.where}: a ```{block.kind or '(no language)'} block holds a bytepair "
                "command: make it sh or console, or mark it <!-- not run: REASON -->",
                pytrace=False,
            )


def test_blocks_are_found() -> None:
    # The parser sees README's quick starts (a broken fence pattern would pass every page).
    readme = blocks_of(REPO / "README.md")
    kinds = [b.kind for b in readme if b.not_run is None]
    assert kinds.count("python") >= 4 and kinds.count("sh") >= 3
    setup = [b for b in readme if "pip install . && bytepair demo" in b.code]
    assert len(setup) == 1 and setup[0].not_run


def test_console_output_matching() -> None:
    assert output_matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert output_matches(["a", "...", "b"], ["a", "b"])
    assert not output_matches(["a", "b"], ["a", "c"])
    assert not output_matches(["a"], ["a", "b"])
