"""Gage's byte pair compression (bytepair.tools.gage): the documented example, round trips on any bytes,
the core's tables and payloads equal to the readable reference, corrupt input always a
ValueError (never a crash or a hang), and the `bytepair gage` command."""

from __future__ import annotations

import io
import os
import struct
import sys
import zlib
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import bytepair
from bytepair.cli import main
from bytepair.reference.gage import compress_block
from bytepair.tools import gage

HEADER_LEN = 13
BLOCK_SIZE = 1 << 16
CORPORA = ["botchan.txt", "taylorswift.txt", "tinyshakespeare.txt", "wagahaiwa_nekodearu.txt"]


def blocks(packed: bytes) -> list[tuple[bytes, list[tuple[int, int, int]]]]:
    """(payload, table) of each block, as compress_block gives them; read here by
    the format the module docstring of bytepair.tools.gage gives, checksums included."""
    assert packed[:5] == b"GAGE\x01"
    (total,) = struct.unpack_from("<Q", packed, 5)
    pos, found, original = HEADER_LEN, [], 0
    while pos < len(packed):
        n, k = struct.unpack_from("<IB", packed, pos)
        entries = pos + 5
        table = [tuple(packed[entries + 3 * j : entries + 3 * j + 3]) for j in range(k)]
        (m,) = struct.unpack_from("<I", packed, entries + 3 * k)
        payload_start = entries + 3 * k + 4
        payload = packed[payload_start : payload_start + m]
        (crc,) = struct.unpack_from("<I", packed, payload_start + m)
        assert crc == zlib.crc32(packed[pos : payload_start + m])
        found.append((payload, table))
        original += n
        pos = payload_start + m + 4
    assert pos == len(packed) and original == total
    return found


def roundtrip(data: bytes) -> bytes:
    packed = gage.compress(data)
    assert gage.decompress(packed) == data
    return packed


# ---- The algorithm ----


def test_spec_example():
    data = b"ABABABCDEF"
    [(payload, table)] = blocks(roundtrip(data))
    assert table == [(0, ord("A"), ord("B"))]  # AB occurs 3 times; 0 is the smallest free byte
    assert payload == b"\x00\x00\x00CDEF" and len(payload) == 7
    assert compress_block(data) == (payload, table)


def test_a_run_holds_its_pair_once_per_two_bytes():
    assert compress_block(b"AAAAA") == (b"AAAAA", [])  # (A, A) twice: below the threshold
    assert compress_block(b"AAAAAAA") == (b"\x00\x00\x00A", [(0, 65, 65)])
    data = b"AAAAAB" * 3  # runs of odd length next to the pair that follows them
    assert blocks(roundtrip(data)) == [compress_block(data)]


def test_a_pair_seen_twice_is_left_as_gage_leaves_it():
    """Gage's THRESHOLD 3: a table entry costs 3 bytes, a pair seen twice
    saves 2, so replacing it would make the output longer."""
    data = b"ABABCDEFGHIJ"
    assert compress_block(data) == (data, [])
    [(payload, table)] = blocks(roundtrip(data))
    assert (payload, table) == (data, [])


small_bytes = st.one_of(
    st.binary(max_size=300),
    # Few distinct bytes: many pairs, codes of codes, runs.
    st.text(alphabet="ab ", max_size=400).map(str.encode),
    st.lists(st.sampled_from([b"a", b"aa", b"ab", b"ba", b"\x00", b"\xff"]), max_size=150).map(
        b"".join
    ),
)


@given(small_bytes)
def test_core_equals_reference(data):
    expected = [compress_block(data)] if data else []
    assert blocks(roundtrip(data)) == expected


