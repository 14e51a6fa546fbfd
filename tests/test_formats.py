"""Tokenizer files: lossless round trips, exact errors on corrupt files, peers can read ours."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import pytest

import bytepair
from bytepair.errors import FormatError
from bytepair.formats import gpt2, hf_regex, huggingface, load_model
from bytepair.formats.byte_level import (
    BYTE_CHARS,
    bytes_to_unicode_text,
    unicode_text_to_bytes,
)
from bytepair.model import BPEModel
from bytepair.pretokenizers import (
    BUILTIN_PATTERNS,
    GPT2_PATTERN,
    WHITESPACE_PATTERN,
    Pretokenizer,
    resolve,
)

SHARED_DATA = Path(
    os.environ.get(
        "BYTEPAIR_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
)

SPECIALS = ("<|endoftext|>", "<|pad|>")
# Merges as bytes, in rank order. "abc" is made twice, by (a, bc) and by (ab, c):
# both merges are kept and the second reuses the first one's id.
MERGE_BYTES = (
    (b"h", b"e"),
    (b" ", b"t"),
    (b" t", b"he"),
    (b"\n", b"\n"),
    (b"\xc3", b"\xa9"),
    (b"b", b"c"),
    (b"a", b"bc"),
    (b"a", b"b"),
    (b"ab", b"c"),
)


def make_model(
    *, specials_first: bool = True, pretokenizer: Pretokenizer | None = None
) -> BPEModel:
    """256 bytes + MERGE_BYTES + SPECIALS; specials first (our training layout) or last (GPT-2's)."""
    tokens: list[bytes] = []
    specials: dict[str, int] = {}

    def add_specials() -> None:
        for text in SPECIALS:
            specials[text] = len(tokens)
            tokens.append(text.encode("utf-8"))

    if specials_first:
        add_specials()
    ids = {}
    for byte in range(256):
        ids[bytes([byte])] = len(tokens)
        tokens.append(bytes([byte]))
    merges = []
    for left, right in MERGE_BYTES:
        if left + right not in ids:
            ids[left + right] = len(tokens)
            tokens.append(left + right)
        merges.append((ids[left], ids[right]))
    if not specials_first:
        add_specials()
    return BPEModel(
        tokens=tuple(tokens),
        merges=tuple(merges),
        special_tokens=specials,
        pretokenizer=pretokenizer or resolve("gpt2"),
    )


PRETOKENIZERS = {
    "gpt2": resolve("gpt2"),
    "none": resolve("none"),
    "whitespace": resolve("whitespace"),
    "regex": Pretokenizer("regex", r"\w+|[^\w\s]+|\s+"),
}


def hf_document(model: BPEModel | None = None) -> dict:
    return json.loads(huggingface.dumps(model or make_model()))


def write_gpt2_pair(directory: Path, vocab: dict, merge_lines: list[str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (directory / "merges.txt").write_text(
        "\n".join(["#version: 0.2", *merge_lines]) + "\n", encoding="utf-8"
    )
    return directory


def gpt2_tables(model: BPEModel | None = None) -> tuple[dict, list[str]]:
    """The vocab.json object and the merge lines (without the version line) of a model."""
    model = model or make_model(specials_first=False)
    special_ids = {i: text for text, i in model.special_tokens.items()}
    vocab = {
        special_ids.get(i, bytes_to_unicode_text(token)): i for i, token in enumerate(model.tokens)
    }
    merges = [
        f"{bytes_to_unicode_text(model.tokens[a])} {bytes_to_unicode_text(model.tokens[b])}"
        for a, b in model.merges
    ]
    return vocab, merges


# ---------------------------------------------------------------------------
# The byte-level alphabet


def test_byte_level_map_follows_gpt2_definition():
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    for byte in printable:
        assert BYTE_CHARS[byte] == chr(byte)
    others = [byte for byte in range(256) if byte not in printable]
    assert [BYTE_CHARS[byte] for byte in others] == [chr(256 + n) for n in range(len(others))]
    assert BYTE_CHARS[ord(" ")] == "Ġ" and BYTE_CHARS[ord("\n")] == "Ċ"


def test_byte_level_alphabet_equals_tokenizers_alphabet():
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    assert set(BYTE_CHARS) == set(pre_tokenizers.ByteLevel.alphabet())


def test_byte_level_text_roundtrips_every_byte():
    data = bytes(range(256)) + "mañana 🙂".encode()
    text = bytes_to_unicode_text(data)
    assert len(text) == len(data) and " " not in text
    assert unicode_text_to_bytes(text) == data


def test_byte_level_rejects_foreign_character_naming_it():
    with pytest.raises(ValueError, match=r"'日'.*position 2"):
        unicode_text_to_bytes("ab日")


# ---------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize("specials_first", [True, False], ids=["specials-first", "specials-last"])
@pytest.mark.parametrize("kind", list(PRETOKENIZERS))
def test_huggingface_dumps_loads_roundtrip_equal(specials_first, kind):
    model = make_model(specials_first=specials_first, pretokenizer=PRETOKENIZERS[kind])
    assert huggingface.loads(huggingface.dumps(model), "mem") == model


@pytest.mark.parametrize("specials_first", [True, False], ids=["specials-first", "specials-last"])
def test_gpt2_save_load_roundtrip_equal(tmp_path, specials_first):
    model = make_model(specials_first=specials_first)
    gpt2.save(model, tmp_path / "out")
    assert gpt2.load(tmp_path / "out") == model
    assert (
        (tmp_path / "out" / "merges.txt").read_text(encoding="utf-8").startswith("#version: 0.2\n")
    )


def test_model_without_specials_roundtrips(tmp_path):
    base = make_model()
    model = BPEModel(
        base.tokens[2:], tuple((a - 2, b - 2) for a, b in base.merges), {}, base.pretokenizer
    )
    assert huggingface.loads(huggingface.dumps(model), "mem") == model
    gpt2.save(model, tmp_path)
    assert gpt2.load(tmp_path) == model


def test_huggingface_file_roundtrip_and_load_model(tmp_path):
    model = make_model(pretokenizer=resolve("whitespace"))
    huggingface.save(model, tmp_path / "tokenizer.json")
    assert huggingface.load(tmp_path / "tokenizer.json") == model
    assert load_model(tmp_path / "tokenizer.json") == model
    assert load_model(tmp_path) == model
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokenizer.json"]  # no temp file left


def test_written_files_are_utf8_without_escapes(tmp_path):
    model = make_model()
    huggingface.save(model, tmp_path / "tokenizer.json")
    gpt2.save(model, tmp_path)
    for name in ("tokenizer.json", "vocab.json", "merges.txt"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert "Ġ" in text and "\\u" not in text


def test_huggingface_reads_merges_written_as_lists():
    model = make_model()
    document = hf_document(model)
    document["model"]["merges"] = [merge.split(" ") for merge in document["model"]["merges"]]
    assert huggingface.loads(json.dumps(document), "mem") == model


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (WHITESPACE_PATTERN, Pretokenizer("whitespace", WHITESPACE_PATTERN)),
        (GPT2_PATTERN, Pretokenizer("gpt2", GPT2_PATTERN)),
        (r"\d+|\D+", Pretokenizer("regex", r"\d+|\D+")),
    ],
    ids=["whitespace", "gpt2", "regex"],
)
def test_huggingface_split_pattern_names_pretokenizer(pattern, expected):
    document = hf_document(make_model(pretokenizer=resolve("whitespace")))
    document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = pattern
    assert huggingface.loads(json.dumps(document), "mem").pretokenizer == expected


def test_huggingface_reads_special_outside_model_vocab():
    model = make_model(specials_first=False)
    document = hf_document(model)
    del document["model"]["vocab"]["<|pad|>"]  # the last id: tokenizers appends it
    assert huggingface.loads(json.dumps(document), "mem") == model


def test_save_is_atomic_when_the_write_fails(tmp_path, monkeypatch):
    target = tmp_path / "tokenizer.json"
    target.write_text("old", encoding="utf-8")

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        huggingface.save(make_model(), target)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["tokenizer.json"]


@pytest.mark.parametrize("writer", ["gpt2", "tiktoken"])
def test_two_file_formats_keep_both_old_files_when_the_second_write_fails(
    tmp_path, monkeypatch, writer
):
    """vocab.json + merges.txt, and a .tiktoken file + its sidecar, are one
    model: a failed write must not leave a new file beside an old one."""
    import bytepair
    from bytepair.formats.tiktoken import save_tiktoken, sidecar_path

    model = make_model()
    if writer == "gpt2":
        out = tmp_path / "gpt2"
        gpt2.save(model, out)
        files = [out / "vocab.json", out / "merges.txt"]

        def save():
            gpt2.save(make_model(specials_first=False), out)
    else:
        out = tmp_path / "t.tiktoken"
        save_tiktoken(bytepair.Tokenizer(model), out)
        files = [out, sidecar_path(out)]

        def save():
            save_tiktoken(bytepair.Tokenizer(make_model(specials_first=False)), out, overwrite=True)

    before = {p: p.read_bytes() for p in files}
    syncs = []
    real_fsync = os.fsync

    def fsync_fails_the_second_time(fd):
        syncs.append(fd)
        if len(syncs) == 2:
            raise OSError("disk full")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_fails_the_second_time)
    with pytest.raises(OSError, match="disk full"):
        save()
    assert {p: p.read_bytes() for p in files} == before
    assert sorted(p.name for p in files[0].parent.iterdir()) == sorted(p.name for p in files)


# ---------------------------------------------------------------------------
# What the writers refuse


@pytest.mark.parametrize("text", ["ab", "!", "Ġthe"])
def test_writers_refuse_special_equal_to_token_text(tmp_path, text):
    base = make_model(specials_first=False)
    model = BPEModel(
        base.tokens[:-1] + (text.encode(),),
        base.merges,
        {SPECIALS[0]: len(base.tokens) - 2, text: len(base.tokens) - 1},
        base.pretokenizer,
    )
    with pytest.raises(ValueError, match=rf"{text!r}.*share one key") as info:
        huggingface.dumps(model)
    assert f"special token {text!r}" in str(info.value)
    with pytest.raises(ValueError, match="share one key"):
        gpt2.save(model, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_dumps_refuses_repeated_merge():
    base = make_model()
    model = BPEModel(
        base.tokens, base.merges + base.merges[:1], base.special_tokens, base.pretokenizer
    )
    with pytest.raises(ValueError, match=rf"merge {len(base.merges) + 1} repeats merge 1"):
        huggingface.dumps(model)


@pytest.mark.parametrize("kind", ["none", "whitespace", "regex"])
def test_gpt2_save_refuses_other_pretokenizers(tmp_path, kind):
    with pytest.raises(ValueError, match="cannot record the pre-tokenizer.*huggingface"):
        gpt2.save(make_model(pretokenizer=PRETOKENIZERS[kind]), tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["r50k", "p50k"])
def test_gpt2_save_takes_tiktokens_spellings_of_the_gpt2_pattern(tmp_path, kind):
    ours = bytepair.Tokenizer(make_model(pretokenizer=resolve(kind)))
    gpt2.save(ours.model, tmp_path)
    back = bytepair.load(tmp_path)
    assert back.model.pretokenizer.kind == "gpt2"
    text = "It's  1234 words,\n\n  and   spaces  \t\r\n at the end  "
    assert back.encode_ordinary(text) == ours.encode_ordinary(text)


def test_gpt2_save_refuses_token_that_would_read_back_as_special(tmp_path):
    base = make_model()
    model = BPEModel(
        base.tokens + (b"orphan",), base.merges, base.special_tokens, base.pretokenizer
    )
    with pytest.raises(ValueError, match=r"b'orphan'.*read back as a special"):
        gpt2.save(model, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_tokenizer_save_gpt2_refused_before_making_the_directory(tmp_path):
    model = make_model(pretokenizer=PRETOKENIZERS["whitespace"])
    target = tmp_path / "new" / "dir"
    with pytest.raises(ValueError, match="cannot record the pre-tokenizer"):
        bytepair.Tokenizer(model).save(target, format="gpt2")
    assert list(tmp_path.iterdir()) == []
    bytepair.Tokenizer(make_model()).save(target, format="gpt2")  # a good model makes it
    assert sorted(p.name for p in target.iterdir()) == ["merges.txt", "vocab.json"]


def test_writers_take_the_models_read_only_mappings(tmp_path):
    """BPEModel keeps special_tokens / special_token_strip as read-only mappings;
    every writer serializes them."""
    from types import MappingProxyType

    from bytepair.formats import tiktoken as tiktoken_format

    base = make_model(specials_first=False)
    model = BPEModel(
        base.tokens,
        base.merges,
        base.special_tokens,
        base.pretokenizer,
        special_token_strip={"<|pad|>": (True, False)},
    )
    assert isinstance(model.special_tokens, MappingProxyType)
    assert isinstance(model.special_token_strip, MappingProxyType)
    assert huggingface.loads(huggingface.dumps(model)) == model
    gpt2.save(base, tmp_path / "g")
    assert gpt2.load(tmp_path / "g") == base
    tiktoken_style = _tiktoken_style_model()
    path, _ = tiktoken_format.save_tiktoken(tiktoken_style, tmp_path / "t.tiktoken")
    assert tiktoken_format.load_model(path) == tiktoken_style


# ---------------------------------------------------------------------------
# Corrupt tokenizer.json: FormatError naming the file and the place


def _set(path: tuple, value):
    def mutate(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _delete(*path):
    def mutate(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


def _rename_vocab_key(old, new):
    def mutate(document):
        vocab = document["model"]["vocab"]
        vocab[new] = vocab.pop(old)

    return mutate


def _vocab_id(document, key):
    return document["model"]["vocab"][key]


def _give_id(key, id_of):
    def mutate(document):
        document["model"]["vocab"][key] = _vocab_id(document, id_of)

    return mutate


def _move_last_id_up(document):
    vocab = document["model"]["vocab"]
    last = max(vocab, key=vocab.get)
    vocab[last] += 1


def _added_entry(token_id, content, special, normalized=True):
    """An added_tokens entry with every key tokenizers requires."""
    return {
        "id": token_id,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": normalized,
        "special": special,
    }


def _add_special(token_id_delta, content="<|new|>"):
    def mutate(document):
        n = len(document["model"]["vocab"])
        document["added_tokens"].append(_added_entry(n + token_id_delta, content, special=True))

    return mutate


def _set_merge(index, value):
    def mutate(document):
        document["model"]["merges"][index] = value

    return mutate


def _special_id_mismatch(document):
    document["added_tokens"][0]["id"] = 5


def _special_on_shifted_id(document):
    # A gap at id 265 moves 'ab' to 266, the id tokenizers gives a new token outside the vocab.
    _move_last_id_up(document)
    _add_special(0)(document)


CORRUPT_HF = {
    "missing-model": (_delete("model"), "top level", "missing key 'model'"),
    "missing-vocab": (_delete("model", "vocab"), "model", "missing key 'vocab'"),
    "missing-merges": (_delete("model", "merges"), "model", "missing key 'merges'"),
    "vocab-not-object": (_set(("model", "vocab"), []), "model.vocab", "expected a JSON object"),
    "foreign-char": (
        _rename_vocab_key("Ġt", "Ġ日"),
        "model.vocab key 'Ġ日'",
        "'日' (U+65E5) at position 1 is not in GPT-2's byte-level alphabet",
    ),
    "empty-key": (_rename_vocab_key("he", ""), "model.vocab key ''", "empty"),
    "id-not-integer": (_set(("model", "vocab", "he"), "7"), "model.vocab key 'he'", "'7'"),
    "duplicate-id": (_give_id("he", "a"), "model.vocab key", "is given to both"),
    "byte-missing": (
        _rename_vocab_key("Ċ", "ĊĊĊ"),
        "model.vocab",
        "single byte 0x0A (byte-level 'Ċ') is missing",
    ),
    "merge-three-tokens": (_set_merge(2, "Ġt h e"), "model.merges, merge 3", "two tokens"),
    "merge-one-token": (_set_merge(0, ["h"]), "model.merges, merge 1", "two tokens"),
    "merge-not-string": (_set_merge(4, 7), "model.merges, merge 5", "two tokens"),
    "merge-unknown-token": (
        _set_merge(1, "Ġxyz e"),
        "model.merges, merge 2",
        "token 'Ġxyz' is not in the vocabulary",
    ),
    "merge-result-missing": (
        _set_merge(3, "x y"),
        "model.merges, merge 4",
        "merge result 'xy' ('x' + 'y') is not in the vocabulary",
    ),
    "merge-names-special": (
        _set_merge(0, "<|pad|> a"),
        "model.merges, merge 1",
        "special token '<|pad|>'",
    ),
    "merge-repeated": (
        _set_merge(8, "h e"),
        "model.merges, merge 9",
        "repeats merge 1",
    ),
    "added-token-beyond-vocab": (
        _add_special(3),
        "added_tokens[2]",
        "'<|new|>' (id 269) is not in model.vocab, so tokenizers gives it id 266, not 269",
    ),
    "added-token-below-vocab-size": (
        _add_special(-1),
        "added_tokens[2]",
        "tokenizers gives it id 266, not 265",
    ),
    "added-token-id-mismatch": (
        _special_id_mismatch,
        "added_tokens[0]",
        "id 5 in the added tokens but id 0 in the vocabulary",
    ),
    "added-token-takes-used-id": (
        _special_on_shifted_id,
        "added_tokens (id 266, '<|new|>')",
        "id 266 is given to both 'ab' and '<|new|>'",
    ),
    "added-token-missing-id": (
        _delete("added_tokens", 0, "id"),
        "added_tokens[0]",
        "missing key 'id'",
    ),
    "added-token-empty": (_set(("added_tokens", 1, "content"), ""), "added_tokens[1]", "non-empty"),
    # tokenizers refuses it too; taken as false, the special became an ordinary added token.
    "added-token-missing-special": (
        _delete("added_tokens", 0, "special"),
        "added_tokens[0]",
        "missing key 'special'",
    ),
    # The same for the other flags: read as false, a file tokenizers refuses loaded.
    **{
        f"added-token-missing-{flag}": (
            _delete("added_tokens", 0, flag),
            "added_tokens[0]",
            f"missing key '{flag}'",
        )
        for flag in ("lstrip", "rstrip", "single_word", "normalized")
    },
    "added-token-flag-as-string": (
        _set(("added_tokens", 0, "lstrip"), "true"),
        "added_tokens[0].lstrip",
        'expected true or false, got "true"',
    ),
}


@pytest.mark.parametrize("case", list(CORRUPT_HF))
def test_corrupt_huggingface_file_names_file_and_place(tmp_path, case):
    mutate, where, problem = CORRUPT_HF[case]
    document = hf_document()
    mutate(document)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        huggingface.load(path)
    message = str(info.value)
    assert message.startswith(f"{path} ("), message
    assert where in info.value.where, message
    assert problem in info.value.problem, message


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "tokenizer.json"
    text = huggingface.dumps(make_model())
    path.write_text(text.replace('"merges": [', '"merges": [,', 1), encoding="utf-8")
    line = text[: text.index('"merges": [')].count("\n") + 1
    with pytest.raises(FormatError, match=rf"{path} \(line {line}, column \d+\): invalid JSON"):
        load_model(path)


def test_repeated_json_key_is_an_error():
    with pytest.raises(FormatError, match=r"mem \(key 'a'\): the key appears twice"):
        huggingface.loads('{"model": {"vocab": {"a": 0, "a": 1}, "merges": []}}', "mem")


def test_non_utf8_file_names_byte_offset(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b'{\n"x": "\xff"}')
    with pytest.raises(
        FormatError, match=r"\(line 2\): not UTF-8 text \(byte 0x[0-9A-F]{2} at offset 8, line 2\)"
    ):
        huggingface.load(path)


def test_top_level_must_be_an_object():
    with pytest.raises(FormatError, match=r"mem \(top level\): expected a JSON object"):
        huggingface.loads("[]", "mem")


# ---------------------------------------------------------------------------
# Components we do not read: FormatError naming the component and its value


def _pretokenizer_step(index, key, value):
    def mutate(document):
        document["pre_tokenizer"]["pretokenizers"][index][key] = value

    return mutate


def _replace_pretokenizer(value):
    return _set(("pre_tokenizer",), value)


def _ignore_merges_with_orphan(document):
    # 'zz' is in the vocabulary but no merge makes it: the whole-piece lookup would.
    document["model"]["vocab"]["zz"] = len(document["model"]["vocab"])
    document["model"]["ignore_merges"] = True


UNSUPPORTED_HF = {
    "normalizer": (_set(("normalizer",), {"type": "NFD"}), "normalizer", '"NFD"'),
    "post_processor": (
        _set(("post_processor",), {"type": "UnknownProcessing"}),
        "post_processor",
        "UnknownProcessing",
    ),
    "post_processor-in-sequence": (
        _set(
            ("post_processor",),
            {"type": "Sequence", "processors": [{"type": "ByteLevel"}, {"type": "Other"}]},
        ),
        "post_processor.processors[1]",
        '"Other"',
    ),
    "truncation": (_set(("truncation",), {"max_length": 5}), "truncation", "max_length"),
    "padding": (_set(("padding",), {"pad_id": 0}), "padding", "pad_id"),
    "decoder": (_set(("decoder",), {"type": "WordPiece"}), "decoder", "WordPiece"),
    "model-type": (_set(("model", "type"), "Unigram"), "model.type", '"Unigram"'),
    "byte_fallback": (_set(("model", "byte_fallback"), True), "model.byte_fallback", "true"),
    "dropout": (_set(("model", "dropout"), 0.1), "model.dropout", "0.1"),
    "ignore_merges": (_ignore_merges_with_orphan, "model.ignore_merges", "b'zz' (id 266)"),
    "prefix": (
        _set(("model", "continuing_subword_prefix"), "##"),
        "model.continuing_subword_prefix",
        '"##"',
    ),
    "suffix": (_set(("model", "end_of_word_suffix"), "</w>"), "model.end_of_word_suffix", "</w>"),
    "add_prefix_space": (
        _set(("pre_tokenizer", "add_prefix_space"), True),
        "pre_tokenizer.add_prefix_space",
        "true",
    ),
    "pretokenizer-type": (
        _replace_pretokenizer({"type": "Whitespace"}),
        "pre_tokenizer",
        '"Whitespace"',
    ),
    "no-pretokenizer": (_replace_pretokenizer(None), "pre_tokenizer", "null"),
    # Without a decoder tokenizers joins the tokens' strings ('Ġ' and all) with spaces.
    "no-decoder": (_set(("decoder",), None), "decoder", "joined by spaces"),
    "non-special-single-word": (
        lambda document: document["added_tokens"][0].update(special=False, single_word=True),
        "added_tokens[0].single_word",
        "'<|endoftext|>' (id 0) is not special",
    ),
    "special-not-a-bool": (
        _set(("added_tokens", 0, "special"), "yes"),
        "added_tokens[0].special",
        '"yes"',
    ),
    "version": (_set(("version",), "2.0"), "version", '"2.0"'),
}


@pytest.mark.parametrize("case", list(UNSUPPORTED_HF))
def test_unsupported_component_is_named(case):
    mutate, where, shown = UNSUPPORTED_HF[case]
    document = hf_document()
    mutate(document)
    with pytest.raises(FormatError) as info:
        huggingface.loads(json.dumps(document), "tok.json")
    assert info.value.path == "tok.json"
    assert info.value.where == where, str(info.value)
    assert shown in info.value.problem, str(info.value)


SPLIT_CASES = {
    "empty-string-pattern": (_pretokenizer_step(0, "pattern", {"String": ""}), "pattern", "String"),
    "behavior": (_pretokenizer_step(0, "behavior", "Removed"), "behavior", "Removed"),
    "invert": (_pretokenizer_step(0, "invert", True), "invert", "true"),
    "second-regex": (_pretokenizer_step(1, "use_regex", True), "use_regex", "second regex"),
}


@pytest.mark.parametrize("case", list(SPLIT_CASES))
def test_unsupported_split_option_is_named(case):
    mutate, key, shown = SPLIT_CASES[case]
    document = hf_document(make_model(pretokenizer=resolve("whitespace")))
    mutate(document)
    with pytest.raises(FormatError) as info:
        huggingface.loads(json.dumps(document), "tok.json")
    assert info.value.where.startswith("pre_tokenizer.pretokenizers[")
    assert info.value.where.endswith(key) and shown in info.value.problem, str(info.value)


# ---------------------------------------------------------------------------
# Corrupt vocab.json + merges.txt


def _gpt2_case(tmp_path, vocab, merges):
    return write_gpt2_pair(tmp_path / "tok", vocab, merges)


def test_gpt2_malformed_merge_line_names_line(tmp_path):
    vocab, merges = gpt2_tables()
    merges[3] = "Ġt h e"
    directory = _gpt2_case(tmp_path, vocab, merges)
    with pytest.raises(FormatError) as info:
        gpt2.load(directory)
    assert str(info.value).startswith(f"{directory / 'merges.txt'} (line 5): expected a merge")


@pytest.mark.parametrize(
    ("line", "merge", "problem"),
    [
        (10, "Ġxyz e", "token 'Ġxyz' is not in the vocabulary"),
        (4, "x y", "merge result 'xy' ('x' + 'y') is not in the vocabulary"),
        (10, "h e", "repeats merge 1"),
    ],
    ids=["unknown-token", "result-missing", "repeated"],
)
def test_gpt2_bad_merge_names_line(tmp_path, line, merge, problem):
    vocab, merges = gpt2_tables()
    merges[line - 2] = merge
    directory = _gpt2_case(tmp_path, vocab, merges)
    with pytest.raises(FormatError) as info:
        load_model(directory)
    assert info.value.path == str(directory / "merges.txt")
    assert info.value.where == f"line {line}" and problem in info.value.problem, str(info.value)


def test_gpt2_merge_of_unmade_token_names_line(tmp_path):
    vocab, merges = gpt2_tables()
    vocab["zz"] = len(vocab)
    merges.append("zz a")
    vocab["zza"] = len(vocab)
    directory = _gpt2_case(tmp_path, vocab, merges)
    with pytest.raises(FormatError, match=r"merges.txt \(line 11\): token 'zz' is neither"):
        gpt2.load(directory)


@pytest.mark.parametrize(
    ("mutate", "where", "problem"),
    [
        (lambda v: v.__setitem__("ĊĊĊ", v.pop("Ċ")), None, "single byte 0x0A"),
        (lambda v: v.__setitem__("he", v["a"]), "key 'he'", "is given to both"),
        (lambda v: v.__setitem__("he", -1), "key 'he'", "not a non-negative integer"),
        (lambda v: v.__setitem__("he", True), "key 'he'", "not a non-negative integer"),
    ],
    ids=["byte-missing", "duplicate-id", "negative-id", "boolean-id"],
)
def test_gpt2_bad_vocab_names_file_and_key(tmp_path, mutate, where, problem):
    vocab, merges = gpt2_tables()
    mutate(vocab)
    directory = _gpt2_case(tmp_path, vocab, merges)
    with pytest.raises(FormatError) as info:
        gpt2.load(directory)
    assert info.value.path == str(directory / "vocab.json")
    assert info.value.where == where and problem in info.value.problem, str(info.value)


@pytest.mark.parametrize("name", ["vocab.json", "encoder.json"])
@pytest.mark.parametrize("key", ["<|endoftext|>\ud800", "x\udc80"], ids=["special", "ordinary"])
def test_gpt2_lone_surrogate_in_vocab_key_names_the_key(tmp_path, name, key):
    """JSON's "\\ud800" escape reads as a lone surrogate, text with no UTF-8 bytes."""
    vocab, merges = gpt2_tables()
    vocab[key] = vocab.pop("<|pad|>")
    directory = tmp_path / "tok"
    directory.mkdir()
    (directory / name).write_text(json.dumps(vocab), encoding="ascii")  # escaped
    merges_name = "merges.txt" if name == "vocab.json" else "vocab.bpe"
    (directory / merges_name).write_text("\n".join(["#version: 0.2", *merges]) + "\n")
    for load in (gpt2.load, load_model, bytepair.load):
        with pytest.raises(FormatError, match="lone surrogate") as info:
            load(directory)
        assert info.value.path == str(directory / name)
        assert info.value.where == f"key {key!r}", str(info.value)
        str(info.value).encode("utf-8")  # the message itself can be printed


def test_huggingface_lone_surrogate_in_added_token_names_it(tmp_path):
    document = hf_document(make_model(specials_first=False))
    size = len(document["model"]["vocab"])
    document["added_tokens"].append(
        _added_entry(size, "<pad\udc80>", special=True, normalized=False)
    )
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="ascii")  # the escape "\\udc80"
    for load in (huggingface.load, bytepair.load, lambda p: huggingface.loads(p.read_text())):
        with pytest.raises(FormatError, match="lone surrogate '\\\\udc80' at position 4") as info:
            load(path)
        assert info.value.where == "added_tokens[2]", str(info.value)
        str(info.value).encode("utf-8")
    # The special's text as a model.vocab key too: the added token is named first.
    document["added_tokens"][-1]["id"] = document["model"]["vocab"].pop("<|pad|>")
    document["added_tokens"][1]["content"] = "<pad\udc80>"
    document["added_tokens"].pop()
    document["model"]["vocab"]["<pad\udc80>"] = document["added_tokens"][1]["id"]
    path.write_text(json.dumps(document), encoding="ascii")
    with pytest.raises(FormatError, match="lone surrogate") as info:
        bytepair.load(path)
    assert info.value.where == "added_tokens[1]", str(info.value)


def test_huggingface_lone_surrogate_in_vocab_key_names_it(tmp_path):
    document = hf_document(make_model(specials_first=False))
    document["model"]["vocab"]["x\udc80"] = len(document["model"]["vocab"])
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="ascii")
    with pytest.raises(FormatError, match="lone surrogate") as info:
        bytepair.load(path)
    assert info.value.where == "model.vocab key 'x\\udc80'", str(info.value)


def test_gpt2_invalid_vocab_json_names_line_and_column(tmp_path):
    directory = _gpt2_case(tmp_path, *gpt2_tables())
    (directory / "vocab.json").write_text('{"a": 0,\n "b": }', encoding="utf-8")
    with pytest.raises(FormatError, match=r"vocab.json \(line 2, column 7\): invalid JSON"):
        gpt2.load(directory)


def test_gpt2_vocab_must_be_an_object(tmp_path):
    directory = _gpt2_case(tmp_path, *gpt2_tables())
    (directory / "vocab.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(FormatError, match=r"vocab.json \(top level\): expected a JSON object"):
        gpt2.load(directory)


# ---------------------------------------------------------------------------
# load_model: what it looks for


def test_load_model_prefers_tokenizer_json(tmp_path):
    gpt2.save(make_model(), tmp_path)
    model = make_model(pretokenizer=resolve("none"))
    huggingface.save(model, tmp_path / "tokenizer.json")
    assert load_model(tmp_path) == model


def test_load_model_reads_gpt2_pair(tmp_path):
    model = make_model(specials_first=False)
    gpt2.save(model, tmp_path)
    assert load_model(tmp_path) == model


def test_load_model_names_what_it_looked_for(tmp_path):
    with pytest.raises(FormatError, match="looked for tokenizer.json, then for vocab.json"):
        load_model(tmp_path)
    (tmp_path / "vocab.json").write_text("{}", encoding="utf-8")
    with pytest.raises(FormatError, match="found vocab.json but not merges.txt"):
        load_model(tmp_path)
    with pytest.raises(FormatError, match="no such file or directory: expected a tokenizer.json"):
        load_model(tmp_path / "absent")
    if hasattr(os, "mkfifo"):  # it exists: not "no such file"
        os.mkfifo(tmp_path / "pipe")
        with pytest.raises(FormatError, match="pipe: not a regular file or a directory"):
            bytepair.load(tmp_path / "pipe")


# ---------------------------------------------------------------------------
# Real files


def _gpt2_files(tmp_path) -> Path:
    source = SHARED_DATA / "models" / "gpt2"
    if not (source / "encoder.json").is_file() or not (source / "vocab.bpe").is_file():
        pytest.skip(f"shared data absent: {source} (set BYTEPAIR_SHARED_DATA)")
    tmp_path.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "encoder.json", tmp_path / "vocab.json")
    shutil.copyfile(source / "vocab.bpe", tmp_path / "merges.txt")
    return tmp_path


def test_real_gpt2_files_load(tmp_path):
    model = load_model(_gpt2_files(tmp_path))
    assert len(model.tokens) == 50257 and len(model.merges) == 50000
    assert model.special_tokens == {"<|endoftext|>": 50256}
    assert model.tokens[262] == b" the" and model.tokens[198] == b"\n"
    assert model.pretokenizer == resolve("gpt2")


@pytest.mark.slow
def test_real_gpt2_files_roundtrip_through_both_formats(tmp_path):
    source = _gpt2_files(tmp_path / "in")
    model = gpt2.load(source)
    gpt2.save(model, tmp_path / "out")
    assert (tmp_path / "out" / "merges.txt").read_bytes() == (source / "merges.txt").read_bytes()
    assert json.loads((tmp_path / "out" / "vocab.json").read_text(encoding="utf-8")) == json.loads(
        (source / "vocab.json").read_text(encoding="utf-8")
    )
    assert huggingface.loads(huggingface.dumps(model), "mem") == model


# ---------------------------------------------------------------------------
# The peer reads what we write (structure only; ids are compared with the core elsewhere)


@pytest.mark.parametrize("kind", list(PRETOKENIZERS))
def test_tokenizers_reads_our_tokenizer_json(tmp_path, kind):
    tokenizers = pytest.importorskip("tokenizers")
    model = make_model(pretokenizer=PRETOKENIZERS[kind])
    path = tmp_path / "tokenizer.json"
    huggingface.save(model, path)
    peer = tokenizers.Tokenizer.from_file(str(path))
    assert peer.get_vocab_size() == len(model.tokens)
    assert peer.token_to_id("<|endoftext|>") == 0 and peer.token_to_id("<|pad|>") == 1
    assert peer.token_to_id("Ġthe") == model.tokens.index(b" the")
    assert peer.token_to_id("abc") == model.tokens.index(b"abc")
    assert peer.token_to_id("Ã©") == model.tokens.index("é".encode())
    assert peer.token_to_id("Ċ") == model.tokens.index(b"\n")


def test_tokenizers_reads_real_gpt2_written_by_us(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    model = gpt2.load(_gpt2_files(tmp_path / "in"))
    huggingface.save(model, tmp_path / "tokenizer.json")
    peer = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert peer.get_vocab_size() == 50257
    assert peer.token_to_id("<|endoftext|>") == 50256 and peer.token_to_id("Ġthe") == 262


# ---------------------------------------------------------------------------
# Unused ids, and what tokenizers does with added tokens


def _with_gap(model: BPEModel, at: int) -> BPEModel:
    """``model`` with an unused id inserted at ``at`` (later ids move up by one)."""

    def move(i: int) -> int:
        return i + 1 if i >= at else i

    tokens = model.tokens[:at] + (None,) + model.tokens[at:]
    merges = tuple((move(a), move(b)) for a, b in model.merges)
    specials = {text: move(i) for text, i in model.special_tokens.items()}
    return BPEModel(tokens, merges, specials, model.pretokenizer)


@pytest.mark.parametrize("at", [258, 262], ids=["between-bytes", "between-merges"])
def test_vocabulary_with_unused_ids_roundtrips(tmp_path, at):
    model = _with_gap(make_model(specials_first=False), at)
    assert model.tokens[at] is None
    assert huggingface.loads(huggingface.dumps(model), "mem") == model
    gpt2.save(model, tmp_path)
    assert gpt2.load(tmp_path) == model
    assert str(at) not in json.loads((tmp_path / "vocab.json").read_text("utf-8")).values()


def test_unused_id_is_no_key_in_the_written_vocabulary():
    model = _with_gap(make_model(specials_first=False), 300)
    vocab = hf_document(model)["model"]["vocab"]
    assert 300 not in vocab.values() and len(vocab) == len(model.tokens) - 1


def test_tokenizers_numbering_of_added_tokens_outside_the_vocab():
    model = make_model(specials_first=False)
    document = hf_document(model)
    for text in SPECIALS:
        del document["model"]["vocab"][text]
    # tokenizers numbers them from the vocabulary's size up, in file order: 264, 265.
    assert huggingface.loads(json.dumps(document), "mem") == model
    document["added_tokens"].reverse()
    with pytest.raises(FormatError, match=r"gives it id 264, not 265") as info:
        huggingface.loads(json.dumps(document), "mem")
    assert info.value.where == "added_tokens[0]"


def _warnings_of(document) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        huggingface.loads(json.dumps(document), "tok.json")
    return [str(w.message) for w in caught]


TEMPLATE_WITH_BOS = {
    "type": "TemplateProcessing",
    "single": [
        {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
        {"Sequence": {"id": "A", "type_id": 0}},
    ],
    "pair": [],
    "special_tokens": {},
}


@pytest.mark.parametrize(
    ("post_processor", "named"),
    [
        ({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]}, "RobertaProcessing"),
        ({"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 0]}, "BertProcessing"),
        (TEMPLATE_WITH_BOS, "TemplateProcessing"),
        (
            {"type": "Sequence", "processors": [{"type": "ByteLevel"}, TEMPLATE_WITH_BOS]},
            "TemplateProcessing",
        ),
    ],
    ids=["roberta", "bert", "template", "llama3-sequence"],
)
def test_post_processor_that_adds_tokens_loads_with_a_warning(post_processor, named):
    document = hf_document()
    document["post_processor"] = post_processor
    messages = _warnings_of(document)
    assert len(messages) == 1, messages
    assert messages[0].startswith("tok.json: post_processor " + named)
    assert "add_special_tokens=False" in messages[0]


@pytest.mark.parametrize(
    "post_processor",
    [
        None,
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False},
        {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}]},
    ],
    ids=["none", "byte-level", "template-adding-nothing"],
)
def test_post_processor_that_adds_nothing_loads_silently(post_processor):
    document = hf_document()
    document["post_processor"] = post_processor
    assert _warnings_of(document) == []


def test_single_word_loads_with_a_warning():
    document = hf_document()
    document["added_tokens"][1]["single_word"] = True
    messages = _warnings_of(document)
    assert len(messages) == 1 and "'<|pad|>' single_word" in messages[0], messages


@pytest.mark.parametrize("option", ["lstrip", "rstrip"])
def test_special_token_strip_options_are_read_and_written_back(option):
    document = hf_document()
    document["added_tokens"][1][option] = True
    assert _warnings_of(document) == []
    model = huggingface.loads(json.dumps(document), "mem")
    expected = (option == "lstrip", option == "rstrip")
    assert model.special_token_strip == {"<|pad|>": expected}
    assert huggingface.loads(huggingface.dumps(model), "mem") == model


def test_added_tokens_of_both_normalized_kinds_that_can_overlap_are_refused():
    model = make_model(specials_first=False)
    document = hf_document(model)
    document["added_tokens"][1]["normalized"] = True  # '<|pad|>'; '<|endoftext|>' is not
    # '<|endoftext|>' and '<|pad|>' cannot overlap: fine.
    assert huggingface.loads(json.dumps(document), "mem") == model
    document["added_tokens"][1]["content"] = "|><|p"
    document["model"]["vocab"]["|><|p"] = document["model"]["vocab"].pop("<|pad|>")
    with pytest.raises(FormatError, match=r"'<\|endoftext\|>' \(normalized false\) and '\|><\|p'"):
        huggingface.loads(json.dumps(document), "mem")


def test_special_overlap_rule():
    from bytepair.formats.huggingface import _overlap

    assert _overlap("<a>", "a>b") and _overlap("x<a", "<a>") and _overlap("<a>", "<a>>")
    assert not _overlap("<|a|>", "<|b|>") and not _overlap("ab", "cd")


# ---------------------------------------------------------------------------
# ignore_merges and tiktoken's rule


def test_inert_ignore_merges_reads_as_the_merge_list():
    model = make_model()
    document = hf_document(model)
    document["model"]["ignore_merges"] = True  # every token is what merging its bytes gives
    assert huggingface.loads(json.dumps(document), "mem") == model


def _tiktoken_style_model(pretokenizer: Pretokenizer | None = None) -> BPEModel:
    """Bytes, then 'ab' (256), 'abc' (257), 'bc' (258), an unused id, a special."""
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b"bc", None, b"<|end|>"]
    return BPEModel(tuple(tokens), None, {"<|end|>": 260}, pretokenizer or resolve("cl100k"))


def test_tiktoken_rule_model_roundtrips_through_tokenizer_json():
    model = _tiktoken_style_model()
    document = hf_document(model)
    assert document["model"]["ignore_merges"] is True
    assert document["model"]["merges"] == ["a b", "ab c", "b c"]
    assert huggingface.loads(json.dumps(document), "mem") == model


def test_token_made_only_after_higher_ranked_merges_gets_its_merge():
    # 'abc' (256) ranks below 'ab' (257): with ranks below its own nothing merges, yet
    # tiktoken's rule makes it in "abcd" (ab first, then ab + c).
    tokens = [bytes([b]) for b in range(256)] + [b"abc", b"ab"]
    model = BPEModel(tuple(tokens), None, {}, resolve("none"))
    document = hf_document(model)
    assert document["model"]["merges"] == ["ab c", "a b"]
    assert huggingface.loads(json.dumps(document), "mem") == model


def test_merge_list_out_of_tiktoken_order_with_lookup_is_refused():
    model = _tiktoken_style_model()
    document = hf_document(model)
    document["model"]["merges"].reverse()  # "ab c" before "a b": not id order, and abc unmade
    with pytest.raises(FormatError, match=r"merging their own bytes does not make these tokens"):
        huggingface.loads(json.dumps(document), "mem")


@pytest.mark.parametrize("special", ["Ġhi", "Ã©"])
def test_special_that_the_whole_piece_lookup_would_return_is_refused(special):
    base = _tiktoken_style_model()
    model = BPEModel(
        base.tokens[:-1] + (special.encode(),), None, {special: 260}, base.pretokenizer
    )
    with pytest.raises(ValueError, match="whole-piece lookup"):
        huggingface.dumps(model)
    document = hf_document(_tiktoken_style_model())
    document["added_tokens"][0]["content"] = special
    document["model"]["vocab"][special] = document["model"]["vocab"].pop("<|end|>")
    with pytest.raises(FormatError, match=r"model.ignore_merges.*whole-piece lookup"):
        huggingface.loads(json.dumps(document), "mem")


def test_gpt2_save_of_tiktoken_rule_model(tmp_path):
    model = _tiktoken_style_model(resolve("gpt2"))
    gpt2.save(model, tmp_path)
    assert (tmp_path / "merges.txt").read_text("utf-8").splitlines()[1:] == ["a b", "ab c", "b c"]
    loaded = gpt2.load(tmp_path)
    assert loaded.tokens == model.tokens and loaded.special_tokens == model.special_tokens
    unmade = BPEModel(model.tokens[:-2] + (b"xyz",), None, {}, model.pretokenizer)
    with pytest.raises(ValueError, match=r"b'xyz' \(id 259\) is neither a single byte"):
        gpt2.save(unmade, tmp_path / "other")


# ---------------------------------------------------------------------------
# GPT-2 files under OpenAI's names; .tiktoken files


def test_load_model_reads_openai_file_names(tmp_path):
    model = make_model(specials_first=False)
    gpt2.save(model, tmp_path / "tmp")
    os.rename(tmp_path / "tmp" / "vocab.json", tmp_path / "encoder.json")
    os.rename(tmp_path / "tmp" / "merges.txt", tmp_path / "vocab.bpe")
    assert load_model(tmp_path) == model
    assert gpt2.load(tmp_path) == model
    (tmp_path / "vocab.bpe").unlink()
    with pytest.raises(FormatError, match="found encoder.json but not vocab.bpe"):
        load_model(tmp_path)


def test_load_model_names_openai_pair_when_nothing_found(tmp_path):
    with pytest.raises(FormatError, match="then for encoder.json with vocab.bpe"):
        load_model(tmp_path)


def test_load_model_routes_tiktoken_files(tmp_path, monkeypatch):
    from bytepair.formats import tiktoken as tiktoken_format

    seen = []
    monkeypatch.setattr(tiktoken_format, "load_model", lambda path: seen.append(path) or "model")
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(b"")
    assert load_model(path) == "model" and seen == [path]


def test_a_tiktoken_sidecar_that_is_no_json_file_or_says_version_true_is_refused(tmp_path):
    from bytepair.formats import tiktoken as tiktoken_format

    path = tmp_path / "mine.tiktoken"
    path.write_bytes(b"YQ== 0\nYg== 1\n")
    sidecar = tiktoken_format.sidecar_path(path)
    sidecar.mkdir()
    with pytest.raises(FormatError, match=r"mine\.tiktoken\.json: is not a file"):
        tiktoken_format.load_model(path)
    sidecar.rmdir()
    document = {"format": tiktoken_format.SIDECAR_FORMAT, "version": True}
    sidecar.write_text(json.dumps(document))
    with pytest.raises(FormatError, match="version True is not supported"):
        tiktoken_format.load_model(path)


def test_bad_special_tokens_of_a_sidecar_name_the_sidecar_and_key(tmp_path):
    from bytepair.formats import tiktoken as tiktoken_format

    path = tmp_path / "mine.tiktoken"
    path.write_bytes(b"YQ== 0\nYg== 1\n")
    sidecar = tiktoken_format.sidecar_path(path)
    document = {
        "format": tiktoken_format.SIDECAR_FORMAT,
        "version": tiktoken_format.SIDECAR_VERSION,
        "pretokenizer": {"kind": "regex", "pattern": r"\w+|\s+"},
        "special_tokens": {"<|end|>": 1},  # the rank of b"b"
    }
    sidecar.write_text(json.dumps(document))
    with pytest.raises(FormatError, match="also the rank of the token b'b'") as info:
        tiktoken_format.load_model(path)
    assert (info.value.path, info.value.where) == (str(sidecar), "special_tokens")
    # Given as an argument instead, the special tokens are the caller's.
    model = tiktoken_format.load_model(path, special_tokens={"<|end|>": 2})
    assert model.special_tokens == {"<|end|>": 2}


# ---------------------------------------------------------------------------
# Split regexes: written in tokenizers' dialect, read back to ours


def test_fold_pairs_are_the_ascii_multi_character_case_folds():
    folds = {chr(c).casefold() for c in range(0x110000) if len(chr(c).casefold()) > 1}
    pairs = {f[i : i + 2] for f in folds if f.isascii() and f.isalpha() for i in range(len(f) - 1)}
    assert pairs == set(hf_regex.FOLD_PAIRS)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (r"\p{N}{1,3}+", r"(?>\p{N}{1,3})"),
        (r"\s++$|\s", r"\s++\z|\s"),
        (r"^\s+|\S+", r"\A\s+|\S+"),
        (
            r"\w+|\W+",
            r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+"
            r"|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+",
        ),
        (r"[\w'-]+|\s", r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}'-]+|\s"),
        (r"(?m:^)a|(?m:$)\n|b", r"^a|$\n|b"),
        (r"(?:\p{N}{1,3})+|x", r"(?:\p{N}{1,3})+|x"),
        (r"(?i:'s|'t|'re)|\p{L}+|\p{N}{1,3}|\s+", r"(?i:'s|'t|'re)|\p{L}+|\p{N}{1,3}|\s+"),
    ],
)
def test_pattern_translation_both_ways(ours, theirs):
    assert hf_regex.to_tokenizers(ours) == theirs
    assert hf_regex.from_tokenizers(theirs) == ours


