"""Real HuggingFace and GPT-2 vocabularies: bytepair gives `tokenizers`' ids.

The oracle is HuggingFace ``tokenizers`` itself: ids =
``Tokenizer.encode(text, add_special_tokens=False).ids`` (bytepair's encode,
like tiktoken's, never adds BOS/EOS). tokenizers always cuts special tokens
out of the text, so bytepair is compared with ``allowed_special="all"``
(hypothesis draws the special tokens' text from the code). Covered:

1. The regex engines. tokenizers runs Split regexes in Oniguruma, bytepair in
   fancy-regex; the Unicode classes are compared on every code point, each
   difference the translation in ``formats.hf_regex`` works around is kept
   here as a witness, and every pattern we read or write is compared on all
   code points and on hypothesis text.
2. roberta-base's tokenizer.json, GPT-2's encoder.json + vocab.bpe, and
   Llama-3 / Qwen2 style files (their published pre-tokenizer JSON around a
   bytepair-trained vocabulary, GPT-2's, and cl100k's) give tokenizers' ids on
   the corpora, the recorded vectors and hypothesis text; what cannot be read
   exactly (phi-3, t5, a Qwen2 NFC normalizer) fails naming the part.
3. Export: tokenizers trained by bytepair with every pre-tokenizer, and the
   tiktoken vocabularies (tiktoken's rule), saved as tokenizer.json, give
   bytepair's (and tiktoken's) ids in tokenizers and load back equal.

Versions pinned by the environment: tokenizers 0.23.3, tiktoken 0.14.0.
"""

from __future__ import annotations

import gzip
import json
import random
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import FormatError, Tokenizer
from bytepair.formats import hf_regex, huggingface, load_model
from bytepair.formats.byte_level import CHAR_BYTES, bytes_to_unicode_text
from bytepair.formats.merge_rules import natural_merges, not_made_by_merges
from bytepair.model import BPEModel
from bytepair.pretokenizers import BUILTIN_PATTERNS, Pretokenizer, resolve

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is a test dependency")
regex = pytest.importorskip("regex", reason="the regex module compiles user patterns")
tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is a test dependency")
from tiktoken.load import load_tiktoken_bpe  # noqa: E402
from tokenizers import Regex, pre_tokenizers  # noqa: E402

from test_formats import _added_entry  # noqa: E402

# Published pre-tokenizer patterns (the tokenizer.json files of Meta-Llama-3-8B and Qwen2).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def split_then_byte_level(pattern: str, trim_offsets: bool) -> dict:
    return {
        "type": "Sequence",
        "pretokenizers": [
            {
                "type": "Split",
                "pattern": {"Regex": pattern},
                "behavior": "Isolated",
                "invert": False,
            },
            {
                "type": "ByteLevel",
                "add_prefix_space": False,
                "trim_offsets": trim_offsets,
                "use_regex": False,
            },
        ],
    }


SMALL_CORPORA = ["botchan.txt", "taylorswift.txt", "tinyshakespeare.txt", "wagahaiwa_nekodearu.txt"]
LARGE_CORPORA = ["large_en.txt.gz", "large_code.txt.gz", "large_multilingual.txt.gz"]
SAMPLE_BYTES = 100_000
SAMPLE_AT = (0.05, 0.5, 0.95)  # fractions of each large file
SHORT_CHARS = 30_000  # per text, for the many small trained tokenizers

# Text over all Unicode categories (no lone surrogates: they have no UTF-8).
any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60)
# The characters the patterns treat specially, densely.
tricky_text = st.text(
    alphabet=st.sampled_from(
        list(" \t\n\r\x0b\x0c\x85\u2028\u00a0\u3000'sStTdDmMlLvVrReE0129½²Ⅻaé\u0301ßſK")
        + list("\u212aﬅ.,!?-/\\$^日本🙂\u200d")
    ),
    max_size=40,
)
texts = st.one_of(any_text, tricky_text)


# ---------------------------------------------------------------------------
# Corpora


def _large_samples(path: Path) -> dict[str, str]:
    data = gzip.decompress(path.read_bytes())
    samples = {}
    for fraction in SAMPLE_AT:
        start = data.find(b"\n\n", int(len(data) * fraction)) + 2
        end = data.find(b"\n\n", start + SAMPLE_BYTES)
        samples[f"{path.name}@{fraction}"] = data[start:end].decode("utf-8")
    return samples


@pytest.fixture(scope="module")
def corpus(shared_data) -> dict[str, str]:
    """The small corpora whole, and three ~100 KB samples of each large corpus."""
    folder = shared_data / "corpus"
    result = {}
    for name in SMALL_CORPORA:
        result[name] = (folder / "small" / name).read_text(encoding="utf-8")
    for name in LARGE_CORPORA:
        result.update(_large_samples(folder / name))
    return result


@pytest.fixture(scope="module")
def short_corpus(corpus) -> dict[str, str]:
    return {name: text[:SHORT_CHARS] for name, text in corpus.items()}


def first_difference(ours: list[int], theirs: list[int]) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(map(len, (ours, theirs)))
    )
    return f"first difference at id {at}: ours {ours[at : at + 8]}, theirs {theirs[at : at + 8]}"


def assert_same_ids(tok: Tokenizer, hf, texts: dict[str, str]) -> None:
    names = list(texts)
    theirs = [e.ids for e in hf.encode_batch([texts[n] for n in names], add_special_tokens=False)]
    ours = tok.encode_batch([texts[n] for n in names], allowed_special="all")
    for name, a, b in zip(names, ours, theirs):
        assert a == b, f"{name}: {first_difference(a, b)}"


