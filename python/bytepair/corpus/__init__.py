"""Corpora: :mod:`~bytepair.corpus.sources` reads input files as documents
(the one rule every command and :func:`bytepair.train` follow),
:mod:`~bytepair.corpus.dataset` encodes them into token shards, and
:mod:`~bytepair.corpus.on_ray` does both on a Ray cluster."""
