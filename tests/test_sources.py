"""read_documents: plain text, JSON lines and Parquet, gzip and zstd, files,
globs and directories, streamed; problems named by file and line."""

from __future__ import annotations

import gzip
import json

import pytest

import bytepair
from bytepair import FormatError
from bytepair.sources import read_documents

DOCS = ["first document\nits second line", "second ☃ document", "third"]


def write_text(path, docs=DOCS):
    path.write_text("\n\n".join(docs) + "\n", encoding="utf-8")
    return path


def write_jsonl(path, docs=DOCS, field="text", opener=open):
    with opener(path, "wt", encoding="utf-8") as f:
        for i, doc in enumerate(docs):
            f.write(json.dumps({"id": i, field: doc}) + "\n")
    return path


def test_plain_text_documents_end_at_blank_lines(tmp_path):
    path = write_text(tmp_path / "a.txt")
    assert list(read_documents(path)) == DOCS
    (tmp_path / "b.txt").write_text("\n\n\none\r\n\r\n\r\ntwo\n", encoding="utf-8")
    assert list(read_documents(tmp_path / "b.txt")) == ["one", "two"]


def test_json_lines_gzip_and_zstd(tmp_path):
    assert list(read_documents(write_jsonl(tmp_path / "a.jsonl"))) == DOCS
    assert list(read_documents(write_jsonl(tmp_path / "b.jsonl.gz", opener=gzip.open))) == DOCS
    zstandard = pytest.importorskip("zstandard")
    data = "".join(json.dumps({"body": d}) + "\n" for d in DOCS).encode()
    (tmp_path / "c.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    assert list(read_documents(tmp_path / "c.jsonl.zst", field="body")) == DOCS
    text = ("\n\n".join(DOCS) + "\n").encode()
    (tmp_path / "d.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(text))
    assert list(read_documents(tmp_path / "d.txt.zst")) == DOCS


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "a.parquet"
    pq.write_table(
        pa.table({"text": DOCS * 2000, "n": list(range(6000))}), path, row_group_size=1000
    )
    assert list(read_documents(path)) == DOCS * 2000
    with pytest.raises(FormatError, match="no column 'body'"):
        list(read_documents(path, field="body"))
    with pytest.raises(FormatError, match="holds int"):
        list(read_documents(path, field="n"))


def test_directories_globs_and_training(tmp_path):
    (tmp_path / "sub").mkdir()
    write_text(tmp_path / "sub" / "a.txt")
    write_jsonl(tmp_path / "sub" / "b.jsonl")
    docs = list(read_documents(tmp_path))
    assert docs == DOCS + DOCS
    assert list(read_documents(str(tmp_path / "sub" / "*.jsonl"))) == DOCS
    streamed = bytepair.train(read_documents(tmp_path), 300, progress=False)
    listed = bytepair.train(DOCS + DOCS, 300, progress=False)
    assert streamed.merges == listed.merges


def test_problems_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        list(read_documents(tmp_path / "missing*.txt"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"text": \n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad.jsonl \(line 2\): invalid JSON"):
        list(read_documents(bad))
    bad.write_text('{"text": "ok"}\n{"other": "x"}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"line 2\): no field 'text'"):
        list(read_documents(bad))
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"fine\nstill fine\n\xff\xfe broken\n")
    with pytest.raises(FormatError, match=r"line 3\): not UTF-8"):
        list(read_documents(binary))


def test_lone_surrogate_escape_is_named_where_read(tmp_path):
    path = tmp_path / "s.jsonl"
    # A full pair (\ud83d\ude00) is an emoji; half of one is no text.
    path.write_text(
        '{"text": "ok \\ud83d\\ude00"}\n{"id": 1, "text": "a\\ud800b"}\n', encoding="utf-8"
    )
    documents = read_documents(path)
    assert next(documents) == "ok 😀"
    with pytest.raises(FormatError) as info:
        next(documents)
    assert info.value.path == str(path) and info.value.where == "line 2"
    assert "field 'text'" in info.value.problem and "U+D800 at character 1" in info.value.problem
    path.write_text('{"text": "x", "other": "\\udc00"}\n', encoding="utf-8")
    assert list(read_documents(path)) == ["x"]  # only the field read is text


def test_parquet_value_that_is_not_utf8_is_named_by_row(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "bad.parquet"
    # Another writer's string column with a UTF-8-encoded surrogate (CESU-8) in row 5.
    values = [b"fine"] * 4 + ["a\ud800".encode("utf-8", "surrogatepass")]
    pq.write_table(pa.table({"text": pa.array(values, pa.binary()).view(pa.string())}), path)
    with pytest.raises(FormatError) as info:
        list(read_documents(path))
    assert info.value.path == str(path) and info.value.where == "row 5"
    assert "column 'text' is not UTF-8" in info.value.problem
