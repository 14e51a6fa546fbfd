"""Counting and dataset encoding on a Ray cluster (``pip install 'bytepair[ray]'``).

:func:`count_on_ray` counts groups of input files in parallel Ray tasks (the
map), then merges partition ``p`` of every map output into one sorted shard in
one task per partition (the reduce); the driver writes the manifest last. The
result is an ordinary count directory: pre-token counts add up exactly, so
``bytepair train --from-counts`` gives the merges of training on the text,
and the shards are those one ``count_to_shards`` run writes when its counts fit
in memory.

:func:`encode_dataset_on_ray` encodes each input file in its own Ray task with
:mod:`bytepair.corpus.dataset`; shards never span files, so the shards are byte for
byte those of :func:`bytepair.corpus.dataset.encode_dataset`.

Requirements:

- the inputs and the output directory must be at the same path on the driver
  and on every worker node (a shared filesystem: NFS, a cluster volume...):
  tasks read the inputs and write shards there, the driver lists the inputs
  and writes the manifest;
- workers need ``bytepair`` importable (install it on the cluster's image, or
  pass a ``runtime_env`` to ``ray.init`` yourself before calling these).

``address``: when Ray is already initialised in this process it is used as
is; otherwise ``ray.init(address=address)`` (``None``: the cluster in
``RAY_ADDRESS`` or a running local one, else a new local one; ``"auto"``: a
running cluster; ``"ray://host:10001"``: Ray Client) and ``ray.shutdown()``
at the end. An error in a task is raised as the task raised it (a
:class:`~bytepair.errors.FormatError` names the file and line), not as Ray's
wrapper.
"""

from __future__ import annotations

import heapq
import logging
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional, Union

from ..pretokenizers import Pretokenizer, PretokenizerSpec, resolve
from ..training import counts
from ..training.corpus import check_special_tokens, progress_bar
from ..training.shards import (
    check_partitions,
    merge_shards,
    read_manifest,
    shard_name,
    write_manifest,
)
from .sources import PathInput, input_files, read_documents

INSTALL_HINT = "Ray is not installed: pip install 'bytepair[ray]'"
# Map outputs go here inside the output directory (so they are on the shared filesystem too).
STAGING = counts.STAGING


def import_ray() -> Any:
    """The ``ray`` module, or an ImportError telling how to install it."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    return ray


@contextmanager
def ray_session(address: Optional[str] = None) -> Iterator[Any]:
    """Ray, initialised: the caller's session if there is one, else one
    started (or attached) here and shut down on leaving."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    ray.init(address=address, logging_level=logging.WARNING)
    try:
        yield ray
    finally:
        ray.shutdown()


# How long a failed run waits for the tasks it cancelled to stop.
CANCEL_WAIT_SECONDS = 60


def _gather(ray: Any, work: dict, bar: Any = None) -> list:
    """The results of the task refs ``work`` (ref -> progress weight), in its
    order. A failed task cancels the rest and re-raises its own exception."""
    results: dict = {}
    pending = list(work)
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                results[ref] = ray.get(ref)
                if bar is not None:
                    bar.update(work[ref])
    except BaseException as e:
        for ref in pending:
            ray.cancel(ref)
        if pending:
            # A running task may only stop when it next runs Python code:
            # wait, so that none writes after the caller has cleaned up.
            ray.wait(pending, num_returns=len(pending), timeout=CANCEL_WAIT_SECONDS)
        cause = getattr(e, "cause", None)
        if isinstance(e, ray.exceptions.RayTaskError) and isinstance(cause, BaseException):
            # Ray's wrapper carries the remote traceback in its message; the
            # cause is the library's own exception (picklable, with its message).
            raise cause from None
        raise
    finally:
        if bar is not None:
            bar.close()
    return [results[ref] for ref in work]


def _cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def group_files(files: Sequence[Path], groups: int) -> list[list[Path]]:
    """``files`` in at most ``groups`` groups of about equal total size (the
    largest file first into the lightest group); a file is never split, and
    each group keeps the input order."""
    groups = max(1, min(groups, len(files)))
    heap = [(0, g) for g in range(groups)]
    members: list[list[int]] = [[] for _ in range(groups)]
    by_size = sorted(range(len(files)), key=lambda i: -files[i].stat().st_size)
    for i in by_size:
        total, g = heapq.heappop(heap)
        members[g].append(i)
        heapq.heappush(heap, (total + files[i].stat().st_size, g))
    return [[files[i] for i in sorted(m)] for m in members if m]


# ---- tasks (plain functions; wrapped with ray.remote at call time so this
# module imports without Ray) ----


def _count_group(
    files: list[str],
    directory: str,
    field: str,
    pretokenizer: Pretokenizer,
    special_tokens: list[str],
    partitions: int,
    max_memory: int,
) -> dict:
    # overwrite=True: a retried task (a lost worker) starts its directory afresh.
    counts.count_to_shards(
        read_documents(files, field=field),
        directory,
        pretokenizer=pretokenizer,
        special_tokens=special_tokens,
        partitions=partitions,
        max_memory=max_memory,
        overwrite=True,
        progress=False,
    )
    return read_manifest(directory)


def _reduce_partition(partition: int, sources: list[tuple[str, dict]], out_path: str) -> dict:
    entry = merge_shards([path for path, _ in sources], out_path, entries=[e for _, e in sources])
    return {"file": entry["file"], "partition": partition, **entry}