def hf_of(path: Path):
    return tokenizers.Tokenizer.from_file(str(path))


def loaded_quietly(path: Path) -> tuple[Tokenizer, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = bytepair.load(path)
    return tok, [str(w.message) for w in caught]


# ---------------------------------------------------------------------------
# 1. The regex engines: Oniguruma (tokenizers) and fancy-regex (bytepair)

# Planes 0-3 and 14: every code point Unicode has assigned (or will, in these planes).
SWEEP = "".join(
    chr(c) for c in (*range(0x40000), *range(0xE0000, 0xE1000)) if not 0xD800 <= c <= 0xDFFF
)
LEAF_CATEGORIES = (
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Co Cn"
)


def ours_pieces(pattern: str):
    model = BPEModel(tuple(bytes([b]) for b in range(256)), (), {}, Pretokenizer("regex", pattern))
    return Tokenizer(model).pretokenize


def hf_pieces(pattern: str):
    split = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    return lambda text: [piece for piece, _ in split.pre_tokenize_str(text)]


@pytest.mark.parametrize(
    "cls",
    [r"\p{L}", r"\p{N}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}"]
    + [r"\p{Nd}", r"\p{Pc}", r"\p{Alphabetic}", r"\p{Join_Control}", r"\s", r"\d", "."],
)
def test_character_classes_agree_on_every_code_point(cls):
    pattern = f"{cls}+"
    assert ours_pieces(pattern)(SWEEP) == hf_pieces(pattern)(SWEEP)


def test_general_categories_agree_on_every_code_point():
    pattern = "|".join(rf"\p{{{c}}}+" for c in LEAF_CATEGORIES.split())
    assert ours_pieces(pattern)(SWEEP) == hf_pieces(pattern)(SWEEP)


@pytest.mark.parametrize(
    ("naive", "text"),
    [
        (r"\p{N}{1,3}+", "12345"),  # Oniguruma: (?:\p{N}{1,3})+, one piece
        (r"\s+$|\S+", "a \nb"),  # Oniguruma: $ before every newline
        (r"^\s+|\S+", "a\n b"),  # Oniguruma: ^ after every newline
        (r"\w+|\s", "a²Ⓐb"),  # different Unicode definitions of \w
        (r"\w+|[\w]+|\W", "²a\u200d"),  # Oniguruma: ² in \w, not in [\w]; U+200D in neither
        (r"x\d{2}?y|\S+|\s", "xy!"),  # Oniguruma: X{n}? is (?:X{n})?, not a lazy X{n}
        (r"(?i:ss)", "aß"),  # Oniguruma folds ß to ss (not always: not in "ß" alone)
        (r"a*|b", "bb"),  # tokenizers cuts at empty matches
        (r"[[:alpha:]]+|\s", "aé"),  # POSIX classes: Unicode vs ASCII
        (r"\<+|\S", "<<"),  # a word boundary in fancy-regex
    ],
)
def test_each_dialect_difference_has_a_witness(naive, text):
    """The same pattern text cuts differently in the two engines."""
    assert ours_pieces(naive)(text) != hf_pieces(naive)(text)


@pytest.mark.parametrize(
    ("ours", "text"),
    [
        (r"\p{N}{1,3}+|\D", "12345"),
        (r"\s++$|\S+|\s", "a \nb  "),
        (r"^\s+|\S+|\s", "\n a\n b"),
        (r"\w+|[^\w\s]+|\s+", "a²Ⓐb ¹₂"),
        (r"[\w-]+|\s+", "Ⅻ-² x"),
    ],
)
def test_translation_removes_the_difference(ours, text):
    assert ours_pieces(ours)(text) == hf_pieces(hf_regex.to_tokenizers(ours))(text)


EXPORTED = {name: p for name, p in BUILTIN_PATTERNS.items() if p} | {
    "word-regex": r"\w+|[^\w\s]+|\s+",
    "anchored-regex": r"\p{N}{1,3}+|[^\s\p{N}]+|\s+$|\s",
}
IMPORTED = {
    "llama3": LLAMA3_PATTERN,
    "qwen2": QWEN2_PATTERN,
    "gpt2": BUILTIN_PATTERNS["gpt2"],
    "word-regex": r"\w+|[^\w\s]+|\s+",
    "word-class-regex": r"[\w'-]+|\W",
}


@pytest.fixture(scope="module")
def pattern_pairs():
    """(ours, theirs) piece functions for each pattern we write or read."""
    pairs = {}
    for name, pattern in EXPORTED.items():
        pairs[f"write:{name}"] = (
            ours_pieces(pattern),
            hf_pieces(hf_regex.to_tokenizers(pattern)),
        )
    for name, pattern in IMPORTED.items():
        pairs[f"read:{name}"] = (
            ours_pieces(hf_regex.from_tokenizers(pattern)),
            hf_pieces(pattern),
        )
    # tokenizers' own ByteLevel regex is GPT-2's pattern.
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    pairs["ByteLevel"] = (
        ours_pieces(BUILTIN_PATTERNS["gpt2"]),
        lambda text: [
            bytes(CHAR_BYTES[c] for c in piece).decode("utf-8")
            for piece, _ in byte_level.pre_tokenize_str(text)
        ],
    )
    return pairs


@pytest.mark.slow
def test_patterns_cut_every_code_point_alike(pattern_pairs):
    for name, (ours, theirs) in pattern_pairs.items():
        assert ours(SWEEP) == theirs(SWEEP), name


@settings(max_examples=300)
@given(text=texts)
def test_patterns_cut_hypothesis_text_alike(pattern_pairs, text):
    for name, (ours, theirs) in pattern_pairs.items():
        assert ours(text) == theirs(text), name


def test_llama3_pattern_is_not_cl100k():
    """Llama-3's pattern drops cl100k's \\s++$ and changes \\s*[\\r\\n]: a trailing
    newline followed by spaces is one piece in cl100k, two in Llama-3."""
    text = "a\n  "
    assert ours_pieces(BUILTIN_PATTERNS["cl100k"])(text) == ["a", "\n  "]
    assert hf_pieces(LLAMA3_PATTERN)(text) == ["a", "\n", "  "]


# ---------------------------------------------------------------------------
# 1b. Constructs whose first translation was wrong, checked against tokenizers

# Every Unicode scalar value, U+0000 to U+10FFFF.
EVERY_CODE_POINT = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


def class_cuts(pieces_of, cls: str) -> tuple[list[str], list[str]]:
    """What tells a character class from any other: the pieces of ``cls+`` on every
    code point (a new piece wherever membership changes), and whether U+0000 is
    in it (then ``cls|\\x00\\x00`` cuts "\\x00\\x00" in two)."""
    return pieces_of(cls + "+")(EVERY_CODE_POINT), pieces_of(cls + r"|\x00\x00")("\x00\x00")


@pytest.mark.slow
@pytest.mark.parametrize("theirs", [r"\w", r"\W", r"[\w-]", r"[^\w\s]"], ids=str)
def test_word_class_read_from_tokenizers_on_every_code_point(theirs):
    """Oniguruma's \\w alone also has ² ³ ¹ ¼ ½ ¾, in a class it does not, and
    neither is "letters, marks, numbers, connectors" (Ⓐ is in, ৴ is not)."""
    ours = class_cuts(lambda p: ours_pieces(hf_regex.from_tokenizers(p)), theirs)
    assert ours == class_cuts(hf_pieces, theirs)


@pytest.mark.slow
@pytest.mark.parametrize(
    "ours", [r"\w", r"\W", r"[\w-]", hf_regex.from_tokenizers(r"\w"), r"[\p{Alphabetic}]"], ids=str
)
def test_word_class_written_for_tokenizers_on_every_code_point(ours):
    theirs = class_cuts(lambda p: hf_pieces(hf_regex.to_tokenizers(p)), ours)
    assert class_cuts(ours_pieces, ours) == theirs


def test_word_pattern_file_from_tokenizers_gives_its_ids(tmp_path):
    """A tokenizers model with a \\w Split regex, trained and saved by tokenizers."""
    from tokenizers import decoders, models, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\w+|[^\w\s]+|\s+"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    texts = ["aⒶb x²y ¹₂ Ⓑ🄰c ৴৴ a\u200db ½½ cat dog"] * 20
    trainer = trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    hf.train_from_iterator(texts, trainer)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = bytepair.load(path)
    for text in [*texts[0].split(), texts[0], SWEEP[:3000], SWEEP[0x2400:0x2600]]:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, repr(text)


@pytest.mark.parametrize(
    ("theirs", "text"),
    [
        (r"x\d{2}?y|\S+|\s", "xy! x12y x1y"),  # Oniguruma: X{n}? is (?:X{n})?
        (r"x(?:ab){1}?|.", "xab x"),
        (r"x\d{1,2}?|\S", "x12 x1"),  # X{n,m}? is lazy in both
        (r"(?>\p{N}{1,3}){2}|.", "12345 1234567 1"),  # an atomic interval, repeated
        (r"(?>\p{N}{1,3})+|\D+", "12345a1"),
        (r"(?>\p{N}{1,3})*x|.", "12345x 1x"),
        (r"(?>(?>\p{N}{1,2}){2})|.", "12345"),
    ],
)
def test_repeats_read_from_tokenizers_cut_alike(theirs, text):
    assert ours_pieces(hf_regex.from_tokenizers(theirs))(text) == hf_pieces(theirs)(text)


@pytest.mark.parametrize(
    ("ours", "text"),
    [
        (r"xa{2}?b|.", "xb xaab xab"),  # ours: a lazy X{n}, which is X{n}
        (r"x(?:a|ab){2}?c|.", "xc xaabc xababc"),
        (r"[\xC0-\xFF]+|[a-z]+|\s+|.", "àé ÿa Ā"),  # \xE9 is a byte in Oniguruma
        (r"\xE9+|[\xB2]|.", "éé² e"),
    ],
)
def test_patterns_written_for_tokenizers_cut_alike(ours, text):
    assert ours_pieces(ours)(text) == hf_pieces(hf_regex.to_tokenizers(ours))(text)


def test_file_with_non_ascii_hex_escapes_loads_in_tokenizers(tmp_path):
    texts = ["àéîõü ÀÉÎÕÜ abc déjà vu, ÿ"] * 20
    pretokenizer = regex.compile(r"[\xC0-\xFF]+|[a-z]+|\s+|.")
    tok = bytepair.train(texts, 300, pretokenizer=pretokenizer, progress=False)
    tok.save(tmp_path / "x.json")
    hf = hf_of(tmp_path / "x.json")
    for text in [texts[0], "Ā ÿÿ", SWEEP[:1000]]:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


# A quantifier on each group: some Oniguruma refuses ("target of repeat operator is
# invalid"), some it takes. Each is also a bytepair pattern (\A, \z, look-ahead and
# groups are spelled alike; $ and ^ are anchors in both).
QUANTIFIED_ANCHORS = [
    r"a(?:b|$)+",
    r"a(?:b|^)+",
    r"a(?:b|\A)+",
    r"a(?:b|\z){2}",
    r"a(?:b|(?=c))+",
    r"a(?:b|(?!c))?",
    r"a(?:(?:$))*",
    r"a(?:b|(?:c|\z))+",
    r"a(?:b|c|(?!x)){1,3}",
    r"a(?:(b)|$)+",
    r"a(?:b\z)+",
    r"a(?:b(?=c))+",
    r"a(?:(?=c)b)+",
    r"a(?:\z\z)+",
    r"a(?:b|(?:c\z))+",
    r"a(?>b|\z)+",
    r"a(b|\z)+",
    r"a(?i:b|\z)+",
    r"a(?:(?i)b|\z)+",
    r"a(?:(?>\z))+",
    r"a(?:b|)+",
]


def tokenizers_refuses(pattern: str) -> bool:
    try:
        Regex(pattern)
    except Exception as exc:  # tokenizers raises a plain Exception
        assert "target of repeat operator is invalid" in str(exc)
        return True
    return False


@pytest.mark.parametrize("pattern", QUANTIFIED_ANCHORS)
def test_quantified_anchors_are_refused_exactly_where_tokenizers_refuses_them(pattern):
    pattern += r"|.|\n"
    text = "ab abb abc a\nab\nb ac abcbc a"
    refused = tokenizers_refuses(pattern)
    for translate in (hf_regex.from_tokenizers, hf_regex.to_tokenizers):
        if refused:
            with pytest.raises(hf_regex.UnsupportedPattern, match="Oniguruma"):
                translate(pattern)
        else:
            translate(pattern)
    if not refused:
        theirs = hf_regex.to_tokenizers(pattern)
        assert not tokenizers_refuses(theirs)
        assert ours_pieces(pattern)(text) == hf_pieces(theirs)(text)
        ours = hf_regex.from_tokenizers(pattern)
        assert ours_pieces(ours)(text) == hf_pieces(pattern)(text)


def test_some_quantified_anchors_are_taken_and_some_refused():
    refused = [tokenizers_refuses(p) for p in QUANTIFIED_ANCHORS]
    assert any(refused) and not all(refused)


# ---------------------------------------------------------------------------
# 2a. roberta-base


@pytest.fixture(scope="module")
def roberta(shared_data):
    path = shared_data / "models" / "hf" / "roberta-base.tokenizer.json"
    tok, messages = loaded_quietly(path)
    return path, tok, hf_of(path), messages


def test_roberta_loads_and_names_what_bytepair_does_not_do(roberta):
    path, tok, hf, messages = roberta
    assert len(messages) == 1, messages
    assert any("post_processor RobertaProcessing" in m for m in messages)
    assert tok.n_vocab == hf.get_vocab_size() == 50265
    assert len(tok.merge_ids) == 50000 and tok.pretokenizer == resolve("gpt2")
    assert tok.special_tokens == {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 50264}
    # Ids the merges never make; tokenizers (no ignore_merges) never returns them either.
    unmade = not_made_by_merges(tok.model.tokens, tok.model.special_tokens.values(), tok.merge_ids)
    assert [tok.model.tokens[i] for i in unmade] == [
        b"<|endoftext|>",
        b"madeupword0000",
        b"madeupword0001",
        b"madeupword0002",
    ]


def test_fast_and_slow_reading_give_the_same_model(roberta, tmp_path, monkeypatch):
    """The core's fast path (vocab and merges parsed in Rust) and the Python
    reader agree on the real file and on files we write, in both merge styles."""
    path, _, _, _ = roberta
    texts = [path.read_text(encoding="utf-8")]
    ours = bytepair.train(["hello world, hello there"] * 3, 300, special_tokens=["<|x|>"])
    ours.save(tmp_path / "t.json")
    texts.append((tmp_path / "t.json").read_text(encoding="utf-8"))
    document = json.loads(texts[-1])
    flip = {str: lambda m: m.split(" "), list: " ".join}  # the other way to write a merge
    document["model"]["merges"] = [flip[type(m)](m) for m in document["model"]["merges"]]
    del document["model"]["type"]
    texts.append(json.dumps(document))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = [huggingface.loads(text, "f") for text in texts]
        monkeypatch.setattr(huggingface._native, "split_hf_bpe", lambda text: None)
        slow = [huggingface.loads(text, "f") for text in texts]
    assert fast == slow


def test_roberta_vectors(roberta, shared_data):
    _, tok, _, _ = roberta
    lines = (shared_data / "vectors" / "hf_tokenizers_vectors.jsonl").read_text("utf-8")
    # split on "\n" only: the JSON strings hold U+2028 and friends unescaped.
    records = [json.loads(line) for line in lines.split("\n") if line]
    records = [r for r in records if r["model"] == "roberta-base"]
    assert len(records) > 400
    for record in records:
        assert tok.encode(record["text"], allowed_special="all") == record["ids"], record["text"]


@pytest.mark.slow
def test_roberta_corpora(roberta, corpus):
    _, tok, hf, _ = roberta
    assert_same_ids(tok, hf, corpus)


@given(text=texts)
def test_roberta_hypothesis(roberta, text):
    _, tok, hf, _ = roberta
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


def test_roberta_specials_and_mask_swallowing_the_space_before_it(roberta):
    _, tok, hf, _ = roberta
    assert tok.model.special_token_strip == {"<mask>": (True, False)}
    for text in [
        "<s>hi</s>",
        "a<mask>b",
        "<pad><unk>x</s>",
        "x\n<s> y",
        "Hello <mask> world",
        "a \t\n <mask>  b",
        "<mask> <mask>",
        "x\u3000<mask>",
    ]:
        assert (
            tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
        )
    assert tok.encode("Hello <mask> world", allowed_special="all") == [31414, 50264, 232]


def test_whitespace_swallowing_specials_are_not_written_where_they_cannot_be(roberta, tmp_path):
    from bytepair.formats import gpt2 as gpt2_format

    _, tok, _, _ = roberta
    with pytest.raises(ValueError, match="lstrip/rstrip"):
        gpt2_format.save(tok.model, tmp_path / "gpt2")
    with pytest.raises(ValueError, match="lstrip/rstrip"):
        bytepair.to_tiktoken(tok)


def test_roberta_written_by_bytepair_reads_the_same_in_tokenizers(roberta, short_corpus, tmp_path):
    _, tok, _, _ = roberta
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    assert_same_ids(tok, hf_of(path), short_corpus)
    assert bytepair.load(path).model == tok.model


# ---------------------------------------------------------------------------
# 2b. GPT-2's own files, under OpenAI's names


@pytest.fixture(scope="module")
def gpt2_files(shared_data):
    folder = shared_data / "models" / "gpt2"
    hf = tokenizers.Tokenizer(
        tokenizers.models.BPE.from_file(str(folder / "encoder.json"), str(folder / "vocab.bpe"))
    )
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.add_special_tokens(["<|endoftext|>"])
    return folder, bytepair.load(folder), hf


def test_gpt2_original_file_names_load(gpt2_files):
    folder, tok, hf = gpt2_files
    assert sorted(p.name for p in folder.iterdir()) == ["encoder.json", "vocab.bpe"]
    assert tok.n_vocab == hf.get_vocab_size() == 50257
    assert tok.special_tokens == {"<|endoftext|>": hf.token_to_id("<|endoftext|>")}


@pytest.mark.slow
def test_gpt2_corpora(gpt2_files, corpus):
    _, tok, hf = gpt2_files
    assert_same_ids(tok, hf, corpus)


@given(text=texts)
def test_gpt2_hypothesis(gpt2_files, text):
    _, tok, hf = gpt2_files
    assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


# ---------------------------------------------------------------------------
# 2c. Llama-3 and Qwen2 style files (the real ones are too big for shared data)


def llama3_document(model: BPEModel, n_specials: int = 256) -> dict:
    """Meta-Llama-3's tokenizer.json layout around ``model``'s vocabulary: specials
    after the vocabulary, outside model.vocab; a BOS template; ignore_merges."""
    vocab = {bytes_to_unicode_text(t): i for i, t in enumerate(model.tokens) if t is not None}
    first = len(model.tokens)
    names = ["<|begin_of_text|>", "<|end_of_text|>"] + [
        f"<|reserved_special_token_{i}|>" for i in range(n_specials - 2)
    ]
    added = [
        {
            "id": first + i,
            "content": name,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, name in enumerate(names)
    ]
    bos = {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": split_then_byte_level(LLAMA3_PATTERN, trim_offsets=True),
        "post_processor": {
            "type": "Sequence",
            "processors": [
                {
                    "type": "ByteLevel",
                    "add_prefix_space": True,
                    "trim_offsets": False,
                    "use_regex": True,
                },
                {
                    "type": "TemplateProcessing",
                    "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
                    "pair": [
                        bos,
                        {"Sequence": {"id": "A", "type_id": 0}},
                        bos,
                        {"Sequence": {"id": "B", "type_id": 1}},
                    ],
                    "special_tokens": {
                        "<|begin_of_text|>": {
                            "id": "<|begin_of_text|>",
                            "ids": [first],
                            "tokens": ["<|begin_of_text|>"],
                        }
                    },
                },
            ],
        },
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": [
                [bytes_to_unicode_text(model.tokens[a]), bytes_to_unicode_text(model.tokens[b])]
                for a, b in model.merges
            ],
        },
    }


