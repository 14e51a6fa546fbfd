"""The readable pure-Python reference: the specification in code.

``bytepair.reference.bpe`` trains and encodes byte-level BPE exactly as SPEC
sections 1 and 2 say, slowly and literally. Every fast path (the Rust core) is
tested against it. Import the module you need; nothing is re-exported here.
"""
