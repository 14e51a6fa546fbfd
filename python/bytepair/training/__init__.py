"""The trainers: :mod:`~bytepair.training.bpe` (byte-level BPE, with
checkpoints), :mod:`~bytepair.training.unigram` (the unigram language model),
:mod:`~bytepair.training.char_bpe` (character-level BPE, subword-nmt style)
and :mod:`~bytepair.training.counts` (pre-token count shards: count once,
train later). What they share, reading the corpus included, is in
:mod:`~bytepair.training.corpus`. :func:`bytepair.train` chooses among them."""
