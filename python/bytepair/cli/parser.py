"""The argparse parser: the commands, each with its one-line summary; each
command module adds its own arguments and ``run`` function (``add_parsers``),
with the types of :mod:`bytepair.cli.arguments`.

The conventions every command follows:

- ``-t/--tokenizer`` names the tokenizer to use (a file or an encoding name);
  ``--model`` is what ``train`` trains (``bpe`` or ``unigram``), as the
  Python ``train(model=...)``. The old ``-m/--model`` of the commands that
  use a tokenizer is refused with a message naming ``-t/--tokenizer``.
- Every whole number is read by :func:`~bytepair.cli.common.parse_size`:
  ``32768``, ``8k``, ``1M``, ``64Ki``.
- An argument error is one line and a hint to ``--help``, not the usage.
"""

from __future__ import annotations

import argparse

from .. import __version__
from . import convert, encode, inspect, train
from .arguments import Parser
from .common import PROG

# The commands in the order `bytepair --help` lists them, each with its line.
COMMANDS = {
    "train": "train a tokenizer on text files or stdin",
    "count": "count pre-tokens into shards, for train --from-counts",
    "encode": "text -> token ids",
    "decode": "token ids -> text",
    "encode-dataset": "encode a corpus into numpy token shards (resumable)",
    "inspect": "summarize a tokenizer",
    "convert": "write a tokenizer in another format",
    "analyze": "measure tokenizers on held-out text",
    "steps": "watch BPE training merge by merge",
    "viz": "write a page that steps through training",
    "demo": "train on a bundled novel and show what BPE does",
    "gage": "compress a file with Gage's 1994 byte pair encoding",
}


def command_list() -> str:
    """The commands, one line each, as `bytepair` and `bytepair --help` show them."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {summary}" for name, summary in COMMANDS.items()]
    return "commands:\n" + "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        usage=f"{PROG} COMMAND [ARGS]",
        description="Train and use exact subword tokenizers: byte-level BPE and the unigram "
        f"LM.\n\n{command_list()}",
        epilog=f"First time? Run `{PROG} demo`. A command's options: `{PROG} COMMAND --help`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS)

    # Made in the order of the list (the order of the reference pages too);
    # each module then gives its commands their description and arguments.
    made = {
        name: commands.add_parser(name, prog=f"{PROG} {name}", help=summary)
        for name, summary in COMMANDS.items()
    }

    def add_command(name: str, *, description: str) -> argparse.ArgumentParser:
        made[name].description = description
        return made[name]

    for module in (train, encode, inspect, convert):
        module.add_parsers(add_command)
    return parser