def count_on_ray(
    inputs: Union[PathInput, Iterable[PathInput]],
    out: Union[str, os.PathLike],
    *,
    field: str = "text",
    pretokenizer: PretokenizerSpec = "gpt2",
    special_tokens: Sequence[str] = (),
    partitions: int = 16,
    max_memory: int = 1 << 30,
    overwrite: bool = False,
    address: Optional[str] = None,
    map_tasks: Optional[int] = None,
    progress: Optional[bool] = None,
) -> Path:
    """Count the pre-tokens of ``inputs`` (files, globs, directories, as
    :func:`bytepair.corpus.sources.read_documents` reads them) on Ray into the count
    directory ``out``; see the module docstring for the cluster requirements.

    Map: ``map_tasks`` tasks (default: twice the cluster's CPUs, at most one
    per file) each count a group of files of about equal size with
    :func:`bytepair.training.counts.count_to_shards` (``max_memory`` bounds each task)
    into ``out/_map/<task>``. Reduce: one task per partition merges that
    partition of every map output into one sorted shard, streamed (about 1 MiB
    of memory per merged shard). Then the manifest is written, last, and the
    map outputs are removed. Progress (default: stderr is a terminal) counts
    input bytes of finished map tasks, then merged partitions.
    """
    out = Path(out)
    check_partitions(partitions)
    counts.check_max_memory(max_memory)
    if map_tasks is not None and (isinstance(map_tasks, bool) or map_tasks < 1):
        raise ValueError(f"map_tasks must be a positive int, not {map_tasks!r}")
    pre, specials = resolve(pretokenizer), check_special_tokens(special_tokens)
    # A missing input fails here, before any task; the output is no input.
    files = list(input_files(inputs, exclude=[out]))
    # Checks that out holds nothing but counts (its own map outputs included)
    # before anything is deleted there.
    counts.prepare_output(out, overwrite)
    staging = out / STAGING
    try:
        with ray_session(address) as ray:
            groups = group_files(files, map_tasks or 2 * _cluster_cpus(ray))
            count_task = ray.remote(num_cpus=1)(_count_group)
            maps = {
                count_task.remote(
                    [str(f) for f in group],
                    str(staging / f"{g:05d}"),
                    field,
                    pre,
                    specials,
                    partitions,
                    max_memory,
                ): sum(f.stat().st_size for f in group)
                for g, group in enumerate(groups)
            }
            bar = progress_bar(
                progress,
                desc="counting on Ray",
                total=sum(maps.values()),
                unit="B",
                unit_scale=True,
            )
            manifests = _gather(ray, maps, bar)

            sources: dict[int, list[tuple[str, dict]]] = {}
            for g, manifest in enumerate(manifests):
                for shard in manifest["shards"]:
                    path = str(staging / f"{g:05d}" / shard["file"])
                    sources.setdefault(shard["partition"], []).append((path, shard))
            reduce_task = ray.remote(num_cpus=1)(_reduce_partition)
            reduces = {
                reduce_task.remote(p, sources[p], str(out / shard_name(p, 0))): 1
                for p in sorted(sources)
            }
            bar = progress_bar(progress, desc="merging partitions", total=len(reduces))
            shards = _gather(ray, reduces, bar)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # no manifest: an unfinished run
        raise
    write_manifest(out, pre, specials, partitions, shards)
    shutil.rmtree(staging, ignore_errors=True)
    return out


def _encode_file(
    path: str, file_index: int, tokenizer: Any, out: str, settings: Any, existing: list[str]
) -> list:
    from . import dataset

    return dataset.encode_file(
        Path(path), file_index, tokenizer, Path(out), settings, existing=existing
    )


def encode_dataset_on_ray(
    inputs: Union[PathInput, Iterable[PathInput]],
    tokenizer_spec: Any,
    out: Union[str, os.PathLike],
    *,
    field: str = "text",
    eot: Union[int, str, None] = None,
    dtype: Optional[str] = None,
    shard_tokens: Optional[int] = None,
    allowed_special: Union[str, Iterable[str]] = (),
    resume: bool = False,
    overwrite: bool = False,
    address: Optional[str] = None,
    progress: Optional[bool] = None,
) -> Path:
    """:func:`bytepair.corpus.dataset.encode_dataset` on Ray: the run is planned here
    (``dataset.plan``), each input file not done yet is encoded by one Ray task
    (``dataset.encode_file``), then ``dataset.finish`` writes the manifest.
    The shards are byte for byte those of ``encode_dataset`` with the same
    options (shards never span files). ``tokenizer_spec``: a tokenizer, or a
    path or encoding name loaded here; it goes to the tasks once through Ray's
    object store (pickled: a model's tokens and merges), so workers need no
    tokenizer files. A failed task leaves the complete files' shards for
    ``resume=True``. Progress (default: stderr is a terminal) counts input
    bytes of finished files. See the module docstring for the cluster
    requirements."""
    from . import dataset

    tokenizer = dataset.as_tokenizer(tokenizer_spec)  # loaded once, shared by the tasks
    options = {} if shard_tokens is None else {"shard_tokens": shard_tokens}
    run = dataset.plan(
        inputs,
        tokenizer,
        out,
        field=field,
        eot=eot,
        dtype=dtype,
        allowed_special=allowed_special,
        resume=resume,
        overwrite=overwrite,
        **options,
    )
    todo = [i for i in range(len(run.files)) if i not in run.done]
    with ray_session(address) as ray:
        shared = ray.put(tokenizer)
        task = ray.remote(num_cpus=1)(_encode_file)
        work = {
            task.remote(
                str(run.files[i]), i, shared, str(run.out), run.settings, run.existing(i)
            ): run.sizes[i]
            for i in todo
        }
        bar = progress_bar(
            progress,
            desc="encoding on Ray",
            unit="B",
            unit_scale=True,
            total=sum(run.sizes),
            initial=sum(run.sizes[i] for i in run.done),
        )
        results = _gather(ray, work, bar)
    dataset.finish(run.out, run, [entry for entries in results for entry in entries])
    return run.out
