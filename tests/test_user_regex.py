"""User pre-tokenizer regexes: the reference cuts text exactly as the core does.

A user pattern is fancy-regex syntax (the core's engine); the reference runs
it in Python's `regex` module through bytepair.user_regex. These
tests compare the two on patterns built from the constructs the engines read
differently (anchors, inline flags, case folding, POSIX and nested classes,
empty matches), and check that what the reference cannot reproduce is refused.
"""

from __future__ import annotations

import re
import unicodedata

import pytest
import regex
from hypothesis import assume, given
from hypothesis import strategies as st

import bytepair
from bytepair import user_regex
from bytepair.pretokenizers import Pretokenizer, resolve
from bytepair.reference import bpe as reference


def core_pieces(pattern: str, text: str) -> list[str]:
    tok = bytepair.train(["x"], 256, pretokenizer=Pretokenizer("regex", pattern), progress=False)
    return tok.pretokenize(text)


def reference_pieces(pattern: str, text: str) -> list[str]:
    return reference.pretokenize(text, Pretokenizer("regex", pattern))


def core_accepts(pattern: str) -> bool:
    try:
        core_pieces(pattern, "")
    except ValueError as err:
        assert "invalid pre-tokenizer regex" in str(err), str(err)
        return False
    return True


# ---------------------------------------------------------------------------
# The defects this module fixes, one by one


@pytest.mark.parametrize(
    ("pattern", "text", "pieces"),
    [
        # $ is the very end of the text in fancy-regex, not also before a final \n.
        (r"\w+$|\w|\s", "abc\n", ["a", "b", "c", "\n"]),
        (r"\w+$|\w|\s", "abc", ["abc"]),
        (r"$", "a\n", ["a\n"]),
        # \z is the very end; \Z also before any number of final \n.
        (r"\w+\z|\w|\n", "ab\n", ["a", "b", "\n"]),
        (r"\w+\Z|\w|\n", "ab\n", ["ab", "\n"]),
        (r"\w+\Z|\w|\n", "ab\n\n", ["ab", "\n", "\n"]),
        (r"\w+\Z|\w|\s", "ab\r\n", ["a", "b", "\r", "\n"]),
        (r"(?R)\w+\Z|\w|\s", "ab\r\n", ["ab", "\r", "\n"]),
        # (?m): line anchors on \n; with R on \r and \n but not inside \r\n.
        (r"(?m)\w+$|\w|\s", "ab\ncd", ["ab", "\n", "cd"]),
        (r"(?m)^\w|\w|\s", "ab\ncd", ["a", "b", "\n", "c", "d"]),
        (r"(?m)\w+$|\s|\w", "ab\r\ncd", ["a", "b", "\r", "\n", "cd"]),
        (r"(?Rm)\w+$|\s|\w", "ab\r\ncd", ["ab", "\r", "\n", "cd"]),
        (r"(?Rm)^\s|\s|\w+", "a\r\n\nb", ["a", "\r", "\n", "\n", "b"]),
        # Case folding: simple folding, without Python's Turkic pairs.
        (r"(?i)[a-z]+", "aİa", ["a", "İ", "a"]),
        (r"(?i)[a-z]+", "aıa", ["a", "ı", "a"]),
        (r"(?i)i+", "iIİı", ["iI", "İı"]),
        (r"(?i)[^i]+", "iIİı", ["iI", "İı"]),
        (r"(?i)\x{130}+", "iIİı", ["iI", "İ", "ı"]),
        (r"(?i)k+", "kK\u212a", ["kK\u212a"]),  # K, the Kelvin sign
        (r"(?i)\u212a+", "kK\u212a", ["kK\u212a"]),
        (r"(?i)[a-z]+", "\u212a\u017f", ["\u212a\u017f"]),  # Kelvin sign, long s
        (r"(?i)s+", "sSſ", ["sSſ"]),
        (r"(?i)σ+", "σςΣ", ["σςΣ"]),
        (r"(?i)ß+", "ßẞss", ["ßẞ", "ss"]),
        (r"(?i)\p{Lu}+", "aAı", ["aA", "ı"]),
        # POSIX classes are ASCII.
        (r"[[:alpha:]]+|.", "aé中1", ["a", "é", "中", "1"]),
        (r"[[:^alpha:]]+", "aé中1", ["a", "é中1"]),
        (r"(?i)[[:upper:]]+", "abcK\u212aſé", ["abcK\u212aſ", "é"]),
        # Nested classes and set operations (Python's regex needs VERSION1).
        (r"[[a-z]&&[^aeiou]]+", "hello", ["h", "e", "ll", "o"]),
        (r"[a-z--aeiou]+", "hello", ["h", "e", "ll", "o"]),
        (r"[a-c~~b-d]+", "abcd", ["a", "bc", "d"]),
        # Inline flags act to the end of their group, across alternatives.
        (r"a(?i)b|c", "aBC", ["aB", "C"]),
        (r"(a(?i)b)|b|B", "aBB", ["aB", "B"]),
        # fancy-regex's own escapes.
        (r"\h+", "af09g", ["af09", "g"]),
        (r"\N+", "ab\ncd", ["ab", "\n", "cd"]),
        (r"\R", "a\r\nb\n\rc", ["a", "\r\n", "b", "\n", "\r", "c"]),
        (r"\<\w|\w\>", "ab cd", ["a", "b", " ", "c", "d"]),
        (r"\b{start}\w", "ab cd", ["a", "b ", "c", "d"]),
        (r"\x{41}\u{42}", "ABC", ["AB", "C"]),
        # A brace that is not a repetition is a literal.
        (r"a{2}{3}", "aa{3}", ["aa{3}"]),
        (r"a{,2}", "aaa", ["aa", "a"]),
        # After an empty match, fancy-regex's next search starts one character on.
        (r"x*|a", "aa", ["aa"]),
        (r"(?:)|a", "aa", ["aa"]),
        # Repetitions that can match empty, but not before something longer.
        (r"(?:a*)*b", "aab", ["aab"]),
        (r"( ?\w*)*", "a bc", ["a bc"]),
        (r"(?:a|b*?)*?c", "abc", ["abc"]),
        (r"(?:a|b*?){1,2}", "ab", ["a", "b"]),
    ],
)
def test_constructs_the_engines_read_differently(pattern, text, pieces):
    assert core_pieces(pattern, text) == pieces
    assert reference_pieces(pattern, text) == pieces


