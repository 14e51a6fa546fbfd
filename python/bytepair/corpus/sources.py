"""Reading corpora as a stream of documents, never a whole file at once.

Every reader of input files (``bytepair train``, ``count``,
``encode-dataset``, :func:`bytepair.train` given paths) reads them with
:func:`read_documents`, whose docstring is the one statement of the rule:
which files an input names, how each format is read, and what ends a
document.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import gzip
import io
import json
import os
import re
import shutil
import stat
import tempfile
import zlib
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import IO, Callable, Optional, Union, cast

from ..errors import FormatError, NotUtf8Error

PathInput = Union[str, "os.PathLike[str]"]
OnRead = Optional[Callable[[int], None]]
# A binary file as read: a file, or a (de)compressing or counting stream over it.
Binary = Union[io.RawIOBase, io.BufferedIOBase]
COMPRESSED = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}
_SURROGATE = re.compile("[\ud800-\udfff]")


# Names a directory walk or a glob's wildcard skips, as Hadoop / Spark and
# pyarrow's dataset reader do: hidden files and directories (.git, Spark's
# .crc checksums) and markers or metadata (_SUCCESS, _metadata, _temporary/).
HIDDEN_PREFIXES = (".", "_")


def _hidden(name: str) -> bool:
    return name.startswith(HIDDEN_PREFIXES)


def _is_within(path: str, directories: list[str]) -> Optional[str]:
    """The one of ``directories`` (real paths) that holds ``path`` (a real path), if any."""
    for directory in directories:
        if path == directory or path.startswith(directory.rstrip(os.sep) + os.sep):
            return directory
    return None


def _walk(root: Path, excluded: list[str]) -> list[Path]:
    """The files under ``root``, sorted: symbolic links to directories are
    followed (each directory once), hidden names and ``excluded`` directories
    skipped. A broken link or a non-regular file (a named pipe, a socket) in
    the tree is an error naming it, not a file silently left out."""
    files: list[Path] = []
    visited: set[tuple[int, int]] = set()
    for directory, subdirectories, names in os.walk(root, followlinks=True):
        info = os.stat(directory)
        if (info.st_dev, info.st_ino) in visited:  # a link back up the tree
            subdirectories.clear()
            continue
        visited.add((info.st_dev, info.st_ino))
        subdirectories[:] = sorted(
            d
            for d in subdirectories
            if not _hidden(d)
            and not _is_within(os.path.realpath(os.path.join(directory, d)), excluded)
        )
        for name in names:
            if _hidden(name):
                continue
            path = Path(directory, name)
            if _is_within(os.path.realpath(path), excluded):
                continue
            try:
                mode = path.stat().st_mode
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"{path}: a broken symbolic link (to {os.readlink(path)!r}) in the input "
                    f"directory {root}"
                ) from None
            if stat.S_ISDIR(mode):  # os.walk lists a directory it cannot enter as a file
                raise PermissionError(f"{path}: a directory that cannot be read, in {root}")
            if not stat.S_ISREG(mode):
                raise ValueError(
                    f"{path}: not a regular file (a named pipe, socket or device) in the input "
                    f"directory {root}; name it on its own to read it"
                )
            files.append(path)
    return sorted(files)


def _hidden_match(pattern: str, match: str) -> bool:
    """Whether a glob's wildcard matched a hidden name in ``match``: a part
    starting with '.' or '_' where the pattern's part starts with ``*``
    ('data/*' skips data/_SUCCESS; 'data/_*', 'data/?S*' and 'data/[_]*',
    which spell out the first character, do not)."""
    wanted, found = Path(pattern).parts, Path(match).parts
    if "**" not in wanted and len(wanted) == len(found):
        return any(w.startswith("*") and _hidden(f) for w, f in zip(wanted, found))
    literal = 0
    while literal < len(wanted) and not glob.has_magic(wanted[literal]):
        literal += 1
    asked = {w[0] for w in wanted[literal:] if _hidden(w)}
    return any(_hidden(f) and f[0] not in asked for f in found[literal:])


def _candidates(item: PathInput, excluded: list[str]) -> tuple[list[Path], str]:
    """The files one input names, and what it is ("directory", "file", "glob")."""
    path = Path(item)
    if path.is_dir():
        return _walk(path, excluded), "directory"
    if os.path.lexists(path):  # a file, a named pipe, /dev/stdin, a broken link
        if not path.exists():
            raise FileNotFoundError(
                f"{item}: a broken symbolic link (to {os.readlink(path)!r}): nothing to read"
            )
        inside = _is_within(os.path.realpath(path), excluded)
        if inside:
            raise ValueError(
                f"{item}: a file in the output directory {inside}, which cannot be an input"
            )
        return [path], "file"
    pattern = os.fspath(item)
    matches = sorted(glob.glob(pattern, recursive=True))
    if not matches:
        raise FileNotFoundError(f"{item}: no such file, directory or matching path")
    files: list[Path] = []
    for match in matches:
        found = Path(match)
        if _hidden_match(pattern, match) or _is_within(os.path.realpath(found), excluded):
            continue
        if found.is_dir():
            files += _walk(found, excluded)
        elif not found.exists():
            raise FileNotFoundError(
                f"{match}: a broken symbolic link (to {os.readlink(found)!r}), matched by {item}"
            )
        else:
            files.append(found)
    return files, "glob"


def input_files(
    inputs: Union[PathInput, Iterable[PathInput]], *, exclude: Iterable[PathInput] = ()
) -> Iterator[Path]:
    """The files ``inputs`` name, in the order :func:`read_documents` reads
    them: a file as named (a named pipe or ``/dev/stdin`` too); a directory's
    files, recursively, in sorted order, following links to directories; a
    glob's matches, sorted, directories among them read as directories.
    Directory walks and wildcards skip names starting with '.' or '_'
    (:data:`HIDDEN_PREFIXES`). A file reached twice (named twice, through a
    link, by a glob and a directory) is read once, where first reached.
    Files in the directories ``exclude`` (an output directory) are skipped.
    An input that names no file to read is an error naming it."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    excluded = [os.path.realpath(e) for e in exclude]
    seen: set[tuple[int, int]] = set()
    for item in inputs:
        files, kind = _candidates(item, excluded)
        if not files:
            what = "the glob matches" if kind == "glob" else f"the {kind} holds"
            skipped = "names starting with '.' or '_' are skipped"
            if excluded:
                skipped += f", and the output directory {excluded[0]}"
            raise FileNotFoundError(f"{item}: {what} no file to read ({skipped})")
        for path in files:
            info = path.stat()
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            yield path


