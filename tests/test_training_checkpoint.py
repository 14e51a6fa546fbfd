"""Training checkpoints and max_token_length: a run stopped at any point and
resumed gives the merges of the uninterrupted run; no token is longer than
max_token_length bytes, exactly as the reference trains."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import _native
from bytepair.errors import FormatError
from bytepair.reference import bpe as reference
from bytepair.training.counts import count_to_shards, train_from_counts
from strategies import corpora
from test_core_equals_reference import assert_same_training


@given(corpora, st.integers(256, 320), st.integers(1, 6))
def test_max_token_length_equals_reference(texts, vocab_size, max_token_length):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        core = bytepair.train(texts, vocab_size, max_token_length=max_token_length, progress=False)
    ref = reference.train(texts, vocab_size, max_token_length=max_token_length)
    assert_same_training(core, ref)
    assert all(len(token) <= max_token_length for token in core.vocab.values())


def _texts() -> list[str]:
    import random

    rng = random.Random(7)
    words = [
        "".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 9))) for _ in range(300)
    ]
    return [" ".join(rng.choice(words) for _ in range(60)) for _ in range(40)]


TEXTS = _texts()


def test_a_finished_run_extends_and_restarts_from_its_checkpoint(tmp_path):
    checkpoint = tmp_path / "run.bpck"
    first = bytepair.train(TEXTS, 280, special_tokens=["<|s|>"], checkpoint=checkpoint)
    assert checkpoint.is_file()
    longer = bytepair.resume_training(checkpoint, 300)
    direct = bytepair.train(TEXTS, 300, special_tokens=["<|s|>"])
    assert longer.merges == direct.merges
    assert longer.model == direct.model
    assert longer.merges[: len(first.merges)] == first.merges
    assert longer.special_tokens == {"<|s|>": 0}
    # Its settings come back with it: the vocabulary size by default.
    again = bytepair.resume_training(checkpoint)
    assert again.n_vocab == 300


def test_max_token_length_is_kept_on_resume(tmp_path):
    checkpoint = tmp_path / "short.bpck"
    bytepair.train(TEXTS, 270, max_token_length=3, checkpoint=checkpoint)
    resumed = bytepair.resume_training(checkpoint, 290)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = bytepair.train(TEXTS, 290, max_token_length=3)
    assert resumed.merges == direct.merges
    assert max(len(t) for t in resumed.vocab.values()) <= 3


def test_an_existing_checkpoint_is_never_overwritten(tmp_path):
    checkpoint = tmp_path / "mine.bpck"
    checkpoint.write_bytes(b"something of the user's")
    with pytest.raises(FileExistsError, match="resume_training"):
        bytepair.train(TEXTS, 270, checkpoint=checkpoint)
    assert checkpoint.read_bytes() == b"something of the user's"


def test_damaged_checkpoints_are_format_errors_naming_the_byte(tmp_path):
    checkpoint = tmp_path / "run.bpck"
    bytepair.train(TEXTS, 280, checkpoint=checkpoint)
    good = checkpoint.read_bytes()
    for at, bit in [(len(good) // 2, 0x01), (len(good) // 3, 0x80), (30, 0x20)]:
        flipped = bytearray(good)
        flipped[at] ^= bit
        checkpoint.write_bytes(bytes(flipped))
        with pytest.raises(FormatError, match=r"run\.bpck \(byte \d+\): "):
            bytepair.resume_training(checkpoint)
    # A flip in the settings (ASCII stays ASCII) is found by the checksum.
    with pytest.raises(FormatError, match="checksum mismatch"):
        bytepair.resume_training(checkpoint)
    checkpoint.write_bytes(good[: len(good) - 9])
    with pytest.raises(FormatError, match="truncated"):
        bytepair.resume_training(checkpoint)
    checkpoint.write_bytes(b"PK\x03\x04 not a checkpoint at all")
    with pytest.raises(FormatError, match="bad magic"):
        bytepair.resume_training(checkpoint)
    with pytest.raises(FileNotFoundError):
        bytepair.resume_training(tmp_path / "missing.bpck")


def test_a_smaller_vocabulary_than_the_checkpoint_holds_is_an_error(tmp_path):
    checkpoint = tmp_path / "run.bpck"
    bytepair.train(TEXTS, 290, checkpoint=checkpoint)
    with pytest.raises(ValueError, match="holds 290 tokens"):
        bytepair.resume_training(checkpoint, 280)


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="max_token_length"):
        bytepair.train(TEXTS, 280, max_token_length=0)
    with pytest.raises(ValueError, match="checkpoint_every"):
        bytepair.train(TEXTS, 280, checkpoint="x.bpck", checkpoint_every=0)
    with pytest.raises(TypeError, match="byte-level BPE options"):
        bytepair.train(TEXTS, 280, model="unigram", max_token_length=4)


def test_checkpoint_every_without_a_checkpoint_is_an_error(tmp_path):
    # It would write nothing: the interval is only used with a checkpoint.
    with pytest.raises(ValueError, match="checkpoint_every goes with checkpoint"):
        bytepair.train(TEXTS, 280, checkpoint_every=5)
    with pytest.raises(TypeError, match="byte-level BPE options"):
        bytepair.train(TEXTS, 280, model="unigram", checkpoint_every=5)
    with pytest.raises(ValueError, match="checkpoint_every"):
        bytepair.resume_training(tmp_path / "missing.bpck", checkpoint_every=-1)
    out = tmp_path / "counts"
    count_to_shards(TEXTS, out)
    with pytest.raises(ValueError, match="checkpoint_every goes with checkpoint"):
        train_from_counts(out, 280, checkpoint_every=5)
    # With a checkpoint the interval is taken.
    checkpoint = tmp_path / "run.bpck"
    bytepair.train(TEXTS, 280, checkpoint=checkpoint, checkpoint_every=5)
    assert checkpoint.exists()


def _merges_in(checkpoint) -> int:
    try:
        return _native.checkpoint_info(checkpoint)[1]
    except (OSError, ValueError):
        return -1


@pytest.mark.slow
def test_ctrl_c_writes_a_checkpoint_and_resuming_gives_the_uninterrupted_merges(
    shared_data, tmp_path
):
    """The real thing: `bytepair train --checkpoint` in a subprocess, SIGINT
    while it merges, then `--resume`; the merges equal an uninterrupted run."""
    corpus = tmp_path / "corpus.txt"
    with gzip.open(shared_data / "corpus" / "large_en.txt.gz", "rt", encoding="utf-8") as f:
        corpus.write_text(f.read(2_000_000), encoding="utf-8")
    checkpoint = tmp_path / "run.bpck"
    vocab = "20000"
    command = [sys.executable, "-m", "bytepair", "train", str(corpus), "--vocab-size", vocab]
    child = subprocess.Popen(
        # A checkpoint after (nearly) every merge slows merging down enough to
        # interrupt it for sure, and tests many writes over a live file.
        [*command, "-o", str(tmp_path / "a.json"), "--checkpoint", str(checkpoint)]
        + ["--checkpoint-every", "0.001"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    # The first checkpoint (0 merges) is written once counting is done, then
    # one every few merges, and the last on Ctrl-C.
    deadline = time.monotonic() + 120
    while _merges_in(checkpoint) < 1 and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    done = _merges_in(checkpoint)
    if child.returncode == 0:
        pytest.skip("training finished before the interrupt arrived (machine too fast)")
    assert child.returncode == 130, err
    assert "--resume" in err
    assert 0 <= done < 20000 - 256
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bytepair",
            "train",
            "--resume",
            str(checkpoint),
            "-o",
            str(tmp_path / "resumed.json"),
        ],
        check=True,
        capture_output=True,
    )
    uninterrupted = bytepair.train([corpus], int(vocab))
    resumed = bytepair.load(tmp_path / "resumed.json")
    assert resumed.merges == uninterrupted.merges
    assert resumed.model == uninterrupted.model


def test_cli_checkpoint_resume_and_stream(tmp_path, capsys):
    from bytepair.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS), encoding="utf-8")
    checkpoint = tmp_path / "run.bpck"
    first = ["train", str(corpus), "--vocab-size", "280", "--max-token-length", "5"]
    assert main([*first, "-o", str(tmp_path / "a.json"), "--checkpoint", str(checkpoint)]) == 0
    assert "--resume it" in capsys.readouterr().out
    # An existing checkpoint is never replaced.
    again = [*first, "-o", str(tmp_path / "b.json"), "--checkpoint", str(checkpoint)]
    assert main(again) == 1
    assert "--resume" in capsys.readouterr().err
    extended = ["train", "--resume", str(checkpoint), "-o", str(tmp_path / "c.json")]
    assert main([*extended, "--vocab-size", "300"]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = bytepair.train([corpus], 300, max_token_length=5)
    assert bytepair.load(tmp_path / "c.json").merges == direct.merges
    assert main(["train", str(corpus), "--resume", str(checkpoint), "-o", "x.json"]) == 1
    assert "checkpoint alone" in capsys.readouterr().err
    # train reads documents (here: JSON lines, gzip) as read_documents does.
    lines = tmp_path / "docs.jsonl.gz"
    with gzip.open(lines, "wt", encoding="utf-8") as f:
        for text in TEXTS:
            f.write(json.dumps({"body": text}) + "\n")
    streamed = ["train", str(lines), "--field", "body", "--vocab-size", "290"]
    assert main([*streamed, "-o", str(tmp_path / "s.json")]) == 0
    assert bytepair.load(tmp_path / "s.json").merges == bytepair.train(TEXTS, 290).merges


def test_training_from_counts_takes_the_same_options(tmp_path):
    from bytepair.training.counts import count_to_shards, train_from_counts

    count_to_shards(TEXTS, tmp_path / "counts", partitions=3)
    checkpoint = tmp_path / "counts.bpck"
    from_counts = train_from_counts(
        tmp_path / "counts", 285, max_token_length=4, checkpoint=checkpoint
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = bytepair.train(TEXTS, 300, max_token_length=4)
    assert from_counts.merges == direct.merges[: len(from_counts.merges)]
    assert bytepair.resume_training(checkpoint, 300).merges == direct.merges


def test_read_checkpoint_gives_the_runs_settings_and_checks_come_first(tmp_path, monkeypatch):
    import bytepair.training.counts as counts
    from bytepair.training.bpe import read_checkpoint
    from bytepair.training.counts import count_to_shards, train_from_counts

    checkpoint = tmp_path / "run.bpck"
    bytepair.train(
        TEXTS,
        280,
        special_tokens=["<s>"],
        pretokenizer="whitespace",
        max_token_length=4,
        checkpoint=checkpoint,
    )
    settings = read_checkpoint(checkpoint)
    assert settings.pretokenizer.kind == "whitespace"
    assert (settings.options.vocab_size, settings.options.special_tokens) == (280, ["<s>"])
    assert settings.options.max_token_length == 4 and settings.merges_done == 280 - 257

    count_to_shards(TEXTS, tmp_path / "counts")

    def no_reading(*args, **kwargs):
        raise AssertionError("the shards were read before the checkpoint was checked")

    monkeypatch.setattr(counts, "read_shard", no_reading)
    with pytest.raises(FileNotFoundError, match="the directory .* does not exist"):
        train_from_counts(tmp_path / "counts", 300, checkpoint=tmp_path / "nodir" / "x.bpck")
    with pytest.raises(FileExistsError, match="resume_training"):
        train_from_counts(tmp_path / "counts", 300, checkpoint=checkpoint)