@pytest.mark.parametrize(
    ("theirs", "ours"),
    [
        (r"\p{N}{1,3}+", r"(?:\p{N}{1,3})+"),  # Oniguruma: a repeated interval, not possessive
        # Oniguruma's bare \w also has Latin-1's ² ³ ¹ ¼ ½ ¾; inside a class it does not.
        (r"\w+", r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\xB2\xB3\xB9\xBC-\xBE]+"),
        (r"\W", r"[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\xB2\xB3\xB9\xBC-\xBE]"),
        (r"[^\w\s]+", r"[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\s]+"),
        (r"\s+$|\S", r"\s+(?m:$)|\S"),
        (r"\s+\z|\S", r"\s+$|\S"),
        (r"x\d{2}?y|\S", r"x(?:\d{2})?y|\S"),  # Oniguruma: X{n}? is an optional X{n}
        (r"x\d{1,2}?|\S", r"x\d{1,2}?|\S"),  # ... but X{n,m}? is lazy, as in ours
        (r"(?>\p{N}{1,3})|.", r"\p{N}{1,3}+|."),
        (r"(?>\p{N}{1,3}){2}|.", r"(?>\p{N}{1,3}){2}|."),  # not \p{N}{1,3}+{2}
        (r"(?>\p{N}{1,3})+|\D+", r"(?>\p{N}{1,3})+|\D+"),  # not \p{N}{1,3}++
        (r"(?>(?>a{1,2}){2})|.", r"(?>a{1,2}){2}+|."),
        (r"\x{E9}+|\x41", r"\x{E9}+|\x41"),
    ],
)
def test_tokenizers_patterns_read_in_our_dialect(theirs, ours):
    assert hf_regex.from_tokenizers(theirs) == ours


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (r"xa{2}?b|.", r"xa{2}b|."),  # a lazy X{n} is X{n}; Oniguruma's X{n}? is optional
        (r"xa{2,2}?b|a{2,}?|.", r"xa{2,2}?b|a{2,}?|."),
        (r"[\xC0-\xFF]+|\xE9|\x41", r"[\x{C0}-\x{FF}]+|\x{E9}|\x41"),  # \xE9 is a byte there
        (r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}-]+", r"[\w-]+"),  # Oniguruma's \w in a class
        (r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}]+", r"[\w]+"),  # ... which bare \w is not
        # Oniguruma refuses a quantifier on (?:b|$), not on these:
        (r"a(?:b\z)+|a(b|$)+|a(?:(?i)b|$)+", r"a(?:b\z)+|a(b|\z)+|a(?:(?i)b|\z)+"),
    ],
)
def test_our_patterns_written_in_tokenizers_dialect(ours, theirs):
    assert hf_regex.to_tokenizers(ours) == theirs