class _Counted(io.RawIOBase):
    """A binary file that tells ``on_read`` how many bytes were read from it."""

    def __init__(self, file: Binary, on_read: Callable[[int], None]) -> None:
        self._file, self._on_read = file, on_read

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._file.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def readinto(self, buffer) -> int:
        n = self._file.readinto(buffer)
        if n:
            self._on_read(n)
        return n


ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC = 0x184D2A50  # up to 0x184D2A5F: the low 4 bits are free


class _TruncatedError(EOFError):
    """Compressed data that ends in the middle of a frame."""


class _ZstdFrames(io.RawIOBase):
    """A ``.zst`` file's bytes, passed through unchanged while following its
    frame structure (RFC 8878) to check, at the end, that the last frame is
    complete: zstandard's stream reader takes a cut-off frame for the end of
    the data. Only headers are parsed; block contents are skipped. Data that
    is not a frame is left to the decompressor to refuse."""

    def __init__(self, file: Binary) -> None:
        self._file = file
        self._state = "magic"  # the part being read: "magic", "descriptor",
        # "frame header", "block", "skippable size"; "unknown" stops following
        self._need = 4  # how many bytes the part takes
        self._part = bytearray()
        self._skip = 0  # bytes to pass before the next part (block content, ...)
        self._checksum = False  # the current frame ends with a 4-byte checksum

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._file.readinto(buffer)
        if n:
            self._follow(memoryview(buffer)[:n])
        elif self._state != "unknown" and (self._skip or self._part or self._state != "magic"):
            raise _TruncatedError("the compressed data ends in the middle of a frame")
        return n

    def _follow(self, data: memoryview) -> None:
        i = 0
        while i < len(data) and self._state != "unknown":
            if self._skip:
                k = min(self._skip, len(data) - i)
                self._skip -= k
            else:
                k = min(self._need - len(self._part), len(data) - i)
                self._part += data[i : i + k]
                if len(self._part) == self._need:
                    self._next(int.from_bytes(self._part, "little"))
                    self._part.clear()
            i += k

    def _next(self, value: int) -> None:
        """Moves past the part just read, whose bytes are ``value`` (little-endian)."""
        state = self._state
        if state == "magic":
            if value == ZSTD_MAGIC:
                self._state, self._need = "descriptor", 1
            elif value & ~0xF == SKIPPABLE_MAGIC:
                self._state, self._need = "skippable size", 4
            else:
                self._state = "unknown"
        elif state == "skippable size":
            self._state, self._need, self._skip = "magic", 4, value
        elif state == "descriptor":
            single_segment = bool(value & 0x20)
            self._checksum = bool(value & 0x04)
            header = (
                (0 if single_segment else 1)  # window descriptor
                + (0, 1, 2, 4)[value & 0x03]  # dictionary id
                + (1 if single_segment else 0, 2, 4, 8)[value >> 6]  # content size
            )
            self._state, self._need = "frame header", header
            if header == 0:
                self._state, self._need = "block", 3
        elif state == "frame header":
            self._state, self._need = "block", 3
        else:  # a block header: last block (1 bit), type (2 bits), size (21 bits)
            kind, size = (value >> 1) & 0x03, value >> 3
            if kind == 3:  # reserved: corrupt, for the decompressor to say
                self._state = "unknown"
                return
            self._skip = 1 if kind == 1 else size  # an RLE block holds one byte
            if value & 1:
                self._skip += 4 if self._checksum else 0
                self._state, self._need = "magic", 4


