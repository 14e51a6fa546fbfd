"""The core's unigram model against the reference (bytepair.reference.unigram):
identical pieces, bit-identical scores, identical ids; n-best and sampling
against exact enumeration; independent of the thread count."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.reference import unigram as ref
from strategies import small_alphabet, utf8_alphabet

unigram_corpora = st.lists(st.one_of(small_alphabet, utf8_alphabet), min_size=1, max_size=10)
options = st.fixed_dictionaries(
    {
        "character_coverage": st.sampled_from([1.0, 0.9995, 0.9]),
        "max_piece_length": st.integers(1, 6),
        "seed_size": st.sampled_from([3, 50, 1_000_000]),
        "byte_fallback": st.booleans(),
    }
)


def trained(texts, vocab_size, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bytepair.train(texts, vocab_size, model="unigram", progress=False, **kw)


def reference(texts, vocab_size, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ref.train(texts, vocab_size, **kw)


def unigram_settings(vocab_size, special_tokens, byte_fallback):
    """The core trainer's settings, the others fixed."""
    return {
        "vocab_size": vocab_size,
        "special_tokens": special_tokens,
        "character_coverage": 1.0,
        "max_piece_length": 16,
        "seed_size": 1000,
        "shrinking_factor": 0.75,
        "num_sub_iterations": 2,
        "byte_fallback": byte_fallback,
    }


def assert_same_model(tok, result):
    assert list(tok.model.pieces) == list(result.pieces)
    assert list(tok.model.kinds) == list(result.kinds)
    # Bit for bit: the same f64 operations in the same order.
    assert [s.hex() for s in tok.model.scores] == [float(s).hex() for s in result.scores]


@settings(max_examples=60)
@given(corpus=unigram_corpora, vocab=st.integers(2, 60), kw=options, text=utf8_alphabet)
def test_training_and_encoding_equal_the_reference(corpus, vocab, kw, text):
    if not "".join(corpus):
        return
    vocab += 257 if kw["byte_fallback"] else 1
    try:
        result = reference(corpus, vocab, **kw)
    except ValueError as e:
        with pytest.raises(ValueError):
            trained(corpus, vocab, **kw)
        assert "vocab" in str(e) or "character" in str(e)
        return
    tok = trained(corpus, vocab, **kw)
    assert_same_model(tok, result)
    assert tok.encode(text) == ref.encode(text, result)
    assert tok.decode(tok.encode(text)) == ref.decode(ref.encode(text, result), result)


# Typed '▁' (U+2581) next to spaces: it starts a word like a space does.
metaspace_texts = st.text(alphabet="ab \u2581\n", max_size=30) | st.text(
    alphabet="aé \u2581日👍x", max_size=20
)


@settings(max_examples=80)
@given(
    corpus=st.lists(metaspace_texts, min_size=1, max_size=8),
    vocab=st.integers(2, 40),
    kw=options,
    texts=st.lists(metaspace_texts, max_size=4),
)
def test_typed_metaspace_trains_and_encodes_as_the_reference(corpus, vocab, kw, texts):
    if not "".join(corpus):
        return
    vocab += 257 if kw["byte_fallback"] else 1
    try:
        result = reference(corpus, vocab, **kw)
    except ValueError:
        with pytest.raises(ValueError):
            trained(corpus, vocab, **kw)
        return
    tok = trained(corpus, vocab, **kw)
    assert_same_model(tok, result)
    for text in texts + ["\u2581", " \u2581a\u2581\u2581 b\u2581"]:
        ids = ref.encode(text, result)
        assert tok.encode(text) == ids
        assert tok.decode(ids) == ref.decode(ids, result)
        assert tok.encode_nbest(text, 1)[0][0] == ids