def qwen2_document(model: BPEModel, normalizer: dict | None = None) -> dict:
    """Qwen2's layout: specials after the vocabulary, ByteLevel post-processor and
    decoder, merges as strings, no ignore_merges. (The real files have an NFC normalizer.)"""
    document = llama3_document(model, n_specials=3)
    names = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    for entry, name in zip(document["added_tokens"], names):
        entry["content"] = name
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": False,
        "use_regex": False,
    }
    document.update(
        normalizer=normalizer,
        pre_tokenizer=split_then_byte_level(QWEN2_PATTERN, trim_offsets=False),
        post_processor=byte_level,
        decoder=byte_level,
    )
    document["model"].update(
        ignore_merges=False,
        continuing_subword_prefix="",
        end_of_word_suffix="",
        merges=[" ".join(pair) for pair in document["model"]["merges"]],
    )
    return document


def converter_style(model: BPEModel) -> BPEModel:
    """The merge list HF's converter writes for a tiktoken vocabulary (Llama-3's
    file): every pair of tokens that makes a token, by the id of the token made,
    then by the ids of the parts."""
    ids = {t: i for i, t in enumerate(model.tokens) if t is not None}
    merges = []
    for token in model.tokens:
        pairs = [
            (ids[token[:cut]], ids[token[cut:]])
            for cut in range(1, len(token or b""))
            if token[:cut] in ids and token[cut:] in ids
        ]
        merges += sorted(pairs)
    return BPEModel(model.tokens, tuple(merges), model.special_tokens, model.pretokenizer)