@functools.cache
def _decompression_errors() -> tuple[type[BaseException], ...]:
    """What reading a corrupt or truncated ``.gz``/``.zst`` raises."""
    errors: tuple[type[BaseException], ...] = (EOFError, gzip.BadGzipFile, zlib.error)
    try:
        import zstandard
    except ImportError:
        return errors
    return (*errors, zstandard.ZstdError)


def _decompression_error(path: Path, error: BaseException, where: Optional[str]) -> FormatError:
    kind = COMPRESSED.get(path.suffix.lower(), "compressed")
    if isinstance(error, EOFError):
        problem = f"truncated {kind} file: {error}"
    else:
        problem = f"corrupt {kind} data: {error}"
    return FormatError(path, problem, where)


@contextlib.contextmanager
def _open_binary(path: Path, on_read: OnRead = None) -> Iterator[Binary]:
    kind = COMPRESSED.get(path.suffix.lower())
    if kind == "zstd":
        try:
            import zstandard
        except ImportError:
            raise FormatError(path, "reading .zst files needs the zstandard package") from None
    with open(path, "rb") as file:
        stored: Binary = file if on_read is None else _Counted(file, on_read)
        if kind == "gzip":
            with gzip.GzipFile(fileobj=stored, mode="rb") as stream:
                yield stream
        elif kind == "zstd":
            frames = _ZstdFrames(stored)
            with zstandard.ZstdDecompressor().stream_reader(
                cast(IO[bytes], frames), read_across_frames=True, closefd=False
            ) as stream:
                yield cast(io.RawIOBase, stream)  # it reads as one
        else:
            yield stored


def _format_of(path: Path) -> str:
    name = path.name.lower()
    for suffix in COMPRESSED:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    return "text"


