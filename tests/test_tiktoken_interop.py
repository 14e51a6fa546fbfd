"""bytepair against tiktoken, the oracle.

1. OpenAI's four vocabularies, read from their ``.tiktoken`` files, give
   tiktoken's ids (tiktoken built offline from the same file, with the pattern
   and special tokens of ``tiktoken_ext.openai_public``) on the corpora, the
   recorded vectors, hypothesis text, and long runs of vocabulary tokens.
2. A tokenizer exported with ``to_tiktoken`` gives bytepair's ids in tiktoken,
   for tokenizers trained with every pre-tokenizer; the export refuses merge
   lists tiktoken's rule cannot reproduce, and the criterion it uses (E1/E2 in
   ``bytepair.formats.tiktoken``) is checked against tiktoken itself on random
   merge lists: whenever it says "exact", tiktoken agrees on every input tried.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import DisallowedSpecialError, FormatError, Tokenizer
from bytepair.formats import tiktoken as tiktoken_format
from bytepair.model import BPEModel
from bytepair.pretokenizers import Pretokenizer, resolve
from bytepair.registry import ENCODINGS, ENV_VAR
from bytepair.tokenizers._contract import POOL_MIN_IDS

tiktoken = pytest.importorskip("tiktoken")
openai_public = pytest.importorskip("tiktoken_ext.openai_public")
from tiktoken.load import load_tiktoken_bpe  # noqa: E402

NAMES = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
SMALL_CORPORA = ["botchan.txt", "taylorswift.txt", "tinyshakespeare.txt", "wagahaiwa_nekodearu.txt"]
LARGE_CORPORA = ["large_en.txt.gz", "large_code.txt.gz", "large_multilingual.txt.gz"]
SAMPLE_BYTES = 100_000
SAMPLE_AT = (0.05, 0.5, 0.95)  # fractions of each large file


# ---------------------------------------------------------------------------
# Fixtures: each vocabulary loaded once per module, by bytepair and by tiktoken


@pytest.fixture(scope="module")
def tiktoken_dir(shared_data) -> Path:
    path = shared_data / "models" / "tiktoken"
    missing = [n for n in NAMES if not (path / f"{n}.tiktoken").is_file()]
    if missing:
        pytest.skip(f"tiktoken files {missing} not found in {path}")
    return path


def openai_definition(name: str, directory: Path) -> dict:
    """tiktoken_ext.openai_public's constructor for ``name``, reading the file
    from ``directory`` instead of the network (hash still checked by tiktoken)."""
    seen = {}

    def local(url: str, expected_hash: str | None = None):
        seen["expected_hash"] = expected_hash
        return load_tiktoken_bpe(str(directory / url.rsplit("/", 1)[1]), expected_hash)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file directly, cache nothing
        patch.setattr(openai_public, "load_tiktoken_bpe", local)
        definition = openai_public.ENCODING_CONSTRUCTORS[name]()
    definition["expected_hash"] = seen["expected_hash"]
    return definition


@dataclass
class Pair:
    name: str
    tok: Tokenizer
    enc: object  # tiktoken.Encoding
    definition: dict


@pytest.fixture(scope="module", params=NAMES)
def pair(request, tiktoken_dir) -> Pair:
    name = request.param
    definition = openai_definition(name, tiktoken_dir)
    args = {k: v for k, v in definition.items() if k != "expected_hash"}
    enc = tiktoken.Encoding(**args)
    tok = bytepair.load_tiktoken(tiktoken_dir / f"{name}.tiktoken")
    return Pair(name, tok, enc, definition)


@pytest.fixture(scope="module")
def small_texts(shared_data) -> dict[str, str]:
    folder = shared_data / "corpus" / "small"
    return {name: (folder / name).read_text(encoding="utf-8") for name in SMALL_CORPORA}


def _sample(path: Path) -> list[str]:
    """SAMPLE_BYTES from a few places of a gzipped corpus, cut to whole characters."""
    with gzip.open(path, "rb") as file:
        size = file.seek(0, 2)
        samples = []
        for fraction in SAMPLE_AT:
            file.seek(min(int(size * fraction), max(size - SAMPLE_BYTES, 0)))
            data = file.read(SAMPLE_BYTES)
            samples.append(data.decode("utf-8", errors="ignore"))
    return samples


@pytest.fixture(scope="module")
def large_samples(shared_data) -> dict[str, list[str]]:
    folder = shared_data / "corpus"
    return {name: _sample(folder / name) for name in LARGE_CORPORA if (folder / name).is_file()}


@pytest.fixture(scope="module")
def vectors(shared_data) -> list[dict]:
    path = shared_data / "vectors" / "tiktoken_vectors.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    with path.open(encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def assert_same_ids(tok: Tokenizer, enc, text: str, what: str) -> None:
    ours, theirs = tok.encode_ordinary(text), enc.encode_ordinary(text)
    if ours != theirs:
        first = next(
            (i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs))
        )
        context = tok.decode(ours[max(0, first - 3) : first + 3])
        pytest.fail(
            f"{what}: ids differ from tiktoken's at token {first} (near {context!r}): "
            f"bytepair {ours[first : first + 5]}, tiktoken {theirs[first : first + 5]}"
        )


# ---------------------------------------------------------------------------
# 1. OpenAI's vocabularies: the very same ids as tiktoken


def test_table_matches_tiktoken_ext(pair):
    known = ENCODINGS[pair.name]
    definition = pair.definition
    assert known.pretokenizer.pattern == definition["pat_str"]
    assert dict(known.special_tokens) == definition["special_tokens"]
    assert known.sha256 == definition["expected_hash"]
    assert known.n_vocab == pair.enc.n_vocab == pair.tok.n_vocab
    assert pair.tok.special_tokens == definition["special_tokens"]
    assert pair.tok.model.merges is None  # tiktoken's own rule


def test_small_corpora(pair, small_texts):
    for name, text in small_texts.items():
        assert_same_ids(pair.tok, pair.enc, text, f"{pair.name} on {name}")


def test_large_corpora_samples(pair, large_samples):
    if not large_samples:
        pytest.skip("no large corpus found")
    for name, samples in large_samples.items():
        for i, text in enumerate(samples):
            assert_same_ids(pair.tok, pair.enc, text, f"{pair.name} on {name} sample {i}")


def test_recorded_vectors(pair, vectors):
    records = [r for r in vectors if r["model"] == pair.name]
    assert records, f"no vectors for {pair.name}"
    modes = set()
    for record in records:
        text, mode = record["text"], record["mode"]
        modes.add(mode)
        if mode == "ordinary":
            ours, live = pair.tok.encode_ordinary(text), pair.enc.encode_ordinary(text)
        elif mode == "allowed_special=all":
            ours = pair.tok.encode(text, allowed_special="all")
            live = pair.enc.encode(text, allowed_special="all")
        else:
            pytest.fail(f"unknown mode {mode!r} in the vectors")
        assert ours == record["ids"], (pair.name, mode, text)
        assert live == record["ids"], f"tiktoken itself changed on {text!r} ({pair.name})"
    assert modes == {"ordinary", "allowed_special=all"}


# Every code point but surrogates (no UTF-8), assigned or not: bytepair and
# tiktoken both classify with the Unicode tables of Rust's regex crate.
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
# Text built from the pieces the patterns care about: contractions in any case,
# Unicode spaces and newlines, digit runs, letters of every case class, marks.
tricky_text = st.lists(
    st.sampled_from(
        [
            "'s",
            "'S",
            "'ll",
            "'LL",
            "'Re",
            "'ve",
            "'d",
            "'M",
            "'t",
            "'",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\r",
            "\u00a0",
            "\u2009",
            "\u3000",
            "\u2028",
            "\x0b",
            "\x0c",
            "\x85",
            "1",
            "12",
            "1234567",
            "\u0663\u0664",
            "\u2167",
            "a",
            "A",
            "Ab",
            "aB",
            "Ǆ",
            "ǅ",
            "ʰ",
            "中文",
            "\u0301",
            "e\u0301",
            "ß",
            "İ",
            ".",
            "...",
            "/",
            "//",
            "!?",
            "$",
            "^",
            "👋🏽",
            "\u200d",
            "\ufeff",
            "<|endoftext|>",
            "<|",
            "|>",
            "x",
            "Hello",
            " world",
        ]
    ),
    max_size=25,
).map("".join)


@settings(max_examples=100)
@given(text=st.one_of(any_text, tricky_text))
def test_hypothesis_text(pair, text):
    assert pair.tok.encode_ordinary(text) == pair.enc.encode_ordinary(text), repr(text)
    ours = pair.tok.encode(text, allowed_special="all")
    assert ours == pair.enc.encode(text, allowed_special="all"), repr(text)


# Words of the scripts whose characters merging may start from whole
# (Cyrillic, CJK, kana) and of the two-byte letters the ASCII blocks know,
# beside ASCII, punctuation and each other, long enough to fill blocks.
def _word(letters: str):
    return st.text(st.sampled_from(letters), min_size=1, max_size=12)


script_text = st.lists(
    st.one_of(
        _word("абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙОПРСЪЫЬЭЮЯѠѡѢѣ"),
        _word("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"),
        _word("のにはをたがでてとしれさあいうえおかきくけこアイウエオカキクケコンー"),
        _word("äöüßÄÖÜéèêàçÉÀñÑ×÷"),
        _word("abcdefghijklmnopqrstuvwxyzABCDEF"),
        st.sampled_from([" ", "  ", "\n", ", ", ". ", "'s", "1", "42", "。", "、", "“", "—", "\t"]),
    ),
    max_size=60,
).map("".join)


@settings(max_examples=150)
@given(text=script_text)
def test_hypothesis_scripts(pair, text):
    assert pair.tok.encode_ordinary(text) == pair.enc.encode_ordinary(text), repr(text)


def _concatenations(tok: Tokenizer, seed: int, count: int) -> list[str]:
    """Random runs of vocabulary tokens without whitespace, 10 to 10,000 bytes,
    made text (partial characters at the joins dropped)."""
    special_ids = set(tok.special_tokens.values())
    pool = [
        t
        for i, t in enumerate(tok.model.tokens)
        if t is not None and i not in special_ids and not any(b in t for b in b" \t\n\r\x0b\x0c")
    ]
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        target = int(10 ** rng.uniform(1, 4))
        parts, size = [], 0
        while size < target:
            token = rng.choice(pool)
            parts.append(token)
            size += len(token)
        texts.append(b"".join(parts)[:target].decode("utf-8", errors="ignore"))
    return texts


def test_random_token_concatenations(pair):
    texts = _concatenations(pair.tok, seed=NAMES.index(pair.name), count=150)
    assert pair.tok.encode_ordinary_batch(texts) == pair.enc.encode_ordinary_batch(texts)
    for text in texts[:20]:  # and one by one, the single-text path
        assert_same_ids(pair.tok, pair.enc, text, f"{pair.name} on a token run")


@pytest.mark.slow
def test_giant_pieces_merged_in_windows(pair):
    """Pieces over 68 KB are merged window by window, the seams checked; a
    few hundred KB of the inputs that make one giant piece, as tiktoken does."""
    rng = random.Random(5)
    n = 300_000
    texts = {
        '"a" * n': "a" * n,
        "a whitespace run": "".join(rng.choice(" \t\n\r") for _ in range(n)),
        "one CJK character": "\u4e2d" * (n // 3),
        '"^" * n': "^" * n,
        "a token run": "".join(_concatenations(pair.tok, seed=11, count=60)).replace(" ", ""),
        "letters": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n)),
    }
    for what, text in texts.items():
        assert_same_ids(pair.tok, pair.enc, text, f"{pair.name} on {what}")


def test_special_token_contract(pair):
    tok, enc = pair.tok, pair.enc
    specials = sorted(tok.special_tokens, key=tok.special_tokens.get)
    assert tok.special_tokens == enc._special_tokens
    assert tok.special_tokens_set == enc.special_tokens_set
    for special in specials:
        token_id = tok.special_tokens[special]
        assert tok.decode_single_token_bytes(token_id) == enc.decode_single_token_bytes(token_id)
        text = f"a{special}b {special}\n{special[:-1]}"
        with pytest.raises(DisallowedSpecialError) as ours:
            tok.encode(text)
        assert ours.value.token == special
        with pytest.raises(ValueError):
            enc.encode(text)
        for kwargs in (
            {"allowed_special": "all"},
            {"allowed_special": {special}},
            {"disallowed_special": ()},
            {"allowed_special": {special}, "disallowed_special": ()},
        ):
            assert tok.encode(text, **kwargs) == enc.encode(text, **kwargs), kwargs
        assert token_id in tok.encode(text, allowed_special={special})
        assert token_id not in tok.encode_ordinary(text)
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    if len(specials) > 1:
        text = "".join(specials)
        with pytest.raises(DisallowedSpecialError):
            tok.encode(text, allowed_special={specials[0]})
        with pytest.raises(ValueError):
            enc.encode(text, allowed_special={specials[0]})
        kwargs = {"allowed_special": {specials[0]}, "disallowed_special": ()}
        assert tok.encode(text, **kwargs) == enc.encode(text, **kwargs)


def test_decode_equals_tiktoken(pair):
    tok, enc = pair.tok, pair.enc
    valid = [i for i, t in enumerate(tok.model.tokens) if t is not None]
    rng = random.Random(7)
    for _ in range(20):
        ids = [rng.choice(valid) for _ in range(rng.randint(0, 300))]
        assert tok.decode_bytes(ids) == enc.decode_bytes(ids)
        assert tok.decode(ids) == enc.decode(ids)
    unused = [i for i, t in enumerate(tok.model.tokens) if t is None]
    for token_id in [*unused[:3], tok.n_vocab]:
        with pytest.raises(ValueError, match=str(token_id)):
            tok.decode_bytes([1, token_id])
        with pytest.raises(KeyError):
            enc.decode_bytes([1, token_id])


def test_tiktokens_other_members_give_its_answers(pair):
    """The rest of tiktoken.Encoding's public members, on the same vocabulary."""
    tok, enc = pair.tok, pair.enc
    rng = random.Random(11)
    text = "hello wörld, naïve café 東京 👋🏽 " * 3
    ids = tok.encode(text)
    assert tok.decode_tokens_bytes(ids) == enc.decode_tokens_bytes(ids)
    # Tokens cutting characters apart: the offsets of their parts.
    cut = [i for i, t in enumerate(tok.model.tokens) if t is not None and 0x80 <= t[0] < 0xC0]
    assert cut, "some token starts inside a character"
    for case in (ids, [], enc.encode("a" + "👋🏽" * 4 + "é")):
        assert tok.decode_with_offsets(case) == enc.decode_with_offsets(case)
    with pytest.raises(UnicodeDecodeError):
        tok.decode_with_offsets([cut[0]])
    batch = [ids, [], ids[:5], enc.encode("x" * 100)]
    assert tok.decode_batch(batch) == enc.decode_batch(batch)
    assert tok.decode_bytes_batch(batch) == enc.decode_bytes_batch(batch)
    big = [enc.encode(text * 200)] * 16  # past the size that starts threads
    assert sum(map(len, big)) >= POOL_MIN_IDS
    assert tok.decode_batch(big, num_threads=2) == enc.decode_batch(big, num_threads=2)
    assert tok.eot_token == enc.eot_token
    assert tok.max_token_value == enc.max_token_value
    assert tok.token_byte_values() == enc.token_byte_values()
    valid = [i for i, t in enumerate(tok.model.tokens) if t is not None]
    for token_id in rng.sample(valid, 200) + list(enc._special_tokens.values()):
        token = tok.model.tokens[token_id]
        assert tok.encode_single_token(token) == enc.encode_single_token(token) == token_id
        assert tok.is_special_token(token_id) == enc.is_special_token(token_id)
    for special in enc._special_tokens:
        assert tok.encode_single_token(special) == enc.encode_single_token(special)
    for absent in ("hello world, naïve café", b"\xff\xfe\xfd\xfc"):
        with pytest.raises(KeyError):
            enc.encode_single_token(absent)
        with pytest.raises(KeyError):
            tok.encode_single_token(absent)


