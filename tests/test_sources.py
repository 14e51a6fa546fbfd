"""read_documents: plain text, JSON lines and Parquet, gzip and zstd, files,
globs and directories, streamed; problems named by file and line."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading

import pytest

import bytepair
from bytepair import FormatError
from bytepair.cli import main
from bytepair.corpus.sources import input_files, read_documents

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
    with pytest.raises(
        FormatError, match=r"bin.txt: not UTF-8 text \(byte 0xFF at offset 16, line 3\)"
    ):
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


def numbered(n=100_000):
    """``n`` documents, as text and as the list read_documents should give."""
    docs = [f"document number {i} ..." for i in range(n)]
    return "".join(d + "\n\n" for d in docs).encode(), docs


def test_truncated_zstd_is_an_error_not_a_shorter_corpus(tmp_path, capsys):
    zstandard = pytest.importorskip("zstandard")
    data, docs = numbered()
    compressed = zstandard.ZstdCompressor().compress(data)
    whole = tmp_path / "big.txt.zst"
    whole.write_bytes(compressed)
    assert list(read_documents(whole)) == docs
    for cut in (len(compressed) // 2, len(compressed) - 1, 3, 6):
        path = tmp_path / f"cut{cut}.txt.zst"
        path.write_bytes(compressed[:cut])
        with pytest.raises(FormatError) as info:
            list(read_documents(path))
        assert info.value.path == str(path)
        assert "truncated zstd file" in info.value.problem
        assert isinstance(info.value.__cause__, EOFError)
    # Through the command line: one error line naming the file, status 1.
    out = tmp_path / "tok.json"
    args = ["train", "--vocab-size", "270", "--no-progress", "-o", str(out), str(path)]
    assert main(args) == 1
    assert not out.exists()
    assert capsys.readouterr().err.strip().splitlines() == [
        f"bytepair: error: {path}: truncated zstd file: "
        "the compressed data ends in the middle of a frame"
    ]


def test_zstd_frames_concatenated_empty_and_skippable_are_read_whole(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    data, docs = numbered(20_000)
    # zstd CLI outputs concatenated; frames with and without checksum and content size.
    parts = [data[i : i + 70_001] for i in range(0, len(data), 70_001)]
    frames = [
        zstandard.ZstdCompressor(write_checksum=i % 2 == 0, write_content_size=i % 3 != 0).compress(
            part
        )
        for i, part in enumerate(parts)
    ]
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"12345"
    path = tmp_path / "multi.txt.zst"
    path.write_bytes(frames[0] + skippable + b"".join(frames[1:]))
    assert list(read_documents(path)) == docs
    with zstandard.ZstdCompressor().stream_writer(open(tmp_path / "s.txt.zst", "wb")) as writer:
        writer.write(data[:50_000])  # a frame without content size, in several blocks
        writer.flush()
        writer.write(data[50_000:])
    assert list(read_documents(tmp_path / "s.txt.zst")) == docs
    (tmp_path / "empty.txt.zst").write_bytes(b"")
    assert list(read_documents(tmp_path / "empty.txt.zst")) == []
    (tmp_path / "nothing.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(b""))
    assert list(read_documents(tmp_path / "nothing.txt.zst")) == []


def test_truncated_gzip_is_an_error_naming_the_file(tmp_path):
    data, docs = numbered()
    compressed = gzip.compress(data)
    path = tmp_path / "big.txt.gz"
    path.write_bytes(compressed[: len(compressed) // 2])
    with pytest.raises(FormatError) as info:
        list(read_documents(path))
    assert info.value.path == str(path) and info.value.where.startswith("after line ")
    assert "truncated gzip file" in info.value.problem
    assert isinstance(info.value.__cause__, EOFError)
    # Several members (gzip outputs concatenated) are one file.
    path.write_bytes(gzip.compress(data[:1001]) + gzip.compress(data[1001:]))
    assert list(read_documents(path)) == docs


def test_corrupt_compressed_data_is_an_error_naming_the_file(tmp_path, capsys):
    bad_gzip = tmp_path / "plain.txt.gz"
    bad_gzip.write_bytes(b"plain text, never gzipped\n")
    with pytest.raises(FormatError, match=r"plain.txt.gz: corrupt gzip data: Not a gzipped"):
        list(read_documents(bad_gzip))
    broken = bytearray(gzip.compress(b"some text\n" * 1000))
    broken[20:30] = b"\xff" * 10  # inside the deflate data
    (tmp_path / "broken.txt.gz").write_bytes(bytes(broken))
    with pytest.raises(FormatError, match=r"broken.txt.gz: corrupt gzip data"):
        list(read_documents(tmp_path / "broken.txt.gz"))
    args = ["train", "--vocab-size", "270", "--no-progress"]
    assert main([*args, "-o", str(tmp_path / "t.json"), str(bad_gzip)]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"bytepair: error: {bad_gzip}: corrupt gzip data: Not a gzipped file (b'pl')"
    ]
    zstandard = pytest.importorskip("zstandard")
    bad_zstd = tmp_path / "plain.jsonl.zst"
    bad_zstd.write_text('{"text": "never compressed"}\n', encoding="utf-8")
    with pytest.raises(FormatError) as info:
        list(read_documents(bad_zstd))
    assert info.value.path == str(bad_zstd) and "corrupt zstd data" in info.value.problem
    assert isinstance(info.value.__cause__, zstandard.ZstdError)
    assert main([*args, "-o", str(tmp_path / "t.json"), str(bad_zstd)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"bytepair: error: {bad_zstd}: corrupt zstd data")


def test_compressed_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    zstandard = pytest.importorskip("zstandard")
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": DOCS * 2000}), path, row_group_size=1000)
    data = path.read_bytes()
    (tmp_path / "a.parquet.gz").write_bytes(gzip.compress(data))
    (tmp_path / "a.parquet.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    for name in ("a.parquet.gz", "a.parquet.zst"):
        read = []
        assert list(read_documents(tmp_path / name, on_read=read.append)) == DOCS * 2000
        assert sum(read) == (tmp_path / name).stat().st_size  # bytes as stored
    with pytest.raises(FormatError, match="no column 'body'"):
        list(read_documents(tmp_path / "a.parquet.gz", field="body"))
    cut = tmp_path / "cut.parquet.zst"
    cut.write_bytes((tmp_path / "a.parquet.zst").read_bytes()[:-10])
    with pytest.raises(FormatError, match=r"cut.parquet.zst: truncated zstd file"):
        list(read_documents(cut))


# ---- What inputs name ----


def paths_of(inputs, **options):
    return [p.name for p in input_files(inputs, **options)]


def test_a_named_pipe_and_dev_stdin_are_read_as_files(tmp_path, capsys):
    """`bytepair count <(zcat f.gz)` counted nothing: the pipe is no regular file."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)

    def feed():
        with open(pipe, "w", encoding="utf-8") as f:
            f.write("\n\n".join(DOCS) + "\n")

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert list(read_documents(pipe)) == DOCS
    writer.join()

    script = "import sys, bytepair; print(len(list(bytepair.read_documents('/dev/stdin'))))"
    result = subprocess.run(
        [sys.executable, "-c", script], input="a\n\nb\n", capture_output=True, text=True
    )
    assert result.stdout.strip() == "2", result.stderr

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert main(["count", str(pipe), "-o", str(tmp_path / "counts")]) == 0
    writer.join()
    manifest = json.loads((tmp_path / "counts" / "manifest.json").read_text("utf-8"))
    assert sum(shard["records"] for shard in manifest["shards"]) > 5


