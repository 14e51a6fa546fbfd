"""What several commands share: the program name and exit statuses,
CommandError, reading sizes, stdin and stdout as exact UTF-8, loading a
tokenizer, reading a corpus, checking and making output paths, and the --ray
option."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Callable, Optional, Union

from ..api import AnyTokenizer, load_any
from ..errors import NotUtf8Error, decode_utf8

PROG = "bytepair"
EXIT_ERROR = 1
EXIT_USAGE = 2  # a malformed command line (argparse's status)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what `cat` reports when `head` stops reading


class CommandError(Exception):
    """A user error found by the command line itself; the message is shown as is."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, after the command has said how to go on (so nothing more is said)."""


# ---- Sizes ----

# Every whole number on the command line (a vocabulary size, a memory bound, a
# count) is read by parse_size: plain digits, or a number with a unit, decimal
# (k, M, G, T: powers of 1000) or binary (Ki, Mi, Gi, Ti: powers of 1024).
SIZE_UNITS = {
    "": 1,
    "k": 10**3,
    "m": 10**6,
    "g": 10**9,
    "t": 10**12,
    "ki": 1 << 10,
    "mi": 1 << 20,
    "gi": 1 << 30,
    "ti": 1 << 40,
}
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kmgt]i?)?", re.IGNORECASE)
SIZE_HINT = "write a whole number such as 32768, 8k (8000), 1M (1000000) or 64Ki (65536)"


def parse_size(text: str) -> int:
    """``text`` as a whole number: ``32768``, ``8k`` = 8000, ``1.5M`` =
    1500000, ``64Ki`` = 65536 (units in any case). A ValueError says how to
    write one."""
    match = _SIZE.fullmatch(text.strip())
    if match is not None:
        number, unit = match.groups()
        value = Fraction(number) * SIZE_UNITS[(unit or "").lower()]
        if value.denominator == 1:
            return int(value)
    raise ValueError(f"{text!r} is not a size: {SIZE_HINT}")


# ---- Input and output ----


def argument_text(text: str, what: str) -> str:
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


def read_stdin_text(what: str) -> str:
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


def write_text(text: str) -> None:
    """``text`` on stdout as UTF-8, whatever encoding the stream was set up with
    (PYTHONIOENCODING, the locale); a text-only stdout gets it as text."""
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a replaced text stream (tests, embedding)
        sys.stdout.write(text)
        return
    sys.stdout.flush()  # whatever text went before must come out first
    binary.write(text.encode("utf-8"))
    binary.flush()


def write_bytes(data: bytes) -> None:
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:
        raise CommandError("--bytes needs a binary stdout; this one only takes text")
    sys.stdout.flush()  # whatever text went before must come out first
    binary.write(data)
    binary.flush()


def load_tokenizer(spec: str) -> AnyTokenizer:
    """The tokenizer ``spec`` names: a path, else one of OpenAI's encodings."""
    return load_any(spec)  # FileNotFoundError / FormatError name what is wrong


def corpus_items(sources: Sequence[str]) -> list[Union[str, Path]]:
    """Corpus items: each file as a Path (the trainer reads it), stdin ("-") as its text."""
    if sources.count("-") > 1:
        raise CommandError("'-' (stdin) is given more than once")
    corpus: list[Union[str, Path]] = []
    for source in sources:
        if source == "-":
            corpus.append(read_stdin_text("the corpus"))
            continue
        path = Path(source)
        if not path.exists():
            raise CommandError(f"{source}: no such file")
        if path.is_dir():
            raise CommandError(f"{source}: is a directory; give the text files in it")
        corpus.append(path)
    return corpus


# ---- Output paths ----
#
# A command writes only where the user pointed it: the directory a file goes
# into must exist already (a typo in it is an error that names it, not a new
# tree of directories), and the one directory made is a directory the user
# named as the output directory (``count -o DIR``, ``--format gpt2 -o DIR``,
# ``-o DIR/``), inside a directory that exists.


def _check_parent(path: Path, named: str) -> None:
    """The directory ``path`` goes into exists and is a directory."""
    if path.absolute().parent.is_dir():
        return
    # The deepest part of the path that exists: a file in the way, or the
    # directory the missing ones would go into.
    found = next(p for p in path.parents if p.exists())
    if not found.is_dir():
        raise CommandError(f"{named}: {found} is a file, not a directory")
    raise CommandError(
        f"{named}: the directory {path.parent} does not exist; "
        "create it first, or give a path in an existing directory"
    )


def check_output_file(target: Path, option: str = "") -> None:
    """Fail before the work, not after it, when the file ``target`` cannot be
    written: a directory is in its place, or its directory is missing or a
    file. ``option`` (``-o``) names it in the message; "" for an argument."""
    named = f"{option} {target}" if option else str(target)
    if target.is_dir():
        raise CommandError(f"{named} is a directory; give the file to write")
    _check_parent(target, named)


def check_output_directory(directory: Path, option: str = "") -> None:
    """As :func:`check_output_file` for an output directory: it is a directory
    or can be made as one (its parent exists and is a directory)."""
    named = f"{option} {directory}" if option else str(directory)
    if directory.exists():
        if not directory.is_dir():
            raise CommandError(f"{named} is a file; give a directory")
        return
    _check_parent(directory, named)


def _names_directory(output: str, output_format: str) -> bool:
    """Whether ``output`` names a directory to write in (the one directory a
    command may make): gpt2's, an existing one, or one written with a final /."""
    return output_format == "gpt2" or Path(output).is_dir() or output.endswith(("/", os.sep))


def train_targets(output: str, output_format: str) -> tuple[Path, list[Path]]:
    """Where ``save`` will write: (the path to pass it, the files it creates).
    :func:`check_targets` checks they can be written."""
    path = Path(output)
    if output_format == "gpt2":
        if path.exists() and not path.is_dir():
            raise CommandError(
                f"{output} is a file, but --format gpt2 writes a directory "
                "(vocab.json + merges.txt)"
            )
        return path, [path / "vocab.json", path / "merges.txt"]
    if _names_directory(output, output_format):
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


def check_targets(output: str, output_format: str, targets: list[Path], option: str = "-o") -> None:
    """Before the work: the ``targets`` of :func:`train_targets` (or of a
    conversion) can be written. Their directory exists, or is the directory
    ``output`` names, which may be made (inside an existing one)."""
    named = _names_directory(output, output_format)
    if named:
        check_output_directory(Path(output), option)
    for target in targets:
        if not named or target.parent.is_dir():
            check_output_file(target, option)


@contextlib.contextmanager
def made_directory(directory: Path) -> Iterator[None]:
    """Makes the output directory ``directory`` (its parent exists: checked
    before the work) for the writing in the block; when the block fails,
    removes it again if it was made here and stayed empty."""
    made = not directory.exists()
    directory.mkdir(exist_ok=True)
    try:
        yield
    except BaseException:
        if made:
            with contextlib.suppress(OSError):  # rmdir only removes an empty directory
                directory.rmdir()
        raise


# ---- --ray (count, encode-dataset) ----


def ray_function(name: str) -> Callable:
    """``bytepair.corpus.on_ray.<name>``, or a CommandError when Ray is not installed."""
    from ..corpus import on_ray

    try:
        on_ray.import_ray()
    except ImportError as e:
        raise CommandError(str(e)) from None
    return getattr(on_ray, name)


def ray_address(value: str) -> Optional[str]:
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
