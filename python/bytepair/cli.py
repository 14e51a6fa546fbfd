"""The ``bytepair`` command line: train, count, encode-dataset, encode, decode,
inspect, steps, viz, analyze, convert, gage, demo.

A tokenizer is named by ``--model`` (alias ``-t/--tokenizer``): one of OpenAI's
encodings (``cl100k_base``, read from ``$BYTEPAIR_TIKTOKEN_DIR``) or a path to a
``tokenizer.json``, a GPT-2 directory (``vocab.json`` + ``merges.txt``), a
``.tiktoken`` file or a SentencePiece ``.model`` file.

Every user error (a missing file, a corrupt tokenizer, a disallowed special
token, an id outside the vocabulary, an output that already exists) ends as
one line ``bytepair: error: <message>`` on stderr and exit status 1; argparse
reports a malformed command line the same way with status 2. Ctrl-C exits with
130 and no traceback; a reader that closes the pipe early (``| head``) ends the
command quietly.

Text crosses stdin and stdout as UTF-8, byte for byte: nothing is added or
stripped, so ``encode`` then ``decode`` gives back exactly the input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Callable, Optional, Union

from . import __version__
from .demo import DEFAULT_DIR, DEFAULT_VOCAB_SIZE, format_merge, readable, run_demo
from .encodings import ENCODINGS, load_any
from .errors import DisallowedSpecialError, NotUtf8Error, decode_utf8
from .pretokenizers import BUILTIN_PATTERNS
from .tokenizer import Tokenizer
from .training import train

PROG = "bytepair"
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what `cat` reports when `head` stops reading
SHOWN_MERGES = 10
SHOWN_LONGEST = 10

STOP_REASONS = {
    "vocab_size": "reached the requested vocab size",
    "no_pairs": "no pair of tokens left to merge (the corpus is too small for this vocab size)",
    "min_frequency": "the most frequent pair occurs fewer than --min-frequency times",
}


UNIGRAM_OPTIONS = (
    "character_coverage",
    "max_piece_length",
    "seed_size",
    "shrinking_factor",
    "num_sub_iterations",
    "byte_fallback",
)


class CommandError(Exception):
    """A user error found by the command line itself; the message is shown as is."""


# ---- Input and output ----


def _read_stdin_text(what: str) -> str:
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


def _write_text(text: str) -> None:
    """``text`` on stdout as UTF-8, whatever encoding the stream was set up with
    (PYTHONIOENCODING, the locale); a text-only stdout gets it as text."""
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a replaced text stream (tests, embedding)
        sys.stdout.write(text)
        return
    sys.stdout.flush()  # whatever text went before must come out first
    binary.write(text.encode("utf-8"))
    binary.flush()


def _write_bytes(data: bytes) -> None:
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:
        raise CommandError("--bytes needs a binary stdout; this one only takes text")
    sys.stdout.flush()  # whatever text went before must come out first
    binary.write(data)
    binary.flush()


def _load(spec: str) -> Tokenizer:
    """The tokenizer ``spec`` names: a path, else one of OpenAI's encodings."""
    return load_any(spec)  # FileNotFoundError / FormatError name what is wrong


