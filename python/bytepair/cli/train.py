"""The ``train`` command (from text, a checkpoint or count shards) and the
``count`` command that writes the shards."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Optional

from ..api import UNIGRAM_DEFAULTS, train
from ..formats import gpt2 as gpt2_format
from ..pretokenizers import BUILTIN_PATTERNS
from ..tokenizers.bpe import Tokenizer
from ..training.corpus import MAX_COUNT, MAX_VOCAB_SIZE
from .arguments import AddCommand, at_least, number_in, seconds
from .common import (
    PROG,
    CommandError,
    Interrupted,
    check_output_directory,
    check_targets,
    made_directory,
    ray_address,
    ray_function,
    train_targets,
)

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


# ---- train ----


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


def _training_corpus(sources: Sequence[str], field: str) -> Iterable[str]:
    """The documents of the FILE arguments, read as ``count`` and
    ``encode-dataset`` read them (``read_documents``: streamed), and stdin
    ('-') as one text, in the order given. The inputs are listed (a missing
    one is an error) and stdin is read before training starts."""
    from ..corpus.sources import read_documents
    from .common import read_stdin_text

    if sources.count("-") > 1:
        raise CommandError("'-' (stdin) is given more than once")
    parts: list[Iterable[str]] = []
    files: list[str] = []
    for source in [*sources, None]:  # None: the end, which closes the last run of files
        if source is not None and source != "-":
            files.append(source)
            continue
        if files:
            documents = read_documents(files, field=field)
            documents.files()  # a missing input fails here, before any work
            parts.append(documents)
            files = []
        if source == "-":
            parts.append([read_stdin_text("the corpus")])
    # One part as it is: the trainer reads a Documents of files ahead in a thread.
    return parts[0] if len(parts) == 1 else itertools.chain.from_iterable(parts)


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
    "normalize",
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
    "normalize",
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


def _check_normalize(args: argparse.Namespace) -> None:
    if args.normalize:
        from ..normalization import resolve_normalize

        try:
            resolve_normalize(args.normalize)
        except ValueError as e:
            raise CommandError(f"--normalize: {e}") from None


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
        raise CommandError("give --vocab-size N (e.g. 32000 or 32k); only --resume goes without it")
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
    if args.stream:
        raise CommandError(
            "--stream is no longer needed: FILEs are always read as streamed documents "
            f"(see `{PROG} train --help`); drop it"
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
        _check_normalize(args)
        return
    unigram_options = _given(args, UNIGRAM_OPTIONS)
    if unigram_options:
        raise CommandError(f"{', '.join(unigram_options)}: unigram options; add --model unigram")
    if args.pretokenizer == "metaspace":
        raise CommandError("--pretokenizer metaspace is for --model unigram")
    if args.normalize and args.format == "gpt2":
        raise CommandError(
            "--format gpt2 cannot record --normalize (readers of vocab.json + merges.txt never "
            "normalize): use --format huggingface"
        )
    _check_normalize(args)
    kind = "regex" if args.pretokenizer_regex is not None else args.pretokenizer or "gpt2"
    _check_gpt2_format(args, kind, "the pre-tokenizer")


def _check_gpt2_format(args: argparse.Namespace, kind: str, whose: str) -> None:
    if args.format == "gpt2" and kind not in gpt2_format.PRETOKENIZER_KINDS:
        raise CommandError(
            "--format gpt2 can only record the gpt2 pre-tokenizer (or r50k / p50k: readers of vocab.json + "
            f"merges.txt always apply GPT-2's pattern), and {whose} is {kind}: use "
            "--format huggingface"
        )


def _check_huggingface_format(args: argparse.Namespace, pretokenizer: object, whose: str) -> None:
    """Refuse, before training, a pre-tokenizer the tokenizer.json writer cannot
    record (a regex tokenizers' engine would read otherwise)."""
    if args.format != "huggingface":
        return
    from ..formats.huggingface import pretokenizer_to_json
    from ..pretokenizers import resolve

    try:
        pretokenizer_to_json(resolve("gpt2" if pretokenizer is None else pretokenizer))
    except ValueError as e:
        raise CommandError(f"{whose}: {e}") from None


def _check_checkpoint(args: argparse.Namespace, save_path: Path, targets: list[Path]) -> None:
    """Errors about --checkpoint / --resume that training would meet late."""
    from ..training.bpe import check_checkpoint_path

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
    save_path, targets = train_targets(args.output, args.format)
    _check_checkpoint(args, save_path, targets)
    existing = [str(t) for t in targets if t.exists()]
    if existing and not args.force:  # checked before training, which may take hours
        verb = "exists" if len(existing) == 1 else "exist"
        raise CommandError(f"{' and '.join(existing)} already {verb}; pass --force to replace")
    if args.resume is not None:
        return _resume(args, save_path, targets)
    if args.from_counts:
        return _train_from_counts(args, save_path, targets)
    pretokenizer = _pretokenizer(args)
    if args.model == "bpe":
        whose = "--pretokenizer-regex" if args.pretokenizer_regex is not None else "--pretokenizer"
        _check_huggingface_format(args, pretokenizer, whose)
    check_targets(args.output, args.format, targets)
    corpus = _training_corpus(args.files or ["-"], "text" if args.field is None else args.field)
    options = {
        name: getattr(args, name) for name in UNIGRAM_OPTIONS if getattr(args, name) is not None
    }
    options["normalize"] = args.normalize
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
            raise Interrupted from None
        raise


def _resume(args: argparse.Namespace, save_path: Path, targets: list[Path]) -> int:
    from ..api import resume_training
    from ..training.bpe import read_checkpoint

    path = Path(args.resume)
    if not path.is_file():
        raise CommandError(f"{path}: no such checkpoint file")
    pretokenizer = read_checkpoint(path).pretokenizer
    _check_gpt2_format(args, pretokenizer.kind, "the checkpoint's pre-tokenizer")
    _check_huggingface_format(args, pretokenizer, "the checkpoint's pre-tokenizer")
    check_targets(args.output, args.format, targets)
    with warnings.catch_warnings(), _resumable(args.resume, args.output):
        warnings.simplefilter("ignore")
        tokenizer = resume_training(
            path, args.vocab_size, progress=args.progress, **_checkpoint_every(args)
        )
    _save_trained(tokenizer, save_path, args)
    print(f"vocab size {tokenizer.n_vocab}: {len(tokenizer.merges)} merges, resumed from {path}")
    _summary(tokenizer, args, targets)
    return 0


def _save_trained(tokenizer, save_path: Path, args: argparse.Namespace) -> None:
    directory = save_path if args.format == "gpt2" else save_path.parent
    with made_directory(directory):
        tokenizer.save(save_path, format=args.format, overwrite=args.force)


def _train_from_counts(args: argparse.Namespace, save_path: Path, targets: list[Path]) -> int:
    from ..pretokenizers import Pretokenizer
    from ..training.counts import read_settings, train_from_counts

    kind, pattern, _ = read_settings(args.from_counts)
    _check_gpt2_format(args, kind, "the counts' pre-tokenizer")
    _check_huggingface_format(args, Pretokenizer(kind, pattern), "the counts' pre-tokenizer")
    check_targets(args.output, args.format, targets)
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


def cmd_count(args: argparse.Namespace) -> int:
    from functools import partial

    from ..corpus.sources import input_files, read_documents
    from ..training.counts import MANIFEST, count_to_shards, replacing

    address = ray_address(args.ray) if args.ray is not None else None
    out = Path(args.output)
    check_output_directory(out, "-o")
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
        count_on_ray = partial(ray_function("count_on_ray"), field=args.field, address=address)
        # Listed here, leaving out the old counts, which --force keeps (as
        # count_to_shards does) until the new ones are complete.
        inputs = list(input_files(args.inputs, exclude=[out]))
        replacing(count_on_ray, inputs, out, **options)
    else:
        count_to_shards(read_documents(args.inputs, field=args.field), out, **options)
    print(f"wrote the counts to {out}")
    return 0


# ---- Arguments ----


def add_parsers(add_command: AddCommand) -> None:
    """The arguments of ``train``, ``count``."""
    train_cmd = add_command(
        "train",
        description="Train byte-level BPE or a unigram LM on the documents of FILEs (files, "
        "globs, directories; plain text, JSON lines, Parquet; .gz/.zst), read streamed as "
        "`count` and `encode-dataset` read them (bytepair.read_documents says what ends a "
        "document), or on stdin (one text).",
    )
    train_cmd.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="inputs (files, globs, directories); '-' or none: read stdin as one text",
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
        type=at_least(1, MAX_VOCAB_SIZE),
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
        type=at_least(1, MAX_COUNT),
        default=None,
        metavar="K",
        help="bpe: stop when the most frequent pair occurs fewer than K times (default: 1)",
    )
    train_cmd.add_argument(
        "--max-token-length",
        type=at_least(1, MAX_COUNT),
        metavar="BYTES",
        help="bpe: make no token longer than this many bytes",
    )
    train_cmd.add_argument(
        "--normalize",
        action="append",
        choices=["nfc", "nfkc", "lowercase"],
        help="bpe, unigram: normalize the text between special tokens before cutting it, in "
        "training and in every encoding (repeat to combine a form with lowercase)",
    )
    # Gone (FILEs are always streamed): kept out of the help, refused with a hint.
    train_cmd.add_argument("--stream", action="store_true", default=None, help=argparse.SUPPRESS)
    train_cmd.add_argument("--field", help="JSON lines / Parquet field (default: text)")
    ckpt = train_cmd.add_argument_group("checkpoints (bpe)")
    ckpt.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="keep the trainer's state in FILE (once counted, every --checkpoint-every "
        "seconds, on Ctrl-C, at the end); must not exist yet",
    )
    ckpt.add_argument(
        "--checkpoint-every",
        type=seconds,
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
        type=number_in(0, 1, high_open=False),
        metavar="F",
        help="share of character occurrences the kept characters cover "
        f"(default: {UNIGRAM_DEFAULTS['character_coverage']})",
    )
    uni.add_argument(
        "--max-piece-length",
        type=at_least(1, MAX_COUNT),
        metavar="N",
        help=f"in characters (default: {UNIGRAM_DEFAULTS['max_piece_length']})",
    )
    uni.add_argument(
        "--seed-size",
        type=at_least(1, MAX_COUNT),
        metavar="N",
        help=f"frequent substrings to start from (default: {UNIGRAM_DEFAULTS['seed_size']})",
    )
    uni.add_argument(
        "--shrinking-factor",
        type=number_in(0, 1, high_open=True),
        metavar="F",
        help=f"share of pieces a pruning keeps (default: {UNIGRAM_DEFAULTS['shrinking_factor']})",
    )
    uni.add_argument(
        "--num-sub-iterations",
        type=at_least(1, MAX_COUNT),
        metavar="N",
        help=f"EM steps between prunings (default: {UNIGRAM_DEFAULTS['num_sub_iterations']})",
    )
    uni.add_argument(
        "--byte-fallback",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="characters left out become their UTF-8 byte pieces instead of <unk> "
        f"(default: {'yes' if UNIGRAM_DEFAULTS['byte_fallback'] else 'no'})",
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

    count_cmd = add_command(
        "count",
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
    count_cmd.add_argument("--partitions", type=at_least(1), default=16, metavar="P")
    count_cmd.add_argument(
        "--max-memory",
        type=at_least(0),
        default=1 << 30,
        metavar="BYTES",
        help="write a run of counts out past this much memory, e.g. 512Mi (default: 1Gi)",
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
