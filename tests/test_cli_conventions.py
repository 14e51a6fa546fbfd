"""The conventions every `bytepair` command follows: the command list, one
meaning per option name, one reading of sizes, outputs written only where the
user pointed, short argument errors, and summaries instead of dumps."""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import pytest

import bytepair
from bytepair.cli import main
from bytepair.cli.arguments import integer
from bytepair.cli.common import parse_size
from bytepair.cli.parser import COMMANDS, build_parser

CORPUS = "the cat sat on the mat\nthe dog sat on the log\nnaïve café 東京\n" * 30


def run(*args: object) -> int:
    return main([str(arg) for arg in args])


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(CORPUS, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory, corpus_file) -> Path:
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    assert run("train", corpus_file, "-o", path, "--vocab-size", 300, "--no-progress") == 0
    return path


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


# ---- The command list ----


def test_bare_bytepair_lists_every_command_on_one_line_each(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert set(COMMANDS) == set(subcommands())
    for name, summary in COMMANDS.items():
        [line] = [line for line in lines if line.split()[:1] == [name]]
        assert line.split(None, 1) == [name, summary]
    assert "bytepair COMMAND --help" in captured.err


def test_help_lists_the_same_commands(capsys):
    main([])
    bare = capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == bare
    # Each summary fits one line of an 80-column terminal.
    assert all(len(line) <= 80 for line in bare.splitlines())


# ---- One meaning per option name ----


def test_tokenizer_is_named_by_dash_t_everywhere_it_is_used(tokenizer_file, capsys):
    commands = subcommands()
    for name in ("encode", "decode", "encode-dataset"):
        options = {s: a for a in commands[name]._actions for s in a.option_strings}
        assert options["-t"] is options["--tokenizer"] and options["-t"].required
    assert run("encode", "--tokenizer", tokenizer_file, "the cat") == 0
    ids = capsys.readouterr().out.split()
    assert [int(i) for i in ids] == bytepair.load(tokenizer_file).encode("the cat")


@pytest.mark.parametrize("command", ["encode", "decode", "encode-dataset"])
@pytest.mark.parametrize("old", ["-m", "--model"])
def test_the_old_tokenizer_spelling_is_an_error_naming_the_new_one(
    command, old, tokenizer_file, tmp_path, capsys
):
    args = {"encode": ["hi"], "decode": ["1"], "encode-dataset": [tokenizer_file]}[command]
    with pytest.raises(SystemExit) as exit_info:
        run(command, old, tokenizer_file, *args, "-o", tmp_path / "out")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{old}: give the tokenizer with -t/--tokenizer" in err
    assert not (tmp_path / "out").exists()


def test_model_is_what_train_trains_and_nothing_else():
    """--model takes bpe or unigram where it is an option at all; elsewhere it
    is only the refused old spelling (hidden from --help)."""
    for name, command in subcommands().items():
        for action in command._actions:
            if "--model" not in action.option_strings:
                continue
            if name == "train":
                assert list(action.choices) == ["bpe", "unigram"]
            else:
                assert action.help == argparse.SUPPRESS, name


def test_each_option_name_has_one_meaning_across_commands():
    """The same option string always reaches the same argparse destination,
    and options that read numbers read them all one way."""
    dests: dict[str, set[str]] = {}
    for command in subcommands().values():
        for action in command._actions:
            for option in action.option_strings:
                dests.setdefault(option, set()).add(action.dest)
    clashes = {option: found for option, found in dests.items() if len(found) > 1}
    assert clashes == {}


# ---- Sizes ----


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("32768", 32768),
        ("8k", 8000),
        ("8K", 8000),
        ("1M", 1_000_000),
        ("2G", 2 * 10**9),
        ("1.5k", 1500),
        ("64Ki", 65536),
        ("512mi", 512 << 20),
        ("1Gi", 1 << 30),
        (" 300 ", 300),
    ],
)
def test_sizes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "k", "8q", "1.5", "-1", "1e3", "٣", "０", "8 k", "1,000"])
def test_what_is_not_a_size(text):
    with pytest.raises(ValueError, match="is not a size: write a whole number such as 32768"):
        parse_size(text)


def test_no_option_reads_numbers_its_own_way():
    """Whole numbers go through parse_size (int() would take '１２' and '1_0')."""
    for name, command in subcommands().items():
        for action in command._actions:
            assert action.type is not int, (name, action.option_strings)


