"""User pre-tokenizer regexes: fancy-regex's meaning, run in Python's ``regex``.

A user pattern is written in the syntax of Rust's ``fancy-regex`` (0.20, with
``regex-syntax`` 0.8 for classes and the ``regex`` crate for the parts without
look-around or backreferences), which the core runs. Python's ``regex`` module
reads much of that syntax alike but not all of it, so Python code that runs a
user pattern (the reference, a ``tokenizer.json``'s regex ``Replace``) does not
hand it the user's text: :func:`translate` parses the pattern as fancy-regex
does and writes a ``regex`` pattern that matches the same strings, every
construct spelled out:

* ``$`` without the m flag is the very end of the text (Python's ``$`` also
  matches before a final ``\\n``): written ``\\Z``, Python's end of text, as
  is fancy-regex's ``\\z``. fancy-regex's ``\\Z`` is the end or before any
  number of final ``\\n`` (``\\r`` or ``\\n`` with the R flag): a look-ahead.
  ``^`` and ``$`` with the m flag (and R) become look-arounds on ``\\n``
  (``\\r``, never inside ``\\r\\n``); ``.`` excludes ``\\r`` too with R.
* Inline flags (``(?imsxRU-imsxRU)``, ``(?i:...)``) act from where they stand
  to the end of their group, across alternatives: each construct is written
  with the flags in force (anchors, ``.``, case, greed), and the space and
  ``#`` comments of the x flag are dropped where fancy-regex drops them (never
  inside a class).
* Case-insensitive matching is Unicode simple case folding, as the ``regex``
  crate does it; Python's ``regex`` also pairs ``i`` with ``İ`` and ``I`` with
  ``ı`` (Turkic). A case-insensitive letter becomes the class of the letters
  it matches.
* A class (``[..]``, ``\\p{..}``, a POSIX class) is computed as a set of code
  points with regex-syntax's rules and written out range by range: nesting,
  ``&&``, ``--``, ``~~`` (one precedence, left to right), POSIX classes
  (ASCII there, Unicode in Python), property names resolved as the crate
  resolves them (and fancy-regex's own ``\\p{alnum}``, ``\\p{graph}``, ... and
  its intersecting of a class's second negated POSIX-like property, as in
  ``[\\P{alnum}\\P{blank}]``), and under ``(?i)`` folding each class, property
  and POSIX class before negating it, and both sides of a set operation
  (``\\d \\s \\w`` are not folded). `regex` is only asked for the plain
  classes (``\\w``, one property): it gets negated unions wrong
  (``[^\\s\\S]`` matches every character).
* ``\\<``, ``\\>``, ``\\b{start}``, ``\\b{end}``, ``\\b{start-half}``,
  ``\\b{end-half}``, ``\\h``, ``\\N``, ``\\O``, ``\\R``, ``\\x{..}``, ``\\u{..}``,
  quantifiers (``{,n}``; a brace that is not a repetition is a literal;
  possessive, lazy, swapped by U) and backreferences are written out.

:class:`CompiledUserRegex` steps through the matches of a text as
fancy-regex's ``find_iter`` does (after an empty match the next search starts
one character on; an empty match where a match ended is skipped), which
differs from Python's ``finditer`` for patterns that can match empty.

Constructs whose meaning the reference cannot reproduce exactly are refused
with :class:`UnsupportedPattern` (a ``ValueError`` naming the construct and
its position), which :func:`bytepair.pretokenizers.resolve` raises for a user
pattern: ``\\G``, subroutine calls, conditionals, absent operators,
backtracking verbs, relative and case-insensitive backreferences,
backreferences, ``\\K``, atomic groups and possessive repetition inside a
look-behind, ``\\K`` inside a look-around, ``{n,m}`` with ``n > m``, Unicode
properties other than general categories, scripts, script extensions and
binary properties, and a greedy unbounded repetition of an expression that
can match empty before it can match more (see ``Info`` below).

What remains is the Unicode data: ``regex`` and the ``regex`` crate may ship
different Unicode versions, so a code point assigned, re-classified or given a
case partner in between (U+0295 became Lo in Unicode 17) can be read
differently, as docs/design/pretokenizers.md says of the builtin patterns.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Iterator
from typing import Optional, Union, cast

import regex


class UnsupportedPattern(ValueError):
    """A pattern uses a construct whose meaning the reference cannot reproduce exactly."""

    def __init__(self, pattern: str, position: int, construct: str, advice: str) -> None:
        self.pattern = pattern
        self.position = position
        self.construct = construct
        super().__init__(
            f"pre-tokenizer regex {pattern!r}: {construct!r} at position {position} is not "
            f"supported in user patterns: {advice}"
        )


class InvalidPattern(ValueError):
    """The pattern is not valid fancy-regex syntax (the core rejects it too)."""


# ---------------------------------------------------------------------------
# Unicode data the crate's rules need

# regex-syntax's property names (regex-syntax 0.8.12, Unicode 16), normalized as
# UAX44-LM3 says: binary properties by their aliases, and general categories.
_BOOL_PROPERTIES = (
    "ASCII_Hex_Digit:ahex,asciihexdigit Alphabetic:alpha,alphabetic Bidi_Control:bidic,"
    "bidicontrol Bidi_Mirrored:bidim,bidimirrored Case_Ignorable:caseignorable,ci Cased:cased "
    "Changes_When_Casefolded:changeswhencasefolded,cwcf Changes_When_Casemapped:"
    "changeswhencasemapped,cwcm Changes_When_Lowercased:changeswhenlowercased,cwl "
    "Changes_When_Titlecased:changeswhentitlecased,cwt Changes_When_Uppercased:"
    "changeswhenuppercased,cwu Dash:dash Default_Ignorable_Code_Point:defaultignorablecodepoint,"
    "di Deprecated:dep,deprecated Diacritic:dia,diacritic Emoji:emoji Emoji_Component:ecomp,"
    "emojicomponent Emoji_Modifier:emod,emojimodifier Emoji_Modifier_Base:ebase,"
    "emojimodifierbase Emoji_Presentation:emojipresentation,epres Extended_Pictographic:"
    "extendedpictographic,extpict Extender:ext,extender Grapheme_Base:graphemebase,grbase "
    "Grapheme_Extend:graphemeextend,grext Grapheme_Link:graphemelink,grlink Hex_Digit:hex,"
    "hexdigit Hyphen:hyphen IDS_Binary_Operator:idsb,idsbinaryoperator IDS_Trinary_Operator:"
    "idst,idstrinaryoperator IDS_Unary_Operator:idsu,idsunaryoperator ID_Compat_Math_Continue:"
    "idcompatmathcontinue ID_Compat_Math_Start:idcompatmathstart ID_Continue:idc,idcontinue "
    "ID_Start:ids,idstart Ideographic:ideo,ideographic Join_Control:joinc,joincontrol "
    "Logical_Order_Exception:loe,logicalorderexception Lowercase:lower,lowercase Math:math "
    "Modifier_Combining_Mark:mcm,modifiercombiningmark Noncharacter_Code_Point:nchar,"
    "noncharactercodepoint Other_Alphabetic:oalpha,otheralphabetic "
    "Other_Default_Ignorable_Code_Point:odi,otherdefaultignorablecodepoint "
    "Other_Grapheme_Extend:ogrext,othergraphemeextend Other_ID_Continue:oidc,otheridcontinue "
    "Other_ID_Start:oids,otheridstart Other_Lowercase:olower,otherlowercase Other_Math:omath,"
    "othermath Other_Uppercase:otheruppercase,oupper Pattern_Syntax:patsyn,patternsyntax "
    "Pattern_White_Space:patternwhitespace,patws Prepended_Concatenation_Mark:pcm,"
    "prependedconcatenationmark Quotation_Mark:qmark,quotationmark Radical:radical "
    "Regional_Indicator:regionalindicator,ri Sentence_Terminal:sentenceterminal,sterm "
    "Soft_Dotted:sd,softdotted Terminal_Punctuation:term,terminalpunctuation Unified_Ideograph:"
    "uideo,unifiedideograph Uppercase:upper,uppercase Variation_Selector:variationselector,vs "
    "White_Space:space,whitespace,wspace XID_Continue:xidc,xidcontinue XID_Start:xids,xidstart"
)
_GENERAL_CATEGORIES = (
    "Cased_Letter:casedletter,lc Close_Punctuation:closepunctuation,pe Connector_Punctuation:"
    "connectorpunctuation,pc Control:cc,cntrl,control Currency_Symbol:currencysymbol,sc "
    "Dash_Punctuation:dashpunctuation,pd Decimal_Number:decimalnumber,digit,nd Enclosing_Mark:"
    "enclosingmark,me Final_Punctuation:finalpunctuation,pf Format:cf,format "
    "Initial_Punctuation:initialpunctuation,pi Letter:l,letter Letter_Number:letternumber,nl "
    "Line_Separator:lineseparator,zl Lowercase_Letter:ll,lowercaseletter Mark:combiningmark,m,"
    "mark Math_Symbol:mathsymbol,sm Modifier_Letter:lm,modifierletter Modifier_Symbol:"
    "modifiersymbol,sk Nonspacing_Mark:mn,nonspacingmark Number:n,number Open_Punctuation:"
    "openpunctuation,ps Other:c,other Other_Letter:lo,otherletter Other_Number:no,othernumber "
    "Other_Punctuation:otherpunctuation,po Other_Symbol:othersymbol,so Paragraph_Separator:"
    "paragraphseparator,zp Private_Use:co,privateuse Punctuation:p,punct,punctuation Separator:"
    "separator,z Space_Separator:spaceseparator,zs Spacing_Mark:mc,spacingmark Surrogate:cs,"
    "surrogate Symbol:s,symbol Titlecase_Letter:lt,titlecaseletter Unassigned:cn,unassigned "
    "Uppercase_Letter:lu,uppercaseletter"
)


def _aliases(table: str) -> dict[str, str]:
    return {
        alias: canonical
        for entry in table.split()
        for canonical, names in [entry.split(":")]
        for alias in names.split(",")
    }


BOOL_PROPERTY_ALIASES = _aliases(_BOOL_PROPERTIES)
GENERAL_CATEGORY_ALIASES = _aliases(_GENERAL_CATEGORIES)
_PROPERTY_KINDS = {
    "gc": "gc",
    "generalcategory": "gc",
    "sc": "sc",
    "script": "sc",
    "scx": "scx",
    "scriptextensions": "scx",
}
# Turkic dotted and dotless I: Python's `regex` folds them with i / I, the
# crate's simple case folding (CaseFolding.txt statuses C and S) does not.
_TURKIC = frozenset("\u0130\u0131")


def normalize_property_name(name: str) -> str:
    """regex-syntax's loose matching of property names (UAX44-LM3)."""
    starts_with_is = len(name) >= 2 and name[:2].lower() == "is"
    if starts_with_is:
        name = name[2:]
    out = "".join(c.lower() for c in name if c.isascii() and c not in " _-")  # non-ASCII is dropped
    return "isc" if starts_with_is and out == "c" else out


