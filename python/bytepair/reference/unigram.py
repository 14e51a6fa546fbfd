"""The unigram language model (Kudo 2018, SentencePiece), written to be read.

This is the oracle the Rust core's unigram trainer and encoder are ported from
and tested against, bit for bit. It follows the team's exact statement of the
algorithm (docs/design/unigram.md): SentencePiece's trainer with every order and every tie
fixed. The arithmetic is IEEE f64 with ``math.log`` / ``math.exp`` only, and
every sum runs in the order written below.

The pipeline:

1. Words. Texts are cut into words and counted: ``[(word, count)]`` sorted by
   the word's text. The default cutting is *metaspace*: ``' '`` becomes
   ``'▁'`` (U+2581), a ``'▁'`` is put in front of the text, and the text is cut
   before every ``'▁'``. Any bytepair pre-tokenizer may be used instead.
2. Characters. ``character_coverage`` keeps the most frequent characters;
   the others never appear inside a piece (they become unknown).
3. Seeds. Frequent substrings (2..``max_piece_length`` characters) scored by
   ``frequency x length``, plus every covered character; the initial score of
   a piece is the log of its share of all seed scores.
4. EM. The E-step runs forward-backward on each word's lattice and collects
   the expected count of every piece; the M-step turns expected counts into
   log probabilities with the digamma function (a Bayesian flavour of EM that
   pushes rare pieces out).
5. Pruning. Each multi-character piece gets a loss: how much the corpus
   likelihood drops when the piece is replaced by its best alternative
   segmentation. The cheapest pieces go, until the table is 75% of its size.
6. Repeat 4-5 until the table is at most 1.1 x the wanted size, then keep
   the best-scoring pieces.

The *working table* is a dict ``piece -> score`` and is always walked in
sorted-by-piece order ("table order"); every sum over the table runs in that
order.

Choices made where docs/design/unigram.md is silent (the Rust core must make the same):

- An empty text has no words (not a lone dummy ``'▁'``), so it encodes to ``[]``.
- Special tokens are cut out of a text first (leftmost, then longest, as in
  :func:`bytepair.reference.bpe.split_special`); in training they are never
  counted. In metaspace mode the dummy ``'▁'`` goes in front of every
  ordinary piece of text, the one after a special token too (as tokenizers'
  ``Prepend`` normalizer does), and decoding drops it again.
- bytepair's optional normalization (NFC or NFKC, then lowercase, as
  :func:`bytepair.reference.bpe.normalize`) applies to each ordinary piece of
  text between special tokens, before it is cut into words.
- A special token's text is never a seed, so no normal piece repeats it (a
  piece file cannot hold one text twice). Only a special starting with
  ``'▁'`` could otherwise be learned in metaspace mode (``"▁he"``: the
  ``'▁'`` of a space); SentencePiece likewise keeps its user symbols out of
  the pieces. Specials that would always repeat a piece are refused: one
  named like a byte piece (``"<0x41>"``) with byte fallback (as SentencePiece
  refuses it) and ``"▁"`` in metaspace mode.
- ``seed_size`` counts the multi-character seeds only; the covered characters
  are added on top of them.
- Integer counts become f64 exactly (they stay far below 2**53); sums of them
  that docs/design/unigram.md writes as f64 are done as f64 (``0.0 + ...`` in table order).
- The unk score is ``min(table scores) - 10``, taken over the whole current
  table (once per E-step, per pruning, per encoding; at encoding the table is
  the normal pieces).
- Float keys (``-score``, ``-loss``) compare as real numbers, so ``0.0 == -0.0``
  (Rust: ``partial_cmp``, not ``total_cmp``). No NaN can arise.
- ``character_coverage`` must be in (0, 1]; the threshold is the f64 product
  ``character_coverage * total`` and the integer running sum is compared to it
  exactly.
- In the pruning step docs/design/unigram.md's ``freq[q]`` and ``F_raw[q]`` are the same
  integers (both count a piece once per occurrence in a Viterbi path), so one
  table holds them.
- The EM rounds always run at least once, even if the seed table is already
  at most the desired size.
- If EM empties the table below the wanted number of normal pieces, the
  vocabulary is smaller than ``vocab_size`` and a ``UserWarning`` says so.
- Ids that are not normal pieces (``<unk>``, specials, ``<0xXX>``) have score 0.0.
- Decoding: ``<unk>`` becomes ``'⁇'`` (U+2047), a special token its text, byte
  pieces are joined back to UTF-8 (``errors="replace"`` by default). In
  metaspace mode one ``'▁'`` is dropped at the start of the output and after
  each special token, and every other ``'▁'`` becomes ``' '`` (so a ``'▁'``
  typed in the input comes back as a space, as in SentencePiece).
- A run of unk nodes in a word is one ``<unk>`` id (as SentencePiece and
  tokenizers do); with byte fallback each unknown character is its bytes.
- The Viterbi tie rule (an earlier-beginning predecessor wins) means, over
  whole segmentations of equal total: the one whose last piece is longest,
  then whose second-to-last piece is longest, and so on. :func:`nbest` sorts by
  (total desc, that order). Totals are the scores added left to right from
  0.0, as Viterbi adds them; when rounding makes two different prefix sums
  equal after a later addition, the Viterbi recurrence is the definition.
- Pruning's "removable" test and its ``freq == 0`` test almost always agree (a
  piece that loses to its own split also loses inside any word); both are
  kept because docs/design/unigram.md states both.

What it leaves out, on purpose: speed (a lattice is rebuilt from the dict for
every word, every time) and file formats. Validation raises ``ValueError`` or
``TypeError`` naming the bad input; it never uses ``assert``.
"""

from __future__ import annotations

import math
import operator
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Optional, Union

from bytepair.errors import warn
from bytepair.pretokenizers import Pretokenizer, resolve
from bytepair.reference.bpe import (
    check_specials,
    checked_texts,
    normalize,
    pretokenize,
    split_special,
    utf8_bytes,
)
from bytepair.reference.normalize import decode_utf8_like_sentencepiece