def _lines(path: Path, on_read: OnRead) -> Iterator[tuple[int, str]]:
    """(line number, line with its end) of a file; each line is decoded on
    its own, so an encoding error names its line. A truncated or corrupt
    compressed file is a FormatError saying how many lines came before."""
    with _open_binary(path, on_read) as raw:
        lines = io.BufferedReader(cast(io.RawIOBase, raw))
        number = offset = 0
        while True:
            try:
                line = lines.readline()
            except _decompression_errors() as e:
                where = f"after line {number}" if number else None
                raise _decompression_error(path, e, where) from e
            if not line:
                return
            number += 1
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as e:
                # As a whole file's error says it; the offset counts the bytes
                # of the text (after decompression).
                error = NotUtf8Error(offset + e.start, number, line[e.start])
                raise FormatError(path, str(error)) from None
            offset += len(line)
            yield number, text


# Text is read in blocks of about this size and cut at its empty lines.
TEXT_BLOCK = 1 << 20
# Empty lines (nothing before the \n but \r, which str.strip("\r\n") empties):
# at the start of a block, and after the end of a line.
_EMPTY_LINES = re.compile(r"(?:\r*\n)+")
_BREAK = re.compile(r"\n(?:\r*\n)+")


class _TextCutter:
    """Cuts a text file, given in blocks of whole lines, into the documents
    :func:`read_documents` describes. A block is decoded at once; bytes that
    are not UTF-8 are named by their offset and line, as for a whole file,
    after the documents that end before their line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.open: list[str] = []  # the lines of the document not ended yet
        self.offset = 0  # the bytes and the lines before the next block
        self.lines = 0
        self.error: Optional[FormatError] = None

    def cut(self, block: bytes) -> list[str]:
        """The documents that end in ``block`` (whole lines, or the text's
        last line without its end); the last may go on in the next block.
        Bytes that are not UTF-8 end the documents before their line and set
        :attr:`error`, for the caller to raise after them."""
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError as e:
            line_start = block.rfind(b"\n", 0, e.start) + 1
            documents = self.cut(block[:line_start])  # the whole lines before it
            error = NotUtf8Error(self.offset + e.start - line_start, self.lines + 1, block[e.start])
            # The offset counts the bytes of the text (after decompression).
            self.error = FormatError(self.path, str(error))
            return documents
        self.offset += len(block)
        self.lines += block.count(b"\n")
        documents = []
        lead = _EMPTY_LINES.match(text)
        if lead is not None:
            documents = self.end()
            text = text[lead.end() :]
        pieces = _BREAK.split(text)
        if len(pieces) == 1:
            if text:
                self.open.append(text)
            return documents
        self.open.append(pieces[0])
        documents += self.end()
        documents += [piece.rstrip("\r\n") for piece in pieces[1:-1]]
        if pieces[-1]:
            self.open.append(pieces[-1])
        return documents

    def end(self) -> list[str]:
        """The document not ended yet, if any (a last line of only \\r is none)."""
        if not self.open:
            return []
        document = "".join(self.open).rstrip("\r\n")
        self.open = []
        return [document] if document else []


def _text_documents(path: Path, on_read: OnRead) -> Iterator[str]:
    cutter = _TextCutter(path)
    with _open_binary(path, on_read) as raw:
        rest: list[bytes] = []  # a line not ended yet (in pieces: it may be long)
        while True:
            try:
                block = raw.read(TEXT_BLOCK)
            except _decompression_errors() as e:
                lines = cutter.lines
                raise _decompression_error(path, e, f"after line {lines}" if lines else None) from e
            if not block:
                break
            end = block.rfind(b"\n") + 1  # after the block's last whole line
            if not end:
                rest.append(block)
                continue
            whole = block if end == len(block) else block[:end]
            if rest:
                whole = b"".join([*rest, whole])
            rest = [] if end == len(block) else [block[end:]]
            yield from cutter.cut(whole)
            if cutter.error is not None:
                raise cutter.error
        if rest:
            yield from cutter.cut(b"".join(rest))
            if cutter.error is not None:
                raise cutter.error
    yield from cutter.end()


def _json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a string"


def _jsonl_documents(path: Path, field: str, on_read: OnRead) -> Iterator[str]:
    for number, line in _lines(path, on_read):
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]  # a byte order mark: no part of the JSON (text files keep it)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise FormatError(path, f"invalid JSON: {e.msg}", f"line {number}") from None
        if not isinstance(record, dict):
            raise FormatError(
                path,
                f"the record is {_json_kind(record)}, not a JSON object with a field {field!r}",
                f"line {number}",
            )
        if field not in record:
            raise FormatError(path, f"no field {field!r} in this record", f"line {number}")
        value = record[field]
        if not isinstance(value, str):
            raise FormatError(
                path, f"field {field!r} is {_json_kind(value)}, not text", f"line {number}"
            )
        # The line was valid UTF-8, so a surrogate can only come from a \u escape.
        if "\\u" in line:
            surrogate = _SURROGATE.search(value)
            if surrogate:
                raise FormatError(
                    path,
                    f"field {field!r} holds a lone surrogate U+{ord(surrogate.group()):04X} at "
                    f"character {surrogate.start()} (a \\u escape of half a UTF-16 pair), "
                    "which is not text",
                    f"line {number}",
                )
        yield value


def _parquet_documents(path: Path, field: str, on_read: OnRead) -> Iterator[str]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise FormatError(path, "reading Parquet files needs the pyarrow package") from None
    if path.suffix.lower() in COMPRESSED:  # pyarrow needs to seek: decompress to a file
        with tempfile.TemporaryFile(prefix="bytepair-", suffix=".parquet") as copy:
            with _open_binary(path, on_read) as stream:
                try:
                    shutil.copyfileobj(stream, copy, 1 << 20)
                except _decompression_errors() as e:
                    raise _decompression_error(path, e, None) from e
            copy.seek(0)
            yield from _parquet_rows(pq, path, copy, field)
        return
    if on_read is None:  # pyarrow reads a path natively, outside the GIL
        yield from _parquet_rows(pq, path, path, field)
        return
    with open(path, "rb") as file:
        yield from _parquet_rows(pq, path, _Counted(file, on_read), field)


def _parquet_rows(
    pq, path: Path, source: Union[Path, IO[bytes], Binary], field: str
) -> Iterator[str]:
    try:
        reader = pq.ParquetFile(source)
    except Exception as e:  # pyarrow raises its own error types for corrupt files
        raise FormatError(path, f"not a Parquet file: {e}") from None
    if field not in reader.schema_arrow.names:
        raise FormatError(path, f"no column {field!r} (columns: {reader.schema_arrow.names})")
    row = 0
    for batch in reader.iter_batches(columns=[field], batch_size=4096):
        column = batch.column(0)
        try:
            values = column.to_pylist()
        except UnicodeDecodeError:  # a string column written by a tool that did not check
            raise _not_utf8_row(path, field, column, row) from None
        for value in values:
            row += 1
            if not isinstance(value, str):
                kind = "null" if value is None else type(value).__name__
                raise FormatError(path, f"column {field!r} holds {kind}, not text", f"row {row}")
            yield value


def _not_utf8_row(path: Path, field: str, column, before: int) -> FormatError:
    """The error naming the first value of ``column`` that is not UTF-8; ``before``
    rows of the file come before the column's."""
    for index in range(len(column)):
        try:
            column[index].as_py()
        except UnicodeDecodeError as e:
            return FormatError(
                path,
                f"column {field!r} is not UTF-8 text ({e.reason} at byte {e.start} of the value)",
                f"row {before + index + 1}",
            )
    return FormatError(
        path, f"column {field!r} is not UTF-8 text", f"rows {before + 1}-{before + len(column)}"
    )