@pytest.mark.parametrize("theirs", [r"\w+|[^\w\s]+|\s+", r"[\w-]+|\W", r"[^\w]|(?>\d{1,3})|\s"])
def test_tokenizers_patterns_read_and_written_back_unchanged(theirs):
    assert hf_regex.to_tokenizers(hf_regex.from_tokenizers(theirs)) == theirs


@pytest.mark.parametrize(("theirs", "construct"), [(r"\xE9", r"\xE9"), (r"[a\xC3\xA9]", r"\xC3")])
def test_raw_utf8_bytes_in_tokenizers_patterns_are_refused(theirs, construct):
    assert hf_regex.to_tokenizers(theirs)  # ours: the character U+00E9
    with pytest.raises(hf_regex.UnsupportedPattern) as info:
        hf_regex.from_tokenizers(theirs)
    assert info.value.construct == construct and "UTF-8" in str(info.value)


@pytest.mark.parametrize(
    ("pattern", "construct", "reason"),
    [
        ("a*|b", "a*|b", "empty string"),
        (r"(?i:ss)|x", "(?i:ss)|x", "'ss'"),
        (r"(?i)s+", "(?i)s+", "'ss'"),
        (r"(?i:st)", "(?i:st)", "'st'"),
        (r"(?i:é)", "é", "non-ASCII"),
        (r"a(?i)b|c", "(?i)", "only at the start of a group"),
        (r"\bx", r"\b", r"\b is not supported"),
        (r"\<x", r"\<", r"\< is not supported"),
        (r"\Zx", r"\Z", r"\Z is not supported"),
        (r"(?<=a)b", "(?<=", "look-behind"),
        (r"(?m)a", "(?m", "groups are supported"),
        (r"(?P<n>a)", "(?P", "groups are supported"),
        (r"\p{Greek}", r"\p{Greek}", "'Greek'"),
        (r"[[:alpha:]]", "[", "POSIX"),
        (r"[a&&b]", "&&", "set operations"),
        (r"a{,3}", "{,3}", "{n,m}"),
        (r"a{2}*", "*", "quantifier on a quantifier"),
        (r"x{1,3}+?", "?", "quantifier on a quantifier"),
        (r"\1", r"\1", r"\1 is not supported"),
        (r"[\W]", r"\W", "inside a class"),
        (r"a{", "{", "{n,m}"),
        (r"a(?:b|$)+", "(?:b|$)+", "(Oniguruma) refuses"),
        (r"a(?:b|(?:c|(?=d))){2}", "(?:b|(?:c|(?=d))){", "(Oniguruma) refuses"),
        (r"a\A*", r"\A*", "(Oniguruma) refuses"),
    ],
)
def test_untranslatable_patterns_name_the_construct(pattern, construct, reason):
    for translate in (hf_regex.from_tokenizers, hf_regex.to_tokenizers):
        with pytest.raises(hf_regex.UnsupportedPattern) as info:
            translate(pattern)
        assert info.value.construct == construct, str(info.value)
        assert reason in str(info.value)