def _parse_ids(text: str, source: str) -> list[int]:
    """Token ids from ``text``: whitespace-separated numbers, or a JSON list."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            values = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise CommandError(f"the ids in {source} are not a valid JSON list: {e}") from None
        if not isinstance(values, list):
            raise CommandError(f"the ids in {source} are not a JSON list")
        for position, value in enumerate(values):
            if not isinstance(value, int) or isinstance(value, bool):
                raise CommandError(
                    f"{json.dumps(value)} at position {position} in {source} is not a token id "
                    "(a whole number)"
                )
        return values
    ids = []
    for position, word in enumerate(stripped.split()):
        try:
            ids.append(int(word))
        except ValueError:
            raise CommandError(
                f"{word!r} at position {position} in {source} is not a token id (a whole number)"
            ) from None
    return ids


# ---- train ----


def _train_targets(output: str, output_format: str) -> tuple[Path, list[Path]]:
    """Where ``save`` will write: (the path to pass it, the files it creates)."""
    path = Path(output)
    if output_format == "gpt2":
        if path.exists() and not path.is_dir():
            raise CommandError(
                f"{output} is a file, but --format gpt2 writes a directory "
                "(vocab.json + merges.txt)"
            )
        return path, [path / "vocab.json", path / "merges.txt"]
    if path.is_dir() or output.endswith(("/", os.sep)):
        path = path / "tokenizer.json"
    return path, [path]


def _check_writable(target: Path, option: str) -> None:
    """Fail before the work, not after it, when ``target`` cannot be a file: a
    directory is in its place, or a file where a directory of its path should be
    (the missing directories are made when writing)."""
    if target.is_dir():
        raise CommandError(f"{option} {target} is a directory; give the file to write")
    parent = next(p for p in target.absolute().parents if p.exists())
    if not parent.is_dir():
        raise CommandError(f"{option} {target}: {parent} is a file, not a directory")


def _corpus(sources: Sequence[str]) -> list[Union[str, Path]]:
    """Corpus items: each file as a Path (the trainer reads it), stdin ("-") as its text."""
    if sources.count("-") > 1:
        raise CommandError("'-' (stdin) is given more than once")
    corpus: list[Union[str, Path]] = []
    for source in sources:
        if source == "-":
            corpus.append(_read_stdin_text("the corpus"))
            continue
        path = Path(source)
        if not path.exists():
            raise CommandError(f"{source}: no such file")
        if path.is_dir():
            raise CommandError(f"{source}: is a directory; give the text files in it")
        corpus.append(path)
    return corpus


def _pretokenizer(args: argparse.Namespace) -> object:
    if args.pretokenizer_regex is None:
        return args.pretokenizer
    import regex

    try:
        return regex.compile(args.pretokenizer_regex)
    except regex.error as e:
        raise CommandError(
            f"--pretokenizer-regex {args.pretokenizer_regex!r} is not a valid regex: {e}"
        ) from None


# What --resume and --from-counts take no part of (argparse dests; each
# defaults to None, or [] for the files, so a value means the user gave it).
RESUME_IGNORES = (
    "files",
    "from_counts",
    "special",
    "pretokenizer",
    "pretokenizer_regex",
    "min_frequency",
    "max_token_length",
    "checkpoint",
    "stream",
    "field",
    *UNIGRAM_OPTIONS,
)
FROM_COUNTS_IGNORES = (
    "files",
    "special",
    "pretokenizer",
    "pretokenizer_regex",
    "stream",
    "field",
    *UNIGRAM_OPTIONS,
)


def _given(args: argparse.Namespace, dests: Sequence[str]) -> list[str]:
    """The options among ``dests`` given on the command line, as written."""
    return [
        "FILE arguments" if dest == "files" else "--" + dest.replace("_", "-")
        for dest in dests
        if getattr(args, dest) not in (None, [])
    ]


def _ignored(args: argparse.Namespace, dests: Sequence[str]) -> str:
    """The options among ``dests`` given, and a --model other than bpe, as a list for an error."""
    given = _given(args, dests) + ([f"--model {args.model}"] if args.model != "bpe" else [])
    return ", ".join(given)


def _check_train_options(args: argparse.Namespace) -> None:
    """Refuse options the chosen mode would ignore, before anything is read."""
    if args.resume is not None:
        ignored = _ignored(args, RESUME_IGNORES)
        if ignored:
            raise CommandError(
                "--resume goes on from the checkpoint alone (it holds the run's settings): "
                f"drop {ignored}"
            )
        return
    if args.vocab_size is None:
        raise CommandError("--vocab-size is required (except with --resume)")
    if args.checkpoint_every is not None and args.checkpoint is None:
        raise CommandError("--checkpoint-every goes with --checkpoint (or --resume)")
    if args.from_counts:
        ignored = _ignored(args, FROM_COUNTS_IGNORES)
        if ignored:
            raise CommandError(
                "--from-counts trains byte-level BPE on the counts alone (they hold the "
                f"pre-tokenizer and special tokens): drop {ignored}"
            )
        return
    if args.field is not None and not args.stream:
        raise CommandError(
            "--field names the text of --stream's JSON lines / Parquet: add --stream"
        )
    if args.model == "unigram":
        if args.format == "gpt2":
            raise CommandError(
                "--format gpt2 holds BPE merges; a unigram model saves as huggingface"
            )
        given = _given(args, ("min_frequency", "max_token_length", "checkpoint"))
        if given:
            raise CommandError(f"{', '.join(given)}: byte-level BPE only, not --model unigram")
        if args.pretokenizer_regex is not None or args.pretokenizer not in (None, "metaspace"):
            option = (
                f"--pretokenizer-regex {args.pretokenizer_regex!r}"
                if args.pretokenizer_regex is not None
                else f"--pretokenizer {args.pretokenizer}"
            )
            raise CommandError(
                f"{option}: a unigram model saves as tokenizer.json only with the metaspace "
                "pre-tokenizer (its default); drop the option"
            )
        return
    unigram_options = _given(args, UNIGRAM_OPTIONS)
    if unigram_options:
        raise CommandError(f"{', '.join(unigram_options)}: unigram options; add --model unigram")
    if args.pretokenizer == "metaspace":
        raise CommandError("--pretokenizer metaspace is for --model unigram")
    kind = "regex" if args.pretokenizer_regex is not None else args.pretokenizer or "gpt2"
    _check_gpt2_format(args, kind, "the pre-tokenizer")


def _check_gpt2_format(args: argparse.Namespace, kind: str, whose: str) -> None:
    if args.format == "gpt2" and kind != "gpt2":
        raise CommandError(
            "--format gpt2 can only record the gpt2 pre-tokenizer (readers of vocab.json + "
            f"merges.txt always apply GPT-2's pattern), and {whose} is {kind}: use "
            "--format huggingface"
        )


def _check_huggingface_format(args: argparse.Namespace, pretokenizer: object, whose: str) -> None:
    """Refuse, before training, a pre-tokenizer the tokenizer.json writer cannot
    record (a regex tokenizers' engine would read otherwise)."""
    if args.format != "huggingface":
        return
    from .formats.huggingface import _pretokenizer_to_json
    from .pretokenizers import resolve

    try:
        _pretokenizer_to_json(resolve("gpt2" if pretokenizer is None else pretokenizer))
    except ValueError as e:
        raise CommandError(f"{whose}: {e}") from None


def _check_checkpoint(args: argparse.Namespace, save_path: Path, targets: list[Path]) -> None:
    """Errors about --checkpoint / --resume that training would meet late."""
    from .training import check_checkpoint_path

    flag, checkpoint = (
        ("--resume", args.resume) if args.resume else ("--checkpoint", args.checkpoint)
    )
    if checkpoint is None:
        return
    path = Path(checkpoint)
    if any(path.resolve() == t.resolve() for t in [save_path, *targets]):
        raise CommandError(
            f"{flag} {checkpoint} is also where -o {args.output} writes; give them different paths"
        )
    if args.resume:
        return
    if path.exists() and not path.is_dir():
        raise CommandError(
            f"{checkpoint} exists: go on from it with --resume {checkpoint}, or remove it"
        )
    check_checkpoint_path(path, "--checkpoint")


def cmd_train(args: argparse.Namespace) -> int:
    _check_train_options(args)
    save_path, targets = _train_targets(args.output, args.format)
    _check_checkpoint(args, save_path, targets)
    existing = [str(t) for t in targets if t.exists()]
    if existing and not args.force:  # checked before training, which may take hours
        verb = "exists" if len(existing) == 1 else "exist"
        raise CommandError(f"{' and '.join(existing)} already {verb}; pass --force to replace")
    for target in targets:
        _check_writable(target, "-o")
    if args.resume is not None:
        return _resume(args, save_path, targets)
    if args.from_counts:
        return _train_from_counts(args, save_path, targets)
    pretokenizer = _pretokenizer(args)
    if args.model == "bpe":
        whose = "--pretokenizer-regex" if args.pretokenizer_regex is not None else "--pretokenizer"
        _check_huggingface_format(args, pretokenizer, whose)
    if args.stream:
        from .sources import read_documents

        if not args.files or "-" in args.files:
            raise CommandError("--stream reads INPUT files, globs or directories, not stdin")
        corpus = read_documents(args.files, field="text" if args.field is None else args.field)
    else:
        corpus = _corpus(args.files or ["-"])
    options = {
        name: getattr(args, name) for name in UNIGRAM_OPTIONS if getattr(args, name) is not None
    }
    if args.model == "bpe":
        options["max_token_length"] = args.max_token_length
        options["checkpoint"] = args.checkpoint
        options.update(_checkpoint_every(args))

    with warnings.catch_warnings(), _resumable(args.checkpoint, args.output):
        # train() warns when it stops early; the summary below says why instead.
        warnings.simplefilter("ignore")
        tokenizer = train(
            corpus,
            args.vocab_size,
            model=args.model,
            special_tokens=args.special or (),
            pretokenizer=pretokenizer,
            min_frequency=args.min_frequency,
            progress=args.progress,
            **options,
        )

    _save_trained(tokenizer, save_path, args)

    report = tokenizer.training
    specials = len(tokenizer.special_tokens)
    if args.model == "unigram":
        rounds = len(report.rounds)
        print(
            f"vocab size {tokenizer.n_vocab} (requested {args.vocab_size}): unigram LM, "
            f"{specials} special token{'s' * (specials != 1)}; {rounds} EM round{'s' * (rounds != 1)}"
        )
        words = (
            "metaspace"
            if pretokenizer in (None, "metaspace")
            else tokenizer.model.pretokenizer.name
        )
        print(
            f"trained in {report.seconds:.2f} s on {report.distinct_words:,} distinct words ({words})"
        )
        print(f"wrote {', '.join(str(t) for t in targets)}")
        return 0
    print(
        f"vocab size {tokenizer.n_vocab} (requested {args.vocab_size}): "
        f"{len(tokenizer.merges)} merges, {specials} special token{'s' * (specials != 1)}"
    )
    _summary(tokenizer, args, targets)
    return 0


def _checkpoint_every(args: argparse.Namespace) -> dict:
    """checkpoint_every=... when given (the library's default otherwise)."""
    every = args.checkpoint_every
    return {} if every is None else {"checkpoint_every": every}


def _summary(tokenizer: Tokenizer, args: argparse.Namespace, targets: list[Path]) -> None:
    report = tokenizer.training
    if report is not None:
        print(f"stopped: {STOP_REASONS.get(report.stop_reason, report.stop_reason)}")
        print(
            f"trained in {report.seconds:.2f} s on {report.distinct_pretokens:,} distinct "
            f"pre-tokens ({tokenizer.pretokenizer.name})"
        )
    if args.checkpoint or args.resume:
        print(f"checkpoint: {args.checkpoint or args.resume} (--resume it to go further)")
    print(f"wrote {', '.join(str(t) for t in targets)}")


@contextlib.contextmanager
def _resumable(checkpoint: Optional[str], output: str) -> Iterator[None]:
    """On Ctrl-C, tells how to go on from the checkpoint (written by then)."""
    try:
        yield
    except KeyboardInterrupt:
        if checkpoint is not None and Path(checkpoint).is_file():
            print(
                f"{PROG}: interrupted; go on with `{PROG} train --resume {checkpoint} -o {output}`",
                file=sys.stderr,
            )
        raise


def _resume(args: argparse.Namespace, save_path: Path, targets: list[Path]) -> int:
    from .training import read_checkpoint, resume_training

    path = Path(args.resume)
    if not path.is_file():
        raise CommandError(f"{path}: no such checkpoint file")
    pretokenizer = read_checkpoint(path).pretokenizer
    _check_gpt2_format(args, pretokenizer.kind, "the checkpoint's pre-tokenizer")
    _check_huggingface_format(args, pretokenizer, "the checkpoint's pre-tokenizer")
    with warnings.catch_warnings(), _resumable(args.resume, args.output):
        warnings.simplefilter("ignore")
        tokenizer = resume_training(
            path, args.vocab_size, progress=args.progress, **_checkpoint_every(args)
        )
    _save_trained(tokenizer, save_path, args)
    print(f"vocab size {tokenizer.n_vocab}: {len(tokenizer.merges)} merges, resumed from {path}")
    _summary(tokenizer, args, targets)
    return 0


@contextlib.contextmanager
def _made_directory(directory: Path) -> Iterator[None]:
    """Makes ``directory`` (and missing parents) for the writing in the block;
    when the block fails, removes again those it made that stayed empty."""
    made = [d for d in [directory, *directory.parents] if not d.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        for d in made:  # deepest first; rmdir only removes what stayed empty
            with contextlib.suppress(OSError):
                d.rmdir()
        raise


def _save_trained(tokenizer, save_path: Path, args: argparse.Namespace) -> None:
    directory = save_path if args.format == "gpt2" else save_path.parent
    with _made_directory(directory):
        tokenizer.save(save_path, format=args.format, overwrite=args.force)


def _train_from_counts(args: argparse.Namespace, save_path: Path, targets: list[Path]) -> int:
    from .counts import read_settings, train_from_counts
    from .pretokenizers import Pretokenizer

    kind, pattern, _ = read_settings(args.from_counts)
    _check_gpt2_format(args, kind, "the counts' pre-tokenizer")
    _check_huggingface_format(args, Pretokenizer(kind, pattern), "the counts' pre-tokenizer")
    with warnings.catch_warnings(), _resumable(args.checkpoint, args.output):
        warnings.simplefilter("ignore")
        tokenizer = train_from_counts(
            args.from_counts,
            args.vocab_size,
            min_frequency=args.min_frequency or 1,
            max_token_length=args.max_token_length,
            checkpoint=args.checkpoint,
            progress=args.progress,
            **_checkpoint_every(args),
        )
    _save_trained(tokenizer, save_path, args)
    print(f"vocab size {tokenizer.n_vocab}: {len(tokenizer.merges)} merges from the counts")
    _summary(tokenizer, args, targets)
    return 0


# ---- count ----


def _ray_function(name: str) -> Callable:
    """``bytepair.on_ray.<name>``, or a CommandError when Ray is not installed."""
    from . import on_ray

    try:
        on_ray.import_ray()
    except ImportError as e:
        raise CommandError(str(e)) from None
    return getattr(on_ray, name)


def _ray_address(value: str) -> Optional[str]:
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


def _memory(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    scale = units.get(text[-1:].lower(), 1)
    try:
        return int(float(text[:-1] if scale > 1 else text) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 512M or 4G)") from None


def cmd_count(args: argparse.Namespace) -> int:
    from .counts import MANIFEST, count_to_shards
    from .sources import read_documents

    address = _ray_address(args.ray) if args.ray is not None else None
    out = Path(args.output)
    if (out / MANIFEST).exists() and not args.force:
        raise CommandError(f"{out} already holds counts; pass --force to replace them")
    pretokenizer = _pretokenizer(args)
    options = dict(
        pretokenizer=pretokenizer,
        special_tokens=args.special or (),
        partitions=args.partitions,
        max_memory=args.max_memory,
        overwrite=args.force,
        progress=args.progress,
    )
    if args.ray is not None:
        count_on_ray = _ray_function("count_on_ray")
        count_on_ray(args.inputs, out, field=args.field, address=address, **options)
    else:
        count_to_shards(read_documents(args.inputs, field=args.field), out, **options)
    print(f"wrote the counts to {out}")
    return 0


# ---- encode-dataset ----


def _dataset_options(args: argparse.Namespace) -> dict:
    """encode_dataset's keyword options from the command line (plan's too)."""
    options = {
        "field": args.field,
        "eot": int(args.eot) if args.eot is not None and args.eot.isdigit() else args.eot,
        "dtype": args.dtype,
        "allowed_special": "all" if args.allow_special else (),
        "resume": args.resume,
        "overwrite": args.force,
    }
    if args.shard_tokens is not None:
        options["shard_tokens"] = args.shard_tokens
    return options


def cmd_encode_dataset(args: argparse.Namespace) -> int:
    from .dataset import TokenDataset, encode_dataset

    if args.ray is not None:  # the same run, one Ray task per input file
        from functools import partial

        address = _ray_address(args.ray)
        encode_dataset = partial(_ray_function("encode_dataset_on_ray"), address=address)
    tokenizer = _load(args.model)
    try:
        out = encode_dataset(
            args.inputs,
            tokenizer,
            args.output,
            **_dataset_options(args),
            progress=args.progress,
        )
    except FileExistsError:
        if not Path(args.output).is_dir():
            raise
        raise CommandError(
            f"{args.output} is not empty; pass --resume to finish an interrupted run there, "
            "or --force to replace its dataset"
        ) from None
    except KeyboardInterrupt:
        print(
            f"{PROG}: interrupted; the complete shards in {args.output} are kept: run the same "
            "command with --resume to finish",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    dataset = TokenDataset(out)
    print(
        f"wrote {len(dataset):,} documents, {dataset.n_tokens:,} tokens ({dataset.dtype.name}) "
        f"in {len(dataset.shards)} shards to {out}"
    )
    return 0


# ---- encode ----


def _encode_unigram(tokenizer, text: str, args: argparse.Namespace) -> int:
    """--nbest / --sample (unigram models)."""
    from .sentencepiece_tokenizer import SentencePieceTokenizer

    if not isinstance(tokenizer, SentencePieceTokenizer):
        raise CommandError("--nbest and --sample need a unigram model (this one is BPE)")
    allowed = "all" if args.allow_special else ()
    disallowed = () if args.ordinary else "all"
    try:
        if args.nbest is not None:
            best = tokenizer.encode_nbest(
                text, args.nbest, allowed_special=allowed, disallowed_special=disallowed
            )
            if args.json:
                listed = [{"logprob": score, "ids": ids} for ids, score in best]
                _write_text(json.dumps(listed) + "\n")
                return 0
            for ids, score in best:
                _write_text(f"{score:.6f}\t{' '.join(map(str, ids))}\n")
            return 0
        ids = tokenizer.encode_sample(
            text,
            alpha=args.alpha,
            seed=args.seed,
            allowed_special=allowed,
            disallowed_special=disallowed,
        )
    except NotImplementedError as e:
        raise CommandError(str(e)) from None
    _write_text((json.dumps(ids) if args.json else " ".join(map(str, ids))) + "\n")
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    tokenizer = _load(args.model)
    text = args.text if args.text is not None else _read_stdin_text("the text")
    if (args.alpha is not None or args.seed is not None) and not args.sample:
        raise CommandError("--alpha and --seed go with --sample")
    if args.nbest is not None or args.sample:
        if args.sample and args.alpha is None:
            args.alpha = 0.1
        try:
            return _encode_unigram(tokenizer, text, args)
        except DisallowedSpecialError as e:
            raise CommandError(str(e).splitlines()[0]) from None
    if args.ordinary:
        ids = tokenizer.encode_ordinary(text)
    else:
        try:
            ids = tokenizer.encode(text, allowed_special="all" if args.allow_special else ())
        except DisallowedSpecialError as e:
            # The library's message tells a Python caller which argument to pass;
            # keep its first line (which token, where) and name the flags instead.
            what = str(e).splitlines()[0].rstrip(".")
            # A loaded SentencePiece / tokenizers model cannot cut its specials out.
            if getattr(tokenizer, "flavor", "bytepair") != "bytepair":
                raise CommandError(f"{what}. Pass --ordinary to encode it as plain text") from None
            raise CommandError(
                f"{what}. Pass --allow-special to encode it as its special id, "
                "or --ordinary to encode it as plain text"
            ) from None
    _write_text((json.dumps(ids) if args.json else " ".join(map(str, ids))) + "\n")
    return 0


# ---- decode ----


def cmd_decode(args: argparse.Namespace) -> int:
    tokenizer = _load(args.model)
    if args.ids:
        ids = _parse_ids(" ".join(args.ids), "the arguments")
    else:
        ids = _parse_ids(_read_stdin_text("the ids"), "stdin")
    if args.bytes:
        _write_bytes(tokenizer.decode_bytes(ids))
        return 0
    text = tokenizer.decode(ids)
    _write_text(text)
    if sys.stdout.isatty() and not text.endswith("\n"):
        _write_text("\n")  # only for the prompt's sake; pipes get the text exactly
    return 0


# ---- inspect ----


def _merge_lines(tokenizer: Tokenizer, merge_ids: list[tuple[int, int]], ranks: range) -> list[str]:
    model = tokenizer.model
    special_ids = set(model.special_tokens.values())
    token_id = {b: i for i, b in enumerate(model.tokens) if b is not None and i not in special_ids}
    lines = []
    for rank in ranks:
        left, right = merge_ids[rank]
        left_bytes, right_bytes = model.tokens[left], model.tokens[right]
        result = token_id.get(left_bytes + right_bytes)
        suffix = f"  id {result}" if result is not None else ""
        lines.append(f"  {format_merge(rank + 1, left_bytes, right_bytes)}{suffix}")
    return lines


def _inspect_unigram(path: str, tokenizer) -> list[str]:
    """inspect's lines for a SentencePieceTokenizer: kinds of pieces, the
    most probable and the longest pieces."""
    model = tokenizer.model
    kinds: dict[str, int] = {}
    for kind in model.kinds:
        kinds[kind] = kinds.get(kind, 0) + 1
    words = "metaspace" if model.pretokenizer is None else model.pretokenizer.name
    out = [
        f"tokenizer:      {path}",
        f"model:          {model.algorithm} ({tokenizer.flavor}'s rules)",
        f"vocab size:     {tokenizer.n_vocab}: "
        + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())),
        f"words:          {words}; byte fallback {'on' if model.byte_fallback else 'off'}",
        f"special tokens: {len(tokenizer.special_tokens) or 'none'}",
    ]
    for text, token in sorted(tokenizer.special_tokens.items(), key=lambda item: item[1]):
        out.append(f"  id {token:>6}  {text!r}")
    normal = [i for i, kind in enumerate(model.kinds) if kind == "normal"]
    best = sorted(normal, key=lambda i: (-model.scores[i], i))[:SHOWN_MERGES]
    out.append(f"{len(best)} highest-scoring pieces:")
    out += [f"  id {i:>6}  {model.scores[i]:>10.4f}  {model.pieces[i]!r}" for i in best]
    longest = sorted(normal, key=lambda i: (-len(model.pieces[i]), i))[:SHOWN_LONGEST]
    out.append(f"{len(longest)} longest pieces:")
    out += [f"  id {i:>6}  {len(model.pieces[i]):>3} chars  {model.pieces[i]!r}" for i in longest]
    return out


def cmd_inspect(args: argparse.Namespace) -> int:
    tokenizer = _load(args.path)
    if not isinstance(tokenizer, Tokenizer):
        _write_text("\n".join(_inspect_unigram(args.path, tokenizer)) + "\n")
        return 0
    model = tokenizer.model
    pre = tokenizer.pretokenizer
    merge_ids = tokenizer.merge_ids
    n_merges = len(merge_ids)
    unused = sum(token is None for token in model.tokens)
    out = [
        f"tokenizer:      {args.path}",
        f"vocab size:     {tokenizer.n_vocab}" + (f" ({unused} ids unused)" if unused else ""),
        f"merges:         {n_merges}"
        + (" (derived: tiktoken ranks tokens by id)" if model.merges is None else ""),
        f"pre-tokenizer:  {pre.kind if pre.kind != 'regex' else f'regex {pre.pattern!r}'}",
        f"special tokens: {len(model.special_tokens) or 'none'}",
    ]
    for text, token in sorted(model.special_tokens.items(), key=lambda item: item[1]):
        out.append(f"  id {token:>6}  {text!r}")

    if n_merges <= 2 * SHOWN_MERGES:
        out.append(f"merges (all {n_merges}):" if n_merges else "merges: none")
        out += _merge_lines(tokenizer, merge_ids, range(n_merges))
    else:
        out.append(f"first {SHOWN_MERGES} merges:")
        out += _merge_lines(tokenizer, merge_ids, range(SHOWN_MERGES))
        out.append(f"last {SHOWN_MERGES} merges:")
        out += _merge_lines(tokenizer, merge_ids, range(n_merges - SHOWN_MERGES, n_merges))

    special_ids = set(model.special_tokens.values())
    ordinary = [
        i for i, token in enumerate(model.tokens) if token is not None and i not in special_ids
    ]
    longest = sorted(ordinary, key=lambda i: (-len(model.tokens[i]), i))[:SHOWN_LONGEST]
    out.append(f"{len(longest)} longest tokens:")
    for token in longest:
        data = model.tokens[token]
        out.append(f"  id {token:>6}  {len(data):>3} bytes  {readable(data)}")
    _write_text("\n".join(out) + "\n")
    return 0


# ---- steps ----


def cmd_steps(args: argparse.Namespace) -> int:
    from .trace import render, trace

    if args.text:
        corpus: list = [args.source]
    elif args.source == "-":
        corpus = [_read_stdin_text("the corpus")]
    else:
        corpus = _corpus([args.source])
    if args.lines:  # each line a text of its own (with --pretokenizer none: one word each)
        texts = [c if isinstance(c, str) else c.read_text(encoding="utf-8") for c in corpus]
        corpus = [line for text in texts for line in text.splitlines() if line]
    color = sys.stdout.isatty() if args.color is None else args.color
    steps = trace(
        corpus, merges=args.merges, pretokenizer=args.pretokenizer, top=args.top, show=args.show
    )
    done = 0
    for step in steps:
        _write_text(("\n" if done else "") + render(step, color=color) + "\n")
        done += 1
    if done < args.merges:
        _write_text(f"(stopped after {done} merges: no pair of tokens is left)\n")
    return 0


# ---- viz ----


def cmd_viz(args: argparse.Namespace) -> int:
    from .viz import SAMPLE, page_data, write_page_data

    output = Path(args.output)
    if output.exists() and not args.force:
        raise CommandError(f"{output} already exists; pass --force to replace")
    corpus = _corpus(args.files or ["-"])
    output.parent.mkdir(parents=True, exist_ok=True)
    data = page_data(corpus, args.merges, pretokenizer=args.pretokenizer)
    write_page_data(data, output, SAMPLE)
    # A small corpus runs out of pairs before --merges: say how many the page shows.
    print(
        f"wrote {output}: {len(data['steps'])} merges; open it in a browser (it needs no network)"
    )
    return 0


# ---- analyze ----


def _sizes(text: str) -> list[int]:
    """'256,512,1k,32k' -> [256, 512, 1000, 32000]."""
    sizes = []
    for part in text.split(","):
        part = part.strip().lower()
        scale = 1000 if part.endswith("k") else 1
        try:
            sizes.append(int(part.rstrip("k")) * scale)
        except ValueError:
            raise CommandError(f"--sweep: {part!r} is not a size (e.g. 512 or 8k)") from None
    return sizes


def _table(headers: list[str], rows: list[list[object]], style: str) -> str:
    cells = [[f"{c:.4f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    if style == "markdown":
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([fmt.format(*headers)] + [fmt.format(*row) for row in cells])


def cmd_analyze(args: argparse.Namespace) -> int:
    from . import analysis

    if args.plot and not args.sweep:
        raise CommandError("--plot draws the --sweep: give --sweep SIZES")
    if not (args.models or args.sweep):
        raise CommandError("nothing to measure: give MODEL(s) and/or --sweep SIZES")
    sizes = _sizes(args.sweep) if args.sweep else []
    if args.plot:  # checked before the sweep, which trains a tokenizer per size
        _check_plot_target(args.plot, args.force)
    heldout = _read_corpus_text(args.text, "--text")
    train_text = _read_corpus_text(args.train, "--train") if args.train else None
    if args.sweep and train_text is None:
        raise CommandError("--sweep and --plot train tokenizers: give --train TEXT_FILE")
    report: dict = {"tokenizers": [], "sweep": [], "sentences": {}}
    for spec in args.models:
        tok = _load(spec)
        row = analysis.measure(tok, heldout, name=spec).as_dict()
        if train_text is not None:
            row["word_oov_same_size"] = analysis.word_oov(
                train_text, heldout, tok.n_vocab
            ).word_oov_rate
        if args.embedding_dim:
            row["embedding_params"] = analysis.embedding_parameters(
                tok.n_vocab, args.embedding_dim, tied=not args.untied
            )
        report["tokenizers"].append(row)
        if args.by_script:
            for script, part in analysis.by_script(heldout).items():
                entry = analysis.measure(tok, part, name=f"{spec} [{script}]").as_dict()
                report.setdefault("by_script", []).append(entry)
        if args.sentences:
            sentences = [line for line in heldout.splitlines() if line.strip()][: args.sentences]
            report["sentences"][spec] = analysis.sentence_report(tok, sentences)
    if args.sweep:
        options = {"model": args.sweep_model}
        for row in analysis.sweep(train_text, heldout, sizes, **options):
            entry = {**row.__dict__}
            if args.embedding_dim:
                entry["embedding_params"] = analysis.embedding_parameters(
                    row.vocab_size, args.embedding_dim, tied=not args.untied
                )
            report["sweep"].append(entry)
    if train_text is not None:
        oov = analysis.word_oov(train_text, heldout)
        report["word_vocabulary"] = {
            "size": oov.size,
            "word_oov_rate": oov.word_oov_rate,
            "word_type_oov_rate": oov.word_type_oov_rate,
        }
    if args.plot:
        _plot_sweep(report["sweep"], args.plot)
    if args.format == "json":
        _write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        return 0
    keys = [
        "name",
        "vocab_size",
        "bytes_per_token",
        "tokens_per_word",
        "vocab_used",
        "renyi_efficiency",
        "unknown_tokens",
    ]
    keys += [
        k
        for k in ("word_oov_same_size", "embedding_params")
        if report["tokenizers"] and k in report["tokenizers"][0]
    ]
    out = []
    if report["tokenizers"]:
        out.append(_table(keys, [[r[k] for k in keys] for r in report["tokenizers"]], args.format))
    if report.get("by_script"):
        rows = [[r[k] for k in keys[:7]] for r in report["by_script"]]
        out += ["", "by script (lines grouped by the writing system of their letters):"]
        out.append(_table(keys[:7], rows, args.format))
    if report["sweep"]:
        skeys = list(report["sweep"][0])
        out += ["", _table(skeys, [[r[k] for k in skeys] for r in report["sweep"]], args.format)]
    if "word_vocabulary" in report:
        w = report["word_vocabulary"]
        out += [
            "",
            f"word-level vocabulary of all {w['size']:,} training words: "
            f"{w['word_oov_rate']:.2%} of held-out words are out of it "
            f"({w['word_type_oov_rate']:.2%} of distinct ones); a byte-level BPE has no OOV",
        ]
    for spec, lines in report["sentences"].items():
        out += ["", f"{spec}: tokens per sentence, boundaries as |"] + lines
    _write_text("\n".join(out).lstrip("\n") + "\n")
    return 0


def _read_corpus_text(path: str, what: str) -> str:
    source = Path(path)
    if not source.is_file():
        raise CommandError(f"{what} {path}: no such file")
    try:
        return decode_utf8(source.read_bytes())
    except NotUtf8Error as e:
        raise CommandError(f"{path}: {e}") from None


def _check_plot_target(path: str, force: bool) -> None:
    """Errors the plot would meet only after the sweep: an existing file (without
    --force), a bad path, no matplotlib."""
    target = Path(path)
    _check_writable(target, "--plot")
    if target.exists() and not force:
        raise CommandError(f"{path} already exists; pass --force to replace")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError("--plot needs matplotlib: pip install 'bytepair[viz]'") from None


def _plot_sweep(rows: list[dict], path: str) -> None:
    """Bytes per token and (with --embedding-dim) the embedding size against
    the vocabulary size, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    sizes = [r["vocab_size"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(sizes, [r["bytes_per_token"] for r in rows], marker="o", label="bytes per token")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("vocabulary size")
    ax.set_ylabel("held-out bytes per token")
    if rows and "embedding_params" in rows[0]:
        twin = ax.twinx()
        twin.plot(
            sizes,
            [r["embedding_params"] / 1e6 for r in rows],
            color="tab:red",
            marker="s",
            label="embedding parameters (M)",
        )
        twin.set_ylabel("embedding parameters (millions)")
    ax.set_title("sequence length vs vocabulary size")
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    plt.close(fig)


# ---- convert ----

CONVERT_FORMATS = ("tiktoken", "huggingface", "gpt2")


def _convert_targets(output: str, to: str) -> tuple[Path, list[Path]]:
    """Where the conversion writes: (the path to pass the writer, the files it creates)."""
    if to == "tiktoken":
        from .formats.tiktoken import sidecar_path

        path = Path(output)
        if path.is_dir():
            raise CommandError(
                f"{output} is a directory; --to tiktoken writes a file (NAME.tiktoken, "
                "plus NAME.tiktoken.json with the pattern and special tokens)"
            )
        if not path.name.endswith(".tiktoken"):
            raise CommandError(
                f"{output}: --to tiktoken writes a file whose name ends in .tiktoken (bytepair "
                f"reads a file as tiktoken's by that name): give {output}.tiktoken"
            )
        return path, [path, sidecar_path(path)]
    return _train_targets(output, to)


def cmd_convert(args: argparse.Namespace) -> int:
    if args.allow_inexact and args.to != "tiktoken":
        raise CommandError("--allow-inexact only applies to --to tiktoken")
    save_path, targets = _convert_targets(args.output, args.to)
    existing = [str(t) for t in targets if t.exists()]
    if existing and not args.force:
        verb = "exists" if len(existing) == 1 else "exist"
        raise CommandError(f"{' and '.join(existing)} already {verb}; pass --force to replace")
    tokenizer = _load(args.input)
    if not isinstance(tokenizer, Tokenizer):
        algorithm = tokenizer.model.algorithm
        if algorithm != "unigram":
            raise CommandError(
                f"{args.input} is a SentencePiece {algorithm.upper()} model (it merges pieces by their "
                "scores, not by a merge list of bytes): bytepair cannot convert it to any format "
                "(it writes SentencePiece-style models only as a unigram tokenizer.json)"
            )
        if args.to != "huggingface":
            raise CommandError(
                f"{args.input} is a unigram SentencePiece-style model; "
                "it converts to --to huggingface only (tokenizer.json)"
            )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.to == "tiktoken":
            from .formats.tiktoken import save_tiktoken

            with _made_directory(save_path.parent):
                try:
                    save_tiktoken(tokenizer, save_path, force=args.allow_inexact, overwrite=True)
                except ValueError as e:  # the library's hint names its argument, not the flag
                    raise CommandError(_cli_force_hint(str(e))) from None
        else:
            if isinstance(tokenizer, Tokenizer) and tokenizer.model.merges is None:
                # tiktoken's rule as a merge list, checked to give the same ids.
                from .formats.tiktoken import merge_list_model

                tokenizer = Tokenizer(merge_list_model(tokenizer))
            with _made_directory(save_path if args.to == "gpt2" else save_path.parent):
                tokenizer.save(save_path, format=args.to, overwrite=True)
    for warning in caught:
        print(f"{PROG}: warning: {_cli_force_hint(str(warning.message))}", file=sys.stderr)
    print(f"wrote {', '.join(str(t) for t in targets)}")
    return 0


def _cli_force_hint(message: str) -> str:
    """The tiktoken exporter's message with its Python argument named as the flag."""
    return message.replace(
        "Pass force=True to export it anyway", "Pass --allow-inexact to write it anyway"
    ).replace("(force=True)", "(--allow-inexact)")


# ---- gage ----


def _read_binary(source: str) -> bytes:
    """All the bytes of the file ``source``, or of stdin for "-"."""
    if source == "-":
        binary = getattr(sys.stdin, "buffer", None)
        if binary is None:
            raise CommandError("'-' needs a binary stdin; this one only gives text")
        return binary.read()
    path = Path(source)
    if path.is_dir():
        raise CommandError(f"{source}: is a directory")
    if not path.exists():
        raise CommandError(f"{source}: no such file")
    return path.read_bytes()


def _gage(args: argparse.Namespace, work: Callable[[bytes], bytes]) -> tuple[bytes, bytes]:
    """(input, output) of ``work``, the output written to OUT; checks OUT before reading."""
    if args.output != "-":
        target = Path(args.output)
        if target.is_dir():
            raise CommandError(f"{args.output} is a directory; give a file name")
        if target.exists() and not args.force:
            raise CommandError(f"{args.output} already exists; pass --force to replace")
    data = _read_binary(args.input)
    try:
        result = work(data)
    except ValueError as e:
        raise CommandError(f"{'stdin' if args.input == '-' else args.input}: {e}") from None
    if args.output == "-":
        _write_bytes(result)
    else:
        Path(args.output).write_bytes(result)
    return data, result


def cmd_gage_compress(args: argparse.Namespace) -> int:
    from . import gage

    data, packed = _gage(args, gage.compress)
    ratio = f"{len(packed) / len(data):.1%} of the original" if data else "empty input"
    # On stderr when stdout carries the compressed bytes.
    print(
        f"{args.input}: {len(data):,} -> {len(packed):,} bytes ({ratio}), wrote {args.output}",
        file=sys.stderr if args.output == "-" else sys.stdout,
    )
    return 0


def cmd_gage_decompress(args: argparse.Namespace) -> int:
    from . import gage

    _, data = _gage(args, gage.decompress)
    if args.output != "-":
        print(f"wrote {args.output} ({len(data):,} bytes)")
    return 0


# ---- demo ----


def cmd_demo(args: argparse.Namespace) -> int:
    run_demo(args.vocab_size, args.output, force=args.force)
    return 0


# ---- Arguments ----


def _at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {minimum}")
        return value

    return parse


def _model_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "-m",
        "--model",
        "-t",
        "--tokenizer",
        dest="model",
        required=True,
        metavar="MODEL",
        help=f"an encoding name ({', '.join(ENCODINGS)}; the .tiktoken file is read from "
        "$BYTEPAIR_TIKTOKEN_DIR), or a path: a tokenizer.json, a GPT-2 directory "
        "(vocab.json + merges.txt), a .tiktoken file or a SentencePiece .model file",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Train and use exact subword tokenizers: byte-level BPE and the unigram LM.",
        epilog=f"First time? Run `{PROG} demo`.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    train_cmd = commands.add_parser(
        "train",
        help="train a tokenizer on text files or stdin",
        description="Train byte-level BPE or a unigram LM on UTF-8 text files (each file is one "
        "text) or stdin.",
    )
    train_cmd.add_argument(
        "files", nargs="*", metavar="FILE", help="UTF-8 text files; '-' or none: read stdin"
    )
    train_cmd.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="huggingface: a tokenizer.json path, or a directory to write tokenizer.json in; "
        "gpt2: a directory for vocab.json + merges.txt",
    )
    train_cmd.add_argument(
        "--vocab-size",
        type=_at_least(1),
        metavar="N",
        help="tokens in the vocabulary, counting the 256 bytes and the special tokens "
        "(required, except with --resume: the checkpoint's)",
    )
    train_cmd.add_argument(
        "--special",
        action="append",
        metavar="TOKEN",
        help="a special token (repeat for more; ids 0, 1, ... in the order given)",
    )
    train_cmd.add_argument(
        "--model",
        choices=["bpe", "unigram"],
        default="bpe",
        help="bpe: byte-level BPE (default); unigram: the unigram language model "
        "(SentencePiece's algorithm)",
    )
    pre = train_cmd.add_mutually_exclusive_group()
    pre.add_argument(
        "--pretokenizer",
        choices=[*BUILTIN_PATTERNS, "metaspace"],
        default=None,
        help="how text is cut into pieces (default: gpt2 for bpe, metaspace for unigram: "
        "SentencePiece's words, a space written as ▁ at the front of each)",
    )
    pre.add_argument(
        "--pretokenizer-regex",
        metavar="PATTERN",
        help="cut text with this regex instead (the syntax of tiktoken's patterns: "
        "\\p{L}, \\p{N}, look-ahead)",
    )
    train_cmd.add_argument(
        "--min-frequency",
        type=_at_least(1),
        default=None,
        metavar="K",
        help="bpe: stop when the most frequent pair occurs fewer than K times (default: 1)",
    )
    train_cmd.add_argument(
        "--max-token-length",
        type=_at_least(1),
        metavar="BYTES",
        help="bpe: make no token longer than this many bytes",
    )
    train_cmd.add_argument(
        "--stream",
        action="store_true",
        default=None,
        help="read FILEs as streamed documents (files, globs, directories; text where a blank "
        "line ends a document, JSON lines or Parquet with --field; .gz/.zst) instead of each "
        "file as one text",
    )
    train_cmd.add_argument("--field", help="--stream: JSON lines/Parquet field (default: text)")
    ckpt = train_cmd.add_argument_group("checkpoints (bpe)")
    ckpt.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="keep the trainer's state in FILE (once counted, every --checkpoint-every "
        "seconds, on Ctrl-C, at the end); must not exist yet",
    )
    ckpt.add_argument(
        "--checkpoint-every",
        type=float,
        metavar="SECONDS",
        help="how often to write the checkpoint while merging (default: 600)",
    )
    ckpt.add_argument(
        "--resume",
        metavar="FILE",
        help="go on from a checkpoint (no FILE inputs): the merges of the uninterrupted run; "
        "a larger --vocab-size extends a finished run",
    )
    uni = train_cmd.add_argument_group("unigram options (SentencePiece's names and defaults)")
    uni.add_argument(
        "--character-coverage",
        type=float,
        metavar="F",
        help="share of character occurrences the kept characters cover (default: 0.9995)",
    )
    uni.add_argument(
        "--max-piece-length", type=_at_least(1), metavar="N", help="in characters (default: 16)"
    )
    uni.add_argument(
        "--seed-size",
        type=_at_least(1),
        metavar="N",
        help="frequent substrings to start from (default: 1000000)",
    )
    uni.add_argument(
        "--shrinking-factor",
        type=float,
        metavar="F",
        help="share of pieces a pruning keeps (default: 0.75)",
    )
    uni.add_argument(
        "--num-sub-iterations",
        type=_at_least(1),
        metavar="N",
        help="EM steps between prunings (default: 2)",
    )
    uni.add_argument(
        "--byte-fallback",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="characters left out become their UTF-8 byte pieces instead of <unk> (default: no)",
    )
    train_cmd.add_argument(
        "--format",
        choices=["huggingface", "gpt2"],
        default="huggingface",
        help="huggingface: tokenizer.json (default); gpt2: vocab.json + merges.txt",
    )
    train_cmd.add_argument(
        "--from-counts",
        nargs="+",
        metavar="DIR",
        help="train BPE on count directories written by `bytepair count` (their shards merge)",
    )
    train_cmd.add_argument("--force", action="store_true", help="replace an existing output")
    train_cmd.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars on stderr (default: when stderr is a terminal)",
    )
    train_cmd.set_defaults(run=cmd_train)

    encode_cmd = commands.add_parser(
        "encode",
        help="text -> token ids",
        description="Print the token ids of TEXT (or of stdin, exactly, newline included).",
    )
    _model_argument(encode_cmd)
    encode_cmd.add_argument("text", nargs="?", metavar="TEXT", help="the text (default: stdin)")
    encode_cmd.add_argument("--json", action="store_true", help="print a JSON list")
    specials = encode_cmd.add_mutually_exclusive_group()
    specials.add_argument(
        "--allow-special",
        action="store_true",
        help="encode special-token text as the special ids (default: it is an error)",
    )
    specials.add_argument(
        "--ordinary", action="store_true", help="encode special-token text as plain text"
    )
    unigram_encode = encode_cmd.add_mutually_exclusive_group()
    unigram_encode.add_argument(
        "--nbest",
        type=_at_least(1),
        metavar="K",
        help="unigram: the K best segmentations, one per line: log-probability, tab, ids "
        '(with --json: one JSON list of {"logprob": ..., "ids": [...]} objects, best first)',
    )
    unigram_encode.add_argument(
        "--sample",
        action="store_true",
        help="unigram: a segmentation drawn with probability ∝ P^alpha (subword regularization)",
    )
    encode_cmd.add_argument("--alpha", type=float, metavar="A", help="with --sample (default: 0.1)")
    encode_cmd.add_argument(
        "--seed", type=int, metavar="S", help="with --sample: reproducible draws"
    )
    encode_cmd.set_defaults(run=cmd_encode)

    decode_cmd = commands.add_parser(
        "decode",
        help="token ids -> text",
        description="Print the text of the ids (arguments, or stdin: whitespace-separated "
        "or a JSON list). Invalid UTF-8 becomes U+FFFD; --bytes gives the raw bytes.",
    )
    _model_argument(decode_cmd)
    decode_cmd.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: stdin)")
    decode_cmd.add_argument("--bytes", action="store_true", help="write the raw bytes")
    decode_cmd.set_defaults(run=cmd_decode)

    inspect_cmd = commands.add_parser(
        "inspect",
        help="summarize a tokenizer",
        description="Vocab size, merges, pre-tokenizer, special tokens, first and last merges "
        "and the longest tokens of a tokenizer.json, a directory holding one or "
        "vocab.json + merges.txt, a .tiktoken file, a SentencePiece .model file or an "
        "encoding name (for a unigram model: its pieces, scores and longest pieces).",
    )
    inspect_cmd.add_argument(
        "path", metavar="MODEL", help="a path, or an encoding name (as for encode --model)"
    )
    inspect_cmd.set_defaults(run=cmd_inspect)

    count_cmd = commands.add_parser(
        "count",
        help="count pre-tokens into shards (bounded memory), for train --from-counts",
        description="Count the pre-tokens of INPUTS (files, globs, directories; text, JSON "
        "lines, Parquet; .gz/.zst) into hash-partitioned shards in OUT, writing a run out "
        "whenever the counts pass --max-memory. Directories of several runs or machines merge "
        "exactly in `bytepair train --from-counts`.",
    )
    count_cmd.add_argument("inputs", nargs="+", metavar="INPUT")
    count_cmd.add_argument("-o", "--output", required=True, metavar="DIR")
    count_cmd.add_argument("--field", default="text", help="JSON lines / Parquet field (text)")
    count_pre = count_cmd.add_mutually_exclusive_group()
    count_pre.add_argument("--pretokenizer", choices=list(BUILTIN_PATTERNS), default="gpt2")
    count_pre.add_argument("--pretokenizer-regex", metavar="PATTERN")
    count_cmd.add_argument("--special", action="append", metavar="TOKEN")
    count_cmd.add_argument("--partitions", type=_at_least(1), default=16, metavar="P")
    count_cmd.add_argument(
        "--max-memory", type=_memory, default=1 << 30, metavar="SIZE", help="e.g. 512M (1G)"
    )
    count_cmd.add_argument("--force", action="store_true", help="replace existing counts")
    count_cmd.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="count on Ray: a local cluster, or ADDRESS (auto, HOST:PORT, ray://...); inputs "
        "and DIR must be on a filesystem every node shares (pip install 'bytepair[ray]')",
    )
    count_cmd.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: when stderr is a terminal)",
    )
    count_cmd.set_defaults(run=cmd_count)

    dataset_cmd = commands.add_parser(
        "encode-dataset",
        help="encode a corpus into numpy token shards (resumable)",
        description="Encode the documents of INPUTS (files, globs, directories; text, JSON "
        "lines, Parquet; .gz/.zst) into shards of uint16 tokens (uint32 when the vocabulary "
        "needs it) with document offsets, on all cores. Read them with "
        "bytepair.dataset.TokenDataset(OUT). An interrupted run goes on with --resume.",
    )
    dataset_cmd.add_argument("inputs", nargs="+", metavar="INPUT")
    _model_argument(dataset_cmd)
    dataset_cmd.add_argument("-o", "--output", required=True, metavar="DIR")
    dataset_cmd.add_argument("--field", default="text", help="JSON lines / Parquet field (text)")
    dataset_cmd.add_argument(
        "--eot",
        metavar="TOKEN",
        help="append this token after every document: a special token's text "
        "(e.g. '<|endoftext|>') or an id",
    )
    dataset_cmd.add_argument(
        "--dtype",
        choices=["uint16", "uint32"],
        help="token type (default: uint16 when every id fits, else uint32)",
    )
    dataset_cmd.add_argument(
        "--shard-tokens",
        type=_at_least(1),
        metavar="N",
        help="a shard closes after the document that brings it to N tokens (default: 2^27)",
    )
    dataset_cmd.add_argument(
        "--allow-special",
        action="store_true",
        help="encode special-token text as the special ids (default: as plain text)",
    )
    dataset_again = dataset_cmd.add_mutually_exclusive_group()
    dataset_again.add_argument(
        "--resume", action="store_true", help="finish an interrupted run in DIR"
    )
    dataset_again.add_argument("--force", action="store_true", help="replace a dataset in DIR")
    dataset_cmd.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: when stderr is a terminal)",
    )
    dataset_cmd.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="encode on Ray: a local cluster, or ADDRESS (auto, HOST:PORT, ray://...); inputs "
        "and DIR must be on a filesystem every node shares (pip install 'bytepair[ray]')",
    )
    dataset_cmd.set_defaults(run=cmd_encode_dataset)

    steps_cmd = commands.add_parser(
        "steps",
        help="watch BPE training merge by merge",
        description="Train byte-level BPE one merge at a time and print each step: the merge "
        "and its count, why it won (ties go to the smallest (left, right) bytes), the pair "
        "counts and the corpus after the merge. SOURCE is a text file, '-' for stdin, or with "
        "--text the text itself.",
    )
    steps_cmd.add_argument("source", metavar="SOURCE", help="a UTF-8 file, '-' (stdin), or text")
    steps_cmd.add_argument(
        "--text", action="store_true", help="SOURCE is the corpus itself, not a file"
    )
    steps_cmd.add_argument(
        "--lines",
        action="store_true",
        help="each line is a text of its own (pairs never cross lines; with --pretokenizer "
        "none, each line is one word, as in SPEC §1's worked example)",
    )
    steps_cmd.add_argument(
        "--merges", type=_at_least(0), default=10, metavar="N", help="how many (default 10)"
    )
    steps_cmd.add_argument(
        "--pretokenizer",
        choices=list(BUILTIN_PATTERNS),
        default="gpt2",
        help="how text is cut before merging (default gpt2; none: the whole text is one word)",
    )
    steps_cmd.add_argument(
        "--top", type=_at_least(1), default=8, metavar="K", help="pair counts shown (default 8)"
    )
    steps_cmd.add_argument(
        "--show", type=_at_least(1), default=6, metavar="K", help="words shown (default 6)"
    )
    steps_cmd.add_argument(
        "--color",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="highlight the winner and ties (default: when stdout is a terminal)",
    )
    steps_cmd.set_defaults(run=cmd_steps)

    viz_cmd = commands.add_parser(
        "viz",
        help="write an interactive page that steps through training",
        description="Write one self-contained HTML page (no network) that steps through BPE "
        "training on the corpus: next / previous / play / a slider, the pair counts with the "
        "winner and ties marked, the corpus after each merge, and a box that tokenizes typed "
        "text with the merges so far.",
    )
    viz_cmd.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text; '-' or none: stdin")
    viz_cmd.add_argument("-o", "--output", required=True, metavar="PAGE", help="the .html file")
    viz_cmd.add_argument(
        "--merges", type=_at_least(1), default=100, metavar="N", help="how many (default 100)"
    )
    viz_cmd.add_argument(
        "--pretokenizer",
        choices=["gpt2", "whitespace", "none"],
        default="gpt2",
        help="the page runs it in the browser too (default gpt2)",
    )
    viz_cmd.add_argument("--force", action="store_true", help="replace an existing page")
    viz_cmd.set_defaults(run=cmd_viz)

    analyze_cmd = commands.add_parser(
        "analyze",
        help="measure tokenizers on held-out text",
        description="Bytes per token, tokens per word, vocabulary use, Rényi efficiency and "
        "unknown tokens of each MODEL on the held-out text; with --train, the OOV rate of a "
        "word-level vocabulary; --sweep trains at several vocabulary sizes.",
    )
    analyze_cmd.add_argument("models", nargs="*", metavar="MODEL", help="as for encode --model")
    analyze_cmd.add_argument("--text", required=True, metavar="FILE", help="held-out UTF-8 text")
    analyze_cmd.add_argument("--train", metavar="FILE", help="training text (OOV, --sweep)")
    analyze_cmd.add_argument(
        "--sweep", metavar="SIZES", help="train at these vocabulary sizes, e.g. 256,512,1k,8k"
    )
    analyze_cmd.add_argument(
        "--sweep-model", choices=["bpe", "unigram"], default="bpe", help="for --sweep"
    )
    analyze_cmd.add_argument(
        "--embedding-dim", type=_at_least(1), metavar="D", help="add the |V| x D embedding cost"
    )
    analyze_cmd.add_argument(
        "--untied", action="store_true", help="input and output embeddings are separate (x2)"
    )
    analyze_cmd.add_argument(
        "--sentences", type=_at_least(1), metavar="N", help="show N held-out lines tokenized"
    )
    analyze_cmd.add_argument(
        "--by-script",
        action="store_true",
        help="also measure each writing system's lines apart (multilingual text)",
    )
    analyze_cmd.add_argument(
        "--format", choices=["table", "markdown", "json"], default="table", help="output"
    )
    analyze_cmd.add_argument("--plot", metavar="PNG", help="plot the sweep (needs matplotlib)")
    analyze_cmd.add_argument("--force", action="store_true", help="replace an existing --plot")
    analyze_cmd.set_defaults(run=cmd_analyze)

    convert_cmd = commands.add_parser(
        "convert",
        help="write a tokenizer in another format",
        description="Read IN (an encoding name, a tokenizer.json, a GPT-2 directory, a "
        ".tiktoken file or a SentencePiece unigram .model file, which converts to huggingface "
        "only) and write it to OUT in the format --to names. Never replaces an "
        "existing output without --force. A conversion that would change ids is an error.",
    )
    convert_cmd.add_argument("input", metavar="IN")
    convert_cmd.add_argument(
        "output",
        metavar="OUT",
        help="tiktoken: the file, named NAME.tiktoken (NAME.tiktoken.json is written next to "
        "it); "
        "huggingface: a tokenizer.json path or a directory; gpt2: a directory",
    )
    convert_cmd.add_argument("--to", required=True, choices=CONVERT_FORMATS)
    convert_cmd.add_argument("--force", action="store_true", help="replace existing outputs")
    convert_cmd.add_argument(
        "--allow-inexact",
        action="store_true",
        help="tiktoken: write even when tiktoken's rule would give other ids than the "
        "merge list (with a warning naming the tokens)",
    )
    convert_cmd.set_defaults(run=cmd_convert)

    demo_cmd = commands.add_parser(
        "demo",
        help="train on a bundled novel and show what BPE does",
        description="Train on Natsume Sōseki's Botchan (bundled), show the first merges, "
        "tokenize held-out sentences, save the tokenizer. Never replaces an earlier "
        "demo's tokenizer.json (writes tokenizer-2.json, ...) unless --force.",
    )
    demo_cmd.add_argument(
        "--vocab-size",
        type=_at_least(1),
        default=DEFAULT_VOCAB_SIZE,
        metavar="N",
        help=f"default: {DEFAULT_VOCAB_SIZE}",
    )
    demo_cmd.add_argument(
        "-o",
        "--output",
        default=DEFAULT_DIR,
        metavar="DIR",
        help=f"directory to save tokenizer.json in (default: {DEFAULT_DIR})",
    )
    demo_cmd.add_argument(
        "--force", action="store_true", help="replace DIR/tokenizer.json if it exists"
    )
    demo_cmd.set_defaults(run=cmd_demo)

    gage_cmd = commands.add_parser(
        "gage",
        help="compress a file with Gage's 1994 byte pair encoding",
        description="Philip Gage's byte pair compression (1994), the algorithm BPE is named "
        "after: the most frequent pair of adjacent bytes becomes an unused byte value, "
        "again and again, per 64 KiB block. Lossless; never replaces OUT without --force.",
    )
    gage_actions = gage_cmd.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, run, summary in (
        ("compress", cmd_gage_compress, "IN -> compressed OUT (prints the sizes)"),
        ("decompress", cmd_gage_decompress, "compressed IN -> the original OUT"),
    ):
        action_cmd = gage_actions.add_parser(action, help=summary, description=summary)
        action_cmd.add_argument("input", metavar="IN", help="a file, or '-' for stdin")
        action_cmd.add_argument("output", metavar="OUT", help="a file, or '-' for stdout")
        action_cmd.add_argument("--force", action="store_true", help="replace OUT if it exists")
        action_cmd.set_defaults(run=run)
    return parser


# ---- Running ----


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error) or type(error).__name__


def _silence_stdout() -> None:
    # The reader is gone; point stdout at devnull so the interpreter's final
    # flush does not raise a second BrokenPipeError at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one ``bytepair: warning: ...`` line on stderr (no source line)."""
    print(f"{PROG}: warning: {message}", file=sys.stderr if file is None else file)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():  # restores showwarning for an embedding caller
            warnings.showwarning = _show_warning
            status = args.run(args)
        sys.stdout.flush()
        return status
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # before OSError: it is one
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (CommandError, ValueError, OSError) as e:
        # ValueError: the library's errors about its input (FormatError,
        # DisallowedSpecialError, bad ids, bad training arguments);
        # OSError: files that cannot be read or written.
        print(f"{PROG}: error: {_describe(e)}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
