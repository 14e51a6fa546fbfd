"""Pre-token counts: count a corpus once with bounded memory into a count
directory (its files: :mod:`bytepair.training.shards`), merge the shards of
many runs or machines exactly, train later.

A pre-token goes to partition ``crc32(bytes) % P``; when the counts in memory
pass ``max_memory`` (estimated at :data:`BYTES_PER_ENTRY` bytes per distinct
pre-token, checked after each batch of about 4 M characters) they are written
out as one run of shards, a group of partitions at a time (at most
:data:`FLUSH_RECORDS` records, or one partition), and counting goes on. So the
peak is at most about ``max_memory`` + :data:`OVERHEAD_BYTES` (one batch of
text, its per-thread tables, the interpreter; checked in ``bench/``, suite
``scale``); counts of the same pre-token in different shards or directories
add up when read, so the merges trained from counts are those trained from
the text. ``bytepair.corpus.on_ray`` counts on a Ray cluster the same way.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Callable, Optional, Union

from .. import _native
from ..corpus.sources import Documents
from ..errors import FormatError
from ..formats.files import replace_directory
from ..pretokenizers import (
    Pretokenizer,
    PretokenizerSpec,
    resolve,
)
from .bpe import BpeOptions, merge_counted
from .corpus import (
    MAX_COUNT,
    add_batch,
    batches_of,
    check_special_tokens,
    progress_bar,
)
from .shards import (
    FORMAT,
    MANIFEST,
    MAX_PARTITIONS,
    check_partitions,
    entry_problem,
    file_id,
    read_manifest,
    read_shard,
    shard_name,
    write_manifest,
    write_shard,
)

# A distinct pre-token costs about this much in the core's counting table, its
# bytes and the table's slack included (measured: 196-198 B on English and on
# multilingual text).
BYTES_PER_ENTRY = 200
BATCH_CHARS = 4 << 20
# Counting holds, besides the counts (max_memory), one batch of text, the
# core's per-thread tables for it and one group of partitions being written
# (FLUSH_RECORDS records, or one partition when that is more): the stated
# peak is max_memory + this (the interpreter and imports included).
OVERHEAD_BYTES = 160 << 20
# read_counts hands records to the core in lists of this length.
ADD_BATCH = 1 << 16
# A flush takes the counts out of the core in groups of partitions (one pass
# over the table per group) of about this many records at most, or of one
# partition when that is more: few passes, and Python objects for a bounded
# part of the counts.
FLUSH_RECORDS = 1 << 18


def check_max_memory(max_memory: object) -> int:
    if isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory < 0:
        raise ValueError(f"max_memory must be a non-negative int (bytes), not {max_memory!r}")
    return max_memory


# The names a count run writes in its directory (shard_name, manifest, their
# temporary names), and the map outputs of bytepair.corpus.on_ray (STAGING/NNNNN/):
# only these, and the shards a bytepair-counts manifest lists, are replaced.
_OWN_NAME = re.compile(rf"(?:part-\d{{5,}}-\d{{5,}}\.bin|{re.escape(MANIFEST)})(?:\.tmp)?")
STAGING = "_map"
_STAGED = re.compile(r"\d{5,}")


def _listed_files(manifest_path: Path) -> set[str]:
    """The shard files a bytepair-counts manifest lists; a FormatError when
    the file is not such a manifest (another tool's: not ours to replace)."""
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise FormatError(
            manifest_path, f"not the manifest of {FORMAT}: not a count directory, nothing replaced"
        )
    shards = manifest.get("shards")
    return {
        entry["file"]
        for entry in (shards if isinstance(shards, list) else [])
        if isinstance(entry, dict) and entry_problem(entry, MAX_PARTITIONS) is None
    }


def _own_files(out: Path, staged: bool = True) -> tuple[list[Path], bool]:
    """The files of a count run in ``out`` (and its staging directories), and
    whether it holds a bytepair-counts manifest. A FormatError names the first
    entry a count run did not write (a user's file, another tool's manifest):
    nothing is deleted then."""
    names = sorted(os.listdir(out))
    listed = _listed_files(out / MANIFEST) if MANIFEST in names else set()
    own: list[Path] = []
    foreign: list[str] = []
    for name in names:
        path = out / name
        if staged and name == STAGING and path.is_dir() and not path.is_symlink():
            for task in sorted(os.listdir(path)):
                if not _STAGED.fullmatch(task) or not (path / task).is_dir():
                    foreign.append(f"{STAGING}/{task}")
                    continue
                files, _ = _own_files(path / task, staged=False)
                own += files
                own.append(path / task)
            own.append(path)
        elif (_OWN_NAME.fullmatch(name) or name in listed) and not path.is_dir():
            own.append(path)
        else:
            foreign.append(name)
    if foreign:
        others = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise FormatError(
            out / foreign[0],
            f"not a file of a count directory{others}: counting writes into an empty "
            "directory or replaces only its own counts; move this away or count into "
            "another directory",
        )
    return own, MANIFEST in names


def prepare_output(out: Union[str, os.PathLike], overwrite: bool = False) -> Path:
    """Makes ``out`` ready for a count run: creates it, or checks that it is
    empty, or (``overwrite``) deletes the counts of an earlier run there. A
    directory holding anything a count run does not write (a user's file,
    another tool's manifest) is a FormatError naming it, whatever
    ``overwrite``: nothing is deleted; earlier counts without ``overwrite``
    are a FileExistsError. (This deletes the old counts at once;
    :func:`count_to_shards` keeps them until the new ones are complete.)"""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out}: not a directory; counts are written into a directory")
    if not out.is_dir() or not os.listdir(out):
        out.mkdir(parents=True, exist_ok=True)
        return out
    if not overwrite:
        if _own_files(out)[1]:
            raise FileExistsError(
                f"{out} already holds counts; pass overwrite=True (--force) to replace them"
            )
        raise FileExistsError(
            f"{out} holds an unfinished count run (shards, no {MANIFEST}); pass "
            "overwrite=True (--force) to replace it"
        )
    _delete_counts(out)
    return out


