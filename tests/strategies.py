"""Hypothesis strategies for corpora that stress BPE: ties, overlapping runs,
multi-byte UTF-8, and merges that make the same bytes twice."""

from __future__ import annotations

from hypothesis import strategies as st

# Few distinct symbols -> many ties and overlapping pairs (aaaa, abab).
small_alphabet = st.text(alphabet="ab c\n", min_size=0, max_size=30)
# Multi-byte characters that share lead bytes (é è ê, 日 本), an emoji, a ZWJ.
utf8_alphabet = st.text(alphabet="aé è日本 \u200d👍x'", min_size=0, max_size=25)
# Characters assigned in Python's Unicode tables. The reference's `regex`
# module and the core's Rust regex crate may ship different Unicode versions,
# and can disagree on whether a newly assigned code point is a letter.
assigned_text = st.text(
    alphabet=st.characters(exclude_categories=("Cn", "Cs")), min_size=0, max_size=40
)
# Everything a Python str can hold except lone surrogates.
any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=0, max_size=40)

corpus_text = st.one_of(small_alphabet, utf8_alphabet, assigned_text)
corpora = st.lists(corpus_text, min_size=1, max_size=12)

PRETOKENIZERS = ["none", "whitespace", "gpt2"]
