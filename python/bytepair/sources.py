"""Reading corpora as a stream of documents, never a whole file at once.

``read_documents(inputs, field="text")`` yields the documents of files,
globs and directories (recursively, in sorted order), by their names:

- ``*.jsonl`` / ``*.json`` (JSON lines): one object a line, its ``field``;
- ``*.parquet``: the ``field`` column (read in record batches; needs pyarrow);
- anything else is plain UTF-8 text, where a blank line ends a document
  (the blank lines themselves belong to no document);
- ``.gz`` and ``.zst``/``.zstd`` after those names are decompressed on the
  fly (zstd needs the ``zstandard`` package).

Documents are only ever cut at those boundaries, so pre-tokens never span
two. Pass the iterator to :func:`bytepair.train` (it batches the texts) or
encode it document by document. Problems name the file and the line.
``on_read(n)`` is told of every ``n`` bytes read from a file as stored
(compressed bytes for ``.gz``/``.zst``), for progress bars.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, BinaryIO, Callable, Optional, Union

from .errors import FormatError

PathInput = Union[str, "os.PathLike[str]"]
OnRead = Optional[Callable[[int], None]]
COMPRESSED = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def input_files(inputs: Union[PathInput, Iterable[PathInput]]) -> Iterator[Path]:
    """The files ``inputs`` name, in the order :func:`read_documents` reads them."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            yield path
        else:
            matches = sorted(glob.glob(str(item), recursive=True))
            if not matches:
                raise FileNotFoundError(f"{item}: no such file, directory or matching path")
            yield from (Path(m) for m in matches if Path(m).is_file())


class _Counted(io.RawIOBase):
    """A binary file that tells ``on_read`` how many bytes were read from it."""

    def __init__(self, file: BinaryIO, on_read: Callable[[int], None]) -> None:
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


@contextlib.contextmanager
def _open_binary(path: Path, on_read: OnRead = None) -> Iterator[IO[bytes]]:
    kind = COMPRESSED.get(path.suffix.lower())
    if kind == "zstd":
        try:
            import zstandard
        except ImportError:
            raise FormatError(path, "reading .zst files needs the zstandard package") from None
    with open(path, "rb") as file:
        stored = file if on_read is None else _Counted(file, on_read)
        if kind == "gzip":
            with gzip.GzipFile(fileobj=stored, mode="rb") as stream:
                yield stream
        elif kind == "zstd":
            with zstandard.ZstdDecompressor().stream_reader(stored, closefd=False) as stream:
                yield stream
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
    its own, so an encoding error names its line."""
    with _open_binary(path, on_read) as raw:
        for number, line in enumerate(io.BufferedReader(raw), start=1):
            try:
                yield number, line.decode("utf-8")
            except UnicodeDecodeError as e:
                raise FormatError(
                    path,
                    f"not UTF-8 text ({e.reason} at byte {e.start} of the line)",
                    f"line {number}",
                ) from None


def _text_documents(path: Path, on_read: OnRead) -> Iterator[str]:
    document: list[str] = []
    for _, line in _lines(path, on_read):
        if line.strip("\r\n") == "":
            if document:
                yield "".join(document).rstrip("\r\n")
                document = []
        else:
            document.append(line)
    if document:
        yield "".join(document).rstrip("\r\n")


def _jsonl_documents(path: Path, field: str, on_read: OnRead) -> Iterator[str]:
    for number, line in _lines(path, on_read):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise FormatError(path, f"invalid JSON: {e.msg}", f"line {number}") from None
        if not isinstance(record, dict) or field not in record:
            raise FormatError(path, f"no field {field!r} in this record", f"line {number}")
        value = record[field]
        if not isinstance(value, str):
            raise FormatError(
                path, f"field {field!r} is {type(value).__name__}, not text", f"line {number}"
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
    if on_read is None:  # pyarrow reads a path natively, outside the GIL
        yield from _parquet_rows(pq, path, path, field)
        return
    with open(path, "rb") as file:
        yield from _parquet_rows(pq, path, _Counted(file, on_read), field)


def _parquet_rows(pq, path: Path, source: Union[Path, BinaryIO], field: str) -> Iterator[str]:
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
                raise FormatError(
                    path, f"column {field!r} holds {type(value).__name__}, not text", f"row {row}"
                )
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


def read_documents(
    inputs: Union[PathInput, Iterable[PathInput]], *, field: str = "text", on_read: OnRead = None
) -> Iterator[str]:
    """The documents of ``inputs`` (files, globs, directories), streamed; see
    the module docstring for the formats and ``on_read``."""
    for path in input_files(inputs):
        kind = _format_of(path)
        if kind == "jsonl":
            yield from _jsonl_documents(path, field, on_read)
        elif kind == "parquet":
            yield from _parquet_documents(path, field, on_read)
        else:
            yield from _text_documents(path, on_read)
