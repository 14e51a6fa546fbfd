"""The front door stays small and speaks to users.

README.md is at most 10 KB; its set-up block is the two commands CI runs; its
links lead to pages that exist; and no page, CLI help text or public
docstring speaks of issues, targets or specification paragraphs."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, REPO / "CHANGELOG.md", *sorted((REPO / "docs").rglob("*.md"))]
# What a user cannot look up: the tracker's issue numbers, the specification's
# paragraph numbers, the bench's old "targets" headings.
INTERNAL = re.compile(r"SPEC\s*(§|sections?\b)|\bissues?\s+#?\d|\bTargets \(", re.I)
SETUP = (
    "<!-- setup:start -->\n"
    "```sh\n"
    "pip install . && bytepair demo\n"
    "pip install '.[test]' && pytest\n"
    "```\n"
    "<!-- setup:end -->"
)


def test_readme_is_at_most_10_kb():
    size = len(README.read_bytes())
    assert size <= 10_000, f"README.md is {size} bytes; the front door holds at most 10 KB"


def test_the_setup_block_is_the_two_commands_ci_runs():
    assert README.read_text(encoding="utf-8").count(SETUP) == 1


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_page_speaks_of_issues_or_spec_paragraphs(page):
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        assert not INTERNAL.search(line), f"{page.relative_to(REPO)}:{n}: {line.strip()}"


def test_readme_links_lead_to_files():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"^[a-z]+://", t)]
    assert local, "the README links into the docs"
    missing = [t for t in local if not (REPO / t).exists()]
    assert not missing, missing


def load_hook():
    path = REPO / "docs" / "hooks" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("cli_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_every_commands_help():
    hook = load_hook()
    parser = hook.build_parser()
    page = hook.render(parser)
    names = [" ".join(path) for path, _ in hook.commands(parser)]
    for name in ("train", "encode", "decode", "encode-dataset", "count", "steps", "viz"):
        assert name in names
    for path, sub in hook.commands(parser):
        assert f"bytepair {' '.join(path)}\n" in page
        assert sub.format_help().splitlines()[0].split()[0] in page  # its usage line
    for n, line in enumerate(page.splitlines(), 1):
        assert not INTERNAL.search(line), f"CLI help line {n}: {line.strip()}"


def public_docstrings():
    import bytepair

    for name in bytepair.__all__:
        obj = getattr(bytepair, name)
        yield f"bytepair.{name}", inspect.getdoc(obj) or ""
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and callable(member) or isinstance(member, property):
                    yield f"bytepair.{name}.{attr}", inspect.getdoc(member) or ""


def test_no_public_docstring_speaks_of_issues_or_spec_paragraphs():
    # These texts are the API reference pages.
    bad = [
        f"{where}: {line.strip()}"
        for where, doc in public_docstrings()
        for line in doc.splitlines()
        if INTERNAL.search(line)
    ]
    assert not bad, "\n".join(bad)


def test_no_module_of_the_package_speaks_of_issues_or_spec_paragraphs():
    # Docstrings, messages and the page's text: what `help()`, errors and the
    # viz page show users. Name the documentation's pages instead
    # (docs/design/training.md: "the training rule").
    package = REPO / "python" / "bytepair"
    bad = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in sorted(package.rglob("*"))
        if path.suffix in (".py", ".pyi", ".html", ".js", ".css")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if INTERNAL.search(line)
    ]
    assert not bad, "\n".join(bad)
