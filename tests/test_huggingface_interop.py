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

    specials = ["<|endoftext|>", "<m>", " <x>", "<y>", "\n", "ab", "<m><y>"]
    strips = {"<|endoftext|>": (1, 1), "<m>": (0, 1), " <x>": (1, 0), "<y>": (1, 1), "ab": (1, 1)}
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
    for _ in range(2000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 8)))
        want = theirs.encode(text, add_special_tokens=False).ids
        assert ours.encode(text, allowed_special="all") == want, repr(text)


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
