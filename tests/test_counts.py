"""Count shards: counting with bounded memory, merging runs and directories
exactly, training from counts gives the merges of training from the text;
damaged shards are named."""

from __future__ import annotations

import json
import os
import re

import pytest

import bytepair
from bytepair import FormatError
from bytepair.cli import main
from bytepair.corpus.sources import read_documents
from bytepair.training.counts import (
    count_to_shards,
    read_counts,
    read_manifest,
    read_shard,
    train_from_counts,
)


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
    import bytepair.training.counts as counts

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
    import bytepair.training.counts as counts
    from bytepair.training.shards import merge_shards

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
        entry = merge_shards(
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
    from bytepair.training.shards import merge_shards, write_shard

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

    from bytepair.training.counts import read_manifest

    out = count_to_shards(documents[:50], tmp_path / "c", partitions=5)
    seen = set()
    for shard in read_manifest(out)["shards"]:
        for pretoken, _ in read_shard(out / shard["file"]):
            assert zlib.crc32(pretoken) % 5 == shard["partition"], pretoken
            seen.add(shard["partition"])
    assert seen == set(range(5))


def test_a_count_directory_given_twice_is_refused(documents, tmp_path, monkeypatch, capsys):
    import bytepair.training.counts as counts
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


# ---- the manifest is checked: a damaged one is a FormatError naming the file and the key ----


def _manifest(directory):
    return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))


def _write(directory, manifest):
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _drop(key):
    def change(m):
        del m[key]

    return change


def _set(key, value):
    def change(m):
        m[key] = value

    return change


def _set_shard(key, value):
    def change(m):
        m["shards"][0][key] = value

    return change


def _drop_shard(key):
    def change(m):
        del m["shards"][0][key]

    return change


def _list_twice(m):
    m["shards"].insert(1, dict(m["shards"][0]))


DAMAGED_MANIFESTS = {
    "no pretokenizer": (_drop("pretokenizer"), "pretokenizer"),
    "no pattern": (_drop("pattern"), "pattern"),
    "no special tokens": (_drop("special_tokens"), "special_tokens"),
    "no partitions": (_drop("partitions"), "partitions"),
    "no shards": (_drop("shards"), "shards"),
    "shards null": (_set("shards", None), "shards"),
    "shards a dict": (_set("shards", {}), "shards"),
    "shard not a dict": (_set("shards", ["part-00000-00000.bin"]), r"shards\[0\]"),
    "no file": (_drop_shard("file"), r"shards\[0\]\.file"),
    "file an int": (_set_shard("file", 5), r"shards\[0\]\.file"),
    "file in a parent": (_set_shard("file", "../c/part-00000-00000.bin"), r"shards\[0\]\.file"),
    "file in a subdirectory": (_set_shard("file", "sub/part.bin"), r"shards\[0\]\.file"),
    "file empty": (_set_shard("file", ""), r"shards\[0\]\.file"),
    "file a dot": (_set_shard("file", "."), r"shards\[0\]\.file"),
    "records null": (_set_shard("records", None), r"shards\[0\]\.records"),
    "records negative": (_set_shard("records", -1), r"shards\[0\]\.records"),
    "records a bool": (_set_shard("records", True), r"shards\[0\]\.records"),
    "sha256 null": (_set_shard("sha256", None), r"shards\[0\]\.sha256"),
    "sha256 short": (_set_shard("sha256", "abc"), r"shards\[0\]\.sha256"),
    "partition out of range": (_set_shard("partition", 2), r"shards\[0\]\.partition"),
    "partitions zero": (_set("partitions", 0), "partitions"),
    "a shard listed twice": (_list_twice, r"shards\[1\]\.file"),
    "special tokens not str": (_set("special_tokens", [1]), "special_tokens"),
    "special token surrogate": (_set("special_tokens", ["\ud800"]), "special_tokens"),
    "special tokens a str": (_set("special_tokens", "<a>"), "special_tokens"),
    "unknown kind": (_set("pretokenizer", "gpt3"), "pretokenizer"),
    "none with a pattern": (_set("pretokenizer", "none"), "pattern"),
    "gpt2 without its pattern": (_set("pattern", None), "pattern"),
    "regex not compiling": (
        lambda m: m.update(pretokenizer="regex", pattern="(unclosed"),
        "pattern",
    ),
}


