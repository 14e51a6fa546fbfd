"""A tokenizer.json written by bytepair loads in HF `tokenizers` and gives
bytepair's ids; bytepair reads it back unchanged."""

from __future__ import annotations

import re

import pytest

import bytepair

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is a test dependency")

PRETOKENIZERS = ["gpt2", "whitespace", "none", re.compile(r"\w+|[^\w\s]+|\s+")]


def corpus_texts(shared_data):
    small = shared_data / "corpus" / "small"
    texts = {}
    for name in [
        "botchan.txt",
        "taylorswift.txt",
        "tinyshakespeare.txt",
        "wagahaiwa_nekodearu.txt",
    ]:
        text = (small / name).read_text(encoding="utf-8")
        texts[name] = text[:60000]
    return texts


@pytest.mark.parametrize("pretokenizer", PRETOKENIZERS, ids=str)
def test_hf_loads_our_file_and_gives_our_ids(tmp_path, shared_data, pretokenizer):
    texts = corpus_texts(shared_data)
    specials = ["<|endoftext|>", "<pad>"]
    train_texts = [t[:30000] for t in texts.values()]
    tok = bytepair.train(
        train_texts, 1500, special_tokens=specials, pretokenizer=pretokenizer, progress=False
    )
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert hf.get_vocab_size() == tok.n_vocab
    for name, text in texts.items():
        ours = tok.encode_ordinary(text)
        theirs = hf.encode(text, add_special_tokens=False).ids
        assert ours == theirs, name
        assert hf.decode(theirs) == text
    with_specials = "hello<|endoftext|>world <pad> and more"
    assert tok.encode(with_specials, allowed_special="all") == hf.encode(with_specials).ids

    reloaded = bytepair.load(path)
    assert reloaded.model == tok.model


def test_gpt2_layout_round_trips(tmp_path):
    tok = bytepair.train(["some text to merge, some more text"] * 5, 300, progress=False)
    tok.save(tmp_path / "gpt2", format="gpt2")
    assert sorted(p.name for p in (tmp_path / "gpt2").iterdir()) == ["merges.txt", "vocab.json"]
    assert bytepair.load(tmp_path / "gpt2").model == tok.model


def test_stripping_specials_cut_text_as_tokenizers_does(tmp_path):
    """lstrip / rstrip specials, some of them whitespace or starting with it: a
    special inside whitespace another one strips is still cut out, as
    tokenizers finds the specials in the text as given before stripping."""
    import json
    import random

    specials = ["<|endoftext|>", "<m>", " <x>", "<y>", "\n", "ab", "<m><y>", "\t"]
    strips = {
        "<|endoftext|>": (1, 1),
        "<m>": (0, 1),
        " <x>": (1, 0),
        "<y>": (1, 1),
        "ab": (1, 1),
        "\t": (1, 0),  # left with nothing inside whitespace <m> strips: dropped
    }
    tok = bytepair.train(["ab ba <x> aab\nx y"] * 20, 300, special_tokens=specials, progress=False)
    path = tmp_path / "strip.json"
    tok.save(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    for entry in document["added_tokens"]:
        entry["lstrip"], entry["rstrip"] = map(bool, strips.get(entry["content"], (0, 0)))
    path.write_text(json.dumps(document), encoding="utf-8")
    ours, theirs = bytepair.load(path), tokenizers.Tokenizer.from_file(str(path))
    parts = ["<m>", " <x>", "<x>", "<y>", "\n", "ab", "a", "b", "<m><y>", " ", "  ", "\t", "é"]
    rng = random.Random(5)
    compared = 0
    for _ in range(2000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 8)))
        try:
            want = theirs.encode(text, add_special_tokens=False).ids
        except BaseException as e:  # tokenizers panics ("bad split") on some overlaps
            if type(e).__name__ != "PanicException":
                raise
            continue
        assert ours.encode(text, allowed_special="all") == want, repr(text)
        compared += 1
    assert compared > 1800


