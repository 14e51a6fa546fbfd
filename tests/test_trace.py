"""trace(): training one merge at a time gives the trainer's merges, explains
ties as the training rule does, and shows the corpus after each merge."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings

import bytepair
from bytepair.tools.trace import trace
from strategies import PRETOKENIZERS, corpora

GOLDEN = ["low_"] * 5 + ["lower_"] * 2 + ["lowest_"] * 3


def test_the_worked_example_of_the_spec():
    steps = list(trace(GOLDEN, merges=6, pretokenizer="none"))
    assert [(s.pair, s.count) for s in steps] == [
        ((b"l", b"o"), 10),
        ((b"lo", b"w"), 10),
        ((b"low", b"_"), 5),
        ((b"low", b"e"), 5),
        ((b"lowe", b"s"), 3),
        ((b"lowes", b"t"), 3),
    ]
    first, third = steps[0], steps[2]
    # (l,o) beats (o,w) at 10 by the tie rule; (low,_) beats (low,e) at 5: 0x5F < 0x65.
    assert first.tied[:2] == ((b"l", b"o"), (b"o", b"w")) and "0x6C < 0x6F" in first.why
    assert third.tied == ((b"low", b"_"), (b"low", b"e")) and "0x5F < 0x65" in third.why
    assert steps[-1].corpus == (
        ((b"low_",), 5),
        ((b"lowest", b"_"), 3),
        ((b"lowe", b"r", b"_"), 2),
    )
    assert [s.token_id for s in steps] == list(range(256, 262))
    assert steps[1].changed_words == 3 and steps[0].why.startswith("tied at 10")


@settings(max_examples=60)
@given(texts=corpora)
def test_trace_gives_the_trainers_merges(texts):
    for pretokenizer in PRETOKENIZERS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tok = bytepair.train(texts, 300, pretokenizer=pretokenizer, progress=False)
        steps = list(trace(texts, vocab_size=300, pretokenizer=pretokenizer))
        assert [s.pair for s in steps] == tok.merges
        assert tuple(s.count for s in steps) == tok.training.merge_counts


def test_stops_and_bad_arguments():
    assert list(trace("ab ab", merges=0)) == []
    # "ab ab" is one token after 3 merges: (a,b), then (ab, " "), then (ab , ab).
    assert len(list(trace("ab ab", merges=5, pretokenizer="none"))) == 3
    assert list(trace("abab", merges=5, min_frequency=3, pretokenizer="none")) == []
    with pytest.raises(ValueError, match="say when to stop"):
        list(trace("ab"))
    with pytest.raises(TypeError, match="merges must be an int"):
        list(trace("ab", merges="3"))
    # Limits train() refuses were silently an empty trace, or fewer rows.
    for bad, message in [
        ({"merges": -5}, "merges must be at least 0"),
        ({"vocab_size": 10}, "vocab_size must be at least 256"),
        ({"merges": 3, "min_frequency": 0}, "min_frequency must be at least 1"),
        ({"merges": 3, "top": -1}, "top must be at least 0"),
        ({"merges": 3, "show": -2}, "show must be at least 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            list(trace("ab ab", **bad))


def test_steps_command_prints_the_worked_example(tmp_path, capsys):
    from bytepair.cli import main

    corpus = tmp_path / "golden.txt"
    corpus.write_text("low_\n" * 5 + "lower_\n" * 2 + "lowest_\n" * 3, encoding="utf-8")
    assert main(["steps", str(corpus), "--lines", "--merges", "6", "--pretokenizer", "none"]) == 0
    out = capsys.readouterr().out
    heads = [line.split(" (id")[0] for line in out.splitlines() if line.startswith("merge")]
    assert heads == [
        "merge   1: ('l', 'o') -> 'lo'",
        "merge   2: ('lo', 'w') -> 'low'",
        "merge   3: ('low', '_') -> 'low_'",
        "merge   4: ('low', 'e') -> 'lowe'",
        "merge   5: ('lowe', 's') -> 'lowes'",
        "merge   6: ('lowes', 't') -> 'lowest'",
    ]
    assert "0x6C < 0x6F" in out and "0x5F < 0x65" in out and "\033[" not in out
    assert main(["steps", "abab", "--text", "--merges", "9", "--pretokenizer", "none"]) == 0
    assert "stopped after" in capsys.readouterr().out
    assert main(["steps", str(tmp_path / "missing.txt")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_steps_names_the_file_that_is_not_utf8(tmp_path, capsys):
    from bytepair.cli import main

    corpus = tmp_path / "bad.txt"
    corpus.write_bytes(b"low low\nlow\xff lower\n")
    for lines in ([], ["--lines"]):
        assert main(["steps", str(corpus), "--merges", "2", *lines]) == 1
        err = capsys.readouterr().err
        assert f"{corpus}: not UTF-8 text (byte 0xFF at offset 11, line 2)" in err, (lines, err)