def test_train_agrees_on_the_dollar_repro():
    pattern = re.compile(r"\w+$|\w|\s")
    ref = reference.train(["abc\n"], 258, pretokenizer=pattern)
    core = bytepair.train(["abc\n"], 258, pretokenizer=pattern, progress=False)
    assert ref.merges == core.merges == []
    ref = reference.train(["abc"], 258, pretokenizer=pattern)
    core = bytepair.train(["abc"], 258, pretokenizer=pattern, progress=False)
    assert ref.merges == core.merges == [(b"a", b"b"), (b"ab", b"c")]


def test_flags_of_compiled_patterns_still_become_inline_flags():
    spec = re.compile(r"[a-z]+$", re.IGNORECASE | re.MULTILINE)
    assert resolve(spec) == Pretokenizer("regex", "(?im)[a-z]+$")
    text = "Kelvin\nİi\n\u212a\n"
    assert reference.pretokenize(text, spec) == core_pieces("(?im)[a-z]+$", text)


# ---------------------------------------------------------------------------
# What the reference cannot reproduce is refused, naming the construct


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"\Ga", r"\G"),
        (r"(a)\g<1>", r"\g"),
        (r"(?<n>a)(?P>n)", "(?P>"),
        (r"(a)?(?(1)b|c)", "(?("),
        (r"(?~ab)", "(?~"),
        (r"a(*FAIL)|b", "(*FAIL)"),
        (r"(?i)(a)\1", r"\1"),
        (r"(a)\k<-1>", r"\k<-"),
        (r"(?<=a++)b", "++"),
        (r"(?<=(?>a))b", "(?>"),
        (r"(?<=(a)\1)b", r"\1"),
        (r"(?=a\K)a", r"\K"),
        (r"a{3,2}", "{3,2}"),
        (r"\p{Age=6.0}", r"\p"),
        (r"((a)\1)", r"\1"),
        # An empty way before a longer one, repeated: the regex crate and Python
        # end such a repetition differently.
        (r"(?:a|b*?)*", "*"),
        (r"(?:|a)+", "+"),
        (r"(?:a?|b){2,}", "{2,}"),
        (r"(?:a|b*?)*+", "*+"),
        (r"(?:\b|a){0,3}", "{0,3}"),
        (r"(?:b*?|a){0,3}?", "{0,3}?"),
    ],
)
def test_constructs_the_reference_cannot_reproduce_are_refused(pattern, construct):
    with pytest.raises(ValueError, match="not supported in user patterns") as info:
        resolve(
            regex.compile(pattern) if _python_compiles(pattern) else Pretokenizer("regex", pattern)
        )
    assert construct in str(info.value)
    with pytest.raises(ValueError, match="not supported in user patterns"):
        bytepair.train(["x"], 260, pretokenizer=Pretokenizer("regex", pattern), progress=False)
    with pytest.raises(ValueError, match="not supported in user patterns"):
        reference.pretokenize("x", Pretokenizer("regex", pattern))


