"""Special tokens follow tiktoken's allowed/disallowed contract."""

from __future__ import annotations

import pytest

import bytepair
from bytepair import DisallowedSpecialError

SPECIALS = ["<|endoftext|>", "<|pad|>"]


@pytest.fixture(scope="module")
def tokenizer():
    corpus = ["hello world<|endoftext|>goodbye world<|pad|>"] * 20
    return bytepair.train(corpus, 300, special_tokens=SPECIALS, progress=False)


def test_special_ids_come_first(tokenizer):
    assert tokenizer.special_tokens == {"<|endoftext|>": 0, "<|pad|>": 1}
    assert tokenizer.special_tokens_set == set(SPECIALS)
    assert tokenizer.decode_single_token_bytes(0) == b"<|endoftext|>"
    assert tokenizer.decode_single_token_bytes(2) == b"\x00"


def test_special_text_never_enters_training(tokenizer):
    for left, right in tokenizer.merges:
        assert b"<|" not in left + right


def test_disallowed_special_raises_with_a_fix(tokenizer):
    with pytest.raises(DisallowedSpecialError, match="allowed_special") as info:
        tokenizer.encode("hi <|endoftext|>")
    assert "<|endoftext|>" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_allowed_special_becomes_its_id(tokenizer):
    ids = tokenizer.encode("hi<|endoftext|>there", allowed_special={"<|endoftext|>"})
    assert 0 in ids
    assert tokenizer.decode(ids) == "hi<|endoftext|>there"
    assert tokenizer.encode("<|pad|>", allowed_special="all") == [1]


def test_only_allowed_specials_are_split_out(tokenizer):
    text = "<|endoftext|><|pad|>"
    ids = tokenizer.encode(text, allowed_special={"<|pad|>"}, disallowed_special=())
    assert ids[-1] == 1 and 0 not in ids
    assert tokenizer.decode(ids) == text


def test_disallowed_check_can_be_turned_off(tokenizer):
    text = "x<|endoftext|>"
    assert tokenizer.encode(text, disallowed_special=()) == tokenizer.encode_ordinary(text)
    assert 0 not in tokenizer.encode_ordinary(text)


def test_unknown_special_names_follow_tiktoken(tokenizer):
    """As in tiktoken: an allowed name that is no special token is ignored; a
    disallowed one is refused only where it occurs in the text."""
    text = "x <|nope|> y"
    plain = tokenizer.encode_ordinary(text)
    assert tokenizer.encode(text, allowed_special={"<|nope|>"}) == plain
    ids = tokenizer.encode("a<|pad|>", allowed_special={"<|nope|>", "<|pad|>"})
    assert ids[-1] == 1
    assert tokenizer.encode("fine", disallowed_special={"<|nope|>"}) == tokenizer.encode("fine")
    with pytest.raises(DisallowedSpecialError, match="at character 2") as info:
        tokenizer.encode(text, disallowed_special={"<|nope|>"})
    assert (info.value.token, info.value.position) == ("<|nope|>", 2)
    assert "<|nope|>" in str(info.value) and "not a special token" in str(info.value)
    # The leftmost disallowed string is named, special token or not.
    with pytest.raises(DisallowedSpecialError) as info:
        tokenizer.encode("ab<|pad|>c<|nope|>", disallowed_special={"<|nope|>", "<|pad|>"})
    assert (info.value.token, info.value.position) == ("<|pad|>", 2)
    assert "allowed_special" in str(info.value)  # the special token's advice
    # Disallowed wins over allowed, as for special tokens.
    with pytest.raises(DisallowedSpecialError):
        tokenizer.encode("<|pad|>", allowed_special="all", disallowed_special={"pad"})


def test_unknown_special_names_in_every_entry_point(tokenizer):
    texts = ["fine", "bad <|nope|>"]
    calls = [
        lambda **kw: tokenizer.encode(texts[1], **kw),
        lambda **kw: tokenizer.encode_to_numpy(texts[1], **kw),
        lambda **kw: tokenizer.encode_batch(texts, **kw),
        lambda **kw: tokenizer.encode_batch_to_numpy(texts, **kw),
        lambda **kw: tokenizer.encode(texts[1], dropout=0.5, seed=1, **kw),
    ]
    for call in calls:
        call(allowed_special={"<|nope|>"})  # ignored
        with pytest.raises(DisallowedSpecialError, match="<\\|nope\\|>") as info:
            call(disallowed_special=frozenset({"<|nope|>"}))
        assert info.value.position == 4
    with pytest.raises(DisallowedSpecialError, match="text 1 of the batch"):
        tokenizer.encode_batch(texts, disallowed_special={"<|nope|>"})


