"""Training arguments are checked before any work: special tokens must come in
an order (their ids follow it), lone surrogates are named with their text and
position, sizes outside what the core takes are clear ValueErrors, and the
counting progress bar counts bytes."""

from __future__ import annotations

import re
import warnings

import pytest

import bytepair
from bytepair.training import corpus as training
from bytepair.training.char_bpe import train_char_bpe
from bytepair.training.counts import count_to_shards, train_from_counts, write_manifest

CORPUS = ["the cat sat on the mat", "the dog sat on the log"] * 5


def never_read():
    """A corpus that fails the test if training gets as far as reading it."""
    raise AssertionError("the corpus was read before the arguments were checked")
    yield  # a generator: the assertion fires on the first next()


UNORDERED = [
    {"<a>", "<b>"},
    frozenset({"<a>", "<b>"}),
    {"<a>": 5, "<b>": 6},
    {"<a>": 0, "<b>": 1}.keys(),
]


@pytest.mark.parametrize("specials", UNORDERED, ids=lambda s: type(s).__name__)
def test_special_tokens_in_no_order_are_refused(specials, tmp_path):
    ordered = "in the order given, so pass a list or tuple"
    with pytest.raises(ValueError, match=ordered):
        bytepair.train(never_read(), 300, special_tokens=specials)
    with pytest.raises(ValueError, match=ordered):
        bytepair.train(never_read(), 300, model="unigram", special_tokens=specials)
    with pytest.raises(ValueError, match=ordered):
        next(bytepair.trace(never_read(), 3, special_tokens=specials))
    with pytest.raises(ValueError, match=ordered):
        count_to_shards(never_read(), tmp_path / "counts", special_tokens=specials)
    assert not (tmp_path / "counts").exists()
    with pytest.raises(ValueError, match=ordered):
        write_manifest(tmp_path, "gpt2", specials, 1, [])
    assert not (tmp_path / "manifest.json").exists()


def test_ordered_special_tokens_keep_their_order():
    for specials in (["<b>", "<a>"], ("<b>", "<a>"), (s for s in ["<b>", "<a>"])):
        tok = bytepair.train(CORPUS, 270, special_tokens=specials, progress=False)
        assert tok.special_tokens == {"<b>": 0, "<a>": 1}


def test_a_lone_surrogate_in_a_special_token_is_named(tmp_path):
    specials = ["<ok>", "<a\ud800>"]
    named = r"special token 1 '<a\\ud800>' contains the lone surrogate '\\ud800' at position 2"
    with pytest.raises(ValueError, match=named):
        bytepair.train(never_read(), 300, special_tokens=specials)
    with pytest.raises(ValueError, match=named):
        bytepair.train(never_read(), 300, model="unigram", special_tokens=specials)
    with pytest.raises(ValueError, match=named):
        count_to_shards(never_read(), tmp_path / "c", special_tokens=specials)


