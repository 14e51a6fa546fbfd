"""The commands that look into a tokenizer or into training: ``inspect``,
``steps`` (training merge by merge), ``viz`` (the same as an interactive page)
and ``analyze`` (measurements on held-out text, vocabulary-size sweeps).

``steps`` and ``viz`` show the algorithm step by step, so they run
:mod:`bytepair.tools.trace`, which applies merges with the readable reference
(:mod:`bytepair.reference`): with trace, these are the only parts of the
product that use it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import NotUtf8Error, decode_utf8
from ..pretokenizers import BUILTIN_PATTERNS
from ..tokenizers.bpe import Tokenizer
from ..tools.display import format_merge, readable
from .arguments import AddCommand, at_least
from .common import (
    CommandError,
    argument_text,
    check_output_file,
    corpus_items,
    load_tokenizer,
    parse_size,
    read_stdin_text,
    write_text,
)

SHOWN_MERGES = 10
SHOWN_LONGEST = 10


# ---- inspect ----


def _merge_lines(tokenizer: Tokenizer, merge_ids: list[tuple[int, int]], ranks: range) -> list[str]:
    model = tokenizer.model
    special_ids = set(model.special_tokens.values())
    token_id = {b: i for i, b in enumerate(model.tokens) if b is not None and i not in special_ids}
    lines = []
    for rank in ranks:
        left, right = merge_ids[rank]
        # A merge joins two ids of the vocabulary (never an unused one).
        left_bytes = tokenizer.decode_single_token_bytes(left)
        right_bytes = tokenizer.decode_single_token_bytes(right)
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
    tokenizer = load_tokenizer(args.path)
    if not isinstance(tokenizer, Tokenizer):
        write_text("\n".join(_inspect_unigram(args.path, tokenizer)) + "\n")
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
        (i, token)
        for i, token in enumerate(model.tokens)
        if token is not None and i not in special_ids
    ]
    longest = sorted(ordinary, key=lambda item: (-len(item[1]), item[0]))[:SHOWN_LONGEST]
    out.append(f"{len(longest)} longest tokens:")
    for token, data in longest:
        out.append(f"  id {token:>6}  {len(data):>3} bytes  {readable(data)}")
    write_text("\n".join(out) + "\n")
    return 0


# ---- steps ----


def cmd_steps(args: argparse.Namespace) -> int:
    from ..tools.trace import render, trace

    if args.text:
        corpus: list = [argument_text(args.source, "the --text argument")]
    elif args.source == "-":
        corpus = [read_stdin_text("the corpus")]
    else:
        corpus = corpus_items([args.source])
    if args.lines:  # each line a text of its own (with --pretokenizer none: one word each)
        # A file's text as the trainer reads it: not UTF-8 names the file, line and byte.
        texts = [c if isinstance(c, str) else _read_corpus_text(str(c), "SOURCE") for c in corpus]
        corpus = [line for text in texts for line in text.splitlines() if line]
    color = sys.stdout.isatty() if args.color is None else args.color
    steps = trace(
        corpus, merges=args.merges, pretokenizer=args.pretokenizer, top=args.top, show=args.show
    )
    done = 0
    for step in steps:
        write_text(("\n" if done else "") + render(step, color=color) + "\n")
        done += 1
    if done < args.merges:
        write_text(f"(stopped after {done} merges: no pair of tokens is left)\n")
    return 0


# ---- viz ----


def cmd_viz(args: argparse.Namespace) -> int:
    from ..tools.viz import SAMPLE, page_data, write_page_data

    output = Path(args.output)
    check_output_file(output, "-o")  # a bad path fails before the trace, not after
    if output.exists() and not args.force:
        raise CommandError(f"{output} already exists; pass --force to replace")
    corpus = corpus_items(args.files or ["-"])
    data = page_data(corpus, args.merges, pretokenizer=args.pretokenizer)
    write_page_data(data, output, SAMPLE)
    # A small corpus runs out of pairs before --merges: say how many the page shows.
    print(
        f"wrote {output}: {len(data['steps'])} merges; open it in a browser (it needs no network)"
    )
    return 0


# ---- analyze ----


def _sizes(text: str) -> list[int]:
    """'256,512,1k,32k' -> [256, 512, 1000, 32000] (each as every size is read)."""
    try:
        return [parse_size(part) for part in text.split(",")]
    except ValueError as e:
        raise CommandError(f"--sweep: {e}") from None


def _table(headers: list[str], rows: list[list[object]], style: str) -> str:
    cells = [[f"{c:.4f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    if style == "markdown":
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([fmt.format(*headers)] + [fmt.format(*row) for row in cells])


def cmd_analyze(args: argparse.Namespace) -> int:
    from ..tools import analysis

    if args.plot and not args.sweep:
        raise CommandError("--plot draws the --sweep: give --sweep SIZES")
    if not (args.models or args.sweep):
        raise CommandError("nothing to measure: give TOKENIZER arguments and/or --sweep SIZES")
    sizes = _sizes(args.sweep) if args.sweep else []
    if args.plot:  # checked before the sweep, which trains a tokenizer per size
        _check_plot_target(args.plot, args.force)
    heldout = _read_corpus_text(args.text, "--text")
    train_text = _read_corpus_text(args.train, "--train") if args.train else None
    if args.sweep and train_text is None:
        raise CommandError("--sweep and --plot train tokenizers: give --train TEXT_FILE")
    report: dict = {"tokenizers": [], "sweep": [], "sentences": {}}
    for spec in args.models:
        tok = load_tokenizer(spec)
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
        assert train_text is not None  # checked above: --sweep needs --train
        options = {"model": args.sweep_model}
        for swept in analysis.sweep(train_text, heldout, sizes, **options):
            entry = {**swept.__dict__}
            if args.embedding_dim:
                entry["embedding_params"] = analysis.embedding_parameters(
                    swept.vocab_size, args.embedding_dim, tied=not args.untied
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
        write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
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
    write_text("\n".join(out).lstrip("\n") + "\n")
    return 0


def _read_corpus_text(path: str, what: str) -> str:
    """The whole of a file as UTF-8 text; not only a regular file: a named
    pipe or a device (/dev/null, /dev/stdin) is read as well."""
    source = Path(path)
    if source.is_dir():
        raise CommandError(f"{what} {path}: is a directory; give a text file")
    if not source.exists():
        raise CommandError(f"{what} {path}: no such file")
    try:
        return decode_utf8(source.read_bytes())
    except NotUtf8Error as e:
        raise CommandError(f"{path}: {e}") from None


def _check_plot_target(path: str, force: bool) -> None:
    """Errors the plot would meet only after the sweep: an existing file (without
    --force), a bad path, no matplotlib."""
    target = Path(path)
    check_output_file(target, "--plot")
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


# ---- Arguments ----


def add_parsers(add_command: AddCommand) -> None:
    """The arguments of ``inspect``, ``steps``, ``viz``, ``analyze``."""
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
        "--merges", type=at_least(0), default=10, metavar="N", help="how many (default 10)"
    )
    steps_cmd.add_argument(
        "--pretokenizer",
        choices=list(BUILTIN_PATTERNS),
        default="gpt2",
        help="how text is cut before merging (default gpt2; none: the whole text is one word)",
    )
    steps_cmd.add_argument(
        "--top", type=at_least(1), default=8, metavar="K", help="pair counts shown (default 8)"
    )
    steps_cmd.add_argument(
        "--show", type=at_least(1), default=6, metavar="K", help="words shown (default 6)"
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
        "--merges", type=at_least(1), default=100, metavar="N", help="how many (default 100)"
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
        "--embedding-dim", type=at_least(1), metavar="D", help="add the |V| x D embedding cost"
    )
    analyze_cmd.add_argument(
        "--untied", action="store_true", help="input and output embeddings are separate (x2)"
    )
    analyze_cmd.add_argument(
        "--sentences", type=at_least(1), metavar="N", help="show N held-out lines tokenized"
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