@pytest.mark.slow
def test_every_token_is_reachable_by_merging(pair):
    """Each token of OpenAI's files can be made by merging its own bytes (not
    only by the whole-piece lookup), and the derived merge list gives tiktoken's
    ids exactly (E1/E2), so it can be written to merge-list formats."""
    merges, unreachable = pair.tok._core.merges()
    assert unreachable == []
    assert len(merges) == len(pair.enc._mergeable_ranks) - 256
    derived = tiktoken_format.merge_list_model(pair.tok)
    assert derived.merges == tuple(merges)


# ---------------------------------------------------------------------------
# Loading: get_encoding, load_tiktoken, rank files


def test_get_encoding_reads_the_directory(tiktoken_dir, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tiktoken_dir))
    tok = bytepair.get_encoding("r50k_base")
    assert tok.encode("hello world") == [31373, 995]
    assert bytepair.get_encoding("r50k_base") is tok  # loaded once
    assert bytepair.list_encoding_names() == ["gpt2", *NAMES]
    # tiktoken's "gpt2" (read from GPT-2's own files) has r50k_base's ranks,
    # pattern and special token.
    assert bytepair.get_encoding("gpt2") is tok


def test_a_special_token_with_a_lone_surrogate_is_named(tiktoken_dir):
    with pytest.raises(FormatError, match=r"special token '<\|x\\ud800\|>' holds the lone"):
        bytepair.load_tiktoken(
            tiktoken_dir / "r50k_base.tiktoken", special_tokens={"<|x\ud800|>": 50256}
        )


