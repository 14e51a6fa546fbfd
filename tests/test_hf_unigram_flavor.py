"""Which Unigram ``tokenizer.json`` files load with the "bytepair" flavor.

A file bytepair wrote for a model it trained (a Split of the characters of no
normal piece, Prepend("▁"), lowered scores for the other pieces, bytepair's
decoder) loads as a bytepair model: its ids and decoding are bytepair's, which
are tokenizers' for that file. Any edit that makes tokenizers read the file
otherwise must rule that flavor out; the file then either follows tokenizers
exactly (the "tokenizers" flavor) or is a FormatError naming what differs.

Oracle: HuggingFace ``tokenizers`` on the same file.

1. An edited vocabulary: a one-character piece removed that still occurs
   inside other pieces (the Split's pattern, made of the characters of the
   normal pieces, is unchanged, but bytepair's lattice would take the
   character for an unknown one and fuse it with its unknown neighbours).
2. An edited decoder: null, or bytepair's with a step changed, dropped,
   added or reordered.
3. bytepair's own files still load with the bytepair flavor and its ids.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import warnings
from pathlib import Path
from typing import Optional

import pytest

import bytepair
from bytepair.errors import FormatError
from bytepair.formats import hf_unigram as fmt

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is the oracle")

BOTCHAN = Path(bytepair.__file__).resolve().parent / "data" / "botchan.txt"
SPECIALS = ["<|end|>", "<pad>"]
METASPACE = "\u2581"


def _lines(limit: int = 120) -> list[str]:
    lines = [line for line in BOTCHAN.read_text(encoding="utf-8-sig").splitlines() if line]
    return lines[200 : 200 + limit]


@pytest.fixture(scope="module", params=[False, True], ids=["unk", "byte_fallback"])
def trained(request, tmp_path_factory):
    """A unigram model trained here, and the tokenizer.json it saves as."""
    byte_fallback = request.param
    text = BOTCHAN.read_text(encoding="utf-8-sig")[:60_000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(
            text,
            700 if byte_fallback else 400,
            model="unigram",
            special_tokens=SPECIALS,
            byte_fallback=byte_fallback,
            progress=False,
        )
    path = tmp_path_factory.mktemp("flavor") / "tokenizer.json"
    tok.save(path)
    return tok, path


def _texts(tok, extra_chars: str = "", seed: int = 0) -> list[str]:
    """Corpus lines, and random texts mixing the pieces' characters with
    ``extra_chars`` and characters of no piece."""
    rng = random.Random(seed)
    pool = list("abcnet ,.'") + list(extra_chars) + ["\u00fc", "\u00ef", "\u2603", "\u6f22", "  "]
    texts = _lines() + [
        "\u00fcn\u00ef",
        "hello world",
        "Hello there, the world says hello",
        " leading and trailing spaces ",
        "unseen \u2603\u2602 characters, \u6f22\u5b57",
    ]
    texts += ["".join(rng.choice(pool) for _ in range(rng.randint(1, 14))) for _ in range(400)]
    return texts


def _their_ids(peer, text: str) -> list[int]:
    return peer.encode(text, add_special_tokens=False).ids


def _id_cases(peer, texts: list[str], n_vocab: int, seed: int = 1) -> list[list[int]]:
    rng = random.Random(seed)
    cases = [_their_ids(peer, text) for text in texts[:150]]
    cases += [[rng.randrange(n_vocab) for _ in range(rng.randint(1, 10))] for _ in range(200)]
    return cases


def _write(model, pipeline, path: Path) -> Path:
    path.write_text(fmt.dumps(model, pipeline), encoding="utf-8")
    return path


def _exact_or_refused(path: Path, texts: list[str], key: str) -> Optional[FormatError]:
    """``path`` is not read as bytepair's own file: bytepair.load either
    refuses it with a FormatError that names ``key``, or follows tokenizers
    exactly (ids and decode). Returns the error, if any."""
    peer = tokenizers.Tokenizer.from_file(str(path))
    try:
        ours = bytepair.load(path)
    except FormatError as error:
        # The key is the error's place, or what bytepair's Split refusal names.
        assert (error.where or "").startswith(key) or f"differs: {key}" in error.problem, error
        return error
    assert ours.flavor != "bytepair", f"{path.name} is not bytepair's own file"
    for text in texts:
        assert ours.encode_ordinary(text) == _their_ids(peer, text), text
    for ids in _id_cases(peer, texts, ours.n_vocab):
        assert ours.decode(ids) == peer.decode(ids, skip_special_tokens=False), ids
    return None


# ---------------------------------------------------------------------------
# bytepair's own files


def test_own_file_loads_with_the_bytepair_flavor_and_its_ids(trained):
    tok, path = trained
    peer = tokenizers.Tokenizer.from_file(str(path))
    again = bytepair.load(path)
    assert again.flavor == "bytepair"
    # n-best works; its scores may move by an ulp (the few that serde_json cannot read back)
    assert [ids for ids, _ in again.encode_nbest("hello there", 3)] == [
        ids for ids, _ in tok.encode_nbest("hello there", 3)
    ]
    texts = _texts(tok) + ["x<|end|>y", "<pad><pad> a"]
    for text in texts:
        ours = tok.encode(text, allowed_special="all")
        assert again.encode(text, allowed_special="all") == ours, text
        assert _their_ids(peer, text) == ours, text
    for ids in _id_cases(peer, texts, tok.n_vocab):
        assert again.decode(ids) == tok.decode(ids), ids
    # tokenizers decodes the file's encodings alike, but <unk> (⁇ in bytepair, its
    # piece in tokenizers). (Not any ids: bytepair writes an invalid run of byte
    # pieces as sentencepiece does, and no ▁ after a special token.)
    for text in texts:
        ids = tok.encode_ordinary(text)
        if tok.model.unk_id not in ids:
            assert again.decode(ids) == peer.decode(ids, skip_special_tokens=False), text


def _as_other_json(text: str) -> str:
    """The same JSON value, written otherwise: keys in reverse order, every
    non-ASCII character escaped, no indentation; numbers as written (they
    are read as tokenizers reads them)."""
    marker = "\u0000number:"

    def keep(number: str) -> str:
        return marker + number

    def reversed_keys(value):
        if isinstance(value, dict):
            return {k: reversed_keys(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reversed_keys(item) for item in value]
        return value

    document = reversed_keys(json.loads(text, parse_float=keep, parse_int=keep))
    written = json.dumps(document, ensure_ascii=True)
    return re.sub(r'"\\u0000number:([^"]*)"', r"\1", written)


def test_own_file_written_as_other_json_keeps_the_bytepair_flavor(trained, tmp_path):
    # Key order and escapes are not the decoder: the same JSON value is accepted.
    tok, path = trained
    rewritten = tmp_path / "rewritten.json"
    rewritten.write_text(_as_other_json(path.read_text(encoding="utf-8")), encoding="utf-8")
    assert json.loads(rewritten.read_text(encoding="utf-8")) == json.loads(
        path.read_text(encoding="utf-8")
    )
    peer = tokenizers.Tokenizer.from_file(str(rewritten))
    again = bytepair.load(rewritten)
    assert again.flavor == "bytepair"
    for line in _texts(tok)[:200]:
        assert again.encode_ordinary(line) == tok.encode_ordinary(line), line
        assert _their_ids(peer, line) == tok.encode_ordinary(line), line


# ---------------------------------------------------------------------------
# A one-character piece removed


def _without_piece(model, pipeline, piece: str):
    """The file's model and pipeline with the vocabulary entry ``piece`` removed."""
    index = model.pieces.index(piece)

    def drop(column):
        return column[:index] + column[index + 1 :]

    def moved(token_id: int) -> int:
        return token_id - 1 if token_id > index else token_id

    unk_id = None if model.unk_id is None else moved(model.unk_id)
    model = dataclasses.replace(
        model,
        pieces=drop(model.pieces),
        scores=drop(model.scores),
        kinds=drop(model.kinds),
        unk_id=unk_id,
    )
    added = tuple(dataclasses.replace(t, id=moved(t.id)) for t in pipeline.added_tokens)
    return model, dataclasses.replace(pipeline, added_tokens=added)