def test_special_sets_must_be_collections_of_strings(tokenizer):
    # tiktoken would read a bare string as a set of its characters.
    with pytest.raises(TypeError, match="not the string"):
        tokenizer.encode("x", allowed_special="<|pad|>")
    with pytest.raises(TypeError, match="not the string"):
        tokenizer.encode_batch(["x"], disallowed_special="<|pad|>")
    with pytest.raises(TypeError, match="int"):
        tokenizer.encode("x", allowed_special={1})


def test_batch_follows_the_same_contract(tokenizer):
    with pytest.raises(DisallowedSpecialError, match="text 1 of the batch"):
        tokenizer.encode_batch(["fine", "bad <|pad|>"])
    out = tokenizer.encode_batch(["a<|pad|>", "b"], allowed_special="all")
    assert out[0][-1] == 1


def test_overlapping_specials_take_the_longest():
    tok = bytepair.train(["x"], 300, special_tokens=["<a>", "<a><b>"], progress=False)
    assert tok.encode("<a><b><a>", allowed_special="all") == [1, 0]


# ---------------------------------------------------------------------------
# Differential: the allowed/disallowed arguments against tiktoken itself

CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@pytest.fixture(scope="module")
def cl100k_pair(shared_data):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    from bytepair.registry import ENCODINGS

    path = shared_data / "models" / "tiktoken" / "cl100k_base.tiktoken"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    enc = tiktoken.Encoding(
        "cl100k_base",
        pat_str=bytepair.load_tiktoken(path).pretokenizer.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=CL100K_SPECIALS,
    )
    tok = bytepair.load_tiktoken(path)
    assert tok.special_tokens == CL100K_SPECIALS == dict(ENCODINGS["cl100k_base"].special_tokens)
    return tok, enc


ALLOWED = [
    "all",
    set(),
    frozenset(),
    {"<|endoftext|>"},
    {"<|nope|>"},
    frozenset({"<|endoftext|>", "<|nope|>"}),
    {"hello", "<|fim_prefix|>"},
]
DISALLOWED = [
    "all",
    (),
    set(),
    {"<|nope|>"},
    frozenset({"hello"}),
    {"<|endoftext|>", "world"},
    frozenset({"<|fim_prefix|>", "<|nope|>"}),
    {"<|endoftext|>"},
    {""},
]
TEXTS = [
    "",
    "hello world",
    "hello <|endoftext|> world",
    "<|nope|> x",
    "a<|fim_prefix|>b<|endoftext|>c",
    "<|endoftext|>hello<|nope|>",
    "<|endofprompt|><|fim_suffix|> hello",
]


def _outcome(function, argument, **options):
    """The ids (a batch's flattened) or the ValueError's type."""
    try:
        result = function(argument, **options)
    except ValueError as e:
        return type(e)
    if isinstance(result, tuple):  # encode_batch_to_numpy: (flat ids, offsets)
        result = result[0]
    elif argument is TEXTS:
        result = [i for ids in result for i in ids]
    return [int(i) for i in result]


def _same(ours, theirs) -> bool:
    """Equal ids, or both refused (bytepair's DisallowedSpecialError is a ValueError)."""
    return ours is DisallowedSpecialError if theirs is ValueError else ours == theirs


def _case_id(chosen) -> str:
    """A stable test id (a set's repr follows the hash seed)."""
    if isinstance(chosen, str):
        return chosen
    return f"{type(chosen).__name__}({','.join(sorted(chosen))})"


@pytest.mark.parametrize("allowed", ALLOWED, ids=_case_id)
@pytest.mark.parametrize("disallowed", DISALLOWED, ids=_case_id)
def test_allowed_and_disallowed_equal_tiktoken(cl100k_pair, allowed, disallowed):
    tok, enc = cl100k_pair
    options = {"allowed_special": allowed, "disallowed_special": disallowed}
    for text in TEXTS:
        theirs = _outcome(enc.encode, text, **options)
        ours = _outcome(tok.encode, text, **options)
        assert _same(ours, theirs), f"{text!r}: tiktoken {theirs}, bytepair {ours}"
        assert _outcome(enc.encode_to_numpy, text, **options) == theirs
        assert _outcome(tok.encode_to_numpy, text, **options) == ours
    theirs = _outcome(enc.encode_batch, TEXTS, **options)
    ours = _outcome(tok.encode_batch, TEXTS, **options)
    assert _same(ours, theirs), f"batch: tiktoken {theirs}, bytepair {ours}"
    assert _outcome(tok.encode_batch_to_numpy, TEXTS, **options) == ours


# ---------------------------------------------------------------------------
# Non-special added tokens (HuggingFace's "special": false): ordinary tokens,
# always cut out, never refused.


