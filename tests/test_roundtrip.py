"""decode(encode(s)) == s for every valid str, and the SPEC §2 edge cases."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.reference import bpe as reference
from strategies import PRETOKENIZERS, any_text

SAMPLE = (
    "The quick brown fox jumps over the lazy dog. mañana, naïve café — 日本語のテキスト. "
    "👩‍👩‍👧 emoji 👍🏽 and 123456 numbers;\n\n\tindented   spaces  \r\n"
) * 20


@pytest.fixture(scope="module", params=PRETOKENIZERS)
def tokenizer(request):
    return bytepair.train([SAMPLE], 400, pretokenizer=request.param, progress=False)


@given(text=any_text)
def test_roundtrip_any_text(tokenizer, text):
    ids = tokenizer.encode_ordinary(text)
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode_bytes(ids) == text.encode("utf-8")


@given(texts=st.lists(any_text, max_size=8))
def test_batch_equals_one_by_one(tokenizer, texts):
    assert tokenizer.encode_ordinary_batch(texts) == [tokenizer.encode_ordinary(t) for t in texts]


def test_empty_text_is_no_tokens(tokenizer):
    assert tokenizer.encode("") == []
    assert tokenizer.encode_ordinary("") == []
    assert tokenizer.decode([]) == ""


@pytest.mark.parametrize(
    "text",
    ["a", "é", "mañana", "👍", "👩‍👩‍👧", "\ufeffBOM first", "\x00\x01\x1b[0m\x7f", "\r\n", " "],
)
def test_edge_cases_roundtrip_and_equal_reference(tokenizer, text):
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text
    model = tokenizer.model
    assert ids == reference.encode(
        text, list(model.tokens), list(model.merges), pretokenizer=model.pretokenizer
    )


def test_multibyte_text_starts_from_its_bytes():
    tok = bytepair.train(["x"], 256, pretokenizer="none", progress=False)
    assert len(tok.encode("mañana")) == 7  # no merges: one id per byte
    assert [tok.decode_single_token_bytes(i) for i in tok.encode("ñ")] == [b"\xc3", b"\xb1"]


def test_decode_replaces_or_rejects_invalid_utf8(tokenizer):
    first_byte_of_n_tilde = tokenizer.encode("ñ")[0] if len(tokenizer.encode("ñ")) == 2 else None
    if first_byte_of_n_tilde is None:
        pytest.skip("ñ is one token in this vocabulary")
    assert tokenizer.decode([first_byte_of_n_tilde]) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tokenizer.decode([first_byte_of_n_tilde], errors="strict")


@pytest.mark.slow
def test_long_unsplittable_input_encodes_like_the_reference():
    tok = bytepair.train(["ab" * 50 + "a" * 64], 300, pretokenizer="none", progress=False)
    text = "a" * 5000 + "ab" * 3000
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert ids == reference.encode(
        text, list(tok.model.tokens), list(tok.model.merges), pretokenizer="none"
    )


@given(texts=st.lists(any_text, max_size=8))
def test_numpy_paths_equal_the_list_paths(tokenizer, texts):
    np = pytest.importorskip("numpy")
    for text in texts:
        array = tokenizer.encode_to_numpy(text)
        assert array.dtype == np.uint32
        assert array.tolist() == tokenizer.encode_ordinary(text)
    ids, offsets = tokenizer.encode_batch_to_numpy(texts)
    assert offsets.tolist()[0] == 0 and len(offsets) == len(texts) + 1
    expected = tokenizer.encode_ordinary_batch(texts)
    assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == expected
