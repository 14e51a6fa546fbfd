"""Counting and dataset encoding on a local Ray cluster started by the tests:
the same merges as single-machine counting and as training on the text, the
same shards byte for byte, and a task's error raised as itself."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

import bytepair
from bytepair import FormatError
from bytepair.corpus.sources import read_documents
from bytepair.training.counts import count_to_shards, read_manifest, read_shard, train_from_counts

VOCAB = 700


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'bytepair[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="error")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory) -> list[Path]:
    """Two books cut into six files of uneven sizes: plain text, JSON lines, gzip."""
    small = shared_data / "corpus" / "small"
    documents = []
    for book in ("taylorswift.txt", "botchan.txt"):
        lines = [x for x in (small / book).read_text(encoding="utf-8").splitlines() if x.strip()]
        documents += ["\n".join(lines[i : i + 8]) for i in range(0, len(lines), 8)]
    folder = tmp_path_factory.mktemp("corpus")
    for name, (start, stop) in {
        "t0.txt": (0, 20),
        "t1.txt": (20, 130),
        "t2.txt": (130, 140),
    }.items():
        (folder / name).write_text("\n\n".join(documents[start:stop]), encoding="utf-8")
    jsonl = "".join(
        json.dumps({"text": d, "id": i}) + "\n" for i, d in enumerate(documents[140:400])
    )
    (folder / "b.jsonl").write_text(jsonl, encoding="utf-8")
    with gzip.open(folder / "c.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": d}) + "\n" for d in documents[400:])
    (folder / "empty.txt").write_text("", encoding="utf-8")
    return sorted(folder.iterdir())


def _shards(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("part-*.bin"))}


@pytest.mark.slow
def test_ray_counts_train_the_merges_of_the_text_and_of_local_counts(ray_cluster, corpus, tmp_path):
    from bytepair.corpus.on_ray import count_on_ray

    specials = ["<|endoftext|>"]
    out = count_on_ray(corpus, tmp_path / "ray", special_tokens=specials, partitions=5, map_tasks=3)
    local = count_to_shards(
        read_documents(corpus), tmp_path / "local", special_tokens=specials, partitions=5
    )
    documents = list(read_documents(corpus))
    direct = bytepair.train(documents, VOCAB, special_tokens=specials, progress=False)
    assert train_from_counts(out, VOCAB).merges == direct.merges
    assert train_from_counts(local, VOCAB).merges == direct.merges
    # One sorted shard per partition, byte for byte what one local run writes.
    assert _shards(out) == _shards(local)
    assert read_manifest(out) == read_manifest(local)
    assert not (out / "_map").exists(), "the map outputs are removed"

    manifest = read_manifest(out)
    seen: set[bytes] = set()
    for shard in manifest["shards"]:
        records = [r for r, _ in read_shard(out / shard["file"], sha256=shard["sha256"])]
        assert records == sorted(set(records))
        assert not seen & set(records), "a pre-token is in exactly one shard"
        seen |= set(records)
    assert len(manifest["shards"]) == 5


@pytest.mark.slow
def test_existing_output_and_overwrite(ray_cluster, corpus, tmp_path):
    from bytepair.corpus.on_ray import count_on_ray

    out = count_on_ray(corpus[:2], tmp_path / "c", partitions=2)
    with pytest.raises(FileExistsError, match="overwrite"):
        count_on_ray(corpus[:2], out)
    count_on_ray(corpus, out, partitions=3, overwrite=True)
    assert read_manifest(out)["partitions"] == 3
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["manifest.json"] + [s["file"] for s in read_manifest(out)["shards"]]
    )


@pytest.mark.slow
def test_a_task_error_is_raised_as_itself(ray_cluster, corpus, tmp_path):
    from bytepair.corpus.on_ray import count_on_ray

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": broken\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.jsonl \(line 2\): invalid JSON") as caught:
        count_on_ray([*corpus, bad], tmp_path / "out")
    assert not isinstance(caught.value, ray_cluster.exceptions.RayError)
    assert not (tmp_path / "out" / "manifest.json").exists()
    assert not (tmp_path / "out" / "_map").exists()
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        count_on_ray([tmp_path / "nope.txt"], tmp_path / "out2")


@pytest.mark.slow
def test_count_on_the_command_line(ray_cluster, corpus, tmp_path, capsys):
    from bytepair.cli import main

    out = tmp_path / "counts"
    args = ["count", *map(str, corpus), "-o", str(out), "--partitions", "4"]
    assert main([*args, "--ray"]) == 0
    assert main([*args, "--ray", "auto"]) == 1  # exists already
    assert "--force" in capsys.readouterr().err
    assert main(["count", "--ray", str(corpus[0]), str(corpus[1]), "-o", str(out)]) == 1
    assert "not a Ray address" in capsys.readouterr().err
    model = tmp_path / "t.json"
    assert (
        main(["train", "--from-counts", str(out), "--vocab-size", str(VOCAB), "-o", str(model)])
        == 0
    )
    direct = bytepair.train(list(read_documents(corpus)), VOCAB, progress=False)
    assert bytepair.load(model).merges == direct.merges


def test_without_ray_the_command_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    from bytepair.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails
    text = tmp_path / "a.txt"
    text.write_text("hello world", encoding="utf-8")
    assert main(["count", str(text), "-o", str(tmp_path / "c"), "--ray"]) == 1
    assert "pip install 'bytepair[ray]'" in capsys.readouterr().err
    args = ["encode-dataset", str(text), "-t", "cl100k_base", "-o", str(tmp_path / "d")]
    assert main([*args, "--ray=auto"]) == 1
    assert "pip install 'bytepair[ray]'" in capsys.readouterr().err


def test_special_tokens_in_a_set_are_refused_before_any_task(tmp_path):
    from bytepair.corpus.on_ray import count_on_ray

    text = tmp_path / "a.txt"
    text.write_text("hello world", encoding="utf-8")
    # A set's order is hash order: the ids would change from run to run.
    with pytest.raises(ValueError, match="list or tuple"):
        count_on_ray([text], tmp_path / "c", special_tokens={"<a>", "<b>"})
    assert not (tmp_path / "c").exists()
    # max_memory too, as count_to_shards checks it (the tasks would fail late).
    with pytest.raises(ValueError, match="max_memory"):
        count_on_ray([text], tmp_path / "c", max_memory="1G")
    assert not (tmp_path / "c").exists()


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.slow
def test_ray_encoding_writes_the_shards_of_local_encoding(ray_cluster, corpus, tmp_path):
    from bytepair.corpus import dataset
    from bytepair.corpus.on_ray import encode_dataset_on_ray

    tokenizer = bytepair.train(
        list(read_documents(corpus)), VOCAB, special_tokens=["<|endoftext|>"], progress=False
    )
    options = dict(eot="<|endoftext|>", shard_tokens=20_000)
    local = dataset.encode_dataset(corpus, tokenizer, tmp_path / "local", progress=False, **options)
    on_ray = encode_dataset_on_ray(corpus, tokenizer, tmp_path / "ray", **options)
    files = _files(on_ray)
    assert files == _files(local)  # every shard, index and manifest, byte for byte
    assert sum(name.endswith(".tokens.npy") for name in files) > len(corpus)
    ds = dataset.TokenDataset(on_ray)
    assert ds[0].tolist() == tokenizer.encode_ordinary(next(read_documents(corpus))) + [0]


@pytest.mark.slow
def test_a_failed_encoding_raises_the_task_error_and_resumes(ray_cluster, corpus, tmp_path):
    from bytepair.corpus import dataset
    from bytepair.corpus.on_ray import encode_dataset_on_ray

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": 12345}\n', encoding="utf-8")
    inputs = [*corpus, bad]
    tokenizer = bytepair.train(list(read_documents(corpus)), VOCAB, progress=False)
    with pytest.raises(FormatError, match=r"bad\.jsonl \(line 2\): field 'text' is a number"):
        encode_dataset_on_ray(inputs, tokenizer, tmp_path / "ray", shard_tokens=30_000)
    assert not (tmp_path / "ray" / "dataset.json").exists()
    bad.write_text('{"text": "fine"}\n{"text": "123"}\n', encoding="utf-8")  # same size
    encode_dataset_on_ray(inputs, tokenizer, tmp_path / "ray", shard_tokens=30_000, resume=True)
    local = dataset.encode_dataset(
        inputs, tokenizer, tmp_path / "local", shard_tokens=30_000, progress=False
    )
    assert _files(tmp_path / "ray") == _files(local)


@pytest.mark.slow
def test_encode_dataset_on_the_command_line(ray_cluster, corpus, tmp_path, capsys):
    from bytepair.cli import main

    tokenizer = bytepair.train(
        list(read_documents(corpus)), VOCAB, special_tokens=["<|endoftext|>"], progress=False
    )
    tokenizer.save(tmp_path / "tok.json")
    args = ["encode-dataset", *map(str, corpus), "-t", str(tmp_path / "tok.json")]
    args += ["--eot", "<|endoftext|>", "--shard-tokens", "30000"]
    assert main([*args, "-o", str(tmp_path / "local")]) == 0
    assert main([*args, "-o", str(tmp_path / "ray"), "--ray"]) == 0
    assert "shards to" in capsys.readouterr().out
    assert _files(tmp_path / "ray") == _files(tmp_path / "local")


def test_a_users_files_in_the_output_are_refused_before_any_task(corpus, tmp_path):
    """count_on_ray deleted out/_map (and part-*.bin) whatever they held."""
    from bytepair.corpus.on_ray import count_on_ray

    out = tmp_path / "out"
    (out / "_map").mkdir(parents=True)
    (out / "_map" / "notes.txt").write_text("mine", "utf-8")
    (out / "part-final.bin").write_bytes(b"mine")
    for overwrite in (False, True):
        with pytest.raises(FormatError, match=r"_map/notes.txt: not a file of a count directory"):
            count_on_ray(corpus, out, overwrite=overwrite)
    assert (out / "_map" / "notes.txt").read_text("utf-8") == "mine"
    assert (out / "part-final.bin").read_bytes() == b"mine"