@pytest.mark.parametrize("char", ["n", "e", METASPACE])
def test_a_removed_single_character_piece_rules_out_the_bytepair_flavor(trained, tmp_path, char):
    tok, path = trained
    model, pipeline = fmt.load(path)
    normal = [p for p, k in zip(model.pieces, model.kinds) if k == "normal"]
    assert char in normal and any(char in p and p != char for p in normal)
    assert (
        min(s for s, k in zip(model.scores, model.kinds) if k == "normal")
        < model.scores[model.pieces.index(char)]
    )  # the lowered scores stay as written
    edited_model, edited_pipeline = _without_piece(model, pipeline, char)
    # The Split the file holds still matches the vocabulary's characters.
    assert fmt.unknown_characters_pattern(edited_model) == fmt.unknown_characters_pattern(model)
    edited = _write(edited_model, edited_pipeline, tmp_path / "edited.json")
    texts = _texts(tok, extra_chars=char * 3)
    peer = tokenizers.Tokenizer.from_file(str(edited))
    if char == "n":  # the repro: bytepair's lattice fused "ünï" into one <unk>
        ids = _their_ids(peer, "\u00fcn\u00ef")
        assert len(ids) == (6 if model.byte_fallback else 4)  # ▁, then bytes or <unk>s
    error = _exact_or_refused(edited, texts, "model.vocab")
    if error is not None:
        assert repr(char) in str(error)


