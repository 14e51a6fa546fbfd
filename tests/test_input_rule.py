"""One rule reads input files everywhere: ``bytepair train FILES``, ``count`` +
``train --from-counts``, ``encode-dataset`` and Python ``train([Path(...)])``
read the same files into the same documents (``read_documents``), streamed,
so they give the same merges and memory does not grow with the file."""

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

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import FormatError
from bytepair.cli import main
from bytepair.corpus import sources
from bytepair.corpus.dataset import TokenDataset
from bytepair.corpus.sources import read_documents
from bytepair.errors import NotUtf8Error, decode_utf8

SHARED = os.environ.get("BYTEPAIR_SHARED_DATA")
CORPORA = ("large_code.txt.gz", "large_multilingual.txt.gz")


def documents_line_by_line(data: bytes) -> tuple[list[str], str | None]:
    """The rule read_documents' docstring states, one line at a time: the
    documents, and the error (the first bytes that are not UTF-8, named as
    for the whole file) with the documents that end before its line."""
    documents, document = [], []
    lines = data.split(b"\n")
    lines = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    offset = 0
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return documents, str(NotUtf8Error(offset + e.start, number, raw[e.start]))
        offset += len(raw)
        if line.strip("\r\n") == "":
            if document:
                documents.append("".join(document).rstrip("\r\n"))
                document = []
        else:
            document.append(line)
    if document:
        documents.append("".join(document).rstrip("\r\n"))
    return documents, None


PIECES = [b"a", b"b c", b" ", b"\t", b"\r", b"\n", b"\n", b"\r\n", b"\xc3\xa9", b"\xe2\x98\x83"]


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(PIECES), max_size=40),
    bad=st.one_of(
        st.none(), st.tuples(st.integers(0, 40), st.sampled_from([b"\xff", b"\xe2\x98"]))
    ),
    block=st.integers(1, 9),
)
def test_text_files_are_cut_by_the_stated_rule_at_any_block_size(
    tmp_path_factory, pieces, bad, block
):
    if bad is not None:
        at, byte = bad
        pieces = pieces[:at] + [byte] + pieces[at:]
    data = b"".join(pieces)
    path = tmp_path_factory.mktemp("rule") / "t.txt"
    path.write_bytes(data)
    expected, error = documents_line_by_line(data)
    got: list[str] = []
    old = sources.TEXT_BLOCK
    sources.TEXT_BLOCK = block
    try:
        with pytest.raises(FormatError) if error else _nothing() as info:
            for document in read_documents(path):
                got.append(document)
    finally:
        sources.TEXT_BLOCK = old
    assert got == expected
    if error:
        assert str(info.value) == f"{path}: {error}"
        with pytest.raises(NotUtf8Error) as whole:
            decode_utf8(data)
        assert str(whole.value) == error  # as reading the file whole names it


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_train_reads_compressed_json_lines_and_parquet_without_a_flag(tmp_path, capsys):
    texts = ["the cat sat", "on the mat\nand the dog", "sat on the log"] * 3
    plain = tmp_path / "a.txt"
    plain.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    lines = tmp_path / "a.jsonl"
    lines.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    inputs = [plain, gz, lines]
    try:
        import zstandard

        zst = tmp_path / "a.jsonl.zst"
        zst.write_bytes(zstandard.ZstdCompressor().compress(lines.read_bytes()))
        inputs.append(zst)
    except ImportError:
        pass
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"text": texts}), tmp_path / "a.parquet")
        inputs.append(tmp_path / "a.parquet")
    except ImportError:
        pass
    expected = bytepair.train(texts, 280, progress=False).merges
    for path in inputs:
        out = tmp_path / f"{path.name}.json"
        assert (
            main(["train", str(path), "-o", str(out), "--vocab-size", "280", "--no-progress"]) == 0
        )
        assert bytepair.load(out).merges == expected, path
        assert bytepair.train(path, 280, progress=False).merges == expected, path
    capsys.readouterr()
    code = main(
        ["train", str(gz), "-o", str(tmp_path / "s.json"), "--vocab-size", "280", "--stream"]
    )
    assert code == 1
    assert "--stream is no longer needed" in capsys.readouterr().err


def test_plain_strings_stay_one_document_each():
    text = "one\n\ntwo\n"
    whole = bytepair.train([text], 262, pretokenizer="none", progress=False)
    split = bytepair.train(["one", "two"], 262, pretokenizer="none", progress=False)
    assert whole.training.distinct_pretokens == 1 and split.training.distinct_pretokens == 2