@pytest.mark.parametrize("name", [n for n, p in BUILTIN_PATTERNS.items() if p])
def test_builtin_pretokenizers_roundtrip_by_name(name):
    model = make_model(pretokenizer=resolve(name))
    document = hf_document(model)
    assert huggingface.loads(json.dumps(document), "mem").pretokenizer == resolve(name)


def test_p50k_gets_a_spelling_of_its_own():
    r50k = hf_document(make_model(pretokenizer=resolve("r50k")))["pre_tokenizer"]
    p50k = hf_document(make_model(pretokenizer=resolve("p50k")))["pre_tokenizer"]
    r50k_regex = r50k["pretokenizers"][0]["pattern"]["Regex"]
    assert p50k["pretokenizers"][0]["pattern"]["Regex"] == f"(?:{r50k_regex})"


def test_writer_refuses_pattern_it_cannot_translate():
    model = make_model(pretokenizer=Pretokenizer("regex", r"\b\w+\b|\s"))
    with pytest.raises(ValueError, match=r"cannot be written so that tokenizers.*'\\\\b'"):
        huggingface.dumps(model)


def test_reader_refuses_split_regex_it_cannot_translate():
    document = hf_document(make_model(pretokenizer=resolve("whitespace")))
    document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\p{L}+|\P{L}*"
    with pytest.raises(FormatError) as info:
        huggingface.loads(json.dumps(document), "tok.json")
    assert info.value.where == "pre_tokenizer.pretokenizers[0].pattern.Regex"
    assert "empty string" in info.value.problem