def test_get_encoding_says_where_to_put_the_file(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(FileNotFoundError) as error:
        bytepair.get_encoding("cl100k_base")
    message = str(error.value)
    assert ENV_VAR in message and "cl100k_base.tiktoken" in message
    assert "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken" in message

    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    with pytest.raises(FileNotFoundError) as error:
        bytepair.get_encoding("o200k_base")
    assert str(tmp_path / "o200k_base.tiktoken") in str(error.value)
    assert "openaipublic" in str(error.value)

    (tmp_path / "o200k_base.tiktoken").mkdir()
    with pytest.raises(FileNotFoundError, match="o200k_base.tiktoken is not a file"):
        bytepair.get_encoding("o200k_base")

    with pytest.raises(ValueError, match="cl100k_base"):
        bytepair.get_encoding("cl100k")  # a pre-tokenizer name, not an encoding


def test_a_file_that_is_not_openais_is_refused(tiktoken_dir, tmp_path, monkeypatch):
    data = (tiktoken_dir / "r50k_base.tiktoken").read_bytes()
    (tmp_path / "r50k_base.tiktoken").write_bytes(data + b"eHl6eHl6 99999\n")  # one token more
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    with pytest.raises(FormatError, match="sha256"):
        bytepair.get_encoding("r50k_base")


def test_load_tiktoken_with_an_explicit_pattern(tiktoken_dir, tmp_path):
    copy = tmp_path / "mine.tiktoken"
    shutil.copy(tiktoken_dir / "r50k_base.tiktoken", copy)
    with pytest.raises(FormatError, match="pattern"):
        bytepair.load_tiktoken(copy)  # unknown name, no sidecar: cannot guess
    tok = bytepair.load_tiktoken(copy, pattern="r50k", special_tokens={"<|endoftext|>": 50256})
    assert tok.encode("hello world<|endoftext|>", allowed_special="all") == [31373, 995, 50256]
    plain = bytepair.load_tiktoken(copy, pattern=re.compile(r"\S+|\s+"))
    assert plain.special_tokens == {} and plain.n_vocab == 50256
    with pytest.raises(FormatError, match="also the rank"):
        bytepair.load_tiktoken(copy, pattern="r50k", special_tokens={"<|x|>": 5})


def test_known_names_load_through_the_format_module(tiktoken_dir, tmp_path):
    model = tiktoken_format.load_model(tiktoken_dir / "p50k_base.tiktoken")
    assert model.pretokenizer == resolve("p50k")
    assert model.special_tokens == {"<|endoftext|>": 50256}
    assert len(model.tokens) == 50281


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        (b"IQ== 0\nIg== 1\n!!!! 2\n", ["line 3", "base64"]),
        (b"IQ== 0\nIg== x1\n", ["line 2", "rank", "'x1'"]),
        (b"IQ== 0\nIg== -1\n", ["line 2", "rank"]),
        (b"IQ== 0\nIg== 0\n", ["line 2", "rank 0", "line 1"]),
        (b"IQ== 0\n\nIQ== 1\n", ["line 3", "twice", "line 1"]),
        (b"IQ== 0\nIg==\n", ["line 2", "1 field"]),
        (b"IQ== 0 7\n", ["line 1", "3 field"]),
        (b"", ["no token"]),
    ],
)
def test_bad_rank_files_name_file_and_line(tmp_path, content, fragments):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(FormatError) as error:
        tiktoken_format.load_ranks(path)
    message = str(error.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message, message


def test_model_without_all_bytes_is_refused(tmp_path):
    path = tmp_path / "few.tiktoken"
    tiktoken_format.write_ranks({b"a": 0, b"b": 1, b"ab": 2}, path)
    with pytest.raises(FormatError, match="single byte"):
        bytepair.load_tiktoken(path, pattern="gpt2")


# ---------------------------------------------------------------------------
# 2. Export: trained tokenizers become tiktoken encodings with the same ids

EXPORT_PRETOKENIZERS = {
    "none": "none",
    "whitespace": "whitespace",
    "gpt2": "gpt2",
    "r50k": "r50k",
    "p50k": "p50k",
    "cl100k": "cl100k",
    "o200k": "o200k",
    "regex-words": re.compile(r"\w+|[^\w\s]+|\s+"),
    "regex-with-gaps": re.compile(r"[a-z]+|\d"),  # leaves text between matches
}
EXPORT_SPECIALS = ["<|endoftext|>", "<|pad|>"]


@pytest.fixture(scope="module")
def training_texts(small_texts) -> list[str]:
    return [text[:60_000] for text in small_texts.values()]


def _chunks(text: str, size: int = 2000) -> list[str]:
    # tiktoken merges a piece in quadratic time; "none" makes a text one piece.
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.fixture(scope="module", params=list(EXPORT_PRETOKENIZERS))
def exported(request, training_texts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train(
            training_texts,
            1200,
            special_tokens=EXPORT_SPECIALS,
            pretokenizer=EXPORT_PRETOKENIZERS[request.param],
            progress=False,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an exact export never warns
        enc = bytepair.to_tiktoken(tok, name=f"trained-{request.param}")
    return tok, enc


def test_trained_tokenizer_exports_exactly(exported, small_texts):
    tok, enc = exported
    assert tiktoken_format.exactness_problems(tok.model) == []
    assert enc.n_vocab == tok.n_vocab
    for text in small_texts.values():
        chunks = _chunks(text[:300_000])
        assert tok.encode_ordinary_batch(chunks) == enc.encode_ordinary_batch(chunks)
    text = f"hello{EXPORT_SPECIALS[0]} world{EXPORT_SPECIALS[1]}"
    ids = tok.encode(text, allowed_special="all")
    assert ids == enc.encode(text, allowed_special="all")
    assert 0 in ids and 1 in ids  # the special ids survive


@settings(max_examples=60)
@given(text=st.one_of(any_text, tricky_text))
def test_trained_tokenizer_exports_exactly_on_any_text(exported, text):
    tok, enc = exported
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text), repr(text)


def test_saved_files_read_by_tiktoken_and_bytepair(exported, tmp_path, small_texts):
    tok, _ = exported
    path = tmp_path / "trained.tiktoken"
    written = bytepair.save_tiktoken(tok, path)
    assert written == (path, tiktoken_format.sidecar_path(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "trained.tiktoken",
        "trained.tiktoken.json",
    ]

    # Plain tiktoken, from the two files alone.
    meta = json.loads(written[1].read_text(encoding="utf-8"))
    enc = tiktoken.Encoding(
        meta["name"],
        pat_str=meta["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=meta["special_tokens"],
    )
    again = bytepair.load_tiktoken(path)  # the sidecar gives pattern and specials
    assert again.pretokenizer == tok.pretokenizer
    assert again.special_tokens == tok.special_tokens
    chunks = _chunks(small_texts["botchan.txt"][:50_000])
    expected = tok.encode_ordinary_batch(chunks)
    assert enc.encode_ordinary_batch(chunks) == expected
    assert again.encode_ordinary_batch(chunks) == expected

    with pytest.raises(FileExistsError):
        bytepair.save_tiktoken(tok, path)
    bytepair.save_tiktoken(tok, path, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "trained.tiktoken",
        "trained.tiktoken.json",
    ]


@pytest.mark.slow
def test_gpt2_merge_list_exports_to_openais_r50k_ranks(shared_data, tiktoken_dir, tmp_path):
    """GPT-2's merge list satisfies E1/E2, and its export is OpenAI's r50k_base file."""
    gpt2 = shared_data / "models" / "gpt2"
    if not (gpt2 / "encoder.json").is_file():
        pytest.skip(f"GPT-2 files not found in {gpt2}")
    shutil.copy(gpt2 / "encoder.json", tmp_path / "vocab.json")
    shutil.copy(gpt2 / "vocab.bpe", tmp_path / "merges.txt")
    from bytepair.formats import gpt2 as gpt2_format

    model = gpt2_format.load(tmp_path)
    ranks = tiktoken_format.export_ranks(model)
    assert ranks == tiktoken_format.load_ranks(tiktoken_dir / "r50k_base.tiktoken")


# ---------------------------------------------------------------------------
# Export of merge lists tiktoken cannot reproduce


def hand_built(merges: list[tuple[bytes, bytes]], order: list[bytes] | None = None) -> Tokenizer:
    """Bytes 0..255, then the merge results (in ``order`` when given), merges by rank."""
    tokens = [bytes([b]) for b in range(256)]
    made = order if order is not None else []
    if order is None:
        for left, right in merges:
            if left + right not in made:
                made.append(left + right)
    tokens += made
    ids = {t: i for i, t in enumerate(tokens)}
    pairs = tuple((ids[left], ids[right]) for left, right in merges)
    return Tokenizer(BPEModel(tuple(tokens), pairs, {}, Pretokenizer("none", None)))


def test_unreachable_token_is_refused_and_would_differ():
    # "abc" is made by a + bc, but merging "abc" gives ab + c first: the merge
    # list never makes it, tiktoken's rule does (whole piece, or [ab][c]).
    tok = hand_built([(b"a", b"b"), (b"b", b"c"), (b"a", b"bc")])
    with pytest.raises(ValueError, match=r"b'abc' \(id 258\) is not reachable"):
        bytepair.to_tiktoken(tok)
    with pytest.warns(UserWarning, match="b'abc'"):
        enc = bytepair.to_tiktoken(tok, force=True)
    assert tok.encode_ordinary("abc") == [256, 99]
    assert enc.encode_ordinary("abc") == [258]
    assert tok.encode_ordinary("xabc") != enc.encode_ordinary("xabc")


def test_token_without_a_merge_is_refused():
    tokens = tuple(bytes([b]) for b in range(256)) + (b"ab", b"xyz")
    model = BPEModel(tokens, ((97, 98),), {}, Pretokenizer("gpt2", resolve("gpt2").pattern))
    with pytest.raises(ValueError, match=r"b'xyz' \(id 257\) is not reachable"):
        bytepair.to_tiktoken(Tokenizer(model))


def test_ids_out_of_merge_order_are_refused_and_would_differ():
    # Merges ab (rank 0) then bc (rank 1), but bc has the smaller id: tiktoken
    # would merge b+c first.
    tok = hand_built([(b"a", b"b"), (b"b", b"c")], order=[b"bc", b"ab"])
    with pytest.raises(ValueError, match="not in merge order") as error:
        bytepair.to_tiktoken(tok)
    assert "b'ab' (id 257)" in str(error.value) and "b'bc' (id 256)" in str(error.value)
    with pytest.warns(UserWarning):
        enc = bytepair.to_tiktoken(tok, force=True)
    assert tok.encode_ordinary("abc") == [257, 99]
    assert enc.encode_ordinary("abc") == [97, 256]


def test_a_duplicate_merge_that_never_applies_is_exact():
    # ab + c and a + bc both make "abc"; merging "abc" always goes through
    # [ab][c], so a + bc can never apply: tiktoken reproduces the list.
    tok = hand_built([(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")])
    assert tiktoken_format.exactness_problems(tok.model) == []
    enc = bytepair.to_tiktoken(tok)
    for n in range(1, 8):
        for text in map("".join, _words("abc", n)):
            assert tok.encode_ordinary(text) == enc.encode_ordinary(text), text


def _words(alphabet: str, n: int):
    if n == 0:
        yield ()
        return
    for rest in _words(alphabet, n - 1):
        for char in alphabet:
            yield (*rest, char)


@st.composite
def merge_lists(draw):
    """A random merge list over a, b, c (duplicates allowed), and sometimes
    its result ids shuffled out of merge order."""
    tokens = [bytes([b]) for b in range(256)]
    ids = {t: i for i, t in enumerate(tokens)}
    usable = [ids[b"a"], ids[b"b"], ids[b"c"]]
    merges: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(1, 14))):
        left, right = draw(st.sampled_from(usable)), draw(st.sampled_from(usable))
        joined = tokens[left] + tokens[right]
        if (left, right) in merges or len(joined) > 6:
            continue
        if joined not in ids:
            ids[joined] = len(tokens)
            tokens.append(joined)
            usable.append(ids[joined])
        merges.append((left, right))
    if len(tokens) > 257 and draw(st.booleans()):
        order = draw(st.permutations(range(256, len(tokens))))
        new_id = dict(zip(range(256, len(tokens)), order))
        new_id.update({i: i for i in range(256)})
        shuffled = list(tokens)
        for old, new in new_id.items():
            shuffled[new] = tokens[old]
        tokens = shuffled
        merges = [(new_id[left], new_id[right]) for left, right in merges]
    return BPEModel(tuple(tokens), tuple(merges), {}, Pretokenizer("none", None))


SHORT_WORDS = ["".join(w) for n in range(1, 6) for w in _words("abc", n)]


@pytest.mark.slow
@settings(max_examples=150)
@given(model=merge_lists(), extra=st.lists(st.text("abc", min_size=6, max_size=40), max_size=10))
def test_export_criterion_against_tiktoken(model, extra):
    """When the criterion says exact, tiktoken gives the merge list's ids on
    every string over a, b, c up to 5 letters and on longer random ones; when
    a token is unreachable, its own bytes already encode differently."""
    tok = Tokenizer(model)
    problems = tiktoken_format.exactness_problems(model)
    if not problems:
        enc = bytepair.to_tiktoken(tok)
        for text in SHORT_WORDS + extra:
            assert tok.encode_ordinary(text) == enc.encode_ordinary(text), (text, model.merges)
        return
    with pytest.raises(ValueError, match="tiktoken cannot reproduce"):
        bytepair.to_tiktoken(tok)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = bytepair.to_tiktoken(tok, force=True)
    for problem in problems:
        found = re.match(r"token (b'[abc]+') \(id (\d+)\) is not reachable", problem)
        if found:
            text, token_id = found.group(1)[2:-1], int(found.group(2))
            assert enc.encode_ordinary(text) == [token_id]
            assert tok.encode_ordinary(text) != [token_id]


def test_user_regex_that_can_match_empty_is_refused():
    tok = bytepair.train(["aa bb cc aa bb"] * 5, 260, pretokenizer=re.compile(r"\w*"))
    with pytest.raises(ValueError, match="empty string"):
        bytepair.to_tiktoken(tok)
    with pytest.warns(UserWarning, match="empty string"):
        bytepair.to_tiktoken(tok, force=True)


# ---------------------------------------------------------------------------
# Special tokens that overlap


def _with_specials(specials: list[str]) -> Tokenizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # training stops early on this tiny corpus
        return bytepair.train(
            ["hello world <a> <b> abab a b aaa bbb wxyzw"] * 20,
            300,
            special_tokens=specials,
            progress=False,
        )


def _outcome(encoder, text: str, allowed, disallowed) -> object:
    try:
        return encoder.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    except ValueError:  # bytepair: DisallowedSpecialError; tiktoken: ValueError
        return "raises"


def _choices(specials: list[str]) -> list[tuple[object, object]]:
    subsets = [set(), *({s} for s in specials), "all"]
    return [(allowed, disallowed) for allowed in subsets for disallowed in ("all", ())]


OVERLAP_TEXTS = ["<a><b>", "x<a><b>a>", "<a><a><b>", "<a>b<a><b><b>", "wxyzw", "xyz"]


def test_special_prefixes():
    specials = {"<a>": 0, "<a><b>": 1, "<a><b><c>": 2, "<b>": 3, "<ab>": 4}
    assert tiktoken_format.special_prefixes(specials) == [
        ("<a>", "<a><b>"),
        ("<a>", "<a><b><c>"),
        ("<a><b>", "<a><b><c>"),
    ]
    assert tiktoken_format.special_prefixes(dict.fromkeys(EXPORT_SPECIALS, 0)) == []


@pytest.mark.parametrize("specials", [["<a>", "<a><b>"], ["<a><b>", "<a>"]])
def test_specials_that_begin_one_another_are_refused_and_would_differ(specials, tmp_path):
    tok = _with_specials(specials)
    assert tok.encode("<a><b>", allowed_special="all") == [tok.special_tokens["<a><b>"]]
    with pytest.raises(ValueError, match=r"'<a>' begins '<a><b>'"):
        bytepair.to_tiktoken(tok)
    with pytest.raises(ValueError, match=r"'<a>' begins '<a><b>'"):
        bytepair.save_tiktoken(tok, tmp_path / "t.tiktoken")
    assert list(tmp_path.iterdir()) == []
    with pytest.warns(UserWarning, match=r"'<a>' begins '<a><b>'.*ids will differ"):
        args = tiktoken_format.encoding_args(tok, force=True)
    # tiktoken ignores the order of its special_tokens: longest first or last, some
    # choice of allowed specials still gives other ids than bytepair.
    for order in (sorted(specials, key=len, reverse=True), sorted(specials, key=len)):
        args["special_tokens"] = {text: tok.special_tokens[text] for text in order}
        enc = tiktoken.Encoding(**args)
        differ = [
            (text, allowed, disallowed)
            for text in OVERLAP_TEXTS
            for allowed, disallowed in _choices(specials)
            if _outcome(tok, text, allowed, disallowed) != _outcome(enc, text, allowed, disallowed)
        ]
        assert differ, order


@pytest.mark.parametrize("specials", [["xy", "yz"], ["wxyzw", "y"], ["<a>", "<b>", "a><"]])
def test_specials_that_overlap_without_a_common_start_export_exactly(specials):
    tok = _with_specials(specials)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = bytepair.to_tiktoken(tok)
    for text in OVERLAP_TEXTS + ["".join(specials), "a".join(specials)]:
        for allowed, disallowed in _choices(specials):
            ours = _outcome(tok, text, allowed, disallowed)
            assert ours == _outcome(enc, text, allowed, disallowed), (text, allowed, disallowed)


def test_command_line_refuses_overlapping_specials(tmp_path, capsys):
    from bytepair.cli import main

    source = tmp_path / "tok.json"
    _with_specials(["<a>", "<a><b>"]).save(source)
    out = tmp_path / "tok.tiktoken"
    assert main(["convert", str(source), str(out), "--to", "tiktoken"]) == 1
    assert "'<a>' begins '<a><b>'" in capsys.readouterr().err and not out.exists()
    assert main(["convert", str(source), str(out), "--to", "tiktoken", "--allow-inexact"]) == 0
    assert "ids will differ" in capsys.readouterr().err and out.exists()


def test_tiktoken_model_exports_its_own_ranks(tiktoken_dir):
    tok = bytepair.load_tiktoken(tiktoken_dir / "cl100k_base.tiktoken")
    enc = bytepair.to_tiktoken(tok, "cl100k_base")
    assert enc._mergeable_ranks == load_tiktoken_bpe(str(tiktoken_dir / "cl100k_base.tiktoken"))
    assert enc._special_tokens == dict(ENCODINGS["cl100k_base"].special_tokens)
    assert enc._pat_str == resolve("cl100k").pattern
    assert enc.n_vocab == tok.n_vocab == 100277


def test_a_foreign_pat_str_warns_that_tiktoken_drops_unmatched_text(tiktoken_dir, tmp_path):
    """tiktoken drops the text its pat_str does not match; bytepair keeps every
    byte. A sidecar with a foreign pat_str loads with a warning saying so; the
    form tiktoken_pattern writes (gaps matched) is read back silently, exactly."""
    from bytepair.formats.tiktoken import tiktoken_pattern

    ranks = tiktoken_dir / "r50k_base.tiktoken"
    path = tmp_path / "my.tiktoken"
    path.write_bytes(ranks.read_bytes())
    pattern = r"\w+|[^\w\s]+"
    specials = {"<|endoftext|>": 50256}
    mergeable = load_tiktoken_bpe(str(ranks))

    def sidecar(pat_str: str) -> None:
        document = {"format": "bytepair-tiktoken", "version": 1, "name": "my"}
        document |= {"pat_str": pat_str, "special_tokens": specials}
        (tmp_path / "my.tiktoken.json").write_text(json.dumps(document), encoding="utf-8")

    sidecar(pattern)
    with pytest.warns(UserWarning, match="tiktoken drops the text its pat_str"):
        ours = bytepair.load(path)
    theirs = tiktoken.Encoding(
        "my", pat_str=pattern, mergeable_ranks=mergeable, special_tokens=specials
    )
    assert ours.encode("hello,world") == theirs.encode("hello,world")  # matched completely
    assert ours.encode("hello world") != theirs.encode("hello world")  # the space is dropped there

    wrapped, problem = tiktoken_pattern(Pretokenizer("regex", pattern))
    assert problem is None
    sidecar(wrapped)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = bytepair.load(path)
    assert ours.model.pretokenizer == Pretokenizer("regex", pattern)
    theirs = tiktoken.Encoding(
        "my", pat_str=wrapped, mergeable_ranks=mergeable, special_tokens=specials
    )
    for text in ("hello world", "  a\tb\n\n c!! ", "naïve 👍🏽 x"):
        assert ours.encode(text) == theirs.encode(text)


def test_a_sidecar_whose_pat_str_is_not_its_pretokenizers_is_refused(tiktoken_dir, tmp_path):
    """tiktoken reads the sidecar's pat_str, bytepair its pretokenizer: a file
    where they disagree would give the two libraries other pieces."""
    tok = bytepair.load_tiktoken(tiktoken_dir / "r50k_base.tiktoken")
    path = tmp_path / "my.tiktoken"
    _, sidecar = bytepair.save_tiktoken(tok, path)
    assert bytepair.load(path).encode("HELLO world's 123456") == tok.encode("HELLO world's 123456")
    document = json.loads(sidecar.read_text(encoding="utf-8"))
    document["pat_str"] = resolve("cl100k").pattern
    sidecar.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FormatError, match=r"\(pat_str\).*not the pattern of the file's"):
        bytepair.load(path)


def test_export_of_a_sentencepiece_tokenizer_is_a_type_error(shared_data, tmp_path):
    unigram = bytepair.load(shared_data / "models" / "sentencepiece" / "sp_test_model.model")
    for export in (
        lambda: bytepair.to_tiktoken(unigram),
        lambda: bytepair.save_tiktoken(unigram, tmp_path / "u.tiktoken"),
    ):
        with pytest.raises(TypeError, match="needs a byte-level BPE Tokenizer or BPEModel"):
            export()
    assert not list(tmp_path.iterdir())
