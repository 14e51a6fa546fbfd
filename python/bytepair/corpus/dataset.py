"""Encoding a corpus into token shards that numpy memory-maps; resumable.

``encode_dataset(inputs, tokenizer, out)`` reads the documents of ``inputs``
(:func:`bytepair.corpus.sources.read_documents`: text, JSON lines, Parquet, .gz/.zst,
globs, directories) and writes to the directory ``out``:

- ``shard-FFFFF-PPPPP.tokens.npy``: the tokens of part ``P`` of input file
  ``F``, a 1-D ``uint16`` array when every id is below 65536, else ``uint32``
  (a ``.npy`` file: ``numpy.load(path, mmap_mode="r")`` maps it);
- ``shard-FFFFF-PPPPP.offsets.npy``: ``int64``, one more entry than the shard
  has documents, starting at 0: document ``i`` is ``tokens[o[i]:o[i + 1]]``.
  With an end-of-text id (``eot``) every document is followed by it, and the
  offsets count it: it is the last token of each document's slice;
- ``shard-FFFFF-PPPPP.json``: the shard's entry (documents, tokens, sizes
  and sha256 of both files), written after them: a shard is complete once
  its entry exists;
- ``file-FFFFF.json``: input file ``F`` is complete (its shard entries);
- ``run.json``: the settings and the input files (paths, sizes, modification
  times), written first; ``dataset.json``: the same plus every shard, written
  last of all.

A shard closes as soon as it holds ``shard_tokens`` tokens, after the
document that got it there: shards never split a document and never span two
input files, so each file is encoded on its own (:func:`encode_file`, here or
as a Ray task) with the same result. Every file is written under a ``.tmp``
name and renamed into place. Resuming (``resume=True``) checks that the
settings, the tokenizer and the input files are those of the run, deletes
temporary and incomplete files, skips complete input files and, in a file
that was cut short, the documents of its complete shards: the output is
byte for byte that of an uninterrupted run. Replacing a dataset
(``overwrite=True``) builds the new one in a directory beside it, which takes
its place once complete: a failed or interrupted run leaves the old one as it
was. :class:`TokenDataset` reads it.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import queue
import re
import struct
import threading
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Optional, Union, cast

import numpy as np

from ..errors import FormatError
from ..formats.files import replace_directory
from ..training.corpus import progress_bar
from .sources import input_files, read_documents

FORMAT = "bytepair-dataset"
VERSION = 1
RUN = "run.json"
MANIFEST = "dataset.json"
TMP = ".tmp"
DEFAULT_SHARD_TOKENS = 1 << 27  # 256 MiB of uint16 tokens
INT64_MAX = (1 << 63) - 1
# Offsets are int64: a shard cannot count more tokens (and numpy refuses
# larger limits with an OverflowError in the middle of a run).
MAX_SHARD_TOKENS = INT64_MAX
DTYPES: dict[str, np.dtype] = {"uint16": np.dtype("<u2"), "uint32": np.dtype("<u4")}
OFFSETS_DTYPE = np.dtype("<i8")
# Texts go to the encoder in batches of about this many characters: enough
# work for every core per call; the reader fills the next few meanwhile.
BATCH_CHARS = 2 << 20
QUEUED_BATCHES = 4
# The .npy header of a tokens file has this fixed size, so it can be written
# before the length is known and rewritten in place when the shard closes.
HEADER_BYTES = 128
ENTRY_KEYS = frozenset(
    f"{kind}_{what}" for kind in ("tokens", "offsets") for what in ("file", "bytes", "sha256")
) | {"name", "file_index", "part", "documents", "tokens"}
OnProgress = Optional[Callable[[int], None]]
PathLike = Union[str, "os.PathLike[str]"]


# ---- Settings and the tokenizer ----


@dataclass(frozen=True)
class DatasetSettings:
    """What decides the tokens of a run; a resumed run must have the same."""

    field: str  # the JSON lines / Parquet field holding the text
    eot: Optional[int]  # id appended after every document, or None
    dtype: str  # "uint16" or "uint32"
    shard_tokens: int  # a shard closes once it holds this many tokens
    allowed_special: Union[str, tuple[str, ...]]  # "all", or the specials recognised in text
    tokenizer_fingerprint: str  # tokenizer_fingerprint() of the tokenizer

    def to_json(self) -> dict:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        if isinstance(self.allowed_special, tuple):
            values["allowed_special"] = list(self.allowed_special)
        return values

    @classmethod
    def from_json(cls, data: object, source: object = RUN) -> DatasetSettings:
        """Settings from :meth:`to_json`'s dict; a FormatError naming ``source`` when malformed."""
        names = [f.name for f in fields(cls)]
        if not isinstance(data, dict) or sorted(data) != sorted(names):
            raise FormatError(source, f"settings must have exactly the keys {names}", "settings")
        allowed = data["allowed_special"]
        if isinstance(allowed, list) and all(isinstance(t, str) for t in allowed):
            allowed = tuple(allowed)
        settings = cls(**{**data, "allowed_special": allowed})
        problem = _settings_problem(settings)
        if problem:
            raise FormatError(source, problem, "settings")
        return settings


