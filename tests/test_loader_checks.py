"""Inputs that used to give a silently different tokenizer, or an error naming
the wrong thing: GPT-2 files whose merges do not make the vocabulary, regex
flags the core would drop, a save into a directory that does not exist."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
import regex

import bytepair
from bytepair import FormatError
from bytepair.formats import gpt2
from bytepair.formats.byte_level import BYTE_CHARS
from bytepair.formats.files import write_text_atomic
from bytepair.model import BPEModel
from bytepair.pretokenizers import Pretokenizer, resolve

CORPUS = ["the cat sat on the mat, the dog sat on the log; then they ran off"] * 20

# ---------------------------------------------------------------------------
# GPT-2 pairs: a token no merge makes is special only where specials can be


@pytest.fixture
def real_gpt2(shared_data, tmp_path):
    """A copy of OpenAI's GPT-2 files, to damage."""
    source = shared_data / "models" / "gpt2"
    directory = tmp_path / "gpt2"
    directory.mkdir()
    for name in ("encoder.json", "vocab.bpe"):
        shutil.copy(source / name, directory / name)
    return directory


def test_real_gpt2_files_have_one_special(real_gpt2):
    assert gpt2.load(real_gpt2).special_tokens == {"<|endoftext|>": 50256}


def test_truncated_gpt2_merges_are_an_error_not_ten_thousand_specials(real_gpt2):
    merges = real_gpt2 / "vocab.bpe"
    lines = merges.read_text(encoding="utf-8").split("\n")
    merges.write_text("\n".join(lines[:40000]) + "\n", encoding="utf-8")  # 39,999 merges
    with pytest.raises(FormatError) as info:
        bytepair.load(real_gpt2)
    error = info.value
    assert error.path == str(merges)
    assert "no merge makes 10002 tokens of encoder.json" in error.problem
    assert "10001 of them cannot be special tokens" in error.problem
    assert "'Ġequivalents' (id 40255)" in error.problem and "39999 merges" in error.problem


def test_a_very_long_key_loads_as_a_special_token_in_linear_time(real_gpt2):
    """A 100,000-character key took five minutes: each cut of it was sliced and
    hashed, and the special-token matcher's DFA was quadratic in its length."""
    vocab_path = real_gpt2 / "encoder.json"
    vocab = json.loads(vocab_path.read_text(encoding="utf-8"))
    long_key = "a" * 100_000
    vocab[long_key] = len(vocab)
    vocab_path.write_text(json.dumps(vocab), encoding="utf-8")
    tok = bytepair.load(real_gpt2)
    assert tok.model.special_tokens[long_key] == 50257
    assert tok.encode("x" + long_key + "y", allowed_special="all") == [87, 50257, 88]


def _trained_pair(tmp_path):
    tok = bytepair.train(CORPUS, 300, special_tokens=["<|endoftext|>"], progress=False)
    tok.save(tmp_path / "pair", format="gpt2")
    return tok, tmp_path / "pair"


def test_our_layout_with_specials_first_still_loads(tmp_path):
    tok, directory = _trained_pair(tmp_path)
    assert gpt2.load(directory) == tok.model
    assert tok.special_tokens == {"<|endoftext|>": 0}