def test_untyped_unigram_model_is_named():
    document = hf_document()
    document["model"] = {"unk_id": 0, "vocab": [["a", 0.0]]}
    with pytest.raises(FormatError, match=r'model.type "Unigram" \(the file gives no type'):
        huggingface.loads(json.dumps(document), "mem")


# ---------------------------------------------------------------------------
# Non-special added tokens (HuggingFace's "special": false)


def added_model(added: tuple[str, ...] = ("<|pad|>",), **changes) -> BPEModel:
    """make_model() with some of its special tokens marked as non-special added tokens."""
    import dataclasses

    return dataclasses.replace(make_model(), added_tokens=added, **changes)


def test_model_added_tokens_are_checked_ordered_and_kept_by_copies():
    import copy
    import pickle

    model = added_model(("<|pad|>", "<|endoftext|>"))
    assert model.added_tokens == ("<|endoftext|>", "<|pad|>")  # special_tokens' order
    assert model == added_model(("<|endoftext|>", "<|pad|>"))
    assert make_model().added_tokens == ()
    for copied in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model), copy.copy(model)):
        assert copied == model and copied.added_tokens == model.added_tokens
    with pytest.raises(ValueError, match="'<x>' is not a key of special_tokens"):
        added_model(("<x>",))
    with pytest.raises(TypeError, match="not the string"):
        added_model("<|pad|>")
    with pytest.raises(TypeError, match="which is not a str"):
        added_model((b"<|pad|>",))