@pytest.mark.parametrize(
    ("corpus", "kw", "text"),
    [
        # The reviewed case: words ▁:2, ▁a:2, ▁b:2 (not ▁▁a, ▁▁b).
        (["\u2581a \u2581b a b"], {}, "\u2581a \u2581b a b"),
        # '▁' uncovered: a run of unknown characters stops at each word start.
        (["a" * 30], {"character_coverage": 0.9}, "x\u2581y a \u2581 a"),
        (["a" * 30], {"character_coverage": 0.9, "byte_fallback": True}, "x\u2581y\u2581"),
    ],
)
def test_typed_metaspace_cases(corpus, kw, text, tmp_path):
    vocab = 10 + (256 if kw.get("byte_fallback") else 0)
    tok = trained(corpus, vocab, **kw)
    result = reference(corpus, vocab, **kw)
    assert_same_model(tok, result)
    ids = ref.encode(text, result)
    assert tok.encode(text) == ids
    # The saved model (bytepair's own tokenizer.json) encodes the same.
    tok.save(tmp_path / "tokenizer.json")
    assert bytepair.load(tmp_path / "tokenizer.json").encode(text) == ids


def test_special_token_equal_to_a_learned_piece(tmp_path):
    corpus = "he he he hello"
    assert "\u2581he" in trained(corpus, 30).model.pieces
    tok = trained(corpus, 30, special_tokens=["\u2581he"])
    result = reference(corpus, 30, special_tokens=["\u2581he"])
    assert_same_model(tok, result)
    assert tok.model.pieces.count("\u2581he") == 1
    tok.save(tmp_path / "tokenizer.json")
    loaded = bytepair.load(tmp_path / "tokenizer.json")
    assert loaded.model.pieces == tok.model.pieces
    for text in ["he hello", "\u2581he he"]:
        ids = ref.encode(text, result, allowed_special="all")
        assert tok.encode(text, allowed_special="all") == ids
        assert loaded.encode(text, allowed_special="all") == ids


@pytest.mark.parametrize(
    ("special", "kw", "message"),
    [
        ("<0x41>", {"byte_fallback": True}, "<0x41>['\"] is the name of a byte piece"),
        ("\u2581", {}, "\u2581['\"] is the metaspace character"),
    ],
)
def test_special_tokens_that_always_repeat_a_piece_are_refused(special, kw, message):
    vocab = 300 if kw else 30
    with pytest.raises(ValueError, match=message):
        trained("he he", vocab, special_tokens=[special], **kw)
    with pytest.raises(ValueError, match=message):
        reference("he he", vocab, special_tokens=[special], **kw)
    # The core refuses them too, when called without the Python check.
    from bytepair import _native

    counter = _native.PretokenCounter([special], "metaspace")
    counter.add_texts(["he he"])
    byte_fallback = bool(kw)
    with pytest.raises(ValueError, match=message):
        _native.train_unigram(counter, unigram_settings(vocab, [special], byte_fallback))


@pytest.mark.slow
def test_specials_and_a_bpe_side_pretokenizer_equal_the_reference(shared_data):
    text = (shared_data / "corpus" / "small" / "taylorswift.txt").read_text(encoding="utf-8")[
        :15_000
    ]
    corpus = [text[i : i + 500] + "<|end|>" for i in range(0, len(text), 500)]
    for kw in ({"special_tokens": ["<|end|>", "<pad>"]}, {"pretokenizer": "gpt2"}):
        tok = trained(corpus, 400, **kw)
        result = reference(corpus, 400, **kw)
        assert_same_model(tok, result)
        sample = "Taylor Swift<|end|> sings  \n in 2024 ☃ ünïcode"
        allowed = "all" if "special_tokens" in kw else ()
        assert tok.encode(sample, allowed_special=allowed) == ref.encode(
            sample, result, allowed_special=allowed
        )


@pytest.mark.slow
def test_real_text_equals_the_reference(shared_data):
    small = shared_data / "corpus" / "small"
    for name, vocab, kw in [
        ("botchan.txt", 600, {}),
        ("wagahaiwa_nekodearu.txt", 1500, {"byte_fallback": True, "character_coverage": 0.98}),
    ]:
        text = (small / name).read_text(encoding="utf-8-sig")[:20_000]
        tok = trained(text, vocab, **kw)
        assert_same_model(tok, reference(text, vocab, **kw))
        probe = text[5000:6000]
        assert tok.decode(tok.encode(probe)) == probe


@pytest.fixture(scope="module")
def small_model():
    corpus = ["unhappy happy un unhappiness happiness", "hat hut hit"] * 5
    return trained(corpus, 40), reference(corpus, 40)


