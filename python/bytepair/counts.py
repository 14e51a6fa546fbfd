"""Pre-token count shards: count a corpus once with bounded memory, merge the
shards of many runs or machines exactly, train later.

A count directory holds ``manifest.json`` and shard files. The manifest says
``{"format": "bytepair-counts", "version": 1, "pretokenizer": ...,
"pattern": ..., "special_tokens": [...], "partitions": P, "shards": [{"file":
..., "partition": p, "records": n, "sha256": ...}, ...]}`` and is written last,
so a directory without it is an unfinished run. A shard is ``b"BPCT\\x01"``,
then its records sorted by bytes, each ``uvarint(len) bytes uvarint(count)``.
A pre-token goes to partition ``crc32(bytes) % P``; when the counts in memory
pass ``max_memory`` (estimated at :data:`BYTES_PER_ENTRY` bytes per distinct
pre-token, checked after each batch of about 4 M characters) they are written
out as one run of shards, a partition at a time, and counting goes on. So the
peak is at most about ``max_memory`` + :data:`OVERHEAD_BYTES` (one batch of
text, its per-thread tables, the interpreter; checked in ``bench/``, suite
``scale``); counts of the same pre-token in
different shards or directories add up when read, so the merges trained
from counts are those trained from the text.

The pieces are public so other writers share one format: :func:`write_shard`,
:func:`read_shard` (streamed, checked), :func:`merge_shards` (a streaming
merge of sorted shards into one, summing equal pre-tokens),
:func:`write_manifest` and :func:`read_manifest`. ``bytepair.on_ray`` counts
on a Ray cluster with them.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Optional, Union

from . import _native
from .errors import FormatError
from .pretokenizers import PretokenizerSpec, resolve

FORMAT = "bytepair-counts"
VERSION = 1
MAGIC = b"BPCT\x01"
MANIFEST = "manifest.json"
# A distinct pre-token costs about this much in the core's counting table, its
# bytes and the table's slack included (measured: 196-198 B on English and on
# multilingual text).
BYTES_PER_ENTRY = 200
BATCH_CHARS = 4 << 20
# Counting holds, besides the counts (max_memory), one batch of text, the
# core's per-thread tables for it and one partition being written: the stated
# peak is max_memory + this (the interpreter and imports included).
OVERHEAD_BYTES = 160 << 20
# Shards are read and written in blocks of this size, so a reader holds about this much.
BLOCK = 1 << 20
# read_counts hands records to the core in lists of this length.
ADD_BATCH = 1 << 16


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def write_shard(path: Union[str, os.PathLike], records: Iterable[tuple[bytes, int]]) -> dict:
    """Write ``records`` (strictly increasing pre-tokens, positive counts) as one
    shard at ``path``, streamed; returns its manifest entry without the
    partition: ``{"file": name, "records": n, "sha256": hex}``. The shard is
    written under a temporary name and renamed when complete."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    digest = hashlib.sha256()
    n, previous = 0, None
    buffer = bytearray(MAGIC)
    with open(temporary, "wb") as f:
        for pretoken, count in records:
            # The reader and merge_shards rely on this order; check it where it is made.
            if previous is not None and pretoken <= previous:
                raise ValueError(f"{path}: shard records must be strictly increasing")
            if count < 1:
                raise ValueError(f"{path}: count {count} of {pretoken!r} is not positive")
            buffer += _uvarint(len(pretoken))
            buffer += pretoken
            buffer += _uvarint(count)
            previous, n = pretoken, n + 1
            if len(buffer) >= BLOCK:
                digest.update(buffer)
                f.write(buffer)
                buffer.clear()
        digest.update(buffer)
        f.write(buffer)
    temporary.replace(path)
    return {"file": path.name, "records": n, "sha256": digest.hexdigest()}


def _complete_records(data: bytes, at: int, path: Path, offset: int, out: list) -> int:
    """Append the complete records of ``data`` from ``at`` to ``out``; return
    where the first incomplete one starts (``offset``: file position of data[0])."""
    end = len(data)
    while at < end:
        fields = []
        p = at
        for _ in range(2):  # uvarint(len), then uvarint(count) after the bytes
            value = shift = 0
            while True:
                if p >= end:
                    return at
                byte = data[p]
                p += 1
                value |= (byte & 0x7F) << shift
                if not byte & 0x80:
                    break
                shift += 7
                if shift > 63:
                    raise FormatError(path, "varint longer than 64 bits", f"byte {offset + p}")
            if not fields:
                if p + value > end:
                    return at
                fields.append(data[p : p + value])
                p += value
            else:
                fields.append(value)
        out.append((fields[0], fields[1]))
        at = p
    return at


