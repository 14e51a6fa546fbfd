"""OpenAI's encodings (r50k_base, p50k_base, cl100k_base, o200k_base) as
data: their names, pre-tokenizers, special tokens, file checksums and where
their rank files are found. :func:`bytepair.get_encoding` reads a file with
tiktoken's own rule, so ids equal tiktoken's.

bytepair never downloads anything. Put the files in a directory and point
``$BYTEPAIR_TIKTOKEN_DIR`` at it::

    mkdir -p ~/tiktoken && cd ~/tiktoken
    curl -O https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken
    export BYTEPAIR_TIKTOKEN_DIR=~/tiktoken

then ``bytepair.get_encoding("cl100k_base")``. The table below holds what is
not in the files: the pre-tokenizer and the special tokens, as
``tiktoken_ext.openai_public`` defines them, and each file's sha256 (checked
on load, as tiktoken does).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .pretokenizers import Pretokenizer, resolve

ENV_VAR = "BYTEPAIR_TIKTOKEN_DIR"
URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class KnownEncoding:
    """One of OpenAI's encodings: what its ``.tiktoken`` file does not say."""

    name: str
    pretokenizer_name: str
    special_tokens: Mapping[str, int] = field(hash=False)
    sha256: str
    n_vocab: int

    @property
    def pretokenizer(self) -> Pretokenizer:
        return resolve(self.pretokenizer_name)

    @property
    def url(self) -> str:
        return URL.format(name=self.name)

    @property
    def file_name(self) -> str:
        return f"{self.name}.tiktoken"


ENCODINGS: dict[str, KnownEncoding] = {
    encoding.name: encoding
    for encoding in [
        KnownEncoding(
            "r50k_base",
            "r50k",
            {ENDOFTEXT: 50256},
            "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
            50257,
        ),
        KnownEncoding(
            "p50k_base",
            "p50k",
            {ENDOFTEXT: 50256},
            "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
            50281,
        ),
        KnownEncoding(
            "cl100k_base",
            "cl100k",
            {
                ENDOFTEXT: 100257,
                FIM_PREFIX: 100258,
                FIM_MIDDLE: 100259,
                FIM_SUFFIX: 100260,
                ENDOFPROMPT: 100276,
            },
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            100277,
        ),
        KnownEncoding(
            "o200k_base",
            "o200k",
            {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            200019,
        ),
    ]
}


# tiktoken's "gpt2" reads GPT-2's own files (encoder.json, vocab.bpe), which
# hold the same ranks, pattern and special token as r50k_base.
ALIASES = {"gpt2": "r50k_base"}


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` knows."""
    return [*ALIASES, *ENCODINGS]


def encoding_path(name: str) -> Path:
    """Where :func:`get_encoding` reads ``name`` from; a clear error when it cannot."""
    name = ALIASES.get(name, name)
    if name not in ENCODINGS:
        raise ValueError(
            f"unknown encoding {name!r}: bytepair knows {', '.join(list_encoding_names())} "
            "(for another .tiktoken file use bytepair.load_tiktoken(path, pattern=..., "
            "special_tokens=...))"
        )
    known = ENCODINGS[name]
    directory = os.environ.get(ENV_VAR)
    if not directory:
        raise FileNotFoundError(
            f"{ENV_VAR} is not set: put {known.file_name} (published by OpenAI at "
            f"{known.url}) in a directory and set {ENV_VAR} to that directory; "
            "bytepair never downloads"
        )
    path = Path(directory).expanduser() / known.file_name
    if path.exists() and not path.is_file():
        raise FileNotFoundError(
            f"{path} is not a file: {ENV_VAR} must hold {known.file_name} itself, the rank "
            f"file published by OpenAI at {known.url}"
        )
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: put {known.file_name} (published by OpenAI at {known.url}) "
            f"in {Path(directory).expanduser()} ({ENV_VAR}); bytepair never downloads"
        )
    return path


__all__ = [
    "ALIASES",
    "ENCODINGS",
    "ENDOFTEXT",
    "ENV_VAR",
    "KnownEncoding",
    "encoding_path",
    "list_encoding_names",
]