def test_added_tokens_are_written_with_special_false_and_read_back():
    model = added_model()
    document = json.loads(huggingface.dumps(model))
    flags = {e["content"]: (e["special"], e["normalized"]) for e in document["added_tokens"]}
    assert flags == {"<|endoftext|>": (True, False), "<|pad|>": (False, False)}
    assert huggingface.loads(json.dumps(document)) == model
    # The slow path (Python) reads the same as the fast path (the core).
    document["model"]["merges"] = [line.split(" ") for line in document["model"]["merges"]]
    assert huggingface.loads(json.dumps(document)) == model


def test_non_special_added_token_outside_the_vocabulary_gets_tokenizers_id():
    document = hf_document()
    size = len(document["model"]["vocab"])
    document["added_tokens"] += [
        _added_entry(size, "  ", special=False, normalized=True),
        _added_entry(size + 1, "<tool_call>", special=False, normalized=False),
        _added_entry(size + 2, "<|im_end|>", special=True, normalized=False),
    ]
    model = huggingface.loads(json.dumps(document))
    assert model.added_tokens == ("  ", "<tool_call>")
    assert model.special_tokens["<tool_call>"] == size + 1
    assert model.tokens[size : size + 3] == (b"  ", b"<tool_call>", b"<|im_end|>")
    document["added_tokens"][-2]["id"] = size + 5
    with pytest.raises(FormatError, match="tokenizers gives it id") as info:
        huggingface.loads(json.dumps(document), "tok.json")
    assert info.value.where == f"added_tokens[{len(document['added_tokens']) - 2}]"


