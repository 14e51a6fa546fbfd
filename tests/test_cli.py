"""The `bytepair` command line: every command end to end, in-process through
``main([...])``, plus the installed entry point in a subprocess. User errors
must end as ``bytepair: error: ...`` and a non-zero status, never a traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _native, cli
from bytepair.cli import main
from bytepair.cli.common import CommandError
from bytepair.cli.encode import _parse_ids, _parse_ids_slowly
from bytepair.tools.demo import DEFAULT_DIR as DEMO_DIR
from bytepair.tools.display import readable

SPECIAL = "<|endoftext|>"
# CRLF and LF line ends, accents, CJK and an emoji with a skin-tone modifier.
CORPUS = "the cat sat on the mat\r\nthe dog sat on the log\nnaïve café, mañana! 東京 👋🏽\n" * 20
VOCAB_SIZE = 300


def run(*args: object) -> int:
    """``main`` on the command line ``args`` (paths and numbers given as they are)."""
    return main([str(arg) for arg in args])


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_bytes(CORPUS.encode("utf-8"))
    return path


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory, corpus_file) -> Path:
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    options = ("--vocab-size", VOCAB_SIZE, "--special", SPECIAL, "--no-progress")
    assert run("train", corpus_file, "-o", path, *options) == 0
    return path


def set_stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def assert_user_error(capsys, code: int, *fragments: str) -> str:
    """A user error: status 1 or 2, one `bytepair: error:` message naming the problem."""
    captured = capsys.readouterr()
    assert code in (1, 2), captured
    assert "Traceback" not in captured.err
    assert "bytepair" in captured.err and "error:" in captured.err, captured.err
    for fragment in fragments:
        assert fragment in captured.err, captured.err
    return captured.err


# ---- train ----


def test_train_writes_a_loadable_tokenizer_and_a_summary(tmp_path, corpus_file, capsys):
    out = tmp_path / "tok.json"
    options = ("--special", "<a>", "--special", "<b>", "--pretokenizer", "whitespace")
    assert run("train", corpus_file, "-o", out, "--vocab-size", 280, *options) == 0
    summary = capsys.readouterr().out
    assert "vocab size 280" in summary
    assert "reached the requested vocab size" in summary
    assert str(out) in summary
    tokenizer = bytepair.load(out)
    assert tokenizer.n_vocab == 280
    assert tokenizer.special_tokens == {"<a>": 0, "<b>": 1}
    assert tokenizer.pretokenizer.kind == "whitespace"


def test_train_reads_stdin(tmp_path, monkeypatch, capsys):
    set_stdin(monkeypatch, CORPUS.encode("utf-8"))
    out = tmp_path / "tok.json"
    assert run("train", "-o", out, "--vocab-size", "270", "--no-progress") == 0
    expected = bytepair.train(CORPUS, 270, progress=False)
    assert bytepair.load(out).merges == expected.merges


def test_train_reports_an_early_stop(tmp_path, corpus_file, capsys):
    out = tmp_path / "tok.json"
    assert run("train", corpus_file, "-o", out, "--vocab-size", "100000") == 0
    captured = capsys.readouterr()
    assert "no pair of tokens left" in captured.out
    assert "Warning" not in captured.err


def test_train_refuses_to_overwrite_without_force(tmp_path, corpus_file, capsys):
    out = tmp_path / "tok.json"
    out.write_text("precious")
    code = run("train", corpus_file, "-o", out, "--vocab-size", "270")
    assert_user_error(capsys, code, str(out), "--force")
    assert out.read_text() == "precious"

    assert run("train", corpus_file, "-o", out, "--vocab-size", "270", "--force") == 0
    assert bytepair.load(out).n_vocab == 270


def test_train_refuses_an_output_path_it_cannot_write_before_training(
    tmp_path, corpus_file, capsys, monkeypatch
):
    def no_training(*args, **kwargs):
        raise AssertionError("trained before finding that the output cannot be written")

    monkeypatch.setattr(cli.train, "train", no_training)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    gpt2 = ("--format", "gpt2")
    for out, options in [(blocker / "tok.json", ()), (blocker / "sub" / "gpt2", gpt2)]:
        code = run("train", corpus_file, "-o", out, "--vocab-size", 270, *options)
        assert_user_error(capsys, code, f"{blocker} is a file, not a directory")
    (tmp_path / "gpt2" / "merges.txt").mkdir(parents=True)
    code = run("train", corpus_file, "-o", tmp_path / "gpt2", "--vocab-size", 270, *gpt2, "--force")
    assert_user_error(capsys, code, f"{tmp_path / 'gpt2' / 'merges.txt'} is a directory")


def test_train_and_convert_refuse_names_load_reads_as_another_format(tmp_path, corpus_file, capsys):
    """A tokenizer.json written as NAME.tiktoken or NAME.model could not be loaded back
    (`load` reads those names as tiktoken's and SentencePiece's formats)."""
    for name in ("tok.tiktoken", "tok.model"):
        out = tmp_path / name
        code = run("train", corpus_file, "-o", out, "--vocab-size", "270")
        assert_user_error(capsys, code, f"{out}: this writes a HuggingFace tokenizer.json")
        assert not out.exists()
        model = tmp_path / "tok.json"
        if not model.exists():
            assert run("train", corpus_file, "-o", model, "--vocab-size", "270") == 0
            capsys.readouterr()
        code = run("convert", model, out, "--to", "huggingface")
        assert_user_error(capsys, code, f"give a name such as {tmp_path / 'tok.json'}")
        assert not out.exists()


def test_train_gpt2_format_writes_a_directory(tmp_path, corpus_file, capsys):
    out = tmp_path / "gpt2"
    assert run("train", corpus_file, "-o", out, "--vocab-size", "270", "--format", "gpt2") == 0
    assert (out / "vocab.json").is_file() and (out / "merges.txt").is_file()
    assert bytepair.load(out).n_vocab == 270


def test_train_with_a_custom_regex(tmp_path, corpus_file, capsys):
    out = tmp_path / "tok.json"
    code = run(
        "train", corpus_file, "-o", out, "--vocab-size", 270, "--pretokenizer-regex", r"\w+|\W+"
    )
    assert code == 0
    pretokenizer = bytepair.load(out).pretokenizer
    assert (pretokenizer.kind, pretokenizer.pattern) == ("regex", r"\w+|\W+")


def test_train_errors_name_the_problem(tmp_path, corpus_file, capsys):
    train = ("train", corpus_file, "-o", tmp_path / "tok.json")
    code = run("train", tmp_path / "missing.txt", "-o", tmp_path / "tok.json", "--vocab-size", 270)
    assert_user_error(capsys, code, "missing.txt", "no such file")
    code = run(*train, "--vocab-size", 100)
    assert_user_error(capsys, code, "100", "256")
    code = run(*train, "--vocab-size", 270, "--pretokenizer-regex", "(")
    assert_user_error(capsys, code, "'('", "not a valid regex")
    code = run(*train, "--vocab-size", 270, "--format", "gpt2", "--pretokenizer", "none")
    assert_user_error(capsys, code, "--format gpt2")
    assert not (tmp_path / "tok.json").exists()
    with pytest.raises(SystemExit) as exit_info:
        run(*train, "--vocab-size", "many")
    assert_user_error(capsys, exit_info.value.code, "--vocab-size", "'many'")


@pytest.mark.parametrize(
    "option",
    [
        ("--vocab-size", "99999999999", "above the maximum 4294967296"),
        ("--min-frequency", str(1 << 64), "above the maximum"),
        ("--checkpoint-every", "-3", "not a positive number of seconds"),
        ("--checkpoint-every", "nan", "not a positive number of seconds"),
        ("--model", "unigram", "--character-coverage", "2", "not in (0, 1]"),
        ("--model", "unigram", "--shrinking-factor", "nan", "not in (0, 1)"),
        ("--model", "unigram", "--seed-size", str(1 << 64), "above the maximum"),
    ],
)
def test_out_of_range_numbers_name_the_option(tmp_path, corpus_file, capsys, option):
    # The option as typed, not the API's parameter name (vocab_size, ...).
    *args, fragment = option
    flag = next(a for a in args if a not in ("--model", "unigram"))
    with pytest.raises(SystemExit) as exit_info:
        run("train", corpus_file, "-o", tmp_path / "t.json", "--vocab-size", 300, *args)
    err = assert_user_error(capsys, exit_info.value.code, f"argument {flag}", fragment)
    assert "_" not in err.split("error:")[1].split(":")[0]
    assert not (tmp_path / "t.json").exists()


def test_a_path_the_terminal_cannot_show_does_not_fail_a_finished_command(
    tmp_path, corpus_file, monkeypatch
):
    # An ASCII-only stdout (PYTHONIOENCODING=ascii): `wrote <path>` used to
    # end a successful training with "error: 'ascii' codec can't encode".
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", stdout)
    out = tmp_path / "é.json"
    assert run("train", corpus_file, "-o", out, "--vocab-size", 270, "--no-progress") == 0
    stdout.flush()
    assert b"wrote " in stdout.buffer.getvalue() and b"\\xe9.json" in stdout.buffer.getvalue()
    assert out.exists()
    assert stdout.errors == "strict"  # the caller's stream is given back as it was


@pytest.fixture
def no_training(monkeypatch):
    """Every way `train` trains fails the test: refusals must come before."""

    def trained(*args, **kwargs):
        raise AssertionError("trained (or read the counts) before refusing the command")

    from bytepair import api
    from bytepair.training import counts

    monkeypatch.setattr(cli.train, "train", trained)
    monkeypatch.setattr(api, "resume_training", trained)
    monkeypatch.setattr(counts, "train_from_counts", trained)
    monkeypatch.setattr(counts, "read_shard", trained)


@pytest.fixture
def checkpoint_and_counts(tmp_path) -> tuple[Path, Path]:
    """A finished run's checkpoint and a count directory, both pre-tokenized by whitespace."""
    from bytepair.training.counts import count_to_shards

    checkpoint = tmp_path / "run.bpck"
    bytepair.train(CORPUS, 270, pretokenizer="whitespace", checkpoint=checkpoint, progress=False)
    return checkpoint, count_to_shards([CORPUS], tmp_path / "counts", pretokenizer="whitespace")