class Documents(Iterator[str]):
    """The documents :func:`read_documents` streams: an iterator (lazy: no
    input is looked at before the first document is asked for) that also
    knows its inputs, so a writer can list them up front and leave its own
    output directory out (:meth:`excluding`, :meth:`files`)."""

    def __init__(
        self,
        inputs: Union[PathInput, Iterable[PathInput]],
        field: str = "text",
        on_read: OnRead = None,
        exclude: Iterable[PathInput] = (),
    ) -> None:
        if not isinstance(inputs, (str, os.PathLike)):
            inputs = list(inputs)
        self.inputs, self.field, self.on_read = inputs, field, on_read
        self.exclude = tuple(exclude)
        self._files: Optional[list[Path]] = None
        self._documents: Optional[Generator[str, None, None]] = None

    @property
    def started(self) -> bool:
        """Whether reading began (a document was asked for, or the documents iterated)."""
        return self._documents is not None

    def excluding(self, *directories: PathInput) -> Documents:
        """These documents without the files in ``directories`` (not started yet)."""
        if self.started:
            raise ValueError("the documents are being read already")
        return Documents(self.inputs, self.field, self.on_read, (*self.exclude, *directories))

    def files(self) -> list[Path]:
        """The input files, listed once (:func:`input_files`): a missing input
        or one that names nothing to read is an error here."""
        if self._files is None:
            self._files = list(input_files(self.inputs, exclude=self.exclude))
        return self._files

    def _read(self) -> Generator[str, None, None]:
        files = (
            self.files()
            if self._files is not None
            else input_files(self.inputs, exclude=self.exclude)
        )
        field, on_read = self.field, self.on_read
        for path in files:
            kind = _format_of(path)
            if kind == "jsonl":
                yield from _jsonl_documents(path, field, on_read)
            elif kind == "parquet":
                yield from _parquet_documents(path, field, on_read)
            else:
                yield from _text_documents(path, on_read)

    def __iter__(self) -> Iterator[str]:
        # The reading generator itself (this object's __next__ reads from it
        # too): a loop over the documents then costs no Python call apiece.
        if self._documents is None:
            self._documents = self._read()
        return self._documents

    def __next__(self) -> str:
        if self._documents is None:
            self._documents = self._read()
        return next(self._documents)

    def close(self) -> None:
        """Closes the file being read (as a generator's ``close``)."""
        if self._documents is not None:
            self._documents.close()


