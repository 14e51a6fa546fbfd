"""The ``bytepair`` command line: train, count, encode-dataset, encode, decode,
inspect, steps, viz, analyze, convert, gage, demo. ``bytepair`` alone and
``bytepair --help`` list them, one line each.

A tokenizer is named by ``-t/--tokenizer``: one of OpenAI's encodings
(``cl100k_base``, read from ``$BYTEPAIR_TIKTOKEN_DIR``) or a path to a
``tokenizer.json``, a GPT-2 directory (``vocab.json`` + ``merges.txt``), a
``.tiktoken`` file or a SentencePiece ``.model`` file. ``train --model`` is
what is trained (``bpe`` or ``unigram``). Every whole number may be written
with a unit: ``8k`` = 8000, ``1M`` = 1000000, ``64Ki`` = 65536.

Output goes only where the user points: a file's directory must exist (a
missing one is an error that names it), and the only directory ever made is
one the user named as the output directory, inside an existing one.

Every user error (a missing file, a corrupt tokenizer, a disallowed special
token, an id outside the vocabulary, an output that already exists) ends as
one line ``bytepair: error: <message>`` on stderr and exit status 1; argparse
reports a malformed command line the same way with status 2 (one line, and
where to find the options). Ctrl-C exits with
130 and no traceback; a reader that closes the pipe early (``| head``) ends the
command quietly.

Text crosses stdin and stdout as UTF-8, byte for byte: nothing is added or
stripped, so ``encode`` then ``decode`` gives back exactly the input.

The package: one module per group of commands, each with the commands'
arguments (``add_parsers``) and their ``cmd_*`` functions: ``train`` (train,
count), ``encode`` (encode-dataset, encode, decode), ``inspect`` (inspect,
steps, viz, analyze) and ``convert`` (convert, gage, demo). ``parser`` puts
them together with the command list; ``arguments`` has the argument types;
``common`` what several commands share (public names, for this package
only); ``main`` (here) runs a command.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Optional

from .common import (
    EXIT_BROKEN_PIPE,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    PROG,
    CommandError,
    Interrupted,
)
from .parser import build_parser

# ---- Running ----


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error) or type(error).__name__


def _silence_stdout() -> None:
    # The reader is gone; point stdout at devnull so the interpreter's final
    # flush does not raise a second BrokenPipeError at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one ``bytepair: warning: ...`` line on stderr (no source line)."""
    print(f"{PROG}: warning: {message}", file=sys.stderr if file is None else file)


@contextlib.contextmanager
def _messages_never_fail() -> Iterator[None]:
    """Messages (``wrote <path>``, summaries, errors) escape what the stream's
    encoding cannot show, rather than failing a command whose work is done;
    the caller's error handlers come back after. (Text output is written as
    UTF-8 bytes anyway: ``common.write_text``.)"""
    restore = []
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a TextIOWrapper's
        if reconfigure is None:
            continue
        try:
            errors = stream.errors
            reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            continue
        restore.append((reconfigure, errors))
    try:
        yield
    finally:
        for reconfigure, errors in restore:
            try:
                reconfigure(errors=errors)
            except (ValueError, OSError):
                pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line; returns the exit status."""
    with _messages_never_fail():
        return _main(argv)


def _main(argv: Optional[Sequence[str]]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `bytepair`: what there is to run
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with warnings.catch_warnings():  # restores showwarning for an embedding caller
            warnings.showwarning = _show_warning
            status = args.run(args)
        sys.stdout.flush()
        return status
    except KeyboardInterrupt as e:
        if not isinstance(e, Interrupted):
            print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # before OSError: it is one
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (CommandError, ValueError, OSError) as e:
        # ValueError: the library's errors about its input (FormatError,
        # DisallowedSpecialError, bad ids, bad training arguments);
        # OSError: files that cannot be read or written.
        print(f"{PROG}: error: {_describe(e)}", file=sys.stderr)
        return EXIT_ERROR