def test_train_refuses_options_resume_and_from_counts_would_ignore(
    tmp_path, corpus_file, capsys, checkpoint_and_counts, no_training
):
    checkpoint, counts = checkpoint_and_counts
    out = ("-o", tmp_path / "t.json")
    resume = ("train", "--resume", checkpoint, *out)
    from_counts = ("train", "--from-counts", counts, *out, "--vocab-size", 300)
    # Each option is named; none has a default that would be taken for it.
    code = run(*resume, "--min-frequency", 1000, "--max-token-length", 2, "--pretokenizer", "o200k")
    err = assert_user_error(capsys, code, "--resume", "checkpoint alone")
    assert "drop --pretokenizer, --min-frequency, --max-token-length" in err
    for options, named in [
        ((corpus_file,), "FILE arguments"),
        (("--special", SPECIAL), "--special"),
        (("--pretokenizer-regex", r"\w+"), "--pretokenizer-regex"),
        (("--stream",), "--stream"),
        (("--field", "body"), "--field"),
        (("--no-byte-fallback",), "--byte-fallback"),
        (("--seed-size", 10), "--seed-size"),
        (("--model", "unigram"), "--model unigram"),
        (("--from-counts", counts), "--from-counts"),
        (("--checkpoint", tmp_path / "new.bpck"), "--checkpoint"),
    ]:
        assert_user_error(capsys, run(*resume, *options), "--resume", f"drop {named}")
        if named not in ("--from-counts", "--checkpoint"):
            assert_user_error(capsys, run(*from_counts, *options), "--from-counts", f"drop {named}")
    code = run(*from_counts, "--pretokenizer", "o200k", "--special", SPECIAL)
    assert_user_error(capsys, code, "counts alone", "drop --special, --pretokenizer")
    # Outside those modes: options that only go with another one.
    train = ("train", corpus_file, *out, "--vocab-size", 300)
    assert_user_error(capsys, run(*train, "--stream"), "--stream is no longer needed", "drop it")
    assert_user_error(capsys, run(*train, "--checkpoint-every", 5), "--checkpoint-every")
    code = run(*from_counts, "--checkpoint-every", 5)
    assert_user_error(capsys, code, "--checkpoint-every goes with --checkpoint")
    code = run(*train, "--model", "unigram", "--max-token-length", 3, "--min-frequency", 2)
    assert_user_error(capsys, code, "--min-frequency, --max-token-length: byte-level BPE only")
    assert not (tmp_path / "t.json").exists()


