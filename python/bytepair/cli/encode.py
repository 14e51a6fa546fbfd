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
