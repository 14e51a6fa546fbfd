"""Character-level BPE: the core's trainer over characters equals the
reference (both tie rules) and subword-nmt (its rule), codes files round trip."""

from __future__ import annotations

import codecs
import io
import pickle
import random
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import FormatError
from bytepair.reference import charbpe as reference
from bytepair.tokenizers.char_bpe import CharBPE
from bytepair.training.char_bpe import train_char_bpe, word_counts

texts = st.lists(st.text(alphabet="ab cé\n", max_size=30), min_size=1, max_size=8)


def trained(corpus, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_char_bpe(corpus, **kw)


@settings(max_examples=150)
@given(
    corpus=texts,
    merges=st.integers(0, 12),
    largest=st.booleans(),
    eow=st.sampled_from(["</w>", "_"]),
)
def test_core_equals_the_reference(corpus, merges, largest, eow):
    rule = "subword-nmt" if largest else "smallest"
    ours = trained(corpus, num_merges=merges, tie_rule=rule, end_of_word=eow)
    expected = reference.train(corpus, merges, end_of_word=eow, largest_ties=largest)
    assert list(zip(ours.merges, ours.counts or ())) == expected


def test_equals_subword_nmt_on_real_text(shared_data, tmp_path):
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
    for name in ("botchan.txt", "tinyshakespeare.txt"):
        text = (shared_data / "corpus" / "small" / name).read_text(encoding="utf-8-sig")[:80_000]
        codes = io.StringIO()
        learn_bpe.learn_bpe(io.StringIO(text), codes, 400, min_frequency=2)
        ours = trained(text, num_merges=400, min_frequency=2, tie_rule="subword-nmt")
        theirs = [tuple(line.split(" ")) for line in codes.getvalue().splitlines()[1:]]
        assert ours.merges == theirs
        bpe = apply_bpe.BPE(io.StringIO(codes.getvalue()))
        for line in text.splitlines()[:400]:
            assert ours.segment(line) == bpe.process_line(line)
        # Leading and trailing spaces and line breaks are kept, as apply-bpe keeps them.
        for line in [" I  x ", "  ", "", "\r\n", " lead", "trail  \r\n", "a  b", " \n"]:
            assert ours.segment(line) == bpe.process_line(line), repr(line)
        path = tmp_path / f"{name}.codes"
        ours.save_codes(path)
        assert path.read_text(encoding="utf-8") == codes.getvalue()
        assert CharBPE.load_codes(path).merges == ours.merges


# Every line boundary of str.splitlines(), "\r\n" as one.
LINE_ENDS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_lines_end_where_subword_nmt_ends_them():
    # codecs.open's lines: a line keeps its ending, strip("\r\n ") drops \r and \n only.
    assert dict(word_counts(["a b\x0cc d\u2028 e\r f\r\ng\x85"])) == {
        "a": 1,
        "b\x0c": 1,
        "c": 1,
        "d\u2028": 1,
        "e": 1,
        "f": 1,
        "g\x85": 1,
    }


def test_line_ends_equal_subword_nmt_cli(tmp_path):
    """Files as `subword-nmt learn-bpe -i FILE` reads them (codecs.open), with
    every line ending of str.splitlines() between the words of real text."""
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    text = (Path(bytepair.__file__).parent / "data" / "botchan.txt").read_text(encoding="utf-8")
    rng = random.Random(7)
    parts = []
    for word in text[:60_000].split(" "):
        parts += [word, rng.choice(LINE_ENDS) if rng.random() < 0.2 else " "]
    path = tmp_path / "mixed.txt"
    path.write_bytes("".join(parts).encode("utf-8"))  # as written, no newline translation
    with codecs.open(str(path), encoding="utf-8") as infile:  # as its CLI opens -i FILE
        vocabulary = learn_bpe.get_vocabulary(infile)
    assert word_counts([path.read_text(encoding="utf-8")]) == vocabulary
    for end in LINE_ENDS[3:]:  # kept at the end of a word, as it ends a line
        assert any(word.endswith(end) for word in vocabulary), repr(end)
    codes = io.StringIO()
    with codecs.open(str(path), encoding="utf-8") as infile:
        learn_bpe.learn_bpe(infile, codes, 300, min_frequency=2)
    theirs = [tuple(line.split(" ")) for line in codes.getvalue().split("\n")[1:] if line]
    ours = trained(path, num_merges=300, min_frequency=2, tie_rule="subword-nmt")
    assert ours.merges == theirs


def test_words_marker_and_errors(tmp_path):
    bpe = trained(["low low lower lowest"] * 3, num_merges=4)
    assert bpe.encode_word("low") == ("low</w>",)
    assert bpe.segment("lowest  low") == "lowe@@ s@@ t low"  # merges: l o, lo w, lo w</w>, low e
    custom = trained(["ab ab"], num_merges=2, end_of_word="_")
    assert custom.merges == [("a", "b_")]  # then nothing is left to merge
    with pytest.raises(FileExistsError):
        path = tmp_path / "c.codes"
        bpe.save_codes(path)
        bpe.save_codes(path)
    (tmp_path / "bad.codes").write_text("#version: 0.2\na b c\n", encoding="utf-8")
    with pytest.raises(FormatError, match="line 2"):
        CharBPE.load_codes(tmp_path / "bad.codes")
    with pytest.raises(TypeError, match="not one str"):
        bpe.encode_words("lowest low")
    with pytest.raises(ValueError, match="say when to stop"):
        train_char_bpe("a b")
    with pytest.raises(ValueError, match="tie_rule"):
        train_char_bpe("a b", num_merges=1, tie_rule="random")


def test_through_bytepair_train():
    import bytepair

    bpe = bytepair.train(["low low lower lowest"] * 3, None, model="char-bpe", num_merges=4)
    assert isinstance(bpe, CharBPE) and bpe.merges[0] == ("l", "o")
    sized = bytepair.train(["low low lower lowest"] * 3, 12, model="char-bpe", end_of_word="_")
    assert sized.end_of_word == "_" and len(sized.merges) <= 12
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        train_char_bpe("a b", vocab_size="9")
    with pytest.raises(ValueError, match="no special tokens"):
        bytepair.train("a b", 20, model="char-bpe", special_tokens=["<s>"])


def test_a_vocab_size_below_the_alphabet_is_refused():
    import bytepair

    # "ab ab": the symbols a and b</w>; as byte-level BPE refuses vocab_size < 256.
    with pytest.raises(ValueError, match="vocab_size 1 is below the corpus's 2 symbols"):
        bytepair.train(["ab ab"], 1, model="char-bpe")
    with pytest.raises(ValueError, match="vocab_size 1 is below"):
        train_char_bpe(["ab ab"], num_merges=5, vocab_size=1)
    assert train_char_bpe(["ab ab"], vocab_size=2).merges == []
    assert train_char_bpe(["ab ab"], vocab_size=3).merges == [("a", "b</w>")]


def test_codes_version_0_1_applies_as_subword_nmt(tmp_path):
    """A codes file without the version line is version 0.1 to subword-nmt: the
    end-of-word marker is a symbol of its own, so ``low </w>`` can merge."""
    apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
    merges = "l o\nlo w\nlow </w>\ne r\ner </w>\nlow e\n"
    lines = ["low lower", "lowest  er", " w ", "r", ""]
    for header in ("", "#version: 0.1\n", "#version: 0.2\n", "#version: 0.2.0\n"):
        path = tmp_path / "codes"
        path.write_text(header + merges, encoding="utf-8")
        ours = CharBPE.load_codes(path)
        assert ours.version == ("0.2" if "0.2" in header else "0.1")
        with path.open(encoding="utf-8") as codes:
            theirs = apply_bpe.BPE(codes)
        for line in lines:
            assert ours.segment(line) == theirs.process_line(line), (header, line)
        written = tmp_path / "again"
        ours.save_codes(written, overwrite=True)
        assert CharBPE.load_codes(written).version == ours.version
    path.write_text(merges, encoding="utf-8")
    assert CharBPE.load_codes(path).segment("low lower") == "low low@@ er"
    path.write_text("#version: 0.3\na b\n", encoding="utf-8")
    with pytest.raises(FormatError, match="line 1.*0.3|0.3.*line 1"):
        CharBPE.load_codes(path)
    with pytest.raises(ValueError, match="version"):
        CharBPE([], version="1.0")


@pytest.mark.parametrize(
    ("marker", "name"),
    [("< w>", "a space"), ("\n", "a line break ('\\n')"), ("w\r", "a line break ('\\r')")],
)
def test_a_marker_a_codes_file_cannot_hold_is_refused(marker, name, tmp_path):
    """A space or line break in end_of_word made codes files that failed to
    load (space) or loaded as other merges (line break): refused up front."""
    match = re.escape(f"end_of_word {marker!r} contains {name}")
    with pytest.raises(ValueError, match=match):
        train_char_bpe(["low lower"], num_merges=3, end_of_word=marker)
    with pytest.raises(ValueError, match=match):
        bytepair.train(["low lower"], 12, model="char-bpe", end_of_word=marker)
    with pytest.raises(ValueError, match=match):
        CharBPE([("l", "o")], end_of_word=marker)
    path = tmp_path / "c.codes"
    path.write_text("#version: 0.2\nl o\n", encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        CharBPE.load_codes(path, end_of_word=marker)
    with pytest.raises(ValueError, match="non-empty"):
        CharBPE([("l", "o")], end_of_word="")
    # Other markers still round trip.
    for marker in ("_", "</w>", "\t", "@@"):
        bpe = trained(["low lower lowest low"] * 3, num_merges=6, end_of_word=marker)
        bpe.save_codes(path, overwrite=True)
        assert CharBPE.load_codes(path, end_of_word=marker).merges == bpe.merges


@pytest.mark.parametrize(
    ("merge", "problem"),
    [
        (("a b", "c"), "a space in 'a b'"),
        (("a", "b\n"), "a line break ('\\n') in 'b\\n'"),
        (("\ra", "b"), "a line break ('\\r') in '\\ra'"),
        (("", "b"), "an empty symbol"),
        (("a", "\ud800"), "contains the lone surrogate"),
    ],
)
def test_save_codes_refuses_a_merge_it_cannot_write(merge, problem, tmp_path):
    bpe = CharBPE([("a", "b"), merge, ("c", "d")])
    path = tmp_path / "c.codes"
    with pytest.raises(ValueError, match=r"merges\[1\] .*" + re.escape(problem)):
        bpe.save_codes(path)
    assert not path.exists()
    path.write_text("kept", encoding="utf-8")
    with pytest.raises(ValueError, match=r"merges\[1\]"):
        bpe.save_codes(path, overwrite=True)
    assert path.read_text(encoding="utf-8") == "kept"


def test_load_codes_names_the_line_and_byte_that_is_not_utf8(tmp_path):
    path = tmp_path / "bad.codes"
    path.write_bytes(b"#version: 0.2\nl o\n\xffa b\n")
    with pytest.raises(FormatError, match=r"bad\.codes \(line 3\): not UTF-8.*0xFF at offset 18"):
        CharBPE.load_codes(path)
    # Lines counted as they are read: \r\n and a lone \r end a line too.
    path.write_bytes(b"#version: 0.2\r\nl o\rlo w\r\nx \xe9\n")
    with pytest.raises(FormatError, match=r"\(line 4\): not UTF-8.*0xE9 at offset 27"):
        CharBPE.load_codes(path)
    path.write_bytes(b"#version: 0.2\r\nl o\rlo w\r\n")
    assert CharBPE.load_codes(path).merges == [("l", "o"), ("lo", "w")]


def test_load_codes_refuses_an_empty_file(tmp_path):
    """An empty file is no codes file (subword-nmt refuses it); bytepair's own export of
    zero merges, a version line alone, still loads."""
    path = tmp_path / "empty.codes"
    for content in (b"", b"\n \n"):
        path.write_bytes(content)
        with pytest.raises(FormatError, match=r"empty\.codes: empty"):
            CharBPE.load_codes(path)
    path.write_bytes(b"#version: 0.2\n")
    assert CharBPE.load_codes(path).merges == []


def _symbols_of_segment(segmented: str, marker: str = "</w>") -> list[str]:
    """subword-nmt's apply-bpe output as symbols: ``@@`` continues a word,
    the marker ends one."""
    return [t[:-2] if t.endswith("@@") else t + marker for t in segmented.split()]


def test_ids_are_subword_nmts_segmentation(shared_data):
    """encode's ids name the symbols apply-bpe writes, word for word, on real text."""
    learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
    apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
    text = (shared_data / "corpus" / "small" / "botchan.txt").read_text(encoding="utf-8-sig")
    text = text[:80_000]
    codes = io.StringIO()
    learn_bpe.learn_bpe(io.StringIO(text), codes, 400, min_frequency=2)
    bpe = apply_bpe.BPE(io.StringIO(codes.getvalue()))
    ours = trained(text, num_merges=400, min_frequency=2, tie_rule="subword-nmt")
    known = set("".join(s for merge in ours.merges for s in merge))
    checked = 0
    for line in text.splitlines()[:400]:
        ids = ours.encode(line)
        assert ours.decode(ids, errors="strict") == " ".join(line.split())
        if set(line.replace(" ", "")) <= known:  # else a character in no merge is its bytes
            assert [ours.vocab[i] for i in ids] == _symbols_of_segment(bpe.process_line(line))
            checked += 1
        else:
            assert any(i < 256 for i in ids)
    assert checked > 200


def test_encode_batch_decode_batch_and_files(tmp_path):
    bpe = trained(["low low lower lowest newer wider"] * 3, num_merges=8)
    texts = ["low lower", "  lowest\nnewer  wider ", "", "wide low"]
    ids = bpe.encode_batch(texts)
    assert ids == [bpe.encode(t) for t in texts]
    assert ids[2] == [] and len(ids[0]) == len(bpe.encode("low")) + len(bpe.encode("lower"))
    assert bpe.decode_batch(ids) == ["low lower", "lowest newer wider", "", "wide low"]
    assert bpe.decode_bytes_batch(ids)[1] == b"lowest newer wider"
    assert all(0 <= i < bpe.n_vocab for row in ids for i in row)
    # save writes the codes file apply-bpe reads; load gives the same ids.
    path = tmp_path / "codes.txt"
    bpe.save(path)
    assert path.read_text(encoding="utf-8").splitlines()[0] == "#version: 0.2"
    again = CharBPE.load(path)
    assert again.merges == bpe.merges and again.vocab == bpe.vocab
    assert again.encode_batch(texts) == ids
    with pytest.raises(FileExistsError):
        bpe.save(path)
    bpe.save(path, overwrite=True)
    assert pickle.loads(pickle.dumps(bpe)).encode("lowest wider") == bpe.encode("lowest wider")


def test_codes_version_0_1_ids_keep_the_marker_a_symbol(tmp_path):
    path = tmp_path / "codes"
    path.write_text("l o\nlo w\nlow </w>\ne r\ner </w>\nlow e\n", encoding="utf-8")
    bpe = CharBPE.load(path)
    ids = bpe.encode("low lower")
    assert [bpe.vocab[i] for i in ids] == ["low</w>", "low", "er</w>"]
    assert bpe.decode(ids) == "low lower"
    assert bpe.token_to_id("</w>") is not None and bpe.token_to_id("zz") is None


def test_characters_in_no_merge_are_their_bytes():
    bpe = trained(["ab ab abc"], num_merges=3)
    ids = bpe.encode("ab zé é")
    marker = bpe.token_to_id("</w>")
    assert ids == [bpe.token_to_id("ab</w>"), ord("z"), 0xC3, 0xA9, marker, 0xC3, 0xA9, marker]
    assert bpe.decode(ids) == "ab zé é" and bpe.decode_bytes(ids) == "ab zé é".encode()
    assert bpe.decode(ids[:3]) == "ab z\ufffd"
    with pytest.raises(UnicodeDecodeError):
        bpe.decode(ids[:3], errors="strict")


def test_encode_and_decode_errors():
    bpe = trained(["ab ab abc"], num_merges=3)
    with pytest.raises(ValueError, match="lone surrogate"):
        bpe.encode("ab \ud800")
    with pytest.raises(ValueError, match="text 1 of the batch contains the lone surrogate"):
        bpe.encode_batch(["ab", "\udc00"])
    with pytest.raises(TypeError, match="text must be str"):
        bpe.encode(b"ab")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not one str"):
        bpe.encode_batch("ab ab")
    with pytest.raises(ValueError, match=f"token id {bpe.n_vocab} at position 1"):
        bpe.decode([0, bpe.n_vocab])
    with pytest.raises(ValueError, match=r"batch\[1\]: token id -1 at position 0"):
        bpe.decode_batch([[0], [-1]])