def read_documents(
    inputs: Union[PathInput, Iterable[PathInput]], *, field: str = "text", on_read: OnRead = None
) -> Documents:
    """The documents of ``inputs`` (files, globs, directories), streamed: one
    file at a time, a line or a record batch at a time, so memory does not
    grow with the size of a file.

    Which files: see :func:`input_files` (directories recursively in sorted
    order, globs sorted, names starting with '.' or '_' skipped in walks, a
    file reached twice read once). Each file is read by its name:

    - ``*.jsonl`` / ``*.json`` / ``*.ndjson`` (JSON lines): one object a line,
      each giving one document, its ``field``; empty lines are skipped;
    - ``*.parquet``: the ``field`` column, one document a row (read in record
      batches; needs pyarrow);
    - anything else is plain UTF-8 text, where an empty line (nothing before
      its ``\\n`` but ``\\r``) ends a document: a document is a run of
      non-empty lines, without the line break after its last line. Empty
      lines belong to no document (so several in a row are one break); a
      line of spaces or tabs is not empty and belongs to its document. A file
      without empty lines is one document.
    - ``.gz`` and ``.zst``/``.zstd`` after those names are decompressed on
      the fly (zstd needs the ``zstandard`` package; a file of several frames
      or gzip members is read whole). Parquet needs random access, so a
      ``.parquet.gz``/``.parquet.zst`` is first decompressed to a temporary
      file in the system's temporary directory (removed when it is read).

    Documents are only ever cut at those boundaries, so pre-tokens never span
    two. Pass the iterator to :func:`bytepair.train` (it batches the texts) or
    encode it document by document. Problems name the file and the line (or
    row); a compressed file that is truncated (it ends in the middle of a
    gzip member or a zstd frame) or corrupt is a :class:`FormatError`, never a
    shorter corpus. ``on_read(n)`` is told of every ``n`` bytes read from a
    file as stored (compressed bytes for ``.gz``/``.zst``), for progress bars.
    """
    return Documents(inputs, field, on_read)