def _python_compiles(pattern: str) -> bool:
    try:
        regex.compile(pattern)
    except regex.error:
        return False
    return True


def test_an_invalid_pattern_is_still_reported_by_the_core():
    with pytest.raises(ValueError, match="invalid pre-tokenizer regex"):
        bytepair.train(["x"], 300, pretokenizer=Pretokenizer("regex", "(unclosed"))
    with pytest.raises(ValueError, match="not valid fancy-regex syntax"):
        reference.pretokenize("x", Pretokenizer("regex", "(unclosed"))


def test_builtin_patterns_are_not_translated():
    # They run as published: the core's scanners are tested against them.
    for name in ("gpt2", "r50k", "cl100k", "o200k", "whitespace"):
        pattern = resolve(name).pattern
        assert reference._compiled(pattern).pattern == pattern


# ---------------------------------------------------------------------------
# Unicode classes: the names resolve to the same sets in both engines


def _stable_assigned_characters() -> str:
    """The characters assigned in Python's Unicode database that `regex` (whose
    Unicode may be newer than the core's) classifies as Python does: same
    general category (U+0295 became Lo in Unicode 17), and no case partner
    outside Python's database (U+0277 gained an uppercase in Unicode 17)."""
    assigned = "".join(
        chr(c) for c in range(1, 0x110000) if unicodedata.category(chr(c)) not in ("Cn", "Cs")
    )
    moved = {
        c
        for category in {unicodedata.category(c) for c in assigned}
        for c in regex.findall(rf"\p{{gc={category}}}", assigned)
        if unicodedata.category(c) != category
    }
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    cased = "".join(regex.findall(r"\p{Changes_When_Casemapped}", everything))
    for c in cased:
        if unicodedata.category(c) != "Cn":
            partners = regex.findall("(?i)" + regex.escape(c), cased)
            if any(unicodedata.category(d) == "Cn" for d in partners):
                moved.add(c)
    return "".join(c for c in assigned if c not in moved)


ASSIGNED = _stable_assigned_characters()
PROPERTY_NAMES = (
    "L Lu Ll Lt Lo M N Nd P S Z Zs C Cf Co Letter l punct digit Alpha Lower Upper Space Hex "
    "Dash Emoji Any Assigned ASCII Greek Latn IsLatin Han Common Cyrillic sc cf LC is-greek "
    "gc:Nd General_Category=Letter sc=Grek scx=Grek gc!=Lu alnum blank cntrl word graph print "
    "cs ^L ^alnum"
).split()


