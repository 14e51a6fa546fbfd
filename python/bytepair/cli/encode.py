"""The commands that turn text into ids and back: ``encode-dataset`` (a corpus
into token shards), ``encode`` and ``decode``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Union

from .. import _native
from ..errors import DisallowedSpecialError

if TYPE_CHECKING:
    import numpy as np
from .arguments import (
    MAX_SHARD_TOKENS,
    AddCommand,
    at_least,
    integer,
    token_or_id,
    tokenizer_argument,
)
from .common import (
    EXIT_INTERRUPTED,
    PROG,
    CommandError,
    argument_text,
    check_output_directory,
    load_tokenizer,
    ray_address,
    ray_function,
    read_stdin_text,
    write_bytes,
    write_text,
)

# ---- encode-dataset ----


def _dataset_options(args: argparse.Namespace) -> dict:
    """encode_dataset's keyword options from the command line (plan's too)."""
    options = {
        "field": args.field,
        "eot": args.eot,  # an int or a special token's text (parser._token_or_id)
        "dtype": args.dtype,
        "allowed_special": "all" if args.allow_special else (),
        "resume": args.resume,
        "overwrite": args.force,
    }
    if args.shard_tokens is not None:
        options["shard_tokens"] = args.shard_tokens
    return options


def cmd_encode_dataset(args: argparse.Namespace) -> int:
    from ..corpus.dataset import TokenDataset, encode_dataset, replacing

    if args.ray is not None:  # the same run, one Ray task per input file
        from functools import partial

        address = ray_address(args.ray)
        on_ray = partial(ray_function("encode_dataset_on_ray"), address=address)
        # As encode_dataset, --force keeps the old dataset until the new one is complete.
        encode_dataset = partial(replacing, on_ray)
    output = Path(args.output)
    check_output_directory(output, "-o")
    tokenizer = load_tokenizer(args.tokenizer)
    replacing_old = args.force and output.is_dir() and any(output.iterdir())
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
        if replacing_old:  # the new dataset was deleted, the old one kept
            print(f"{PROG}: interrupted; {args.output} is left as it was", file=sys.stderr)
            return EXIT_INTERRUPTED
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


def _write_ids(ids: list[int], json_list: bool) -> None:
    """``ids`` on stdout and a newline: separated by spaces, or a JSON list.
    Formatted in the core: ``" ".join(map(str, ids))`` took five times as
    long as encoding the text."""
    write_text(_native.format_ids(ids, json_list).decode("ascii") + "\n")


def _encode_unigram(tokenizer, text: str, args: argparse.Namespace) -> int:
    """--nbest / --sample (unigram models)."""
    from ..tokenizers.unigram import SentencePieceTokenizer

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
                write_text(json.dumps(listed) + "\n")
                return 0
            for ids, score in best:
                write_text(f"{score:.6f}\t{' '.join(map(str, ids))}\n")
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
    _write_ids(ids, args.json)
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    if args.text is not None:
        text = argument_text(args.text, "the TEXT argument")
    else:
        text = read_stdin_text("the text")
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
    _write_ids(ids, args.json)
    return 0


# ---- decode ----


def _parse_ids(text: str, source: str) -> Union[list[int], np.ndarray]:
    """Token ids from ``text``: whitespace-separated numbers, or a JSON list."""
    # The core reads the plain shapes (millions of ids at a time) into a numpy
    # array, which the decoders take whole; what it leaves is read here, which
    # says what is wrong and where.
    fast = _native.parse_ids(text)
    if fast is not None:
        import numpy as np

        return np.frombuffer(fast, dtype=np.uint32)
    return _parse_ids_slowly(text, source)


def _parse_ids_slowly(text: str, source: str) -> list[int]:
    """:func:`_parse_ids` for any text, word by word."""
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
        # ASCII digits only: int() also reads "1_0" as 10 and "１２" (full-width) as 12.
        if not (word.isascii() and word.isdigit()):
            raise CommandError(
                f"{word!r} at position {position} in {source} is not a token id "
                "(a whole number in the digits 0-9)"
            )
        ids.append(int(word))
    return ids


def cmd_decode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    if args.ids:
        ids = _parse_ids(" ".join(args.ids), "the arguments")
    else:
        ids = _parse_ids(read_stdin_text("the ids"), "stdin")
    if args.bytes:
        write_bytes(tokenizer.decode_bytes(ids))
        return 0
    text = tokenizer.decode(ids)
    write_text(text)
    if sys.stdout.isatty() and not text.endswith("\n"):
        write_text("\n")  # only for the prompt's sake; pipes get the text exactly
    return 0


# ---- Arguments ----


def add_parsers(add_command: AddCommand) -> None:
    """The arguments of ``encode-dataset``, ``encode``, ``decode``."""
    dataset_cmd = add_command(
        "encode-dataset",
        description="Encode the documents of INPUTS (files, globs, directories; text, JSON "
        "lines, Parquet; .gz/.zst) into shards of uint16 tokens (uint32 when the vocabulary "
        "needs it) with document offsets, on all cores. Read them with "
        "bytepair.TokenDataset(OUT). An interrupted run goes on with --resume.",
    )
    dataset_cmd.add_argument("inputs", nargs="+", metavar="INPUT")
    tokenizer_argument(dataset_cmd)
    dataset_cmd.add_argument("-o", "--output", required=True, metavar="DIR")
    dataset_cmd.add_argument("--field", default="text", help="JSON lines / Parquet field (text)")
    dataset_cmd.add_argument(
        "--eot",
        type=token_or_id,
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
        type=at_least(1, MAX_SHARD_TOKENS),
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

    encode_cmd = add_command(
        "encode",
        description="Print the token ids of TEXT (or of stdin, exactly, newline included).",
    )
    tokenizer_argument(encode_cmd)
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
        type=at_least(1),
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
        "--seed", type=integer, metavar="S", help="with --sample: reproducible draws"
    )
    encode_cmd.set_defaults(run=cmd_encode)

    decode_cmd = add_command(
        "decode",
        description="Print the text of the ids (arguments, or stdin: whitespace-separated "
        "or a JSON list). Invalid UTF-8 becomes U+FFFD; --bytes gives the raw bytes.",
    )
    tokenizer_argument(decode_cmd)
    decode_cmd.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: stdin)")
    decode_cmd.add_argument("--bytes", action="store_true", help="write the raw bytes")
    decode_cmd.set_defaults(run=cmd_decode)