def _delete_counts(out: Path) -> None:
    """Deletes the files of a count run in ``out``, checked first (a
    FormatError deleting nothing when it holds anything else, see _own_files)."""
    own, _ = _own_files(out)
    for path in own:  # files before their directories
        if path.is_dir():
            path.rmdir()
        else:
            path.unlink()


def replacing(run: Callable[..., Path], inputs, out: Union[str, os.PathLike], **options) -> Path:
    """``run(inputs, out, **options)``: :func:`count_to_shards`'s work, or
    ``bytepair.corpus.on_ray.count_on_ray``. With ``overwrite=True`` and counts in
    ``out``, the new counts are written to a new directory beside it that
    replaces it once complete (``formats.replace_directory``):
    prepare_output(overwrite=True) would delete the old counts before the
    run, and a failed or interrupted run would leave nothing."""
    out = Path(out)
    if not (options.get("overwrite") and out.is_dir() and os.listdir(out)):
        return run(inputs, out, **options)
    _own_files(out)  # a refusal (a file counting does not write) comes before any work
    if isinstance(inputs, Documents) and not inputs.started:
        # Listed first (a missing input fails here), leaving the old counts out.
        inputs = inputs.excluding(out)
        inputs.files()
    with replace_directory(out, _delete_counts) as new:
        run(inputs, new, **{**options, "overwrite": False})
    return out


