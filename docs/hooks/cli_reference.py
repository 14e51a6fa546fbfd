"""mkdocs hook: the command-line reference, generated from the argument parser.

The page ``reference/cli.md`` holds the marker ``<!-- cli-reference -->``; at
build time it is replaced by the help of ``bytepair`` and of every command
(and sub-command), exactly as ``--help`` prints it, so the page cannot drift
from the code.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

MARKER = "<!-- cli-reference -->"
PAGE = "reference/cli.md"
WIDTH = "88"  # the width argparse wraps help at (it reads $COLUMNS)


def build_parser() -> argparse.ArgumentParser:
    from bytepair.cli.parser import build_parser as build

    return build()


def commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (sub)command under ``parser``, depth first, in the parser's order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen = set()
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias of a command already listed
                    continue
                seen.add(id(sub))
                yield (*prefix, name), sub
                yield from commands(sub, (*prefix, name))


def fenced(text: str) -> str:
    return "```text\n" + text.rstrip() + "\n```"


def render(parser: argparse.ArgumentParser) -> str:
    """The markdown of the whole reference: ``bytepair --help``, then each command."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        out = ["## bytepair", "", fenced(parser.format_help()), ""]
        for path, sub in commands(parser):
            out += [f"{'#' * min(2 + len(path) - 1, 4)} bytepair {' '.join(path)}", ""]
            out += [fenced(sub.format_help()), ""]
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lacks the marker {MARKER}")
    return markdown.replace(MARKER, render(build_parser()))