@pytest.mark.slow
@pytest.mark.parametrize("name", PROPERTY_NAMES)
@pytest.mark.parametrize("form", [r"\p{%s}", r"[^\p{%s}]", r"(?i)\p{%s}"])
def test_unicode_properties_match_the_same_characters(name, form):
    pattern = (form % name) + "+"
    assert core_pieces(pattern, ASSIGNED) == reference_pieces(pattern, ASSIGNED)


@pytest.mark.slow
@pytest.mark.parametrize("letter", "LMNPSZC")
def test_one_letter_properties(letter):
    for pattern in (rf"\p{letter}+", rf"\P{letter}+", rf"(?i)\p{letter.lower()}+"):
        assert core_pieces(pattern, ASSIGNED) == reference_pieces(pattern, ASSIGNED)


@pytest.mark.parametrize(
    "pattern",
    [r"\w+", r"\d+", r"\s+", r"\W+", r"[\w\s]+", r"\b\w", r"\B.", r"\<.", r".\>", r"\h+"],
)
def test_perl_classes_and_word_boundaries_on_every_character(pattern):
    text = ASSIGNED[:300_000]
    assert core_pieces(pattern, text) == reference_pieces(pattern, text)


@pytest.mark.slow
def test_case_folding_of_every_cased_character():
    # Each cased character as a case-insensitive literal and in a class, against
    # all cased characters: the crate's simple case folding, exactly.
    cased = "".join(c for c in ASSIGNED if c.lower() != c or c.upper() != c or c.casefold() != c)
    text = "\x00".join(cased)
    for c in cased:
        for pattern in (rf"(?i)\x{{{ord(c):x}}}", rf"(?i)[\x{{{ord(c):x}}}]"):
            assert core_pieces(pattern, text) == reference_pieces(pattern, text), c


# ---------------------------------------------------------------------------
# Differential test: patterns from a grammar of the constructs that differ

LETTERS = "abiIİıkK\u212aſsßẞσςΣé中1 \n\r.-"  # with the Kelvin sign
TEXT_ALPHABET = st.sampled_from(
    list("abiIİıkK\u212asSſßẞσςΣéEǅ中1 _-.\t") + ["\n", "\r\n", "\r", "\n\n", "ss", "  "]
)
texts = st.lists(TEXT_ALPHABET, max_size=14).map("".join)

CLASS_ITEMS = st.sampled_from(
    [
        "a-z",
        "A-Z",
        "a",
        "i",
        "I",
        "İ",
        "ı",
        "k",
        "s",
        "σ",
        "ß",
        r"\w",
        r"\d",
        r"\s",
        r"\W",
        r"\n",
        r"\p{L}",
        r"\p{Lu}",
        r"\P{Ll}",
        r"\p{Greek}",
        "[:alpha:]",
        "[:upper:]",
        "[:^lower:]",
        "[:space:]",
        r"\-",
        r"\h",
        "é",
        "中",
    ]
)


@st.composite
def classes(draw):
    items = draw(st.lists(CLASS_ITEMS, min_size=1, max_size=3))
    body = "".join(items)
    if draw(st.integers(0, 3)) == 0:
        other = "".join(draw(st.lists(CLASS_ITEMS, min_size=1, max_size=2)))
        op = draw(st.sampled_from(["&&", "--", "~~"]))
        body = f"{body}{op}[{other}]" if draw(st.booleans()) else f"[{body}]{op}{other}"
    negated = "^" if draw(st.booleans()) else ""
    return f"[{negated}{body}]"


