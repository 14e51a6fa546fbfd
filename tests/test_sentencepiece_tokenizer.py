"""SentencePieceTokenizer through the public API: loaded .model files give
sentencepiece's ids, Unigram tokenizer.json files tokenizers' ids, and a
unigram model trained here saves as a tokenizer.json that tokenizers reads
with our ids. The command line trains and uses unigram models."""

from __future__ import annotations

import functools
import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.cli import main

tokenizers = pytest.importorskip("tokenizers")
spm = pytest.importorskip("sentencepiece")

SP_MODELS = ["sp_test_model", "sp_test_ja_model", "llama2_tokenizer", "bpemb_en.wiki.bpe.vs100000"]


def vectors(shared_data, name, model):
    path = shared_data / "vectors" / name
    lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines: U+2028 is in texts
    return [r for r in map(json.loads, filter(None, lines)) if r["model"] == model]


def corpus_lines(shared_data, limit=200):
    small = shared_data / "corpus" / "small"
    lines = []
    for name in ("botchan.txt", "wagahaiwa_nekodearu.txt", "taylorswift.txt"):
        lines += (small / name).read_text(encoding="utf-8-sig").splitlines()[100 : 100 + limit // 3]
    return lines


@pytest.mark.parametrize("name", SP_MODELS)
def test_model_files_give_sentencepiece_ids(shared_data, name):
    path = shared_data / "models" / "sentencepiece" / f"{name}.model"
    tok = bytepair.load(path)
    assert tok.flavor == "sentencepiece" and tok.n_vocab > 0
    peer = spm.SentencePieceProcessor(model_file=str(path))
    records = vectors(shared_data, "sentencepiece_vectors.jsonl", name)
    texts = [r["text"] for r in records] + corpus_lines(shared_data, 90)
    for text in texts:
        ids = tok.encode_ordinary(text)
        assert ids == peer.encode(text), text
        assert tok.decode(ids) == peer.decode(ids), text
    assert tok.encode_batch(texts[:20], disallowed_special=()) == [
        peer.encode(t) for t in texts[:20]
    ]


def multilingual_lines(shared_data, n_bytes=300_000):
    import gzip

    with gzip.open(shared_data / "corpus" / "large_multilingual.txt.gz", "rb") as f:
        text = f.read(n_bytes).decode("utf-8", errors="ignore")
    return [line for line in text.split("\n") if line.strip()]


@pytest.mark.parametrize("name", SP_MODELS)
def test_model_files_on_multilingual_text_and_whole_paragraphs(shared_data, name):
    path = shared_data / "models" / "sentencepiece" / f"{name}.model"
    tok, peer = bytepair.load(path), spm.SentencePieceProcessor(model_file=str(path))
    lines = multilingual_lines(shared_data)
    assert tok.encode_batch(lines, disallowed_special=()) == peer.encode(lines)
    paragraphs = ["\n".join(lines[i : i + 200]) for i in range(0, len(lines), 200)]
    assert [tok.encode_ordinary(p) for p in paragraphs] == peer.encode(paragraphs)


@settings(max_examples=200)
@given(text=st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60))
def test_model_files_on_hypothesis_text(shared_data, text):
    for name in ("sp_test_model", "llama2_tokenizer"):
        path = shared_data / "models" / "sentencepiece" / f"{name}.model"
        tok = _loaded(path)
        assert tok.encode_ordinary(text) == _processor(path).encode(text)


@functools.cache
def _loaded(path):
    return bytepair.load(path)


@functools.cache
def _processor(path):
    return spm.SentencePieceProcessor(model_file=str(path))


def test_t5_tokenizer_json_gives_tokenizers_ids(shared_data):
    path = shared_data / "models" / "hf" / "t5-small.tokenizer.json"
    tok = bytepair.load(path)
    assert tok.flavor == "tokenizers" and tok.n_vocab == 32100
    peer = tokenizers.Tokenizer.from_file(str(path))
    for record in vectors(shared_data, "hf_tokenizers_vectors.jsonl", "t5-small"):
        assert tok.encode_ordinary(record["text"]) == record["ids"]
        assert tok.decode(record["ids"]) == record["decoded"]
    for text in corpus_lines(shared_data, 90):
        assert tok.encode_ordinary(text) == peer.encode(text, add_special_tokens=False).ids
    lines = multilingual_lines(shared_data)
    expected = [e.ids for e in peer.encode_batch(lines, add_special_tokens=False)]
    assert tok.encode_batch(lines, disallowed_special=()) == expected


@pytest.fixture(scope="module")
def trained(shared_data):
    text = (shared_data / "corpus" / "small" / "botchan.txt").read_text(encoding="utf-8-sig")[
        :40_000
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            byte_fallback: bytepair.train(
                text,
                900 if byte_fallback else 600,
                model="unigram",
                special_tokens=["<|end|>", "<pad>"],
                byte_fallback=byte_fallback,
                progress=False,
            )
            for byte_fallback in (False, True)
        }