@given(word=st.text(alphabet="unhapyist", min_size=1, max_size=9), k=st.integers(1, 8))
def test_nbest_equals_sorted_enumeration(small_model, word, k):
    tok, result = small_model
    scores = {
        p: s for p, s, kind in zip(result.pieces, result.scores, result.kinds) if kind == "normal"
    }
    mets = ref.metaspace_words(word)
    assert len(mets) == 1
    expected = ref.nbest(mets[0], scores, k, result.max_piece_length, ref.unk_score_of(scores))
    got = tok.encode_nbest(word, k)
    assert [total for _, total in got] == pytest.approx([t for _, t in expected], rel=1e-12)
    assert got[0][0] == tok.encode(word)
    assert [[tok.id_to_piece(i) for i in ids] for ids, _ in got] == [
        [piece for piece, _ in pieces] for pieces, _ in expected
    ]


def test_nbest_of_a_long_text_is_fast_and_starts_with_viterbi(shared_data, small_model):
    text = (shared_data / "corpus" / "small" / "botchan.txt").read_text(encoding="utf-8-sig")
    tok = trained(text[:30_000], 800, byte_fallback=True)
    long_text = text[30_000:230_000]  # 200 KB: candidates share their beginnings
    best = tok.encode_nbest(long_text, 5)
    assert len(best) == 5 and best[0][0] == tok.encode(long_text)
    assert [s for _, s in best] == sorted((s for _, s in best), reverse=True)
    assert all(tok.decode(ids) == long_text for ids, _ in best)


@pytest.mark.parametrize("alpha", [0.1, 1.0])
def test_sampling_draws_from_the_exact_distribution(small_model, alpha):
    tok, result = small_model
    scores = {
        p: s for p, s, kind in zip(result.pieces, result.scores, result.kinds) if kind == "normal"
    }
    word = "unhappy"
    exact = ref.segmentation_probabilities("\u2581" + word, scores, alpha, result.max_piece_length)
    draws = 20_000
    seen = Counter(
        tuple(tok.id_to_piece(i) for i in ids)
        for ids in tok.encode_sample_batch([word] * draws, alpha=alpha, seed=11)
    )
    assert set(seen) <= set(exact)
    # Chi-square over the outcomes expected at least 5 times.
    chi2 = sum((seen[s] - p * draws) ** 2 / (p * draws) for s, p in exact.items() if p * draws >= 5)
    dof = sum(1 for p in exact.values() if p * draws >= 5) - 1
    assert chi2 < dof + 6 * math.sqrt(2 * dof) + 10, (chi2, dof)
    assert tok.encode_sample(word, alpha=alpha, seed=3) == tok.encode_sample(
        word, alpha=alpha, seed=3
    )


def test_thread_count_does_not_change_training(shared_data, tmp_path):
    script = (
        "import bytepair, json, sys, warnings; warnings.simplefilter('ignore');"
        "t = open(sys.argv[1], encoding='utf-8-sig').read()[:60000];"
        "tok = bytepair.train(t, 700, model='unigram', progress=False);"
        "print(json.dumps([tok.model.pieces, [s.hex() for s in tok.model.scores]]))"
    )
    path = shared_data / "corpus" / "small" / "botchan.txt"
    outputs = set()
    for threads in ("1", "2", "3"):
        env = {**os.environ, "RAYON_NUM_THREADS": threads}
        done = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_round_trip_and_report(shared_data):
    text = (shared_data / "corpus" / "small" / "botchan.txt").read_text(encoding="utf-8-sig")[
        :30_000
    ]
    tok = trained(text, 500, byte_fallback=True)
    assert tok.n_vocab == 500 and tok.model.kinds[:2] == ("unknown", "byte")
    assert tok.training.vocab_size_requested == 500 and tok.training.rounds
    for probe in [text[:2000], "  leading and  double  spaces ", "emoji 👍 and 漢字 unseen", ""]:
        assert tok.decode(tok.encode(probe)) == probe
    assert json.loads(json.dumps(tok.training.rounds))  # plain data


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"character_coverage": 0.0}, ValueError, "character_coverage must be in"),
        ({"shrinking_factor": 1.0}, ValueError, "shrinking_factor must be in"),
        ({"shrinking_factor": float("nan")}, ValueError, "shrinking_factor must be in"),
        ({"character_coverage": float("nan")}, ValueError, "character_coverage must be in"),
        ({"max_piece_length": 0}, ValueError, "max_piece_length must be at least 1"),
        ({"min_frequency": 2}, TypeError, "min_frequency is a BPE option"),
        ({"typo_option": 1}, TypeError, "unknown unigram option"),
        ({"byte_fallback": 1}, TypeError, "byte_fallback must be True or False"),
    ],
)
def test_bad_options_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        bytepair.train("some text", 100, model="unigram", progress=False, **kwargs)