def test_train_resume_and_from_counts_take_their_own_options(
    tmp_path, capsys, checkpoint_and_counts
):
    checkpoint, counts = checkpoint_and_counts
    out = tmp_path / "r.json"
    common = ("--checkpoint-every", 5, "--no-progress")
    assert run("train", "--resume", checkpoint, "-o", out, "--vocab-size", 280, *common) == 0
    assert bytepair.load(out).n_vocab == 280
    out, new = tmp_path / "c.json", tmp_path / "c.bpck"
    args = ("train", "--from-counts", counts, "-o", out, "--vocab-size", 280, "--checkpoint", new)
    assert run(*args, "--min-frequency", 2, "--max-token-length", 4, *common) == 0
    assert max(len(t) for t in bytepair.load(out).vocab.values()) <= 4
    assert new.is_file()


def test_train_checks_the_checkpoint_and_format_before_training(
    tmp_path, corpus_file, capsys, checkpoint_and_counts, no_training
):
    checkpoint, counts = checkpoint_and_counts
    train = ("train", corpus_file, "--vocab-size", 300)
    code = run(*train, "-o", tmp_path / "a.json", "--checkpoint", tmp_path / "nodir" / "ck")
    assert_user_error(capsys, code, f"--checkpoint {tmp_path / 'nodir' / 'ck'}", "does not exist")
    code = run(*train, "-o", tmp_path / "a.json", "--checkpoint", tmp_path)
    assert_user_error(capsys, code, "--checkpoint", "is a directory")
    for force in ((), ("--force",)):
        same = tmp_path / "same.json"
        code = run(*train, "-o", same, "--checkpoint", same, *force)
        assert_user_error(capsys, code, f"--checkpoint {same} is also where -o {same} writes")
        code = run("train", "--resume", checkpoint, "-o", checkpoint, *force)
        assert_user_error(capsys, code, f"--resume {checkpoint} is also where -o")
    assert not (tmp_path / "nodir").exists() and not (tmp_path / "same.json").exists()
    # The checkpoint's / the counts' pre-tokenizer (whitespace) cannot be saved as gpt2.
    gpt2 = ("-o", tmp_path / "new" / "gpt2", "--format", "gpt2")
    code = run("train", "--resume", checkpoint, *gpt2, "--vocab-size", 300)
    assert_user_error(capsys, code, "--format gpt2", "the checkpoint's pre-tokenizer is whitespace")
    code = run("train", "--from-counts", counts, *gpt2, "--vocab-size", 300)
    assert_user_error(capsys, code, "--format gpt2", "the counts' pre-tokenizer is whitespace")
    assert not (tmp_path / "new").exists()


def test_a_failed_save_leaves_no_empty_directory(tmp_path, corpus_file, capsys, monkeypatch):
    def failing_save(self, *args, **kwargs):
        raise ValueError("cannot save this one")

    monkeypatch.setattr(bytepair.Tokenizer, "save", failing_save)
    (tmp_path / "kept").mkdir()
    # The directories named as the output (the only ones a command makes).
    for out, options in [
        (tmp_path / "new", ("--format", "gpt2")),
        (f"{tmp_path / 'new'}/", ()),
        (tmp_path / "kept" / "gpt2", ("--format", "gpt2")),
    ]:
        code = run("train", corpus_file, "-o", out, "--vocab-size", 270, *options)
        assert_user_error(capsys, code, "cannot save this one")
        assert not (tmp_path / "new").exists() and not Path(out).exists()
    assert (tmp_path / "kept").is_dir()


# ---- encode / decode ----


def test_encode_decode_roundtrip(tokenizer_file, capsys):
    text = "the cat sat on the log, naïve 東京 👋🏽"
    assert run("encode", "--tokenizer", tokenizer_file, text) == 0
    ids = capsys.readouterr().out.split()
    assert [int(i) for i in ids] == bytepair.load(tokenizer_file).encode(text)
    assert run("decode", "-t", tokenizer_file, *ids) == 0
    assert capsys.readouterr().out == text


