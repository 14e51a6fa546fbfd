"""The pure-Python reference holds SPEC sections 1, 2 and 4 literally.

Everything else is tested against this module, so these tests pin it to the
spec's own examples and to hand-checked cases.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair.pretokenizers import GPT2_PATTERN
from bytepair.reference import bpe
from bytepair.reference.bpe import decode_bytes, encode, pretokenize, split_special, train

BOTCHAN = Path(__file__).resolve().parents[1] / "python" / "bytepair" / "data" / "botchan.txt"

# Text without lone surrogates (they are not valid UTF-8 and are rejected).
valid_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


def byte_id(b: str, n_specials: int = 0) -> int:
    """Id of a single-byte token in a freshly trained vocabulary."""
    return n_specials + ord(b)


def bare_vocab() -> list[bytes]:
    return [bytes([b]) for b in range(256)]


def classroom_encode(
    data: bytes, tokens: list[bytes], merge_ids: list[tuple[int, int]]
) -> list[int]:
    """The textbook form: for each merge in order, replace all its occurrences left to right."""
    token_id = {token: i for i, token in enumerate(tokens)}
    ids = [token_id[bytes([b])] for b in data]
    for left, right in merge_ids:
        merged, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == (left, right):
                merged.append(token_id[tokens[left] + tokens[right]])
                i += 2
            else:
                merged.append(ids[i])
                i += 1
        ids = merged
    return ids


@pytest.fixture(scope="module")
def trained() -> bpe.ReferenceResult:
    """A small gpt2 vocabulary, with multi-byte characters and emoji among its merges."""
    text = BOTCHAN.read_text(encoding="utf-8")[2000:8000]
    extra = ["mañana mañana señor", "👩‍👩‍👧 family 👩‍👩‍👧 🇯🇵🇯🇵", "naïve café café"] * 3
    return train([text, *extra], 256 + 80, special_tokens=["<|eot|>"], pretokenizer="gpt2")


# ---------------------------------------------------------------------------
# Training (SPEC section 1)
# ---------------------------------------------------------------------------


def test_golden_example_merges_and_counts():
    texts = ["low_"] * 5 + ["lower_"] * 2 + ["lowest_"] * 3
    result = train(texts, 256 + 6, pretokenizer="none")
    assert result.merges == [
        (b"l", b"o"),
        (b"lo", b"w"),
        (b"low", b"_"),
        (b"low", b"e"),
        (b"lowe", b"s"),
        (b"lowes", b"t"),
    ]
    assert result.counts == [10, 10, 5, 5, 3, 3]
    assert result.stop_reason == "vocab_size"
    assert result.tokens[:256] == bare_vocab()
    assert result.tokens[256:] == [b"lo", b"low", b"low_", b"lowe", b"lowes", b"lowest"]
    assert result.merge_ids == [
        (ord("l"), ord("o")),
        (256, ord("w")),
        (257, ord("_")),
        (257, ord("e")),
        (259, ord("s")),
        (260, ord("t")),
    ]


def test_tie_goes_to_smallest_bytes_pair_whatever_the_input_order():
    texts = ["zy", "ac", "ab", "\u00e9"]  # every pair occurs once
    forward = train(texts, 256 + 1, pretokenizer="none")
    backward = train(texts[::-1], 256 + 1, pretokenizer="none")
    assert forward.merges == backward.merges == [(b"a", b"b")]
    # Bytes order, not character order: "z" (0x7A) < the lead byte of "é" (0xC3).
    result = train(["\u00e9", "zy"], 256 + 1, pretokenizer="none")
    assert result.merges == [(b"z", b"y")]


def test_overlapping_pairs_count_and_merge_left_to_right():
    result = train(["aaa"], 256 + 2, pretokenizer="none")
    # "aaa" holds (a, a) twice; merging left to right gives "aa a", hence (aa, a) next.
    assert result.merges == [(b"a", b"a"), (b"aa", b"a")]
    assert result.counts == [2, 1]


def test_pretokens_are_weighted_by_multiplicity():
    result = train(["ab ab ab cd"], 256 + 1, pretokenizer="whitespace")
    assert result.merges == [(b"a", b"b")]
    assert result.counts == [3]


def test_merge_making_existing_bytes_reuses_id_and_vocab_does_not_grow():
    tokens = bare_vocab() + [b"bc", b"abc"]
    token_id = {token: i for i, token in enumerate(tokens)}
    # (a, bc) made b"abc" as id 257; a later (ab, c) gives the same bytes: same id.
    assert bpe._add_token(b"ab", tokens, token_id) == 258
    assert bpe._add_token(b"abc", tokens, token_id) == 257
    assert len(tokens) == 259
    assert bpe._add_token(b"abcd", tokens, token_id) == 259


@settings(deadline=None)
@given(st.lists(st.text(alphabet="ab", min_size=2, max_size=9), min_size=1, max_size=6))
def test_trained_tokens_are_distinct_so_each_merge_grows_the_vocab(texts):
    # The reuse rule of SPEC section 1 is unreachable by this trainer: a token's bytes
    # fix the merge that made it. Should that ever change, this test says so.
    result = train(texts, 256 + 40, pretokenizer="none")
    assert len(set(result.tokens)) == len(result.tokens)
    assert len(result.tokens) == 256 + len(result.merges)


def test_min_frequency_stops_training():
    result = train(["ab"] * 3 + ["cd"], 1000, pretokenizer="whitespace", min_frequency=2)
    assert result.merges == [(b"a", b"b")]
    assert result.counts == [3]
    assert result.stop_reason == "min_frequency"


def test_no_pairs_stops_training():
    result = train(["ab", "c"], 1000, pretokenizer="none")
    assert result.merges == [(b"a", b"b")]
    assert result.stop_reason == "no_pairs"
    assert train([], 1000).stop_reason == "no_pairs"


def test_vocab_size_of_bytes_and_specials_means_no_merges():
    result = train(["abab"], 256 + 1, special_tokens=["<s>"], pretokenizer="none")
    assert result.merges == [] and result.stop_reason == "vocab_size"
    assert len(result.tokens) == 257


def test_specials_take_first_ids_and_are_cut_out_of_training_text():
    specials = ["<|eot|>", "<|pad|>"]
    result = train(
        ["xy<|eot|>xy<|pad|>", "q<|eot|>"], 1000, special_tokens=specials, pretokenizer="none"
    )
    assert result.tokens[:2] == [b"<|eot|>", b"<|pad|>"]
    assert result.tokens[2:258] == bare_vocab()
    # Only (x, y) is ever seen: no pair touches the specials' characters or crosses them.
    assert result.merges == [(b"x", b"y")]
    assert result.counts == [2]
    assert result.merge_ids == [(byte_id("x", 2), byte_id("y", 2))]
    assert result.tokens[258] == b"xy"


def test_single_str_corpus_is_one_text():
    assert train("low low", 258, pretokenizer="none") == train(
        ["low low"], 258, pretokenizer="none"
    )


# ---------------------------------------------------------------------------
# Special tokens (leftmost, then longest)
# ---------------------------------------------------------------------------


def test_split_special_earliest_start_beats_longer_later_special():
    assert split_special("abcd", ["bcd", "ab"]) == [("ab", True), ("cd", False)]


def test_split_special_longest_wins_at_same_start():
    specials = ["<a>", "<a><b>"]
    assert split_special("x<a><b>y<a>", specials) == [
        ("x", False),
        ("<a><b>", True),
        ("y", False),
        ("<a>", True),
    ]


def test_split_special_drops_empty_ordinary_pieces():
    assert split_special("<a><a>", ["<a>"]) == [("<a>", True), ("<a>", True)]
    assert split_special("", ["<a>"]) == []
    assert split_special("plain", []) == [("plain", False)]


# ---------------------------------------------------------------------------
# Pre-tokenizers (SPEC section 4)
# ---------------------------------------------------------------------------


def test_none_pretokenizer_is_the_whole_text():
    assert pretokenize("a b  c", "none") == ["a b  c"]
    assert pretokenize("", "none") == []


def test_whitespace_pretokenizer_keeps_space_at_front_of_next_word():
    assert pretokenize("hello  world \n", "whitespace") == ["hello", "  world", " \n"]
    assert pretokenize(" a\tb", "whitespace") == [" a", "\tb"]


def test_gpt2_pretokenizer_hand_checked():
    assert pretokenize("Hello world's  123", "gpt2") == ["Hello", " world", "'s", " ", " 123"]
    assert pretokenize("I'M here\n\n", "gpt2") == ["I", "'", "M", " here", "\n\n"]
    assert pretokenize("mañana!!", "gpt2") == ["mañana", "!!"]


GPT2_SAMPLES = [
    "Hello world's  123",
    "they'll've  done it\n\n  x",
    "trailing spaces   ",
    "tabs\t\tand\r\nCRLF",
    "日本語のテキスト 123abc",
    "emoji 👩‍👩‍👧 and flags 🇯🇵!",
    "\ufeffBOM and \x00 control \x07",
    "  leading",
]


def test_gpt2_pretokenizer_equals_tiktoken_pattern():
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    for text in GPT2_SAMPLES:
        assert pretokenize(text, "gpt2") == regex.findall(openai_public.r50k_pat_str, text), text


@settings(deadline=None)
@given(valid_text)
def test_pretokens_concatenate_to_the_text(text):
    for name in ("none", "whitespace", "gpt2"):
        pieces = pretokenize(text, name)
        assert "".join(pieces) == text
        assert all(pieces)
    # gpt2's pattern leaves no gap, so the pieces are exactly its matches.
    assert pretokenize(text, "gpt2") == regex.findall(GPT2_PATTERN, text)


def test_user_regex_with_gaps_keeps_every_character():
    assert pretokenize("ab12cd345", re.compile(r"\d+")) == ["ab", "12", "cd", "345"]
    # Empty matches are ignored; the text between matches still becomes pieces.
    assert pretokenize("ab12cd", regex.compile(r"\d*")) == ["ab", "12", "cd"]


# ---------------------------------------------------------------------------
# Encoding and decoding (SPEC section 2)
# ---------------------------------------------------------------------------


def test_encode_empty_text_is_empty():
    assert encode("", bare_vocab(), []) == []


def test_encode_mananana_starts_as_seven_bytes():
    assert encode("mañana", bare_vocab(), [], pretokenizer="none") == list("mañana".encode())
    assert len("mañana".encode()) == 7


def test_encode_merges_lowest_rank_first_not_leftmost_pair():
    tokens = bare_vocab() + [b"bc", b"ab"]
    merge_ids = [(ord("b"), ord("c")), (ord("a"), ord("b"))]  # (b, c) has the lower rank
    assert encode("abc", tokens, merge_ids, pretokenizer="none") == [ord("a"), 256]
    assert encode("abd", tokens, merge_ids, pretokenizer="none") == [257, ord("d")]


def test_encode_merges_leftmost_occurrence_of_lowest_rank():
    tokens = bare_vocab() + [b"aa"]
    assert encode("aaa", tokens, [(ord("a"), ord("a"))], pretokenizer="none") == [256, ord("a")]


def test_encode_result_of_merge_is_token_with_concatenated_bytes():
    # Two merges make b"abc", (a, bc) and (ab, c); whichever applies, the result is id 258.
    tokens = bare_vocab() + [b"bc", b"ab", b"abc"]
    a, b, c, bc, ab, abc = ord("a"), ord("b"), ord("c"), 256, 257, 258
    via_bc = [(b, c), (a, bc), (a, b), (ab, c)]  # a b c -> a bc -> abc
    via_ab = [(a, b), (b, c), (ab, c), (a, bc)]  # a b c -> ab c -> abc
    for merge_ids in (via_bc, via_ab):
        assert encode("abc", tokens, merge_ids, pretokenizer="none") == [abc]
        assert encode("ab", tokens, merge_ids, pretokenizer="none") == [ab]
        assert encode("bcbc", tokens, merge_ids, pretokenizer="none") == [bc, bc]


def test_encode_equals_classroom_form_on_trained_vocab(trained):
    # SPEC section 2: equal whenever every token is made by exactly one merge.
    text = BOTCHAN.read_text(encoding="utf-8")[8000:9000] + " mañana 👩‍👩‍👧"
    for pretoken in pretokenize(text, "gpt2"):
        ids = encode(pretoken, trained.tokens, trained.merge_ids, special_tokens={"<|eot|>": 0})
        assert ids == classroom_encode(pretoken.encode(), trained.tokens, trained.merge_ids)


def test_emoji_zwj_and_multibyte_round_trip(trained):
    special = {"<|eot|>": 0}
    for text in ["👩‍👩‍👧", "🇯🇵🇯🇵 family", "mañana", "\ufeffBOM", "ctrl\x00\x07\x1b", "x"]:
        ids = encode(text, trained.tokens, trained.merge_ids, special_tokens=special)
        assert decode_bytes(ids, trained.tokens) == text.encode()
    # The corpus repeats the family emoji, so it is learned as fewer tokens than its 18 bytes.
    assert len(encode("👩‍👩‍👧", trained.tokens, trained.merge_ids, special_tokens=special)) < 18


@settings(deadline=None)
@given(valid_text)
def test_roundtrip_any_text(trained, text):
    ids = encode(text, trained.tokens, trained.merge_ids, special_tokens={"<|eot|>": 0})
    assert decode_bytes(ids, trained.tokens) == text.encode()


def test_encode_splits_only_allowed_specials(trained):
    special = {"<|eot|>": 0}
    text = "end<|eot|>start"
    as_text = encode(text, trained.tokens, trained.merge_ids, special_tokens=special)
    assert 0 not in as_text
    assert decode_bytes(as_text, trained.tokens) == text.encode()
    for allowed in (["<|eot|>"], "all"):
        ids = encode(
            text, trained.tokens, trained.merge_ids, special_tokens=special, allowed_special=allowed
        )
        assert ids.count(0) == 1
        assert decode_bytes(ids, trained.tokens) == text.encode()


def test_decode_bytes_concatenates_and_names_bad_id():
    tokens = bare_vocab() + [b"ab"]
    assert decode_bytes([256, ord("c")], tokens) == b"abc"
    with pytest.raises(ValueError, match=r"id 257 at position 1"):
        decode_bytes([0, 257], tokens)
    with pytest.raises(ValueError, match=r"id -1 at position 0"):
        decode_bytes([-1], tokens)


def test_decode_is_the_text_of_decode_bytes():
    # README lists decode among the reference's functions; SPEC section 2: replace by default.
    tokens = bare_vocab() + ["é".encode()]
    assert bpe.decode([ord("a"), 256, ord("z")], tokens) == "aéz"
    assert bpe.decode([0xC3], tokens) == "\ufffd"
    assert bpe.decode([0xE2, 0x82, ord("a")], tokens) == "\ufffda"  # one U+FFFD per bad run
    assert bpe.decode([0xC3, 0xA9], tokens, errors="strict") == "é"
    with pytest.raises(UnicodeDecodeError):
        bpe.decode([0xC3], tokens, errors="strict")
    assert bpe.decode([0xC3, ord("b")], tokens, errors="ignore") == "b"
    with pytest.raises(ValueError, match=r"id 257 at position 1"):
        bpe.decode([0, 257], tokens)


@settings(deadline=None)
@given(valid_text)
def test_decode_round_trips_text(trained, text):
    ids = encode(text, trained.tokens, trained.merge_ids, special_tokens={"<|eot|>": 0})
    assert bpe.decode(ids, trained.tokens) == text


# ---------------------------------------------------------------------------
# Validation: errors name the bad input
# ---------------------------------------------------------------------------


def test_vocab_size_too_small_raises():
    with pytest.raises(ValueError, match=r"vocab_size 256 is too small.*257"):
        train(["a"], 256, special_tokens=["<s>"])


def test_bad_special_tokens_raise():
    with pytest.raises(ValueError, match=r"special_tokens\[1\] '<s>' is a duplicate"):
        train(["a"], 300, special_tokens=["<s>", "<s>"])
    with pytest.raises(ValueError, match=r"special_tokens\[0\] is empty"):
        train(["a"], 300, special_tokens=[""])
    with pytest.raises(TypeError, match=r"not a single str"):
        train(["a"], 300, special_tokens="<s>")


def test_bad_training_arguments_raise():
    with pytest.raises(TypeError, match=r"texts\[1\] must be str, not bytes"):
        train(["a", b"b"], 300)
    with pytest.raises(ValueError, match=r"min_frequency must be at least 1, got 0"):
        train(["a"], 300, min_frequency=0)
    with pytest.raises(TypeError, match=r"vocab_size must be int, not float"):
        train(["a"], 300.0)
    with pytest.raises(ValueError, match=r"unknown pre-tokenizer 'gtp2'"):
        train(["a"], 300, pretokenizer="gtp2")


def test_lone_surrogate_is_rejected_with_clear_error():
    with pytest.raises(
        ValueError, match=r"texts\[0\] contains the lone surrogate U\+D800 at character 2"
    ):
        train(["ab\ud800"], 300)
    with pytest.raises(ValueError, match=r"lone surrogate U\+DC00"):
        encode("x\udc00", bare_vocab(), [])


def test_inconsistent_vocabulary_raises_on_encode():
    with pytest.raises(ValueError, match=r"merge rank 0 \(97, 98\) makes b'ab'"):
        encode("ab", bare_vocab(), [(97, 98)])
    with pytest.raises(ValueError, match=r"no token for the byte 0xff"):
        encode("a", bare_vocab()[:255], [])
    # As tiktoken (and Tokenizer): a name that is no special token is ignored.
    assert encode("a<x>", bare_vocab(), [], allowed_special=["<x>"]) == list(b"a<x>")