def test_unigram_options_need_the_unigram_model():
    with pytest.raises(TypeError, match="unigram options"):
        bytepair.train("some text", 300, byte_fallback=True)
    with pytest.raises(ValueError, match="unknown model"):
        bytepair.train("some text", 300, model="wordpiece")
    with pytest.raises(ValueError, match="leaves no room"):
        bytepair.train("some text", 257, model="unigram", byte_fallback=True)


def test_interrupting_by_the_progress_callback_raises(monkeypatch):
    from bytepair import _native

    def stop(stage, size):
        raise KeyboardInterrupt

    counter = _native.PretokenCounter([], "metaspace")
    counter.add_texts(["some text to count and train on"] * 10)
    with pytest.raises(KeyboardInterrupt):
        _native.train_unigram(counter, unigram_settings(30, [], False), stop)


def test_pickle_and_threads_share_one_tokenizer(small_model):
    import pickle
    from concurrent.futures import ThreadPoolExecutor

    tok, _ = small_model
    again = pickle.loads(pickle.dumps(tok))
    texts = ["unhappy hat", "happiness hut"] * 50
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(again.encode, texts))
    assert results == [tok.encode(t) for t in texts] == tok.encode_batch(texts)


def test_decoding_byte_pieces_equals_the_reference():
    """Runs of byte pieces, valid UTF-8 or not: one U+FFFD a byte that starts no
    character, in the core's decode and the reference's alike."""
    import random

    corpus = ["héllo wörld, naïve café 中文 日本語"] * 30
    tok = trained(corpus, 300, byte_fallback=True)
    result = reference(corpus, 300, byte_fallback=True)
    assert_same_model(tok, result)
    byte_ids = [tok.piece_to_id(f"<0x{b:02X}>") for b in range(256)]
    rng = random.Random(11)
    pool = byte_ids + tok.encode_ordinary("héllo 中")
    for _ in range(500):
        ids = [rng.choice(pool) for _ in range(rng.randint(0, 8))]
        assert tok.decode(ids) == ref.decode(ids, result), ids


@pytest.mark.slow
@pytest.mark.parametrize("pretokenizer", [None, "gpt2"])
def test_decoding_random_ids_equals_the_reference(pretokenizer):
    """The core's decode and decode_bytes against the reference on ids drawn
    mostly from special, unknown and byte pieces and pieces starting with
    '▁' (dropped where a text starts: at the start, after a special token)."""
    import random

    corpus = ["héllo wörld, naïve café 中文 日本語 ▁x"] * 30
    kw = {"byte_fallback": True, "special_tokens": ["<s>", "<|x|>"]}
    if pretokenizer:
        kw["pretokenizer"] = pretokenizer
    tok = trained(corpus, 300, **kw)
    model = (tok.model.pieces, tok.model.scores, tok.model.kinds)
    options = {"pretokenizer": pretokenizer or "metaspace"}
    kinds = tok.model.kinds
    rare = [i for i, k in enumerate(kinds) if k != "normal"]
    spaced = [i for i, p in enumerate(tok.model.pieces) if p.startswith("▁")] or rare
    rng = random.Random(5)
    for _ in range(3000):
        pools = [rare, spaced, range(len(kinds))]
        ids = [rng.choice(rng.choice(pools)) for _ in range(rng.randint(0, 9))]
        assert tok.decode(ids) == ref.decode(ids, model, **options), ids
        raw = ref.decode(ids, model, errors="surrogateescape", **options)
        assert tok.decode_bytes(ids) == raw.encode("utf-8", "surrogateescape"), ids
        assert tok.decode(ids, errors="ignore") == ref.decode(
            ids, model, errors="ignore", **options
        )
