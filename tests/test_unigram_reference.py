"""The pure-Python unigram reference, pinned to hand-checked cases and brute force.

The Rust core is tested against ``bytepair.reference.unigram``; these tests
check the reference itself: lattices against the enumeration of every
segmentation, EM and pruning against numbers worked out by hand, and training
on a real text.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bytepair.reference import unigram as u

LOG = math.log
EULER_GAMMA = 0.5772156649015329


# ---------------------------------------------------------------------------
# Brute force, written independently of the module
# ---------------------------------------------------------------------------


def brute_segmentations(word, scores, max_len, unk_score):
    """Every segmentation as a list of (begin, length, piece, score, is_unk)."""
    if word == "":
        return [[]]

    def from_pos(pos):
        if pos == len(word):
            return [[]]
        found = []
        for length in range(1, min(max_len, len(word) - pos) + 1):
            piece = word[pos : pos + length]
            if piece in scores:
                node = (pos, length, piece, scores[piece], False)
            elif length == 1:
                node = (pos, 1, piece, unk_score, True)
            else:
                continue
            found += [[node, *rest] for rest in from_pos(pos + length)]
        return found

    return from_pos(0)


def total(segmentation):
    value = 0.0
    for node in segmentation:
        value += node[3]
    return value


def preference(segmentation):
    """Best first: higher total, then (ties) longer last piece, longer piece before it..."""
    return (-total(segmentation), [-node[1] for node in reversed(segmentation)])


def as_pairs(segmentation):
    return [(node[2], node[4]) for node in segmentation]


# Small tables over a small alphabet: many segmentations, many shared substrings.
# 'x' is never in a table, so it is always an unknown character.
lattice_words = st.text(alphabet="abcx", min_size=1, max_size=7)
table_keys = st.text(alphabet="abc", min_size=1, max_size=4)
float_tables = st.dictionaries(table_keys, st.floats(-9.0, -0.01), min_size=1, max_size=14)
# Multiples of 1/4: sums are exact, so equal totals are real ties.
dyadic_tables = st.dictionaries(
    table_keys, st.integers(-16, -1).map(lambda k: k / 4), min_size=1, max_size=14
)
max_lengths = st.integers(1, 5)


# ---------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------


def test_metaspace_words() -> None:
    assert u.metaspace_words("a  b") == ["▁a", "▁", "▁b"]
    assert u.metaspace_words("hello world") == ["▁hello", "▁world"]
    assert u.metaspace_words(" x ") == ["▁", "▁x", "▁"]
    assert u.metaspace_words("tab\there\n") == ["▁tab\there\n"]  # only ' ' is a space
    assert u.metaspace_words("") == []
    assert u.metaspace_words("b c", dummy_prefix=False) == ["b", "▁c"]
    # A typed '▁' starts a word like a space (normalized, SentencePiece sees the same text).
    assert u.metaspace_words("▁a ▁b") == ["▁", "▁a", "▁", "▁b"]
    assert u.metaspace_words("ab▁c▁") == ["▁ab", "▁c", "▁"]
    with pytest.raises(TypeError, match="text must be str"):
        u.metaspace_words(b"abc")


def test_count_words_sorted_with_specials_and_pretokenizers() -> None:
    texts = ["the cat", "the<|eot|> dog", "<|eot|>the"]
    words = u.count_words(texts, special_tokens=["<|eot|>"])
    # Every piece of text gets the dummy prefix, after a special token too
    # (then " dog" is the dummy word "▁" and "▁dog"); the special is never counted.
    assert words == [("▁", 1), ("▁cat", 1), ("▁dog", 1), ("▁the", 3)]
    assert [w for w, _ in words] == sorted(w for w, _ in words)
    assert u.count_words("a b a", "whitespace") == [(" a", 1), (" b", 1), ("a", 1)]
    assert u.count_words("Hi hi", "gpt2") == [(" hi", 1), ("Hi", 1)]
    with pytest.raises(ValueError, match="unknown pre-tokenizer"):
        u.count_words("x", "metaspaces")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        u.count_words(["ok", 3])


def test_covered_chars_stops_once_coverage_is_reached() -> None:
    words = [("aaaaa", 1), ("bbb", 1), ("cc", 1)]  # a:5 b:3 c:2, total 10
    assert u.covered_chars(words, 0.5) == ["a"]  # 5 >= 5
    assert u.covered_chars(words, 0.8) == ["a", "b"]  # 8 >= 8
    assert u.covered_chars(words, 0.81) == ["a", "b", "c"]
    assert u.covered_chars(words, 1.0) == ["a", "b", "c"]
    assert u.covered_chars([("ba", 1)], 0.5) == ["a"]  # equal counts: smaller char first
    assert u.covered_chars([("ab", 3), ("b", 1)], 1.0) == ["b", "a"]  # counts are weighted
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="character_coverage"):
            u.covered_chars(words, bad)


def test_seed_pieces_by_hand() -> None:
    words = [("▁ab", 2), ("▁aba", 1)]
    # Substring counts: ▁a 3, ▁ab 3, ab 3 (kept, freq >= 2); ▁aba, aba, ba 1 (dropped).
    # Seed scores: ▁ab 9, ▁a 6, ab 6; characters a 4, ▁ 3, b 3. S = 31.
    seeds = u.seed_pieces(words)
    expected = {"▁ab": 9, "▁a": 6, "ab": 6, "a": 4, "▁": 3, "b": 3}
    assert list(seeds) == sorted(expected)  # table order
    for piece, seed_score in expected.items():
        assert seeds[piece] == LOG(seed_score) - LOG(31.0)
    # seed_size=2: ▁ab (9), then the tie at 6 goes to the smaller piece "ab".
    assert set(u.seed_pieces(words, seed_size=2)) == {"▁ab", "ab", "a", "b", "▁"}
    assert set(u.seed_pieces(words, max_piece_length=2, seed_size=10)) == {
        "▁a",
        "ab",
        "a",
        "b",
        "▁",
    }


def test_seed_pieces_respect_metaspace_and_coverage() -> None:
    words = [("a▁bc", 2)]
    metaspace = set(u.seed_pieces(words, covered=["a", "b", "▁"]))
    assert metaspace == {"▁b", "a", "b", "▁"}  # no 'c'; '▁' only at the front
    free = set(u.seed_pieces(words, covered=["a", "b", "▁"], metaspace=False))
    # 'a▁' and 'a▁b' mix kinds ('▁' is not a letter).
    assert free == {"▁b", "a", "b", "▁"}
    # One kind only (letters and marks, numbers, the rest); a first character
    # of the rest (▁, a space, punctuation) is free.
    kinds = set(u.seed_pieces([("▁the, 12a,b", 3)], covered=list("▁the,12ab ")))
    assert {"▁the", ",b", "12", "▁t", " 12"} <= kinds
    assert not kinds & {"the,", "▁the,", "12a", "2a", "e,", "a,"}
    with pytest.raises(ValueError, match="covered character 'z'"):
        u.seed_pieces(words, covered=["z"])


def test_seed_pieces_leave_out_the_special_tokens() -> None:
    words = [("▁ab", 2), ("▁aba", 1)]  # seed scores ▁ab 9, ▁a 6, ab 6
    # "▁ab" is left out before the best seed_size are taken: "▁a" gets its place.
    seeds = u.seed_pieces(words, seed_size=2, excluded=["▁ab", "zz"])
    assert set(seeds) == {"▁a", "ab", "a", "b", "▁"}
    assert seeds["▁a"] == LOG(6) - LOG(6 + 6 + 4 + 3 + 3)


def test_special_tokens_never_repeat_a_piece() -> None:
    # "▁he" is learned from " he" unless it is a special token (then only its id has the text).
    plain = u.train("he he he hello", 30)
    assert "▁he" in plain.pieces
    model = u.train("he he he hello", 30, special_tokens=["▁he"])
    assert model.pieces.count("▁he") == 1 and model.special_tokens == {"▁he": 1}
    assert u.decode(u.encode("he ▁he", model, allowed_special="all"), model) == "he ▁he"
    assert u.encode("▁he", model, allowed_special="all") == [1]
    # Refused up front: these always have a piece of the same name.
    with pytest.raises(ValueError, match="special token '<0x41>' is the name of a byte piece"):
        u.train("he", 300, special_tokens=["<0x41>"], byte_fallback=True)
    with pytest.raises(ValueError, match="special token '▁' is the metaspace character"):
        u.train("he", 30, special_tokens=["▁"])
    # Without byte fallback / metaspace they are ordinary special tokens.
    assert u.train("he", 30, special_tokens=["<0x41>"]).pieces[1] == "<0x41>"
    words = u.train("he he", 30, special_tokens=["▁"], pretokenizer="whitespace")
    assert words.pieces.count("▁") == 1


# ---------------------------------------------------------------------------
# Lattice: Viterbi, forward-backward, n-best, exact distribution
# ---------------------------------------------------------------------------


def unhappy_table(unhappy: float) -> dict[str, float]:
    table = {char: LOG(0.02) for char in "unhapy"}
    table.update(un=LOG(0.1), happy=LOG(0.05), hap=LOG(0.02), appy=LOG(0.02), unh=LOG(0.01))
    table["unhappy"] = LOG(unhappy)
    return table


def test_unhappy_is_un_happy() -> None:
    # P(un) P(happy) = 0.005 beats P(unhappy) = 0.001 and P(unh) P(appy) = 0.0002.
    table = unhappy_table(0.001)
    assert u.viterbi("unhappy", table) == [("un", False), ("happy", False)]
    best = u.nbest("unhappy", table, 3)
    assert [[p for p, _ in seg] for seg, _ in best] == [
        ["un", "happy"],
        ["unhappy"],
        ["unh", "appy"],
    ]
    assert best[0][1] == LOG(0.1) + LOG(0.05)
    # Once the whole word is more probable than the split, it wins.
    assert u.viterbi("unhappy", unhappy_table(0.01)) == [("unhappy", False)]
    # An unknown character is its own node, below every piece.
    assert u.viterbi("unhappy!", table)[-1] == ("!", True)
    # max_piece_length hides longer pieces.
    assert u.viterbi("unhappy", unhappy_table(0.9), max_piece_length=5) == [
        ("un", False),
        ("happy", False),
    ]


def test_lse2() -> None:
    assert u.lse2(0.0, 0.0) == LOG(2.0)
    assert u.lse2(-1.0, -3.0) == u.lse2(-3.0, -1.0) == -1.0 + LOG(math.exp(-2.0) + 1.0)
    assert u.lse2(0.0, -50.5) == 0.0  # more than 50 apart: the smaller one is ignored
    assert u.log_sum_exp([-1.0, -2.0, -3.0]) == u.lse2(u.lse2(-1.0, -2.0), -3.0)


@given(lattice_words, float_tables, max_lengths)
def test_forward_backward_equals_enumeration(word, table, max_len) -> None:
    unk = min(table.values()) - 10.0
    segs = brute_segmentations(word, table, max_len, unk)
    weights = [math.exp(total(seg)) for seg in segs]
    z = math.fsum(weights)

    marginals, log_z = u.forward_backward(word, table, max_len)
    assert log_z == pytest.approx(LOG(z), rel=1e-9, abs=1e-12)
    brute = {}
    for seg, weight in zip(segs, weights):
        for begin, length, *_ in seg:
            brute[(begin, length)] = brute.get((begin, length), 0.0) + weight / z
    assert {(v.begin, v.length) for v, _ in marginals} == set(brute)
    for node, marginal in marginals:
        assert marginal == pytest.approx(brute[(node.begin, node.length)], rel=1e-9, abs=1e-12)
    # Node order: begin ascending, then length ascending.
    keys = [(v.begin, v.length) for v, _ in marginals]
    assert keys == sorted(keys)


@given(lattice_words, dyadic_tables, max_lengths)
def test_viterbi_and_nbest_equal_enumeration_with_ties(word, table, max_len) -> None:
    unk = min(table.values()) - 10.0
    ranked = sorted(brute_segmentations(word, table, max_len, unk), key=preference)
    assert u.viterbi(word, table, max_len) == as_pairs(ranked[0])
    best = u.nbest(word, table, 5, max_len)
    assert [seg for seg, _ in best] == [as_pairs(seg) for seg in ranked[:5]]
    assert [score for _, score in best] == [total(seg) for seg in ranked[:5]]


@given(lattice_words, float_tables, max_lengths)
def test_viterbi_total_is_the_maximum(word, table, max_len) -> None:
    unk = min(table.values()) - 10.0
    segs = brute_segmentations(word, table, max_len, unk)
    path = u.viterbi(word, table, max_len)
    totals = {tuple(as_pairs(seg)): total(seg) for seg in segs}
    assert totals[tuple(path)] == max(totals.values())


def test_viterbi_tie_goes_to_the_longer_last_piece() -> None:
    table = {"a": -1.0, "b": -1.0, "ab": -2.0, "ba": -2.0}
    # a|b|a, ab|a and a|ba all total -3: the longest last piece wins.
    assert u.viterbi("aba", table) == [("a", False), ("ba", False)]
    assert u.viterbi("ab", table) == [("ab", False)]
    assert u.viterbi("", table) == []


@given(lattice_words, float_tables, st.sampled_from([0.0, 0.1, 0.5, 1.0]))
def test_segmentation_probabilities(word, table, alpha) -> None:
    probabilities = u.segmentation_probabilities(word, table, alpha, max_piece_length=4)
    assert math.fsum(probabilities.values()) == pytest.approx(1.0, rel=1e-12)
    assert len(probabilities) == len(brute_segmentations(word, table, 4, 0.0))
    if alpha == 0.0:
        assert max(probabilities.values()) == pytest.approx(min(probabilities.values()))
    if alpha == 1.0:
        # Summing P over the segmentations through a node gives its marginal.
        marginals, _ = u.forward_backward(word, table, 4)
        for node, marginal in marginals:
            through = 0.0
            for pieces, p in probabilities.items():
                starts = [sum(len(x) for x in pieces[:i]) for i in range(len(pieces))]
                if any(s == node.begin and len(x) == node.length for s, x in zip(starts, pieces)):
                    through += p
            assert through == pytest.approx(marginal, rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------------------
# EM
# ---------------------------------------------------------------------------


def test_digamma_known_values() -> None:
    assert u.digamma(1) == pytest.approx(-EULER_GAMMA, rel=1e-9)
    assert u.digamma(0.5) == pytest.approx(-EULER_GAMMA - 2 * LOG(2), rel=1e-9)
    assert u.digamma(2) == pytest.approx(1 - EULER_GAMMA, rel=1e-9)
    assert u.digamma(10) == pytest.approx(2.251752589066721, rel=1e-9)
    assert u.digamma(1e6) == pytest.approx(13.815510057964275, rel=1e-12)
    with pytest.raises(ValueError, match="x > 0"):
        u.digamma(0.0)


@given(st.floats(0.05, 50.0))
def test_digamma_recurrence(x) -> None:
    assert u.digamma(x + 1) == pytest.approx(u.digamma(x) + 1 / x, rel=1e-9, abs=1e-9)


def test_e_step_by_hand() -> None:
    # "ab" x 3: [a, b] and [ab] both have probability 0.25, so each is taken half the time.
    table = {"a": LOG(0.5), "ab": LOG(0.25), "b": LOG(0.5), "c": LOG(0.5)}
    expected, objective = u.e_step([("ab", 3)], table)
    assert list(expected) == ["a", "ab", "b", "c"]
    for piece in ("a", "ab", "b"):
        assert expected[piece] == pytest.approx(1.5, rel=1e-12)
    assert expected["c"] == 0.0
    assert objective == pytest.approx(3 * LOG(0.5), rel=1e-12)
    # An unknown character adds to Z but never to an expected count.
    expected_x, objective_x = u.e_step([("xa", 2)], table)
    assert expected_x["a"] == pytest.approx(2.0)
    assert objective_x == pytest.approx(2 * (LOG(0.5) - 10 + LOG(0.25)))


def test_m_step_by_hand() -> None:
    table = {"a": 0.0, "ab": 0.0, "b": 0.0, "ba": 0.0, "c": 0.0}
    expected = {"a": 1.5, "ab": 1.5, "b": 1.5, "ba": 0.4, "c": 0.0}
    new = u.m_step(table, expected)
    # "ba" (0.4 < 0.5) goes; the character "c" stays with 0.5. total = 5.0.
    assert list(new) == ["a", "ab", "b", "c"]
    psi_15 = 2 - EULER_GAMMA - 2 * LOG(2)
    psi_05 = -EULER_GAMMA - 2 * LOG(2)
    psi_5 = 1 + 1 / 2 + 1 / 3 + 1 / 4 - EULER_GAMMA
    for piece in ("a", "ab", "b"):
        assert new[piece] == pytest.approx(psi_15 - psi_5, rel=1e-9)
    assert new["c"] == pytest.approx(psi_05 - psi_5, rel=1e-9)
    assert new["c"] == u.digamma(0.5) - u.digamma(5.0)


# ---------------------------------------------------------------------------
# Pruning
# ---------------------------------------------------------------------------


def prune_example():
    table = {char: LOG(0.1) for char in "abcd"}
    # "ba" is worse than b + a (removable); "cd" is in no word's best path.
    table.update(ab=LOG(0.3), abc=LOG(0.05), ba=-30.0, cd=LOG(0.2))
    words = [("abab", 5), ("abc", 1)]  # best paths: [ab, ab] x 5 and [abc] x 1
    return words, table


def test_prune_losses_by_hand() -> None:
    words, table = prune_example()
    chars, losses = u.prune_losses(words, table)
    assert chars == ["a", "b", "c", "d"]
    assert list(losses) == ["ab", "abc"]
    # freq: ab 10, abc 1 (total 11); vsum = 6 word occurrences.
    # ab  -> alternative [a, b]:  F = 10/6, lp = log(10/11), lp_alt = 2 log(10 / (11 + 10)).
    # abc -> alternative [ab, c]: F = 1/6,  lp = log(1/11),  lp_alt = log(11/12) + log(1/12).
    loss_ab = 10 / 6 * (LOG(10 / 11) - 2 * LOG(10 / 21))
    loss_abc = 1 / 6 * (LOG(1 / 11) - LOG(11 / 12) - LOG(1 / 12))
    assert losses["ab"] == pytest.approx(loss_ab, rel=1e-12)
    assert losses["abc"] == pytest.approx(loss_abc, rel=1e-12)


def test_prune_keeps_chars_then_the_costliest_pieces() -> None:
    words, table = prune_example()
    small = u.prune(words, table, desired=5, shrinking_factor=0.5)  # max(5, 4) = 5
    assert small == {p: table[p] for p in ["a", "ab", "b", "c", "d"]}
    both = u.prune(words, table, desired=6, shrinking_factor=0.5)
    assert set(both) == {"a", "b", "c", "d", "ab", "abc"}
    # Removable and unused pieces go however much room there is.
    assert set(u.prune(words, table, desired=100)) == {"a", "b", "c", "d", "ab", "abc"}
    # floor(0.75 x 8) = 6 beats desired = 1.
    assert len(u.prune(words, table, desired=1)) == 6


# ---------------------------------------------------------------------------
# Training, encoding, decoding
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def botchan_lines(shared_data) -> list[str]:
    path = shared_data / "corpus" / "small" / "botchan.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found (set BYTEPAIR_SHARED_DATA to the shared/data folder)")
    return path.read_text(encoding="utf-8")[:20_000].splitlines()


@pytest.fixture(scope="module")
def botchan_model(botchan_lines) -> u.UnigramResult:
    return u.train(botchan_lines, 300, character_coverage=1.0, special_tokens=["<|eot|>"])


def test_train_gives_the_vocabulary_layout(botchan_lines, botchan_model) -> None:
    model = botchan_model
    assert len(model.pieces) == 300 == len(set(model.pieces))
    assert model.pieces[:2] == ["<unk>", "<|eot|>"]
    assert model.kinds[:2] == ["unknown", "control"]
    assert set(model.kinds[2:]) == {"normal"}
    normal = list(zip(model.scores[2:], model.pieces[2:]))
    assert normal == sorted(normal, key=lambda sp: (-sp[0], sp[1]))
    chars = set("".join(w for line in botchan_lines for w in u.metaspace_words(line)))
    assert chars <= set(model.pieces)
    assert all(len(p) <= 16 and "▁" not in p[1:] for p in model.pieces[2:])
    sizes = model.table_sizes
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] <= math.floor(1.1 * 298)
    assert model.rounds[-1].size_after_prune is None
    assert all(len(r.objectives) == 2 for r in model.rounds)


def test_train_is_deterministic_and_ignores_corpus_order(botchan_lines, botchan_model) -> None:
    shuffled = list(botchan_lines)
    random.Random(7).shuffle(shuffled)
    again = u.train(shuffled, 300, character_coverage=1.0, special_tokens=["<|eot|>"])
    assert again == botchan_model  # pieces, scores (bit for bit), kinds and every round


def test_encode_decode_round_trip(botchan_lines, botchan_model) -> None:
    for line in botchan_lines[:200] + ["", " two  spaces ", "  lead", "trail  "]:
        ids = u.encode(line, botchan_model)
        assert u.decode(ids, botchan_model) == line
    text = "end<|eot|> next"
    ids = u.encode(text, botchan_model, allowed_special="all")
    assert ids.count(1) == 1
    assert u.decode(ids, botchan_model) == text
    assert 1 not in u.encode(text, botchan_model)  # not allowed: ordinary text
    # A character the vocabulary has never seen is <unk>, decoded as '⁇'.
    ids = u.encode("a☃b", botchan_model)
    assert 0 in ids
    assert u.decode(ids, botchan_model) == "a⁇b"
    # A run of them is one <unk>, as in SentencePiece and tokenizers.
    ids = u.encode("a☃☂b", botchan_model)
    assert ids.count(0) == 1 and u.decode(ids, botchan_model) == "a⁇b"


def test_byte_fallback_round_trips_unseen_characters(botchan_lines) -> None:
    model = u.train(botchan_lines[:150], 257 + 120, byte_fallback=True)
    assert len(model.pieces) == 377
    assert model.pieces[1:3] == ["<0x00>", "<0x01>"] and model.kinds[256] == "byte"
    for text in ["naïve 日本語 ☃ 👩‍👩‍👧", "  spaces  ", "\x00\n", "Botchan said ☃."]:
        ids = u.encode(text, model)
        assert 0 not in ids
        assert u.decode(ids, model) == text
    assert u.encode("☃", model)[-3:] == [1 + b for b in "☃".encode()]


def test_other_pretokenizers_and_triples(botchan_lines) -> None:
    model = u.train(botchan_lines[:100], 200, pretokenizer="gpt2", character_coverage=1.0)
    assert model.pretokenizer.kind == "gpt2"
    line = botchan_lines[10]
    ids = u.encode(line, model)
    assert u.decode(ids, model) == line
    # A plain (pieces, scores, kinds) triple encodes the same way.
    triple = (model.pieces, model.scores, model.kinds)
    assert u.encode(line, triple, pretokenizer="gpt2") == ids


def test_small_hand_model() -> None:
    pieces = ["<unk>", "▁un", "happy", "▁", "u", "n", "h", "a", "p", "y"]
    scores = [0.0, -2.0, -3.0, -4.0] + [-6.0] * 6
    kinds = ["unknown"] + ["normal"] * 9
    model = (pieces, scores, kinds)
    assert u.encode("unhappy", model) == [1, 2]
    assert u.encode("unhappy  un", model) == [1, 2, 3, 1]
    assert u.decode([1, 2, 3, 1], model) == "unhappy  un"
    assert u.decode([4, 0], model) == "u⁇"


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="vocab_size 10 is too small"):
        u.train(["hello"], 10, byte_fallback=True)
    with pytest.raises(ValueError, match="covered characters"):
        u.train(["abcdefgh"], 4)
    with pytest.raises(ValueError, match="no text"):
        u.train(["", ""], 50)
    with pytest.raises(TypeError, match="vocab_size must be int"):
        u.train(["x"], "50")
    with pytest.raises(ValueError, match="shrinking_factor"):
        u.train(["x"], 50, shrinking_factor=1.0)
    with pytest.raises(ValueError, match="'<unk>' is the unknown piece"):
        u.train(["x"], 50, special_tokens=["<unk>"])
    model = (["<unk>", "a"], [0.0, -1.0], ["unknown", "normal"])
    with pytest.raises(ValueError, match="id 7 at position 1"):
        u.decode([1, 7], model)
    with pytest.raises(ValueError, match="exactly one unknown"):
        u.encode("a", (["a"], [-1.0], ["normal"]))
    with pytest.raises(ValueError, match="allowed_special '<s>'"):
        u.encode("a", model, allowed_special=["<s>"])
    with pytest.raises(ValueError, match="scores is empty"):
        u.viterbi("a", {})
    with pytest.raises(TypeError, match=r"words\[0\]"):
        u.e_step([("a", 1.5)], {"a": -1.0})


def test_loosely_like_sentencepiece(botchan_lines, tmp_path) -> None:
    """Same corpus, same size, same rules where SentencePiece has a switch: similar compression."""
    spm = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(botchan_lines) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(tmp_path / "sp"),
        vocab_size=300,
        model_type="unigram",
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        split_by_unicode_script=False,
        split_by_number=False,
        bos_id=-1,
        eos_id=-1,
        character_coverage=1.0,
        num_threads=1,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    model = u.train(botchan_lines, 300, character_coverage=1.0)
    n_bytes = sum(len(line.encode("utf-8")) for line in botchan_lines)
    ours = n_bytes / sum(len(u.encode(line, model)) for line in botchan_lines)
    theirs = n_bytes / sum(len(sp.encode(line)) for line in botchan_lines)
    assert 0.85 < ours / theirs < 1.15, (ours, theirs)