PROBES = [
    "",
    " leading space",
    "two  spaces and a trailing one ",
    "x<|end|>y and <|end|> after",
    "<|end|>starts with a special",
    "unseen ☃☂ characters, 漢字, emoji 👍🏽",
    "tabs\tand\nnewlines\r\n",
]


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_a_trained_model_saves_for_tokenizers_with_the_same_ids(
    trained, shared_data, tmp_path, byte_fallback
):
    tok = trained[byte_fallback]
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        tok.save(path)
    peer = tokenizers.Tokenizer.from_file(str(path))
    again = bytepair.load(tmp_path)  # a directory holding tokenizer.json
    assert again.flavor == "bytepair"  # our own export: n-best and sampling work
    assert again.encode_nbest("hello there", 3) == tok.encode_nbest("hello there", 3)
    for text in PROBES + corpus_lines(shared_data, 150):
        ours = tok.encode(text, allowed_special="all")
        assert peer.encode(text, add_special_tokens=False).ids == ours, text
        assert again.encode(text, allowed_special="all") == ours, text
        if byte_fallback or all(
            tok.piece_to_id(c) is not None for c in text.replace(" ", "\u2581")
        ):
            assert tok.decode(ours) == text


def test_trained_model_api(trained):
    tok = trained[True]
    assert tok.special_tokens == {"<|end|>": 1, "<pad>": 2}
    with pytest.raises(bytepair.DisallowedSpecialError):
        tok.encode("a<|end|>b")
    assert 1 not in tok.encode_ordinary("a<|end|>b")
    best = tok.encode_nbest("hello there", 4)
    assert best[0][0] == tok.encode("hello there")
    assert [s for _, s in best] == sorted((s for _, s in best), reverse=True)
    assert tok.encode_sample("hello there", alpha=1000.0, seed=1) == tok.encode("hello there")
    assert tok.id_to_piece(tok.piece_to_id("\u2581the")) == "\u2581the"
    with pytest.raises(ValueError, match="k must be a positive int"):
        tok.encode_nbest("x", 0)
    for alpha in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="alpha must be a non-negative number"):
            tok.encode_sample("x", alpha=alpha)


def test_loaded_models_say_what_they_cannot_do(shared_data):
    tok = bytepair.load(shared_data / "models" / "sentencepiece" / "sp_test_model.model")
    with pytest.raises(NotImplementedError, match="trained by bytepair"):
        tok.encode_nbest("hello", 2)
    with pytest.raises(ValueError, match="encode_ordinary"):
        tok.encode("<s> hello", allowed_special="all")


def test_corrupt_model_files_are_named(tmp_path, shared_data):
    data = (shared_data / "models" / "sentencepiece" / "sp_test_model.model").read_bytes()
    bad = tmp_path / "broken.model"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(bytepair.FormatError, match="broken.model"):
        bytepair.load(bad)


def test_command_line_trains_and_samples_unigram(tmp_path, capsys, shared_data):
    corpus = shared_data / "corpus" / "small" / "botchan.txt"
    out = tmp_path / "uni.json"
    args = ["train", str(corpus), "-o", str(out), "--vocab-size", "700", "--model", "unigram"]
    assert main([*args, "--byte-fallback", "--no-progress"]) == 0
    assert "unigram LM" in capsys.readouterr().out
    assert main([*args, "--no-progress"]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["encode", "-m", str(out), "hello world", "--nbest", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all("\t" in line for line in lines)
    assert (
        main(["encode", "-m", str(out), "hello world", "--sample", "--alpha", "0.5", "--seed", "3"])
        == 0
    )
    first = capsys.readouterr().out
    assert (
        main(["encode", "-m", str(out), "hello world", "--sample", "--alpha", "0.5", "--seed", "3"])
        == 0
    )
    assert capsys.readouterr().out == first
    model = shared_data / "models" / "sentencepiece" / "sp_test_model.model"
    assert main(["encode", "-m", str(model), "Hello world", "--ordinary"]) == 0
    assert capsys.readouterr().out.split() == [
        str(i) for i in spm.SentencePieceProcessor(model_file=str(model)).encode("Hello world")
    ]
    assert (
        main(
            [
                "train",
                str(corpus),
                "-o",
                str(tmp_path / "x.json"),
                "--vocab-size",
                "300",
                "--byte-fallback",
            ]
        )
        == 1
    )
    assert "--model unigram" in capsys.readouterr().err


def test_command_line_inspects_and_converts_sentencepiece_models(tmp_path, capsys, shared_data):
    models = shared_data / "models" / "sentencepiece"
    assert main(["inspect", str(models / "sp_test_model.model")]) == 0
    out = capsys.readouterr().out
    assert "unigram (sentencepiece's rules)" in out and "highest-scoring pieces" in out
    target = tmp_path / "sp.json"
    assert (
        main(["convert", str(models / "sp_test_model.model"), str(target), "--to", "huggingface"])
        == 0
    )
    capsys.readouterr()
    assert bytepair.load(target).flavor == "tokenizers"
    assert (
        main(["convert", str(models / "sp_test_model.model"), str(tmp_path / "x"), "--to", "gpt2"])
        == 1
    )
    assert "--to huggingface only" in capsys.readouterr().err
    assert (
        main(
            [
                "convert",
                str(models / "llama2_tokenizer.model"),
                str(tmp_path / "l.json"),
                "--to",
                "huggingface",
            ]
        )
        == 1
    )
    assert "only unigram models" in capsys.readouterr().err
