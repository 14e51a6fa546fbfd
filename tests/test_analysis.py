"""Tokenizer analysis: the metrics on cases worked by hand, the OOV of a
word-level vocabulary, the sweep, and `bytepair analyze` end to end."""

from __future__ import annotations

import json
import math
import re

import pytest

import bytepair
from bytepair.cli import main
from bytepair.tools import analysis

TRAIN = "the cat sat on the mat. the dog sat on the log. " * 40
HELDOUT = "the cat sat on the log. a bird sat on the mat."


@pytest.fixture(scope="module")
def tok():
    return bytepair.train(TRAIN, 290, pretokenizer="gpt2", progress=False)


def test_renyi_efficiency_by_hand():
    assert analysis.renyi_efficiency([5, 5, 5, 5], 4) == pytest.approx(1.0)
    assert analysis.renyi_efficiency([5, 5], 4) == pytest.approx(0.5)  # log 2 / log 4
    assert analysis.renyi_efficiency([10], 4) == 0.0
    assert analysis.renyi_efficiency([1, 3], 2, alpha=1.0) == pytest.approx(
        -(0.25 * math.log(0.25) + 0.75 * math.log(0.75)) / math.log(2)
    )


def test_measure(tok):
    m = analysis.measure(tok, HELDOUT, name="t")
    ids = tok.encode_ordinary(HELDOUT)
    assert m.tokens == len(ids) and m.words == 12 and m.bytes == len(HELDOUT)
    assert m.bytes_per_token == pytest.approx(len(HELDOUT) / len(ids))
    assert m.tokens_per_word == pytest.approx(len(ids) / 12)
    assert m.vocab_used == pytest.approx(len(set(ids)) / tok.n_vocab)
    assert m.unknown_tokens == 0.0 and 0 < m.renyi_efficiency < 1


def test_word_oov_and_embedding_cost():
    oov = analysis.word_oov(TRAIN, HELDOUT)
    # "a" and "bird" are not training words: 2 of 12 running words, 2 of 8 distinct.
    assert oov.word_oov_rate == pytest.approx(2 / 12)
    assert oov.word_type_oov_rate == pytest.approx(2 / 8)
    assert analysis.word_oov(TRAIN, HELDOUT, size=1).size == 1
    assert analysis.embedding_parameters(32000, 512) == 32000 * 512
    assert analysis.embedding_parameters(32000, 512, tied=False) == 2 * 32000 * 512


def test_sweep_grows_tokens_shorter():
    rows = analysis.sweep(TRAIN, HELDOUT, [258, 265, 273])  # 273: every pair merged
    assert [r.vocab_size for r in rows] == [258, 265, 273]
    assert rows[0].bytes_per_token < rows[-1].bytes_per_token


def test_analyze_command(tmp_path, capsys, tok):
    train, held, model = tmp_path / "train.txt", tmp_path / "held.txt", tmp_path / "t.json"
    train.write_text(TRAIN, encoding="utf-8")
    held.write_text(HELDOUT + "\nsecond line\n", encoding="utf-8")
    tok.save(model)
    args = ["analyze", str(model), "--text", str(held), "--train", str(train)]
    assert main([*args, "--sweep", "260,270", "--embedding-dim", "8", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tokenizers"][0]["embedding_params"] == tok.n_vocab * 8
    assert [r["vocab_size"] for r in report["sweep"]] == [260, 270]
    assert report["word_vocabulary"]["size"] > 0
    assert main([*args, "--sentences", "2"]) == 0
    out = capsys.readouterr().out
    assert "bytes_per_token" in out and "|" in out and "word-level vocabulary" in out
    assert main(["analyze", str(model), "--text", str(held), "--sweep", "1k"]) == 1
    assert "--train" in capsys.readouterr().err
    assert main(["analyze", "--text", str(held), "--train", str(train), "--sweep", "2q"]) == 1
    assert "not a size" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "what"), [("", "is empty (no bytes)"), (" \n\t\n", "has no words")]
)
def test_nothing_to_measure_is_an_error(tok, text, what):
    # Every ratio would be 0 / 0: an error, not a row of zeros.
    for call in (
        lambda: analysis.measure(tok, text),
        lambda: analysis.word_oov(TRAIN, text),
        lambda: analysis.sweep(TRAIN, text, [258]),
    ):
        with pytest.raises(ValueError, match=f"the held-out text {re.escape(what)}"):
            call()
    for call in (
        lambda: analysis.word_oov(text, HELDOUT),
        lambda: analysis.sweep(text, HELDOUT, [258]),  # refused before any training
    ):
        with pytest.raises(ValueError, match=f"the training text {re.escape(what)}"):
            call()


def test_analyze_refuses_empty_texts(tmp_path, capsys, tok):
    train, held, model = tmp_path / "train.txt", tmp_path / "held.txt", tmp_path / "t.json"
    empty, blank = tmp_path / "empty.txt", tmp_path / "blank.txt"
    train.write_text(TRAIN, encoding="utf-8")
    held.write_text(HELDOUT, encoding="utf-8")
    empty.write_bytes(b"")
    blank.write_text(" \n\n", encoding="utf-8")
    tok.save(model)
    for args, message in [
        ([str(model), "--text", str(empty)], "the held-out text is empty (no bytes)"),
        ([str(model), "--text", str(blank)], "the held-out text has no words"),
        ([str(model), "--text", str(held), "--train", str(empty)], "the training text is empty"),
        (["--text", str(empty), "--train", str(train), "--sweep", "260"], "held-out text is empty"),
        (
            ["--text", str(held), "--train", str(blank), "--sweep", "260"],
            "training text has no words",
        ),
    ]:
        assert main(["analyze", *args]) == 1, args
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith("bytepair: error: ") and message in captured.err, args


@pytest.mark.slow
def test_analyze_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (the viz extra)")
    train, held = tmp_path / "train.txt", tmp_path / "held.txt"
    train.write_text(TRAIN, encoding="utf-8")
    held.write_text(HELDOUT, encoding="utf-8")
    png = tmp_path / "sweep.png"
    args = ["analyze", "--text", str(held), "--train", str(train), "--sweep", "260,270"]
    assert main([*args, "--plot", str(png), "--embedding-dim", "4"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main([*args, "--plot", str(png)]) == 1
    assert "--force" in capsys.readouterr().err


def test_scripts_group_multilingual_lines(tok):
    assert analysis.script_of("Hello world") == "LATIN"
    assert analysis.script_of("Привет, мир") == "CYRILLIC"
    assert analysis.script_of("吾輩は猫である。") == "JAPANESE"
    assert analysis.script_of("你好世界") == "CJK"
    assert analysis.script_of("123 !!") == "OTHER"
    groups = analysis.by_script("hello there\nПривет\nworld\n")
    assert list(groups) == ["LATIN", "CYRILLIC"] and groups["LATIN"] == "hello there\nworld"
    report = analysis.sentence_report(tok, ["the cat", "the dog sat"])
    assert report[-1].startswith("average: ") and len(report) == 3


def test_analyze_by_script(tmp_path, capsys, tok):
    held, model = tmp_path / "held.txt", tmp_path / "t.json"
    held.write_text("the cat sat\nкот сидел\n", encoding="utf-8")
    tok.save(model)
    assert main(["analyze", str(model), "--text", str(held), "--by-script"]) == 0
    out = capsys.readouterr().out
    assert "[LATIN]" in out and "[CYRILLIC]" in out