@functools.lru_cache(maxsize=8)
def _divisors(n: int) -> tuple[int, ...]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return tuple(sorted({*small, *(n // d for d in small)}))


def _groups(partitions: int, records: int) -> int:
    """How many groups of partitions a flush takes out of the core, one pass
    over the counts each: the fewest (a divisor of ``partitions``, so that
    ``crc32 % groups`` picks whole partitions) whose groups hold at most
    :data:`FLUSH_RECORDS` records, else one group per partition."""
    if records <= FLUSH_RECORDS:
        return 1
    for groups in _divisors(partitions):
        if records <= FLUSH_RECORDS * groups:
            return groups
    return partitions


class _Writer:
    def __init__(self, out: Path, partitions: int) -> None:
        self.out, self.partitions, self.run = out, partitions, 0
        self.shards: list[dict] = []

    def flush(self, counter) -> None:
        # A group of partitions at a time, sorted in the core, then cut into
        # its partitions in one pass (each keeps the sorted order): a few
        # passes over the counts however many partitions there are, and
        # Python objects for at most FLUSH_RECORDS records (or one partition).
        partitions = self.partitions
        groups = _groups(partitions, len(counter))
        written = []
        for group in range(groups):
            records = counter.partition_items(group, groups)
            if groups == partitions:
                buckets = {group: records} if records else {}
            else:
                buckets = {}
                for record in records:
                    buckets.setdefault(zlib.crc32(record[0]) % partitions, []).append(record)
            del records
            for partition in sorted(buckets):
                entry = write_shard(
                    self.out / shard_name(partition, self.run), buckets.pop(partition)
                )
                written.append({"file": entry["file"], "partition": partition, **entry})
        self.shards.extend(sorted(written, key=lambda e: e["partition"]))
        self.run += 1
        counter.clear()


def count_to_shards(
    documents: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
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
    (a progress bar in characters when ``progress``, default: stderr is a terminal).

    ``documents`` is what :func:`bytepair.train` takes and reads as it does:
    one text (a str, one document), a path (read by
    :func:`bytepair.read_documents`), or an iterable of texts and paths, e.g.
    ``read_documents(paths, field="body")``. ``max_memory``
    (bytes, see the module docstring) bounds the counts held in memory.
    ``overwrite`` replaces the counts of an earlier run in ``out`` (never
    other files, see :func:`prepare_output`), only once the new ones are
    complete (see :func:`replacing`)."""
    return replacing(
        _count_to_shards,
        documents,
        out,
        pretokenizer=pretokenizer,
        special_tokens=special_tokens,
        partitions=partitions,
        max_memory=max_memory,
        overwrite=overwrite,
        progress=progress,
    )


def _count_to_shards(
    documents: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
    out: Union[str, os.PathLike],
    *,
    pretokenizer: PretokenizerSpec,
    special_tokens: Sequence[str],
    partitions: int,
    max_memory: int,
    overwrite: bool,
    progress: Optional[bool],
) -> Path:
    out = Path(out)
    check_partitions(partitions)
    check_max_memory(max_memory)
    special_tokens = check_special_tokens(special_tokens)
    pre = resolve(pretokenizer)
    if isinstance(documents, Documents) and not documents.started:
        # read_documents' inputs: listed now (a missing input fails before
        # the output is touched), without the output directory inside one.
        documents = documents.excluding(out)
        documents.files()
    prepare_output(out, overwrite)
    counter = _native.PretokenCounter(
        special_tokens, pre.kind, pre.pattern if pre.kind == "regex" else None
    )
    writer = _Writer(out, partitions)
    bar = progress_bar(progress, desc="counting", unit=" chars", unit_scale=True)
    first = 0
    try:
        with contextlib.closing(batches_of(documents, BATCH_CHARS)) as batches:
            for batch in batches:
                add_batch(counter, batch, first, "document")
                size = sum(map(len, batch))
                if bar is not None:
                    bar.update(size)
                first += len(batch)
                # After each full batch (the last one may be shorter).
                if size >= BATCH_CHARS and len(counter) * BYTES_PER_ENTRY > max_memory:
                    writer.flush(counter)
    finally:
        if bar is not None:
            bar.close()
    writer.flush(counter)
    write_manifest(out, pre, special_tokens, partitions, writer.shards)
    return out


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


# A shard as read_counts reads it: its path, its manifest entry and its directory's partitions.
_Listed = tuple[Path, dict, int]


def _listed_shards(directories: list[Path]) -> list[_Listed]:
    """Every shard of every directory; a FormatError when two directories list
    the same file (by a link or a path), whose counts would be added twice."""
    shards: list[_Listed] = []
    seen: dict[object, tuple[Path, int, Path]] = {}
    for directory in directories:
        manifest = read_manifest(directory)
        for i, entry in enumerate(manifest["shards"]):
            path = directory / entry["file"]
            file = file_id(path)
            if file in seen:
                other, j, first = seen[file]
                raise FormatError(
                    directory / MANIFEST,
                    f"{path} is the file of shards[{j}] of {other / MANIFEST} ({first}): "
                    "its counts would be added twice",
                    f"shards[{i}].file",
                )
            seen[file] = (directory, i, path)
            shards.append((path, entry, manifest["partitions"]))
    return shards


def _held(pretoken: bytes, shards: list[_Listed]) -> list[tuple[Path, int]]:
    """(shard, count) of each of ``shards`` (those of its partition) holding ``pretoken``."""
    held = []
    for path, entry, partitions in shards:
        if zlib.crc32(pretoken) % partitions != entry["partition"]:
            continue
        for other, count in read_shard(path):
            if other >= pretoken:
                if other == pretoken:
                    held.append((path, count))
                break
    return held


def _overflow(counter, batch: list, first: int, shard: _Listed, earlier: list[_Listed]):
    """The error for ``batch`` (records ``first``... of ``shard``), whose counts
    overflowed 2^64-1 when the core added them: it names the pre-token, this
    shard and the shards read before it that hold it."""
    path, _, partitions = shard
    keys = {pretoken for pretoken, _ in batch}
    groups = {zlib.crc32(pretoken) % partitions for pretoken in keys}
    if len(groups) <= 8:  # one for a shard of one partition
        table = [r for g in sorted(groups) for r in counter.partition_items(g, partitions)]
    else:
        table = counter.items()
    stored = {pretoken: count for pretoken, count in table if pretoken in keys}
    # The records before the one that overflowed were added, so `stored` alone
    # cannot tell it: the shards read before say what it was added to.
    for i, (pretoken, count) in enumerate(batch):
        if stored.get(pretoken, 0) + count <= MAX_COUNT:
            continue
        held = _held(pretoken, earlier)
        if sum(c for _, c in held) + count > MAX_COUNT:
            before = ", ".join(f"{p} ({c})" for p, c in held)
            return FormatError(
                path,
                f"the count of pre-token {pretoken!r} overflows 2^64-1: {count} here, "
                f"added to the shards read before it: {before}",
                f"record {first + i}",
            )
    return FormatError(
        path, "a pre-token count overflows 2^64-1 added to the shards read before this one"
    )


def read_counts(directories: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]]):
    """A PretokenCounter holding the summed counts of every shard of every
    directory (their pre-tokenizers and special tokens must agree, no shard
    file is listed twice, a sum above 2^64-1 is a FormatError naming the
    pre-token and the shards), and the settings (pretokenizer kind, pattern,
    special tokens)."""
    directories = _directories(directories)
    kind, pattern, specials = settings = read_settings(directories)
    counter = _native.PretokenCounter(list(specials), kind, pattern)
    shards = _listed_shards(directories)
    for n, shard in enumerate(shards):
        path, entry, _ = shard
        records = read_shard(path, sha256=entry["sha256"], records=entry["records"])
        batch: list[tuple[bytes, int]] = []
        first = 0
        for record in records:
            batch.append(record)
            if len(batch) >= ADD_BATCH:
                _add_counts(counter, batch, first, shards, n)
                first += len(batch)
                batch = []
        _add_counts(counter, batch, first, shards, n)
    return counter, settings


def _add_counts(counter, batch: list, first: int, shards: list[_Listed], n: int) -> None:
    """Add ``batch`` (records ``first``... of ``shards[n]``) to ``counter``."""
    try:
        counter.add_counts(batch)
    except ValueError:  # the core's only error here: a sum above 2^64-1
        raise _overflow(counter, batch, first, shards[n], shards[:n]) from None


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