def test_a_seed_may_be_negative_and_is_read_as_sizes_are():
    assert integer("-3") == -3 and integer("1k") == 1000 and integer("0") == 0
    for text in ("１２", "1_0", "-", "--1"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not a whole number"):
            integer(text)


def test_every_size_option_reads_sizes_the_same_way(corpus_file, tokenizer_file, tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run("train", corpus_file, "-o", a, "--vocab-size", "0.28k", "--no-progress") == 0
    assert run("train", corpus_file, "-o", b, "--vocab-size", "280", "--no-progress") == 0
    assert bytepair.load(a).merges == bytepair.load(b).merges
    assert bytepair.load(a).n_vocab == 280
    counts = tmp_path / "counts"
    assert run("count", corpus_file, "-o", counts, "--max-memory", "64Ki", "--no-progress") == 0
    documents = tmp_path / "docs.jsonl"
    lines = CORPUS.splitlines()
    documents.write_text("".join(json.dumps({"text": t}) + "\n" for t in lines), encoding="utf-8")
    shards = []
    for size in ("0.1k", "100"):
        out = tmp_path / f"ds-{size}"
        args = ("encode-dataset", documents, "-t", tokenizer_file, "-o", out, "--no-progress")
        assert run(*args, "--shard-tokens", size) == 0
        shards.append([(s["name"], s["documents"]) for s in bytepair.TokenDataset(out).shards])
    assert shards[0] == shards[1] and len(shards[0]) > 1
    capsys.readouterr()
    args = ("analyze", "--text", corpus_file, "--train", corpus_file, "--format", "json")
    assert run(*args, "--sweep", "0.26k,270") == 0
    sweep = json.loads(capsys.readouterr().out)["sweep"]
    assert [row["vocab_size"] for row in sweep] == [260, 270]
    with pytest.raises(SystemExit):
        run("train", corpus_file, "-o", tmp_path / "c.json", "--vocab-size", "8q")
    err = capsys.readouterr().err
    assert "argument --vocab-size: '8q' is not a size" in err


# ---- Output only where the user pointed ----


def writing_commands(corpus_file: Path, tokenizer_file: Path, missing: Path) -> list[list[object]]:
    return [
        ["train", corpus_file, "-o", missing / "t.json", "--vocab-size", 300],
        ["train", corpus_file, "-o", missing / "gpt2", "--vocab-size", 300, "--format", "gpt2"],
        ["train", corpus_file, "-o", f"{missing / 'dir'}/", "--vocab-size", 300],
        ["count", corpus_file, "-o", missing / "counts"],
        ["encode-dataset", corpus_file, "-t", tokenizer_file, "-o", missing / "ds"],
        ["viz", corpus_file, "-o", missing / "page.html"],
        ["convert", tokenizer_file, missing / "t.json", "--to", "huggingface"],
        ["convert", tokenizer_file, missing / "t.tiktoken", "--to", "tiktoken"],
        ["convert", tokenizer_file, missing / "gpt2", "--to", "gpt2"],
        ["gage", "compress", corpus_file, missing / "c.gage"],
        ["demo", "-o", missing / "demo"],
        ["analyze", "--text", corpus_file, "--train", corpus_file, "--sweep", 260]
        + ["--plot", missing / "sweep.png"],
    ]


def test_a_missing_directory_is_an_error_that_names_it(
    corpus_file, tokenizer_file, tmp_path, capsys
):
    missing = tmp_path / "no" / "such"
    for command in writing_commands(corpus_file, tokenizer_file, missing):
        assert run(*command) == 1, command
        captured = capsys.readouterr()
        assert f"the directory {missing} does not exist" in captured.err, command
        assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
        assert not (tmp_path / "no").exists(), command


def test_only_the_directory_named_as_the_output_is_made(corpus_file, tokenizer_file, tmp_path):
    for made, command in [
        ("gpt2", ["train", corpus_file, "--vocab-size", 300, "--format", "gpt2", "-o"]),
        ("hf", ["train", corpus_file, "--vocab-size", 280, "-o", f"{tmp_path / 'hf'}/"]),
        ("counts", ["count", corpus_file, "--no-progress", "-o"]),
        ("ds", ["encode-dataset", corpus_file, "-t", tokenizer_file, "--no-progress", "-o"]),
        ("converted", ["convert", tokenizer_file, "--to", "gpt2"]),
        ("demo", ["demo", "--vocab-size", 300, "-o"]),
    ]:
        target = tmp_path / made
        if command[-1] != f"{target}/":
            command = [*command, target]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert run(*command) == 0, command
        assert target.is_dir() and any(target.iterdir()), command
    assert bytepair.load(tmp_path / "hf" / "tokenizer.json").n_vocab == 280


# ---- Short argument errors ----


@pytest.mark.parametrize(
    "args",
    [
        ["train", "--vocab-size", "many", "-o", "x.json"],
        ["train", "--model", "wordpiece", "-o", "x.json"],
        ["encode", "hi"],
        ["gage", "compress"],
        ["trian"],
    ],
)
def test_argument_errors_are_one_line_and_a_hint(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    prog = " ".join(["bytepair", *args[:2]]) if args[0] == "gage" else f"bytepair {args[0]}"
    shown = "the options"
    if args == ["trian"]:
        prog, shown = "bytepair", "the commands"
        assert "invalid choice: 'trian'" in lines[0]
    assert lines[0].startswith(f"{prog}: error: ")
    assert lines[1] == f"(`{prog} --help` shows {shown})"


# ---- Summaries, not dumps ----


def test_a_training_report_prints_as_a_summary():
    text = " ".join(f"w{i}x{i * 7}y" for i in range(400))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(text, 1500, progress=False)
        unigram = bytepair.train(CORPUS * 5, 60, model="unigram", progress=False)
    report = tok.training
    assert len(report.merge_counts) > 500
    shown = repr(report)
    assert len(shown) < 250
    assert f"merges={len(report.merge_counts)}" in shown
    assert f"counts {report.merge_counts[0]} .. {report.merge_counts[-1]}" in shown
    assert f"stop_reason={report.stop_reason!r}" in shown
    shown = repr(unigram.training)
    assert len(shown) < 250 and f"rounds={len(unigram.training.rounds)} (" in shown
