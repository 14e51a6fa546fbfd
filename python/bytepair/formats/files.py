"""The file helpers every format shares: every file is UTF-8, every write is
atomic (a temporary file renamed into place), every error is a
:class:`~bytepair.errors.FormatError` naming the file and the place in it;
and the names of the files the formats look for."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Optional, Union

from ..errors import FormatError, NotUtf8Error, decode_utf8, warn

PathLike = Union[str, "os.PathLike[str]"]

HF_FILE = "tokenizer.json"
GPT2_VOCAB_FILE = "vocab.json"
GPT2_MERGES_FILE = "merges.txt"
# The same two files under the names OpenAI published them with.
GPT2_ORIGINAL_VOCAB_FILE = "encoder.json"
GPT2_ORIGINAL_MERGES_FILE = "vocab.bpe"
GPT2_PAIRS = (
    (GPT2_VOCAB_FILE, GPT2_MERGES_FILE),
    (GPT2_ORIGINAL_VOCAB_FILE, GPT2_ORIGINAL_MERGES_FILE),
)
TIKTOKEN_SUFFIX = ".tiktoken"


def read_text(path: PathLike) -> str:
    """The UTF-8 text of ``path``; FormatError naming the first byte that is not UTF-8."""
    return decode_text(Path(path).read_bytes(), path)


def decode_text(data: bytes, path: PathLike) -> str:
    """``data``, read from ``path``, as UTF-8 text; FormatError as in :func:`read_text`."""
    try:
        return decode_utf8(data)
    except NotUtf8Error as exc:
        raise FormatError(path, str(exc), f"line {exc.line}") from None


def _reject_duplicate_keys(source: str):
    def build(pairs: list[tuple[str, object]]) -> dict[str, object]:
        obj: dict[str, object] = {}
        for key, value in pairs:
            if key in obj:
                # json would keep the last value silently; a repeated vocabulary key
                # would mean one token lost without a trace.
                raise FormatError(
                    source, "the key appears twice in one JSON object", f"key {key!r}"
                )
            obj[key] = value
        return obj

    return build


def parse_json(
    text: str, source: str, parse_float: Optional[Callable[[str], Any]] = None
) -> object:
    """Parse ``text``; FormatError with line and column on invalid JSON or a repeated key."""
    try:
        return json.loads(
            text, object_pairs_hook=_reject_duplicate_keys(source), parse_float=parse_float
        )
    except json.JSONDecodeError as exc:
        raise FormatError(
            source, f"invalid JSON: {exc.msg}", f"line {exc.lineno}, column {exc.colno}"
        ) from None
    except FormatError:  # a repeated key
        raise
    except ValueError as exc:  # an integer beyond Python's digit limit for int()
        raise FormatError(source, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise FormatError(
            source, "invalid JSON: arrays or objects nested too deeply to read"
        ) from None


def refuse_directory(path: Path) -> None:
    """IsADirectoryError for a directory given where a ``tokenizer.json`` is
    saved (checked before the overwrite rule, which could only say to pass
    ``overwrite=True`` and then fail)."""
    if path.is_dir():
        raise IsADirectoryError(
            f"{path} is a directory: a tokenizer.json is saved to a file path "
            f"(e.g. {path / 'tokenizer.json'})"
        )


def write_text_atomic(path: PathLike, text: str) -> None:
    """Write ``text`` as UTF-8 so that ``path`` is either untouched or complete.

    The text goes to a temporary file in the same directory (same file
    system), which then replaces ``path`` in one step.
    """
    write_texts_atomic({Path(path): text})


def write_texts_atomic(texts: dict[PathLike, str]) -> None:
    """Write each text of ``texts`` to its path (as :func:`write_text_atomic`),
    the files of one model together: every text is written and synced to a
    temporary file before any path is replaced, so a failed write (a full
    disk) leaves all of them as they were, never a new file beside an old one."""
    written: dict[Path, Path] = {}  # path -> its temporary file
    try:
        for given, text in texts.items():
            path = Path(given)
            temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
            try:
                # os.open with mode 0o666 lets the umask decide the permissions, as open() would.
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except OSError as exc:
                raise _naming(exc, temporary, path) from None
            written[path] = temporary
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
        for path, temporary in written.items():
            try:
                os.replace(temporary, path)
            except OSError as exc:
                raise _naming(exc, temporary, path) from None
    except BaseException:
        for temporary in written.values():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        raise


def _naming(exc: OSError, temporary: Path, path: Path) -> OSError:
    """``exc`` about the temporary file, said of ``path``: the name the caller gave."""
    if exc.filename != str(temporary):
        return exc
    if isinstance(exc, FileNotFoundError):
        problem = f"cannot write, the directory {str(path.parent)!r} does not exist"
    else:
        problem = f"cannot write: {exc.strerror}"
    return type(exc)(exc.errno, problem, str(path))


@contextlib.contextmanager
def replace_directory(path: PathLike, clear: Callable[[Path], None]) -> Iterator[Path]:
    """A new empty directory beside the directory ``path`` to build its
    replacement in; ``path`` stays as it is until the block has succeeded.

    The new directory has a hidden, unique name in the same parent (the same
    file system, so renames swap them; input listings skip hidden names).
    When the block succeeds, ``path`` is renamed aside, the new directory
    takes its name (neither exists only between these two renames; if the
    second fails, the old one is put back) and ``clear(old)`` deletes the old
    one's files, then its directory: a ``clear`` that refuses (a file it does
    not own appeared meanwhile) leaves it, with a warning. When the block
    fails (Ctrl-C too), the new directory is deleted and ``path`` is untouched.
    A link to a directory keeps pointing to the replacement.
    """
    path = Path(os.path.realpath(path))
    if os.path.ismount(path):  # checked before the work: a mount point cannot be renamed
        raise OSError(
            f"{path} is a mount point: it cannot be replaced by a new directory; "
            "write to a directory inside it"
        )
    stem = f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}"
    new, old = path.with_name(stem + ".tmp"), path.with_name(stem + ".old")
    new.mkdir()
    try:
        yield new
        shutil.copymode(path, new)  # the replacement keeps the directory's permissions
        os.rename(path, old)
        try:
            os.rename(new, path)
        except BaseException:
            os.rename(old, path)
            raise
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    try:
        clear(old)
        old.rmdir()
    except (OSError, ValueError) as exc:  # the new output is in place: not a failure
        warn(f"{path} is replaced, but its old content, moved to {old}, was not deleted: {exc}")


__all__ = [
    "GPT2_MERGES_FILE",
    "GPT2_ORIGINAL_MERGES_FILE",
    "GPT2_ORIGINAL_VOCAB_FILE",
    "GPT2_PAIRS",
    "GPT2_VOCAB_FILE",
    "HF_FILE",
    "TIKTOKEN_SUFFIX",
    "PathLike",
    "decode_text",
    "parse_json",
    "read_text",
    "refuse_directory",
    "replace_directory",
    "write_text_atomic",
    "write_texts_atomic",
]
