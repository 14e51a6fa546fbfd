"""Count shards: counting with bounded memory, merging runs and directories
exactly, training from counts gives the merges of training from the text;
damaged shards are named."""

from __future__ import annotations

import json

import pytest

import bytepair
from bytepair import FormatError
from bytepair.counts import count_to_shards, read_counts, read_shard, train_from_counts


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


def test_merging_the_runs_of_each_partition_gives_the_shards_of_one_run(
    documents, tmp_path, monkeypatch
):
    """What the Ray reduce does: merge_shards over a partition's runs (and
    over several directories) equals counting everything in one run."""
    import bytepair.counts as counts

    whole = count_to_shards(documents, tmp_path / "whole", partitions=3)
    monkeypatch.setattr(counts, "BATCH_CHARS", 20_000)
    half = len(documents) // 2
    runs = [
        count_to_shards(documents[:half], tmp_path / "a", partitions=3, max_memory=50_000),
        count_to_shards(documents[half:], tmp_path / "b", partitions=3, max_memory=50_000),
    ]
    merged = tmp_path / "merged"
    merged.mkdir()
    shards = []
    for partition in range(3):
        entries = [
            (d / s["file"], s)
            for d in runs
            for s in counts.read_manifest(d)["shards"]
            if s["partition"] == partition
        ]
        assert len(entries) > 2
        entry = counts.merge_shards(
            [p for p, _ in entries],
            merged / counts.shard_name(partition, 0),
            entries=[e for _, e in entries],
        )
        shards.append({"file": entry["file"], "partition": partition, **entry})
    counts.write_manifest(merged, "gpt2", (), 3, shards)
    assert counts.read_manifest(merged) == counts.read_manifest(whole)
    for shard in shards:
        name = shard["file"]
        assert (merged / name).read_bytes() == (whole / name).read_bytes()


def test_shard_functions_check_what_they_read_and_write(tmp_path):
    from bytepair.counts import merge_shards, write_shard

    records = [(b"a", 3), (b"ab", 1), (b"b" * 3_000_000, 2), (b"c", 1 << 40)]
    entry = write_shard(tmp_path / "s.bin", records)
    assert entry["records"] == 4 and not list(tmp_path.glob("*.tmp"))
    assert list(read_shard(tmp_path / "s.bin", sha256=entry["sha256"], records=4)) == records
    with pytest.raises(ValueError, match="strictly increasing"):
        write_shard(tmp_path / "t.bin", [(b"b", 1), (b"a", 1)])
    with pytest.raises(ValueError, match="not positive"):
        write_shard(tmp_path / "t.bin", [(b"a", 0)])
    merge_shards([tmp_path / "s.bin", tmp_path / "s.bin"], tmp_path / "m.bin")
    assert list(read_shard(tmp_path / "m.bin")) == [(p, 2 * c) for p, c in records]
    data = (tmp_path / "s.bin").read_bytes()
    (tmp_path / "cut.bin").write_bytes(data[:-4])
    with pytest.raises(FormatError, match=r"cut\.bin \(byte \d+\): truncated record"):
        list(read_shard(tmp_path / "cut.bin"))
    with pytest.raises(FormatError, match="checksum mismatch"):
        list(read_shard(tmp_path / "cut.bin", sha256=entry["sha256"]))
    write_shard(tmp_path / "three.bin", records[:3])
    with pytest.raises(FormatError, match="3 records, the manifest says 4"):
        list(read_shard(tmp_path / "three.bin", records=4))
    (tmp_path / "order.bin").write_bytes(b"BPCT\x01" + b"\x01b\x01" + b"\x01a\x01")
    with pytest.raises(FormatError, match=r"\(record 1\): records out of order"):
        list(read_shard(tmp_path / "order.bin"))


def test_pretokens_go_to_the_partition_the_module_docstring_states(documents, tmp_path):
    """``crc32(bytes) % P`` is part of the format (other writers must agree with it)."""
    import zlib

    from bytepair.counts import read_manifest

    out = count_to_shards(documents[:50], tmp_path / "c", partitions=5)
    seen = set()
    for shard in read_manifest(out)["shards"]:
        for pretoken, _ in read_shard(out / shard["file"]):
            assert zlib.crc32(pretoken) % 5 == shard["partition"], pretoken
            seen.add(shard["partition"])
    assert seen == set(range(5))


def test_a_count_directory_given_twice_is_refused(documents, tmp_path, monkeypatch, capsys):
    import bytepair.counts as counts
    from bytepair.cli import main

    out = count_to_shards(documents[:50], tmp_path / "c")
    (tmp_path / "link").symlink_to(out)

    def no_reading(*args, **kwargs):
        raise AssertionError("the shards were read before the directories were checked")

    monkeypatch.setattr(counts, "read_shard", no_reading)
    for twice in ([out, out], [out, f"{out}/"], [str(out), tmp_path / "link"]):
        with pytest.raises(ValueError, match="given twice .*: its counts would be added twice"):
            read_counts(twice)
        with pytest.raises(ValueError, match=f"the count directory {out} is given twice"):
            train_from_counts(twice, 300)
    monkeypatch.chdir(tmp_path)
    args = ["train", "--from-counts", "c", "./c/", "-o", "t.json", "--vocab-size", "300"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "bytepair: error: the count directory" in err and "('c' and './c/')" in err
    assert not (tmp_path / "t.json").exists()
