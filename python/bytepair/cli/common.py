"""What several commands share: the program name and exit statuses,
CommandError, stdin and stdout as exact UTF-8, loading a tokenizer, reading a
corpus, checking and making output paths, and the --ray option."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Callable, Optional, Union

from ..encodings import load_any
from ..errors import NotUtf8Error, decode_utf8
from ..tokenizer import Tokenizer

PROG = "bytepair"
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what `cat` reports when `head` stops reading


class CommandError(Exception):
    """A user error found by the command line itself; the message is shown as is."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, after the command has said how to go on (so nothing more is said)."""


# ---- Input and output ----


def _argument_text(text: str, what: str) -> str:
    """A text given as a command-line argument. Python hands bytes of it that
    are not UTF-8 over as lone surrogates (surrogateescape): name the byte."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:  # a surrogate typed as such: the encoder names it
        return text
    try:
        return decode_utf8(raw)
    except NotUtf8Error as e:
        raise CommandError(f"{what} is {e}") from None


def _read_stdin_text(what: str) -> str:
    """All of stdin as UTF-8 text, exactly (no newline stripped, no BOM dropped)."""
    stream = sys.stdin
    if stream is None:
        raise CommandError(f"no {what} given, and there is no stdin to read it from")
    if stream.isatty():
        print(f"{PROG}: reading {what} from stdin (end it with Ctrl-D)", file=sys.stderr)
    binary = getattr(stream, "buffer", None)
    if binary is None:  # a replaced text stream (tests, embedding)
        return stream.read()
    try:
        return decode_utf8(binary.read())
    except NotUtf8Error as e:
        raise CommandError(f"stdin is {e}") from None


def _write_text(text: str) -> None:
    """``text`` on stdout as UTF-8, whatever encoding the stream was set up with
    (PYTHONIOENCODING, the locale); a text-only stdout gets it as text."""
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a replaced text stream (tests, embedding)
        sys.stdout.write(text)
        return
    sys.stdout.flush()  # whatever text went before must come out first
    binary.write(text.encode("utf-8"))
    binary.flush()


def _write_bytes(data: bytes) -> None:
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:
        raise CommandError("--bytes needs a binary stdout; this one only takes text")
    sys.stdout.flush()  # whatever text went before must come out first
    binary.write(data)
    binary.flush()


def _load(spec: str) -> Tokenizer:
    """The tokenizer ``spec`` names: a path, else one of OpenAI's encodings."""
    return load_any(spec)  # FileNotFoundError / FormatError name what is wrong


def _corpus(sources: Sequence[str]) -> list[Union[str, Path]]:
    """Corpus items: each file as a Path (the trainer reads it), stdin ("-") as its text."""
    if sources.count("-") > 1:
        raise CommandError("'-' (stdin) is given more than once")
    corpus: list[Union[str, Path]] = []
    for source in sources:
        if source == "-":
            corpus.append(_read_stdin_text("the corpus"))
            continue
        path = Path(source)
        if not path.exists():
            raise CommandError(f"{source}: no such file")
        if path.is_dir():
            raise CommandError(f"{source}: is a directory; give the text files in it")
        corpus.append(path)
    return corpus


# ---- Output paths ----


def _train_targets(output: str, output_format: str) -> tuple[Path, list[Path]]:
    """Where ``save`` will write: (the path to pass it, the files it creates)."""
    path = Path(output)
    if output_format == "gpt2":
        if path.exists() and not path.is_dir():
            raise CommandError(
                f"{output} is a file, but --format gpt2 writes a directory "
                "(vocab.json + merges.txt)"
            )
        return path, [path / "vocab.json", path / "merges.txt"]
    if path.is_dir() or output.endswith(("/", os.sep)):
        path = path / "tokenizer.json"
    # `load` reads these names as other formats, whatever they hold.
    other = {".tiktoken": "a tiktoken rank file", ".model": "a SentencePiece model"}
    if path.suffix in other:
        raise CommandError(
            f"{output}: this writes a HuggingFace tokenizer.json, but bytepair reads a file "
            f"named {path.suffix} as {other[path.suffix]}; give a name such as "
            f"{path.with_suffix('.json')}"
            + (
                " (or convert to tiktoken with `convert --to tiktoken`)"
                if path.suffix == ".tiktoken"
                else ""
            )
        )
    return path, [path]


def _check_writable(target: Path, option: str) -> None:
    """Fail before the work, not after it, when ``target`` cannot be a file: a
    directory is in its place, or a file where a directory of its path should be
    (the missing directories are made when writing)."""
    if target.is_dir():
        raise CommandError(f"{option} {target} is a directory; give the file to write")
    parent = next(p for p in target.absolute().parents if p.exists())
    if not parent.is_dir():
        raise CommandError(f"{option} {target}: {parent} is a file, not a directory")


@contextlib.contextmanager
def _made_directory(directory: Path) -> Iterator[None]:
    """Makes ``directory`` (and missing parents) for the writing in the block;
    when the block fails, removes again those it made that stayed empty."""
    made = [d for d in [directory, *directory.parents] if not d.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        for d in made:  # deepest first; rmdir only removes what stayed empty
            with contextlib.suppress(OSError):
                d.rmdir()
        raise


# ---- --ray (count, encode-dataset) ----


def _ray_function(name: str) -> Callable:
    """``bytepair.on_ray.<name>``, or a CommandError when Ray is not installed."""
    from .. import on_ray

    try:
        on_ray.import_ray()
    except ImportError as e:
        raise CommandError(str(e)) from None
    return getattr(on_ray, name)


def _ray_address(value: str) -> Optional[str]:
    """The ray.init address of ``--ray [ADDRESS]`` (None: local); since the
    value is optional, an input path after a bare --ray would be taken for
    one, so anything not shaped like an address is refused."""
    if value == "":
        return None
    if value in ("auto", "local") or value.startswith("ray://"):
        return value
    host, _, port = value.rpartition(":")
    if host and "/" not in host and port.isdigit():
        return value
    raise CommandError(
        f"--ray {value!r}: not a Ray address (auto, local, HOST:PORT or ray://HOST:PORT); "
        "write --ray after the inputs, or --ray=ADDRESS"
    )