@pytest.mark.parametrize(
    "change",
    [
        {"normalizer": {"type": "Sequence", "normalizers": []}},
        {"pre_tokenizer": {"type": "Sequence", "pretokenizers": ["BYTE_LEVEL"]}},
        {"decoder": {"type": "Sequence", "decoders": ["BYTE_LEVEL_DECODER"]}},
        {"pre_tokenizer": {"type": "Sequence", "pretokenizers": ["SPLIT ", "BYTE_LEVEL_NO_REGEX"]}},
        {
            "pre_tokenizer": {
                "type": "Sequence",
                "pretokenizers": ["SPLIT l.", "BYTE_LEVEL_NO_REGEX"],
            }
        },
    ],
    ids=[
        "empty-normalizer-sequence",
        "sequence-of-byte-level",
        "decoder-sequence",
        "split-string",
        "split-string-dot",
    ],
)
def test_equivalent_spellings_of_components_load_and_give_tokenizers_ids(tmp_path, change):
    """A Sequence of one step, an empty normalizer Sequence, a Split by a
    literal string: what tokenizers runs them as, not refused."""
    import json
    import random
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the corpus runs out of pairs
        tok = bytepair.train(["hello world, hello there. a  b\tc"] * 20, 300, progress=False)
    path = tmp_path / "tok.json"
    tok.save(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    byte_level = document["pre_tokenizer"]
    steps = {
        "BYTE_LEVEL": byte_level,
        "BYTE_LEVEL_NO_REGEX": {**byte_level, "use_regex": False},
        "BYTE_LEVEL_DECODER": document["decoder"],
    }

    def filled(value):
        if isinstance(value, str) and value.startswith("SPLIT "):
            literal = value.removeprefix("SPLIT ") or " "
            return {
                "type": "Split",
                "pattern": {"String": literal},
                "behavior": "Isolated",
                "invert": False,
            }
        if isinstance(value, str):
            return steps.get(value, value)
        if isinstance(value, dict):
            return {k: filled(v) for k, v in value.items()}
        if isinstance(value, list):
            return [filled(v) for v in value]
        return value

    document.update(filled(change))
    path.write_text(json.dumps(document), encoding="utf-8")
    ours, theirs = bytepair.load(path), tokenizers.Tokenizer.from_file(str(path))
    rng = random.Random(3)
    texts = ["hello world", "hell.o  wor.ld l.l.", "", " a\tb  c "]
    texts += ["".join(rng.choice("hel o.wrd\t") for _ in range(20)) for _ in range(200)]
    for text in texts:
        ids = theirs.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == ids, repr(text)
        assert ours.decode(ids) == theirs.decode(ids), repr(text)


# ---------------------------------------------------------------------------
# Non-special added tokens ("special": false): GPT-NeoX / Pythia, Qwen2.5 layouts

ADDED_PARTS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<s>",
    "<s",
    "ab",
    "b<",
    "x",
    "a",
    "b",
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "é",
    "e\u0301",
    "hello",
    "world",
    ">",
    "\u0338",
]


def _entry(content, token_id, special, normalized, lstrip=False, rstrip=False):
    return {
        "id": token_id,
        "content": content,
        "single_word": False,
        "lstrip": lstrip,
        "rstrip": rstrip,
        "normalized": normalized,
        "special": special,
    }


def _added_layouts(tmp_path):
    """name -> path of a tokenizer.json with non-special added tokens, laid out
    as the real files are."""
    import json
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the corpus runs out of pairs
        tok = bytepair.train(
            ["hello world, hello there. a  b\tc  d    e <tool_call> x"] * 20,
            320,
            special_tokens=["<|endoftext|>"],
            progress=False,
        )
    base = json.loads(tok.save(tmp_path / "base.json") or (tmp_path / "base.json").read_text())
    assert "Ġ Ġ" in base["model"]["merges"]  # the merges of space runs stay in the file
    layouts = {}

    def layout(name, entries, normalizer, in_vocab=False):
        document = json.loads(json.dumps(base))
        vocab = document["model"]["vocab"]
        for content, special, normalized, *strip in entries:
            token_id = len(vocab) if in_vocab else len(vocab) + len(document["added_tokens"]) - 1
            if in_vocab:
                vocab[content] = token_id
            document["added_tokens"].append(_entry(content, token_id, special, normalized, *strip))
        document["normalizer"] = normalizer
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        layouts[name] = path

    spaces = [(" " * k, False, True) for k in range(24, 1, -1)]
    # GPT-NeoX / Pythia: runs of 2..24 spaces, raw text in model.vocab, NFC, normalized true.
    layout("neox", spaces, {"type": "NFC"}, in_vocab=True)
    layout("neox-outside-vocab", spaces, {"type": "NFC"})
    # Qwen2.5: specials, then <tool_call> etc. with special false, normalized false; NFC.
    qwen = [("<|im_start|>", True, False), ("<|im_end|>", True, False)]
    qwen += [("<tool_call>", False, False), ("</tool_call>", False, False)]
    layout("qwen2.5", qwen, {"type": "NFC"})
    # Tokens that overlap each other (normalized alike: tokenizers cuts the two kinds in
    # two passes, which bytepair refuses where they can overlap).
    overlapping = [("<|endoftext|>x", False, False), ("ab", False, False), ("b<", False, False)]
    overlapping += [("<s>", True, False), ("<s", False, False), ("\n", False, True)]
    layout("overlapping", overlapping, None)
    stripping = [("<tool_call>", False, False, True, True), ("<s>", True, False, False, True)]
    layout("stripping", stripping + [("\n", False, False)], None)
    return layouts