@pytest.fixture(scope="module")
def trained_for_llama3(short_corpus):
    pretokenizer = regex.compile(hf_regex.from_tokenizers(LLAMA3_PATTERN))
    return bytepair.train(
        list(short_corpus.values()), 3000, pretokenizer=pretokenizer, progress=False
    )


@pytest.fixture(scope="module")
def style_files(tmp_path_factory, trained_for_llama3, gpt2_files):
    """name -> (bytepair Tokenizer loaded from the file, tokenizers' Tokenizer, warnings)."""
    folder = tmp_path_factory.mktemp("styles")
    gpt2_model = gpt2_files[1].model
    gpt2_vocab = BPEModel(gpt2_model.tokens[:-1], gpt2_model.merges, {}, gpt2_model.pretokenizer)
    converted = converter_style(gpt2_vocab)
    assert len(converted.merges) > 2 * len(gpt2_vocab.merges)  # many pairs per token
    documents = {
        "llama3-trained": llama3_document(trained_for_llama3.model),
        "llama3-gpt2-vocab": llama3_document(gpt2_vocab),
        "llama3-converted-gpt2": llama3_document(converted),
        "qwen2-trained": qwen2_document(trained_for_llama3.model),
    }
    files = {}
    for name, document in documents.items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        tok, messages = loaded_quietly(path)
        files[name] = (tok, hf_of(path), messages)
    return files


