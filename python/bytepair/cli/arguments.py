"""The argument types and pieces every command's arguments use: the parser
whose errors are one line, an option's old spelling as an error that gives
the new one, whole numbers and sizes (one reading for all: ``32768``, ``8k``,
``1M``, ``64Ki``), numbers in a range, seconds, ``--eot`` and
``-t/--tokenizer``. Each command module declares its own arguments with them
(``add_parsers``); :mod:`bytepair.cli.parser` puts the commands together."""

from __future__ import annotations

import argparse
from typing import Any, Callable, NoReturn, Optional, Union

from ..registry import list_encoding_names
from .common import SIZE_HINT, parse_size

# add_parsers(add_command): add_command(name, description=...) makes the
# parser of the command `name` (its one-line summary and prog set).
AddCommand = Callable[..., argparse.ArgumentParser]

# dataset.MAX_SHARD_TOKENS (offsets are int64), written out: importing the
# dataset module would load numpy for every command.
MAX_SHARD_TOKENS = (1 << 63) - 1


class Parser(argparse.ArgumentParser):
    """An argument error as one line and where to look, not the whole usage."""

    def error(self, message: str) -> NoReturn:
        # The program's own parser has commands, not options, to show.
        what = "the commands" if " " not in self.prog else "the options"
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} --help` shows {what})\n")


class Renamed(argparse.Action):
    """An option's old spelling: an error that gives the new one."""

    def __init__(self, option_strings: list[str], dest: str, *, hint: str, **kwargs: Any):
        kwargs.setdefault("help", argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)
        self.hint = hint

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: Optional[str] = None,
    ) -> NoReturn:
        parser.error(f"{option_string}: {self.hint}")


def at_least(minimum: int, maximum: Optional[int] = None) -> Callable[[str], int]:
    """A whole number in [minimum, maximum] (``8k`` and ``1M`` too: one rule
    for every number); argparse names the option in the error."""

    def parse(text: str) -> int:
        try:
            value = parse_size(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{value} is above the maximum {maximum}")
        return value

    return parse


def integer(text: str) -> int:
    """A whole number that may be negative (``--seed``), read as sizes are."""
    digits = text.strip()
    negative = digits.startswith("-")
    try:
        value = parse_size(digits[1:] if negative else digits)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number: {SIZE_HINT}") from None
    return -value if negative else value


def token_or_id(text: str) -> Union[int, str]:
    """--eot: an id in ASCII digits, else a special token's text. Other digits
    (Arabic-Indic, full-width, superscripts) are refused, not read as an id:
    int() would take some of them and str.isdigit() all of them."""
    if text.isascii() and text.isdigit():
        return int(text)
    if text.isdigit():
        raise argparse.ArgumentTypeError(
            f"{text!r}: write an id with the ASCII digits 0-9, or give a special token's text"
        )
    return text


def number_in(low: float, high: float, *, high_open: bool) -> Callable[[str], float]:
    """A number in (low, high] or (low, high)."""
    interval = f"({low}, {high}{')' if high_open else ']'}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        # Written so that NaN fails every bound.
        if not (value > low and (value < high if high_open else value <= high)):
            raise argparse.ArgumentTypeError(f"{text} is not in {interval}")
        return value

    return parse


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def tokenizer_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        metavar="TOKENIZER",
        help=f"an encoding name ({', '.join(list_encoding_names())}; the .tiktoken file is read from "
        "$BYTEPAIR_TIKTOKEN_DIR), or a path: a tokenizer.json, a GPT-2 directory "
        "(vocab.json + merges.txt), a .tiktoken file or a SentencePiece .model file",
    )
    command.add_argument(
        "-m",
        "--model",
        action=Renamed,
        hint="give the tokenizer with -t/--tokenizer (--model is what `train` trains: bpe or unigram)",
    )