def test_encode_json(tokenizer_file, capsys):
    assert run("encode", "-t", tokenizer_file, "--json", "the mat") == 0
    ids = json.loads(capsys.readouterr().out)
    assert ids == bytepair.load(tokenizer_file).encode("the mat")


def test_stdin_roundtrip_is_byte_exact(tokenizer_file, monkeypatch, capsysbinary):
    data = "\ufeffthe dog\r\n\tsat  \n".encode()
    set_stdin(monkeypatch, data)
    assert run("encode", "-t", tokenizer_file, "--json") == 0
    ids_json = capsysbinary.readouterr().out
    set_stdin(monkeypatch, ids_json)
    assert run("decode", "-t", tokenizer_file, "--bytes") == 0
    assert capsysbinary.readouterr().out == data


def test_an_argument_that_is_not_utf8_names_the_byte(tokenizer_file, capsys):
    """Python hands such bytes over as lone surrogates; the message names the byte."""
    text = os.fsdecode(b"ab\xffcd")
    assert_user_error(capsys, run("encode", "-t", tokenizer_file, text), "byte 0xFF at offset 2")
    code = run("steps", "--text", text)
    assert_user_error(capsys, code, "--text argument is not UTF-8", "byte 0xFF at offset 2")
    assert run("encode", "-t", tokenizer_file, os.fsdecode("naïve".encode())) == 0


def test_decode_reads_whitespace_separated_ids(tokenizer_file, monkeypatch, capsys):
    tokenizer = bytepair.load(tokenizer_file)
    ids = tokenizer.encode("the cat\nsat")
    set_stdin(monkeypatch, ("\n".join(map(str, ids)) + "\n").encode())
    assert run("decode", "-t", tokenizer_file) == 0
    assert capsys.readouterr().out == "the cat\nsat"


def test_special_tokens_follow_the_tiktoken_contract(tokenizer_file, capsys):
    text = f"the cat{SPECIAL}"
    code = run("encode", "-t", tokenizer_file, text)
    assert_user_error(capsys, code, SPECIAL, "--allow-special")

    assert run("encode", "-t", tokenizer_file, "--allow-special", text) == 0
    assert capsys.readouterr().out.split()[-1] == "0"  # the special's id
    assert run("encode", "-t", tokenizer_file, "--ordinary", text) == 0
    assert "0" not in capsys.readouterr().out.split()


def test_decode_errors_name_the_id(tokenizer_file, capsys):
    code = run("decode", "-t", tokenizer_file, "5", "999999")
    assert_user_error(capsys, code, "999999")
    code = run("decode", "-t", tokenizer_file, "5", "x7")
    assert_user_error(capsys, code, "'x7'", "not a token id")


def test_decode_ids_are_ascii_digits(tokenizer_file, monkeypatch, capsys):
    """int() read "1_0" as 10 and "１２" (full-width) as 12."""
    set_stdin(monkeypatch, b"5 1_0")
    code = run("decode", "-t", tokenizer_file)
    assert_user_error(capsys, code, "'1_0' at position 1 in stdin is not a token id")
    for word in ("１２", "٣", "²", "+5"):
        code = run("decode", "-t", tokenizer_file, "5", "6", word)
        assert_user_error(capsys, code, f"{word!r} at position 2 in the arguments")
    assert run("decode", "-t", tokenizer_file, "5", "12") == 0


# Text the core's fast path for ids must read as the slow path does, or leave
# to it: numbers (leading zeros, past u32), each kind of whitespace (ASCII,
# and others str.split() cuts at), JSON lists, and words that are no id, in
# the two shapes and mixed.
_NUMBERS = ["0", "7", "12", "007", "4294967295", "4294967296", "99999999999", "00000000001"]
_SPACES = [" ", "\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u3000"]
_NOT_IDS = ["-1", "1.0", "1e3", "true", "x", "１２", "1_0", "[", "]", ","]
_WORD = st.sampled_from(_NUMBERS * 6 + _NOT_IDS)
_SPACE = st.lists(st.sampled_from(_SPACES[:4] * 4 + _SPACES[4:]), max_size=2).map("".join)
_WORDS = st.lists(st.tuples(_SPACE, _WORD), max_size=6).map(
    lambda parts: "".join(space + word for space, word in parts)
)
_SEPARATOR = st.sampled_from([",", ", ", ",\n"] * 4 + [",,", ""])
_JSON = st.tuples(_SPACE, st.lists(st.tuples(_WORD, _SPACE, _SEPARATOR), max_size=4), _SPACE).map(
    lambda t: t[0] + "[" + "".join(w + sp + sep for w, sp, sep in t[1]).rstrip(", \n") + "]" + t[2]
)
_ID_TEXT = st.one_of(
    _WORDS, _JSON, st.lists(st.sampled_from(_NUMBERS + _SPACES + _NOT_IDS)).map("".join)
)


@settings(max_examples=400)
@given(text=_ID_TEXT)
def test_ids_read_by_the_core_are_the_ids_read_word_by_word(text):
    fast = _native.parse_ids(text)
    if fast is None:
        return  # left to the slow path, which reads it or names what is wrong
    assert list(np.frombuffer(fast, dtype=np.uint32)) == _parse_ids_slowly(text, "stdin")