@pytest.mark.slow
def test_style_files_load_with_their_pattern_and_specials(style_files, trained_for_llama3):
    for name, (tok, hf, messages) in style_files.items():
        pattern = LLAMA3_PATTERN if name.startswith("llama3") else QWEN2_PATTERN
        assert tok.pretokenizer == Pretokenizer("regex", pattern), name
        assert tok.n_vocab == hf.get_vocab_size(), name
        assert {t: hf.token_to_id(t) for t in tok.special_tokens} == tok.special_tokens, name
        adds_bos = name.startswith("llama3")
        assert [("TemplateProcessing" in m) for m in messages] == ([True] if adds_bos else []), name
    # With ignore_merges, a merge list that provably encodes like tiktoken's rule reads as
    # that rule (here both the trained list and GPT-2's do); without it, as the list.
    assert style_files["llama3-trained"][0].model.merges is None
    assert style_files["llama3-gpt2-vocab"][0].model.merges is None
    converted = style_files["llama3-converted-gpt2"][0].model
    assert (
        converted.merges is None
        and converted.tokens == style_files["llama3-gpt2-vocab"][0].model.tokens
    )
    assert style_files["qwen2-trained"][0].model.merges == trained_for_llama3.model.merges
    assert style_files["llama3-trained"][0].model.tokens[:3000] == trained_for_llama3.model.tokens