def read_shard(
    path: Union[str, os.PathLike], *, sha256: Optional[str] = None, records: Optional[int] = None
) -> Iterator[tuple[bytes, int]]:
    """The ``(pre-token, count)`` records of one shard, in order, streamed in
    blocks. With ``sha256`` the file is checked against it before the first
    record; with ``records`` the count of records is checked at the end. A
    damaged shard raises :class:`FormatError` naming the file and the byte."""
    path = Path(path)
    if not path.is_file():
        raise FormatError(path, "the manifest lists this shard but it is missing")
    if sha256 is not None and _sha256_of(path) != sha256:
        raise FormatError(path, "checksum mismatch: the shard was changed or truncated")
    with open(path, "rb") as f:
        if f.read(len(MAGIC)) != MAGIC:
            raise FormatError(path, "not a count shard (bad magic)", "byte 0")
        data, offset, n, previous = b"", len(MAGIC), 0, None
        while True:
            block = f.read(BLOCK)
            if not block:
                break
            data += block
            parsed: list[tuple[bytes, int]] = []
            at = _complete_records(data, 0, path, offset, parsed)
            for pretoken, count in parsed:
                if previous is not None and pretoken <= previous:
                    raise FormatError(path, "records out of order", f"record {n}")
                previous, n = pretoken, n + 1
                yield pretoken, count
            data, offset = data[at:], offset + at
        if data:
            raise FormatError(path, "truncated record", f"byte {offset}")
    if records is not None and n != records:
        raise FormatError(path, f"{n} records, the manifest says {records}")


def merge_shards(
    paths: Sequence[Union[str, os.PathLike]],
    out_path: Union[str, os.PathLike],
    *,
    entries: Optional[Sequence[dict]] = None,
) -> dict:
    """Merge sorted shards into one at ``out_path``, summing the counts of equal
    pre-tokens; streamed (about :data:`BLOCK` bytes of memory per input), so
    any number of records fits. ``entries[i]``, when given, is the manifest
    entry of ``paths[i]`` (its checksum and record count are checked). Returns
    the new shard's entry as :func:`write_shard` does."""
    readers = [
        read_shard(p, sha256=e["sha256"], records=e["records"]) if e else read_shard(p)
        for p, e in zip(paths, entries or [None] * len(paths))
    ]

    def summed() -> Iterator[tuple[bytes, int]]:
        current, total = None, 0
        for pretoken, count in heapq.merge(*readers):
            if pretoken != current:
                if current is not None:
                    yield current, total
                current, total = pretoken, 0
            total += count
        if current is not None:
            yield current, total

    return write_shard(out_path, summed())


def shard_name(partition: int, run: int) -> str:
    return f"part-{partition:05d}-{run:05d}.bin"


def check_partitions(partitions: object) -> int:
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise ValueError(f"partitions must be a positive int, not {partitions!r}")
    return partitions


def clear_counts(out: Path) -> None:
    """Remove the manifest and shards of an earlier run in ``out``."""
    (out / MANIFEST).unlink(missing_ok=True)
    for pattern in ("part-*.bin", "part-*.bin.tmp"):
        for old in out.glob(pattern):
            old.unlink()


def write_manifest(
    out: Union[str, os.PathLike],
    pretokenizer: PretokenizerSpec,
    special_tokens: Sequence[str],
    partitions: int,
    shards: Sequence[dict],
) -> Path:
    """Write the manifest of the count directory ``out`` (after its shards:
    a directory counts as finished once this exists)."""
    from .training import _check_special_tokens

    out, pre = Path(out), resolve(pretokenizer)
    special_tokens = _check_special_tokens(special_tokens)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "pretokenizer": pre.kind,
        "pattern": pre.pattern,
        "special_tokens": special_tokens,
        "partitions": partitions,
        "shards": list(shards),
    }
    temporary = out / (MANIFEST + ".tmp")
    temporary.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    temporary.replace(out / MANIFEST)
    return out / MANIFEST


class _Writer:
    def __init__(self, out: Path, partitions: int) -> None:
        self.out, self.partitions, self.run, self.shards = out, partitions, 0, []

    def flush(self, counter) -> None:
        # One partition at a time, sorted in the core: Python objects for 1/P
        # of the records at most, so writing stays within the memory bound.
        for partition in range(self.partitions):
            records = counter.partition_items(partition, self.partitions)
            if not records:
                continue
            entry = write_shard(self.out / shard_name(partition, self.run), records)
            self.shards.append({"file": entry["file"], "partition": partition, **entry})
        self.run += 1
        counter.clear()