def test_an_input_naming_nothing_to_read_is_an_error_naming_it(tmp_path, capsys):
    (tmp_path / "broken").symlink_to(tmp_path / "gone.txt")
    with pytest.raises(FileNotFoundError, match=r"broken: a broken symbolic link"):
        list(read_documents(tmp_path / "broken"))
    empty = tmp_path / "root"
    (empty / "a").mkdir(parents=True)
    (empty / "b").mkdir()
    with pytest.raises(FileNotFoundError, match=r"root/\*: the glob matches no file to read"):
        list(read_documents(str(empty / "*")))
    with pytest.raises(FileNotFoundError, match=r"root: the directory holds no file to read"):
        list(read_documents(empty))
    train = ["train", str(empty), "-o", str(tmp_path / "t.json"), "--vocab-size", "300"]
    assert main(train) == 1
    assert "holds no file to read" in capsys.readouterr().err
    (empty / "b" / "gone").symlink_to(tmp_path / "gone.txt")
    with pytest.raises(FileNotFoundError, match=r"b/gone: a broken symbolic link .* in the input"):
        list(read_documents(empty))


def test_a_glob_of_directories_reads_them_and_links_to_directories_are_followed(tmp_path):
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    write_text(root / "a" / "x.txt")
    other = tmp_path / "elsewhere"
    other.mkdir()
    write_jsonl(other / "y.jsonl")
    (root / "b").symlink_to(other, target_is_directory=True)
    (other / "loop").symlink_to(root, target_is_directory=True)  # a cycle: each directory once
    assert paths_of(str(root / "*")) == ["x.txt", "y.jsonl"]
    assert paths_of(root) == ["x.txt", "y.jsonl"]
    assert list(read_documents(str(root / "*"))) == DOCS + DOCS


