"""The readable pure-Python reference: the specification in code.

``bytepair.reference.bpe`` trains and encodes byte-level BPE exactly as the
training and encoding rules say (docs/design/training.md,
docs/design/encoding.md), slowly and literally. Every fast path (the Rust core) is
tested against it. Import the module you need; nothing is re-exported here.
"""
