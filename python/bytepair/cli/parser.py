"""The argparse parser: every command's arguments, each command's ``run``
function, and the argument types that check numbers and sizes.

The conventions every command follows:

- ``-t/--tokenizer`` names the tokenizer to use (a file or an encoding name);
  ``--model`` is what ``train`` trains (``bpe`` or ``unigram``), as the
  Python ``train(model=...)``. The old ``-m/--model`` of the commands that
  use a tokenizer is refused with a message naming ``-t/--tokenizer``.
- Every whole number is read by :func:`~bytepair.cli.common.parse_size`:
  ``32768``, ``8k``, ``1M``, ``64Ki``.
- An argument error is one line and a hint to ``--help``, not the usage.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, NoReturn, Optional, Union

from .. import __version__
from ..pretokenizers import BUILTIN_PATTERNS
from ..registry import list_encoding_names
from ..tools.demo import DEFAULT_DIR, DEFAULT_VOCAB_SIZE
from ..training.corpus import MAX_COUNT, MAX_VOCAB_SIZE
from .common import PROG, parse_size
from .convert import CONVERT_FORMATS, cmd_convert, cmd_demo, cmd_gage_compress, cmd_gage_decompress
from .encode import cmd_decode, cmd_encode, cmd_encode_dataset
from .inspect import cmd_analyze, cmd_inspect, cmd_steps, cmd_viz
from .train import cmd_count, cmd_train

# ---- Arguments ----

# dataset.MAX_SHARD_TOKENS (offsets are int64), written out: importing the
# dataset module would load numpy for every command.
MAX_SHARD_TOKENS = (1 << 63) - 1


class Parser(argparse.ArgumentParser):
    """An argument error as one line and where to look, not the whole usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} --help` shows the options)\n")


class Renamed(argparse.Action):
    """An option's old spelling: an error that gives the new one."""

    def __init__(self, option_strings: list[str], dest: str, *, hint: str, **kwargs: Any):
        kwargs.setdefault("help", argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)
        self.hint = hint

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: Optional[str] = None,
    ) -> NoReturn:
        parser.error(f"{option_string}: {self.hint}")


def _at_least(minimum: int, maximum: Optional[int] = None) -> Callable[[str], int]:
    """A whole number in [minimum, maximum] (``8k`` and ``1M`` too: one rule
    for every number); argparse names the option in the error."""

    def parse(text: str) -> int:
        try:
            value = parse_size(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{value} is above the maximum {maximum}")
        return value

    return parse


def _token_or_id(text: str) -> Union[int, str]:
    """--eot: an id in ASCII digits, else a special token's text. Other digits
    (Arabic-Indic, full-width, superscripts) are refused, not read as an id:
    int() would take some of them and str.isdigit() all of them."""
    if text.isascii() and text.isdigit():
        return int(text)
    if text.isdigit():
        raise argparse.ArgumentTypeError(
            f"{text!r}: write an id with the ASCII digits 0-9, or give a special token's text"
        )
    return text


def _number_in(low: float, high: float, *, high_open: bool) -> Callable[[str], float]:
    """A number in (low, high] or (low, high)."""
    interval = f"({low}, {high}{')' if high_open else ']'}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        # Written so that NaN fails every bound.
        if not (value > low and (value < high if high_open else value <= high)):
            raise argparse.ArgumentTypeError(f"{text} is not in {interval}")
        return value

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def _tokenizer_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        metavar="TOKENIZER",
        help=f"an encoding name ({', '.join(list_encoding_names())}; the .tiktoken file is read from "
        "$BYTEPAIR_TIKTOKEN_DIR), or a path: a tokenizer.json, a GPT-2 directory "
        "(vocab.json + merges.txt), a .tiktoken file or a SentencePiece .model file",
    )
    command.add_argument(
        "-m",
        "--model",
        action=Renamed,
        hint="give the tokenizer with -t/--tokenizer (--model is what `train` trains: bpe or unigram)",
    )


# The commands in the order `bytepair --help` lists them, each with its line.
COMMANDS = {
    "train": "train a tokenizer on text files or stdin",
    "count": "count pre-tokens into shards, for train --from-counts",
    "encode": "text -> token ids",
    "decode": "token ids -> text",
    "encode-dataset": "encode a corpus into numpy token shards (resumable)",
    "inspect": "summarize a tokenizer",
    "convert": "write a tokenizer in another format",
    "analyze": "measure tokenizers on held-out text",
    "steps": "watch BPE training merge by merge",
    "viz": "write a page that steps through training",
    "demo": "train on a bundled novel and show what BPE does",
    "gage": "compress a file with Gage's 1994 byte pair encoding",
}


def command_list() -> str:
    """The commands, one line each, as `bytepair` and `bytepair --help` show them."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {summary}" for name, summary in COMMANDS.items()]
    return "commands:\n" + "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        usage=f"{PROG} COMMAND [ARGS]",
        description="Train and use exact subword tokenizers: byte-level BPE and the unigram "
        f"LM.\n\n{command_list()}",
        epilog=f"First time? Run `{PROG} demo`. A command's options: `{PROG} COMMAND --help`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS)

    def add_command(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return commands.add_parser(name, prog=f"{PROG} {name}", help=COMMANDS[name], **kwargs)

    train_cmd = add_command(
        "train",
        description="Train byte-level BPE or a unigram LM on the documents of FILEs (files, "
        "globs, directories; plain text, where an empty line ends a document, JSON lines, "
        "Parquet; .gz/.zst), read streamed as `count` and `encode-dataset` read them, or on "
        "stdin (one text).",
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
        type=_at_least(1, MAX_VOCAB_SIZE),
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
        type=_at_least(1, MAX_COUNT),
        default=None,
        metavar="K",
        help="bpe: stop when the most frequent pair occurs fewer than K times (default: 1)",
    )
    train_cmd.add_argument(
        "--max-token-length",
        type=_at_least(1, MAX_COUNT),
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
        type=_seconds,
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
        type=_number_in(0, 1, high_open=False),
        metavar="F",
        help="share of character occurrences the kept characters cover (default: 0.9995)",
    )
    uni.add_argument(
        "--max-piece-length",
        type=_at_least(1, MAX_COUNT),
        metavar="N",
        help="in characters (default: 16)",
    )
    uni.add_argument(
        "--seed-size",
        type=_at_least(1, MAX_COUNT),
        metavar="N",
        help="frequent substrings to start from (default: 1000000)",
    )
    uni.add_argument(
        "--shrinking-factor",
        type=_number_in(0, 1, high_open=True),
        metavar="F",
        help="share of pieces a pruning keeps (default: 0.75)",
    )
    uni.add_argument(
        "--num-sub-iterations",
        type=_at_least(1, MAX_COUNT),
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

    encode_cmd = add_command(
        "encode",
        description="Print the token ids of TEXT (or of stdin, exactly, newline included).",
    )
    _tokenizer_argument(encode_cmd)
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

    decode_cmd = add_command(
        "decode",
        description="Print the text of the ids (arguments, or stdin: whitespace-separated "
        "or a JSON list). Invalid UTF-8 becomes U+FFFD; --bytes gives the raw bytes.",
    )
    _tokenizer_argument(decode_cmd)
    decode_cmd.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: stdin)")
    decode_cmd.add_argument("--bytes", action="store_true", help="write the raw bytes")
    decode_cmd.set_defaults(run=cmd_decode)

    inspect_cmd = add_command(
        "inspect",
        description="Vocab size, merges, pre-tokenizer, special tokens, first and last merges "
        "and the longest tokens of a tokenizer.json, a directory holding one or "
        "vocab.json + merges.txt, a .tiktoken file, a SentencePiece .model file or an "
        "encoding name (for a unigram model: its pieces, scores and longest pieces).",
    )
    inspect_cmd.add_argument(
        "path", metavar="TOKENIZER", help="a path, or an encoding name (as for encode --tokenizer)"
    )
    inspect_cmd.set_defaults(run=cmd_inspect)

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
    count_cmd.add_argument("--partitions", type=_at_least(1), default=16, metavar="P")
    count_cmd.add_argument(
        "--max-memory",
        type=_at_least(0),
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

    dataset_cmd = add_command(
        "encode-dataset",
        description="Encode the documents of INPUTS (files, globs, directories; text, JSON "
        "lines, Parquet; .gz/.zst) into shards of uint16 tokens (uint32 when the vocabulary "
        "needs it) with document offsets, on all cores. Read them with "
        "bytepair.dataset.TokenDataset(OUT). An interrupted run goes on with --resume.",
    )
    dataset_cmd.add_argument("inputs", nargs="+", metavar="INPUT")
    _tokenizer_argument(dataset_cmd)
    dataset_cmd.add_argument("-o", "--output", required=True, metavar="DIR")
    dataset_cmd.add_argument("--field", default="text", help="JSON lines / Parquet field (text)")
    dataset_cmd.add_argument(
        "--eot",
        type=_token_or_id,
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
        type=_at_least(1, MAX_SHARD_TOKENS),
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

    steps_cmd = add_command(
        "steps",
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
        "none, each line is one word, as in the training rule's worked example)",
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

    viz_cmd = add_command(
        "viz",
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

    analyze_cmd = add_command(
        "analyze",
        description="Bytes per token, tokens per word, vocabulary use, Rényi efficiency and "
        "unknown tokens of each TOKENIZER on the held-out text; with --train, the OOV rate of a "
        "word-level vocabulary; --sweep trains at several vocabulary sizes.",
    )
    analyze_cmd.add_argument(
        "models", nargs="*", metavar="TOKENIZER", help="as for encode --tokenizer"
    )
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
        type=_at_least(1, MAX_VOCAB_SIZE),
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
    return parser