@pytest.mark.slow
def test_style_files_corpora(style_files, short_corpus):
    for tok, hf, _ in style_files.values():
        texts = dict(short_corpus)
        specials = list(tok.special_tokens)
        texts["with specials"] = f"a{specials[0]}b {specials[-1]}\n{specials[1]} c"
        assert_same_ids(tok, hf, texts)


@given(text=texts)
def test_style_files_hypothesis(style_files, text):
    for name, (tok, hf, _) in style_files.items():
        assert (
            tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
        ), name


def test_qwen2_files_with_their_nfc_normalizer_give_tokenizers_ids(
    trained_for_llama3, short_corpus, tmp_path
):
    # The real Qwen2 files have an NFC normalizer: read as normalize=("nfc",).
    path = tmp_path / "qwen2.json"
    document = qwen2_document(trained_for_llama3.model, normalizer={"type": "NFC"})
    path.write_text(json.dumps(document), "utf-8")
    tok, _ = loaded_quietly(path)
    assert tok.normalize == ("nfc",)
    texts = dict(short_corpus)
    texts["decomposed"] = "Cafe\u0301 n\u0303o A\u030a <|im_start|>e\u0301<|im_end|>\u0301"
    assert_same_ids(tok, hf_of(path), texts)
    other = qwen2_document(trained_for_llama3.model, normalizer={"type": "NFD"})
    with pytest.raises(FormatError) as info:
        huggingface.loads(json.dumps(other), "qwen2.json")
    assert info.value.where == "normalizer" and '"NFD"' in info.value.problem


@pytest.mark.slow
def test_gpt_neox_layout_with_space_run_tokens_gives_tokenizers_ids(gpt2_files, corpus, tmp_path):
    """GPT-NeoX / Pythia: 23 non-special added tokens, runs of 24 down to 2
    spaces, in model.vocab under their raw text, normalized true beside an NFC
    normalizer. Here around GPT-2's real vocabulary, on every corpus (code has
    long runs of spaces)."""
    gpt2_model = gpt2_files[1].model
    document = json.loads(huggingface.dumps(gpt2_model))
    vocab = document["model"]["vocab"]
    for n in range(24, 1, -1):
        token_id = len(vocab)
        vocab[" " * n] = token_id
        document["added_tokens"].append(
            _added_entry(token_id, " " * n, special=False, normalized=True)
        )
    document["normalizer"] = {"type": "NFC"}
    path = tmp_path / "neox.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    tok, messages = loaded_quietly(path)
    assert messages == []
    assert tok.added_tokens == {" " * n: 50257 + 24 - n for n in range(24, 1, -1)}
    hf = hf_of(path)
    assert_same_ids(tok, hf, corpus)
    for name in ("large_code.txt.gz@0.5", "tinyshakespeare.txt"):
        ids = tok.encode_ordinary(corpus[name])
        assert ids == hf.encode(corpus[name], add_special_tokens=False).ids
        assert tok.decode(ids) == hf.decode(ids)
    spaced = "a  b" + " " * 30 + "c"
    assert tok.encode(spaced) == hf.encode(spaced, add_special_tokens=False).ids
    assert tok.encode(spaced) == [64, 50279, 65, 50257, 50275, 66]  # 2, b, 24 + 6 spaces