def _settings_problem(settings: DatasetSettings) -> Optional[str]:
    def whole(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not isinstance(settings.field, str):
        return f"field must be text, not {settings.field!r}"
    if settings.eot is not None and not (whole(settings.eot) and settings.eot >= 0):
        return f"eot must be a token id or None, not {settings.eot!r}"
    if settings.dtype not in DTYPES:
        return f"dtype must be one of {list(DTYPES)}, not {settings.dtype!r}"
    if not whole(settings.shard_tokens) or not 1 <= settings.shard_tokens <= MAX_SHARD_TOKENS:
        return (
            f"shard_tokens must be an int from 1 to {MAX_SHARD_TOKENS}, "
            f"not {settings.shard_tokens!r}"
        )
    if settings.allowed_special != "all" and not isinstance(settings.allowed_special, tuple):
        return (
            f"allowed_special must be 'all' or a tuple of texts, not {settings.allowed_special!r}"
        )
    if not isinstance(settings.tokenizer_fingerprint, str):
        return "tokenizer_fingerprint must be text"
    return None


# Fields the models gained after datasets began to record fingerprints: left
# out while they hold their default, so that a run started before them (with
# a tokenizer that has no use for them) still resumes.
_LATER_FIELDS = frozenset(
    {
        ("BPEModel", "added_tokens"),
        ("HFPipeline", "isolate_unknown"),
        ("SentencePieceModel", "normalize"),
    }
)


def _feed(digest, value: object) -> None:
    """Hashes ``value`` (dataclasses, containers, scalars) so that equal models
    give equal digests in any process; every item is tagged and length-prefixed."""
    if is_dataclass(value) and not isinstance(value, type):
        digest.update(b"D" + type(value).__name__.encode())
        for f in fields(value):
            later = (type(value).__name__, f.name) in _LATER_FIELDS
            if later and getattr(value, f.name) == f.default:
                continue
            _feed(digest, f.name)
            _feed(digest, getattr(value, f.name))
    elif isinstance(value, dict) or hasattr(value, "items"):
        items = sorted(value.items(), key=lambda item: repr(item[0]))
        digest.update(b"M%d:" % len(items))
        for key, item in items:
            _feed(digest, key)
            _feed(digest, item)
    elif isinstance(value, (tuple, list)):
        digest.update(b"L%d:" % len(value))
        for item in value:
            _feed(digest, item)
    elif isinstance(value, (bytes, bytearray)):
        digest.update(b"B%d:" % len(value) + bytes(value))
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        digest.update(b"S%d:" % len(data) + data)
    elif isinstance(value, float):
        digest.update(b"F" + value.hex().encode())
    elif value is None or isinstance(value, (bool, int)):
        digest.update(b"I" + repr(value).encode() + b";")
    else:
        raise TypeError(f"cannot fingerprint a {type(value).__name__}")


_fingerprints: dict[int, tuple[object, str]] = {}
# Fingerprints name the family of the tokenizer's class (as they did when one
# class served every flavor), so datasets of earlier versions resume.
_FAMILIES = ("SentencePieceTokenizer", "Tokenizer", "CharBPE")


def _family(tokenizer: object) -> str:
    names = [cls.__name__ for cls in type(tokenizer).__mro__]
    return next((name for name in names if name in _FAMILIES), names[0])


def tokenizer_fingerprint(tokenizer) -> str:
    """sha256 of everything that decides a tokenizer's ids (its model, and for
    a SentencePieceTokenizer whose rules it follows); cached per object."""
    cached = _fingerprints.get(id(tokenizer))
    if cached is not None and cached[0] is tokenizer:
        return cached[1]
    digest = hashlib.sha256()
    _feed(digest, _family(tokenizer))
    _feed(digest, tokenizer.model)
    _feed(digest, getattr(tokenizer, "flavor", None))
    _feed(digest, getattr(tokenizer, "extra", None))  # a tokenizer.json's HF pipeline
    fingerprint = digest.hexdigest()
    if len(_fingerprints) >= 8:
        _fingerprints.clear()
    _fingerprints[id(tokenizer)] = (tokenizer, fingerprint)  # holds it, so the id stays its own
    return fingerprint


def as_tokenizer(tokenizer):
    """``tokenizer`` itself, or the one a path or encoding name names."""
    if isinstance(tokenizer, (str, os.PathLike)):
        from ..api import load_any

        return load_any(tokenizer)
    return tokenizer


def _eot_id(tokenizer, eot: Union[int, str, None]) -> Optional[int]:
    if eot is None:
        return None
    if isinstance(eot, str):
        # A non-special added token (tokenizer.json "special": false) is a
        # token with a text of its own too.
        specials = {**tokenizer.special_tokens, **getattr(tokenizer, "added_tokens", {})}
        if eot not in specials:
            raise ValueError(
                f"eot {eot!r} is not a special token of this tokenizer "
                f"(it has {sorted(specials) or 'none'}); give its text or an id"
            )
        return specials[eot]
    try:
        token = operator.index(eot)  # numpy integers too
    except TypeError:
        token = None
    if token is None or isinstance(eot, bool):
        raise TypeError(f"eot must be a special token's text, a token id or None, not {eot!r}")
    if not 0 <= token < tokenizer.n_vocab:
        raise ValueError(
            f"eot {token} is not a token id of this tokenizer (0 .. {tokenizer.n_vocab - 1})"
        )
    try:
        tokenizer.decode_single_token_bytes(token)
    except ValueError:  # an unused id (tiktoken vocabularies have gaps)
        raise ValueError(
            f"eot {token} is not a token id of this tokenizer: no token has that id "
            "(it is unused); give a special token's text or the id of a token"
        ) from None
    return token


def make_settings(
    tokenizer,
    *,
    field: str = "text",
    eot: Union[int, str, None] = None,
    dtype: Optional[str] = None,
    shard_tokens: int = DEFAULT_SHARD_TOKENS,
    allowed_special: Union[str, Iterable[str]] = (),
) -> DatasetSettings:
    """The settings of a run, checked against ``tokenizer`` (``eot``: a
    special token's text or an id; ``dtype`` None: the smallest that holds
    every id)."""
    n_vocab = tokenizer.n_vocab
    if dtype is None:
        dtype = "uint16" if n_vocab <= 1 << 16 else "uint32"
    elif dtype == "uint16" and n_vocab > 1 << 16:
        raise ValueError(
            f"dtype uint16 holds ids up to 65535, but this tokenizer has {n_vocab} ids "
            f"(up to {n_vocab - 1}); use uint32"
        )
    if allowed_special != "all":
        if isinstance(allowed_special, str):
            raise TypeError("allowed_special must be 'all' or a collection of special tokens")
        allowed_special = tuple(sorted(set(allowed_special)))
        # An added token is named harmlessly: every encode cuts it out anyway.
        added = getattr(tokenizer, "added_tokens", {})
        unknown = [
            t for t in allowed_special if t not in tokenizer.special_tokens and t not in added
        ]
        if unknown:
            raise ValueError(f"allowed_special names {unknown}, which are not special tokens")
    settings = DatasetSettings(
        field=field,
        eot=_eot_id(tokenizer, eot),
        dtype=dtype,
        shard_tokens=shard_tokens,
        allowed_special=allowed_special,
        tokenizer_fingerprint=tokenizer_fingerprint(tokenizer),
    )
    problem = _settings_problem(settings)
    if problem:
        raise ValueError(problem)
    _batch_encoder(tokenizer, settings)([""])  # a loaded model may refuse allowed_special now
    return settings


def _batch_encoder(tokenizer, settings: DatasetSettings):
    """texts -> (uint32 ids, int64 offsets), in parallel on all cores, GIL released."""
    allowed = settings.allowed_special
    options = {"allowed_special": allowed, "disallowed_special": ()}  # other specials: text
    return lambda texts: tokenizer.encode_batch_to_numpy(texts, **options)


# ---- Files in the output directory ----


def _shard_name(file_index: int, part: int) -> str:
    return f"shard-{file_index:05d}-{part:05d}"


def _file_record(out: Path, file_index: int) -> Path:
    return out / f"file-{file_index:05d}.json"


# The exact names a run writes (numbers are 05d: five digits or more), each
# first under a .tmp name: only these are ever deleted, never a user's file.
_OWN_NAME = re.compile(
    rf"(?:{re.escape(RUN)}|{re.escape(MANIFEST)}|file-\d{{5,}}\.json"
    rf"|shard-\d{{5,}}-\d{{5,}}\.(?:json|tokens\.npy|offsets\.npy))(?:{re.escape(TMP)})?"
)


def _own(path: Path) -> bool:
    """Whether ``path`` is a file that a run writes in its directory."""
    return _OWN_NAME.fullmatch(path.name) is not None and not path.is_dir()


def _check_replaceable(out: Path, existing: list[Path]) -> None:
    """A FormatError unless ``out`` holds only files a run writes, its
    run.json and dataset.json (at least one) a dataset's, so replacing it
    deletes nothing else. (A run killed while writing its first file,
    run.json, leaves only run.json.tmp: that is replaced too.)"""
    foreign = sorted(p.name for p in existing if not _own(p))
    if foreign:
        others = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise FormatError(
            out / foreign[0],
            f"not a file of a dataset{others}: replacing a dataset deletes only its own "
            "files; move this away or write to another directory",
        )
    names = {p.name for p in existing}
    # Names alone prove nothing (a user's file-00007.json): a dataset has its
    # run.json or dataset.json.
    if not names & {RUN, MANIFEST} and names != {RUN + TMP}:
        raise FormatError(
            out,
            f"holds no {RUN} or {MANIFEST}: not a dataset, nothing replaced; "
            "move its files away or write to another directory",
        )
    for name in (RUN, MANIFEST):
        if not (out / name).exists():
            continue
        try:
            document = _read_json(out / name)
        except FormatError:
            document = None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise FormatError(
                out / name, f"not the {name} of a {FORMAT}: not a dataset, nothing replaced"
            )


def _delete_dataset(out: Path) -> None:
    """Deletes the dataset in ``out``: its files, checked first (a FormatError
    deleting nothing when it holds anything else, see _check_replaceable)."""
    existing = list(out.iterdir())
    _check_replaceable(out, existing)
    for path in existing:
        path.unlink()


def _write_json(path: Path, value: object) -> None:
    temporary = path.with_name(path.name + TMP)
    try:
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:  # Ctrl-C too: leave no temporary file behind
        temporary.unlink(missing_ok=True)
        raise


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FormatError(path, "missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise FormatError(path, f"invalid JSON: {e}") from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 23):
            digest.update(chunk)
    return digest.hexdigest()


def _npy_header(dtype: np.dtype, length: int) -> bytes:
    """numpy's .npy header (format 1.0) of a 1-D array, padded to HEADER_BYTES."""
    text = f"{{'descr': '{dtype.str}', 'fortran_order': False, 'shape': ({length},), }}"
    text = text.ljust(HEADER_BYTES - 11) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def _on_disk(out: Path, entry: dict) -> bool:
    """Whether both files of a shard's entry are in ``out`` with their recorded sizes."""
    try:
        return all(
            (out / entry[f"{kind}_file"]).stat().st_size == entry[f"{kind}_bytes"]
            for kind in ("tokens", "offsets")
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _complete_entry(out: Path, name: str) -> Optional[dict]:
    """The entry of shard ``name`` when it is complete (entry written, both
    files there with their recorded sizes), else None."""
    try:
        entry = json.loads((out / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if _on_disk(out, entry) else None


def _file_entries(out: Path, file_index: int) -> Optional[list[dict]]:
    """The shard entries of a complete input file, else None. A record whose
    shard files were deleted or cut since is not complete: the file is
    encoded again (after its shards that are still whole)."""
    try:
        record = json.loads(_file_record(out, file_index).read_text(encoding="utf-8"))
        entries = list(record["shards"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return entries if all(_on_disk(out, e) for e in entries) else None


# ---- Planning a run ----


@dataclass
class Plan:
    """A run's output directory, settings and input files (absolute paths,
    so that workers elsewhere find them); ``done`` holds the indices of the
    files a resumed run already completed."""

    out: Path
    settings: DatasetSettings
    files: list[Path]
    sizes: list[int]
    done: set[int] = field(default_factory=set)
    # The names of each input file's shard files in ``out`` when the run was
    # planned (what an interrupted run left): encode_file(existing=...).
    leftovers: dict[int, list[str]] = field(default_factory=dict)

    def existing(self, file_index: int) -> list[str]:
        """The names of input file ``file_index``'s shard files in ``out`` when planned."""
        return self.leftovers.get(file_index, [])


def _inputs_json(files: list[Path], sizes: list[int]) -> list[dict]:
    # The modification time too: a file rewritten to the same size must not
    # be resumed as if it were the run's (its first shards would be the old text's).
    return [
        {"path": str(f), "size": s, "mtime_ns": f.stat().st_mtime_ns} for f, s in zip(files, sizes)
    ]


def _describe_input(item: dict) -> str:
    modified = item.get("mtime_ns")
    when = "" if modified is None else f", modified {_format_time(modified)}"
    return f"{item.get('path')} ({item.get('size')} bytes{when})"


def _format_time(ns: object) -> str:
    import datetime

    if not isinstance(ns, int):
        return repr(ns)
    moment = datetime.datetime.fromtimestamp(ns / 1e9, datetime.timezone.utc)
    return moment.isoformat(timespec="microseconds").replace("+00:00", " UTC")


_SHARD_FILE = re.compile(r"shard-(\d{5,})-\d{5,}\.")


def _index_outputs(names: Iterable[str]) -> dict[int, list[str]]:
    """The names of the shard files (complete or not) of each input file's
    index, from one listing of the output directory: planning and resuming
    look a file's shards up here instead of listing the directory once per
    input file, which made runs of many small files quadratic."""
    index: dict[int, list[str]] = {}
    for name in names:
        match = _SHARD_FILE.match(name)
        if match and _OWN_NAME.fullmatch(name):
            index.setdefault(int(match.group(1)), []).append(name)
    return index


def _started(names: set[str], shards: dict[int, list[str]], file_index: int) -> bool:
    """Whether any output of input file ``file_index`` is complete (its record
    or one of its shards' entries, in ``names``, the directory's listing):
    such a file must not have changed."""
    if _file_record(Path(), file_index).name in names:
        return True
    return any(name.endswith(".json") for name in shards.get(file_index, ()))


def _differences(
    run: dict, settings: DatasetSettings, inputs: list[dict], names: set[str]
) -> list[str]:
    """What differs between the run on disk (``names``: its directory's
    listing) and this one, in words. An input with no complete output yet
    may have changed (a file fixed after it made the run fail): nothing of it
    is kept."""
    shards = _index_outputs(names)
    problems = []
    before = run.get("settings", {})
    for name, value in settings.to_json().items():
        if before.get(name) != value:
            what = "the tokenizer" if name == "tokenizer_fingerprint" else name
            problems.append(f"{what} was {before.get(name)!r}, now {value!r}")
    old = run.get("inputs", [])
    if len(old) != len(inputs):
        problems.append(f"the run had {len(old)} input files, now {len(inputs)}")
    for i, (a, b) in enumerate(zip(old, inputs)):
        unstarted = (
            isinstance(a, dict) and a.get("path") == b["path"] and not _started(names, shards, i)
        )
        if a != b and not unstarted:
            problems.append(f"input file {i} was {_describe_input(a)}, now {_describe_input(b)}")
            if len(problems) > 5:
                break
    return problems


def plan(
    inputs: Union[PathLike, Iterable[PathLike]],
    tokenizer,
    out: PathLike,
    *,
    field: str = "text",
    eot: Union[int, str, None] = None,
    dtype: Optional[str] = None,
    shard_tokens: int = DEFAULT_SHARD_TOKENS,
    allowed_special: Union[str, Iterable[str]] = (),
    resume: bool = False,
    overwrite: bool = False,
) -> Plan:
    """Checks the settings, lists the input files and prepares ``out``: a new
    run writes ``run.json``; ``resume`` checks it (a ValueError naming every
    difference) and removes temporary files (:func:`encode_file` removes a
    file's incomplete shards); ``overwrite`` deletes an earlier dataset, and
    is a FormatError naming a file when ``out`` holds one a run does not
    write or no dataset at all. Without either, a non-empty ``out`` is a
    FileExistsError. Files a run does not write are never deleted.
    ``tokenizer``: an object, or a path / encoding name. (This deletes the
    old dataset at once; :func:`encode_dataset` keeps it until the new one is
    complete.)"""
    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other")
    tokenizer = as_tokenizer(tokenizer)
    settings = make_settings(
        tokenizer,
        field=field,
        eot=eot,
        dtype=dtype,
        shard_tokens=shard_tokens,
        allowed_special=allowed_special,
    )
    out = Path(os.path.abspath(out))
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} is a file: a dataset is written into a directory")
    # The output directory is left out of the inputs (it may be inside one).
    files = [Path(os.path.abspath(f)) for f in input_files(inputs, exclude=[out])]
    if not files:
        raise ValueError("no input files")
    for f in files:
        if not f.is_file():
            raise ValueError(
                f"{f}: not a regular file (a named pipe, /dev/stdin, a device): a dataset run "
                "records each input's size and modification time to resume or check it "
                "later; write it to a file first"
            )
    sizes = [f.stat().st_size for f in files]
    inputs_json = _inputs_json(files, sizes)
    existing = list(out.iterdir()) if out.is_dir() else []
    if existing and resume and not (out / RUN).is_file():
        raise FormatError(out, f"no {RUN}: not a dataset directory, nothing to resume")
    if existing and overwrite:
        _delete_dataset(out)
    elif existing and resume:
        run = _read_json(out / RUN)
        if not isinstance(run, dict) or run.get("format") != FORMAT:
            raise FormatError(out / RUN, f"not a {FORMAT} run")
        names = {path.name for path in existing}
        problems = _differences(run, settings, inputs_json, names)
        if problems:
            raise ValueError(f"cannot resume the run in {out}: " + "; ".join(problems))
        if run.get("inputs") != inputs_json:  # inputs changed before any of their output
            _write_json(out / RUN, {**run, "inputs": inputs_json})
        for path in existing:  # leftovers of an interrupted write
            if path.name.endswith(TMP) and _own(path):
                path.unlink()
                names.discard(path.name)
        done = {
            i
            for i in range(len(files))
            if _file_record(out, i).name in names and _file_entries(out, i) is not None
        }
        return Plan(out, settings, files, sizes, done, _index_outputs(names))
    elif existing:
        raise FileExistsError(
            f"{out} is not empty; pass resume=True to finish an interrupted run there, "
            "or overwrite=True to replace the dataset in it"
        )
    out.mkdir(parents=True, exist_ok=True)
    run = {
        "format": FORMAT,
        "version": VERSION,
        "settings": settings.to_json(),
        "n_vocab": tokenizer.n_vocab,
        "inputs": inputs_json,
    }
    _write_json(out / RUN, run)
    return Plan(out, settings, files, sizes)


# ---- Encoding one input file ----


class _Reader(threading.Thread):
    """Reads and decodes one file's documents into batches, while the caller
    encodes the previous ones (the encoder releases the GIL)."""

    DONE = object()

    def __init__(self, path: Path, field: str, skip: int) -> None:
        super().__init__(name=f"bytepair-read-{path.name}", daemon=True)
        self.path, self.field, self.skip = path, field, skip
        self.batches: queue.Queue = queue.Queue(maxsize=QUEUED_BATCHES)
        self.stop = threading.Event()
        self.bytes_read = 0

    def _count(self, n: int) -> None:
        self.bytes_read += n

    def _put(self, item: object) -> bool:
        while not self.stop.is_set():
            try:
                self.batches.put(item, timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def run(self) -> None:
        documents = read_documents(self.path, field=self.field, on_read=self._count)
        try:
            batch: list[str] = []
            chars, skip = 0, self.skip
            for document in documents:
                if skip:  # already in the file's complete shards
                    skip -= 1
                    continue
                batch.append(document)
                chars += len(document)
                if chars >= BATCH_CHARS:
                    if not self._put((batch, self.bytes_read)):
                        return
                    batch, chars = [], 0
            if skip:
                raise FormatError(
                    self.path,
                    f"has fewer documents than its complete shards hold ({self.skip}): it "
                    "changed since they were written; start the dataset over",
                )
            if batch and not self._put((batch, self.bytes_read)):
                return
            self._put(self.DONE)
        except BaseException as e:  # handed to the encoding thread, which raises it
            self._put(e)
        finally:
            documents.close()


class _ShardWriter:
    """Writes the shards of one input file in order, streaming tokens to disk."""

    def __init__(self, out: Path, file_index: int, part: int, settings: DatasetSettings) -> None:
        self.out, self.file_index, self.part = out, file_index, part
        self.dtype = DTYPES[settings.dtype]
        self.eot, self.limit = settings.eot, settings.shard_tokens
        self.entries: list[dict] = []
        self._file: Optional[BinaryIO] = None
        self._ends: list[np.ndarray] = []
        self.tokens = self.documents = 0

    @property
    def _name(self) -> str:
        return _shard_name(self.file_index, self.part)

    def add(self, ids: np.ndarray, offsets: np.ndarray) -> None:
        """Appends a batch (flat ids, offsets of its documents), closing a
        shard after each document that fills it."""
        n = len(offsets) - 1
        if self.eot is not None:
            ids = np.insert(ids, offsets[1:], self.eot)  # after each document
            offsets = offsets + np.arange(n + 1)
        ids = ids.astype(self.dtype, copy=False)
        first = 0
        while first < n:
            base = offsets[first]
            # The first document whose end brings the shard to the limit.
            last = first + int(
                np.searchsorted(offsets[first + 1 :], base + self.limit - self.tokens)
            )
            if last >= n:
                self._append(ids[base : offsets[n]], offsets[first + 1 :] - base)
                return
            self._append(ids[base : offsets[last + 1]], offsets[first + 1 : last + 2] - base)
            self._close_shard()
            first = last + 1

    def _append(self, ids: np.ndarray, ends: np.ndarray) -> None:
        if self._file is None:
            self._file = open(self.out / f"{self._name}.tokens.npy{TMP}", "wb")
            self._file.write(_npy_header(self.dtype, 0))
        self._file.write(np.ascontiguousarray(ids).data.cast("B"))
        self._ends.append(ends + self.tokens)
        self.tokens += len(ids)
        self.documents += len(ends)

    def _close_shard(self) -> None:
        name, f = self._name, self._file
        assert f is not None  # a shard is open: _append opened it
        tokens_path, offsets_path = (self.out / f"{name}.{k}.npy" for k in ("tokens", "offsets"))
        f.seek(0)
        f.write(_npy_header(self.dtype, self.tokens))
        f.flush()
        os.fsync(f.fileno())  # the data is on disk before the name says it is complete
        f.close()
        self._file = None
        os.replace(f.name, tokens_path)
        offsets = np.concatenate([np.zeros(1, OFFSETS_DTYPE), *self._ends]).astype(OFFSETS_DTYPE)
        temporary = offsets_path.with_name(offsets_path.name + TMP)
        with open(temporary, "wb") as g:
            # Not np.save: an interrupt inside its write to a real file comes
            # out of numpy as a TypeError instead of a KeyboardInterrupt.
            g.write(_npy_header(OFFSETS_DTYPE, len(offsets)))
            g.write(offsets.data.cast("B"))
            g.flush()
            os.fsync(g.fileno())
        os.replace(temporary, offsets_path)
        entry = {
            "name": name,
            "file_index": self.file_index,
            "part": self.part,
            "documents": self.documents,
            "tokens": self.tokens,
            "tokens_file": tokens_path.name,
            "tokens_bytes": tokens_path.stat().st_size,
            "tokens_sha256": _sha256(tokens_path),
            "offsets_file": offsets_path.name,
            "offsets_bytes": offsets_path.stat().st_size,
            "offsets_sha256": _sha256(offsets_path),
        }
        _write_json(self.out / f"{name}.json", entry)  # last: now the shard is complete
        self.entries.append(entry)
        self.part += 1
        self._ends, self.tokens, self.documents = [], 0, 0

    def finish(self) -> list[dict]:
        if self.documents:
            self._close_shard()
        return self.entries

    def abort(self) -> None:
        """Removes whatever was written of the current shard, unless its entry
        made it complete; earlier shards stay."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if not (self.out / f"{self._name}.json").exists():
            for suffix in _DATA:  # the files written before the entry (see _close_shard)
                for name in (f"{self._name}.{suffix}", f"{self._name}.{suffix}{TMP}"):
                    (self.out / name).unlink(missing_ok=True)


_DATA = ("tokens.npy", "offsets.npy")


def _resume_point(out: Path, file_index: int, existing: Iterable[str]) -> tuple[list[dict], int]:
    """The complete shards at the start of a file's output (parts 0, 1, ...
    without a gap) and their document count; deletes the file's other shard
    files, which an interrupted run left incomplete. ``existing``: the names
    of the file's shard files in ``out`` (the directory is not listed here)."""
    existing = set(existing)
    entries: list[dict] = []
    while f"{_shard_name(file_index, len(entries))}.json" in existing and (
        entry := _complete_entry(out, _shard_name(file_index, len(entries)))
    ):
        entries.append(entry)
    kept = {f"{e['name']}.{suffix}" for e in entries for suffix in ("json", *_DATA)}
    prefix = f"shard-{file_index:05d}-"
    for name in sorted(existing - kept):
        if name.startswith(prefix) and _OWN_NAME.fullmatch(name):
            (out / name).unlink(missing_ok=True)
    return entries, sum(e["documents"] for e in entries)


def _shard_files(out: Path, file_index: int) -> list[str]:
    """The names of input file ``file_index``'s shard files in ``out`` (one listing)."""
    with os.scandir(out) as entries:
        return _index_outputs(e.name for e in entries).get(file_index, [])


def encode_file(
    path: Path,
    file_index: int,
    tokenizer,
    out: Path,
    settings: DatasetSettings,
    *,
    on_progress: OnProgress = None,
    existing: Optional[Iterable[str]] = None,
) -> list[dict]:
    """Encodes input file ``file_index`` (``path``) into its shards in ``out``
    and returns their entries; the tokenizer must be the run's. A file already
    complete is not encoded again; one cut short continues after its complete
    shards. ``on_progress(n)``: ``n`` more bytes of the file (as stored,
    compressed or not) are done. On any exception (KeyboardInterrupt too) the
    shard being written is removed and complete ones stay, for a resume.
    ``existing``: the names of the file's shard files in ``out`` as
    :func:`plan` found them (``Plan.existing(file_index)``); None lists
    ``out`` (once per call: give it when encoding many files)."""
    path, out = Path(path), Path(out)
    tokenizer = as_tokenizer(tokenizer)
    if tokenizer_fingerprint(tokenizer) != settings.tokenizer_fingerprint:
        raise ValueError("this tokenizer is not the one the run's settings were made with")
    size = path.stat().st_size
    done = _file_entries(out, file_index)
    if done is not None:
        if on_progress is not None:
            on_progress(size)
        return done
    # A record left from before some of its shards went missing: no longer true.
    _file_record(out, file_index).unlink(missing_ok=True)
    encode = _batch_encoder(tokenizer, settings)
    if existing is None:
        existing = _shard_files(out, file_index)
    entries, skip = _resume_point(out, file_index, existing)
    writer = _ShardWriter(out, file_index, len(entries), settings)
    reader = _Reader(path, settings.field, skip)
    reported = 0
    reader.start()
    try:
        while (item := reader.batches.get()) is not _Reader.DONE:
            if isinstance(item, BaseException):
                raise item
            texts, bytes_read = item
            writer.add(*encode(texts))
            if on_progress is not None and min(bytes_read, size) > reported:
                on_progress(min(bytes_read, size) - reported)
                reported = min(bytes_read, size)
        entries += writer.finish()
        record = {"file_index": file_index, "path": os.path.abspath(path), "size": size}
        _write_json(_file_record(out, file_index), {**record, "shards": entries})
    except BaseException:
        writer.abort()
        raise
    finally:
        reader.stop.set()
        reader.join()
    if on_progress is not None and size > reported:
        on_progress(size - reported)  # what the reader read ahead of the last batch, or skipped
    return entries


# ---- Finishing ----


def finish(
    out: PathLike, plan_or_settings: Union[Plan, DatasetSettings], shards: list[dict]
) -> Path:
    """Writes ``dataset.json`` (the settings, the input files, every shard in
    file and part order), last, and returns its path. Every input file must be
    complete; ``shards`` (entries :func:`encode_file` returned) are checked
    against the records on disk, which also hold the files a resumed run had
    done before."""
    out = Path(out)
    run = _read_json(out / RUN)
    if not isinstance(run, dict) or run.get("format") != FORMAT:
        raise FormatError(out / RUN, f"not a {FORMAT} run")
    settings = plan_or_settings.settings if isinstance(plan_or_settings, Plan) else plan_or_settings
    if DatasetSettings.from_json(run.get("settings"), out / RUN) != settings:
        raise ValueError(f"the settings given are not those of the run in {out}")
    all_entries: list[dict] = []
    missing = []
    for index, item in enumerate(run["inputs"]):
        entries = _file_entries(out, index)
        if entries is None:
            missing.append(f"{index} ({item['path']})")
        else:
            all_entries += entries
    if missing:
        raise ValueError(
            f"input files not encoded yet in {out}: {', '.join(missing[:5])}"
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        )
    recorded = {e["name"]: e for e in all_entries}
    for entry in shards:
        if recorded.get(entry["name"]) != entry:
            raise ValueError(f"shard {entry['name']} is not the one recorded in {out}")
    manifest = {
        **run,
        "documents": sum(e["documents"] for e in all_entries),
        "tokens": sum(e["tokens"] for e in all_entries),
        "shards": all_entries,
    }
    _write_json(out / MANIFEST, manifest)
    return out / MANIFEST


def encode_dataset(
    inputs: Union[PathLike, Iterable[PathLike]],
    tokenizer,
    out: PathLike,
    *,
    field: str = "text",
    eot: Union[int, str, None] = None,
    dtype: Optional[str] = None,
    shard_tokens: int = DEFAULT_SHARD_TOKENS,
    allowed_special: Union[str, Iterable[str]] = (),
    resume: bool = False,
    overwrite: bool = False,
    progress: Optional[bool] = None,
) -> Path:
    """Encodes the documents of ``inputs`` into token shards in ``out`` and
    returns ``out`` (see the module docstring for the format).

    ``tokenizer``: a Tokenizer / SentencePieceTokenizer, or a path or OpenAI
    encoding name. ``eot``: a special token's text or an id, appended after
    every document (and counted in its offsets). ``dtype``: ``"uint16"``,
    ``"uint32"`` or None (``uint16`` when every id fits). ``allowed_special``:
    ``()`` encodes special-token text as plain text; ``"all"`` or a set of
    specials makes those their ids. ``resume``: finish an interrupted run;
    ``overwrite``: replace a dataset in ``out`` (an error when ``out`` holds
    anything else: files a run did not write are never deleted), only once
    the new one is complete (see :func:`replacing`).
    ``progress``: a bar of the input files' bytes as stored (default: when
    stderr is a terminal).
    Files are encoded one after the other, each on all cores.
    """
    return replacing(
        _encode_dataset,
        inputs,
        tokenizer,
        out,
        field=field,
        eot=eot,
        dtype=dtype,
        shard_tokens=shard_tokens,
        allowed_special=allowed_special,
        resume=resume,
        overwrite=overwrite,
        progress=progress,
    )


def replacing(run: Callable[..., Path], inputs, tokenizer, out: PathLike, **options) -> Path:
    """``run(inputs, tokenizer, out, **options)``: :func:`encode_dataset`'s
    work, or ``bytepair.corpus.on_ray.encode_dataset_on_ray``. With ``overwrite=True``
    and a dataset in ``out``, the new dataset is written to a new directory
    beside it that replaces it once complete (``formats.replace_directory``):
    plan(overwrite=True) would delete the old one before the run, and a
    failed or interrupted run would leave nothing."""
    out = Path(os.path.abspath(out))
    if options.get("resume") or not (
        options.get("overwrite") and out.is_dir() and any(out.iterdir())
    ):
        return run(inputs, tokenizer, out, **options)
    # Listed first, leaving the old dataset out (out may be inside an input directory).
    files = list(input_files(inputs, exclude=[out]))
    _check_replaceable(out, list(out.iterdir()))  # a refusal comes before any work
    with replace_directory(out, _delete_dataset) as new:
        run(files, tokenizer, new, **{**options, "overwrite": False})
    return out


def _encode_dataset(
    inputs: Union[PathLike, Iterable[PathLike]],
    tokenizer,
    out: PathLike,
    *,
    progress: Optional[bool] = None,
    **options,
) -> Path:
    tokenizer = as_tokenizer(tokenizer)
    run = plan(inputs, tokenizer, out, **options)
    bar = progress_bar(
        progress,
        desc="encoding",
        unit="B",
        unit_scale=True,
        total=sum(run.sizes),
        initial=sum(run.sizes[i] for i in run.done),
    )
    shards: list[dict] = []
    try:
        for index, path in enumerate(run.files):
            if index not in run.done:
                shards += encode_file(
                    path,
                    index,
                    tokenizer,
                    run.out,
                    run.settings,
                    on_progress=None if bar is None else bar.update,
                    existing=run.existing(index),
                )
    finally:
        if bar is not None:
            bar.close()
    finish(run.out, run, shards)
    return run.out


# ---- Reading ----

_COUNT_KEYS = ("file_index", "part", "documents", "tokens", "tokens_bytes", "offsets_bytes")
_TEXT_KEYS = ("name", "tokens_sha256", "offsets_sha256")
_FILE_KEYS = ("tokens_file", "offsets_file")


def _check_entry(manifest_path: Path, index: int, entry: dict) -> None:
    """A FormatError naming the key when a shard entry's value has the wrong
    type: the reader computes with them (a count given as text would fail
    as a bare TypeError, or a file name reach outside the directory)."""

    def fail(key: str, problem: str) -> None:
        raise FormatError(manifest_path, f"{problem}, not {entry[key]!r}", f"shards[{index}].{key}")

    for key in _COUNT_KEYS:
        value = entry[key]
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= INT64_MAX:
            fail(key, f"must be a whole number from 0 to {INT64_MAX}")
    for key in _TEXT_KEYS:
        if not isinstance(entry[key], str):
            fail(key, "must be text")
    for key in _FILE_KEYS:
        name = entry[key]
        if not isinstance(name, str) or name in ("", ".", "..") or os.path.basename(name) != name:
            fail(key, "must be the name of a file in the dataset's directory")


class TokenDataset:
    """A dataset written by :func:`encode_dataset` (its directory, or its
    ``dataset.json``), shards memory-mapped when first used.

    ``len(ds)`` documents; ``ds[i]`` the tokens of document ``i`` (a
    read-only numpy view, ending with the eot id when the run added one),
    ``ds[a:b]`` a list of them; iterating gives every document in order;
    ``ds.tokens(k)`` and ``ds.offsets(k)`` are shard ``k``'s whole arrays (for
    training loops); ``ds.shards`` their entries; ``ds.verify()`` checks every
    sha256. A missing, unfinished or corrupt dataset is a FormatError naming
    the file.
    """

    def __init__(self, path: PathLike) -> None:
        path = Path(path)
        self.path = path.parent if path.name == MANIFEST else path
        manifest_path = self.path / MANIFEST
        if not manifest_path.is_file():
            unfinished = (self.path / RUN).is_file()
            raise FormatError(
                manifest_path,
                "missing: the run did not finish (run it again with resume)"
                if unfinished
                else "missing: not a dataset directory",
            )
        manifest = _read_json(manifest_path)
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise FormatError(manifest_path, f"not a {FORMAT} manifest", "format")
        if manifest.get("version") != VERSION:
            raise FormatError(
                manifest_path, f"version {manifest.get('version')!r}; this reads {VERSION}"
            )
        self.settings = DatasetSettings.from_json(manifest.get("settings"), manifest_path)
        self.dtype = DTYPES[self.settings.dtype]
        shards = manifest.get("shards")
        if not isinstance(shards, list) or not all(
            isinstance(e, dict) and ENTRY_KEYS <= e.keys() for e in shards
        ):
            raise FormatError(manifest_path, f"shard entries need {sorted(ENTRY_KEYS)}", "shards")
        for index, entry in enumerate(shards):
            _check_entry(manifest_path, index, entry)
        self.shards: tuple[dict, ...] = tuple(shards)
        counts = [(e["documents"], e["tokens"]) for e in self.shards]
        self.n_tokens = sum(t for _, t in counts)
        self._starts = np.cumsum([0] + [d for d, _ in counts])  # first document of each shard
        self._arrays: list[Optional[tuple[np.ndarray, np.ndarray]]] = [None] * len(counts)
        self._lock = threading.Lock()

    @property
    def eot(self) -> Optional[int]:
        return self.settings.eot

    def __len__(self) -> int:
        return int(self._starts[-1])

    def _load(self, shard: int) -> tuple[np.ndarray, np.ndarray]:
        arrays = self._arrays[shard]
        if arrays is not None:
            return arrays
        entry = self.shards[shard]
        tokens = self._map(entry, "tokens", self.dtype, entry["tokens"])
        offsets = self._map(entry, "offsets", OFFSETS_DTYPE, entry["documents"] + 1)
        if len(offsets) and (
            offsets[0] != 0 or offsets[-1] != len(tokens) or np.any(np.diff(offsets) < 0)
        ):
            raise FormatError(
                self.path / entry["offsets_file"],
                "offsets must rise from 0 to the shard's token count",
            )
        with self._lock:
            self._arrays[shard] = (tokens, offsets)
        return tokens, offsets

    def _map(self, entry: dict, kind: str, dtype: np.dtype, length: int) -> np.ndarray:
        path = self.path / entry[f"{kind}_file"]
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise FormatError(path, "missing (listed in dataset.json)") from None
        if size != entry[f"{kind}_bytes"]:
            raise FormatError(
                path, f"{size} bytes, but dataset.json says {entry[f'{kind}_bytes']}: truncated?"
            )
        try:
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (ValueError, SyntaxError, EOFError, tokenize.TokenError) as e:
            # numpy reads a damaged header as Python source: any of these.
            raise FormatError(path, f"not a .npy array: {e}") from None
        if array.dtype != dtype or array.shape != (length,):
            raise FormatError(
                path,
                f"holds {array.dtype} {array.shape}, dataset.json says {dtype} ({length},)",
            )
        return array

    def tokens(self, shard: int) -> np.ndarray:
        """Shard ``shard``'s tokens, all documents end to end (memory-mapped)."""
        return self._load(shard)[0]

    def offsets(self, shard: int) -> np.ndarray:
        """Shard ``shard``'s document offsets (``documents + 1`` entries from 0)."""
        return self._load(shard)[1]

    def __getitem__(self, index: Union[int, slice]) -> Union[np.ndarray, list[np.ndarray]]:
        """Document ``index``'s tokens; a slice gives a list of documents."""
        n = len(self)
        if isinstance(index, slice):
            return [cast(np.ndarray, self[i]) for i in range(*index.indices(n))]
        try:
            i = operator.index(index)
        except TypeError:
            raise TypeError(
                f"TokenDataset indices must be integers or slices, not {type(index).__name__}"
            ) from None
        if not -n <= i < n:
            raise IndexError(
                f"document {index} out of range: the dataset has {n} documents "
                f"(indices {-n} .. {n - 1})"
            )
        if i < 0:
            i += n
        shard = int(np.searchsorted(self._starts, i, side="right")) - 1
        tokens, offsets = self._load(shard)
        local = i - int(self._starts[shard])
        return tokens[offsets[local] : offsets[local + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        for shard in range(len(self.shards)):
            tokens, offsets = self._load(shard)
            for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
                yield tokens[start:end]

    def verify(self) -> None:
        """Checks the sha256 of every shard file; a FormatError names the first that differs."""
        for entry in self.shards:
            for kind in ("tokens", "offsets"):
                path = self.path / entry[f"{kind}_file"]
                if not path.is_file():
                    raise FormatError(path, "missing (listed in dataset.json)")
                if _sha256(path) != entry[f"{kind}_sha256"]:
                    raise FormatError(path, "checksum mismatch: the file was changed or damaged")

    def __repr__(self) -> str:
        return (
            f"<TokenDataset {str(self.path)!r} documents={len(self)} tokens={self.n_tokens} "
            f"dtype={self.dtype.name} shards={len(self.shards)}>"
        )