LITERAL_ATOMS = st.sampled_from([*LETTERS.replace(".", "").replace("-", ""), r"\."]).map(
    lambda c: {"\n": r"\n", "\r": r"\r", " ": r"\ "}.get(c, c)
)
SPECIAL_ATOMS = st.sampled_from(
    [".", "$", "^", r"\A", r"\z", r"\Z", r"\b", r"\B", r"\<", r"\>", r"\w", r"\W", r"\d"]
    + [r"\s", r"\S", r"\p{L}", r"\p{Lu}", r"\P{L}", r"\p{Greek}", r"\N", r"\R", r"\h"]
    + [r"\x{130}", r"\u0131", r"\b{start}", r"\b{end-half}", r"\1", r"\2", r"\k<n>", r"\K"]
    # Space, a comment and a raw newline: literals, or dropped by the x flag.
    + [" ", "# c\n", "\n"]
)
ATOMS = st.one_of(LITERAL_ATOMS, LITERAL_ATOMS, SPECIAL_ATOMS, SPECIAL_ATOMS, classes())
QUANTIFIERS = st.sampled_from(
    ["", "", "", "*", "+", "?", "{2}", "{1,2}", "{,2}", "*?", "+?", "??", "++", "*+"]
)
FLAGS = st.sampled_from(["i", "m", "s", "R", "U", "-i", "im", "-m", "is", "x"])


@st.composite
def patterns(draw, depth=0):
    branches = []
    for _ in range(draw(st.integers(1, 3 if depth == 0 else 2))):
        parts = []
        if draw(st.integers(0, 15)) == 0:
            branches.append("")  # an empty alternative
            continue
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.integers(0, 9 if depth < 2 else 3))
            if kind <= 3:
                part = draw(ATOMS)
            elif kind == 4:
                parts.append(f"(?{draw(FLAGS)})")
                continue
            elif kind == 5:
                part = f"(?{draw(FLAGS)}:{draw(patterns(depth + 1))})"
            elif kind == 6:
                opener = draw(st.sampled_from(["(?:", "(", "(?>", "(?=", "(?!", "(?<n>", "(?P<n>"]))
                part = f"{opener}{draw(patterns(depth + 1))})"
                if opener in ("(?=", "(?!"):
                    parts.append(part)
                    continue
            elif kind == 7:
                look = draw(st.sampled_from(["(?<=", "(?<!"]))
                inner = draw(
                    st.sampled_from(
                        ["a", r"\s", r"\w", "^", r"\n|\A", "ab|c", "(?i)i", "[[:alpha:]]", "$"]
                        + ["(?=a)a", r"a(?!b)", r"\b", "(?:ab)?", "a|bc|", "(?m:^)", r"\w{2}"]
                    )
                )
                parts.append(f"{look}{inner})")
                continue
            elif kind == 8 and not parts:
                part = "(" + draw(patterns(depth + 1)) + r")\1"
            else:
                part = draw(ATOMS)
            parts.append(part + draw(QUANTIFIERS))
        branches.append("".join(parts))
    return "|".join(branches)


@pytest.mark.slow
@given(patterns(), st.lists(texts, min_size=1, max_size=3))
def test_reference_cuts_like_the_core(pattern, samples):
    try:
        user_regex.check(pattern)
    except user_regex.UnsupportedPattern:
        assume(False)
    assume(core_accepts(pattern))
    for text in samples:
        try:
            core = core_pieces(pattern, text)
        except ValueError as err:  # backtracking limit: not a matter of syntax
            assert "backtracks too much" in str(err) or "stack" in str(err)
            continue
        assert reference_pieces(pattern, text) == core, (pattern, text)


@pytest.mark.slow
@given(patterns(), texts)
def test_training_agrees_on_generated_patterns(pattern, text):
    try:
        user_regex.check(pattern)
    except user_regex.UnsupportedPattern:
        assume(False)
    assume(core_accepts(pattern))
    corpus = [text, text + text[:3], "ab" + text]
    core = bytepair.train(
        corpus, 256 + 8, pretokenizer=Pretokenizer("regex", pattern), progress=False
    )
    ref = reference.train(corpus, 256 + 8, pretokenizer=Pretokenizer("regex", pattern))
    assert ref.merges == core.merges