@pytest.fixture(scope="module")
def with_added():
    import dataclasses

    corpus = ["hello world<|endoftext|>goodbye  world<tool>  x"] * 20
    specials = ["<|endoftext|>", "<|pad|>", "<tool>", "  "]
    trained = bytepair.train(corpus, 300, special_tokens=specials, progress=False)
    model = dataclasses.replace(trained.model, added_tokens=("<tool>", "  "))
    return bytepair.Tokenizer(model)


def test_added_tokens_are_not_special_tokens(with_added):
    assert with_added.special_tokens == {"<|endoftext|>": 0, "<|pad|>": 1}
    assert with_added.special_tokens_set == {"<|endoftext|>", "<|pad|>"}
    assert with_added.added_tokens == {"<tool>": 2, "  ": 3}
    assert dict(with_added.model.special_tokens) == {
        "<|endoftext|>": 0,
        "<|pad|>": 1,
        "<tool>": 2,
        "  ": 3,
    }
    assert "special=2 added=2" in repr(with_added)
    assert bytepair.train(["ab"], 257, progress=False).added_tokens == {}


def test_every_encode_cuts_added_tokens_out(with_added):
    import numpy as np

    text = "x<tool>y  z<|endoftext|>"
    tool, spaces, eot = 2, 3, 0
    plain = with_added.encode(text, disallowed_special=())
    assert tool in plain and spaces in plain and eot not in plain
    assert with_added.encode_ordinary(text) == plain
    head = with_added.encode_ordinary("x<tool>y  z")
    assert head == [with_added.encode_ordinary("x")[0], tool, head[2], spaces, head[4]]
    assert with_added.encode(text, allowed_special="all") == head + [eot]
    assert with_added.encode_batch([text, "<tool>"], disallowed_special=()) == [plain, [tool]]
    assert with_added.encode_ordinary_batch([text]) == [plain]
    assert with_added.encode_to_numpy(text, disallowed_special=()).tolist() == plain
    ids, offsets = with_added.encode_batch_to_numpy([text, "a  b"], disallowed_special=())
    assert ids[: offsets[1]].tolist() == plain and spaces in ids[offsets[1] :].tolist()
    assert ids.dtype == np.uint32
    # Dropout skips merges, never the cutting out.
    dropped = with_added.encode_ordinary(text, dropout=1.0, seed=1)
    assert tool in dropped and spaces in dropped and eot not in dropped
    assert with_added.encode(text, disallowed_special=(), dropout=0.5, seed=3).count(tool) == 1
    for ids in (plain, dropped):
        assert with_added.decode(ids) == text


def test_added_tokens_are_never_refused(with_added):
    assert with_added.encode("<tool>") == [2]  # disallowed_special="all": the special ones
    with pytest.raises(DisallowedSpecialError, match="<|endoftext|>"):
        with_added.encode("<tool><|endoftext|>")
    # Named in disallowed_special: still cut out, not refused (it is no special token).
    assert with_added.encode("a<tool>", disallowed_special={"<tool>"}) == with_added.encode(
        "a<tool>"
    )
    assert with_added.encode_batch(["<tool>"], disallowed_special=["<tool>", "<|pad|>"]) == [[2]]
    with pytest.raises(DisallowedSpecialError, match="<|pad|>"):
        with_added.encode("<tool><|pad|>", disallowed_special={"<tool>", "<|pad|>"})
    # A string that is neither is refused wherever it occurs, as before.
    with pytest.raises(DisallowedSpecialError, match="ool"):
        with_added.encode("<tool>", disallowed_special={"ool"})
    with pytest.raises(TypeError, match="not the string"):
        with_added.encode("x", disallowed_special="<tool>")


def test_tokenizer_with_added_tokens_pickles(with_added):
    import copy
    import pickle

    for copied in (pickle.loads(pickle.dumps(with_added)), copy.deepcopy(with_added)):
        assert copied.added_tokens == with_added.added_tokens
        assert copied.encode_ordinary("a<tool>  b") == with_added.encode_ordinary("a<tool>  b")


def test_default_special_arguments_equal_their_spelled_out_forms(with_added, tokenizer):
    # Tokenizer keeps the core's indices for these arguments instead of
    # working them out per call; spelled out, they take the general path.
    for tok in (with_added, tokenizer):
        specials = set(tok.special_tokens_set)
        for text in ("x<tool>y  z", "a<|pad|>b<|endoftext|>", "plain"):
            spelled_none = {"allowed_special": iter(()), "disallowed_special": specials}
            expected = _outcome(tok.encode, text, **spelled_none)
            for none in (frozenset(), set(), (), []):
                assert _outcome(tok.encode, text, allowed_special=none) == expected, (text, none)
            # An iterator is read once: a new one for each call.
            all_ids = tok.encode(text, allowed_special=iter(specials), disallowed_special=())
            assert tok.encode(text, allowed_special="all") == all_ids
            assert tok.encode_to_numpy(text, allowed_special="all").tolist() == all_ids