def count_to_shards(
    documents: Iterable[str],
    out: Union[str, os.PathLike],
    *,
    pretokenizer: PretokenizerSpec = "gpt2",
    special_tokens: Sequence[str] = (),
    partitions: int = 16,
    max_memory: int = 1 << 30,
    overwrite: bool = False,
    progress: Optional[bool] = None,
) -> Path:
    """Count the pre-tokens of ``documents`` into shards in the directory ``out``
    (a progress bar in characters when ``progress``, default: stderr is a terminal)."""
    from .training import _check_special_tokens, add_batch, progress_bar

    out = Path(out)
    if (out / MANIFEST).exists() and not overwrite:
        raise FileExistsError(f"{out} already holds counts; pass overwrite=True to replace them")
    check_partitions(partitions)
    special_tokens = _check_special_tokens(special_tokens)
    pre = resolve(pretokenizer)
    out.mkdir(parents=True, exist_ok=True)
    clear_counts(out)
    counter = _native.PretokenCounter(
        special_tokens, pre.kind, pre.pattern if pre.kind == "regex" else None
    )
    writer = _Writer(out, partitions)
    bar = progress_bar(progress, desc="counting", unit=" chars", unit_scale=True)
    batch: list[str] = []
    size = first = 0
    try:
        for document in documents:
            batch.append(document)
            size += len(document)
            if size >= BATCH_CHARS:
                add_batch(counter, batch, first, "document")
                if bar is not None:
                    bar.update(size)
                first += len(batch)
                batch, size = [], 0
                if len(counter) * BYTES_PER_ENTRY > max_memory:
                    writer.flush(counter)
        add_batch(counter, batch, first, "document")
        if bar is not None:
            bar.update(size)
    finally:
        if bar is not None:
            bar.close()
    writer.flush(counter)
    write_manifest(out, pre, special_tokens, partitions, writer.shards)
    return out


def read_manifest(directory: Union[str, os.PathLike]) -> dict:
    """The checked manifest of a finished count directory."""
    directory = Path(directory)
    path = directory / MANIFEST
    if not path.is_file():
        raise FormatError(directory, f"no {MANIFEST}: not a count directory, or an unfinished run")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise FormatError(path, f"invalid JSON: {e}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise FormatError(path, f"not a {FORMAT} manifest", "format")
    if manifest.get("version") != VERSION:
        raise FormatError(
            path, f"version {manifest.get('version')!r}; this reads {VERSION}", "version"
        )
    return manifest


def _directories(directories) -> list[Path]:
    if isinstance(directories, (str, os.PathLike)):
        directories = [directories]
    given = [os.fspath(d) for d in directories]
    if not given:
        raise ValueError("no count directory given")
    seen: dict[Path, str] = {}
    for directory in given:
        resolved = Path(directory).resolve()
        if resolved in seen:
            raise ValueError(
                f"the count directory {resolved} is given twice ({seen[resolved]!r} and "
                f"{directory!r}): its counts would be added twice"
            )
        seen[resolved] = directory
    return [Path(d) for d in given]


def _settings_of(directory: Path) -> tuple[str, Optional[str], tuple[str, ...]]:
    manifest = read_manifest(directory)
    return manifest["pretokenizer"], manifest["pattern"], tuple(manifest["special_tokens"])


def read_settings(
    directories: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
) -> tuple[str, Optional[str], tuple[str, ...]]:
    """The settings (pretokenizer kind, pattern, special tokens) the count
    directories were counted with, from their manifests alone: a FormatError
    when they differ, a ValueError when a directory is given twice."""
    first, *others = _directories(directories)
    settings = _settings_of(first)
    for directory in others:
        these = _settings_of(directory)
        if these != settings:
            raise FormatError(
                directory, f"counted with {these}, but the first directory with {settings}"
            )
    return settings


def read_counts(directories: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]]):
    """A PretokenCounter holding the summed counts of every shard of every
    directory (their pre-tokenizers and special tokens must agree), and the
    settings (pretokenizer kind, pattern, special tokens)."""
    directories = _directories(directories)
    kind, pattern, specials = settings = read_settings(directories)
    counter = _native.PretokenCounter(list(specials), kind, pattern)
    for directory in directories:
        for shard in read_manifest(directory)["shards"]:
            records = read_shard(
                directory / shard["file"], sha256=shard["sha256"], records=shard["records"]
            )
            batch: list[tuple[bytes, int]] = []
            for record in records:
                batch.append(record)
                if len(batch) >= ADD_BATCH:
                    counter.add_counts(batch)
                    batch = []
            counter.add_counts(batch)
    return counter, settings


def train_from_counts(
    directories,
    vocab_size: int,
    *,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    checkpoint: Union[str, os.PathLike, None] = None,
    checkpoint_every: Optional[float] = None,
    progress: Optional[bool] = None,
):
    """Train byte-level BPE on count shards: the same merges as training on the
    text (options as :func:`bytepair.train`'s; a checkpoint resumes with
    :func:`bytepair.resume_training`)."""
    import time

    from .pretokenizers import Pretokenizer
    from .training import BpeOptions, merge_counted

    started = time.perf_counter()
    directories = _directories(directories)
    # The options are checked against the manifests before the shards are read.
    kind, pattern, specials = read_settings(directories)
    options = BpeOptions(
        vocab_size,
        list(specials),
        min_frequency,
        max_token_length,
        None if checkpoint is None else Path(checkpoint),
        checkpoint_every,
    )
    counter, _ = read_counts(directories)
    return merge_counted(counter, Pretokenizer(kind, pattern), options, progress, started)