def test_a_lone_surrogate_in_a_corpus_text_is_named(tmp_path, monkeypatch):
    texts = ["fine", "also fine", "bad \udc80 text"]
    where = r"2 contains the lone surrogate '\\udc80' at position 4"
    with pytest.raises(ValueError, match="corpus text " + where):
        bytepair.train(texts, 270, progress=False)
    with pytest.raises(ValueError, match="corpus text " + where):
        bytepair.train(texts, 270, model="unigram", progress=False)
    with pytest.raises(ValueError, match="corpus text " + where):
        train_char_bpe(texts, num_merges=3)
    with pytest.raises(ValueError, match="document " + where):
        count_to_shards(texts, tmp_path / "c")
    with pytest.raises(ValueError, match="corpus text " + where):
        list(bytepair.trace(texts, merges=1))
    # The index counts from the first text, not from the batch the core was given.
    monkeypatch.setattr(training, "BATCH_CHARS", 5)
    with pytest.raises(ValueError, match="corpus text " + where):
        bytepair.train(texts, 270, progress=False)
    with pytest.raises(ValueError, match=r"end_of_word '<\\ud800>' contains the lone surrogate"):
        train_char_bpe(never_read(), num_merges=3, end_of_word="<\ud800>")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: bytepair.train(never_read(), 2**64), "vocab_size must be at most 4294967296"),
        (lambda: bytepair.train(never_read(), 2**32 + 1), "vocab_size must be at most"),
        (lambda: bytepair.train(never_read(), 0), "vocab_size must be at least 1"),
        (
            lambda: bytepair.train(never_read(), 2**64, model="unigram"),
            "vocab_size must be at most",
        ),
        (
            lambda: bytepair.train(never_read(), 300, model="unigram", seed_size=2**64),
            "seed_size must be at most",
        ),
        (
            lambda: bytepair.train(never_read(), 300, min_frequency=2**64),
            "min_frequency must be at most",
        ),
        (
            lambda: bytepair.train(never_read(), 300, max_token_length=2**64),
            "max_token_length must be at most",
        ),
        (lambda: train_char_bpe(never_read(), num_merges=-1), "num_merges must be at least 0"),
        (lambda: train_char_bpe(never_read(), num_merges=2**64), "num_merges must be at most"),
        (lambda: train_char_bpe(never_read(), vocab_size=2**64), "vocab_size must be at most"),
        (lambda: train_char_bpe(never_read(), vocab_size=0), "vocab_size must be at least 1"),
        (
            lambda: train_char_bpe(never_read(), num_merges=3, min_frequency=2**64),
            "min_frequency must be at most",
        ),
    ],
)
def test_sizes_the_core_cannot_take_are_named_before_reading(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_sizes_are_checked_on_resume_and_from_counts(tmp_path, monkeypatch):
    import bytepair.training.counts as counts

    checkpoint = tmp_path / "run.bpck"
    bytepair.train(CORPUS, 270, checkpoint=checkpoint, progress=False)
    with pytest.raises(ValueError, match="vocab_size must be at most"):
        bytepair.resume_training(checkpoint, 2**64)
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        bytepair.resume_training(checkpoint, "300")
    count_to_shards(CORPUS, tmp_path / "c")

    def no_reading(*args, **kwargs):
        raise AssertionError("the shards were read before the options were checked")

    monkeypatch.setattr(counts, "read_shard", no_reading)
    with pytest.raises(ValueError, match="vocab_size must be at most"):
        train_from_counts(tmp_path / "c", 2**64)
    with pytest.raises(ValueError, match="min_frequency must be at least 1"):
        train_from_counts(tmp_path / "c", 300, min_frequency=0)


def test_the_counting_bar_counts_bytes_of_texts_and_files(tmp_path, monkeypatch):
    class Bar:
        n = 0

        def update(self, size):
            self.n += size

        def close(self):
            pass

    bars: list[tuple[dict, Bar]] = []

    def recording_bar(enabled, **kwargs):
        if kwargs["desc"] != "counting":
            return None  # the merging bar is not under test
        bars.append((kwargs, Bar()))
        return bars[-1][1]

    monkeypatch.setattr(training, "progress_bar", recording_bar)
    path = tmp_path / "f.txt"
    path.write_text("naïve 東京\n", encoding="utf-8")
    texts = ["ascii text", "café 👋🏽"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bytepair.train([*texts, path], 260, progress=True)
    [(kwargs, bar)] = bars
    assert kwargs["unit"] == "B"
    assert bar.n == sum(len(t.encode("utf-8")) for t in texts) + path.stat().st_size


def test_the_checkpoints_directory_is_checked_before_counting(tmp_path):
    missing = tmp_path / "nodir" / "run.bpck"
    with pytest.raises(FileNotFoundError, match=re.escape(f"checkpoint {missing}: the directory")):
        bytepair.train(never_read(), 300, checkpoint=missing)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        bytepair.train(never_read(), 300, checkpoint=tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        bytepair.train(never_read(), 300, checkpoint=blocker / "run.bpck")
    assert not (tmp_path / "nodir").exists()


def test_warnings_name_the_callers_line():
    """A warning is attributed to the user's call, whichever path inside
    bytepair raised it (so Python's once-per-location filter works per call site)."""
    calls = [
        lambda: bytepair.train(["ab"], 300, progress=False),
        lambda: bytepair.train(["ab ab"], None, model="char-bpe", num_merges=50),
        lambda: train_char_bpe(["ab ab"], num_merges=50),
        lambda: bytepair.train(["ab ab"] * 3, 40, model="unigram", progress=False),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert caught and all(w.filename == __file__ for w in caught), [
            (w.filename, w.lineno, str(w.message)) for w in caught
        ]