def test_qwen25_layout_with_non_special_tool_call_tokens_gives_tokenizers_ids(
    trained_for_llama3, short_corpus, tmp_path
):
    """Qwen2.5: special tokens, then <tool_call>, </tool_call> and the FIM
    tokens with special false (normalized false), outside model.vocab; NFC."""
    document = qwen2_document(trained_for_llama3.model, normalizer={"type": "NFC"})
    non_special = ["<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>"]
    first = document["added_tokens"][-1]["id"] + 1
    for i, content in enumerate(non_special):
        document["added_tokens"].append(
            _added_entry(first + i, content, special=False, normalized=False)
        )
    path = tmp_path / "qwen25.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    tok, _ = loaded_quietly(path)
    hf = hf_of(path)
    assert tok.added_tokens == {t: hf.token_to_id(t) for t in non_special}
    assert tok.special_tokens_set == {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
    texts = dict(short_corpus)
    texts["chat"] = (
        '<|im_start|>assistant\n<tool_call>\n{"name": "f"}\n</tool_call><|im_end|>'
        "x<tool_call>y <|fim_prefix|>def f():<|fim_middle|>e\u0301</tool_call>\u0338"
    )
    assert_same_ids(tok, hf, texts)
    chat = texts["chat"]
    ordinary = tok.encode_ordinary(chat)
    assert tok.added_tokens["<tool_call>"] in ordinary
    assert tok.decode(ordinary) == hf.decode(ordinary)  # skip_special_tokens keeps them
    with pytest.raises(bytepair.DisallowedSpecialError, match="<\\|im_start\\|>"):
        tok.encode(chat)
    assert tok.encode(chat.replace("<|im_start|>", "").replace("<|im_end|>", "")) == (
        hf.encode(
            chat.replace("<|im_start|>", "").replace("<|im_end|>", ""), add_special_tokens=False
        ).ids
    )


# ---------------------------------------------------------------------------
# 2d. Files bytepair cannot read exactly


@pytest.mark.parametrize(
    ("name", "where", "named"),
    [
        ("phi-3-mini", "model.byte_fallback", "byte fallback"),
    ],
)
def test_unsupported_real_files_name_the_part(shared_data, name, where, named):
    path = shared_data / "models" / "hf" / f"{name}.tokenizer.json"
    with pytest.raises(FormatError) as info:
        bytepair.load(path)
    assert info.value.path == str(path) and info.value.where == where
    assert named in info.value.problem


# ---------------------------------------------------------------------------
# 3a. Export: trained with every pre-tokenizer, read by tokenizers

EXPORT_PRETOKENIZERS = {
    "none": "none",
    "whitespace": "whitespace",
    "gpt2": "gpt2",
    "r50k": "r50k",
    "p50k": "p50k",
    "cl100k": "cl100k",
    "o200k": "o200k",
    "word-regex": regex.compile(EXPORTED["word-regex"]),
    "anchored-regex": regex.compile(EXPORTED["anchored-regex"]),
}
SPECIALS = ["<|endoftext|>", "<pad>"]


@pytest.fixture(scope="module")
def exported(short_corpus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("exported")
    train_texts = [text[:15_000] for text in short_corpus.values()]
    result = {}
    for name, pretokenizer in EXPORT_PRETOKENIZERS.items():
        tok = bytepair.train(
            train_texts, 1200, special_tokens=SPECIALS, pretokenizer=pretokenizer, progress=False
        )
        path = folder / f"{name}.json"
        tok.save(path)
        result[name] = (tok, path, hf_of(path))
    return result


@pytest.mark.parametrize("name", list(EXPORT_PRETOKENIZERS))
def test_exported_file_gives_our_ids_in_tokenizers(exported, short_corpus, name):
    tok, path, hf = exported[name]
    assert hf.get_vocab_size() == tok.n_vocab
    assert {s: hf.token_to_id(s) for s in SPECIALS} == {s: tok.special_tokens[s] for s in SPECIALS}
    texts = dict(short_corpus)
    texts["specials"] = "hello<|endoftext|>world <pad> and\n\n<pad>  more 12345"
    assert_same_ids(tok, hf, texts)
    for text in texts.values():
        ids = tok.encode(text, allowed_special="all")
        assert hf.decode(ids, skip_special_tokens=False) == text
    assert bytepair.load(path).model == tok.model


@settings(max_examples=60)
@given(text=texts)
def test_exported_files_hypothesis(exported, text):
    for name, (tok, _, hf) in exported.items():
        assert (
            tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
        ), name


# ---------------------------------------------------------------------------
# 3b. Export of tiktoken's rule (merges None, unused ids): the tiktoken vocabularies

TIKTOKEN = {
    "cl100k_base": (
        "cl100k",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": ("o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}


def tiktoken_model(path: Path, pretokenizer: Pretokenizer, specials: dict[str, int]) -> BPEModel:
    """A tiktoken vocabulary built by hand from the rank file (lines "base64 rank")."""
    ranks = load_tiktoken_bpe(str(path))
    tokens: list[bytes | None] = [None] * (max([*ranks.values(), *specials.values()]) + 1)
    for data, rank in ranks.items():
        tokens[rank] = data
    for text, token_id in specials.items():
        tokens[token_id] = text.encode()
    return BPEModel(tuple(tokens), None, specials, pretokenizer)


@pytest.fixture(scope="module", params=list(TIKTOKEN))
def tiktoken_export(request, shared_data, tmp_path_factory):
    name = request.param
    source = shared_data / "models" / "tiktoken" / f"{name}.tiktoken"
    pretokenizer_name, specials = TIKTOKEN[name]
    model = tiktoken_model(source, resolve(pretokenizer_name), specials)
    path = tmp_path_factory.mktemp("tiktoken") / f"{name}.json"
    huggingface.save(model, path)
    encoding = tiktoken.Encoding(
        name,
        pat_str=BUILTIN_PATTERNS[pretokenizer_name],
        mergeable_ranks=load_tiktoken_bpe(str(source)),
        special_tokens=specials,
    )
    return name, source, model, path, hf_of(path), encoding


def random_token_texts(model: BPEModel, seed: int, count: int) -> list[str]:
    """Concatenations of random vocabulary tokens, 10 to 10,000 bytes of valid UTF-8."""
    rng = random.Random(seed)
    special = set(model.special_tokens.values())
    pieces = []
    for i, token in enumerate(model.tokens):
        if token is not None and i not in special:
            try:
                pieces.append(token.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    result = []
    for _ in range(count):
        size = int(10 ** rng.uniform(1, 4))
        text = ""
        while len(text.encode()) < size:
            text += rng.choice(pieces)
        result.append(text)
    return result


@pytest.mark.slow
def test_tiktoken_rule_export_gives_tiktokens_ids_in_tokenizers(tiktoken_export, corpus):
    name, source, model, path, hf, encoding = tiktoken_export
    document = json.loads(path.read_text("utf-8"))
    assert document["model"]["ignore_merges"] is True
    assert {s: hf.token_to_id(s) for s in model.special_tokens} == dict(model.special_tokens)
    texts = dict(corpus)
    texts.update({f"tokens {i}": t for i, t in enumerate(random_token_texts(model, 7, 40))})
    texts["specials"] = "x<|endoftext|>y <|endofprompt|>\n"
    names = list(texts)
    theirs = [e.ids for e in hf.encode_batch([texts[n] for n in names], add_special_tokens=False)]
    oracle = encoding.encode_batch([texts[n] for n in names], allowed_special="all")
    for text_name, a, b in zip(names, theirs, oracle):
        assert a == b, f"{name} {text_name}: {first_difference(a, b)}"


@pytest.mark.slow
def test_tiktoken_rule_export_loads_back_equal(tiktoken_export):
    name, source, model, path, _, _ = tiktoken_export
    assert huggingface.load(path) == model
    # .tiktoken files themselves are routed to the tiktoken reader.
    assert load_model(source).tokens == model.tokens


@settings(max_examples=60)
@given(text=texts)
def test_tiktoken_rule_export_hypothesis(tiktoken_export, text):
    _, _, _, _, hf, encoding = tiktoken_export
    theirs = hf.encode(text, add_special_tokens=False).ids
    assert theirs == encoding.encode(text, allowed_special="all")


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.integers(0, 5), max_size=80),
    rules=st.dictionaries(
        st.tuples(st.integers(0, 9), st.integers(0, 9)),
        st.tuples(st.integers(0, 6), st.integers(0, 9)),
    ),
)
def test_merging_by_heap_equals_merging_by_scan(parts, rules):
    """Long tokens merge with a heap (the scan is quadratic: a token of 36 KB
    took a minute to check); both take the lowest rank, leftmost first."""
    from bytepair.formats import merge_rules

    def rule(left, right):
        return rules.get((left, right))

    by_scan = merge_rules._merge_by_scan(parts, rule)
    assert merge_rules._merge_by_heap(parts, rule) == by_scan


def test_a_long_token_is_checked_in_n_log_n():
    tokens = [bytes([b]) for b in range(256)] + [b"aa", b"a" * 36_000]
    assert not_made_by_merges(tokens, [], [(97, 97)]) == [257]
    assert natural_merges(tokens, []) == ([(97, 97)], [257])


def test_token_made_after_a_later_rank_is_in_the_derived_merges(tmp_path):
    """'abc' (id 256) ranks below 'ab' (257): merging with ranks below its own
    never makes it, yet tiktoken makes it in "abcd". Both the core's derived
    merge list and the export's natural pairs contain (ab, c)."""
    tokens = [bytes([b]) for b in range(256)] + [b"abc", b"ab"]
    model = BPEModel(tuple(tokens), None, {}, resolve("none"))
    ranks = {t: i for i, t in enumerate(tokens)}
    encoding = tiktoken.Encoding(
        "tiny", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={}
    )
    assert encoding.encode("abcd") == [256, 100]
    assert Tokenizer(model).merge_ids == [(257, 99), (97, 98)]
    assert natural_merges(model.tokens, []) == ([(257, 99), (97, 98)], [])
    path = tmp_path / "tokenizer.json"
    huggingface.save(model, path)
    assert hf_of(path).encode("abcd").ids == [256, 100]
    assert Tokenizer(model).encode("abcd") == [256, 100]