@pytest.fixture(scope="module")
def added_layouts(tmp_path_factory):
    return _added_layouts(tmp_path_factory.mktemp("added"))


def _tokenizers_pair(path):
    theirs = tokenizers.Tokenizer.from_file(str(path))
    ordinary = tokenizers.Tokenizer.from_file(str(path))
    ordinary.encode_special_tokens = True  # specials as text; added tokens still cut out
    return theirs, ordinary


@pytest.mark.parametrize(
    "name", ["neox", "neox-outside-vocab", "qwen2.5", "overlapping", "stripping"]
)
def test_non_special_added_tokens_encode_and_decode_as_tokenizers_does(added_layouts, name):
    import random

    path = added_layouts[name]
    ours = bytepair.load(path)
    theirs, ordinary = _tokenizers_pair(path)
    assert ours.added_tokens == {
        e.content: i for i, e in theirs.get_added_tokens_decoder().items() if not e.special
    }
    assert ours.special_tokens == {
        e.content: i for i, e in theirs.get_added_tokens_decoder().items() if e.special
    }
    rng = random.Random(name)
    specials = list(ours.special_tokens)
    for _ in range(1500):
        text = "".join(rng.choice(ADDED_PARTS) for _ in range(rng.randint(0, 10)))
        want = theirs.encode(text, add_special_tokens=False).ids
        assert ours.encode(text, allowed_special="all") == want, repr(text)
        assert ours.decode(want) == theirs.decode(want, skip_special_tokens=False), repr(text)
        got = ours.encode_ordinary(text)
        # Where a special's text overlaps an added token's, see the next test.
        if not any(s in text for s in specials if s in ("<s>", "<|endoftext|>")):
            assert got == ordinary.encode(text, add_special_tokens=False).ids, repr(text)
        # decode(skip_special_tokens=True) drops the special ids, keeps the added ones.
        assert ours.decode(got) == theirs.decode(got), repr(text)
        if not any(s in text for s in specials):
            assert ours.encode(text) == want
            assert ours.decode(want) == theirs.decode(want)


def test_encode_ordinary_where_special_text_overlaps_an_added_token(added_layouts):
    """bytepair's encode_ordinary encodes as if the special tokens were not
    there: an added token inside a special's text is cut out. tokenizers with
    encode_special_tokens=True still matches the special, then keeps its text."""
    path = added_layouts["overlapping"]
    ours = bytepair.load(path)
    theirs, ordinary = _tokenizers_pair(path)
    prefix = ours.added_tokens["<s"]
    assert ours.encode_ordinary("<s>") == [prefix, ours.encode_ordinary(">")[0]]
    by_char = [ours.encode_ordinary(char)[0] for char in "<s>"]
    assert ordinary.encode("<s>", add_special_tokens=False).ids == by_char
    assert ours.decode(ours.encode_ordinary("<s>")) == "<s>"


@pytest.mark.parametrize("name", ["neox", "qwen2.5", "overlapping", "stripping"])
def test_non_special_added_tokens_round_trip_and_tokenizers_reads_ours(
    added_layouts, tmp_path, name
):
    import json
    import random

    ours = bytepair.load(added_layouts[name])
    written = tmp_path / "written.json"
    ours.save(written)
    entries = json.loads(written.read_text(encoding="utf-8"))["added_tokens"]
    assert {e["content"] for e in entries if not e["special"]} == set(ours.added_tokens)
    again = bytepair.load(written)
    assert again.model == ours.model
    theirs = tokenizers.Tokenizer.from_file(str(written))
    rng = random.Random(7)
    for _ in range(500):
        text = "".join(rng.choice(ADDED_PARTS) for _ in range(rng.randint(0, 10)))
        want = theirs.encode(text, add_special_tokens=False).ids
        assert ours.encode(text, allowed_special="all") == want, repr(text)
        assert ours.decode(want) == theirs.decode(want, skip_special_tokens=False)