def test_the_core_reads_the_plain_shapes_of_ids():
    assert list(_parse_ids(" 1 2\n007\t3 ", "stdin")) == [1, 2, 7, 3]
    assert list(_parse_ids("\n[1, 2,3]\n", "stdin")) == [1, 2, 3]
    for text in ("1 2", "[1, 2]", "", "[]"):
        assert _native.parse_ids(text) is not None, text
    with pytest.raises(CommandError, match="'x' at position 1 in stdin is not a token id"):
        _parse_ids("1 x", "stdin")


@settings(max_examples=200)
@given(ids=st.lists(st.integers(0, 2**32 - 1), max_size=20))
def test_ids_are_printed_as_python_joins_and_dumps_them(ids):
    for form in (ids, np.array(ids, dtype=np.uint32)):
        assert _native.format_ids(form, False).decode() == " ".join(map(str, ids))
        assert _native.format_ids(form, True).decode() == json.dumps(ids)


def test_bad_tokenizer_file_is_a_clean_error(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    code = run("encode", "-t", broken, "hi")
    assert_user_error(capsys, code, str(broken), "JSON")
    code = run("inspect", tmp_path / "absent.json")
    assert_user_error(capsys, code, "absent.json")


# ---- inspect ----


def test_inspect_shows_size_specials_and_merges(tokenizer_file, capsys):
    assert run("inspect", tokenizer_file) == 0
    out = capsys.readouterr().out
    tokenizer = bytepair.load(tokenizer_file)
    assert f"vocab size:     {tokenizer.n_vocab}" in out
    assert f"merges:         {len(tokenizer.merges)}" in out
    assert f"id      0  {SPECIAL!r}" in out
    assert "first 10 merges:" in out and "last 10 merges:" in out
    left, right = tokenizer.merges[0]
    assert f"merge   1: ({left.decode()!r}, {right.decode()!r})" in out
    assert "10 longest tokens:" in out


# ---- OpenAI encodings, .tiktoken files, convert ----


@pytest.fixture
def tiktoken_dir(shared_data, monkeypatch) -> Path:
    path = shared_data / "models" / "tiktoken"
    if not (path / "cl100k_base.tiktoken").is_file():
        pytest.skip(f"cl100k_base.tiktoken not found in {path}")
    monkeypatch.setenv("BYTEPAIR_TIKTOKEN_DIR", str(path))
    return path


def test_encode_with_an_encoding_name(tiktoken_dir, capsys):
    # "hello world" in OpenAI's encodings, as tiktoken gives it.
    assert run("encode", "--tokenizer", "cl100k_base", "hello world") == 0
    assert capsys.readouterr().out.split() == ["15339", "1917"]
    assert run("encode", "-t", "o200k_base", "--allow-special", "hello world<|endoftext|>") == 0
    assert capsys.readouterr().out.split() == ["24912", "2375", "199999"]
    assert run("encode", "-t", tiktoken_dir / "r50k_base.tiktoken", "hello world") == 0
    assert capsys.readouterr().out.split() == ["31373", "995"]
    assert run("decode", "--tokenizer", "cl100k_base", "15339", "1917") == 0
    assert capsys.readouterr().out == "hello world"


def test_inspect_an_encoding(tiktoken_dir, capsys):
    assert run("inspect", "cl100k_base") == 0
    out = capsys.readouterr().out
    assert "vocab size:     100277 (16 ids unused)" in out
    assert "'<|endofprompt|>'" in out


def test_unknown_model_or_missing_directory_is_a_clean_error(tmp_path, monkeypatch, capsys):
    code = run("encode", "--tokenizer", "cl100k", "hi")
    assert_user_error(capsys, code, "cl100k", "cl100k_base")
    monkeypatch.delenv("BYTEPAIR_TIKTOKEN_DIR", raising=False)
    code = run("encode", "--tokenizer", "o200k_base", "hi")
    assert_user_error(capsys, code, "BYTEPAIR_TIKTOKEN_DIR", "o200k_base.tiktoken", "openaipublic")
    monkeypatch.setenv("BYTEPAIR_TIKTOKEN_DIR", str(tmp_path))
    code = run("encode", "--tokenizer", "o200k_base", "hi")
    assert_user_error(capsys, code, str(tmp_path / "o200k_base.tiktoken"))


def test_convert_to_tiktoken_and_back(tmp_path, tokenizer_file, capsys):
    out = tmp_path / "tok.tiktoken"
    assert run("convert", tokenizer_file, out, "--to", "tiktoken") == 0
    assert f"wrote {out}, {out}.json" in capsys.readouterr().out
    text = "the cat sat on the mat, naïve 東京 👋🏽"
    for model in (tokenizer_file, out):
        assert run("encode", "--tokenizer", model, "--json", text) == 0
        assert json.loads(capsys.readouterr().out) == bytepair.load(tokenizer_file).encode(text)

    code = run("convert", tokenizer_file, out, "--to", "tiktoken")
    assert_user_error(capsys, code, str(out), "--force")
    assert run("convert", tokenizer_file, out, "--to", "tiktoken", "--force") == 0


def test_convert_tiktoken_to_huggingface_and_gpt2(tmp_path, tokenizer_file, tiktoken_dir, capsys):
    out = tmp_path / "hf" / "tokenizer.json"
    assert run("convert", "r50k_base", f"{out.parent}/", "--to", "huggingface") == 0
    text = "Hello world, it's 2024!\n  indented"
    assert bytepair.load(out).encode(text) == bytepair.get_encoding("r50k_base").encode(text)
    assert bytepair.load(out).model.merges is not None  # a merge list, checked exact

    gpt2_dir = tmp_path / "gpt2"
    assert run("convert", tokenizer_file, gpt2_dir, "--to", "gpt2") == 0
    assert bytepair.load(gpt2_dir).encode(text) == bytepair.load(tokenizer_file).encode(text)


def test_convert_refuses_a_merge_list_tiktoken_cannot_reproduce(tmp_path, capsys):
    # "abc" comes from a + bc, but merging its bytes gives ab + c: unreachable.
    tokens = tuple(bytes([b]) for b in range(256)) + (b"ab", b"bc", b"abc")
    merges = ((97, 98), (98, 99), (97, 257))
    pretokenizer = bytepair.Pretokenizer("none", None)
    source = tmp_path / "odd.json"
    bytepair.Tokenizer(bytepair.BPEModel(tokens, merges, {}, pretokenizer)).save(source)
    out = tmp_path / "odd.tiktoken"
    code = run("convert", source, out, "--to", "tiktoken")
    assert_user_error(capsys, code, "b'abc' (id 258)", "not reachable")
    assert not out.exists()

    assert run("convert", source, out, "--to", "tiktoken", "--allow-inexact") == 0
    captured = capsys.readouterr()
    assert "bytepair: warning:" in captured.err and "b'abc'" in captured.err
    assert out.exists()


def test_convert_refuses_to_drop_what_the_input_file_holds(tmp_path, capsys):
    """A post-processor that adds tokens (tokenizers' default encode) and a
    special's single_word are not kept by bytepair, so the converted file
    would give other ids: an error unless --allow-inexact."""
    tok = bytepair.train(["hello world, hello there"] * 5, 270, special_tokens=["<s>"])
    source = tmp_path / "in.json"
    tok.save(source)
    document = json.loads(source.read_text(encoding="utf-8"))
    document["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": "<s>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}},
    }
    source.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "out.json"
    for to, target in (("huggingface", out), ("tiktoken", tmp_path / "out.tiktoken")):
        code = run("convert", source, target, "--to", to)
        assert_user_error(capsys, code, "post_processor", "--allow-inexact")
        assert not target.exists()
    assert run("convert", source, out, "--to", "huggingface", "--allow-inexact") == 0
    assert "bytepair: warning: " in capsys.readouterr().err and out.exists()


# ---- analyze ----


def test_analyze_checks_the_plot_path_before_the_sweep(tmp_path, corpus_file, capsys, monkeypatch):
    from bytepair.tools import analysis

    trained = []
    real_sweep = analysis.sweep
    monkeypatch.setattr(analysis, "sweep", lambda *a, **k: trained.append(a) or real_sweep(*a, **k))
    png = tmp_path / "sweep.png"
    png.write_bytes(b"the user's file")
    args = ("analyze", "--text", corpus_file, "--train", corpus_file, "--sweep", "260,270")

    assert_user_error(capsys, run(*args, "--plot", png), str(png), "already exists", "--force")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code = run(*args, "--plot", blocker / "sub" / "sweep.png")
    assert_user_error(capsys, code, str(blocker), "not a directory")
    assert_user_error(capsys, run(*args, "--plot", tmp_path, "--force"), "is a directory")
    code = run("analyze", "--text", corpus_file, "--train", corpus_file, "--plot", png)
    assert_user_error(capsys, code, "--plot", "--sweep")
    assert trained == [] and png.read_bytes() == b"the user's file"

    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the viz extra)")
    assert run(*args, "--plot", png, "--force") == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and len(trained) == 1
    code = run(*args, "--plot", tmp_path / "new" / "sweep.png")
    assert_user_error(capsys, code, f"the directory {tmp_path / 'new'} does not exist")
    assert not (tmp_path / "new").exists()


