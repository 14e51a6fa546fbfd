"""Dataset encoding: shards hold exactly the tokens of the documents, never
split a document or span two files, survive interruption (a resumed run is
byte for byte an uninterrupted one), and the reader finds damage."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import bytepair
from bytepair import FormatError
from bytepair.cli import main
from bytepair.corpus import dataset
from bytepair.corpus.dataset import TokenDataset, encode_dataset, encode_file, finish, plan
from bytepair.corpus.sources import read_documents

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory) -> list[Path]:
    """Three input files of different formats, from the shared corpus: plain
    text (many short documents), gzipped JSON lines (with special-token text
    and an empty document) and text with a document of 16 k characters."""
    small = shared_data / "corpus" / "small"
    root = tmp_path_factory.mktemp("corpus")
    first = root / "a.txt"
    first.write_text((small / "tinyshakespeare.txt").read_text(encoding="utf-8")[:30_000], "utf-8")
    botchan = (small / "botchan.txt").read_text(encoding="utf-8")[:40_000]
    texts = [botchan[i : i + 700] for i in range(0, len(botchan), 700)]
    texts[3] = f"a document with {EOT} inside, and <|fim_prefix|> too"
    texts[7] = ""
    second = root / "b.jsonl.gz"
    with gzip.open(second, "wt", encoding="utf-8") as f:
        for text in texts:
            f.write(json.dumps({"id": 1, "text": text}) + "\n")
    third = root / "c.txt"
    third.write_text((small / "taylorswift.txt").read_text(encoding="utf-8")[:20_000], "utf-8")
    return [first, second, third]


@pytest.fixture(scope="module")
def cl100k(shared_data):
    path = shared_data / "models" / "tiktoken" / "cl100k_base.tiktoken"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return bytepair.load_tiktoken(path)


@pytest.fixture(scope="module")
def trained(corpus):
    """A small byte-level BPE: every id fits in uint16."""
    return bytepair.train(list(read_documents(corpus)), 600, special_tokens=[EOT], progress=False)


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def documents_by_file(corpus: list[Path]) -> list[list[str]]:
    return [list(read_documents(path)) for path in corpus]


# ---- What the shards hold ----


def test_cl100k_shards_are_the_documents_ids_and_eot(corpus, cl100k, tmp_path):
    out = encode_dataset(corpus, cl100k, tmp_path / "out", eot=EOT, progress=False)
    ds = TokenDataset(out)
    documents = list(read_documents(corpus))
    eot = cl100k.special_tokens[EOT]
    assert len(ds) == len(documents) and ds.dtype == np.uint32 and ds.eot == eot
    for document, tokens in zip(documents, ds):
        assert tokens[-1] == eot
        assert tokens[:-1].tolist() == cl100k.encode_ordinary(document)
        assert cl100k.decode(tokens[:-1].tolist()) == document
    assert ds.n_tokens == sum(len(cl100k.encode_ordinary(d)) + 1 for d in documents)
    # Special-token text is plain text by default: no special id but the eots.
    specials = set(cl100k.special_tokens.values())
    assert sum(np.isin(ds.tokens(k), list(specials)).sum() for k in range(len(ds.shards))) == len(
        ds
    )


def test_trained_bpe_fits_uint16_and_decodes(corpus, trained, tmp_path):
    eot = trained.special_tokens[EOT]
    out = encode_dataset(corpus, trained, tmp_path / "out", eot=eot, progress=False)
    ds = TokenDataset(out)
    assert ds.dtype == np.uint16
    whole = np.concatenate([ds.tokens(k) for k in range(len(ds.shards))])
    expected = [i for d in read_documents(corpus) for i in trained.encode_ordinary(d) + [eot]]
    assert whole.tolist() == expected


def test_sentencepiece_models_use_the_list_form(shared_data, corpus, tmp_path):
    model = shared_data / "models" / "sentencepiece" / "sp_test_model.model"
    loaded = bytepair.load(model)  # sentencepiece's own rules
    trained = bytepair.train(
        list(read_documents(corpus[:1])), 400, model="unigram", special_tokens=["<eot>"]
    )
    for name, tok, eot in (("loaded", loaded, "</s>"), ("trained", trained, "<eot>")):
        ds = TokenDataset(encode_dataset(corpus, tok, tmp_path / name, eot=eot, progress=False))
        assert ds.dtype == np.uint16
        eot_id = tok.special_tokens[eot]
        for document, tokens in zip(read_documents(corpus), ds):
            assert tokens.tolist() == tok.encode_ordinary(document) + [eot_id]


def test_allow_special_makes_special_text_its_id(corpus, cl100k, tmp_path):
    ds = TokenDataset(
        encode_dataset(corpus[1], cl100k, tmp_path / "out", allowed_special="all", progress=False)
    )
    documents = list(read_documents(corpus[1]))
    assert ds[3].tolist() == cl100k.encode(documents[3], allowed_special="all")
    assert cl100k.special_tokens[EOT] in ds[3].tolist()
    with pytest.raises(ValueError, match="not special tokens"):
        encode_dataset(corpus, cl100k, tmp_path / "x", allowed_special=["<|nope|>"])


def test_dtype_choice_and_a_uint16_that_cannot_hold_the_ids(corpus, cl100k, trained, tmp_path):
    with pytest.raises(ValueError, match="uint16 holds ids up to 65535.*100277"):
        encode_dataset(corpus, cl100k, tmp_path / "a", dtype="uint16")
    assert not (tmp_path / "a").exists()
    ds = TokenDataset(encode_dataset(corpus, trained, tmp_path / "b", dtype="uint32"))
    assert ds.dtype == np.uint32 and ds.tokens(0).dtype == np.uint32
    assert ds[0].tolist() == trained.encode_ordinary(next(read_documents(corpus)))


def test_eot_must_be_a_token_of_the_tokenizer(corpus, trained, tmp_path):
    with pytest.raises(ValueError, match="not a special token"):
        encode_dataset(corpus, trained, tmp_path / "a", eot="<|eot|>")
    with pytest.raises(ValueError, match="not a token id"):
        encode_dataset(corpus, trained, tmp_path / "b", eot=600)
    for bad in (True, 1.5):
        with pytest.raises(TypeError, match="eot must be"):
            encode_dataset(corpus, trained, tmp_path / "c", eot=bad)
    eot = trained.special_tokens[EOT]
    ds = TokenDataset(encode_dataset(corpus[:1], trained, tmp_path / "d", eot=np.int64(eot)))
    assert ds.eot == eot and type(ds.eot) is int
    assert ds[0][-1] == eot


def test_eot_must_not_be_an_unused_id(corpus, cl100k, tmp_path):
    unused = 100265  # cl100k_base has no token between <|endoftext|> and <|fim_prefix|>
    with pytest.raises(ValueError):
        cl100k.decode_single_token_bytes(unused)
    with pytest.raises(ValueError, match=f"eot {unused} .*no token has that id"):
        encode_dataset(corpus[:1], cl100k, tmp_path / "out", eot=np.int64(unused))
    assert not (tmp_path / "out").exists()


def test_parquet_and_zstd_inputs_with_a_named_field(corpus, trained, tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    zstandard = pytest.importorskip("zstandard")
    texts = list(read_documents(corpus))
    parquet = tmp_path / "a.parquet"
    pq.write_table(pa.table({"body": texts[:150]}), parquet, row_group_size=40)
    lines = "".join(json.dumps({"body": t}) + "\n" for t in texts[150:])
    zst = tmp_path / "b.jsonl.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(lines.encode()))
    out = encode_dataset([parquet, zst], trained, tmp_path / "out", field="body", progress=True)
    assert [d.tolist() for d in TokenDataset(out)] == [trained.encode_ordinary(t) for t in texts]
    total = parquet.stat().st_size + zst.stat().st_size
    assert f"{total / 1000:.1f}k/{total / 1000:.1f}k" in capsys.readouterr().err


# ---- Shard boundaries ----


def test_shards_close_after_the_document_that_fills_them_and_never_span_files(
    corpus, trained, tmp_path
):
    limit = 700
    ds = TokenDataset(encode_dataset(corpus, trained, tmp_path / "out", shard_tokens=limit))
    assert len(ds.shards) > 10
    for k, entry in enumerate(ds.shards):
        offsets = ds.offsets(k)
        last_of_file = (
            k + 1 == len(ds.shards) or ds.shards[k + 1]["file_index"] != entry["file_index"]
        )
        assert entry["tokens"] >= limit or last_of_file
        assert offsets[-2] < limit  # without its last document the shard was not full
    for index, documents in enumerate(documents_by_file(corpus)):
        shards = [k for k, e in enumerate(ds.shards) if e["file_index"] == index]
        assert [e["part"] for e in (ds.shards[k] for k in shards)] == list(range(len(shards)))
        got = [
            ds.tokens(k)[a:b].tolist()
            for k in shards
            for a, b in zip(ds.offsets(k)[:-1], ds.offsets(k)[1:])
        ]
        assert got == [trained.encode_ordinary(d) for d in documents]


# ---- Interruption and resume ----


class Interrupt(KeyboardInterrupt):
    pass


def interrupted_run(corpus, tok, out: Path, *, after: int, **options) -> None:
    """Encodes file 0, then stops inside file 1 after ``after`` batches, as Ctrl-C
    would. Counted at the encoder, not by progress reports: how often those come
    depends on how a file is read (gzip's buffer differs between Python versions)."""
    run = plan(corpus, tok, out, **options)
    encode_file(run.files[0], 0, tok, out, run.settings)
    make_encoder = dataset._batch_encoder
    batches = []

    def stopping_encoder(tokenizer, settings):
        encode = make_encoder(tokenizer, settings)

        def encode_or_stop(texts):
            if len(batches) == after:
                raise Interrupt
            batches.append(len(texts))
            return encode(texts)

        return encode_or_stop

    with pytest.MonkeyPatch.context() as patch, pytest.raises(Interrupt):
        patch.setattr(dataset, "_batch_encoder", stopping_encoder)
        encode_file(run.files[1], 1, tok, out, run.settings)


def test_interrupted_then_resumed_equals_uninterrupted(corpus, trained, tmp_path, monkeypatch):
    options = {"eot": EOT, "shard_tokens": 500}
    reference = encode_dataset(corpus, trained, tmp_path / "reference", **options)
    monkeypatch.setattr(dataset, "BATCH_CHARS", 2000)  # many batches: stop in the middle
    out = tmp_path / "out"
    interrupted_run(corpus, trained, out, after=4, **options)
    names = {p.name for p in out.iterdir()}
    assert not any(n.endswith(".tmp") for n in names)  # the shard being written is gone
    assert "file-00000.json" in names and "file-00001.json" not in names
    assert "dataset.json" not in names
    kept = out / "shard-00001-00000.tokens.npy"
    assert (out / "shard-00001-00000.json").is_file()
    before = kept.stat().st_mtime_ns
    with pytest.raises(FormatError, match="did not finish"):
        TokenDataset(out)

    encode_dataset(corpus, trained, out, resume=True, **options)
    assert files_of(out) == files_of(reference)
    assert kept.stat().st_mtime_ns == before  # complete shards are not written again


@pytest.mark.slow
def test_leftover_temporary_and_incomplete_files_are_never_taken_for_shards(
    corpus, trained, tmp_path, monkeypatch
):
    options = {"shard_tokens": 400}
    reference = encode_dataset(corpus, trained, tmp_path / "reference", **options)
    monkeypatch.setattr(dataset, "BATCH_CHARS", 1500)
    out = tmp_path / "out"
    interrupted_run(corpus, trained, out, after=3, **options)
    # What a killed process leaves: half-written files, a shard without its entry.
    (out / "shard-00001-00001.tokens.npy.tmp").write_bytes(b"\x93NUMPY garbage")
    (out / "shard-00001-00002.tokens.npy").write_bytes(b"not complete")
    (out / "shard-00001-00002.offsets.npy").write_bytes(b"not complete")
    (out / "file-00001.json.tmp").write_text("{}")
    (out / "shard-00002-00000.json.tmp").write_text("{")
    encode_dataset(corpus, trained, out, resume=True, **options)
    assert files_of(out) == files_of(reference)


def test_resume_names_what_differs(corpus, trained, cl100k, tmp_path):
    out = tmp_path / "out"
    encode_dataset(corpus, trained, out, shard_tokens=1000)
    with pytest.raises(ValueError, match="shard_tokens was 1000, now 2000"):
        encode_dataset(corpus, trained, out, shard_tokens=2000, resume=True)
    with pytest.raises(ValueError, match="the tokenizer was"):
        encode_dataset(corpus, cl100k, out, shard_tokens=1000, resume=True)
    with pytest.raises(ValueError, match="input files, now 2"):
        encode_dataset(corpus[:2], trained, out, shard_tokens=1000, resume=True)
    changed = tmp_path / "c.txt"
    changed.write_text(corpus[2].read_text(encoding="utf-8") + "more", "utf-8")
    with pytest.raises(ValueError, match="input file 2 was .*c.txt"):
        encode_dataset([*corpus[:2], changed], trained, out, shard_tokens=1000, resume=True)
    # Resuming a finished run changes nothing.
    before = files_of(out)
    encode_dataset(corpus, trained, out, shard_tokens=1000, resume=True)
    assert files_of(out) == before


def test_resume_refuses_an_input_rewritten_to_the_same_size(trained, tmp_path):
    # Path and size alone took the new text for the run's: its complete
    # shards would hold the old text and the rest the new.
    source = tmp_path / "docs.txt"
    source.write_text("first version of the text\n\nsecond document\n", "utf-8")
    other = tmp_path / "other.txt"
    other.write_text("not started\n", "utf-8")
    out = tmp_path / "out"
    # The first file is complete, the second has no output yet.
    first = plan([source, other], trained, out)
    encode_file(first.files[0], 0, trained, out, first.settings)
    stat = source.stat()
    source.write_text("FIRST version of the text\n\nsecond document\n", "utf-8")
    assert source.stat().st_size == stat.st_size
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    with pytest.raises(ValueError, match=r"input file 0 was .*docs.txt \(43 bytes, modified"):
        encode_dataset([source, other], trained, out, resume=True)
    # A file with no output yet may change (fixed after it failed the run).
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    other.write_text("now it is started and longer\n", "utf-8")
    encode_dataset([source, other], trained, out, resume=True)
    assert len(TokenDataset(out)) == 3


def test_nothing_is_replaced_without_asking(corpus, trained, tmp_path):
    out = tmp_path / "out"
    encode_dataset(corpus[:1], trained, out)
    with pytest.raises(FileExistsError, match="not empty"):
        encode_dataset(corpus, trained, out)
    encode_dataset(corpus, trained, out, overwrite=True)
    assert {e["file_index"] for e in TokenDataset(out).shards} == {0, 1, 2}
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        encode_dataset(corpus, trained, other)
    with pytest.raises(FormatError, match="nothing to resume"):
        encode_dataset(corpus, trained, other, resume=True)
    assert (other / "notes.txt").read_text() == "mine"


# Names like a run's files, which are not: replacing a dataset must keep them.
FOREIGN = ("file-notes.txt", "draft.tmp", "shard-plan.md", "shard-00000-plan.md", "run.json.bak")


def test_overwrite_deletes_only_a_datasets_own_files(corpus, trained, tmp_path):
    out = tmp_path / "out"
    encode_dataset(corpus[:1], trained, out)
    for name in FOREIGN:
        (out / name).write_text("mine")
    before = files_of(out)
    with pytest.raises(FormatError, match=r"draft\.tmp: not a file of a dataset \(and 4 more\)"):
        encode_dataset(corpus, trained, out, overwrite=True)
    assert files_of(out) == before  # the dataset too: nothing was deleted

    # Only foreign files, or another tool's run.json: not a dataset to replace.
    for name in FOREIGN:
        other = tmp_path / f"only-{name}"
        other.mkdir()
        (other / name).write_text("mine")
        with pytest.raises(FormatError, match=f"{name}: not a file of a dataset"):
            encode_dataset(corpus, trained, other, overwrite=True)
        assert files_of(other) == {name: b"mine"}
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "run.json").write_text('{"format": "my-experiment"}')
    with pytest.raises(FormatError, match="run.json: not the run.json of a bytepair-dataset"):
        encode_dataset(corpus, trained, tmp_path / "sub", overwrite=True)
    assert (tmp_path / "sub" / "run.json").read_text() == '{"format": "my-experiment"}'

    # A run killed while writing its first file leaves only its .tmp: replaced.
    (tmp_path / "killed").mkdir()
    (tmp_path / "killed" / "run.json.tmp").write_text('{"format": "bytep')
    encode_dataset(corpus, trained, tmp_path / "killed", overwrite=True)
    assert "run.json.tmp" not in files_of(tmp_path / "killed")

    # A dataset's own files, leftovers of a killed run too, are all replaced.
    for name in FOREIGN:
        (out / name).unlink()
    (out / "shard-00000-00007.tokens.npy.tmp").write_bytes(b"half")
    (out / "file-00009.json").write_text("{}")
    encode_dataset(corpus, trained, out, overwrite=True, shard_tokens=700)
    reference = encode_dataset(corpus, trained, tmp_path / "reference", shard_tokens=700)
    assert files_of(out) == files_of(reference)