@given(st.binary(max_size=5000))
def test_roundtrip_any_bytes(data):
    roundtrip(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"x",
        bytes(range(256)) * 20,  # every byte value present: nothing is free
        b"a" * 100_000,  # two blocks of one long run
        os.urandom(3 * BLOCK_SIZE + 5),  # incompressible, several blocks
        bytes(BLOCK_SIZE),  # exactly one block
        b"ab" * BLOCK_SIZE,  # exactly two blocks
    ],
    ids=["empty", "one-byte", "all-256", "run", "random", "one-block", "two-blocks"],
)
def test_roundtrip_edge_cases(data):
    packed = roundtrip(data)
    assert len(blocks(packed)) == -(-len(data) // BLOCK_SIZE)


def test_nothing_free_means_no_table():
    [(payload, table)] = blocks(gage.compress(bytes(range(256)) * 4))
    assert table == [] and payload == bytes(range(256)) * 4


def test_long_run_compresses_to_almost_nothing():
    assert len(roundtrip(b"a" * 100_000)) < 200


@pytest.mark.parametrize("name", CORPORA)
def test_real_files(shared_data, name):
    data = (shared_data / "corpus" / "small" / name).read_bytes()
    packed = roundtrip(data)
    assert len(packed) < 0.6 * len(data), f"{name}: {len(packed)} of {len(data)} bytes"
    # The first 2 KB by the readable version, too.
    head = data[:2048]
    assert blocks(gage.compress(head)) == [compress_block(head)]


def test_bytes_like_input_and_type_errors():
    data = b"abcabcabc"
    packed = gage.compress(data)
    assert gage.compress(bytearray(data)) == packed == gage.compress(memoryview(data))
    assert gage.decompress(bytearray(packed)) == data
    for bad in ("abcabc", 42, None, [1, 2]):
        with pytest.raises(TypeError, match="bytes-like"):
            gage.compress(bad)
        with pytest.raises(TypeError, match="bytes-like"):
            gage.decompress(bad)


# ---- Corrupt input ----

SAMPLE = b"abracadabra, abracadabra! " * 6


def test_every_truncation_is_an_error():
    packed = gage.compress(SAMPLE)
    for cut in range(len(packed)):
        with pytest.raises(ValueError):
            gage.decompress(packed[:cut])


def test_every_flipped_byte_is_an_error():
    packed = gage.compress(SAMPLE)
    for i in range(len(packed)):
        for flip in (0x01, 0x80, 0xFF):
            bad = bytearray(packed)
            bad[i] ^= flip
            with pytest.raises(ValueError):
                gage.decompress(bytes(bad))


@given(st.binary(max_size=200))
def test_garbage_is_an_error(data):
    assume(data != bytes(8))  # the one valid stream here: empty
    with pytest.raises(ValueError):
        gage.decompress(b"GAGE\x01" + data)


def forged(n: int, table: list[tuple[int, int, int]], payload: bytes, total=None) -> bytes:
    """One block with a correct checksum around whatever table and payload."""
    block = struct.pack("<IB", n, len(table)) + bytes(b for entry in table for b in entry)
    block += struct.pack("<I", len(payload)) + payload
    header = b"GAGE\x01" + struct.pack("<Q", n if total is None else total)
    return header + block + struct.pack("<I", zlib.crc32(block))


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"PK\x03\x04" + bytes(20), "not Gage-compressed"),
        (b"GAGE\x07" + bytes(20), "version 7"),
        (b"GAGE\x01" + struct.pack("<Q", 2**64 - 1), "claims"),
        (gage.compress(b"hello")[:-1], "truncated at byte"),
        (gage.compress(b"hello") + b"\x00", "after the last block"),
        (forged(2**32 - 1, [], b"x", total=1), "not between 1 and 65536"),
        (forged(2, [(0, 0, 98)], b"\x00"), "would loop"),  # a code made of itself
        (forged(4, [(0, 1, 1), (1, 97, 98)], b"\x00"), "would loop"),  # of a later code
        (forged(2, [(0, 97, 98), (0, 99, 100)], b"\x00"), "defined twice"),
        # 2**100 bytes from a chain of doublings: refused before anything expands.
        (forged(50, [(0, 255, 255)] + [(i, i - 1, i - 1) for i in range(1, 100)], b"c"), "expands"),
    ],
    ids=["magic", "version", "huge-total", "truncated", "trailing", "huge-block", "self-loop",
         "forward-ref", "defined-twice", "bomb"],
)  # fmt: skip
def test_corrupt_input_names_the_problem(data, problem):
    with pytest.raises(ValueError, match=problem):
        gage.decompress(data)