METASPACE = "\u2581"  # '▁', stands for a space
UNK_PIECE = "<unk>"
UNK_SURFACE = "\u2047"  # '⁇', what an <unk> decodes to
UNK_PENALTY = 10.0  # an unknown character scores this much below the worst piece
N_BYTES = 256

KIND_NORMAL = "normal"
KIND_UNKNOWN = "unknown"
KIND_CONTROL = "control"
KIND_BYTE = "byte"


# ---------------------------------------------------------------------------
# Small checks
# ---------------------------------------------------------------------------


def _check_int(name: str, value: object, smallest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be int, not {type(value).__name__}")
    if value < smallest:
        raise ValueError(f"{name} must be at least {smallest}, got {value}")
    return value


def _check_fraction(name: str, value: object, *, one_allowed: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    value = float(value)
    if not (0.0 < value < 1.0 or (one_allowed and value == 1.0)):
        upper = "1]" if one_allowed else "1)"
        raise ValueError(f"{name} must be in (0, {upper}, got {value}")
    return value


def _check_words(words: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    checked = []
    for index, item in enumerate(words):
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"words[{index}] must be a (word, count) tuple, got {item!r}")
        word, count = item
        if not isinstance(word, str) or word == "":
            raise TypeError(f"words[{index}]: the word must be a non-empty str, got {word!r}")
        _check_int(f"words[{index}] count", count, 1)
        checked.append((word, count))
    return checked


def _check_scores(scores: Mapping[str, float]) -> Mapping[str, float]:
    if not isinstance(scores, Mapping):
        raise TypeError(f"scores must be a mapping piece -> score, not {type(scores).__name__}")
    if not scores:
        raise ValueError("scores is empty; a lattice needs at least one piece")
    for piece, score in scores.items():
        if not isinstance(piece, str) or piece == "":
            raise TypeError(f"scores: every piece must be a non-empty str, got {piece!r}")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
            raise TypeError(f"scores[{piece!r}] must be a number, got {score!r}")
    return scores


# ---------------------------------------------------------------------------
# Text -> words
# ---------------------------------------------------------------------------


def metaspace_words(text: str, *, dummy_prefix: bool = True) -> list[str]:
    """Cut ``text`` into metaspace words: ``"a  b"`` -> ``["▁a", "▁", "▁b"]``.

    Every ``' '`` becomes ``'▁'``, one ``'▁'`` is put in front (unless
    ``dummy_prefix`` is false), and the text is cut before every ``'▁'``.
    Nothing else changes: joining the words gives the marked text back.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if text == "":
        return []
    marked = text.replace(" ", METASPACE)
    if dummy_prefix:
        marked = METASPACE + marked
    words = []
    start = 0
    for at in range(1, len(marked)):
        if marked[at] == METASPACE:
            words.append(marked[start:at])
            start = at
    words.append(marked[start:])
    return words


def _is_metaspace(pretokenizer: object) -> bool:
    return isinstance(pretokenizer, str) and pretokenizer == "metaspace"


def _resolve_pretokenizer(pretokenizer: object) -> Union[str, Pretokenizer]:
    """``"metaspace"`` stays a name; anything else is a bytepair pre-tokenizer."""
    return "metaspace" if _is_metaspace(pretokenizer) else resolve(pretokenizer)


def _pieces_of_text(
    text: str,
    specials: Sequence[str],
    pretokenizer: Union[str, Pretokenizer],
    normalization: Sequence[str] = (),
) -> list[tuple[str, bool]]:
    """``text`` as ``(word, False)`` and ``(special, True)`` items, in order.

    Specials are cut out first, and the text between them normalized
    (``normalization`` names the steps). In metaspace mode every ordinary piece gets
    the dummy ``'▁'`` (HF tokenizers' ``Prepend`` normalizer does the same to
    each piece between added tokens, so exported models give the same ids).
    """
    items: list[tuple[str, bool]] = []
    for piece, is_special in split_special(text, specials):
        if is_special:
            items.append((piece, True))
            continue
        piece = normalize(piece, normalization)
        if _is_metaspace(pretokenizer):
            items += [(w, False) for w in metaspace_words(piece)]
        else:
            items += [(w, False) for w in pretokenize(piece, pretokenizer)]
    return items


def count_words(
    texts: Union[str, Iterable[str]],
    pretokenizer: object = "metaspace",
    *,
    special_tokens: Iterable[str] = (),
    normalization: Iterable[str] = (),
) -> list[tuple[str, int]]:
    """Distinct words of a corpus with their counts, sorted by the word's text.

    ``texts`` is an iterable of str (a single str is one text). ``pretokenizer``
    is ``"metaspace"`` or any bytepair pre-tokenizer name or pattern. Special
    tokens are cut out and never counted; the text between them is normalized
    (``normalization``: ``"nfc"`` or ``"nfkc"``, then ``"lowercase"``).
    """
    specials = check_specials(special_tokens)
    pretok = _resolve_pretokenizer(pretokenizer)
    normalization = tuple(normalization)
    counts: Counter = Counter()
    for text in checked_texts(texts):
        for word, is_special in _pieces_of_text(text, specials, pretok, normalization):
            if not is_special:
                counts[word] += 1
    return sorted(counts.items())


# ---------------------------------------------------------------------------
# Characters and seeds
# ---------------------------------------------------------------------------


def char_counts(words: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Weighted count of every character: sum over words of count x occurrences."""
    counts: Counter = Counter()
    for word, count in _check_words(words):
        for char in word:
            counts[char] += count
    return dict(counts)


def covered_chars(words: Iterable[tuple[str, int]], character_coverage: float) -> list[str]:
    """The characters pieces may use, most frequent first (count desc, char asc).

    Characters are added in that order until their running count reaches
    ``character_coverage x total``; 1.0 keeps every character.
    """
    coverage = _check_fraction("character_coverage", character_coverage, one_allowed=True)
    counts = char_counts(words)
    threshold = coverage * float(sum(counts.values()))
    kept = []
    running = 0
    for char in sorted(counts, key=lambda c: (-counts[c], c)):
        kept.append(char)
        running += counts[char]
        if running >= threshold:
            break
    return kept


def char_kind(char: str) -> int:
    """0 for a letter or mark (``\\p{L}``, ``\\p{M}``), 1 for a number (``\\p{N}``), 2 for the rest."""
    major = unicodedata.category(char)[0]
    return 0 if major in "LM" else 1 if major == "N" else 2


def _is_valid_piece(piece: str, covered: set[str], metaspace: bool) -> bool:
    """Covered characters only; in metaspace mode ``'▁'`` only as the first
    character; characters of one kind only (letters and marks, numbers, or
    the rest), but a first character of the rest is free: ``▁the`` and
    ``,and`` are candidates, ``the,`` and ``a1`` are not (as SentencePiece
    keeps scripts and digits apart)."""
    if metaspace and METASPACE in piece[1:]:
        return False
    kinds = [char_kind(char) for char in piece]
    if len(set(kinds[1:] if kinds[0] == 2 else kinds)) > 1:
        return False
    return all(char in covered for char in piece)


def substring_frequencies(
    words: Iterable[tuple[str, int]], max_piece_length: int, covered: set[str], metaspace: bool
) -> dict[str, int]:
    """freq(s) for every valid substring of 2..max_piece_length characters.

    freq(s) = sum over words of count x (occurrences of s in the word,
    overlapping ones included).
    """
    freq: Counter = Counter()
    for word, count in _check_words(words):
        for begin in range(len(word)):
            for end in range(begin + 2, min(begin + max_piece_length, len(word)) + 1):
                piece = word[begin:end]
                if _is_valid_piece(piece, covered, metaspace):
                    freq[piece] += count
    return dict(freq)


def seed_pieces(
    words: Iterable[tuple[str, int]],
    *,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    covered: Optional[Iterable[str]] = None,
    metaspace: bool = True,
    excluded: Iterable[str] = (),
) -> dict[str, float]:
    """The initial table: piece -> log probability, in table order.

    Multi-character seeds: valid substrings with freq >= 2 that are not in
    ``excluded`` (the special tokens, which have ids of their own), seed score
    ``freq x length``, the best ``seed_size`` of them by (seed score desc,
    piece asc). Every covered character joins with seed score = its count.
    score(p) = log(s_p) - log(S), S the f64 sum of all seed scores in table
    order. ``covered`` defaults to :func:`covered_chars` at 0.9995.
    """
    words = _check_words(words)
    _check_int("max_piece_length", max_piece_length, 1)
    _check_int("seed_size", seed_size, 0)
    covered_set = set(covered_chars(words, 0.9995) if covered is None else covered)

    freq = substring_frequencies(words, max_piece_length, covered_set, metaspace)
    excluded = set(excluded)
    seed_score = {
        piece: f * len(piece) for piece, f in freq.items() if f >= 2 and piece not in excluded
    }
    best = sorted(seed_score, key=lambda p: (-seed_score[p], p))[:seed_size]
    seeds = {piece: seed_score[piece] for piece in best}
    counts = char_counts(words)
    for char in sorted(covered_set):
        if char not in counts:
            raise ValueError(f"covered character {char!r} does not occur in the words")
        seeds[char] = counts[char]

    total = 0.0
    for piece in sorted(seeds):
        total += seeds[piece]
    log_total = math.log(total)
    return {piece: math.log(seeds[piece]) - log_total for piece in sorted(seeds)}


# ---------------------------------------------------------------------------
# The lattice of a word
# ---------------------------------------------------------------------------


class Node(NamedTuple):
    """A piece of a word: ``word[begin:begin + length]``.

    An unk node stands for one character no table piece covers; its ``piece``
    is that character and its score is the unk score.
    """

    begin: int
    length: int
    piece: str
    score: float
    is_unk: bool


def unk_score_of(scores: Mapping[str, float]) -> float:
    """The score of an unknown character: ``min(table scores) - 10``."""
    return min(scores.values()) - UNK_PENALTY


def lattice(
    word: str,
    scores: Mapping[str, float],
    max_piece_length: int = 16,
    unk_score: Optional[float] = None,
    *,
    without: Optional[tuple[int, int]] = None,
) -> list[list[Node]]:
    """``begin_nodes``: for each position of ``word``, the nodes beginning there.

    A node for every ``word[begin:begin+length]`` in ``scores`` with
    ``length <= max_piece_length``, lengths ascending; where no length-1 node
    exists, an unk node of length 1 (it comes first, being the shortest).
    ``without=(begin, length)`` leaves that one node out (used by pruning).
    """
    if not isinstance(word, str):
        raise TypeError(f"word must be str, not {type(word).__name__}")
    if unk_score is None:
        unk_score = unk_score_of(_check_scores(scores))
    begin_nodes: list[list[Node]] = []
    for begin in range(len(word)):
        here = []
        for length in range(1, min(max_piece_length, len(word) - begin) + 1):
            piece = word[begin : begin + length]
            if piece in scores and (begin, length) != without:
                here.append(Node(begin, length, piece, scores[piece], False))
        if not here or here[0].length != 1:
            here.insert(0, Node(begin, 1, word[begin], unk_score, True))
        begin_nodes.append(here)
    return begin_nodes


def end_nodes_of(begin_nodes: list[list[Node]]) -> list[list[Node]]:
    """``end_nodes[pos]``: the nodes ending at ``pos``, begin ascending."""
    end_nodes: list[list[Node]] = [[] for _ in range(len(begin_nodes) + 1)]
    for here in begin_nodes:  # begins ascending, so each list is too
        for node in here:
            end_nodes[node.begin + node.length].append(node)
    return end_nodes


def lse2(x: float, y: float) -> float:
    """log(exp(x) + exp(y)), SentencePiece's way (cut off when 50 apart)."""
    vmin = min(x, y)
    vmax = max(x, y)
    if vmax == -math.inf or vmax > vmin + 50:  # both -inf: nothing (not NaN)
        return vmax
    return vmax + math.log(math.exp(vmin - vmax) + 1.0)


def log_sum_exp(values: Sequence[float]) -> float:
    """lse2 folded left to right, starting from the first value."""
    total = values[0]
    for value in values[1:]:
        total = lse2(total, value)
    return total


# ---------------------------------------------------------------------------
# Forward-backward and Viterbi
# ---------------------------------------------------------------------------


def _forward(begin_nodes: list[list[Node]], end_nodes: list[list[Node]]) -> list[float]:
    """``alpha_at[pos]``: alpha of every node beginning at ``pos`` (EOS at n).

    alpha[r] = LSE over l ending at pos of (alpha[l] + score[l]); it is the same
    for every r beginning at pos, so it is stored once per position.
    alpha[BOS] = 0 and BOS (score 0) is the only node ending at 0.
    """
    n = len(begin_nodes)
    alpha_at = [0.0] * (n + 1)
    for pos in range(1, n + 1):
        alpha_at[pos] = log_sum_exp([alpha_at[left.begin] + left.score for left in end_nodes[pos]])
    return alpha_at


def _backward(begin_nodes: list[list[Node]]) -> list[float]:
    """``beta_at[pos]``: beta of every node ending at ``pos`` (BOS at 0).

    beta[l] = LSE over r beginning at pos of (beta[r] + score[r]); beta[EOS] = 0
    and EOS (score 0) is the only node beginning at n.
    """
    n = len(begin_nodes)
    beta_at = [0.0] * (n + 1)
    for pos in range(n - 1, -1, -1):
        beta_at[pos] = log_sum_exp(
            [beta_at[r.begin + r.length] + r.score for r in begin_nodes[pos]]
        )
    return beta_at


def _marginals(begin_nodes: list[list[Node]]) -> tuple[list[tuple[Node, float]], float]:
    alpha_at = _forward(begin_nodes, end_nodes_of(begin_nodes))
    beta_at = _backward(begin_nodes)
    log_z = alpha_at[len(begin_nodes)]
    marginals = []
    for here in begin_nodes:
        for v in here:
            alpha, beta = alpha_at[v.begin], beta_at[v.begin + v.length]
            marginals.append((v, math.exp(alpha + v.score + beta - log_z)))
    return marginals, log_z


def forward_backward(
    word: str,
    scores: Mapping[str, float],
    max_piece_length: int = 16,
    unk_score: Optional[float] = None,
) -> tuple[list[tuple[Node, float]], float]:
    """``([(node, marginal)], log Z)`` for the lattice of ``word``.

    Nodes come in (begin asc, length asc) order. marginal(v) =
    exp(alpha[v] + score[v] + beta[v] - Z): the probability that a segmentation
    drawn with P ∝ exp(sum of scores) uses v. Z = alpha[EOS].
    """
    return _marginals(lattice(word, scores, max_piece_length, unk_score))


def _viterbi_nodes(begin_nodes: list[list[Node]]) -> list[Node]:
    """The best path, BOS and EOS left out.

    best[r] = max over l ending where r begins of best[l] + score[r]; a later l
    must be strictly greater to win, so on a tie the l that begins earliest wins.
    """
    n = len(begin_nodes)
    end_nodes = end_nodes_of(begin_nodes)
    # best[(begin, length)] = (total of the best path ending with that node, its predecessor)
    best: dict[tuple[int, int], tuple[float, Optional[Node]]] = {}

    def best_predecessor(pos: int, score: float) -> tuple[float, Optional[Node]]:
        if pos == 0:
            return 0.0 + score, None  # BOS: best 0
        chosen: Optional[Node] = None
        chosen_total = 0.0
        for left in end_nodes[pos]:
            total = best[(left.begin, left.length)][0] + score
            if chosen is None or total > chosen_total:
                chosen, chosen_total = left, total
        return chosen_total, chosen

    for pos in range(n):
        for r in begin_nodes[pos]:
            best[(r.begin, r.length)] = best_predecessor(pos, r.score)
    _, node = best_predecessor(n, 0.0)  # EOS, score 0
    path = []
    while node is not None:
        path.append(node)
        node = best[(node.begin, node.length)][1]
    return path[::-1]


def viterbi(
    word: str,
    scores: Mapping[str, float],
    max_piece_length: int = 16,
    unk_score: Optional[float] = None,
) -> list[tuple[str, bool]]:
    """The best segmentation of ``word`` as ``[(piece, is_unk)]``.

    An unknown character is ``(char, True)``. See the module docstring for
    the tie rule.
    """
    return [
        (v.piece, v.is_unk)
        for v in _viterbi_nodes(lattice(word, scores, max_piece_length, unk_score))
    ]


# ---------------------------------------------------------------------------
# Every segmentation (for n-best and for testing samplers)
# ---------------------------------------------------------------------------


def _all_paths(begin_nodes: list[list[Node]], pos: int = 0) -> list[list[Node]]:
    if pos == len(begin_nodes):
        return [[]]
    return [
        [node, *rest]
        for node in begin_nodes[pos]
        for rest in _all_paths(begin_nodes, pos + node.length)
    ]


def _path_total(path: list[Node]) -> float:
    """Scores added left to right from 0.0, as Viterbi adds them."""
    total = 0.0
    for node in path:
        total += node.score
    return total


def segmentations(
    word: str,
    scores: Mapping[str, float],
    max_piece_length: int = 16,
    unk_score: Optional[float] = None,
) -> list[tuple[list[tuple[str, bool]], float]]:
    """Every segmentation of ``word`` with its total score (exponentially many).

    Meant for short words: tests and n-best. Order: as the lattice is walked
    (first piece shortest first, and so on).
    """
    begin_nodes = lattice(word, scores, max_piece_length, unk_score)
    return [
        ([(v.piece, v.is_unk) for v in path], _path_total(path)) for path in _all_paths(begin_nodes)
    ]


def _tie_key(path: list[Node]) -> tuple[int, ...]:
    """Viterbi's preference between equal totals: longest last piece, then the one before..."""
    return tuple(-node.length for node in reversed(path))


# SentencePiece's bound on n-best (kMaxNBestSize; it refuses more), and the core's.
MAX_NBEST = 512


def nbest(
    word: str,
    scores: Mapping[str, float],
    k: int,
    max_piece_length: int = 16,
    unk_score: Optional[float] = None,
) -> list[tuple[list[tuple[str, bool]], float]]:
    """The ``k`` best segmentations as ``([(piece, is_unk)], total)``.

    Readable, not fast: every segmentation is listed and sorted by (total
    desc, Viterbi's tie order). With exact sums the first one is the Viterbi
    path. ``k`` is at most :data:`MAX_NBEST`, as SentencePiece's n-best size.
    """
    _check_int("k", k, 0)
    if k > MAX_NBEST:
        raise ValueError(f"k must be at most {MAX_NBEST} (as in SentencePiece), got {k}")
    begin_nodes = lattice(word, scores, max_piece_length, unk_score)
    paths = sorted(_all_paths(begin_nodes), key=lambda p: (-_path_total(p), _tie_key(p)))
    return [([(v.piece, v.is_unk) for v in path], _path_total(path)) for path in paths[:k]]


def segmentation_probabilities(
    word: str,
    scores: Mapping[str, float],
    alpha: float = 1.0,
    max_piece_length: int = 16,
    unk_score: Optional[float] = None,
) -> dict[tuple[str, ...], float]:
    """Exact P(segmentation) ∝ exp(alpha x total score), keyed by the tuple of pieces.

    What subword-regularization sampling must draw from. (A position holds
    either a character piece or an unk node, never both, so the pieces alone
    identify a segmentation.)
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or math.isnan(alpha):
        raise TypeError(f"alpha must be a number, got {alpha!r}")
    listed = segmentations(word, scores, max_piece_length, unk_score)
    logits = [alpha * total for _, total in listed]
    top = max(logits)
    weights = [math.exp(logit - top) for logit in logits]
    norm = math.fsum(weights)
    return {
        tuple(piece for piece, _ in pieces): weight / norm
        for (pieces, _), weight in zip(listed, weights)
    }


# ---------------------------------------------------------------------------
# EM
# ---------------------------------------------------------------------------


def digamma(x: float) -> float:
    """ψ(x), SentencePiece's way: recurrence up to 7, then the asymptotic series.

    Evaluated exactly in this order (the Rust core repeats it operation for
    operation).
    """
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"digamma needs a number, not {type(x).__name__}")
    x = float(x)
    if not x > 0.0:
        raise ValueError(f"digamma is only used for x > 0, got {x}")
    r = 0.0
    while x < 7:
        r -= 1 / x
        x += 1
    x -= 0.5
    xx = 1 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    r += (
        math.log(x)
        + (1 / 24) * xx2
        - (7 / 960) * xx4
        + (31 / 8064) * xx4 * xx2
        - (127 / 30720) * xx4 * xx4
    )
    return r


def e_step(
    words: Iterable[tuple[str, int]], scores: Mapping[str, float], *, max_piece_length: int = 16
) -> tuple[dict[str, float], float]:
    """``(expected count of every table piece, objective)``.

    For each word (sorted) and each of its nodes (begin asc, length asc), not
    unk: expected[piece] += count x marginal. objective = sum of count x log Z.
    """
    words = _check_words(words)
    scores = _check_scores(scores)
    unk_score = unk_score_of(scores)
    expected = {piece: 0.0 for piece in sorted(scores)}
    objective = 0.0
    for word, count in words:
        marginals, log_z = _marginals(lattice(word, scores, max_piece_length, unk_score))
        for node, marginal in marginals:
            if not node.is_unk:
                expected[node.piece] += count * marginal
        objective += count * log_z
    return expected, objective


def m_step(scores: Mapping[str, float], expected: Mapping[str, float]) -> dict[str, float]:
    """New table from expected counts: score(p) = ψ(v_p) - ψ(total).

    A character keeps v = max(v, 0.5); a longer piece with v < 0.5 is dropped.
    total is the sum of the kept v in table order.
    """
    kept = {}
    for piece in sorted(scores):
        if piece not in expected:
            raise ValueError(f"expected has no count for the table piece {piece!r}")
        v = expected[piece]
        if len(piece) == 1:
            kept[piece] = max(v, 0.5)
        elif v >= 0.5:
            kept[piece] = v
    total = 0.0
    for piece in kept:  # already in table order
        total += kept[piece]
    digamma_total = digamma(total)
    return {piece: digamma(v) - digamma_total for piece, v in kept.items()}


# ---------------------------------------------------------------------------
# Pruning
# ---------------------------------------------------------------------------


def _alternatives(
    scores: Mapping[str, float], max_piece_length: int, unk_score: float
) -> tuple[set[str], dict[str, list[str]]]:
    """(removable pieces, alternative segmentation of each other multi-char piece).

    A piece whose own best segmentation is not itself is removable. For the
    others, the alternative is the best segmentation without the whole-piece node.
    """
    removable: set[str] = set()
    alternative: dict[str, list[str]] = {}
    for piece in sorted(scores):
        if len(piece) < 2:
            continue
        path = _viterbi_nodes(lattice(piece, scores, max_piece_length, unk_score))
        if len(path) >= 2:
            removable.add(piece)
            continue
        whole = (0, len(piece))
        begin_nodes = lattice(piece, scores, max_piece_length, unk_score, without=whole)
        alternative[piece] = [v.piece for v in _viterbi_nodes(begin_nodes)]
    return removable, alternative


def _viterbi_frequencies(
    words: list[tuple[str, int]],
    scores: Mapping[str, float],
    max_piece_length: int,
    unk_score: float,
) -> tuple[dict[str, int], int]:
    """(freq[q]: count-weighted occurrences of q in the words' Viterbi paths, vsum).

    docs/design/unigram.md's F_raw is the same number: a piece twice in a path counts twice.
    """
    freq = {piece: 0 for piece in sorted(scores)}
    vsum = 0
    for word, count in words:
        vsum += count
        for node in _viterbi_nodes(lattice(word, scores, max_piece_length, unk_score)):
            if not node.is_unk:
                freq[node.piece] += count
    return freq, vsum


def prune_losses(
    words: Iterable[tuple[str, int]],
    scores: Mapping[str, float],
    *,
    max_piece_length: int = 16,
) -> tuple[list[str], dict[str, float]]:
    """(characters, ``loss`` of each candidate piece), both in table order.

    Pieces that are neither: removable ones and ones no Viterbi path uses;
    pruning drops them whatever the size.
    loss(p) = F x (log P(p) - log P(alternative of p)) where the alternative
    takes over p's frequency.
    """
    words = _check_words(words)
    scores = _check_scores(scores)
    unk_score = unk_score_of(scores)
    removable, alternative = _alternatives(scores, max_piece_length, unk_score)
    freq, vsum = _viterbi_frequencies(words, scores, max_piece_length, unk_score)
    total = 0.0
    for piece in freq:  # table order
        total += freq[piece]
    logsum = math.log(total)

    chars: list[str] = []
    losses: dict[str, float] = {}
    for p in sorted(scores):
        if len(p) == 1:
            chars.append(p)
            continue
        if freq[p] == 0 or p in removable:
            continue
        alt = alternative[p]
        f = freq[p] / vsum  # both integers are exact as f64: one correctly rounded division
        lp = math.log(freq[p]) - logsum
        logsum_alt = math.log(total + float(freq[p]) * float(len(alt) - 1))
        lp_alt = 0.0
        for q in alt:
            lp_alt += math.log(freq[q] + freq[p]) - logsum_alt
        losses[p] = f * (lp - lp_alt)
    return chars, losses


def prune(
    words: Iterable[tuple[str, int]],
    scores: Mapping[str, float],
    *,
    desired: int,
    shrinking_factor: float = 0.75,
    max_piece_length: int = 16,
) -> dict[str, float]:
    """Shrink the table to ``max(desired, floor(shrinking_factor x size))`` pieces at most.

    Characters always stay; then candidates by (loss desc, piece asc). Scores
    carry over unchanged.
    """
    _check_int("desired", desired, 0)
    factor = _check_fraction("shrinking_factor", shrinking_factor, one_allowed=False)
    chars, losses = prune_losses(words, scores, max_piece_length=max_piece_length)
    new_size = max(desired, math.floor(factor * len(scores)))
    ranked = sorted(losses, key=lambda p: (-losses[p], p))
    kept = chars + ranked[: max(0, new_size - len(chars))]
    return {piece: scores[piece] for piece in sorted(kept)}


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class UnigramRound:
    """One round of the main loop: EM sub-iterations, then (maybe) pruning.

    objectives: the E-step objective (sum of count x log Z) of each sub-iteration.
    size_after_prune: None on the last round, which stops instead of pruning.
    """

    size_at_start: int
    objectives: tuple[float, ...]
    size_after_em: int
    size_after_prune: Optional[int]


@dataclass(frozen=True)
class UnigramResult:
    """A trained unigram vocabulary.

    pieces/scores/kinds: by id. Id 0 is ``<unk>`` (kind ``"unknown"``), then
        the special tokens (``"control"``), then ``<0x00>``..``<0xFF>``
        (``"byte"``) with byte fallback, then the normal pieces by (score
        desc, piece asc).
    pretokenizer: ``"metaspace"`` or the bytepair :class:`Pretokenizer` used.
    rounds: what each round of training did (table sizes, objectives).
    normalization: what is done to the text between special tokens, in order.
    """

    pieces: list[str]
    scores: list[float]
    kinds: list[str]
    pretokenizer: Union[str, Pretokenizer]
    max_piece_length: int
    rounds: list[UnigramRound]
    normalization: tuple[str, ...] = ()

    @property
    def table_sizes(self) -> list[int]:
        """Size of the working table at the start of each round, then at the end."""
        return [r.size_at_start for r in self.rounds] + [self.rounds[-1].size_after_em]

    @property
    def special_tokens(self) -> dict[str, int]:
        return {p: i for i, (p, k) in enumerate(zip(self.pieces, self.kinds)) if k == KIND_CONTROL}

    @property
    def byte_fallback(self) -> bool:
        return KIND_BYTE in self.kinds


def byte_piece(value: int) -> str:
    """The name of a byte-fallback piece: ``<0x0A>``."""
    return f"<0x{value:02X}>"


def _check_specials_against_pieces(
    specials: Sequence[str], pretokenizer: object, byte_fallback: bool
) -> None:
    """Refuses the special tokens that would always repeat a piece's text."""
    for special in specials:
        if byte_fallback and special in {byte_piece(b) for b in range(N_BYTES)}:
            raise ValueError(
                f"special token {special!r} is the name of a byte piece of byte_fallback; "
                "choose another text"
            )
        if special == METASPACE and _is_metaspace(pretokenizer):
            raise ValueError(
                f"special token {special!r} is the metaspace character every word starts "
                "with, a piece of its own; choose another text"
            )


def final_pieces(scores: Mapping[str, float], n_normal: int) -> list[str]:
    """All characters plus the best multi-char pieces, up to ``n_normal``, by (score desc, piece asc)."""
    chars = [p for p in scores if len(p) == 1]
    if len(chars) > n_normal:
        raise ValueError(f"the {len(chars)} characters do not fit in {n_normal} normal pieces")
    longer = sorted((p for p in scores if len(p) >= 2), key=lambda p: (-scores[p], p))
    kept = chars + longer[: n_normal - len(chars)]
    return sorted(kept, key=lambda p: (-scores[p], p))


def train(
    texts: Union[str, Iterable[str]],
    vocab_size: int,
    *,
    special_tokens: Iterable[str] = (),
    pretokenizer: object = "metaspace",
    character_coverage: float = 0.9995,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    shrinking_factor: float = 0.75,
    num_sub_iterations: int = 2,
    byte_fallback: bool = False,
    normalization: Iterable[str] = (),
) -> UnigramResult:
    """Train a unigram vocabulary of ``vocab_size`` ids (unk, specials and bytes included);
    ``normalization`` is done to the text between special tokens (see :func:`count_words`)."""
    specials = check_specials(special_tokens)
    if UNK_PIECE in specials:
        raise ValueError(f"special_tokens: {UNK_PIECE!r} is the unknown piece already (id 0)")
    _check_int("vocab_size", vocab_size, 1)
    _check_int("max_piece_length", max_piece_length, 1)
    _check_int("seed_size", seed_size, 0)
    _check_int("num_sub_iterations", num_sub_iterations, 1)
    _check_fraction("character_coverage", character_coverage, one_allowed=True)
    _check_fraction("shrinking_factor", shrinking_factor, one_allowed=False)
    if not isinstance(byte_fallback, bool):
        raise TypeError(f"byte_fallback must be bool, not {type(byte_fallback).__name__}")
    _check_specials_against_pieces(specials, pretokenizer, byte_fallback)
    n_fixed = 1 + len(specials) + (N_BYTES if byte_fallback else 0)
    n_normal = vocab_size - n_fixed
    if n_normal < 1:
        raise ValueError(
            f"vocab_size {vocab_size} is too small: <unk>, the {len(specials)} special tokens"
            + (f" and the {N_BYTES} byte pieces" if byte_fallback else "")
            + f" already take {n_fixed} ids"
        )

    pretok = _resolve_pretokenizer(pretokenizer)
    normalization = tuple(normalization)
    normalize("", normalization)  # an unknown name fails before the corpus is read
    words = count_words(texts, pretok, special_tokens=specials, normalization=normalization)
    if not words:
        raise ValueError("the corpus has no text to train on")
    covered = covered_chars(words, character_coverage)
    if len(covered) > n_normal:
        raise ValueError(
            f"vocab_size {vocab_size} is too small: the {len(covered)} covered characters need "
            f"{len(covered)} normal pieces but only {n_normal} are left "
            "(lower character_coverage or raise vocab_size)"
        )

    table = seed_pieces(
        words,
        max_piece_length=max_piece_length,
        seed_size=seed_size,
        covered=covered,
        metaspace=_is_metaspace(pretok),
        excluded=specials,
    )
    desired = math.floor(1.1 * n_normal)
    rounds = []
    while True:
        size_at_start = len(table)
        objectives = []
        for _ in range(num_sub_iterations):
            expected, objective = e_step(words, table, max_piece_length=max_piece_length)
            table = m_step(table, expected)
            objectives.append(objective)
        size_after_em = len(table)
        if len(table) <= desired:
            rounds.append(UnigramRound(size_at_start, tuple(objectives), size_after_em, None))
            break
        table = prune(
            words,
            table,
            desired=desired,
            shrinking_factor=shrinking_factor,
            max_piece_length=max_piece_length,
        )
        rounds.append(UnigramRound(size_at_start, tuple(objectives), size_after_em, len(table)))

    normal = final_pieces(table, n_normal)
    if len(normal) < n_normal:
        warn(
            f"training stopped at {n_fixed + len(normal)} ids, below vocab_size {vocab_size}: "
            "the corpus does not supply enough pieces",
        )
    pieces = [UNK_PIECE, *specials]
    kinds = [KIND_UNKNOWN] + [KIND_CONTROL] * len(specials)
    if byte_fallback:
        pieces += [byte_piece(b) for b in range(N_BYTES)]
        kinds += [KIND_BYTE] * N_BYTES
    scores = [0.0] * len(pieces) + [table[p] for p in normal]
    pieces += normal
    kinds += [KIND_NORMAL] * len(normal)
    return UnigramResult(pieces, scores, kinds, pretok, max_piece_length, rounds, normalization)


# ---------------------------------------------------------------------------
# Encoding and decoding
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Vocab:
    pieces: list[str]
    kinds: list[str]
    normal: dict[str, float]  # normal piece -> score
    normal_id: dict[str, int]
    special_id: dict[str, int]
    byte_id: Optional[list[int]]  # id of <0xXX> for each byte, None without byte fallback
    unk_id: int
    pretokenizer: Union[str, Pretokenizer]
    max_piece_length: int
    normalization: tuple[str, ...]


UnigramModel = Union[UnigramResult, tuple[Sequence[str], Sequence[float], Sequence[str]]]


def _vocab(model: UnigramModel, pretokenizer: object) -> _Vocab:
    """Index a result, or a ``(pieces, scores, kinds)`` triple, for encoding."""
    if isinstance(model, UnigramResult):
        pieces, scores, kinds = model.pieces, model.scores, model.kinds
        pretok = model.pretokenizer if pretokenizer is None else pretokenizer
        max_piece_length = model.max_piece_length
        normalization = model.normalization
    elif isinstance(model, tuple) and len(model) == 3:
        pieces, scores, kinds = list(model[0]), list(model[1]), list(model[2])
        pretok = "metaspace" if pretokenizer is None else pretokenizer
        max_piece_length = max(
            [len(p) for p, k in zip(pieces, kinds) if k == KIND_NORMAL], default=1
        )
        normalization = ()
    else:
        raise TypeError("model must be a UnigramResult or a (pieces, scores, kinds) tuple")
    if not len(pieces) == len(scores) == len(kinds):
        raise ValueError(
            f"pieces, scores and kinds differ in length ({len(pieces)}, {len(scores)}, "
            f"{len(kinds)})"
        )

    normal: dict[str, float] = {}
    normal_id: dict[str, int] = {}
    special_id: dict[str, int] = {}
    byte_ids: dict[str, int] = {}
    unk_ids = []
    for index, (piece, score, kind) in enumerate(zip(pieces, scores, kinds)):
        if not isinstance(piece, str) or piece == "":
            raise TypeError(f"pieces[{index}] must be a non-empty str, got {piece!r}")
        if kind == KIND_NORMAL:
            if piece in normal_id:
                raise ValueError(f"pieces[{index}] {piece!r} repeats pieces[{normal_id[piece]}]")
            if isinstance(score, bool) or not isinstance(score, (int, float)):
                raise TypeError(f"scores[{index}] must be a number, got {score!r}")
            normal[piece] = float(score)
            normal_id[piece] = index
        elif kind == KIND_CONTROL:
            special_id[piece] = index
        elif kind == KIND_BYTE:
            byte_ids[piece] = index
        elif kind == KIND_UNKNOWN:
            unk_ids.append(index)
        else:
            raise ValueError(f"kinds[{index}] is {kind!r}; use normal, unknown, control or byte")
    if len(unk_ids) != 1:
        raise ValueError(f"the vocabulary needs exactly one unknown piece, it has {len(unk_ids)}")
    if not normal:
        raise ValueError("the vocabulary has no normal piece")
    byte_id = None
    if byte_ids:
        missing = [byte_piece(b) for b in range(N_BYTES) if byte_piece(b) not in byte_ids]
        if missing:
            raise ValueError(f"byte fallback needs all 256 byte pieces; {missing[0]} is missing")
        byte_id = [byte_ids[byte_piece(b)] for b in range(N_BYTES)]
    return _Vocab(
        list(pieces),
        list(kinds),
        normal,
        normal_id,
        special_id,
        byte_id,
        unk_ids[0],
        _resolve_pretokenizer(pretok),
        max_piece_length,
        tuple(normalization),
    )


def _allowed(allowed_special: Union[str, Iterable[str]], vocab: _Vocab) -> list[str]:
    if allowed_special == "all":
        return list(vocab.special_id)
    allowed = check_specials(allowed_special, "allowed_special")
    for special in allowed:
        if special not in vocab.special_id:
            raise ValueError(
                f"allowed_special {special!r} is not a special token of this vocabulary"
            )
    return allowed


def encode(
    text: str,
    model: UnigramModel,
    *,
    pretokenizer: object = None,
    allowed_special: Union[str, Iterable[str]] = (),
) -> list[int]:
    """Token ids of ``text``: the Viterbi segmentation of each word.

    ``model`` is a :class:`UnigramResult` or a ``(pieces, scores, kinds)``
    triple (then ``pretokenizer`` defaults to ``"metaspace"``). An unknown
    character is the ``<unk>`` id, or with byte fallback its UTF-8 bytes as
    ``<0xXX>`` ids. Only the ``allowed_special`` specials (or ``"all"``) are
    cut out; other special text is ordinary text. The text between them is
    normalized as a result's ``normalization`` says (a triple's is not).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    utf8_bytes(text, "text")
    vocab = _vocab(model, pretokenizer)
    allowed = _allowed(allowed_special, vocab)
    unk_score = unk_score_of(vocab.normal)

    ids: list[int] = []
    for word, is_special in _pieces_of_text(text, allowed, vocab.pretokenizer, vocab.normalization):
        if is_special:
            ids.append(vocab.special_id[word])
            continue
        begin_nodes = lattice(word, vocab.normal, vocab.max_piece_length, unk_score)
        after_unk = False
        for node in _viterbi_nodes(begin_nodes):
            if not node.is_unk:
                ids.append(vocab.normal_id[node.piece])
            elif vocab.byte_id is not None:
                ids += [vocab.byte_id[b] for b in node.piece.encode("utf-8")]
            elif not after_unk:
                ids.append(vocab.unk_id)  # a run of unknown characters is one <unk>
            after_unk = node.is_unk
    return ids


def decode(
    ids: Iterable[int],
    model: UnigramModel,
    *,
    pretokenizer: object = None,
    errors: str = "replace",
) -> str:
    """The text of ``ids``.

    Byte pieces are joined back into UTF-8 (invalid sequences follow
    ``errors``; ``"replace"`` writes a U+FFFD for each byte of one, as
    sentencepiece does), ``<unk>`` is ``'⁇'``, a special token is its text. In
    metaspace mode a ``'▁'`` at the start and after each special token is
    dropped and every other ``'▁'`` becomes a space.
    """
    vocab = _vocab(model, pretokenizer)
    segments: list[tuple[str, bool]] = []  # (text, is_special)
    pending = bytearray()

    def flush() -> None:
        if pending:
            # "replace" as sentencepiece: one U+FFFD for each byte that starts no
            # valid character (Python writes one for a whole truncated sequence).
            if errors == "replace":
                text = decode_utf8_like_sentencepiece(bytes(pending))
            else:
                text = pending.decode("utf-8", errors=errors)
            segments.append((text, False))
            pending.clear()

    for position, value in enumerate(ids):
        try:
            index = operator.index(value)
        except TypeError:
            raise TypeError(
                f"id at position {position} must be an int, not {type(value).__name__}"
            ) from None
        if not 0 <= index < len(vocab.pieces):
            raise ValueError(
                f"id {index} at position {position} is not in the vocabulary "
                f"(ids are 0..{len(vocab.pieces) - 1})"
            )
        piece, kind = vocab.pieces[index], vocab.kinds[index]
        if kind == KIND_CONTROL:
            flush()
            segments.append((piece, True))
        elif kind == KIND_BYTE:
            pending.append(int(piece[3:5], 16))
        elif kind == KIND_UNKNOWN:
            pending += UNK_SURFACE.encode("utf-8")
        else:
            pending += piece.encode("utf-8")
    flush()

    if _is_metaspace(vocab.pretokenizer):
        # Each piece of text after the start or a special began with the dummy '▁'.
        segments = [
            (
                t[1:]
                if not special and (i == 0 or segments[i - 1][1]) and t.startswith(METASPACE)
                else t,
                special,
            )
            for i, (t, special) in enumerate(segments)
        ]
        segments = [
            (t if special else t.replace(METASPACE, " "), special) for t, special in segments
        ]
    return "".join(text for text, _ in segments)