def test_analyze_reads_a_text_that_is_not_a_regular_file(tmp_path, tokenizer_file, capsys):
    # /dev/null is an empty text, as an empty file is; a named pipe is read as a file is.
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert_user_error(capsys, run("analyze", tokenizer_file, "--text", empty), "empty")
    code = run("analyze", tokenizer_file, "--text", os.devnull)
    err = assert_user_error(capsys, code, "empty")
    assert "no such file" not in err
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "text.fifo"
        os.mkfifo(fifo)
        writer = threading.Thread(target=fifo.write_bytes, args=(CORPUS.encode("utf-8"),))
        writer.start()
        try:
            assert run("analyze", tokenizer_file, "--text", fifo, "--format", "json") == 0
        finally:
            writer.join()
        row = json.loads(capsys.readouterr().out)["tokenizers"][0]
        assert row["bytes_per_token"] > 1
    code = run("analyze", tokenizer_file, "--text", tmp_path / "missing.txt")
    assert_user_error(capsys, code, "--text", "missing.txt", "no such file")
    code = run("analyze", tokenizer_file, "--text", tmp_path)
    assert_user_error(capsys, code, "--text", "is a directory")


# ---- demo ----


def test_demo_writes_a_loadable_tokenizer_and_never_overwrites(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run("demo", "--vocab-size", "400") == 0
    out = capsys.readouterr().out
    assert "merge   1: (" in out and "merge  15: (" in out
    assert "tokens: " in out and "|" in out
    first = Path("bytepair-demo", "tokenizer.json")
    assert str(first) in out
    assert bytepair.load(first).n_vocab == 400

    assert run("demo", "--vocab-size", "300") == 0
    second = Path("bytepair-demo", "tokenizer-2.json")
    assert str(second) in capsys.readouterr().out
    assert bytepair.load(first).n_vocab == 400
    assert bytepair.load(second).n_vocab == 300

    assert run("demo", "--vocab-size", "350", "--force") == 0
    assert bytepair.load(first).n_vocab == 350


def test_demo_checks_its_arguments_before_the_banner_and_training(tmp_path, monkeypatch, capsys):
    from bytepair.tools import demo

    def no_training(*args, **kwargs):
        raise AssertionError("trained before finding the arguments bad")

    monkeypatch.setattr(demo, "train", no_training)
    monkeypatch.chdir(tmp_path)
    Path("dfile").write_text("the user's file")
    code = run("demo", "-o", "dfile")
    assert_user_error(capsys, code, "dfile is a file")
    code = run("demo", "-o", Path("dfile", "sub"))
    assert_user_error(capsys, code, "is a file, not a directory")
    assert run("demo", "--vocab-size", 100) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "vocab_size 100 is below the 256 single bytes" in captured.err
    assert Path("dfile").read_text() == "the user's file" and not Path(DEMO_DIR).exists()


# ---- viz ----


def test_viz_reports_the_merges_it_made(tmp_path, capsys):
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("ab ab abc", encoding="utf-8")
    made = len(list(bytepair.trace([corpus], 500)))
    assert 0 < made < 500
    assert run("viz", corpus, "-o", tmp_path / "p.html", "--merges", 500) == 0
    assert f"p.html: {made} merges;" in capsys.readouterr().out


# ---- process-level behaviour ----


def test_ctrl_c_exits_130_with_one_line(tmp_path, corpus_file, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.train, "train", interrupted)
    code = run("train", corpus_file, "-o", tmp_path / "t.json", "--vocab-size", "270")
    assert code == 130
    assert capsys.readouterr().err == "bytepair: interrupted\n"
    # With a checkpoint written, the line says how to go on instead.
    checkpoint = tmp_path / "c.bpck"

    def interrupted_after_checkpoint(*args, **kwargs):
        checkpoint.write_bytes(b"state")
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.train, "train", interrupted_after_checkpoint)
    code = run(
        "train",
        corpus_file,
        "-o",
        tmp_path / "t.json",
        "--vocab-size",
        "270",
        "--checkpoint",
        checkpoint,
    )
    err = capsys.readouterr().err
    assert code == 130
    assert err.startswith("bytepair: interrupted; go on with `bytepair train --resume")
    assert err.count("\n") == 1