def test_a_forged_but_valid_block_decodes():
    assert gage.decompress(forged(4, [(0, 97, 98), (1, 0, 0)], b"\x01")) == b"abab"


# ---- The command line ----


def test_cli_roundtrip(tmp_path, capsys):
    source, packed, back = tmp_path / "in.bin", tmp_path / "in.gage", tmp_path / "back.bin"
    source.write_bytes(SAMPLE)
    assert main(["gage", "compress", str(source), str(packed)]) == 0
    summary = capsys.readouterr().out
    assert f"{len(SAMPLE):,} -> {packed.stat().st_size:,} bytes" in summary
    assert "% of the original" in summary
    assert packed.read_bytes() == gage.compress(SAMPLE)
    assert main(["gage", "decompress", str(packed), str(back)]) == 0
    assert back.read_bytes() == SAMPLE


def test_cli_refuses_to_overwrite_without_force(tmp_path, capsys):
    source, target = tmp_path / "in.bin", tmp_path / "out.gage"
    source.write_bytes(SAMPLE)
    target.write_bytes(b"keep me")
    assert main(["gage", "compress", str(source), str(target)]) == 1
    err = capsys.readouterr().err
    assert "already exists; pass --force" in err and "Traceback" not in err
    assert target.read_bytes() == b"keep me"
    assert main(["gage", "compress", str(source), str(target), "--force"]) == 0
    assert gage.decompress(target.read_bytes()) == SAMPLE


def test_cli_corrupt_and_missing_inputs(tmp_path, capsys):
    bad = tmp_path / "bad.gage"
    bad.write_bytes(gage.compress(SAMPLE)[:-3])
    assert main(["gage", "decompress", str(bad), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"bytepair: error: {bad}: corrupt compressed data: truncated at byte" in err
    assert not (tmp_path / "out").exists()
    assert main(["gage", "compress", str(tmp_path / "missing"), str(tmp_path / "out")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_cli_stdin_to_stdout(monkeypatch, capsysbinary):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(SAMPLE)))
    assert main(["gage", "compress", "-", "-"]) == 0
    captured = capsysbinary.readouterr()
    assert captured.out == gage.compress(SAMPLE)
    assert b"of the original" in captured.err  # the summary keeps off stdout
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(captured.out)))
    assert main(["gage", "decompress", "-", "-"]) == 0
    assert capsysbinary.readouterr().out == SAMPLE


@pytest.mark.slow
def test_progress_reports_bytes_and_an_exception_from_it_stops_the_work():
    """The core calls back about ten times a second with the bytes done (the
    CLI's bar); what the callback raises (Ctrl-C's KeyboardInterrupt comes the
    same way, from the signal check beside it) stops compression."""
    from bytepair import _native

    text = (Path(bytepair.__file__).parent / "data" / "botchan.txt").read_bytes()
    data = text * ((12 << 20) // len(text))  # about half a second of work
    seen = []
    assert _native.gage_compress(data, seen.append) == gage.compress(data)
    assert seen and seen == sorted(seen) and all(0 < n <= len(data) for n in seen)

    def interrupt(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _native.gage_compress(data, interrupt)


def test_the_progress_bar_ends_at_the_whole_input(monkeypatch):
    """The core reports ten times a second, so its last report falls short."""
    import bytepair.tools.gage as gage_module

    bars = []

    class Bar:
        def __init__(self, **kwargs):
            self.n, self.total = 0, kwargs["total"]
            bars.append(self)

        def update(self, n):
            self.n += n

        def close(self):
            pass

    monkeypatch.setattr(gage_module, "progress_bar", lambda enabled, **kw: Bar(**kw))
    data = b"abcabd" * 50_000
    assert gage.decompress(gage.compress(data, progress=True)) == data
    assert bars[0].n == bars[0].total == len(data)
