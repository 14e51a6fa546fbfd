"""The tokenizer classes: :class:`~bytepair.Tokenizer` (byte-level BPE,
``bpe``), :class:`~bytepair.SentencePieceTokenizer` and its flavors
(``unigram``: trained here; ``loaded``: a ``.model`` file or a Unigram
``tokenizer.json``), and ``CharBPE`` (``char_bpe``: subword-nmt's
character-level BPE). ``_contract`` holds what they all promise (the
special-token policy, the id checks, the errors for text that is no Unicode,
batch decoding). Import the class from its module, or from ``bytepair``."""