def _console_script() -> Path:
    scripts = Path(sys.executable).parent
    for name in ("bytepair", "bytepair.exe"):
        if (scripts / name).is_file():
            return scripts / name
    pytest.skip(f"the bytepair console script is not installed next to {sys.executable}")


def test_installed_entry_point_runs(tokenizer_file):
    result = subprocess.run(
        [str(_console_script()), "encode", "-t", str(tokenizer_file), "--json", "the cat"],
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == bytepair.load(tokenizer_file).encode("the cat")

    result = subprocess.run(
        [sys.executable, "-m", "bytepair", "decode", "-t", str(tokenizer_file), "999999"],
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.decode().startswith("bytepair: error:")
    assert b"Traceback" not in result.stderr


def test_closed_pipe_ends_quietly(tokenizer_file):
    # The reader is gone before the first write, as with `bytepair decode ... | head`
    # once head has its lines.
    process = subprocess.Popen(
        [str(_console_script()), "decode", "-t", str(tokenizer_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()
    _, err = process.communicate(b"104 " * 100_000, timeout=60)
    assert process.returncode == cli.EXIT_BROKEN_PIPE
    assert err == b""


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        (b"th", "'th'"),
        ("東".encode(), "'東'"),
        ("東".encode()[:2], r"'\xe6\x9d'"),  # a token may end inside a character
        ("\x85".encode(), r"'\u0085'"),  # a character, so not shown like the byte 0x85
        (b"a\\xe3", r"'a\\xe3'"),  # a real backslash stays escaped
        (b"\n ", r"'\n '"),
        (b"\x00", r"'\x00'"),  # U+0000: valid UTF-8, repr's own escape
    ],
)
def test_tokens_are_shown_readably(token, shown):
    assert readable(token) == shown


# ---- Checks before training, output encoding, convert's refusals ----

# Patterns bytepair trains with but tokenizers' regex engine would read otherwise.
UNWRITABLE_REGEXES = [r"(?i)[a-z]+|\s+|.", r"(?<=a+)b|.", r"[[:alpha:]]+|.", r"\p{Greek}+|."]


@pytest.fixture
def unwritable_checkpoint_and_counts(tmp_path) -> tuple[Path, Path]:
    """A finished run's checkpoint and a count directory, cut by a regex that
    tokenizer.json cannot record."""
    import regex

    from bytepair.training.counts import count_to_shards

    pattern = regex.compile(UNWRITABLE_REGEXES[0])
    checkpoint = tmp_path / "odd.bpck"
    bytepair.train(CORPUS, 262, pretokenizer=pattern, checkpoint=checkpoint, progress=False)
    return checkpoint, count_to_shards([CORPUS], tmp_path / "odd-counts", pretokenizer=pattern)


def test_train_refuses_a_pretokenizer_the_output_cannot_record_before_training(
    tmp_path, corpus_file, capsys, unwritable_checkpoint_and_counts, no_training
):
    out = tmp_path / "new" / "t.json"
    train = ("train", corpus_file, "-o", out, "--vocab-size", 300)
    # The unigram writer records the metaspace pre-tokenizer only.
    code = run(*train, "--model", "unigram", "--pretokenizer", "whitespace")
    assert_user_error(capsys, code, "--pretokenizer whitespace", "metaspace", "unigram")
    code = run(*train, "--model", "unigram", "--pretokenizer-regex", r"\w+|\W+")
    assert_user_error(capsys, code, "--pretokenizer-regex", "metaspace")
    for pattern in UNWRITABLE_REGEXES:
        code = run(*train, "--pretokenizer-regex", pattern)
        err = assert_user_error(capsys, code, "--pretokenizer-regex", "tokenizer.json")
        assert repr(pattern) in err
    checkpoint, counts = unwritable_checkpoint_and_counts
    code = run("train", "--resume", checkpoint, "-o", out, "--vocab-size", 300)
    assert_user_error(capsys, code, "the checkpoint's pre-tokenizer", "tokenizer.json")
    code = run("train", "--from-counts", counts, "-o", out, "--vocab-size", 300)
    assert_user_error(capsys, code, "the counts' pre-tokenizer", "tokenizer.json")
    assert not (tmp_path / "new").exists()


def test_output_is_utf8_whatever_the_stdout_encoding(tokenizer_file):
    text = "naïve café, 東京 👋🏽\n"
    ids = bytepair.load(tokenizer_file).encode(text)
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    command = [sys.executable, "-m", "bytepair"]
    model = ("-t", str(tokenizer_file))
    result = subprocess.run(
        [*command, "decode", *model, *map(str, ids)], capture_output=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == text.encode("utf-8")
    result = subprocess.run(
        [*command, "inspect", str(tokenizer_file)], capture_output=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "' 東京'".encode() in result.stdout  # among the longest tokens


def test_convert_to_tiktoken_needs_the_tiktoken_suffix(tmp_path, tokenizer_file, capsys):
    out = tmp_path / "out"
    code = run("convert", tokenizer_file, out, "--to", "tiktoken")
    assert_user_error(capsys, code, f"give {out}.tiktoken")
    assert list(tmp_path.iterdir()) == []


def test_convert_refuses_a_sentencepiece_bpe_model_for_every_format(tmp_path, shared_data, capsys):
    model = shared_data / "models" / "sentencepiece" / "llama2_tokenizer.model"
    if not model.is_file():
        pytest.skip(f"{model} not found")
    for to, out in [("tiktoken", "x.tiktoken"), ("huggingface", "hf"), ("gpt2", "gpt2")]:
        code = run("convert", model, tmp_path / out, "--to", to)
        err = assert_user_error(
            capsys, code, "SentencePiece BPE", "cannot convert it to any format"
        )
        assert "huggingface only" not in err
    assert list(tmp_path.iterdir()) == []


def test_convert_names_the_flag_and_leaves_no_directory_when_refused(
    tmp_path, tokenizer_file, capsys, monkeypatch
):
    tokens = tuple(bytes([b]) for b in range(256)) + (b"ab", b"bc", b"abc")
    merges = ((97, 98), (98, 99), (97, 257))
    source = tmp_path / "odd.json"
    pretokenizer = bytepair.Pretokenizer("none", None)
    bytepair.Tokenizer(bytepair.BPEModel(tokens, merges, {}, pretokenizer)).save(source)
    code = run("convert", source, tmp_path / "odd.tiktoken", "--to", "tiktoken")
    err = assert_user_error(capsys, code, "Pass --allow-inexact to write it anyway")
    assert "force=True" not in err
    assert not (tmp_path / "odd.tiktoken").exists()
    (tmp_path / "ok").mkdir()
    code = run(
        "convert", source, tmp_path / "ok" / "odd.tiktoken", "--to", "tiktoken", "--allow-inexact"
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "(--allow-inexact)" in err and "force=True" not in err

    def failing_save(self, *args, **kwargs):
        raise ValueError("cannot save this one")

    monkeypatch.setattr(bytepair.Tokenizer, "save", failing_save)
    for to, out in [
        ("gpt2", tmp_path / "new"),
        ("huggingface", f"{tmp_path / 'new'}/"),
    ]:
        code = run("convert", tokenizer_file, out, "--to", to)
        assert_user_error(capsys, code, "cannot save this one")
        assert not (tmp_path / "new").exists()


def test_encode_nbest_json_is_one_json_list(tmp_path, capsys):
    path = tmp_path / "uni.json"
    with pytest.warns(UserWarning):  # the small corpus stops the EM early
        unigram = bytepair.train(CORPUS, 80, model="unigram", progress=False)
    unigram.save(path)
    assert run("encode", "-t", path, "--nbest", 3, "--json", "the cat") == 0
    best = json.loads(capsys.readouterr().out)
    assert best == [
        {"logprob": score, "ids": ids} for ids, score in unigram.encode_nbest("the cat", 3)
    ]
    assert run("encode", "-t", path, "--nbest", 3, "the cat") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[1] for line in lines] == [" ".join(map(str, b["ids"])) for b in best]


def test_warnings_are_one_bytepair_line_for_every_command(tokenizer_file, monkeypatch, capsys):
    import warnings

    real_load = cli.common.load_tokenizer

    def warning_load(spec):
        warnings.warn("this file is odd", UserWarning, stacklevel=2)
        return real_load(spec)

    for module in (cli.inspect, cli.encode):  # where inspect and encode look it up
        monkeypatch.setattr(module, "load_tokenizer", warning_load)
    for command in (("inspect", tokenizer_file), ("encode", "-t", tokenizer_file, "the cat")):
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            assert run(*command) == 0
        err = capsys.readouterr().err
        assert err == "bytepair: warning: this file is odd\n", err


def test_inspect_and_convert_help_name_model_files(capsys):
    for command in ("inspect", "convert"):
        with pytest.raises(SystemExit):
            run(command, "--help")
        assert ".model file" in " ".join(capsys.readouterr().out.split())
