"""Tools that show and measure what the tokenizers do, above the library:
:mod:`~bytepair.tools.trace` (training one merge at a time, with the pair
counts and the ties; ``bytepair steps``), :mod:`~bytepair.tools.viz` (the
same as one self-contained page; ``bytepair viz``),
:mod:`~bytepair.tools.analysis` (measurements on held-out text and
vocabulary-size sweeps; ``bytepair analyze``), :mod:`~bytepair.tools.demo`
(``bytepair demo``), :mod:`~bytepair.tools.gage` (Gage's 1994 byte pair
compression; ``bytepair gage``) and :mod:`~bytepair.tools.display` (how
tokens are shown to people). Only trace imports the readable reference: its
job is to show the algorithm step by step."""