def test_truncated_merges_of_a_trained_tokenizer_name_the_file(tmp_path):
    tok, directory = _trained_pair(tmp_path)
    merges = directory / "merges.txt"
    lines = merges.read_text(encoding="utf-8").splitlines()
    merges.write_text("\n".join(lines[:-3]) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        gpt2.load(directory)
    assert info.value.path == str(merges)
    assert "no merge makes 4 tokens of vocab.json, and 3 of them" in info.value.problem
    assert f"(id {len(tok.model.tokens) - 3})" in info.value.problem
    assert "as a merge would" in info.value.problem


def test_merge_missing_from_the_middle_names_the_token_and_id(tmp_path):
    tok, directory = _trained_pair(tmp_path)
    merges = directory / "merges.txt"
    lines = merges.read_text(encoding="utf-8").splitlines()
    used = {token for line in lines[1:] for token in line.split(" ")}
    # A merge in the middle whose result no later merge uses: only its token goes missing.
    index = next(i for i in range(2, len(lines) - 5) if lines[i].replace(" ", "") not in used)
    missing = lines[index].replace(" ", "")
    del lines[index]
    merges.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        gpt2.load(directory)
    assert info.value.path == str(merges)
    assert f"{missing!r} (id " in info.value.problem
    assert "its id lies among those of merged tokens" in info.value.problem


def _model_with_special(text: str, *, first: bool) -> BPEModel:
    tokens = [bytes([b]) for b in range(256)] + [b"th", b"the"]
    merges = [(ord("t"), ord("h")), (256, ord("e"))]
    if first:
        tokens.insert(0, text.encode())
        merges = [(a + 1, b + 1) for a, b in merges]
        return BPEModel(tuple(tokens), tuple(merges), {text: 0}, resolve("gpt2"))
    return BPEModel(tuple(tokens) + (text.encode(),), tuple(merges), {text: 258}, resolve("gpt2"))


def test_save_refuses_a_special_that_would_read_back_as_a_missing_merge(tmp_path):
    # "hi" after every merged token is what a dropped merge (h, i) leaves.
    with pytest.raises(ValueError, match=r"special token 'hi' \(id 258\).*'h' and 'i'"):
        gpt2.save(_model_with_special("hi", first=False), tmp_path / "a")
    assert not (tmp_path / "a").exists() or not any((tmp_path / "a").iterdir())
    # Before every byte (our training layout) it cannot be a missing merge.
    model = _model_with_special("hi", first=True)
    gpt2.save(model, tmp_path / "b")
    assert gpt2.load(tmp_path / "b") == model
    model = _model_with_special("<|endoftext|>", first=False)
    gpt2.save(model, tmp_path / "c")
    assert gpt2.load(tmp_path / "c") == model


def test_special_among_merged_ids_is_refused_both_ways(tmp_path):
    base = _model_with_special("<|x|>", first=False)
    # Move the special between the two merged tokens: id 257, "the" to 258.
    tokens = base.tokens[:257] + (b"<|x|>", b"the")
    model = BPEModel(tokens, ((116, 104), (256, 101)), {"<|x|>": 257}, base.pretokenizer)
    with pytest.raises(ValueError, match=r"'<\|x\|>' \(id 257\).*among those of merged"):
        gpt2.save(model, tmp_path / "a")
    directory = tmp_path / "b"
    directory.mkdir()
    vocab = {BYTE_CHARS[b]: b for b in range(256)} | {"th": 256, "<|x|>": 257, "the": 258}
    (directory / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (directory / "merges.txt").write_text("#version: 0.2\nt h\nth e\n", encoding="utf-8")
    with pytest.raises(
        FormatError, match=r"merges.txt: no merge makes 1 token of vocab.json.*'<\|x\|>' \(id 257\)"
    ):
        gpt2.load(directory)


# ---------------------------------------------------------------------------
# Flags of compiled pre-tokenizer patterns


def python_pieces(pattern: re.Pattern, text: str) -> list[str]:
    """The cutting rule of pretokenizers.py, with Python's engine."""
    pieces, end = [], 0
    for match in pattern.finditer(text):
        if match.start() > end:
            pieces.append(text[end : match.start()])
        if match.end() > match.start():
            pieces.append(match.group())
        end = max(end, match.end())
    if end < len(text):
        pieces.append(text[end:])
    return pieces


def core_pieces(spec, text: str) -> list[str]:
    return bytepair.train(["x"], 256, pretokenizer=spec, progress=False).pretokenize(text)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (re.compile("[a-z]+", re.IGNORECASE), "Hello WORLD"),
        (re.compile(r"^\w+", re.MULTILINE), "one two\nthree four"),
        (re.compile("a.b", re.DOTALL), "a\nb a b"),
        (re.compile(r"[a-z] +  # letters, then spaces", re.VERBOSE), "ab  cd"),
        (re.compile(r"[a-z]+ | \d+", re.IGNORECASE | re.VERBOSE), "AB12cd"),
        (re.compile(r"(?i)[a-z]+", re.IGNORECASE), "Hello WORLD"),
    ],
    ids=["ignorecase", "multiline", "dotall", "verbose", "two-flags", "already-inline"],
)
def test_supported_flags_cut_as_python_does(pattern, text):
    assert core_pieces(pattern, text) == python_pieces(pattern, text)


def test_flags_become_inline_flags_once():
    assert resolve(re.compile("[a-z]+", re.I)) == Pretokenizer("regex", "(?i)[a-z]+")
    assert resolve(re.compile("(?i)[a-z]+", re.I)).pattern == "(?i)[a-z]+"
    assert resolve(re.compile("[a-z]+", re.I | re.S)).pattern == "(?is)[a-z]+"
    assert resolve(regex.compile("[a-z]+", regex.I)).pattern == "(?i)[a-z]+"
    # re.UNICODE is on for every str pattern; it changes nothing.
    assert resolve(re.compile(r"\w+", re.UNICODE)) == Pretokenizer("regex", r"\w+")
    assert resolve(regex.compile(r"\p{L}+")) == Pretokenizer("regex", r"\p{L}+")


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        (re.compile(r"\w+", re.ASCII), "re.ASCII"),
        (re.compile(r"\w+", re.ASCII | re.IGNORECASE), "re.ASCII"),
        (regex.compile(r"\w+", regex.VERSION1), "regex.VERSION1"),
        (regex.compile(r"\w+", regex.WORD), "regex.WORD"),
        (regex.compile(r"\w+", regex.ASCII), "regex.ASCII"),
    ],
)
def test_unsupported_flags_are_named(spec, named):
    with pytest.raises(ValueError, match=rf"compiled with .*{re.escape(named)}.*not support"):
        resolve(spec)
    with pytest.raises(ValueError, match=re.escape(named)):
        bytepair.train(["some text"], 260, pretokenizer=spec, progress=False)


def test_debug_flag_is_named(capsys):
    spec = re.compile("ab", re.DEBUG)
    capsys.readouterr()  # re prints its parse when compiling
    with pytest.raises(ValueError, match=r"re\.DEBUG"):
        resolve(spec)


# ---------------------------------------------------------------------------
# Atomic writes name the path the caller gave


def test_save_into_a_missing_directory_names_the_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tok = bytepair.train(CORPUS, 270, progress=False)
    with pytest.raises(FileNotFoundError) as info:
        tok.save(os.path.join("no_such_dir", "tokenizer.json"))
    message = str(info.value)
    assert info.value.filename == os.path.join("no_such_dir", "tokenizer.json")
    assert "'no_such_dir' does not exist" in message and ".tmp" not in message
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_over_a_directory_names_it_and_leaves_no_temporary(tmp_path):
    (tmp_path / "out.json").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        write_text_atomic(tmp_path / "out.json", "{}")
    assert info.value.filename == str(tmp_path / "out.json") and ".tmp" not in str(info.value)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError) as info:
        write_text_atomic(blocker / "out.json", "{}")
    assert info.value.filename == str(blocker / "out.json") and ".tmp" not in str(info.value)
