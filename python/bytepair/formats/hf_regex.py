"""Split patterns of ``tokenizer.json``: translating between two regex dialects.

HuggingFace ``tokenizers`` runs a ``Split`` pre-tokenizer's regex in
Oniguruma (Ruby syntax); bytepair runs its patterns in Rust's ``fancy-regex``,
the engine tiktoken uses. The two agree on a common core -- literals, the
Unicode general categories ``\\p{..}``, ``\\s``/``\\d``, bracket classes,
greedy, lazy and possessive ``* + ?``, atomic groups, look-ahead -- and
disagree elsewhere, found by running both engines (tests/test_hf_real_files.py
keeps each finding as a test):

* ``X{n,m}+`` is possessive in fancy-regex but means ``(?:X{n,m})+`` in
  Oniguruma, so tiktoken's ``\\p{N}{1,3}+`` keeps every digit of "12345" in
  one piece there. Written as ``(?>X{n,m})`` (an atomic group, the same in both).
* ``$`` and ``^`` are line anchors in Oniguruma and text anchors in
  fancy-regex: ours are written ``\\z`` / ``\\A``; Oniguruma's are read as
  ``(?m:$)`` / ``(?m:^)``.
* ``\\w`` is ``Alphabetic``, marks, decimal digits and connector punctuation
  in Oniguruma inside a bracket class, plus Latin-1's ``² ³ ¹ ¼ ½ ¾`` when it
  stands alone; fancy-regex adds the join controls (U+200C, U+200D), alone or
  in a class: each is written out as its class.
* ``X{n}?`` is ``(?:X{n})?`` (optional) in Oniguruma and a lazy ``X{n}`` in
  fancy-regex; ``\\xHH`` above ``7F`` is a raw UTF-8 byte in Oniguruma
  (written ``\\x{HH}`` there, refused when read).
* Oniguruma refuses a quantifier on an anchor or look-ahead, and on a
  ``(?:...)`` group or alternative that is one: such patterns are refused.
* Inside ``(?i)``, Oniguruma folds letter pairs to one character (``ss``
  matches ``ß``, ``st`` matches ``ﬅ``), fancy-regex does not.
* A pattern that can match the empty string cuts the text at every empty
  match in ``tokenizers``; bytepair ignores empty matches.
* ``\\<``, ``\\>`` are word boundaries in fancy-regex and literals in
  Oniguruma; POSIX brackets ``[[:alpha:]]`` are Unicode in Oniguruma and
  ASCII in fancy-regex; ``\\Z`` differs too.

So a pattern is parsed, checked to use only the common core (plus the
constructs above, which are rewritten), and written back for the other
engine. Anything else raises :class:`UnsupportedPattern` naming the construct
and its position: a file is translated exactly or not at all. The rewrites
are chosen so that ``from_tokenizers(to_tokenizers(p)) == p`` for the
patterns bytepair writes.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Optional, Union, cast

# Adjacent letters that a one-character case fold expands to (from Unicode's
# CaseFolding.txt: ß ẞ -> ss, ﬀ -> ff, ﬁ -> fi, ﬂ -> fl, ﬃ -> ffi, ﬄ -> ffl,
# ﬅ ﬆ -> st); tests check this equals what str.casefold gives.
FOLD_PAIRS = frozenset({"ss", "ff", "fi", "fl", "st"})

# Unicode property names whose character sets both engines were found to agree on
# (every code point; tests/test_hf_real_files.py): the general categories, and the
# two properties the translation of \w needs.
PROPERTIES = frozenset(
    "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po "
    "S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cn Alphabetic Join_Control".split()
)

# \w of each engine, spelled with properties both engines read alike (found by
# running both engines on every code point, tests/test_hf_real_files.py).
# Oniguruma's \w inside a bracket class, as in [\w-]:
ONIG_CLASS_WORD = (r"\p{Alphabetic}", r"\p{M}", r"\p{Nd}", r"\p{Pc}")
# Oniguruma's bare \w: below U+0100 it looks characters up in its Latin-1 table,
# which also counts the numbers ² ³ ¹ ¼ ½ ¾ (No) as word characters.
ONIG_WORD = ONIG_CLASS_WORD + (r"\xB2", r"\xB3", r"\xB9", r"\xBC-\xBE")
# fancy-regex's \w, bare and inside a class alike.
FANCY_WORD = (r"\p{Alphabetic}", r"\p{M}", r"\p{Nd}", r"\p{Pc}", r"\p{Join_Control}")

# Punctuation that both engines read as itself after a backslash (\< and \> are
# word boundaries in fancy-regex).
_ESCAPED_LITERALS = frozenset(string.punctuation + " ") - {"<", ">"}
_CONTROL_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}
_HEX = frozenset(string.hexdigits)
_GROUP_OPENERS = {
    "(?:": "group",
    "(?=": "lookahead",
    "(?!": "lookahead",
    "(?>": "atomic",
    "(?i:": "flags",
    "(?-i:": "flags",
}

ONIG = "tokenizers"  # Oniguruma, as HuggingFace tokenizers runs it
FANCY = "bytepair"  # fancy-regex, as bytepair (and tiktoken) run it


class UnsupportedPattern(ValueError):
    """A pattern uses a construct that the two engines read differently (or we cannot check)."""

    def __init__(self, pattern: str, position: int, construct: str, reason: str) -> None:
        self.pattern = pattern
        self.position = position
        self.construct = construct
        self.reason = reason
        super().__init__(f"{construct!r} at position {position} of the pattern: {reason}")


# ---------------------------------------------------------------------------
# Syntax tree. Every node keeps its source spelling, so an unchanged pattern is
# written back character for character.


@dataclass
class Lit:
    raw: str
    char: str
    ci: bool


@dataclass
class Dot:
    raw: str


@dataclass
class ClassEscape:
    """``\\s \\S \\d \\D \\w \\W \\p{..} \\P{..}``; ``name`` is the letter after the backslash."""

    raw: str
    name: str


@dataclass
class Range:
    raw: str
    low: str
    high: str
    low_raw: str  # the ends as written
    high_raw: str


BracketItem = Union[Lit, Range, ClassEscape]


@dataclass
class Bracket:
    negated: bool
    items: list[BracketItem]
    ci: bool


@dataclass
class Anchor:
    """kind: "text-start", "text-end" (\\A \\z, fancy ^ $) or "line-start", "line-end"."""

    raw: str
    kind: str


@dataclass
class Group:
    """kind: capture, group, flags, lookahead, atomic. ``opener`` is e.g. ``(?:``."""

    opener: str
    kind: str
    body: Alt


@dataclass
class Repeat:
    item: Node
    low: int
    high: Optional[int]  # None: no upper bound
    mode: str  # greedy, lazy, possessive
    raw: str  # the quantifier as written
    interval: bool  # written with braces


@dataclass
class Concat:
    items: list[Node] = field(default_factory=list)


@dataclass
class Alt:
    branches: list[Concat]
    flags: str = ""  # an inline "(?i)" / "(?-i)" at the start of the group


Node = Union[Lit, Dot, ClassEscape, Bracket, Anchor, Group, Repeat, Concat, Alt]


# ---------------------------------------------------------------------------
# Parsing


class _Parser:
    def __init__(self, pattern: str, dialect: str) -> None:
        self.pattern = pattern
        self.dialect = dialect
        self.i = 0

    def fail(self, start: int, reason: str, end: Optional[int] = None) -> UnsupportedPattern:
        construct = self.pattern[start : end if end is not None else self.i + 1] or "<end>"
        return UnsupportedPattern(self.pattern, start, construct, reason)

    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.pattern[j] if j < len(self.pattern) else ""

    def startswith(self, text: str) -> bool:
        return self.pattern.startswith(text, self.i)

    def parse(self) -> Alt:
        tree = self.alternation(ci=False)
        if self.i != len(self.pattern):
            raise self.fail(self.i, "unbalanced ')'")
        return tree

    def alternation(self, ci: bool) -> Alt:
        flags = ""
        for inline in ("(?i)", "(?-i)"):
            if self.startswith(inline):
                # Only at the start of a group: Oniguruma reads a(?i)b|c as a(?i:b|c).
                flags = inline
                ci = inline == "(?i)"
                self.i += len(inline)
                break
        branches = [self.concatenation(ci)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concatenation(ci))
        return Alt(branches, flags)

    def concatenation(self, ci: bool) -> Concat:
        items: list[Node] = []
        while self.i < len(self.pattern) and self.peek() not in "|)":
            start = self.i
            atom = self.atom(ci)
            items.append(self.quantified(atom, start))
        return Concat(items)

    # -- atoms ----------------------------------------------------------------

    def atom(self, ci: bool) -> Node:
        start = self.i
        c = self.peek()
        if c == "(":
            return self.group(ci)
        if c == "[":
            return self.bracket(ci)
        if c == ".":
            self.i += 1
            if ci:
                raise self.fail(start, "'.' inside a case-insensitive group is not supported")
            return Dot(".")
        if c in "^$":
            self.i += 1
            if self.dialect == ONIG:
                return Anchor(c, "line-start" if c == "^" else "line-end")
            return Anchor(c, "text-start" if c == "^" else "text-end")
        if c == "\\":
            return self.escape(ci, in_bracket=False)
        if c in "*+?":
            raise self.fail(start, "a quantifier with nothing to repeat")
        if c in "{}]":
            raise self.fail(start, f"write a literal {c!r} escaped, as '\\{c}'")
        self.i += 1
        return self.literal(c, c, ci, start)

    def literal(self, raw: str, char: str, ci: bool, start: int) -> Lit:
        if ci and not char.isascii():
            raise self.fail(
                start,
                "a non-ASCII character inside a case-insensitive group: the engines fold "
                "case differently beyond ASCII (e.g. (?i)ß)",
                self.i,
            )
        return Lit(raw, char, ci)

    def escape(self, ci: bool, in_bracket: bool) -> Union[Lit, ClassEscape, Anchor]:
        start = self.i
        e = self.peek(1)
        if e == "":
            raise self.fail(start, "a pattern cannot end with a backslash")
        self.i += 2
        if e in "sSdDwW":
            if ci:
                raise self.fail(
                    start, "class escapes inside a case-insensitive group are not supported"
                )
            return ClassEscape(self.pattern[start : self.i], e)
        if e in "pP":
            if self.peek() != "{":
                raise self.fail(start, "write Unicode properties with braces, as \\p{L}")
            close = self.pattern.find("}", self.i)
            if close < 0:
                raise self.fail(start, "unterminated \\p{...}", len(self.pattern))
            name = self.pattern[self.i + 1 : close]
            self.i = close + 1
            bare = name[1:] if name.startswith("^") else name
            if bare not in PROPERTIES:
                raise self.fail(
                    start,
                    f"Unicode property {bare!r} is not one of those checked to mean the same "
                    "characters in both engines (the general categories such as L, Lu, N, Nd, P, "
                    "S, Z, and Alphabetic, Join_Control)",
                )
            if ci:
                raise self.fail(
                    start, "class escapes inside a case-insensitive group are not supported"
                )
            return ClassEscape(self.pattern[start : self.i], e)
        if e in _CONTROL_ESCAPES:
            return self.literal(self.pattern[start : self.i], _CONTROL_ESCAPES[e], ci, start)
        if e == "x":
            if self.peek() == "{":
                close = self.pattern.find("}", self.i)
                digits = self.pattern[self.i + 1 : close] if close > 0 else ""
                if not digits or not set(digits) <= _HEX or len(digits) > 6:
                    raise self.fail(start, "expected \\x{hex digits}")
                self.i = close + 1
            else:
                digits = self.pattern[self.i : self.i + 2]
                if len(digits) != 2 or not set(digits) <= _HEX:
                    raise self.fail(start, "expected two hex digits after \\x (or \\x{...})")
                self.i += 2
                if self.dialect == ONIG and int(digits, 16) >= 0x80:
                    raise self.fail(
                        start,
                        "in Oniguruma (tokenizers) \\xHH above 7F is one byte of UTF-8, not a "
                        "character (write the character as \\x{HH})",
                        self.i,
                    )
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise self.fail(start, "not a Unicode scalar value", self.i)
            return self.literal(self.pattern[start : self.i], chr(code), ci, start)
        if e == "u":
            digits = self.pattern[self.i : self.i + 4]
            if len(digits) != 4 or not set(digits) <= _HEX:
                raise self.fail(start, "expected four hex digits after \\u")
            self.i += 4
            code = int(digits, 16)
            if 0xD800 <= code <= 0xDFFF:
                raise self.fail(start, "not a Unicode scalar value", self.i)
            return self.literal(self.pattern[start : self.i], chr(code), ci, start)
        if e in "Az" and not in_bracket:
            return Anchor(self.pattern[start : self.i], "text-start" if e == "A" else "text-end")
        if e in _ESCAPED_LITERALS:
            return self.literal(self.pattern[start : self.i], e, ci, start)
        raise self.fail(
            start,
            f"the escape \\{e} is not supported: it is missing from one engine or means "
            "different things in the two",
            self.i,
        )

    def bracket(self, ci: bool) -> Bracket:
        start = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        if self.peek() == "]":
            raise self.fail(self.i, "write a ']' at the start of a class escaped, as '\\]'")
        items: list[BracketItem] = []
        while True:
            c = self.peek()
            at = self.i
            if c == "":
                raise self.fail(start, "unterminated character class", len(self.pattern))
            if c == "]":
                self.i += 1
                return Bracket(negated, items, ci)
            if c == "[":
                raise self.fail(
                    at, "nested classes and POSIX brackets ([:alpha:]) are not supported"
                )
            if self.startswith("&&") or self.startswith("--") or self.startswith("~~"):
                raise self.fail(at, "class set operations are not supported", at + 2)
            if c == "\\":
                item: BracketItem = self.escape(ci, in_bracket=True)  # type: ignore[assignment]
            else:
                self.i += 1
                item = self.literal(c, c, ci, at)
            if isinstance(item, ClassEscape) and self.peek() == "-" and self.peek(1) != "]":
                raise self.fail(at, "a range cannot start at a class; write a literal '-' as '\\-'")
            if isinstance(item, Lit) and self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                high_at = self.i
                if self.peek() == "\\":
                    high = self.escape(ci, in_bracket=True)
                elif self.peek() == "[":
                    raise self.fail(high_at, "a range cannot end in a class")
                else:
                    self.i += 1
                    high = self.literal(self.pattern[high_at], self.pattern[high_at], ci, high_at)
                if not isinstance(high, Lit):
                    raise self.fail(at, "a range must end in a character")
                if high.char < item.char:
                    raise self.fail(at, "range out of order")
                item = Range(self.pattern[at : self.i], item.char, high.char, item.raw, high.raw)
            items.append(item)

    def group(self, ci: bool) -> Node:
        start = self.i
        if not self.startswith("(?"):
            opener, kind = "(", "capture"
        else:
            opener = next((o for o in _GROUP_OPENERS if self.startswith(o)), "")
            kind = _GROUP_OPENERS.get(opener, "")
        if not opener:
            if self.dialect == FANCY and (self.startswith("(?m:^)") or self.startswith("(?m:$)")):
                raw = self.pattern[self.i : self.i + 6]
                self.i += 6
                return Anchor(raw, "line-start" if raw[4] == "^" else "line-end")
            raise self.unknown_group(start)
        self.i += len(opener)
        if kind == "flags":
            ci = opener == "(?i:"
        body = self.alternation(ci)
        if self.peek() != ")":
            raise self.fail(start, "unterminated group", len(self.pattern))
        self.i += 1
        return Group(opener, kind, body)

    def unknown_group(self, start: int) -> UnsupportedPattern:
        end = self.i + 3
        if self.startswith("(?i)") or self.startswith("(?-i)"):
            reason = (
                "inline flags are supported only at the start of a group: Oniguruma "
                "reads a(?i)b|c as a(?i:b|c)"
            )
            end = self.pattern.index(")", self.i) + 1
        elif self.startswith("(?<=") or self.startswith("(?<!"):
            reason = "look-behind is not supported"
            end = self.i + 4
        else:
            reason = (
                "only (...), (?:...), (?i:...), (?=...), (?!...) and (?>...) groups are "
                "supported (named groups, comments and other flags mean different things "
                "in the two engines or are missing from one)"
            )
        return self.fail(start, reason, end)

    # -- quantifiers ------------------------------------------------------------

    def quantified(self, atom: Node, start: int) -> Node:
        c = self.peek()
        if c not in ("*", "+", "?", "{"):
            return atom
        if _invalid_repeat_target(atom):
            raise self.fail(
                start,
                "a quantifier on an anchor or look-ahead, or on a (?:...) group with one as an "
                "alternative, is not supported: tokenizers' engine (Oniguruma) refuses it",
            )
        q_start = self.i
        interval = c == "{"
        exact = False  # written {n}
        if interval:
            close = self.pattern.find("}", self.i)
            body = self.pattern[self.i + 1 : close] if close > 0 else ""
            parts = body.split(",")
            if not (
                len(parts) in (1, 2)
                and parts[0].isdigit()
                and parts[0].isascii()
                and (
                    len(parts) == 1 or parts[1] == "" or (parts[1].isdigit() and parts[1].isascii())
                )
            ):
                raise self.fail(
                    q_start,
                    "expected {n}, {n,} or {n,m} (write a literal '{' escaped)",
                    close + 1 if close > 0 else None,
                )
            low = int(parts[0])
            exact = len(parts) == 1
            high: Optional[int] = low if exact else (int(parts[1]) if parts[1] else None)
            if high is not None and high < low or low > 1000 or (high or 0) > 1000:
                raise self.fail(q_start, "repetition bounds out of order or above 1000", close + 1)
            self.i = close + 1
        else:
            self.i += 1
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        mode = "greedy"
        suffix = self.peek()
        repeat: Node
        if suffix == "?":
            self.i += 1
            if exact and self.dialect == ONIG:
                # Oniguruma (Ruby syntax): X{n}? is (?:X{n})?, not lazy.
                inner = Repeat(atom, low, high, "greedy", self.pattern[q_start : self.i - 1], True)
                repeat = Repeat(inner, 0, 1, "greedy", "?", False)
                return self._no_more_quantifiers(repeat)
            mode = "lazy"
        elif suffix == "+":
            self.i += 1
            if interval and self.dialect == ONIG:
                # Oniguruma (Ruby syntax): X{n,m}+ is (?:X{n,m})+, not possessive.
                inner = Repeat(atom, low, high, "greedy", self.pattern[q_start : self.i - 1], True)
                repeat = Repeat(inner, 1, None, "greedy", "+", False)
                return self._no_more_quantifiers(repeat)
            mode = "possessive"
        repeat = Repeat(atom, low, high, mode, self.pattern[q_start : self.i], interval)
        return self._no_more_quantifiers(repeat)

    def _no_more_quantifiers(self, node: Node) -> Node:
        if self.peek() in ("*", "+", "?", "{") and self.peek() != "":
            raise self.fail(
                self.i, "a quantifier on a quantifier is read differently by the engines"
            )
        return node


def _invalid_repeat_target(node: Node) -> bool:
    """Whether Oniguruma refuses a quantifier on ``node`` ("target of repeat operator
    is invalid"): an anchor or look-ahead, seen through ``(?:...)`` groups (which it
    drops while parsing) and through alternatives, but not through a sequence of two
    or more items or another kind of group (checked against tokenizers)."""
    if isinstance(node, Anchor):
        return True
    if isinstance(node, Group):
        if node.kind == "lookahead":
            return True
        return node.kind == "group" and not node.body.flags and _invalid_repeat_target(node.body)
    if isinstance(node, Alt):
        return any(_invalid_repeat_target(branch) for branch in node.branches)
    if isinstance(node, Concat):
        return len(node.items) == 1 and _invalid_repeat_target(node.items[0])
    return False


def parse(pattern: str, dialect: str) -> Alt:
    """The syntax tree of ``pattern`` read in ``dialect`` (ONIG or FANCY), checked."""
    tree = _Parser(pattern, dialect).parse()
    info = _analyse(tree, pattern)
    if info.nullable:
        raise UnsupportedPattern(
            pattern,
            0,
            pattern,
            "the pattern can match the empty string: tokenizers cuts the text at every empty "
            "match, bytepair ignores empty matches",
        )
    return tree


# ---------------------------------------------------------------------------
# Checks: empty matches and case-folded letter pairs


@dataclass
class _Info:
    nullable: bool
    first: frozenset  # (letter, case-insensitive) pairs a match may start with
    last: frozenset


_ALL_LETTERS = frozenset(string.ascii_lowercase)


def _letters(chars: frozenset, ci: bool) -> frozenset:
    return frozenset((c, ci) for c in chars)


def _bracket_letters(node: Bracket) -> frozenset:
    if node.negated or any(isinstance(item, ClassEscape) for item in node.items):
        return _ALL_LETTERS
    found = set()
    for item in node.items:
        if isinstance(item, Lit):
            found.add(item.char.lower())
        else:
            span = cast(Range, item)  # a ClassEscape returned above
            found.update(
                c
                for c in _ALL_LETTERS
                if span.low <= c <= span.high or span.low <= c.upper() <= span.high
            )
    return frozenset(found) & _ALL_LETTERS


def _check_pairs(last: frozenset, first: frozenset, pattern: str) -> None:
    for a, a_ci in last:
        for b, b_ci in first:
            if (a_ci or b_ci) and a + b in FOLD_PAIRS:
                raise UnsupportedPattern(
                    pattern,
                    0,
                    pattern,
                    f"the letters {a + b!r} can be adjacent in a case-insensitive part: Oniguruma "
                    f"(tokenizers) then also matches the one character that folds to {a + b!r} "
                    "(such as 'ß' for 'ss'), bytepair's engine does not",
                )


def _analyse(node: Node, pattern: str) -> _Info:
    empty: frozenset = frozenset()
    if isinstance(node, Lit):
        letters = _letters(frozenset(node.char.lower()) & _ALL_LETTERS, node.ci)
        return _Info(False, letters, letters)
    if isinstance(node, (Dot, ClassEscape)):
        letters = _letters(_ALL_LETTERS, False)
        return _Info(False, letters, letters)
    if isinstance(node, Bracket):
        letters = _letters(_bracket_letters(node), node.ci)
        return _Info(False, letters, letters)
    if isinstance(node, Anchor):
        return _Info(True, empty, empty)
    if isinstance(node, Group):
        info = _analyse(node.body, pattern)
        if node.kind == "lookahead":
            return _Info(True, empty, empty)
        return info
    if isinstance(node, Repeat):
        info = _analyse(node.item, pattern)
        if node.high is None or node.high >= 2:
            _check_pairs(info.last, info.first, pattern)
        return _Info(node.low == 0 or info.nullable, info.first, info.last)
    if isinstance(node, Alt):
        infos = [_analyse(branch, pattern) for branch in node.branches]
        return _Info(
            any(i.nullable for i in infos),
            frozenset().union(*(i.first for i in infos)),
            frozenset().union(*(i.last for i in infos)),
        )
    assert isinstance(node, Concat)
    infos = [_analyse(item, pattern) for item in node.items]
    for i, left in enumerate(infos):
        for right in infos[i + 1 :]:
            _check_pairs(left.last, right.first, pattern)
            if not right.nullable:
                break
    first: set = set()
    for info in infos:
        first |= info.first
        if not info.nullable:
            break
    last: set = set()
    for info in reversed(infos):
        last |= info.last
        if not info.nullable:
            break
    return _Info(all(i.nullable for i in infos), frozenset(first), frozenset(last))


# ---------------------------------------------------------------------------
# Writing a tree in the other dialect


def _word_items(target: str, in_class: bool) -> tuple[str, ...]:
    """The source's \\w, spelled for ``target``."""
    if target == FANCY:
        return ONIG_CLASS_WORD if in_class else ONIG_WORD
    return FANCY_WORD


def _own_class_word(target: str) -> tuple[str, ...]:
    """The *target's* \\w inside a class, as the source spells it: written back as \\w."""
    return FANCY_WORD if target == FANCY else ONIG_CLASS_WORD


def _char_raw(raw: str, char: str, target: str) -> str:
    if target == ONIG and raw.startswith("\\x") and not raw.startswith("\\x{") and char >= "\x80":
        return f"\\x{{{raw[2:]}}}"  # Oniguruma reads \xHH above 7F as a byte of UTF-8
    return raw


def _emit_items(items: list[BracketItem], target: str, pattern: str) -> list[str]:
    raws = [item.raw for item in items]
    own = _own_class_word(target)
    out: list[str] = []
    k = 0
    while k < len(items):
        item = items[k]
        if tuple(raws[k : k + len(own)]) == own:
            # Write the target's own \w back as \w, so that translating there and back is exact.
            out.append(r"\w")
            k += len(own)
            continue
        if isinstance(item, ClassEscape) and item.name == "w":
            out.extend(_word_items(target, in_class=True))
        elif isinstance(item, ClassEscape) and item.name == "W":
            raise UnsupportedPattern(
                pattern, 0, item.raw, "\\W inside a class is not supported (write [^...] instead)"
            )
        elif isinstance(item, Range):
            low = _char_raw(item.low_raw, item.low, target)
            out.append(f"{low}-{_char_raw(item.high_raw, item.high, target)}")
        elif isinstance(item, Lit):
            out.append(_char_raw(item.raw, item.char, target))
        else:
            out.append(item.raw)
        k += 1
    return out


def _emit(node: Node, target: str, pattern: str, quantified: bool = False) -> str:
    if isinstance(node, Lit):
        return _char_raw(node.raw, node.char, target)
    if isinstance(node, Dot):
        return node.raw
    if isinstance(node, ClassEscape):
        if node.name in "wW":
            inner = "".join(_word_items(target, in_class=False))
            return f"[{'^' if node.name == 'W' else ''}{inner}]"
        return node.raw
    if isinstance(node, Bracket):
        if target == ONIG and tuple(item.raw for item in node.items) == ONIG_WORD:
            return r"\W" if node.negated else r"\w"  # Oniguruma's bare \w, read back
        items = _emit_items(node.items, target, pattern)
        if target == FANCY and items == [r"\w"]:
            return r"\W" if node.negated else r"\w"
        return f"[{'^' if node.negated else ''}{''.join(items)}]"
    if isinstance(node, Anchor):
        if target == ONIG:
            return {"text-start": r"\A", "text-end": r"\z", "line-start": "^", "line-end": "$"}[
                node.kind
            ]
        return {"text-start": "^", "text-end": "$", "line-start": "(?m:^)", "line-end": "(?m:$)"}[
            node.kind
        ]
    if isinstance(node, Group):
        body = node.body
        if (
            target == FANCY
            and not quantified
            and node.kind == "atomic"
            and not body.flags
            and len(body.branches) == 1
            and len(body.branches[0].items) == 1
            and _is_plain_interval(body.branches[0].items[0])
        ):
            # (?>X{n,m}) is how a possessive X{n,m}+ is written for Oniguruma. A
            # quantified one stays an atomic group: X{n,m}+{2} would not parse.
            interval = cast(Repeat, body.branches[0].items[0])
            return _emit(interval.item, target, pattern, quantified=True) + interval.raw + "+"
        return node.opener + _emit(body, target, pattern) + ")"
    if isinstance(node, Repeat):
        item = _emit(node.item, target, pattern, quantified=True)
        if isinstance(node.item, Repeat):
            item = f"(?:{item})"  # Oniguruma's X{n,m}+ and X{n}? for fancy-regex
        if node.interval and node.mode == "possessive" and target == ONIG:
            return f"(?>{item}{node.raw[:-1]})"
        if node.interval and node.mode == "lazy" and target == ONIG and "," not in node.raw:
            # A lazy X{n} is X{n} (it has one length); Oniguruma reads X{n}? as (?:X{n})?.
            return item + node.raw[:-1]
        return item + node.raw
    if isinstance(node, Alt):
        return node.flags + "|".join(_emit(b, target, pattern) for b in node.branches)
    assert isinstance(node, Concat)
    return "".join(_emit(item, target, pattern) for item in node.items)


def _is_plain_interval(node: Node) -> bool:
    return isinstance(node, Repeat) and node.interval and node.mode == "greedy"


def from_tokenizers(pattern: str) -> str:
    """bytepair's spelling of a ``tokenizer.json`` Split regex (UnsupportedPattern if none)."""
    return _emit(parse(pattern, ONIG), FANCY, pattern)


def to_tokenizers(pattern: str) -> str:
    """The ``tokenizer.json`` (Oniguruma) spelling of a bytepair pattern (UnsupportedPattern if none)."""
    return _emit(parse(pattern, FANCY), ONIG, pattern)


__all__ = ["UnsupportedPattern", "from_tokenizers", "to_tokenizers"]