@pytest.mark.parametrize("content", ["éé", "Ġhi", "ĊĊĊ"])
def test_non_special_added_token_that_tokenizers_decodes_to_other_bytes_is_refused(content):
    document = hf_document()
    size = len(document["model"]["vocab"])
    entry = _added_entry(size, content, special=False, normalized=False)
    document["added_tokens"].append(entry)
    with pytest.raises(FormatError, match="ByteLevel decoder turns it into") as info:
        huggingface.loads(json.dumps(document), "tok.json")
    assert info.value.where == f"added_tokens[{len(document['added_tokens']) - 1}]"
    # As a special token (dropped by tokenizers' decode by default) it is read.
    entry["special"] = True
    assert content in huggingface.loads(json.dumps(document)).special_tokens


def test_writing_an_added_token_tokenizers_would_decode_otherwise_is_refused():
    model = make_model()
    tokens = (*model.tokens, "Ġhi".encode())
    specials = {**model.special_tokens, "Ġhi": len(model.tokens)}
    bad = BPEModel(tokens, model.merges, specials, model.pretokenizer, added_tokens=("Ġhi",))
    with pytest.raises(ValueError, match=r"added tokens \['Ġhi'\] into other bytes"):
        huggingface.dumps(bad)


@pytest.mark.parametrize(
    "normalizer, content, read",
    [
        ({"type": "NFC"}, "  ", True),  # GPT-NeoX: runs of spaces, normalized true, NFC
        ({"type": "NFC"}, "\t\n", True),
        ({"type": "NFC"}, "<x>", False),  # '>' + U+0338 composes to '≯'
        ({"type": "NFC"}, "ee", False),  # e + U+0301 composes to é
        ({"type": "NFC"}, "qq", True),  # no character decomposes to a q
        ({"type": "NFKC"}, "  ", False),  # NFKC makes spaces (U+00A0 -> ' ')
        ({"type": "Lowercase"}, "  ", True),
        ({"type": "Lowercase"}, "qq", False),
        (None, "qq", True),
    ],
)
def test_normalized_added_token_beside_a_normalizer(normalizer, content, read):
    document = hf_document()
    document["normalizer"] = normalizer
    for entry in document["added_tokens"]:
        entry["normalized"] = False
    size = len(document["model"]["vocab"])
    entry = _added_entry(size, content, special=False, normalized=True)
    document["added_tokens"].append(entry)
    if read:
        assert huggingface.loads(json.dumps(document)).added_tokens == (content,)
    else:
        with pytest.raises(FormatError, match="can neither make, change nor join") as info:
            huggingface.loads(json.dumps(document), "tok.json")
        assert info.value.where == "added_tokens"
    entry["normalized"] = False  # found in the text as given: always read
    assert huggingface.loads(json.dumps(document)).added_tokens == (content,)