def _py_char(c: str) -> str:
    """``c`` as a `regex` pattern, inside or outside a set."""
    if c.isascii() and c.isalnum():
        return c
    code = ord(c)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


# A set of characters: sorted, disjoint, non-adjacent (first, last) code points.
# Classes are computed as such sets and written out range by range: `regex`
# evaluates only the plain classes (\w, \p{..}), never a negation, nesting or
# set operation (it has bugs there: [^\s\S] matches every character).
Ranges = tuple[tuple[int, int], ...]
_LAST = 0x10FFFF


@functools.cache
def _everything() -> str:
    return "".join(map(chr, itertools.chain(range(0xD800), range(0xE000, _LAST + 1))))


def _normalized(ranges: list[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if out and first <= out[-1][1] + 1:
            if last > out[-1][1]:
                out[-1] = (out[-1][0], last)
        else:
            out.append((first, last))
    return tuple(out)


def _complement(ranges: Ranges) -> Ranges:
    out, start = [], 0
    for first, last in ranges:
        if first > start:
            out.append((start, first - 1))
        start = last + 1
    if start <= _LAST:
        out.append((start, _LAST))
    return tuple(out)


def _union(a: Ranges, b: Ranges) -> Ranges:
    return _normalized([*a, *b])


def _intersection(a: Ranges, b: Ranges) -> Ranges:
    return _complement(_union(_complement(a), _complement(b)))


def _set_operation(op: str, a: Ranges, b: Ranges) -> Ranges:
    if op == "&&":
        return _intersection(a, b)
    if op == "--":
        return _intersection(a, _complement(b))
    return _union(_intersection(a, _complement(b)), _intersection(b, _complement(a)))  # ~~


def _contains(ranges: Ranges, code: int) -> bool:
    at = bisect.bisect_right(ranges, (code, _LAST + 1)) - 1
    return at >= 0 and ranges[at][0] <= code <= ranges[at][1]


@functools.lru_cache(maxsize=512)
def _ranges_of(py_class: str) -> Ranges:
    """The characters a one-character `regex` class (``\\w``, ``[\\p{..}]``) matches."""
    text = _everything()
    return _normalized(
        [
            (ord(text[m.start()]), ord(text[m.end() - 1]))
            for m in regex.finditer(f"(?:{py_class})+", text)
        ]
    )


def _ranges_to_python(ranges: Ranges) -> str:
    if not ranges:
        return "(?!)"
    return (
        "["
        + "".join(
            _py_char(chr(a)) if a == b else f"{_py_char(chr(a))}-{_py_char(chr(b))}"
            for a, b in ranges
        )
        + "]"
    )


@functools.cache
def _case_orbits() -> tuple[str, dict[str, str]]:
    """The characters that simple case folding relates to others, as one string,
    and for each its orbit (itself included): the crate's ``(?i)`` classes.

    The folding is `regex`'s (its Turkic pairs left out), from its Unicode
    version, which may be newer than the crate's: a letter of a newer version
    can give an older one a case partner the core does not know yet (U+0277
    gained an uppercase in Unicode 17), as with every Unicode table."""
    cased = "".join(regex.findall(r"\p{Changes_When_Casemapped}", _everything()))
    orbits: dict[str, str] = {}
    for c in cased:
        if c in orbits:
            continue
        if c in _TURKIC:
            orbits[c] = c
            continue
        found = regex.findall(_py_char(c), cased, flags=regex.IGNORECASE | regex.V0)
        orbit = "".join(sorted(set(found) - _TURKIC | {c}))
        for member in orbit:
            orbits[member] = orbit
    return cased, orbits


def _fold(ranges: Ranges) -> Ranges:
    """The closure of a set under simple case folding."""
    cased, orbits = _case_orbits()
    extra = [(ord(d), ord(d)) for c in cased if _contains(ranges, ord(c)) for d in orbits.get(c, c)]
    return _union(ranges, _normalized(extra)) if extra else ranges


def _orbit(c: str) -> str:
    """A character under ``(?i)``: the set of the characters it matches."""
    orbit = _case_orbits()[1].get(c, c) if not c.isascii() or c.isalpha() else c
    if len(orbit) == 1:
        return _py_char(c)
    return "[" + "".join(_py_char(d) for d in orbit) + "]"


# ---------------------------------------------------------------------------
# Character classes: regex-syntax's grammar and meaning, for the class text
# fancy-regex hands it (fancy-regex reads the escapes itself and writes each
# back: a literal escaped, a class such as \d or \p{..} as regex-syntax text).

_POSIX: dict[str, Ranges] = {
    name: _normalized([(ord(spec[i]), ord(spec[i + 2])) for i in range(0, len(spec), 3)])
    for name, spec in {
        "alnum": "0-9A-Za-z",
        "alpha": "A-Za-z",
        "ascii": "\x00-\x7f",
        "blank": "\t-\t - ",
        "cntrl": "\x00-\x1f\x7f-\x7f",
        "digit": "0-9",
        "graph": "!-~",
        "lower": "a-z",
        "print": " -~",
        "punct": "!-/:-@[-`{-~",
        "space": "\t-\r - ",
        "upper": "A-Z",
        "word": "0-9A-Z_-_a-z",
        "xdigit": "0-9A-Fa-f",
    }.items()
}
_META = frozenset("\\.+*?()|[]{}^$#&-~")

# A set: ("lit", c) ("range", a, b) ("perl", letter) ("posix", name, negated)
# ("prop", python_set) ("bracket", negated, body); a body is ("union", [items])
# or ("op", "&&" | "--" | "~~", lhs_body, rhs_body).
SetNode = tuple


class _ClassParser:
    """regex-syntax's parser of a class, on fancy-regex's rewritten class text."""

    def __init__(self, text: str, fail) -> None:
        self.s = text
        self.i = 0
        self.fail = fail  # fail(reason) -> exception

    def char(self) -> str:
        if self.i >= len(self.s):
            raise self.fail("unclosed character class")
        return self.s[self.i]

    def peek(self) -> Optional[str]:
        return self.s[self.i + 1] if self.i + 1 < len(self.s) else None

    def parse_delegate(self) -> SetNode:
        """A whole delegated expression: a bracketed class or one escape."""
        if self.s.startswith("["):
            node = self.parse_bracket()
        else:
            node = self.parse_escape()
            if node[0] == "lit":
                raise self.fail("not a class")
        if self.i != len(self.s):
            raise self.fail("unexpected text after a class")
        return node

    def parse_bracket(self) -> SetNode:
        assert self.char() == "["
        self.i += 1
        negated = self.char() == "^"
        if negated:
            self.i += 1
        items: list[SetNode] = []
        while self.char() == "-":
            items.append(("lit", "-"))
            self.i += 1
        if not items and self.char() == "]":
            items.append(("lit", "]"))
            self.i += 1
        pending: Optional[tuple[str, SetNode]] = None  # (op, lhs)
        while True:
            c = self.char()
            if c == "[":
                posix = self.maybe_posix()
                items.append(posix if posix is not None else self.parse_bracket())
            elif c == "]":
                self.i += 1
                body: SetNode = ("union", items)
                if pending is not None:
                    body = ("op", pending[0], pending[1], body)
                return ("bracket", negated, body)
            elif c in "&-~" and self.peek() == c:
                self.i += 2
                body = ("union", items)
                if pending is not None:
                    body = ("op", pending[0], pending[1], body)
                pending, items = (c + c, body), []
            else:
                items.append(self.parse_range())

    def maybe_posix(self) -> Optional[SetNode]:
        s, start = self.s, self.i
        if not s.startswith("[:", start):
            return None
        j = start + 2
        negated = s.startswith("^", j)
        if negated:
            j += 1
        end = s.find(":", j)
        if end < 0 or not s.startswith(":]", end):
            return None
        name = s[j:end]
        if name not in _POSIX:
            return None
        self.i = end + 2
        return ("posix", name, negated)

    def parse_range(self) -> SetNode:
        first = self.parse_item()
        if self.char() != "-" or self.peek() in ("]", "-"):
            return first
        self.i += 1
        self.char()  # an unclosed class is an error here too
        last = self.parse_item()
        if first[0] != "lit" or last[0] != "lit":
            raise self.fail("a range needs a character at both ends")
        if first[1] > last[1]:
            raise self.fail("a range must not be reversed")
        return ("range", first[1], last[1])

    def parse_item(self) -> SetNode:
        if self.char() == "\\":
            return self.parse_escape()
        c = self.char()
        self.i += 1
        return ("lit", c)

    def parse_escape(self) -> SetNode:
        assert self.char() == "\\"
        self.i += 1
        c = self.char()
        self.i += 1
        if c in _META:
            return ("lit", c)
        if c in "tnrfva":
            return ("lit", {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}[c])
        if c == "x":
            digits = self.s[self.i : self.i + 2]
            self.i += 2
            return ("lit", chr(int(digits, 16)))
        if c in "dswDSW":
            return ("perl", c)
        if c in "pP":
            return self.parse_property(negated=c == "P")
        raise self.fail(f"unexpected escape \\{c} in a class")

    def parse_property(self, negated: bool) -> SetNode:
        c = self.char()
        self.i += 1
        if c != "{":
            if c == "\\":
                raise self.fail("invalid Unicode class")
            return ("prop", _property(self.fail, one_letter=c), negated)
        end = self.s.find("}", self.i)
        if end < 0:
            raise self.fail("unclosed Unicode class")
        name = self.s[self.i : end]
        self.i = end + 1
        for op in ("!=", ":", "="):
            if op in name:
                key, value = name.split(op, 1)
                return ("prop", _property(self.fail, key=key, value=value), negated ^ (op == "!="))
        return ("prop", _property(self.fail, name=name), negated)


def _property(
    fail,
    one_letter: Optional[str] = None,
    name: Optional[str] = None,
    key: Optional[str] = None,
    value: Optional[str] = None,
) -> str:
    """A ``\\p{..}`` as regex-syntax resolves it, as a one-character `regex` class."""
    kind: Optional[str]
    if key is None:
        norm = normalize_property_name(one_letter if one_letter is not None else name or "")
        if norm not in ("cf", "sc", "lc") and norm in BOOL_PROPERTY_ALIASES:
            return f"[\\p{{{BOOL_PROPERTY_ALIASES[norm]}}}]"
        if norm in ("any", "assigned", "ascii"):
            return {"any": "(?s:.)", "assigned": "[\\P{Cn}]", "ascii": "[\\x00-\\x7f]"}[norm]
        if norm in GENERAL_CATEGORY_ALIASES:
            return f"[\\p{{gc={GENERAL_CATEGORY_ALIASES[norm]}}}]"
        kind, value_norm = "sc", norm
    else:
        kind = _PROPERTY_KINDS.get(normalize_property_name(key))
        value_norm = normalize_property_name(value or "")
        if kind is None:
            raise fail(
                f"unsupported Unicode property {key!r}",
                unsupported="use a general category, a script (sc=), script extensions "
                "(scx=) or a binary property",
            )
        if kind == "gc":
            if value_norm in ("any", "assigned", "ascii"):
                return _property(fail, name=value_norm)
            if value_norm not in GENERAL_CATEGORY_ALIASES:
                raise fail(f"unknown general category {value!r}")
            return f"[\\p{{gc={GENERAL_CATEGORY_ALIASES[value_norm]}}}]"
    spelled = f"[\\p{{{kind}={value_norm}}}]"
    try:
        regex.compile(spelled)
    except regex.error:
        raise fail(f"unknown Unicode property or script {value_norm!r}") from None
    return spelled


def _set_ranges(node: SetNode, casei: bool) -> Ranges:
    """The characters a class node matches, with regex-syntax's meaning: a
    class, property or POSIX class under (?i) is folded, then negated; both
    sides of a set operation are folded; \\d \\s \\w are never folded."""
    kind = node[0]
    if kind == "lit":
        return ((ord(node[1]), ord(node[1])),)
    if kind == "range":
        return ((ord(node[1]), ord(node[2])),)
    if kind == "perl":
        letter = node[1]
        plain = _ranges_of("\\" + letter.lower())
        return _complement(plain) if letter.isupper() else plain
    if kind == "posix":
        ranges, negated = _POSIX[node[1]], node[2]
    elif kind == "prop":
        ranges, negated = _ranges_of(node[1]), node[2]
    else:  # bracket
        ranges, negated = _body_ranges(node[2], casei), node[1]
    if casei:
        ranges = _fold(ranges)
    return _complement(ranges) if negated else ranges


def _body_ranges(body: SetNode, casei: bool) -> Ranges:
    if body[0] == "union":
        out: Ranges = ()
        for item in body[1]:
            out = _union(out, _set_ranges(item, casei))
        return out
    _, op, lhs, rhs = body
    left, right = _body_ranges(lhs, casei), _body_ranges(rhs, casei)
    if casei:
        left, right = _fold(left), _fold(right)
    return _set_operation(op, left, right)


# ---------------------------------------------------------------------------
# fancy-regex's parser, writing a `regex` pattern

_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPED_CONTROLS = {
    "a": "\x07",
    "b": "\x08",
    "f": "\x0c",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\x0b",
    "e": "\x1b",
    " ": " ",
}
_MAX_DEPTH = 64
# What an expression is, for fancy-regex's "may it be repeated" check.
EMPTY, LOOK, KEEP, NODE = "empty", "look", "keep", "node"
# How an expression can match, in the order a backtracking search tries its
# ways: (it can match empty, it can match non-empty, an empty way comes before
# a non-empty one). Greedy repetitions need it: fancy-regex hands one without
# look-around, backreferences or atomic parts to the regex crate, whose
# automaton goes on after an iteration that matched empty (a loop drops that
# path, a counted repetition starts its next copy), trying the next way of the
# repeated part, where Python's `regex` (and fancy-regex's own backtracking)
# leave the loop. The two agree unless an empty way comes before a non-empty
# one, in a greedy loop or in a counted repetition with two or more optional
# iterations (where an empty one uses up a copy): `(?:a|b*?)*` matches all of
# "ab" in the core, "a" in Python. (Two empty ways at the same place lead to
# the same outcome, so their order does not matter.)
Info = tuple[bool, bool, bool]
CHAR_INFO: Info = (False, True, False)
ZERO_INFO: Info = (True, False, False)
Kind = tuple[str, Info]
EMPTY_KIND: Kind = (EMPTY, ZERO_INFO)
CHAR_KIND: Kind = (NODE, CHAR_INFO)
ASSERT_KIND: Kind = (NODE, ZERO_INFO)
LOOK_KIND: Kind = (LOOK, ZERO_INFO)
KEEP_KIND: Kind = (KEEP, ZERO_INFO)
BACKREF_KIND: Kind = (NODE, (True, True, False))  # one way, empty or not


def _alternation_info(infos: list[Info]) -> Info:
    empty_first = any(a[0] and b[1] for i, a in enumerate(infos) for b in infos[i + 1 :])
    return (
        any(x[0] for x in infos),
        any(x[1] for x in infos),
        empty_first or any(x[2] for x in infos),
    )


def _concat_info(a: Info, b: Info) -> Info:
    # The ways of AB: each way of A, in order, followed by each way of B.
    nullable = a[0] and b[0]
    return (nullable, a[1] or b[1], nullable and (a[2] or b[2]))


def _repeat_info(x: Info, low: int, high: Optional[int], greedy: bool) -> Info:
    nullable = low == 0 or x[0]
    nonempty = x[1] and high != 0
    # Greedy: more iterations first, the empty ways of each after its others.
    # Lazy: fewer iterations first, so an empty way first when there can be none.
    empty_first = x[2] if greedy else nullable and nonempty
    return (nullable, nonempty, empty_first)


_WORD_START = "(?<!\\w)(?=\\w)"
_WORD_END = "(?<=\\w)(?!\\w)"


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.n = len(pattern)
        self.flags: frozenset[str] = frozenset()
        self.groups = 0
        self.group_names: dict[str, list[int]] = {}
        self.name_positions: dict[str, int] = {}
        # (position, slot, target, the groups open there)
        self.backrefs: list[tuple[int, int, Union[int, str], frozenset[int]]] = []
        self.open_groups: list[int] = []
        self.lookbehind = 0
        self.lookaround = 0
        self.lookbehind_groups: set[int] = set()  # capture groups inside a look-behind

    # -- errors

    def invalid(self, position: int, reason: str) -> InvalidPattern:
        return InvalidPattern(
            f"pre-tokenizer regex {self.p!r} is not valid fancy-regex syntax at position "
            f"{position}: {reason}"
        )

    def refuse(self, start: int, end: int, advice: str) -> UnsupportedPattern:
        return UnsupportedPattern(self.p, start, self.p[start:end] or "<end>", advice)

    # -- scanning

    def ows(self, i: int) -> int:
        """fancy-regex's optional_whitespace: x-mode space and comments, (?#...)."""
        p, n = self.p, self.n
        while i < n:
            c = p[i]
            if c == "#" and "x" in self.flags:
                newline = p.find("\n", i)
                i = n if newline < 0 else newline + 1
            elif c in " \r\n\t" and "x" in self.flags:
                i += 1
            elif p.startswith("(?#", i):
                i += 3
                while True:
                    if i >= n:
                        raise self.invalid(i, "unclosed comment")
                    if p[i] == ")":
                        i += 1
                        break
                    i += 2 if p[i] == "\\" else 1
            else:
                return i
        return i

    def translate(self) -> str:
        i, out, _ = self.parse_re(0, 0)
        if i < self.n:
            raise self.invalid(i, "unbalanced parenthesis")
        for position, slot, target, open_groups in self.backrefs:
            if isinstance(target, str):
                numbers = self.group_names.get(target)
                if numbers is None:
                    raise self.invalid(position, f"no group named {target!r}")
                if self.name_positions[target] >= position:
                    raise self.invalid(position, f"group {target!r} is defined after its use")
                number = numbers[-1]
            else:
                number = target
                if number == 0 or number > self.groups:
                    raise self.invalid(position, f"no group {number}")
            if number in self.lookbehind_groups:
                raise self.refuse(
                    position, position + 2, "a backreference to a group inside a look-behind"
                )
            if number in open_groups:
                raise self.refuse(
                    position, position + 2, "a backreference inside the group it refers to"
                )
            out = out.replace(f"\ue000{slot}\ue001", f"(?:\\{number})")
        return out

    # -- structure

    def parse_re(self, i: int, depth: int) -> tuple[int, str, Kind]:
        i, out, kind = self.parse_branch(i, depth)
        i = self.ows(i)
        if i < self.n and self.p[i] == "|":
            branches, infos = [out], [kind[1]]
            while i < self.n and self.p[i] == "|":
                i, out, kind = self.parse_branch(i + 1, depth)
                branches.append(out)
                infos.append(kind[1])
                i = self.ows(i)
            return i, "|".join(branches), (NODE, _alternation_info(infos))
        return i, out, kind

    def parse_branch(self, i: int, depth: int) -> tuple[int, str, Kind]:
        items: list[tuple[str, Kind]] = []
        while i < self.n:
            after, out, kind = self.parse_piece(i, depth)
            if after == i:
                break
            if kind[0] != EMPTY:
                items.append((out, kind))
            i = after
        if not items:
            return i, "", EMPTY_KIND
        if len(items) == 1:
            return i, items[0][0], items[0][1]
        info = items[0][1][1]
        for _, kind in items[1:]:
            info = _concat_info(info, kind[1])
        return i, "".join(out for out, _ in items), (NODE, info)

    def parse_piece(self, i: int, depth: int) -> tuple[int, str, Kind]:
        i, out, kind = self.parse_atom(i, depth)
        i = self.ows(i)
        if i >= self.n:
            return i, out, kind
        c = self.p[i]
        if c == "?":
            low, high = 0, 1
        elif c == "*":
            low, high = 0, None
        elif c == "+":
            low, high = 1, None
        elif c == "{":
            repeat = self.parse_repeat(i)
            if repeat is None:
                return i, out, kind  # not a repetition: the brace is a literal
            after, low, high = repeat
            if high is not None and high < low:
                raise self.refuse(i, after, "a repetition {n,m} needs n <= m")
            i = after - 1
        else:
            return i, out, kind
        if kind[0] in (EMPTY, LOOK, KEEP):
            raise self.invalid(i, "the target of this repetition cannot be repeated")
        quantifier_start = i
        i = self.ows(i + 1)
        greedy = True
        if i < self.n and self.p[i] == "?":
            greedy = False
            i += 1
        if "U" in self.flags:
            greedy = not greedy
        possessive = i < self.n and self.p[i] == "+"
        if possessive:
            i += 1
            if self.lookbehind:
                raise self.refuse(quantifier_start, i, "possessive repetition inside a look-behind")
        optional = None if high is None else high - low  # optional iterations
        if kind[1][2] and (optional is None and greedy or optional is not None and optional >= 2):
            raise self.refuse(
                quantifier_start,
                i,
                "a repetition of an expression that can match empty before it can match "
                "more, as (?:a|b*?)* or (?:|a){0,3}: the regex crate goes on with the "
                "longer way where Python's regex ends the loop; reorder the alternatives or "
                "make the repeated part non-empty, as (?:a|b+?)*",
            )
        count = {(0, 1): "?", (0, None): "*", (1, None): "+"}.get((low, high))
        if count is None:
            count = f"{{{low}}}" if low == high else f"{{{low},{'' if high is None else high}}}"
        out = f"(?:{out}){count}{'' if greedy else '?'}"
        info = _repeat_info(kind[1], low, high, greedy)
        if possessive:
            out = f"(?>{out})"
            info = (info[0], info[1], False)
        return i, out, (NODE, info)

    def parse_repeat(self, i: int) -> Optional[tuple[int, int, Optional[int]]]:
        """``{n}``, ``{n,}``, ``{n,m}``, ``{,m}`` (end, n, m), or None: a literal brace."""
        p, n = self.p, self.n
        try:
            j = self.ows(i + 1)
            if j == n:
                return None
            if p[j] == ",":
                low, end = 0, j
            else:
                end = j
                while end < n and p[end] in "0123456789":
                    end += 1
                if end == j:
                    return None
                low = int(p[j:end])
            j = self.ows(end)
            if j == n:
                return None
            if p[j] == "}":
                high: Optional[int] = low
                end = j
            elif p[j] == ",":
                end = self.ows(j + 1)
                digits_end = end
                while digits_end < n and p[digits_end] in "0123456789":
                    digits_end += 1
                high = int(p[end:digits_end]) if digits_end > end else None
                end = digits_end
            else:
                return None
            j = self.ows(end) if p[j] != "}" else j
            if j == n or p[j] != "}":
                return None
        except InvalidPattern:
            return None
        if low >= 1 << 64 or (high is not None and high >= 1 << 64):
            return None
        return j + 1, low, high

    def parse_atom(self, i: int, depth: int) -> tuple[int, str, Kind]:
        i = self.ows(i)
        if i == self.n:
            return i, "", EMPTY_KIND
        c = self.p[i]
        flags = self.flags
        if c == ".":
            if "s" in flags:
                return i + 1, "(?s:.)", CHAR_KIND
            return i + 1, "[^\\n\\r]" if "R" in flags else "[^\\n]", CHAR_KIND
        if c == "^":
            if "m" not in flags:
                return i + 1, "\\A", ASSERT_KIND
            if "R" in flags:
                return i + 1, "(?<![^\\n\\r])(?!(?<=\\r)\\n)", ASSERT_KIND
            return i + 1, "(?<![^\\n])", ASSERT_KIND
        if c == "$":
            if "m" not in flags:
                return i + 1, "\\Z", ASSERT_KIND
            if "R" in flags:
                return i + 1, "(?![^\\n\\r])(?!(?<=\\r)\\n)", ASSERT_KIND
            return i + 1, "(?![^\\n])", ASSERT_KIND
        if c == "(":
            return self.parse_group(i, depth)
        if c == "\\":
            return self.parse_escape(i)
        if c in "+*?|)":
            return i, "", EMPTY_KIND
        if c == "[":
            return self.parse_class(i)
        return i + 1, self.literal(c), CHAR_KIND

    def literal(self, c: str) -> str:
        return _orbit(c) if "i" in self.flags else _py_char(c)

    def parse_group(self, i: int, depth: int) -> tuple[int, str, Kind]:
        depth += 1
        if depth >= _MAX_DEPTH:
            raise self.invalid(i, "too deeply nested")
        old_flags = self.flags
        j = self.ows(i + 1)
        rest = self.p[j:]
        opener = "("
        number: Optional[int] = None
        look = ""
        if rest.startswith(("?=", "?!")):
            look, skip = rest[:2], 2
        elif rest.startswith(("?<=", "?<!")):
            look, skip = rest[:3], 3
        elif rest.startswith(("?<", "?'")):
            close = ">" if rest[1] == "<" else "'"
            end = rest.find(close, 2)
            if end <= 2:
                raise self.invalid(j, "invalid group name")
            self.name_group(rest[2:end], i)
            number, skip = self.groups, end + 1
        elif rest.startswith("?P<"):
            end = rest.find(">", 3)
            if end <= 3:
                raise self.invalid(j, "invalid group name")
            self.name_group(rest[3:end], i)
            number, skip = self.groups, end + 1
        elif rest.startswith("?P="):
            return self.named_backref(j + 3, "", ")", i)
        elif rest.startswith("?~"):
            raise self.refuse(i, j + 2, "absent operators have no equivalent in Python's regex")
        elif rest.startswith("?>"):
            if self.lookbehind:
                raise self.refuse(i, j + 2, "atomic groups inside a look-behind")
            opener, skip = "(?>", 2
        elif rest.startswith("?("):
            raise self.refuse(i, j + 2, "conditionals are not supported")
        elif rest.startswith("?P>"):
            raise self.refuse(i, j + 3, "subroutine calls are not supported")
        elif rest.startswith("*"):
            end = rest.find(")")
            verb = rest[: end + 1] if end > 0 else rest
            if verb in ("*FAIL)", "*F)", "*ACCEPT)", "*COMMIT)", "*SKIP)", "*PRUNE)"):
                raise self.refuse(i, j + len(verb), "backtracking control verbs")
            raise self.invalid(j, "unknown backtracking control verb")
        elif rest.startswith("?"):
            return self.parse_flags(j, depth)
        else:
            self.groups += 1
            number, skip = self.groups, 0
        if look:
            opener = "(" + look
            self.lookaround += 1
            if look.startswith("?<"):
                self.lookbehind += 1
        inside_lookbehind = self.lookbehind
        if number is not None:
            self.open_groups.append(number)
        k, body, kind = self.parse_re(j + skip, depth)
        k = self.close_paren(k)
        if number is not None:
            self.open_groups.pop()
        if look:
            self.lookaround -= 1
            if look.startswith("?<"):
                self.lookbehind -= 1
        self.flags = old_flags
        if number is not None and inside_lookbehind:
            self.lookbehind_groups.add(number)
        if look:
            kind = LOOK_KIND
        elif opener == "(?>":  # one way: the first the body finds
            kind = (NODE, (kind[1][0], kind[1][1], False))
        else:
            kind = (NODE, kind[1])  # a group of nothing may be repeated
        return k, f"{opener}{body})", kind

    def name_group(self, name: str, position: int) -> None:
        self.groups += 1
        self.group_names.setdefault(name, []).append(self.groups)
        self.name_positions[name] = position

    def close_paren(self, i: int) -> int:
        i = self.ows(i)
        if i == self.n:
            raise self.invalid(i, "unclosed group")
        if self.p[i] != ")":
            raise self.invalid(i, "expected a closing parenthesis")
        return i + 1

    def parse_flags(self, j: int, depth: int) -> tuple[int, str, Kind]:
        start = j + 1
        k = start
        negate = False
        old_flags = self.flags
        flags = set(self.flags)
        while True:
            k = self.ows(k)
            if k == self.n:
                raise self.invalid(k, "unclosed group")
            c = self.p[k]
            if c in "imRsUx":
                if negate:
                    flags.discard(c)
                else:
                    flags.add(c)
                self.flags = frozenset(flags)
            elif c == "u":
                if negate:
                    raise self.invalid(k, "(?-u) is not supported")
            elif c == "-":
                if negate:
                    raise self.invalid(k, "unknown flag")
                negate = True
            elif c == ")":
                if k == start or (negate and k == start + 1):
                    raise self.invalid(k, "unknown flag")
                return k + 1, "", EMPTY_KIND
            elif c == ":":
                if negate and k == start + 1:
                    raise self.invalid(k, "unknown flag")
                k, body, kind = self.parse_re(k + 1, depth)
                if k == self.n:
                    raise self.invalid(k, "unclosed group")
                if self.p[k] != ")":
                    raise self.invalid(k, "expected a closing parenthesis")
                self.flags = old_flags
                return k + 1, f"(?:{body})" if kind[0] != EMPTY else "", kind
            else:
                raise self.invalid(k, f"unknown flag {c!r}")
            k += 1

    # -- escapes

    def parse_escape(self, i: int) -> tuple[int, str, Kind]:
        """An escape outside a class: (end, python, kind)."""
        end, (what, value) = self.escape(i, in_class=False)
        if what == "lit":
            return end, self.literal(value), CHAR_KIND  # type: ignore[arg-type]
        if what == "delegate":
            inner, casei = cast("tuple[str, bool]", value)
            return end, self.delegate(inner, casei, i), CHAR_KIND
        if what == "keep":
            if self.lookaround:
                raise self.refuse(i, end, "\\K inside a look-around")
            return end, "\\K", KEEP_KIND
        if what == "backref":
            return end, value, BACKREF_KIND  # type: ignore[return-value]
        if what == "assert":
            return end, value, ASSERT_KIND  # type: ignore[return-value]
        return end, value, CHAR_KIND  # type: ignore[return-value]

    def escape(self, i: int, in_class: bool) -> tuple[int, tuple[str, object]]:
        """fancy-regex's parse_escape: (end, (kind, value)) with kind lit, delegate,
        keep, backref or python."""
        p, n, flags = self.p, self.n, self.flags
        if i + 1 >= n:
            raise self.invalid(i, "trailing backslash")
        b = p[i + 1]
        end = i + 2
        if b in "0123456789":
            if in_class:
                raise self.invalid(i, "a backreference inside a class")
            digits = end - 1
            while end < n and p[end] in "0123456789":
                end += 1
            return end, ("backref", self.backref(int(p[digits:end]), i, end))
        if b == "k" and not in_class:
            if end < n and p[end] == "'":
                end, out, _ = self.named_backref(end, "'", "'", i, allow_relative=True)
            else:
                end, out, _ = self.named_backref(end, "<", ">", i, allow_relative=True)
            return end, ("backref", out)
        if b == "A" and not in_class:
            return end, ("assert", "\\A")
        if b == "z" and not in_class:
            return end, ("assert", "\\Z")
        if b == "Z" and not in_class:
            trailing = "[\\n\\r]" if "R" in flags else "\\n"
            return end, ("assert", f"(?={trailing}*\\Z)")
        if b in "bB" and not in_class:
            check = self.ows(end)
            if check < n and p[check] == "{":
                after = self.ows(check + 1)
                if not (after < n and (p[after] in "0123456789,")):
                    return self.word_boundary_brace(i, end)
            return end, ("assert", "\\b" if b == "b" else "\\B")
        if b == "<" and not in_class:
            return end, ("assert", _WORD_START)
        if b == ">" and not in_class:
            return end, ("assert", _WORD_END)
        if b in "dswDSW":
            return end, ("delegate", ("\\" + b, "i" in flags))
        if b in "hH":
            return end, ("delegate", ("[0-9A-Fa-f]" if b == "h" else "[^0-9A-Fa-f]", False))
        if b in "xuU":
            digits = {"x": 2, "u": 4, "U": 8}[b]
            return self.hex_escape(self.ows(end), digits, i)
        if b in "pP" and end < n:
            c = p[end]
            end += 1
            if c == "{":
                close = p.find("}", end)
                if close < 0:
                    raise self.invalid(i, "unclosed Unicode property name")
                end = close + 1
            inner = _remap_property(p[i:end], in_class)
            return end, ("delegate", (inner, "i" in flags))
        if b == "K" and not in_class:
            return end, ("keep", None)
        if b == "G" and not in_class:
            raise self.refuse(i, end, "\\G (the end of the previous match) is not supported")
        if b == "R" and not in_class:
            return end, ("python", "(?>\\r\\n|[\\n\\x0b\\x0c\\r\\x85\\u2028\\u2029])")
        if b == "O" and not in_class:
            return end, ("python", "(?s:.)")
        if b == "N" and not in_class:
            return end, ("python", "[^\\n]")
        if b == "g" and not in_class:
            if end == n:
                raise self.invalid(i, "invalid escape \\g")
            raise self.refuse(i, end, "subroutine calls are not supported")
        if b in _ESCAPED_CONTROLS:
            return end, ("lit", _ESCAPED_CONTROLS[b])
        if b.isascii() and b.isalpha() and b not in "kAzbB<>KGR":
            raise self.invalid(i, f"invalid escape \\{b}")
        return end, ("lit", b)

    def hex_escape(self, j: int, digits: int, start: int) -> tuple[int, tuple[str, object]]:
        p, n = self.p, self.n
        if j >= n:
            raise self.invalid(start, "invalid hex escape")
        if j + digits <= n and all(c in _HEX for c in p[j : j + digits]):
            return j + digits, ("lit", self.code_point(p[j : j + digits], start))
        if p[j] == "{":
            pos = j + 1
            hexits = ""
            while pos < n:
                pos = self.ows(pos)
                if pos >= n:
                    break
                c = p[pos]
                if c == "}" and hexits:
                    return pos + 1, ("lit", self.code_point(hexits, start))
                if c in _HEX and len(hexits) < 8:
                    hexits += c
                    pos += 1
                else:
                    break
        raise self.invalid(start, "invalid hex escape")

    def code_point(self, hexits: str, start: int) -> str:
        value = int(hexits, 16)
        if value > 0x10FFFF or 0xD800 <= value < 0xE000:
            raise self.invalid(start, "invalid code point")
        return chr(value)

    def word_boundary_brace(self, i: int, end: int) -> tuple[int, tuple[str, object]]:
        p, n = self.p, self.n
        pos = self.ows(end) + 1
        content = ""
        while pos < n:
            if p[pos] == "}":
                break
            after = self.ows(pos)
            if after > pos:
                pos = after
                if pos >= n or p[pos] == "}":
                    break
            if p[pos] != "}":
                content += p[pos]
                pos += 1
        if pos >= n or p[pos] != "}":
            raise self.invalid(i, "invalid \\b{...}")
        if p[i + 1] == "B":
            raise self.invalid(i, "\\B{...} is not supported")
        out = {
            "start": _WORD_START,
            "end": _WORD_END,
            "start-half": "(?<!\\w)",
            "end-half": "(?!\\w)",
        }.get(content)
        if out is None:
            raise self.invalid(i, f"unknown \\b{{{content}}}")
        return pos + 1, ("assert", out)

    # -- backreferences

    def backref(self, target: Union[int, str], start: int, end: int) -> str:
        if "i" in self.flags:
            raise self.refuse(
                start,
                end,
                "case-insensitive backreferences (fancy-regex and Python fold case differently)",
            )
        if self.lookbehind:
            raise self.refuse(start, end, "backreferences inside a look-behind")
        slot = len(self.backrefs)
        self.backrefs.append((start, slot, target, frozenset(self.open_groups)))
        return f"\ue000{slot}\ue001"

    def named_backref(
        self, i: int, open_: str, close: str, start: int, allow_relative: bool = False
    ) -> tuple[int, str, Kind]:
        """fancy-regex's parse_delimited_backref (parse_id) from ``i``."""
        p, n = self.p, self.n
        if not p.startswith(open_, i) or n - i <= len(open_) + len(close):
            raise self.invalid(start, "invalid group name")
        j = i + len(open_)
        k = j
        while k < n and (p[k].isalnum() or p[k] == "_"):
            k += 1
        if k > j and p.startswith(close, k):
            name = p[j:k]
            end = k + len(close)
            target: Union[int, str] = int(name) if name.isascii() and name.isdigit() else name
            return end, self.backref(target, start, end), BACKREF_KIND
        if allow_relative and k < n and p[k] in "+-":
            raise self.refuse(
                start,
                k + 1,
                "relative backreferences and recursion levels; refer to the group by number "
                "or name",
            )
        raise self.invalid(start, "invalid group name")

    # -- classes and the expressions fancy-regex hands to regex-syntax

    def delegate(self, inner: str, casei: bool, start: int) -> str:
        def fail(reason: str, unsupported: Optional[str] = None) -> ValueError:
            if unsupported is not None:
                return self.refuse(start, start + 1, f"{reason}: {unsupported}")
            return self.invalid(start, reason)

        node = _ClassParser(inner, fail).parse_delegate()
        if node[0] == "perl":
            return "\\" + node[1]  # \d \s \w and negations: never folded
        return _ranges_to_python(_set_ranges(node, casei))

    def parse_class(self, i: int) -> tuple[int, str, Kind]:
        """fancy-regex's parse_class: the class text it builds for regex-syntax."""
        p, n = self.p, self.n
        j = i + 1
        text = "["
        nest = 1
        seen_negated_property = False
        if j < n and p[j] == "^":
            text += "^"
            j += 1
        if j < n and p[j] == "]":
            text += "]"
            j += 1
        while True:
            if j >= n:
                raise self.invalid(j, "unclosed character class")
            c = p[j]
            if c == "\\":
                end, (kind, value) = self.escape(j, in_class=True)
                if kind == "lit":
                    text += ("\\" + value) if value in _META else value  # type: ignore[operator]
                elif kind == "delegate":
                    inner = value[0]  # type: ignore[index]
                    if inner.startswith("[^") and ("\\p{" in inner or "\\P{" in inner):
                        if seen_negated_property:
                            text += "&&"
                        seen_negated_property = True
                    text += inner
                else:
                    raise self.invalid(j, "invalid escape in a class")
                j = end
            elif c == "[":
                nest += 1
                text += "["
                j += 1
                if j < n and p[j] == "^":
                    text += "^"
                    j += 1
                if j < n and p[j] == "]":
                    text += "]"
                    j += 1
            elif c == "]":
                nest -= 1
                text += "]"
                j += 1
                if nest == 0:
                    break
            else:
                text += c
                j += 1
        return j, self.delegate(text, "i" in self.flags, i), CHAR_KIND


def _remap_property(name: str, in_class: bool) -> str:
    """fancy-regex's remap_unicode_property_if_necessary (Unicode mode)."""
    if name.startswith("\\p{"):
        negated, prop = False, name[3:]
    elif name.startswith("\\P{"):
        negated, prop = True, name[3:]
    else:
        return name
    if not prop.endswith("}"):
        return name
    prop = prop[:-1]
    if prop.startswith("^"):
        negated, prop = not negated, prop[1:]
    lower = prop.lower()

    def wrap(inner: str) -> str:
        if negated:
            return f"[^{inner}]"
        return inner if in_class else f"[{inner}]"

    if lower == "alnum":
        return wrap("\\p{alpha}\\p{digit}")
    if lower == "blank":
        return wrap("\\p{Zs}\\x09")
    if lower == "cntrl":
        return wrap("\\x00-\\x1F\\x7F-\\x9F")
    if lower == "word":
        return "\\W" if negated else "\\w"
    if lower == "graph":
        return "[\\p{White_Space}\\p{C}]" if negated else "[^\\p{White_Space}\\p{C}]"
    if lower == "print":
        return "[\\p{C}\\t\\n\\v\\f\\r]" if negated else "[^\\p{C}\\t\\n\\v\\f\\r]"
    if lower == "cs":
        return "\\p{any}" if negated else "\\P{any}"
    return f"\\P{{{lower}}}" if negated else f"\\p{{{lower}}}"


# ---------------------------------------------------------------------------
# Public functions


@functools.lru_cache(maxsize=256)
def translate(pattern: str) -> str:
    """The `regex` pattern that matches what fancy-regex's ``pattern`` matches.

    :class:`UnsupportedPattern` for a construct the reference cannot reproduce,
    :class:`InvalidPattern` for a pattern fancy-regex rejects (as far as this
    parser can tell; the core has the last word).
    """
    out = _Translator(pattern).translate()
    try:
        regex.compile(out)
    except regex.error as err:  # refused, so that the core does not run it alone
        raise UnsupportedPattern(
            pattern,
            0,
            pattern,
            f"Python's regex module rejects its translation {out!r} ({err}), so the "
            "reference cannot run it",
        ) from None
    return out


def check(pattern: str) -> None:
    """Raise :class:`UnsupportedPattern` if the reference cannot run ``pattern``
    as the core does. A pattern that is not valid at all passes: the core
    reports it, with the engine's own message."""
    try:
        translate(pattern)
    except UnsupportedPattern:
        raise
    except InvalidPattern:
        pass


class CompiledUserRegex:
    """A user pattern compiled for the reference: ``finditer`` yields the matches
    fancy-regex's ``find_iter`` finds, as `regex` match objects."""

    __slots__ = ("pattern", "python_pattern", "_search")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.python_pattern = translate(pattern)
        self._search = regex.compile(self.python_pattern).search

    def finditer(self, text: str) -> Iterator[regex.Match]:
        # fancy-regex's Matches::next: search from `position`; after an empty
        # match the next search starts one character on, and an empty match
        # where the previous match ended is skipped.
        position, last_end = 0, None
        while position <= len(text):
            match = self._search(text, position)
            if match is None:
                return
            start, end = match.span()
            if start == end:
                position = end + 1
                if end == last_end:
                    continue
            else:
                position = end
            last_end = end
            yield match


@functools.lru_cache(maxsize=64)
def compile(pattern: str) -> CompiledUserRegex:  # noqa: A001 - mirrors regex.compile
    """``pattern`` (fancy-regex syntax) ready to cut text as the core does."""
    return CompiledUserRegex(pattern)