def test_the_repro_of_a_removed_piece(tmp_path):
    """/tmp/review_fuzz/repro_unipiece.py: "n" dropped from a 300-piece model."""
    text = BOTCHAN.read_text(encoding="utf-8")[:100_000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(text, vocab_size=300, model="unigram", progress=False)
    path = tmp_path / "u2.json"
    tok.save(path)
    lines = path.read_text(encoding="utf-8").split("\n")
    lines = [line for line in lines if not line.strip().startswith('["n", ')]
    edited = tmp_path / "u2_edit.json"
    edited.write_text("\n".join(lines), encoding="utf-8")
    peer = tokenizers.Tokenizer.from_file(str(edited))
    assert _their_ids(peer, "\u00fcn\u00ef") == [1, 0, 0, 0]
    _exact_or_refused(edited, _texts(tok, extra_chars="nnn"), "model.vocab")


# ---------------------------------------------------------------------------
# An edited decoder


def _bytepair_decoder_steps() -> list[dict]:
    return [
        {"type": "Replace", "pattern": {"String": METASPACE}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    ]


def _edited_decoders() -> list[tuple[str, Optional[dict]]]:
    def sequence(steps):
        return {"type": "Sequence", "decoders": steps}

    def changed(index, **changes):
        steps = _bytepair_decoder_steps()
        steps[index] = {**steps[index], **changes}
        return sequence(steps)

    steps = _bytepair_decoder_steps()
    return [
        ("null", None),
        ("strip-start-2**32", changed(3, start=4294967296)),
        ("strip-start-0", changed(3, start=0)),
        ("strip-start-2", changed(3, start=2)),
        ("strip-stop-1", changed(3, stop=1)),
        ("strip-content-x", changed(3, content="x")),
        ("replace-content-_", changed(0, content="_")),
        ("replace-regex", changed(0, pattern={"Regex": METASPACE})),
        ("replace-pattern-a", changed(0, pattern={"String": "a"})),
        ("no-fuse", sequence([s for s in steps if s["type"] != "Fuse"])),
        ("no-byte-fallback", sequence([s for s in steps if s["type"] != "ByteFallback"])),
        ("no-strip", sequence(steps[:3])),
        ("two-fuses", sequence(steps[:3] + [{"type": "Fuse"}] + steps[3:])),
        ("strip-first", sequence(steps[3:] + steps[:3])),
        ("nested", sequence([sequence(steps)])),
        ("metaspace", {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "always"}),
        (
            "metaspace-never",
            {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "never"},
        ),
        (
            "byte-fallback-metaspace",
            sequence(
                [
                    {"type": "ByteFallback"},
                    {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "never"},
                ]
            ),
        ),
    ]


def _with_decoder(path: Path, decoder: Optional[dict], target: Path, split: bool = True) -> Path:
    model, pipeline = fmt.load(path)
    pipeline = dataclasses.replace(pipeline, decoder=json.dumps(decoder))
    if not split:  # as bytepair wrote such files before: tokenizers' meaning
        pipeline = dataclasses.replace(pipeline, isolate_unknown=False)
    return _write(model, pipeline, target)


@pytest.mark.parametrize(
    "name, decoder", _edited_decoders(), ids=[n for n, _ in _edited_decoders()]
)
def test_a_decoder_other_than_bytepairs_rules_out_the_bytepair_flavor(
    trained, tmp_path, name, decoder
):
    tok, path = trained
    edited = _with_decoder(path, decoder, tmp_path / f"{name}.json")
    assert json.loads(edited.read_text(encoding="utf-8"))["decoder"] == decoder
    _exact_or_refused(edited, _texts(tok), "decoder")


@pytest.mark.parametrize(
    "name, decoder", _edited_decoders(), ids=[n for n, _ in _edited_decoders()]
)
def test_an_edited_decoder_without_the_split_follows_tokenizers(trained, tmp_path, name, decoder):
    # Without bytepair's Split the file is read with tokenizers' meaning
    # (the "tokenizers" flavor), decoder included.
    tok, path = trained
    edited = _with_decoder(path, decoder, tmp_path / f"{name}.json", split=False)
    assert _exact_or_refused(edited, _texts(tok), "decoder") is None


def test_the_repro_of_a_null_decoder(tmp_path):
    """/tmp/review_fuzz/repro_unidecoder.py: bytepair decoded 'hello world',
    tokenizers '▁hello ▁world'."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(
            ["hello world, the world says hello"] * 50, vocab_size=40, model="unigram"
        )
    path = tmp_path / "u.json"
    tok.save(path)
    assert bytepair.load(path).flavor == "bytepair"
    edited = _with_decoder(path, None, tmp_path / "u_nodec.json")
    peer = tokenizers.Tokenizer.from_file(str(edited))
    ids = _their_ids(peer, "hello world")
    assert peer.decode(ids) == "\u2581hello \u2581world"
    _exact_or_refused(edited, ["hello world", "world hello", "the hello"], "decoder")
