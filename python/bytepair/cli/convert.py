"""The commands that write files from others: ``convert`` (a tokenizer in
another format), ``gage compress`` / ``gage decompress`` (Gage's byte pair
compression of any file) and ``demo``."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Callable

from ..tokenizers.bpe import Tokenizer
from ..tools.demo import DEFAULT_DIR, DEFAULT_VOCAB_SIZE, run_demo
from ..training.corpus import MAX_VOCAB_SIZE
from .arguments import AddCommand, at_least
from .common import (
    PROG,
    CommandError,
    check_output_file,
    check_targets,
    load_tokenizer,
    made_directory,
    train_targets,
    write_bytes,
)

# ---- convert ----

CONVERT_FORMATS = ("tiktoken", "huggingface", "gpt2")


def _convert_targets(output: str, to: str) -> tuple[Path, list[Path]]:
    """Where the conversion writes: (the path to pass the writer, the files it creates)."""
    if to == "tiktoken":
        from ..formats.tiktoken import sidecar_path

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
    return train_targets(output, to)


def cmd_convert(args: argparse.Namespace) -> int:
    save_path, targets = _convert_targets(args.output, args.to)
    check_targets(args.output, args.to, targets, option="")
    existing = [str(t) for t in targets if t.exists()]
    if existing and not args.force:
        verb = "exists" if len(existing) == 1 else "exist"
        raise CommandError(f"{' and '.join(existing)} already {verb}; pass --force to replace")
    # A warning while loading names something in IN that bytepair does not
    # keep (a post-processor's tokens, single_word, a denormalizer): OUT would
    # not have it either, so its readers would give other ids than IN's.
    with warnings.catch_warnings(record=True) as dropped:
        warnings.simplefilter("always")
        tokenizer = load_tokenizer(args.input)
    lost = [str(w.message) for w in dropped]
    if lost and not args.allow_inexact:
        raise CommandError(
            f"{args.input} holds what {args.to} output would lose, so its readers would give "
            "other ids: " + "; ".join(lost) + ". Pass --allow-inexact to write it anyway"
        )
    for message in lost:
        print(f"{PROG}: warning: {message}", file=sys.stderr)
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
        if tokenizer.flavor == "sentencepiece" and not args.allow_inexact:
            raise CommandError(
                f"{args.input} is a SentencePiece .model file, and tokenizers' rules differ "
                "from sentencepiece's (whitespace other than spaces at the end, '▁' in the "
                "text, the charsmap per grapheme cluster), so the tokenizer.json would give "
                "other ids on some texts. Pass --allow-inexact to write it anyway (a warning "
                "names such a text)"
            )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.to == "tiktoken":
            from ..formats.tiktoken import save_tiktoken

            assert isinstance(tokenizer, Tokenizer)  # other models were refused above
            try:
                save_tiktoken(tokenizer, save_path, force=args.allow_inexact, overwrite=True)
            except ValueError as e:  # the library's hint names its argument, not the flag
                raise CommandError(_cli_force_hint(str(e))) from None
        else:
            if isinstance(tokenizer, Tokenizer) and tokenizer.model.merges is None:
                # tiktoken's rule as a merge list, checked to give the same ids.
                from ..formats.tiktoken import merge_list_model

                tokenizer = Tokenizer(merge_list_model(tokenizer))
            with made_directory(save_path if args.to == "gpt2" else save_path.parent):
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
        check_output_file(target)
        if target.exists() and not args.force:
            raise CommandError(f"{args.output} already exists; pass --force to replace")
    data = _read_binary(args.input)
    try:
        result = work(data)
    except ValueError as e:
        raise CommandError(f"{'stdin' if args.input == '-' else args.input}: {e}") from None
    if args.output == "-":
        write_bytes(result)
    else:
        Path(args.output).write_bytes(result)
    return data, result


def cmd_gage_compress(args: argparse.Namespace) -> int:
    from ..tools import gage

    data, packed = _gage(args, gage.compress)
    ratio = f"{len(packed) / len(data):.1%} of the original" if data else "empty input"
    # On stderr when stdout carries the compressed bytes.
    print(
        f"{args.input}: {len(data):,} -> {len(packed):,} bytes ({ratio}), wrote {args.output}",
        file=sys.stderr if args.output == "-" else sys.stdout,
    )
    return 0


def cmd_gage_decompress(args: argparse.Namespace) -> int:
    from ..tools import gage

    _, data = _gage(args, gage.decompress)
    if args.output != "-":
        print(f"wrote {args.output} ({len(data):,} bytes)")
    return 0


# ---- demo ----


def cmd_demo(args: argparse.Namespace) -> int:
    run_demo(args.vocab_size, args.output, force=args.force)
    return 0


# ---- Arguments ----


def add_parsers(add_command: AddCommand) -> None:
    """The arguments of ``convert``, ``demo``, ``gage``."""
    convert_cmd = add_command(
        "convert",
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
        help="write even when OUT's readers would give other ids than IN's (with a warning "
        "naming what differs): IN holds something bytepair drops (a post-processor adding "
        "tokens, single_word), or, for tiktoken, its rule gives other ids than the merge list; "
        "a SentencePiece .model, whose rules tokenizers does not follow on every text",
    )
    convert_cmd.set_defaults(run=cmd_convert)

    demo_cmd = add_command(
        "demo",
        description="Train on Natsume Sōseki's Botchan (bundled), show the first merges, "
        "tokenize held-out sentences, save the tokenizer. Never replaces an earlier "
        "demo's tokenizer.json (writes tokenizer-2.json, ...) unless --force.",
    )
    demo_cmd.add_argument(
        "--vocab-size",
        type=at_least(1, MAX_VOCAB_SIZE),
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

    gage_cmd = add_command(
        "gage",
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