@pytest.mark.parametrize("damage", DAMAGED_MANIFESTS, ids=str)
def test_a_damaged_manifest_is_named_with_its_key(damage, documents, tmp_path, monkeypatch):
    import bytepair.training.counts as counts

    change, key = DAMAGED_MANIFESTS[damage]
    out = count_to_shards(documents[:20], tmp_path / "c", partitions=2)
    manifest = _manifest(out)
    change(manifest)
    _write(out, manifest)
    path = re.escape(str(out / "manifest.json"))

    def no_reading(*args, **kwargs):
        raise AssertionError("a shard was read before the manifest was checked")

    monkeypatch.setattr(counts, "read_shard", no_reading)
    for read in (counts.read_manifest, read_counts, lambda d: train_from_counts(d, 300)):
        with pytest.raises(FormatError, match=rf"^{path} \({key}\): "):
            read(out)


def test_a_damaged_manifest_is_a_clean_error_on_the_command_line(documents, tmp_path, capsys):
    from bytepair.cli import main

    out = count_to_shards(documents[:20], tmp_path / "c", partitions=2)
    manifest = _manifest(out)
    del manifest["shards"][0]["file"]
    _write(out, manifest)
    args = ["train", "--from-counts", str(out), "-o", str(tmp_path / "t.json")]
    assert main([*args, "--vocab-size", "300", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"bytepair: error: {out / 'manifest.json'} (shards[0].file): " in err


def test_an_empty_corpus_writes_a_valid_manifest_without_shards(tmp_path):
    out = count_to_shards([], tmp_path / "c")
    assert _manifest(out)["shards"] == []
    with pytest.warns(UserWarning, match="no pair of tokens is left"):
        assert train_from_counts(out, 300).merges == []


def test_a_shard_is_never_counted_twice_across_directories(documents, tmp_path):
    a = count_to_shards(documents[:20], tmp_path / "a", partitions=2)
    b = count_to_shards(documents[20:40], tmp_path / "b", partitions=2)
    name = _manifest(a)["shards"][0]["file"]
    # b's first shard is replaced by a link to a's: its counts would be added twice.
    manifest = _manifest(b)
    target = b / manifest["shards"][0]["file"]
    target.unlink()
    (b / name).unlink(missing_ok=True)
    (b / name).symlink_to(a / name)
    manifest["shards"][0].update(_manifest(a)["shards"][0])
    _write(b, manifest)
    for read in (read_counts, lambda d: train_from_counts(d, 300)):
        with pytest.raises(FormatError, match=rf"\(shards\[0\]\.file\): .*{re.escape(name)}"):
            read([a, b])
    # Alone, each directory is fine.
    read_counts(a)
    read_counts(b)


# ---- documents: a str is one document (as in train), a bad item is named ----


def test_a_single_string_is_one_document_as_in_train(tmp_path):
    out = count_to_shards("abab abab", tmp_path / "c", pretokenizer="none")
    counter, _ = read_counts(out)
    assert counter.items() == [(b"abab abab", 1)]
    from_text = bytepair.train("abab abab", 258, pretokenizer="none", progress=False)
    assert train_from_counts(out, 258).merges == from_text.merges
    assert len(from_text.merges) == 2


def test_paths_are_read_as_train_reads_them(documents, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(documents[:200]), encoding="utf-8")
    for given in (corpus, [corpus, "one more text"]):
        out = count_to_shards(given, tmp_path / "c", overwrite=True)
        from_text = bytepair.train(given, 400, progress=False)
        assert train_from_counts(out, 400).merges == from_text.merges


@pytest.mark.parametrize(
    "given, named",
    [
        ([1], "item 0 is int"),
        (["a", None], "item 1 is NoneType"),
        (["a", "b", b"c"], "item 2 is bytes"),
        (b"bytes", "not bytes"),
    ],
    ids=["int", "None", "bytes item", "bytes"],
)
def test_a_document_of_the_wrong_type_is_named(given, named, tmp_path):
    with pytest.raises(TypeError, match=named):
        count_to_shards(given, tmp_path / "c")
    assert not (tmp_path / "c" / "manifest.json").exists()


# ---- record values: zero, too large and empty pre-tokens are named ----


def _raw_shard(path, *records):
    from bytepair.training.shards import MAGIC, _uvarint

    data = bytearray(MAGIC)
    for pretoken, count in records:
        data += _uvarint(len(pretoken)) + pretoken + _uvarint(count)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    "record, problem",
    [
        ((b"b", 0), "count 0 of b'b' is not positive"),
        ((b"b", 1 << 64), f"count {1 << 64} of b'b' is above 2\\^64-1"),
        ((b"b", 1 << 69), f"count {1 << 69} of b'b' is above 2\\^64-1"),
        ((b"", 1), "an empty pre-token"),
    ],
    ids=["zero", "2^64", "2^69", "empty"],
)
def test_a_bad_record_value_is_named(record, problem, tmp_path):
    shard = _raw_shard(tmp_path / "s.bin", (b"a", 1), record) if record[0] else None
    if shard is None:  # an empty pre-token sorts first
        shard = _raw_shard(tmp_path / "s.bin", record, (b"a", 1))
    index = 1 if record[0] else 0
    with pytest.raises(FormatError, match=rf"s\.bin \(record {index}\): {problem}"):
        list(read_shard(shard))


def test_write_shard_refuses_what_read_shard_refuses(tmp_path):
    from bytepair.training.shards import write_shard

    for records, error, problem in (
        ([(b"a", 1), (b"b", 1 << 64)], ValueError, "count 18446744073709551616 of b'b' is above"),
        ([(b"", 1)], ValueError, "pre-token 0 is an empty pre-token"),
        ([(b"a", 1), ("b", 1)], TypeError, "pre-token 1 is str, not bytes"),
        ([(b"a", 1.0)], TypeError, "the count of b'a' is float, not int"),
        ([(b"a", True)], TypeError, "the count of b'a' is bool, not int"),
    ):
        with pytest.raises(error, match=rf"s\.bin: {problem}"):
            write_shard(tmp_path / "s.bin", records)
        assert not (tmp_path / "s.bin").exists()
        assert not list(tmp_path.glob("*.tmp")), "the temporary file is left behind"


def test_a_sum_overflowing_u64_names_the_shards_and_the_pretoken(tmp_path):
    from zlib import crc32

    from bytepair.training.shards import merge_shards, shard_name, write_manifest, write_shard

    top = (1 << 64) - 1
    directories = []
    for name in ("a", "b"):
        directory = tmp_path / name
        directory.mkdir()
        partition = crc32(b"xy") % 2
        entry = write_shard(directory / shard_name(partition, 0), [(b"x", 1), (b"xy", top)])
        write_manifest(directory, "none", (), 2, [{**entry, "partition": partition}])
        directories.append(directory)
    a, b = (d / shard_name(crc32(b"xy") % 2, 0) for d in directories)
    overflow = rf"the count of pre-token b'xy' overflows 2\^64-1.*{re.escape(str(a))}"
    with pytest.raises(ValueError, match=rf"^{re.escape(str(b))} .*{overflow}"):
        read_counts(directories)
    with pytest.raises(ValueError, match=overflow):
        train_from_counts(directories, 300)
    with pytest.raises(ValueError, match=rf"{overflow}.*{re.escape(str(b))}"):
        merge_shards([a, b], tmp_path / "m.bin")
    assert not (tmp_path / "m.bin").exists() and not list(tmp_path.glob("*.tmp"))


# ---- arguments ----


def never_read():
    raise AssertionError("the documents were read before the arguments were checked")
    yield


@pytest.mark.parametrize("max_memory", ["1G", None, -1, True, 1.5])
def test_max_memory_is_checked_before_counting(max_memory, tmp_path):
    with pytest.raises(ValueError, match="max_memory must be a non-negative int"):
        count_to_shards(never_read(), tmp_path / "c", max_memory=max_memory)
    assert not (tmp_path / "c").exists()


def test_merge_shards_takes_one_entry_per_path(tmp_path):
    from bytepair.training.shards import merge_shards, write_shard

    entry = write_shard(tmp_path / "s.bin", [(b"a", 1)])
    write_shard(tmp_path / "t.bin", [(b"b", 1)])
    with pytest.raises(ValueError, match="2 paths but 1 entries"):
        merge_shards([tmp_path / "s.bin", tmp_path / "t.bin"], tmp_path / "m.bin", entries=[entry])
    assert not (tmp_path / "m.bin").exists()


# ---- flushing many partitions ----


class _CountingCounter:
    """The core's PretokenCounter, counting the passes over its table."""

    passes = 0

    def __init__(self, *args):
        from bytepair import _native

        self.inner = _native.PretokenCounter(*args)

    def partition_items(self, partition, partitions):
        type(self).passes += 1
        return self.inner.partition_items(partition, partitions)

    def items(self):
        type(self).passes += 1
        return self.inner.items()

    def __len__(self):
        return len(self.inner)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.mark.slow
def test_a_flush_passes_over_the_counts_once_and_writes_the_same_shards(tmp_path, monkeypatch):
    import types
    import zlib

    import bytepair.training.counts as counts

    documents = [" ".join(f"w{i}x{j}" for j in range(20)) for i in range(250)]  # 5,000 words
    one = count_to_shards(documents, tmp_path / "one", pretokenizer="whitespace", partitions=1)
    (only,) = counts.read_manifest(one)["shards"]
    everything = list(read_shard(one / only["file"]))
    assert len(everything) == 5_000

    monkeypatch.setattr(counts, "_native", types.SimpleNamespace(PretokenCounter=_CountingCounter))
    monkeypatch.setattr(_CountingCounter, "passes", 0)
    partitions = 100_003  # a prime: no partition count shares a divisor with it
    out = count_to_shards(
        documents, tmp_path / "many", pretokenizer="whitespace", partitions=partitions
    )
    assert _CountingCounter.passes <= 2
    expected: dict[int, list] = {}
    for pretoken, count in everything:
        expected.setdefault(zlib.crc32(pretoken) % partitions, []).append((pretoken, count))
    shards = counts.read_manifest(out)["shards"]
    assert [s["partition"] for s in shards] == sorted(expected)
    for shard in shards:
        assert shard["file"] == counts.shard_name(shard["partition"], 0)
        assert list(read_shard(out / shard["file"])) == expected[shard["partition"]]


@pytest.mark.slow
@pytest.mark.parametrize("partitions", [1_000, 997], ids=["composite", "prime"])
def test_flushing_groups_of_partitions_writes_the_shards_one_partition_at_a_time_would(
    partitions, tmp_path, monkeypatch
):
    """A flush holding at most FLUSH_RECORDS records takes a divisor of the
    partitions as groups (a prime: one partition each); the shards are the same."""
    import types

    import bytepair.training.counts as counts

    documents = [" ".join(f"w{i}x{j}" for j in range(20)) for i in range(250)]  # 5,000 words
    monkeypatch.setattr(counts, "BATCH_CHARS", 20_000)  # several runs
    options = dict(pretokenizer="whitespace", partitions=partitions, max_memory=200_000)
    whole = count_to_shards(documents, tmp_path / "whole", **options)
    monkeypatch.setattr(counts, "FLUSH_RECORDS", 20)
    monkeypatch.setattr(counts, "_native", types.SimpleNamespace(PretokenCounter=_CountingCounter))
    monkeypatch.setattr(_CountingCounter, "passes", 0)
    grouped = count_to_shards(documents, tmp_path / "grouped", **options)
    manifest = counts.read_manifest(grouped)
    runs = len({s["file"][-9:] for s in manifest["shards"]})
    assert runs >= 2
    assert manifest == counts.read_manifest(whole)
    for shard in manifest["shards"]:
        assert (grouped / shard["file"]).read_bytes() == (whole / shard["file"]).read_bytes()
    if partitions == 997:  # a prime: the partitions one by one
        assert _CountingCounter.passes == runs * partitions
    else:  # groups of several partitions, more than one group a run
        assert runs < _CountingCounter.passes < runs * partitions


# ---- What count may replace ----


def listing(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_count_deletes_and_overwrites_only_its_own_counts(documents, tmp_path, capsys):
    """`count x.txt -o userdir` deleted the user's part-1.bin and
    part-final.bin and wrote manifest.json among their files; with --force it
    replaced another tool's manifest.json."""
    text = tmp_path / "x.txt"
    text.write_text("\n\n".join(documents[:50]), "utf-8")
    user = tmp_path / "userdir"
    user.mkdir()
    (user / "part-1.bin").write_bytes(b"mine")
    (user / "part-final.bin").write_bytes(b"mine too")
    (user / "notes.txt").write_text("notes", "utf-8")
    before = listing(user)
    for force in ([], ["--force"]):
        assert main(["count", str(text), "-o", str(user), *force]) == 1
        assert "notes.txt: not a file of a count directory (and 2 more)" in capsys.readouterr().err
        assert listing(user) == before
    with pytest.raises(FormatError, match="not a file of a count directory"):
        count_to_shards(documents, user, overwrite=True)
    assert listing(user) == before

    other = tmp_path / "other"
    other.mkdir()
    (other / "manifest.json").write_text('{"format": "another-tool"}', "utf-8")
    assert main(["count", str(text), "-o", str(other), "--force"]) == 1
    assert "manifest.json: not the manifest of bytepair-counts" in capsys.readouterr().err
    assert (other / "manifest.json").read_text("utf-8") == '{"format": "another-tool"}'

    # Its own counts: refused without --force, replaced with it.
    out = count_to_shards(documents, tmp_path / "c", partitions=3, max_memory=0)
    with pytest.raises(FileExistsError, match="already holds counts"):
        count_to_shards(documents, out)
    count_to_shards(documents[:10], out, partitions=2, overwrite=True)
    manifest = read_manifest(out)
    assert sorted(listing(out)) == sorted(
        ["manifest.json"] + [s["file"] for s in manifest["shards"]]
    )
    # An unfinished run (shards, no manifest): named, replaced with overwrite.
    (out / "manifest.json").unlink()
    with pytest.raises(FileExistsError, match="unfinished count run"):
        count_to_shards(documents, out)
    count_to_shards(documents[:10], out, partitions=2, overwrite=True)
    assert read_manifest(out) == manifest


def test_count_leaves_its_output_out_of_an_input_directory(documents, tmp_path, monkeypatch):
    """Shards written while counting were read back as inputs when the
    output directory was inside an input directory listed after a flush."""
    from bytepair.training import counts

    monkeypatch.setattr(counts, "BATCH_CHARS", 100)  # a flush after each batch
    nest = tmp_path / "nest"
    nest.mkdir()
    (nest / "x.txt").write_text("\n\n".join(documents[:50]), "utf-8")
    out = nest / "counts"
    options = {"max_memory": 0, "partitions": 2}
    count_to_shards(read_documents([nest / "x.txt", nest]), out, **options)
    first = listing(out)
    count_to_shards(read_documents([nest / "x.txt", nest]), out, overwrite=True, **options)
    assert listing(out) == first
    assert (
        listing(count_to_shards(read_documents(nest / "x.txt"), tmp_path / "c", **options)) == first
    )
    # A missing input is an error before the output is touched.
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        count_to_shards(read_documents(tmp_path / "missing.txt"), out, overwrite=True)
    assert listing(out) == first


def test_a_map_staging_directory_holding_a_users_file_is_not_deleted(documents, tmp_path):
    from bytepair.training.counts import prepare_output

    out = count_to_shards(documents, tmp_path / "c", partitions=2)
    staged = out / "_map" / "00000"
    staged.mkdir(parents=True)
    (staged / "part-00000-00000.bin").write_bytes(b"BPCT\x01")
    (out / "_map" / "keep.txt").write_text("mine", "utf-8")
    with pytest.raises(FormatError, match=r"_map/keep.txt: not a file of a count directory"):
        prepare_output(out, overwrite=True)
    assert (out / "_map" / "keep.txt").exists() and (staged / "part-00000-00000.bin").exists()
    (out / "_map" / "keep.txt").unlink()
    prepare_output(out, overwrite=True)
    assert list(out.iterdir()) == []


def _inputs(documents, directory):
    """A text file, and JSON lines whose second line is broken: found midway."""
    directory.mkdir()
    good, bad = directory / "a.txt", directory / "bad.jsonl"
    good.write_text("\n\n".join(documents[:300]), "utf-8")
    bad.write_text('{"text": "fine"}\n{"text": broken\n', "utf-8")
    return good, bad


def _interrupted(*args, **kwargs):
    raise KeyboardInterrupt


def test_overwrite_keeps_the_old_counts_until_the_new_ones_are_complete(
    documents, tmp_path, monkeypatch
):
    """--force deleted the old counts before the run: a run that then failed
    (a bad input file found midway, Ctrl-C) left nothing."""
    from bytepair.training import counts

    monkeypatch.setattr(counts, "BATCH_CHARS", 100)  # shards are written before the failure
    options = {"partitions": 2, "max_memory": 0}
    good, bad = _inputs(documents, tmp_path / "in")
    parent = tmp_path / "parent"
    out = count_to_shards(documents[:50], parent / "c", **options)
    before, listed = listing(out), sorted(os.listdir(parent))
    with pytest.raises(FormatError, match="bad.jsonl"):
        count_to_shards(read_documents([good, bad]), out, overwrite=True, **options)
    assert listing(out) == before and sorted(os.listdir(parent)) == listed
    with monkeypatch.context() as m:  # at the last moment: all shards written
        m.setattr(counts, "write_manifest", _interrupted)
        with pytest.raises(KeyboardInterrupt):
            count_to_shards(read_documents(good), out, overwrite=True, **options)
    assert listing(out) == before and sorted(os.listdir(parent)) == listed

    reference = count_to_shards(read_documents(good), tmp_path / "reference", **options)
    count_to_shards(read_documents(good), out, overwrite=True, **options)
    assert listing(out) == listing(reference) and sorted(os.listdir(parent)) == listed

    # A file put into the old directory meanwhile: nothing of it is deleted.
    write_manifest = counts.write_manifest

    def user_writes(*args, **kwargs):
        (out / "notes.txt").write_text("mine", "utf-8")
        return write_manifest(*args, **kwargs)

    monkeypatch.setattr(counts, "write_manifest", user_writes)
    with pytest.warns(UserWarning, match=r"old content, moved to .*, was not deleted"):
        count_to_shards(documents[:50], out, overwrite=True, **options)
    assert listing(out) == before
    (old,) = [p for p in parent.iterdir() if p.name != "c"]
    assert old.name.startswith(".c.") and listing(old) == {
        **listing(reference),
        "notes.txt": b"mine",
    }


def test_force_on_the_command_line_keeps_the_old_counts_until_the_new_ones_are_complete(
    documents, tmp_path, monkeypatch, capsys
):
    from bytepair.cli import train
    from bytepair.training import counts

    good, bad = _inputs(documents, tmp_path / "in")
    parent = tmp_path / "parent"
    parent.mkdir()  # the command makes only the directory -o names
    out = parent / "c"
    assert main(["count", str(good), "-o", str(out), "--partitions", "2"]) == 0
    before, listed = listing(out), sorted(os.listdir(parent))
    args = ["-o", str(out), "--force", "--partitions", "3"]
    capsys.readouterr()
    assert main(["count", str(good), str(bad), *args]) == 1
    assert "bad.jsonl" in capsys.readouterr().err
    assert listing(out) == before and sorted(os.listdir(parent)) == listed
    with monkeypatch.context() as m:
        m.setattr(counts, "write_manifest", _interrupted)
        assert main(["count", str(good), *args]) == 130
    assert listing(out) == before and sorted(os.listdir(parent)) == listed

    # --ray goes through the same replacement (a stand-in for count_on_ray).
    def on_ray(inputs, target, *, field, address, **options):
        count_to_shards(read_documents(inputs, field=field), target, **options)
        raise ValueError("a task failed")

    with monkeypatch.context() as m:
        m.setattr(train, "ray_function", lambda name: on_ray)
        assert main(["count", str(good), *args, "--ray"]) == 1
    assert "a task failed" in capsys.readouterr().err
    assert listing(out) == before and sorted(os.listdir(parent)) == listed

    assert main(["count", str(good), *args]) == 0
    reference = count_to_shards(read_documents(good), tmp_path / "reference", partitions=3)
    assert listing(out) == listing(reference) and sorted(os.listdir(parent)) == listed
