"""The readable pure-Python reference: the specification in code.

``bytepair.reference.bpe`` trains and encodes byte-level BPE exactly as the
training and encoding rules say (docs/design/training.md,
docs/design/encoding.md), slowly and literally; ``charbpe`` and ``unigram``
do the same for character-level BPE and the unigram model, ``sentencepiece``
and ``hf_unigram`` follow those libraries' rules for their files. Every fast
path (the Rust core) is tested against it. Import the module you need;
nothing is re-exported here.

Nothing in the product imports it (but the tool that shows training step by
step, ``bytepair.tools.trace``). It takes from the product only plain data
(``bytepair.model``, ``bytepair.errors``, the pre-tokenizers' names and
patterns) and two readings it shares with the product rather than keeping a
second copy: ``bytepair.user_regex`` (the core's regex syntax, run in
Python's ``regex``) and a ``tokenizer.json``'s pipeline and decoder steps
(``bytepair.formats.hf_unigram``, ``bytepair.formats.hf_decoder``).
"""