def test_overwrite_refuses_a_directory_that_holds_no_dataset(corpus, trained, tmp_path, capsys):
    """Files named like a run's are no dataset without its run.json or
    dataset.json: --force deleted a user's file-00007.json."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "file-00007.json").write_text('{"my": "data"}')
    (out / "shard-00000-00000.json").write_text("{}")
    before = files_of(out)
    with pytest.raises(FormatError, match=r"mine: holds no run\.json or dataset\.json"):
        encode_dataset(corpus, trained, out, overwrite=True)
    assert files_of(out) == before
    model = tmp_path / "tok.json"
    trained.save(model)
    args = ["encode-dataset", str(corpus[0]), "-t", str(model), "-o", str(out), "--force"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert f"{out}: holds no run.json or dataset.json: not a dataset" in err
    assert "Traceback" not in err and files_of(out) == before


def test_overwrite_keeps_the_old_dataset_until_the_new_one_is_complete(
    corpus, trained, tmp_path, monkeypatch
):
    """--force deleted the old dataset before the run: a run that then failed
    (a bad input file found midway, Ctrl-C) left nothing."""
    parent = tmp_path / "parent"
    out = encode_dataset(corpus[:1], trained, parent / "out", shard_tokens=700)
    before, listed = files_of(out), sorted(os.listdir(parent))
    bad = tmp_path / "inputs" / "bad.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"text": "fine"}\n{"text": broken\n', "utf-8")
    with pytest.raises(FormatError, match="bad.jsonl"):  # after the shards of corpus
        encode_dataset([*corpus, bad], trained, out, overwrite=True, shard_tokens=700)
    assert files_of(out) == before and sorted(os.listdir(parent)) == listed

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:  # at the last moment: all shards written
        m.setattr(dataset, "finish", interrupted)
        with pytest.raises(KeyboardInterrupt):
            encode_dataset(corpus, trained, out, overwrite=True)
    assert files_of(out) == before and sorted(os.listdir(parent)) == listed

    rename = os.rename

    def failing_swap(source, target):
        if str(source).endswith(".tmp"):  # the new dataset taking the old one's name
            raise OSError("the swap failed")
        rename(source, target)

    with monkeypatch.context() as m:
        m.setattr(os, "rename", failing_swap)
        with pytest.raises(OSError, match="the swap failed"):
            encode_dataset(corpus, trained, out, overwrite=True)
    assert files_of(out) == before and sorted(os.listdir(parent)) == listed

    encode_dataset(corpus, trained, out, overwrite=True, shard_tokens=700)
    reference = encode_dataset(corpus, trained, tmp_path / "reference", shard_tokens=700)
    assert files_of(out) == files_of(reference) and sorted(os.listdir(parent)) == listed


def test_force_on_the_command_line_keeps_the_old_dataset_until_the_new_one_is_complete(
    corpus, trained, tmp_path, monkeypatch, capsys
):
    model = tmp_path / "tok.json"
    trained.save(model)
    parent = tmp_path / "parent"
    parent.mkdir()  # the command makes only the directory -o names
    out = parent / "out"
    args = ["encode-dataset", "-t", str(model), "-o", str(out), "--no-progress"]
    assert main([*args, str(corpus[0])]) == 0
    before, listed = files_of(out), sorted(os.listdir(parent))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": broken\n', "utf-8")
    capsys.readouterr()
    assert main([*args, *map(str, corpus), str(bad), "--force"]) == 1
    assert "bad.jsonl" in capsys.readouterr().err
    assert files_of(out) == before and sorted(os.listdir(parent)) == listed

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(dataset, "finish", interrupted)
        assert main([*args, *map(str, corpus), "--force"]) == 130
    assert f"interrupted; {out} is left as it was" in capsys.readouterr().err
    assert files_of(out) == before and sorted(os.listdir(parent)) == listed

    # --ray goes through the same replacement (a stand-in for encode_dataset_on_ray).
    from bytepair.cli import encode

    def on_ray(inputs, tokenizer, target, *, address, **options):
        encode_dataset(inputs[:1], tokenizer, target, **options)  # a first file done, then:
        raise ValueError("a task failed")

    with monkeypatch.context() as m:
        m.setattr(encode, "ray_function", lambda name: on_ray)
        assert main([*args, *map(str, corpus), "--force", "--ray"]) == 1
    assert "a task failed" in capsys.readouterr().err
    assert files_of(out) == before and sorted(os.listdir(parent)) == listed

    assert main([*args, *map(str, corpus), "--force"]) == 0
    reference = encode_dataset(corpus, trained, tmp_path / "reference")
    assert files_of(out) == files_of(reference) and sorted(os.listdir(parent)) == listed


def test_resume_redoes_a_file_whose_shards_went_missing(corpus, trained, tmp_path):
    """A finished run whose dataset.json and a shard file were deleted: the
    resume said it wrote the dataset, and reading it found the shard missing."""
    options = {"shard_tokens": 700}
    reference = encode_dataset(corpus, trained, tmp_path / "reference", **options)
    out = encode_dataset(corpus, trained, tmp_path / "out", **options)
    (out / "dataset.json").unlink()
    (out / "shard-00001-00002.tokens.npy").unlink()
    data = (out / "shard-00002-00001.offsets.npy").read_bytes()
    (out / "shard-00002-00001.offsets.npy").write_bytes(data[:-8])  # cut short
    assert plan(corpus, trained, out, resume=True, **options).done == {0}
    encode_dataset(corpus, trained, out, resume=True, **options)
    assert files_of(out) == files_of(reference)
    TokenDataset(out).verify()


def test_resume_deletes_no_foreign_file(corpus, trained, tmp_path, monkeypatch):
    options = {"shard_tokens": 400}
    reference = encode_dataset(corpus, trained, tmp_path / "reference", **options)
    monkeypatch.setattr(dataset, "BATCH_CHARS", 1500)
    out = tmp_path / "out"
    interrupted_run(corpus, trained, out, after=3, **options)  # file 1 is cut short
    for name in (*FOREIGN, "shard-00001-plan.md", "shard-00001-00001.notes"):
        (out / name).write_text("mine")
    encode_dataset(corpus, trained, out, resume=True, **options)
    mine = {p.name for p in out.iterdir()} - set(files_of(reference))
    assert mine == {*FOREIGN, "shard-00001-plan.md", "shard-00001-00001.notes"}
    assert all((out / name).read_text() == "mine" for name in mine)
    assert {n: b for n, b in files_of(out).items() if n not in mine} == files_of(reference)


def test_encode_file_and_finish_check_their_inputs(corpus, trained, cl100k, tmp_path):
    run = plan(corpus, trained, tmp_path / "out")
    with pytest.raises(ValueError, match="not the one"):
        encode_file(run.files[0], 0, cl100k, run.out, run.settings)
    shards = encode_file(run.files[0], 0, trained, run.out, run.settings)
    assert encode_file(run.files[0], 0, trained, run.out, run.settings) == shards  # done
    with pytest.raises(ValueError, match=r"not encoded yet.*1 \("):
        finish(run.out, run, shards)
    for index in (1, 2):
        encode_file(run.files[index], index, trained, run.out, run.settings)
    manifest = finish(run.out, run.settings, shards)  # the other files' shards are on disk
    assert len(TokenDataset(manifest)) == len(list(read_documents(corpus)))


# ---- The reader ----


def test_reader_indexing_and_shard_arrays(corpus, trained, tmp_path):
    ds = TokenDataset(encode_dataset(corpus, trained, tmp_path / "out", shard_tokens=3000))
    documents = list(read_documents(corpus))
    n = len(ds)
    assert ds[-1].tolist() == trained.encode_ordinary(documents[-1])
    assert ds[-n].tolist() == ds[0].tolist() == trained.encode_ordinary(documents[0])
    assert ds[np.int64(5)].tolist() == trained.encode_ordinary(documents[5])
    for bad in (n, -n - 1):
        with pytest.raises(IndexError, match=f"{n} documents"):
            ds[bad]
    assert not ds[1].flags.writeable
    # Slices give lists of documents, as a Python sequence would, across shards.
    assert len(ds.shards) > 2
    every = [d.tolist() for d in ds]
    for part in (slice(None), slice(3, 40), slice(-5, None), slice(None, None, -7), slice(n, None)):
        assert [d.tolist() for d in ds[part]] == every[part]
    for bad in ("1", 1.0, [1, 2]):
        with pytest.raises(TypeError, match="indices must be integers or slices"):
            ds[bad]
    total = sum(len(ds.tokens(k)) for k in range(len(ds.shards)))
    assert total == ds.n_tokens == sum(e["tokens"] for e in ds.shards)
    assert "documents=" in repr(ds)


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("documents", "abc", "must be a whole number"),
        ("documents", "5", "must be a whole number"),
        ("documents", 5.5, "must be a whole number"),
        ("documents", -1, "must be a whole number"),
        ("tokens", None, "must be a whole number"),
        ("tokens", True, "must be a whole number"),
        ("tokens_bytes", 1 << 64, "must be a whole number"),
        ("tokens_sha256", 7, "must be text"),
        ("tokens_file", "/etc/passwd", "must be the name of a file"),
        ("offsets_file", "..", "must be the name of a file"),
        ("offsets_file", ["x"], "must be the name of a file"),
    ],
)
def test_reader_refuses_entry_values_of_the_wrong_type(
    corpus, trained, tmp_path_factory, key, value, problem
):
    """A hand-edited count raised a bare ValueError or TypeError."""
    out = tmp_path_factory.mktemp("typed") / "out"
    encode_dataset(corpus[:1], trained, out, shard_tokens=3000)
    manifest = json.loads((out / "dataset.json").read_text())
    manifest["shards"][1][key] = value
    (out / "dataset.json").write_text(json.dumps(manifest))
    where = rf"dataset\.json \(shards\[1\]\.{key}\): {problem}"
    with pytest.raises(FormatError, match=where):
        TokenDataset(out)


def test_an_output_that_is_a_file_is_named(corpus, trained, tmp_path):
    out = tmp_path / "out"
    out.write_text("mine")
    with pytest.raises(FileExistsError, match="out is a file: a dataset is written into a dir"):
        encode_dataset(corpus[:1], trained, out)
    assert out.read_text() == "mine"


def test_reader_finds_missing_truncated_and_changed_shards(corpus, trained, tmp_path):
    out = encode_dataset(corpus, trained, tmp_path / "out", shard_tokens=3000)
    with pytest.raises(FormatError, match="not a dataset directory"):
        TokenDataset(tmp_path)
    tokens = out / "shard-00000-00001.tokens.npy"
    assert TokenDataset(out).shards[1]["tokens_file"] == tokens.name
    data = tokens.read_bytes()
    tokens.write_bytes(data[:-2])
    ds = TokenDataset(out)
    assert len(ds[0]) > 0  # other shards still read
    with pytest.raises(FormatError, match=r"shard-00000-00001\.tokens\.npy.*truncated"):
        ds.tokens(1)
    tokens.write_bytes(data[:-2] + bytes([data[-2] ^ 1, data[-1]]))
    TokenDataset(out).tokens(1)  # the same size: found by the checksum
    with pytest.raises(FormatError, match=r"shard-00000-00001\.tokens\.npy.*checksum"):
        TokenDataset(out).verify()
    # A damaged header (numpy parses it as Python source) is named too.
    for at, byte in ((10, ord("'")), (12, ord("("))):
        tokens.write_bytes(data[:at] + bytes([byte]) + data[at + 1 :])
        with pytest.raises(FormatError, match=r"shard-00000-00001\.tokens\.npy: not a \.npy"):
            TokenDataset(out).tokens(1)
    tokens.unlink()
    with pytest.raises(FormatError, match="missing"):
        TokenDataset(out).tokens(1)
    (out / "dataset.json").write_text("{")
    with pytest.raises(FormatError, match="dataset.json.*invalid JSON"):
        TokenDataset(out)


# ---- Command line ----


def test_command_line_end_to_end(corpus, trained, tmp_path, capsys):
    model = tmp_path / "tok.json"
    trained.save(model)
    out = tmp_path / "out"
    args = ["encode-dataset", *map(str, corpus), "-t", str(model), "-o", str(out)]
    assert main([*args, "--eot", EOT, "--shard-tokens", "2000", "--no-progress"]) == 0
    assert "documents" in capsys.readouterr().out
    ds = TokenDataset(out)
    assert ds.eot == trained.special_tokens[EOT] and ds.settings.shard_tokens == 2000
    assert ds[0].tolist() == trained.encode_ordinary(next(read_documents(corpus))) + [ds.eot]

    assert main(args) == 1
    err = capsys.readouterr().err
    assert "--resume" in err and "--force" in err and "Traceback" not in err
    assert main([*args, "--eot", EOT, "--shard-tokens", "2000", "--resume"]) == 0
    assert main([*args, "--resume"]) == 1
    assert "eot was" in capsys.readouterr().err
    assert main([*args, "--force", "--eot", "600"]) == 1
    assert "not a token id" in capsys.readouterr().err
    assert main([*args, "--force", "--allow-special", "--dtype", "uint32"]) == 0
    assert TokenDataset(out).dtype == np.uint32
    (out / "file-notes.txt").write_text("mine")
    assert main([*args, "--force"]) == 1
    err = capsys.readouterr().err
    assert "file-notes.txt: not a file of a dataset" in err and "Traceback" not in err
    assert (out / "file-notes.txt").read_text() == "mine" and TokenDataset(out).dtype == np.uint32


def test_command_line_eot_ids_are_ascii_digits(corpus, trained, tmp_path, capsys):
    """'٣' and '０' were read as the ids 3 and 0; '²' failed as "invalid literal for int()"."""
    model = tmp_path / "tok.json"
    trained.save(model)
    out = tmp_path / "out"
    args = ["encode-dataset", str(corpus[0]), "-t", str(model), "-o", str(out)]
    for eot in ("٣", "０", "²"):
        with pytest.raises(SystemExit) as exit_info:
            main([*args, "--eot", eot])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert f"argument --eot: {eot!r}: write an id with the ASCII digits 0-9" in err
        assert not out.exists()
    assert main([*args, "--eot", "3"]) == 0
    assert TokenDataset(out).eot == 3


def test_command_line_shard_tokens_fit_int64(corpus, trained, tmp_path, capsys):
    """--shard-tokens 99999999999999999999 ended in an OverflowError after run.json was written."""
    from bytepair.cli import arguments

    assert arguments.MAX_SHARD_TOKENS == dataset.MAX_SHARD_TOKENS == 2**63 - 1
    model = tmp_path / "tok.json"
    trained.save(model)
    out = tmp_path / "out"
    args = ["encode-dataset", str(corpus[0]), "-t", str(model), "-o", str(out)]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--shard-tokens", str(2**63)])
    assert exit_info.value.code == 2
    assert "argument --shard-tokens: 9223372036854775808 is above the maximum" in (
        capsys.readouterr().err
    )
    assert not out.exists()
    with pytest.raises(ValueError, match="shard_tokens must be an int from 1 to"):
        encode_dataset(corpus[0], trained, out, shard_tokens=2**63)
    assert not out.exists()
    assert main([*args, "--shard-tokens", str(2**63 - 1)]) == 0
    assert len(TokenDataset(out).shards) == 1


def test_command_line_ctrl_c_says_how_to_go_on(corpus, trained, tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(dataset, "encode_file", interrupted)
    code = main(["encode-dataset", str(corpus[0]), "-t", "x", "-o", str(tmp_path / "o")])
    assert code == 1  # no tokenizer "x": an error before any work
    model = tmp_path / "tok.json"
    trained.save(model)
    code = main(["encode-dataset", str(corpus[0]), "-t", str(model), "-o", str(tmp_path / "o")])
    assert code == 130
    assert "--resume" in capsys.readouterr().err


def test_ctrl_c_while_a_shard_is_closed_exits_cleanly(corpus, trained, tmp_path, monkeypatch):
    """An interrupt that lands while a shard's offsets file is written ends as
    any Ctrl-C does: exit 130 with the --resume hint, no temporary file left,
    and --resume gives the uninterrupted shards."""
    model = tmp_path / "tok.json"
    trained.save(model)
    header = dataset._npy_header
    closed = []

    def interrupted_on_the_second_offsets(dtype, length):
        if dtype == dataset.OFFSETS_DTYPE:
            closed.append(length)
            if len(closed) == 2:
                raise KeyboardInterrupt
        return header(dtype, length)

    monkeypatch.setattr(dataset, "_npy_header", interrupted_on_the_second_offsets)
    out = tmp_path / "out"
    command = ["encode-dataset", *map(str, corpus), "-t", str(model), "--shard-tokens", "2000"]
    assert main([*command, "-o", str(out)]) == 130
    assert len(closed) == 2
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    monkeypatch.setattr(dataset, "_npy_header", header)
    assert main([*command, "-o", str(out), "--resume"]) == 0
    reference = encode_dataset(corpus, trained, tmp_path / "reference", shard_tokens=2000)
    assert files_of(out) == files_of(reference)


def test_progress_bar_counts_input_bytes(corpus, trained, tmp_path, capsys):
    encode_dataset(corpus, trained, tmp_path / "out", progress=True)
    err = capsys.readouterr().err
    total = sum(p.stat().st_size for p in corpus)
    assert "encoding" in err and "100%" in err and f"{total / 1000:.1f}k" in err


@pytest.mark.slow
def test_ctrl_c_on_the_command_line_then_resume(corpus, trained, tmp_path):
    """A real SIGINT to `bytepair encode-dataset` while it writes shards: exit
    130, no temporary file left, and --resume gives the uninterrupted shards."""
    big = tmp_path / "big.txt"
    big.write_text("\n\n".join(read_documents(corpus)) * 60, "utf-8")  # 5 MB, 3 batches
    model = tmp_path / "tok.json"
    trained.save(model)
    options = ["--shard-tokens", "50000", "--eot", EOT]
    out = tmp_path / "out"
    command = [sys.executable, "-m", "bytepair", "encode-dataset", str(big), "-t", str(model)]
    process = subprocess.Popen(
        [*command, "-o", str(out), *options], stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not (out / "shard-00000-00002.json").exists() and time.monotonic() < deadline:
        time.sleep(0.002)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("the run finished before the signal came")  # a very fast machine
    assert process.returncode == 130, err
    assert "--resume" in err and "Traceback" not in err
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    assert not (out / "dataset.json").exists()
    assert main([*command[3:], "-o", str(out), *options, "--resume"]) == 0
    reference = encode_dataset(big, trained, tmp_path / "reference", shard_tokens=50000, eot=EOT)
    assert files_of(out) == files_of(reference)


# ---- Many input files ----


def count_listings(monkeypatch, directory: Path) -> list[int]:
    """Counts the listings of ``directory`` (os.scandir: Path.glob and
    Path.rglob; os.listdir: Path.iterdir)."""
    calls = [0]
    target = os.path.realpath(directory)
    for name in ("scandir", "listdir"):
        original = getattr(os, name)

        def counted(path=".", _original=original):
            if os.path.realpath(path) == target:
                calls[0] += 1
            return _original(path)

        monkeypatch.setattr(os, name, counted)
    return calls


@pytest.mark.slow
def test_many_input_files_list_the_output_once_and_resume_identically(
    trained, tmp_path, monkeypatch
):
    """A run of n files listed the output directory once per file (a glob for
    each file's shards, on planning a resume and on encoding): quadratic,
    42.7 s for 4,000 tiny files. Now planning lists it once, whatever n."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(120):
        (inputs / f"f{i:05d}.txt").write_text(f"document {i}\n\nand {i * 7}\n", "utf-8")
    reference = encode_dataset(inputs, trained, tmp_path / "reference", progress=False)
    out = tmp_path / "out"
    listings = count_listings(monkeypatch, out)
    encode_dataset(inputs, trained, out, progress=False)
    assert listings[0] <= 2
    assert files_of(out) == files_of(reference)

    # An interrupted run: files 40... not complete, file 40's shard half written.
    (out / "dataset.json").unlink()
    for i in range(40, 120):
        (out / f"file-{i:05d}.json").unlink()
    (out / "shard-00040-00000.tokens.npy").write_bytes(b"cut short")
    for i in range(60, 120):
        for suffix in ("json", "tokens.npy", "offsets.npy"):
            (out / f"shard-{i:05d}-00000.{suffix}").unlink()
    (out / "shard-00080-00000.tokens.npy.tmp").write_bytes(b"half")
    listings[0] = 0
    encode_dataset(inputs, trained, out, resume=True, progress=False)
    assert listings[0] <= 2
    assert files_of(out) == files_of(reference)


# ---- What the inputs are ----


def test_an_output_directory_inside_an_input_directory_is_no_input(trained, tmp_path):
    """`encode-dataset nest -o nest/tok` read nothing of nest/tok the first
    time, then --resume saw its files as new inputs ("the run had 1 input
    files, now 7") and --force deleted the dataset and failed."""
    nest = tmp_path / "nest"
    nest.mkdir()
    (nest / "x.txt").write_text("one\n\ntwo\n", "utf-8")
    out = nest / "tok"
    encode_dataset(nest, trained, out, progress=False)
    first = files_of(out)
    (out / "dataset.json").unlink()
    encode_dataset(nest, trained, out, resume=True, progress=False)
    assert files_of(out) == first
    encode_dataset(str(nest / "**"), trained, out, overwrite=True, progress=False)
    assert files_of(out) == first and len(TokenDataset(out)) == 2
    with pytest.raises(ValueError, match=r"run.json: a file in the output directory"):
        plan([nest / "x.txt", out / "run.json"], trained, out, overwrite=True)
    with pytest.raises(FileNotFoundError, match=r"holds no file to read .*output directory"):
        plan(out, trained, out, resume=True)


def test_a_file_given_twice_is_encoded_once(trained, tmp_path):
    x = tmp_path / "x.txt"
    x.write_text("one\n\ntwo\n", "utf-8")
    out = encode_dataset([x, str(x), str(tmp_path / "*.txt")], trained, tmp_path / "o")
    assert len(TokenDataset(out)) == 2


def test_a_named_pipe_is_refused_with_the_reason(trained, tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(ValueError, match=r"pipe: not a regular file .* to resume"):
        plan(pipe, trained, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_fingerprints_of_earlier_versions_still_match():
    """A run started by the previous version resumes: fields the models gained
    since (BPEModel.added_tokens) leave the fingerprint alone at their default.
    The value is what bytepair at c8660ef computed for this model."""
    from bytepair.corpus.dataset import tokenizer_fingerprint
    from bytepair.model import BPEModel
    from bytepair.pretokenizers import resolve

    tokens = tuple(bytes([b]) for b in range(256)) + (b"ab", b"<s>")
    model = BPEModel(tokens, ((97, 98),), {"<s>": 257}, resolve("gpt2"))
    earlier = "ef36c5f09bf6f24890a62a4faf838e40771b1e8106565b0ae0f64d82d0f7c05e"
    assert tokenizer_fingerprint(bytepair.Tokenizer(model)) == earlier
    added = BPEModel(tokens, ((97, 98),), {"<s>": 257}, resolve("gpt2"), added_tokens=("<s>",))
    assert tokenizer_fingerprint(bytepair.Tokenizer(added)) != earlier


def test_unigram_fingerprints_of_earlier_versions_still_match():
    """As above for SentencePieceModel.normalize; the value is what bytepair
    at 612f574 computed for this model."""
    import dataclasses

    from bytepair.corpus.dataset import tokenizer_fingerprint
    from bytepair.tokenizers.unigram import SentencePieceTokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(
            ["ab ab cd <s> ab"], 20, model="unigram", special_tokens=["<s>"], progress=False
        )
    earlier = "7670cd8ad999d52b16b0f9ff56b7ce7fc29d9d7498b5ea06725743fe81acb90c"
    assert tokenizer_fingerprint(tok) == earlier
    normalized = SentencePieceTokenizer(dataclasses.replace(tok.model, normalize=("nfc",)))
    assert tokenizer_fingerprint(normalized) != earlier


def test_a_non_special_added_token_may_be_the_eot_and_named_as_allowed(tmp_path):
    """tokenizer.json's "special": false tokens are tokens with a text of their
    own: the eot by its text, and harmless in allowed_special (always cut out)."""
    import dataclasses

    tok = bytepair.train(["a b <sep> c"] * 20, 270, special_tokens=["<sep>"], progress=False)
    model = dataclasses.replace(tok.model, added_tokens=("<sep>",))
    added = bytepair.Tokenizer(model)
    text = tmp_path / "in.txt"
    text.write_text("x <sep> y\n\nz\n", encoding="utf-8")  # two documents
    out = encode_dataset(text, added, tmp_path / "d", eot="<sep>", allowed_special=["<sep>"])
    ds = TokenDataset(out)
    assert ds.eot == added.added_tokens["<sep>"]
    assert list(ds[0]) == added.encode("x <sep> y") + [ds.eot]
