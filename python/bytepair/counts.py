"""Pre-token count shards: count a corpus once with bounded memory, merge the
shards of many runs or machines exactly, train later.

A count directory holds ``manifest.json`` and shard files. The manifest says
``{"format": "bytepair-counts", "version": 1, "pretokenizer": ...,
"pattern": ..., "special_tokens": [...], "partitions": P, "shards": [{"file":
..., "partition": p, "records": n, "sha256": ...}, ...]}`` and is written last,
so a directory without it is an unfinished run. A shard is ``b"BPCT\\x01"``,
then its records sorted by bytes, each ``uvarint(len) bytes uvarint(count)``.
A pre-token goes to partition ``crc32(bytes) % P``; when the counts in memory
pass ``max_memory`` (estimated at :data:`BYTES_PER_ENTRY` + 16 bytes per
distinct pre-token, checked after each batch of about 4 M characters) they are written out as one run of shards and
counting goes on, so memory stays bounded; counts of the same pre-token in
different shards or directories add up when read, so the merges trained
from counts are those trained from the text.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Optional, Union

from . import _native
from .errors import FormatError
from .pretokenizers import PretokenizerSpec, resolve

FORMAT = "bytepair-counts"
VERSION = 1
MAGIC = b"BPCT\x01"
MANIFEST = "manifest.json"
# A distinct pre-token in the core's table costs about this much besides its bytes.
BYTES_PER_ENTRY = 64
BATCH_CHARS = 4 << 20


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_uvarint(data: bytes, at: int, path: Path) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise FormatError(path, "truncated varint", f"byte {at}")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise FormatError(path, "varint longer than 64 bits", f"byte {at}")


class _Writer:
    def __init__(self, out: Path, partitions: int) -> None:
        self.out, self.partitions, self.run, self.shards = out, partitions, 0, []

    def flush(self, counter) -> None:
        parts: list[list[tuple[bytes, int]]] = [[] for _ in range(self.partitions)]
        for pretoken, count in counter.items():
            parts[zlib.crc32(pretoken) % self.partitions].append((pretoken, count))
        for partition, records in enumerate(parts):
            if not records:
                continue
            records.sort()
            body = bytearray(MAGIC)
            for pretoken, count in records:
                body += _uvarint(len(pretoken)) + pretoken + _uvarint(count)
            name = f"part-{partition:05d}-{self.run:05d}.bin"
            (self.out / name).write_bytes(body)
            digest = hashlib.sha256(body).hexdigest()
            self.shards.append(
                {"file": name, "partition": partition, "records": len(records), "sha256": digest}
            )
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
    from .training import progress_bar

    out = Path(out)
    if (out / MANIFEST).exists() and not overwrite:
        raise FileExistsError(f"{out} already holds counts; pass overwrite=True to replace them")
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise ValueError(f"partitions must be a positive int, not {partitions!r}")
    pre = resolve(pretokenizer)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("part-*.bin"):
        old.unlink()
    (out / MANIFEST).unlink(missing_ok=True)
    counter = _native.PretokenCounter(
        list(special_tokens), pre.kind, pre.pattern if pre.kind == "regex" else None
    )
    writer = _Writer(out, partitions)
    bar = progress_bar(progress, desc="counting", unit=" chars", unit_scale=True)
    batch: list[str] = []
    size = 0
    try:
        for document in documents:
            batch.append(document)
            size += len(document)
            if size >= BATCH_CHARS:
                counter.add_texts(batch)
                if bar is not None:
                    bar.update(size)
                batch, size = [], 0
                # An estimate by entries (a pre-token is ~16 bytes on average in text).
                if len(counter) * (BYTES_PER_ENTRY + 16) > max_memory:
                    writer.flush(counter)
        if batch:
            counter.add_texts(batch)
            if bar is not None:
                bar.update(size)
    finally:
        if bar is not None:
            bar.close()
    writer.flush(counter)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "pretokenizer": pre.kind,
        "pattern": pre.pattern,
        "special_tokens": list(special_tokens),
        "partitions": partitions,
        "shards": writer.shards,
    }
    temporary = out / (MANIFEST + ".tmp")
    temporary.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    temporary.replace(out / MANIFEST)
    return out


def _manifest(directory: Path) -> dict:
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


def read_counts(directories: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]]):
    """A PretokenCounter holding the summed counts of every shard of every
    directory (their pre-tokenizers and special tokens must agree), and the
    settings (pretokenizer kind, pattern, special tokens)."""
    if isinstance(directories, (str, os.PathLike)):
        directories = [directories]
    counter, settings = None, None
    for directory in map(Path, directories):
        manifest = _manifest(directory)
        these = (manifest["pretokenizer"], manifest["pattern"], tuple(manifest["special_tokens"]))
        if settings is None:
            settings = these
            counter = _native.PretokenCounter(list(these[2]), these[0], these[1])
        elif these != settings:
            raise FormatError(
                directory, f"counted with {these}, but the first directory with {settings}"
            )
        for shard in manifest["shards"]:
            path = directory / shard["file"]
            data = path.read_bytes() if path.is_file() else None
            if data is None:
                raise FormatError(path, "the manifest lists this shard but it is missing")
            if hashlib.sha256(data).hexdigest() != shard["sha256"]:
                raise FormatError(path, "checksum mismatch: the shard was changed or truncated")
            if not data.startswith(MAGIC):
                raise FormatError(path, "not a count shard (bad magic)", "byte 0")
            records, at = [], len(MAGIC)
            while at < len(data):
                length, at = _read_uvarint(data, at, path)
                if at + length > len(data):
                    raise FormatError(path, "truncated record", f"byte {at}")
                pretoken = data[at : at + length]
                count, at = _read_uvarint(data, at + length, path)
                records.append((pretoken, count))
            if len(records) != shard["records"]:
                raise FormatError(
                    path, f"{len(records)} records, the manifest says {shard['records']}"
                )
            counter.add_counts(records)
    if counter is None:
        raise ValueError("no count directory given")
    return counter, settings


def train_from_counts(directories, vocab_size: int, *, min_frequency: int = 1):
    """Train byte-level BPE on count shards: the same merges as training on the text."""
    from .model import BPEModel
    from .pretokenizers import Pretokenizer
    from .tokenizer import Tokenizer

    counter, (kind, pattern, specials) = read_counts(directories)
    if vocab_size < 256 + len(specials):
        raise ValueError(f"vocab_size {vocab_size} is below 256 bytes + {len(specials)} specials")
    tokens, merges, _, _ = _native.train_bpe(counter, vocab_size, list(specials), min_frequency)
    model = BPEModel(
        tokens=tuple(tokens),
        merges=tuple(merges),
        special_tokens={t: i for i, t in enumerate(specials)},
        pretokenizer=Pretokenizer(kind, pattern),
    )
    return Tokenizer(model)
