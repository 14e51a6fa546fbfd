"""The count directory's files: shards of pre-token counts and the manifest
that lists them, written and read (checked, streamed).

A count directory holds ``manifest.json`` and shard files. The manifest says
``{"format": "bytepair-counts", "version": 1, "pretokenizer": ...,
"pattern": ..., "special_tokens": [...], "partitions": P, "shards": [{"file":
..., "partition": p, "records": n, "sha256": ...}, ...]}`` and is written last,
so a directory without it is an unfinished run; a ``file`` is a plain name in
the directory, and no file is listed twice (nor reached twice through a link,
across directories either). A shard is ``b"BPCT\\x01"``, then its records
sorted by bytes, each ``uvarint(len) bytes uvarint(count)``, with a non-empty
pre-token and a count from 1 to 2^64-1. A pre-token goes to partition
``crc32(bytes) % P``.

The pieces are public so other writers share one format: :func:`write_shard`,
:func:`read_shard` (streamed, checked), :func:`merge_shards` (a streaming
merge of sorted shards into one, summing equal pre-tokens),
:func:`write_manifest` and :func:`read_manifest`.
:mod:`bytepair.training.counts` counts into them, :mod:`bytepair.corpus.on_ray`
counts on a Ray cluster with them.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from pathlib import Path
from typing import Optional, Union

from .. import _native
from ..errors import FormatError
from ..pretokenizers import BUILTIN_PATTERNS, PretokenizerSpec, kind_and_pattern_problem, resolve
from .corpus import MAX_COUNT, check_special_tokens

FORMAT = "bytepair-counts"
VERSION = 1
MAGIC = b"BPCT\x01"
MANIFEST = "manifest.json"
# Shards are read and written in blocks of this size, so a reader holds about this much.
BLOCK = 1 << 20
# The core numbers partitions with 32 bits.
MAX_PARTITIONS = (1 << 32) - 1
_SHA256 = re.compile(r"[0-9a-f]{64}")


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


def _check_record(pretoken: object, count: object, index: int, path: Path) -> None:
    if not isinstance(pretoken, bytes):
        raise TypeError(f"{path}: pre-token {index} is {type(pretoken).__name__}, not bytes")
    if not pretoken:
        raise ValueError(f"{path}: pre-token {index} is an empty pre-token")
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"{path}: the count of {pretoken!r} is {type(count).__name__}, not int")
    if count < 1:
        raise ValueError(f"{path}: count {count} of {pretoken!r} is not positive")
    if count > MAX_COUNT:
        raise ValueError(f"{path}: count {count} of {pretoken!r} is above 2^64-1")


def write_shard(path: Union[str, os.PathLike], records: Iterable[tuple[bytes, int]]) -> dict:
    """Write ``records`` (strictly increasing non-empty pre-tokens, counts from
    1 to 2^64-1) as one shard at ``path``, streamed; returns its manifest entry
    without the partition: ``{"file": name, "records": n, "sha256": hex}``. The
    shard is written under a temporary name and renamed when complete (an
    error leaves neither)."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    digest = hashlib.sha256()
    n, previous = 0, None
    buffer = bytearray(MAGIC)
    try:
        with open(temporary, "wb") as f:
            for pretoken, count in records:
                # The reader and merge_shards rely on these; check them where they are made.
                _check_record(pretoken, count, n, path)
                if previous is not None and pretoken <= previous:
                    raise ValueError(f"{path}: shard records must be strictly increasing")
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
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return {"file": path.name, "records": n, "sha256": digest.hexdigest()}


def _complete_records(data: bytes, at: int, path: Path, offset: int, out: list) -> int:
    """Append the complete records of ``data`` from ``at`` to ``out``; return
    where the first incomplete one starts (``offset``: file position of data[0])."""
    end = len(data)
    while at < end:
        fields: list[Union[bytes, int]] = []
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


def _bad_record(pretoken: bytes, count: int) -> str:
    if not pretoken:
        return "an empty pre-token"
    if count < 1:
        return f"count {count} of {pretoken!r} is not positive"
    return f"count {count} of {pretoken!r} is above 2^64-1"


def read_shard(
    path: Union[str, os.PathLike], *, sha256: Optional[str] = None, records: Optional[int] = None
) -> Iterator[tuple[bytes, int]]:
    """The ``(pre-token, count)`` records of one shard, in order, streamed in
    blocks. With ``sha256`` the file is checked against it before the first
    record; with ``records`` the count of records is checked at the end. A
    damaged shard (a record out of order, an empty pre-token, a count of 0 or
    above 2^64-1 included) raises :class:`FormatError` naming the file and the
    byte or record."""
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
                if not pretoken or not 0 < count <= MAX_COUNT:
                    raise FormatError(path, _bad_record(pretoken, count), f"record {n}")
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
    paths = list(paths)
    if entries is not None:
        entries = list(entries)
        if len(entries) != len(paths):
            raise ValueError(
                f"merge_shards: {len(paths)} paths but {len(entries)} entries (one per path)"
            )
        for i, entry in enumerate(entries):
            problem = None if entry is None else entry_problem(entry)
            if problem is not None:
                key, message = problem
                raise ValueError(f"merge_shards: entries[{i}]{'.' * bool(key)}{key}: {message}")
    given: list[Optional[dict]] = list(entries) if entries is not None else [None] * len(paths)
    readers = [
        zip(
            read_shard(p, sha256=e["sha256"], records=e["records"]) if e else read_shard(p),
            repeat(i),
        )
        for i, (p, e) in enumerate(zip(paths, given))
    ]

    def summed() -> Iterator[tuple[bytes, int]]:
        current: Optional[bytes] = None
        total = 0
        held: list[tuple[int, int]] = []
        for (pretoken, count), i in heapq.merge(*readers):
            if pretoken != current:
                if current is not None:
                    yield current, total
                current, total, held = pretoken, 0, []
            total += count
            held.append((i, count))
            if total > MAX_COUNT:
                summands = ", ".join(f"{paths[j]} ({c})" for j, c in held)
                raise ValueError(
                    f"{out_path}: the count of pre-token {pretoken!r} overflows 2^64-1 when "
                    f"summed over the shards {summands}"
                )
        if current is not None:
            yield current, total

    return write_shard(out_path, summed())


