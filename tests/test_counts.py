"""Count shards: counting with bounded memory, merging runs and directories
exactly, training from counts gives the merges of training from the text;
damaged shards are named."""

from __future__ import annotations

import json

import pytest

import bytepair
from bytepair import FormatError
from bytepair.counts import count_to_shards, read_counts, train_from_counts


@pytest.fixture(scope="module")
def documents(shared_data):
    text = (shared_data / "corpus" / "small" / "taylorswift.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def test_training_from_counts_equals_training_from_text(documents, tmp_path):
    out = count_to_shards(documents, tmp_path / "c", special_tokens=["<|end|>"], partitions=4)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "bytepair-counts" and manifest["partitions"] == 4
    from_counts = train_from_counts(out, 600)
    from_text = bytepair.train(documents, 600, special_tokens=["<|end|>"], progress=False)
    assert from_counts.merges == from_text.merges
    assert from_counts.special_tokens == {"<|end|>": 0}


def test_bounded_memory_runs_and_several_directories_merge_exactly(
    documents, tmp_path, monkeypatch
):
    import bytepair.counts as counts

    monkeypatch.setattr(counts, "BATCH_CHARS", 20_000)  # small batches, so runs are flushed
    half = len(documents) // 2
    a = count_to_shards(documents[:half], tmp_path / "a", max_memory=50_000)
    b = count_to_shards(documents[half:], tmp_path / "b", max_memory=50_000)
    runs = {
        s["file"].rsplit("-", 1)[1] for s in json.loads((a / "manifest.json").read_text())["shards"]
    }
    assert len(runs) > 1, "the memory bound wrote several runs"
    merged, _ = read_counts([a, b])
    whole, _ = read_counts(count_to_shards(documents, tmp_path / "w"))
    assert sorted(merged.items()) == sorted(whole.items())
    assert (
        train_from_counts([a, b], 500).merges
        == bytepair.train(documents, 500, progress=False).merges
    )


def test_damage_is_named(documents, tmp_path):
    out = count_to_shards(documents[:20], tmp_path / "c", partitions=2)
    with pytest.raises(FileExistsError):
        count_to_shards(documents[:20], out)
    shard = next(out.glob("part-*.bin"))
    data = shard.read_bytes()
    shard.write_bytes(data[:-3])
    with pytest.raises(FormatError, match="checksum mismatch"):
        read_counts(out)
    with pytest.raises(FormatError, match="not a count directory"):
        read_counts(tmp_path)
    other = count_to_shards(documents[:5], tmp_path / "o", pretokenizer="whitespace")
    fresh = count_to_shards(documents[:5], tmp_path / "f")
    with pytest.raises(FormatError, match="counted with"):
        read_counts([fresh, other])


def test_count_and_train_from_counts_on_the_command_line(documents, tmp_path, capsys):
    from bytepair.cli import main

    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), encoding="utf-8")
    counts = tmp_path / "counts"
    assert main(["count", str(corpus), "-o", str(counts), "--max-memory", "64K"]) == 0
    assert main(["count", str(corpus), "-o", str(counts)]) == 1
    assert "--force" in capsys.readouterr().err
    out = tmp_path / "t.json"
    args = ["train", "--from-counts", str(counts), "-o", str(out), "--vocab-size", "500"]
    assert main([*args, "--no-progress"]) == 0
    assert bytepair.load(out).merges == bytepair.train(documents, 500, progress=False).merges