def test_gpt2_format_refuses_added_tokens(tmp_path):
    with pytest.raises(ValueError, match="non-special added tokens"):
        gpt2.save(added_model(), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="non-special added tokens"):
        bytepair.Tokenizer(added_model()).save(tmp_path / "out", format="gpt2")


def test_tiktoken_export_refuses_added_tokens_unless_forced(tmp_path):
    from bytepair.formats import tiktoken as tiktoken_format

    model = added_model()
    with pytest.raises(ValueError, match=r"non-special added tokens \('<\|pad\|>'\)"):
        tiktoken_format.export_ranks(model)
    with pytest.raises(ValueError, match="non-special added tokens"):
        tiktoken_format.save_tiktoken(model, tmp_path / "x.tiktoken")
    assert not (tmp_path / "x.tiktoken").exists()
    with pytest.warns(UserWarning, match="non-special added tokens"):
        ranks = tiktoken_format.export_ranks(model, force=True)
    assert ranks == tiktoken_format.export_ranks(make_model())


def test_a_stripping_token_beside_a_normalized_whitespace_token_is_refused():
    """tokenizers cuts the normalized-false added tokens out first, with the
    whitespace they strip, and only then looks for normalized ones: a normalized
    token holding whitespace ('\\t', a run of spaces) can be swallowed there,
    which bytepair's one pass cannot follow ('a\\t <|endoftext|>' with an lstrip
    <|endoftext|> gave the '\\t' token as well)."""
    for option in ("lstrip", "rstrip"):
        document = hf_document()
        document["added_tokens"][0][option] = True  # '<|endoftext|>', normalized false
        document["added_tokens"][1]["content"] = "\t"  # '<|pad|>' becomes a normalized '\t'
        document["added_tokens"][1]["normalized"] = True
        document["model"]["vocab"]["\t"] = document["model"]["vocab"].pop("<|pad|>")
        with pytest.raises(FormatError, match=r"'<\|endoftext\|>' \(normalized false, stripping"):
            huggingface.loads(json.dumps(document), "tok.json")
    # Without the strip, one pass and two agree.
    document["added_tokens"][0]["rstrip"] = False
    huggingface.loads(json.dumps(document), "tok.json")
