"""The compiled Rust core, the one door between this package and Rust.

The extension module is ``bytepair._native._ext`` (built by maturin from
``crates/py``); this package re-exports it. It imports nothing else from
bytepair, so every layer may use it without an arrow back up to the package.
"""

from typing import TYPE_CHECKING

from ._ext import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    R50K_PATTERN,
    WHITESPACE_PATTERN,
    CoreBPE,
    CoreHfDecoder,
    CoreHfUnigram,
    CoreSentencePiece,
    CoreSymbolBPE,
    CoreUnigram,
    HfBpeDocument,
    PretokenCounter,
    TrainedBPE,
    TrainedUnigram,
    UnigramRound,
    checkpoint_info,
    format_ids,
    gage_compress,
    gage_decompress,
    parse_ids,
    parse_rank_file,
    resume_bpe,
    split_hf_bpe,
    train_bpe,
    train_bpe_symbols,
    train_unigram,
)

if TYPE_CHECKING:  # names of the settings dicts, for annotations only (see _ext.pyi)
    from ._ext import (
        BpeSettings as BpeSettings,
    )
    from ._ext import (
        CheckpointSettings as CheckpointSettings,
    )
    from ._ext import (
        EncoderSettings as EncoderSettings,
    )
    from ._ext import (
        HfUnigramSettings as HfUnigramSettings,
    )
    from ._ext import (
        MetaspaceSettings as MetaspaceSettings,
    )
    from ._ext import (
        ResumeCheckpointSettings as ResumeCheckpointSettings,
    )
    from ._ext import (
        SentencePieceSettings as SentencePieceSettings,
    )
    from ._ext import (
        SymbolBpeSettings as SymbolBpeSettings,
    )
    from ._ext import (
        UnigramSettings as UnigramSettings,
    )
    from ._ext import (
        UnigramTrainSettings as UnigramTrainSettings,
    )

__all__ = [
    "CoreBPE",
    "CoreSymbolBPE",
    "PretokenCounter",
    "TrainedBPE",
    "train_bpe",
    "resume_bpe",
    "checkpoint_info",
    "train_bpe_symbols",
    "CoreUnigram",
    "TrainedUnigram",
    "UnigramRound",
    "train_unigram",
    "CoreSentencePiece",
    "CoreHfUnigram",
    "CoreHfDecoder",
    "parse_rank_file",
    "HfBpeDocument",
    "split_hf_bpe",
    "format_ids",
    "parse_ids",
    "gage_compress",
    "gage_decompress",
    "GPT2_PATTERN",
    "WHITESPACE_PATTERN",
    "R50K_PATTERN",
    "CL100K_PATTERN",
    "O200K_PATTERN",
]