def test_directories_and_globs_skip_hidden_names_alike(tmp_path):
    """A directory read .git/index and Spark's .crc files that a glob skipped."""
    data = tmp_path / "data"
    (data / ".git").mkdir(parents=True)
    (data / ".git" / "index").write_bytes(b"DIRC\x00\x00")
    (data / "_temporary" / "0").mkdir(parents=True)
    write_text(data / "_temporary" / "0" / "part-1.txt")
    write_text(data / "part-0.txt")
    (data / ".part-0.txt.crc").write_bytes(b"crc\xff")
    (data / "_SUCCESS").write_text('{"committer": "s3a"}', "utf-8")
    (data / "_metadata").write_bytes(b"PAR1\xff")
    assert paths_of(data) == ["part-0.txt"]
    assert paths_of(str(data / "*")) == ["part-0.txt"]
    assert paths_of(str(data / "**"), exclude=()) == ["part-0.txt"]
    assert paths_of(str(data / "_*")) == ["_SUCCESS", "_metadata", "part-1.txt"]
    assert paths_of(data / "_SUCCESS") == ["_SUCCESS"]  # named: read
    # A part that spells out its first character is asked for it, as '_*' is.
    assert paths_of(str(data / "[_]S*")) == ["_SUCCESS"]
    assert paths_of(str(data / "?SUCCESS")) == ["_SUCCESS"]


def test_a_file_reached_twice_is_read_once_where_first_reached(tmp_path):
    """`encode-dataset x.txt x.txt 'e2/*.txt'` encoded x.txt three times."""
    x = write_text(tmp_path / "x.txt")
    y = write_text(tmp_path / "y.txt", ["y"])
    os.link(y, tmp_path / "hard.txt")
    (tmp_path / "soft.txt").symlink_to(x)
    inputs = [x, str(x), tmp_path / "." / "x.txt", str(tmp_path / "*.txt"), tmp_path]
    assert paths_of(inputs) == ["x.txt", "hard.txt"]
    assert list(read_documents(inputs)) == DOCS + ["y"]
    assert paths_of([y, x, tmp_path]) == ["y.txt", "x.txt"]


def test_json_lines_edge_cases_are_named_for_what_they_are(tmp_path):
    """A BOM gave "invalid JSON: Unexpected UTF-8 BOM", `[1,2]` "no field
    'text'", a null "is NoneType"."""
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b'\xef\xbb\xbf{"text": "a"}\n{"text": "b"}\n')
    assert list(read_documents(bom)) == ["a", "b"]
    text = tmp_path / "bom.txt"
    text.write_bytes(b"\xef\xbb\xbfa\n\nb\n")
    assert list(read_documents(text)) == ["\ufeffa", "b"]  # text is passed through as it is
    later = tmp_path / "later.jsonl"
    later.write_bytes(b'{"text": "a"}\n\xef\xbb\xbf{"text": "b"}\n')
    with pytest.raises(FormatError, match=r"later.jsonl \(line 2\): invalid JSON"):
        list(read_documents(later))
    for line, problem in [
        ("[1, 2]", r"line 2\): the record is an array, not a JSON object with a field 'text'"),
        ('"str"', r"line 2\): the record is a string, not a JSON object"),
        ("3", r"line 2\): the record is a number, not a JSON object"),
        ('{"text": null}', r"line 2\): field 'text' is null, not text"),
        ('{"text": {"a": 1}}', r"line 2\): field 'text' is an object, not text"),
        ('{"text": true}', r"line 2\): field 'text' is a boolean, not text"),
    ]:
        path = tmp_path / "edge.jsonl"
        path.write_text('{"text": "fine"}\n' + line + "\n", encoding="utf-8")
        with pytest.raises(FormatError, match=problem):
            list(read_documents(path))


def test_a_line_of_spaces_belongs_to_its_document(tmp_path):
    """Only an empty line ends a text document (README: "an empty line")."""
    path = tmp_path / "ws.txt"
    path.write_bytes(b"one\n  \t\ntwo\n\r\nthree\n\n\n")
    assert list(read_documents(path)) == ["one\n  \t\ntwo", "three"]