def shard_name(partition: int, run: int) -> str:
    return f"part-{partition:05d}-{run:05d}.bin"


def check_partitions(partitions: object) -> int:
    if (
        isinstance(partitions, bool)
        or not isinstance(partitions, int)
        or not 1 <= partitions <= MAX_PARTITIONS
    ):
        raise ValueError(f"partitions must be a positive int below 2^32, not {partitions!r}")
    return partitions


def write_manifest(
    out: Union[str, os.PathLike],
    pretokenizer: PretokenizerSpec,
    special_tokens: Sequence[str],
    partitions: int,
    shards: Sequence[dict],
) -> Path:
    """Write the manifest of the count directory ``out`` (after its shards:
    a directory counts as finished once this exists)."""
    out, pre = Path(out), resolve(pretokenizer)
    special_tokens = check_special_tokens(special_tokens)
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


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def entry_problem(entry: object, partitions: Optional[int] = None) -> Optional[tuple[str, str]]:
    """(key, problem) of a shard's manifest entry that is not well formed, else
    None; ``partitions``: check the entry's partition (and its file) too."""
    if not isinstance(entry, dict):
        return "", f"a shard entry must be an object, not {type(entry).__name__}"
    keys = ("file", "partition", "records", "sha256") if partitions else ("records", "sha256")
    for key in keys:
        if key not in entry:
            return key, "missing"
    if partitions:
        name = entry["file"]
        if not isinstance(name, str):
            return "file", f"must be a file name (a string), not {type(name).__name__}"
        if name in ("", ".", "..") or any(c in name for c in "/\\\0"):
            return "file", f"{name!r} is not a plain file name in the count directory"
        try:
            os.fsencode(name)
        except UnicodeEncodeError:
            return "file", f"{name!r} is not a file name (a lone surrogate)"
        partition = entry["partition"]
        if not _is_int(partition) or not 0 <= partition < partitions:
            return "partition", f"must be an int from 0 to {partitions - 1}, not {partition!r}"
    records = entry["records"]
    if not _is_int(records) or records < 0:
        return "records", f"must be a non-negative int, not {records!r}"
    sha256 = entry["sha256"]
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        return "sha256", f"must be 64 lowercase hex digits, not {sha256!r}"
    return None


def file_id(path: Path) -> object:
    """What a file is, however it is reached (a link, a path through a link):
    its device and inode, or its resolved path when it does not exist (a
    missing shard is named when it is read)."""
    try:
        stat = path.stat()
    except OSError:
        return path.resolve()
    return stat.st_dev, stat.st_ino


def _check_manifest(manifest: dict, directory: Path, path: Path) -> None:
    """FormatError(path, naming the key) unless ``manifest`` is well formed."""
    for key in ("pretokenizer", "pattern", "special_tokens", "partitions", "shards"):
        if key not in manifest:
            raise FormatError(path, "missing", key)
    kind, pattern = manifest["pretokenizer"], manifest["pattern"]
    problem = kind_and_pattern_problem(kind, pattern)
    if problem is not None:
        part, why = problem
        raise FormatError(path, why, "pretokenizer" if part == "kind" else "pattern")
    if kind == "regex":
        for name, builtin in BUILTIN_PATTERNS.items():
            if pattern == builtin:
                raise FormatError(
                    path, f"the {name} pattern is written with kind {name}", "pattern"
                )
        try:
            _native.PretokenCounter([], "regex", pattern)
        except ValueError as e:
            raise FormatError(path, str(e), "pattern") from None
    specials = manifest["special_tokens"]
    if not isinstance(specials, list):
        raise FormatError(path, f"must be a list, not {type(specials).__name__}", "special_tokens")
    try:
        check_special_tokens(specials)
    except (TypeError, ValueError) as e:
        raise FormatError(path, str(e), "special_tokens") from None
    partitions = manifest["partitions"]
    if not _is_int(partitions) or not 1 <= partitions <= MAX_PARTITIONS:
        raise FormatError(
            path, f"must be a positive int below 2^32, not {partitions!r}", "partitions"
        )
    shards = manifest["shards"]
    if not isinstance(shards, list):
        raise FormatError(path, f"must be a list, not {type(shards).__name__}", "shards")
    seen: dict[object, int] = {}
    for i, entry in enumerate(shards):
        problem = entry_problem(entry, partitions)
        if problem is not None:
            key, message = problem
            raise FormatError(path, message, f"shards[{i}]" + (f".{key}" if key else ""))
        file = file_id(directory / entry["file"])
        if file in seen:
            j = seen[file]
            raise FormatError(
                path,
                f"{entry['file']!r} is the file of shards[{j}] ({shards[j]['file']!r}): "
                "its counts would be added twice",
                f"shards[{i}].file",
            )
        seen[file] = i


def read_manifest(directory: Union[str, os.PathLike]) -> dict:
    """The checked manifest of a finished count directory: a damaged one (a key
    missing or of the wrong type, a pattern not its pre-tokenizer's, a shard
    file outside the directory or listed twice) is a :class:`FormatError`
    naming the manifest and the key."""
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
    _check_manifest(manifest, directory, path)
    return manifest