@pytest.mark.slow
@pytest.mark.skipif(not SHARED, reason="BYTEPAIR_SHARED_DATA is not set: no real corpora")
@pytest.mark.parametrize("name", CORPORA)
def test_the_ways_to_read_files_give_the_same_merges_and_documents(tmp_path, name):
    """`bytepair train FILES`, `count FILES` + `train --from-counts` and
    `train([Path, ...])` give the same merges; `encode-dataset FILES` encodes
    the same documents (`train --stream` is gone: see the test above)."""
    files = [Path(SHARED, "corpus", name), Path(SHARED, "corpus", "small", "tinyshakespeare.txt")]
    for file in files:
        if not file.is_file():
            pytest.skip(f"{file} is missing from BYTEPAIR_SHARED_DATA")
    names = [str(f) for f in files]
    vocab = 1000
    quiet = ["--no-progress", "--vocab-size", str(vocab)]
    model = tmp_path / "cli.json"
    assert main(["train", *names, "-o", str(model), *quiet]) == 0
    assert main(["count", *names, "-o", str(tmp_path / "counts"), "--no-progress"]) == 0
    counted = tmp_path / "from-counts.json"
    assert (
        main(["train", "--from-counts", str(tmp_path / "counts"), "-o", str(counted), *quiet]) == 0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        python = bytepair.train(files, vocab, progress=False)
    tokenizer = bytepair.load(model)
    assert len(tokenizer.merges) == vocab - 256
    assert bytepair.load(counted).merges == tokenizer.merges
    assert python.merges == tokenizer.merges
    # encode-dataset reads the same documents: each decodes to read_documents' own.
    dataset = tmp_path / "dataset"
    args = ["encode-dataset", *names, "-t", str(model), "-o", str(dataset), "--no-progress"]
    assert main(args) == 0
    encoded = TokenDataset(dataset)
    documents = read_documents(files)
    n = 0
    for ids, document in zip(encoded, documents):
        assert tokenizer.decode(ids.tolist()) == document
        n += 1
    assert n == len(encoded) > 1000 and next(documents, None) is None


# A text of 10,000 words of which 3,000 differ, repeated: few distinct pre-tokens.
GENERATE = """
import random, sys
random.seed(0)
words = [''.join(random.choices('abcdefghij', k=random.randint(1, 6))) for _ in range(3000)]
lines = [' '.join(random.choices(words, k=100)) for _ in range(100)]
block = ('\\n'.join(lines) + '\\n\\n').encode()
with open(sys.argv[1], 'wb') as f:
    while f.tell() < int(sys.argv[2]):
        f.write(block)
"""
# Runs the command line and prints the peak memory of this process (its own
# high-water mark: ru_maxrss would count the parent's memory at the fork).
MEASURE = """
import sys
from bytepair.cli import main
assert main(sys.argv[1:]) == 0
with open("/proc/self/status") as status:
    print(next(line for line in status if line.startswith("VmHWM:")).split()[1])
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs /proc (Linux)")
def test_training_on_a_big_file_holds_far_less_than_the_file(tmp_path):
    big = tmp_path / "big.txt"
    subprocess.run([sys.executable, "-c", GENERATE, str(big), str(200 << 20)], check=True)
    size = big.stat().st_size
    out = tmp_path / "t.json"
    command = ["train", str(big), "-o", str(out), "--vocab-size", "300", "--no-progress"]
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], check=True, capture_output=True, text=True
    )
    peak = int(done.stdout.split()[-1]) * 1024
    # Reading the file whole held it twice (bytes and text): 400 MiB and more.
    assert peak < size / 2, f"peak {peak >> 20} MiB training on a {size >> 20} MiB file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_ctrl_c_while_a_named_pipe_is_silent_stops_training(tmp_path):
    """Documents are read in a thread: Ctrl-C in the main thread must not
    wait for the pipe (its writer keeps it open, silent)."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    command = [sys.executable, "-m", "bytepair", "train", str(pipe), "-o", str(tmp_path / "t.json")]
    child = subprocess.Popen([*command, "--vocab-size", "300"], stderr=subprocess.PIPE, text=True)
    try:
        with open(pipe, "w") as writer:  # returns once the trainer opened the pipe
            writer.write("some text\n\nmore text\n")
            writer.flush()
            time.sleep(0.5)
            child.send_signal(signal.SIGINT)
            started = time.monotonic()
            code = child.wait(timeout=30)
            waited = time.monotonic() - started
    finally:
        child.kill()
    assert code == 130, child.stderr.read() if child.stderr else code
    assert waited < 10
    assert "interrupted" in child.stderr.read()
