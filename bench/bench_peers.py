"""The encoders under test, built from the local files only (never the network).

Each tool becomes an ``Encoder`` with up to three calls (encode one text,
encode a batch, decode ids to bytes) and a description of each call, or a
status saying why it cannot run ("not installed", "not available", "needs
network", "error: ...").
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from bench_harness import OK, log, nproc, optional_import, tiktoken_file, version

# Nothing here may download: keep the HF hub and tiktoken's cache out of it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["TIKTOKEN_CACHE_DIR"] = ""  # tiktoken reads local files directly, no cache copy

PEER_DISTS = ("tiktoken", "tokenizers", "bpe-openai", "tokendagger", "tokie", "kitoken")
ALL_DISTS = ("bytepair", "numpy", *PEER_DISTS, "rustbpe")
PATTERN_NAMES = {"cl100k_base": "cl100k", "o200k_base": "o200k"}


def _lists(x: Any) -> list[int]:
    return x


def _batch_lists(x: Any) -> list[list[int]]:
    return x


@dataclass
class Encoder:
    tool: str
    is_peer: bool = True
    status: str = OK
    note: str = ""
    encode: Optional[Callable[[str], Any]] = None
    encode_call: str = ""
    to_list: Callable[[Any], list[int]] = _lists  # the encode result as list[int], for the check
    batch: Optional[Callable[[list[str]], Any]] = None
    batch_call: str = ""
    batch_to_lists: Callable[[Any], list[list[int]]] = _batch_lists
    decode: Optional[Callable[[list[int]], bytes]] = None
    decode_call: str = ""
    keep: list = field(default_factory=list)  # objects to keep alive
    before_round: Optional[Callable[[], Any]] = None  # see bench_harness.Row.before_round


def absent(tool: str, dist: str, is_peer: bool = True) -> Encoder:
    return Encoder(tool, is_peer, status="not installed", note=f"pip install {dist}")


def failed(tool: str, error: BaseException) -> Encoder:
    text = f"{type(error).__name__}: {error}"
    lowered = text.lower()
    if any(w in lowered for w in ("connection", "resolve", "network", "download", "http")):
        return Encoder(tool, status="needs network", note=text[:160])
    return Encoder(tool, status=f"error: {text[:160]}")


# ---------------------------------------------------------------------------
# Vocabulary files
# ---------------------------------------------------------------------------


def tiktoken_spec(data: Path, encoding: str) -> dict:
    """tiktoken's own constructor arguments for ``encoding`` (tiktoken_ext.openai_public),
    with the rank file read from the shared data instead of downloaded."""
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    path = str(tiktoken_file(data, encoding))
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda _url, expected_hash=None: load_tiktoken_bpe(
        path, expected_hash
    )
    try:
        return getattr(openai_public, encoding)()
    finally:
        openai_public.load_tiktoken_bpe = original


def tiktoken_encoding(data: Path, encoding: str):
    import tiktoken

    return tiktoken.Encoding(**tiktoken_spec(data, encoding))


def hf_json(data: Path, encoding: str, workdir: Path) -> Path:
    """``encoding`` as a HuggingFace tokenizer.json, written by ``bytepair convert``
    (bytepair's exporter; it refuses a conversion that would change ids)."""
    out = workdir / f"{encoding}.tokenizer.json"
    if not out.is_file():
        log(f"bytepair convert {encoding}.tiktoken --to huggingface")
        cmd = [sys.executable, "-m", "bytepair", "convert", str(tiktoken_file(data, encoding))]
        cmd += [str(out), "--to", "huggingface", "--force"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"bytepair convert failed: {proc.stderr.strip()[-300:]}")
    return out


# ---------------------------------------------------------------------------
# The encoders
# ---------------------------------------------------------------------------


def bytepair_encoder(data: Path, encoding: str) -> tuple[Encoder, Encoder]:
    """bytepair's list path and numpy path."""
    import bytepair

    tok = bytepair.load_tiktoken(tiktoken_file(data, encoding))
    lists = Encoder(
        "bytepair",
        is_peer=False,
        encode=tok.encode_ordinary,
        encode_call="encode_ordinary(text) -> list[int]",
        batch=tok.encode_ordinary_batch,
        batch_call="encode_ordinary_batch(texts)",
        decode=tok.decode_bytes,
        decode_call="decode_bytes(ids)",
        keep=[tok],
        before_round=getattr(tok, "clear_cache", None),
    )
    lists.tokenizer = tok  # type: ignore[attr-defined]
    has_one = hasattr(tok, "encode_to_numpy")
    has_batch = hasattr(tok, "encode_batch_to_numpy")
    if not (has_one or has_batch):
        numpy_path = Encoder(
            "bytepair (numpy)",
            is_peer=False,
            status="not available",
            note="this build has no Tokenizer.encode_to_numpy / encode_batch_to_numpy",
        )
        return lists, numpy_path

    def split(result) -> list[list[int]]:
        flat, offsets = result
        flat = flat.tolist()
        offsets = [int(o) for o in offsets]
        if len(offsets) >= 1 and offsets[0] == 0:
            return [flat[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
        # offsets given as document ends
        starts = [0, *offsets[:-1]]
        return [flat[s:e] for s, e in zip(starts, offsets)]

    numpy_path = Encoder(
        "bytepair (numpy)",
        is_peer=False,
        encode=tok.encode_to_numpy if has_one else None,
        encode_call="encode_to_numpy(text) -> ndarray",
        to_list=lambda a: a.tolist(),
        batch=tok.encode_batch_to_numpy if has_batch else None,
        batch_call="encode_batch_to_numpy(texts) -> (flat ids, offsets)",
        batch_to_lists=split,
        keep=[tok],
        before_round=lists.before_round,
    )
    if not has_one:
        numpy_path.note = "encode_to_numpy not available"
    if not has_batch:
        numpy_path.note = "encode_batch_to_numpy not available"
    return lists, numpy_path


def tiktoken_encoder(data: Path, encoding: str) -> Encoder:
    if optional_import("tiktoken") is None:
        return absent("tiktoken", "tiktoken")
    try:
        enc = tiktoken_encoding(data, encoding)
    except Exception as e:
        return failed("tiktoken", e)
    threads = nproc()
    return Encoder(
        "tiktoken",
        encode=enc.encode_ordinary,
        encode_call="encode_ordinary(text)",
        batch=functools.partial(enc.encode_ordinary_batch, num_threads=threads),
        batch_call=f"encode_ordinary_batch(texts, num_threads={threads})",
        decode=enc.decode_bytes,
        decode_call="decode_bytes(ids)",
        note="rank file from the shared data, pattern and specials from tiktoken_ext.openai_public",
        keep=[enc],
    )


def hf_encoder(data: Path, encoding: str, workdir: Path) -> Encoder:
    tokenizers = optional_import("tokenizers")
    if tokenizers is None:
        return absent("HF tokenizers", "tokenizers")
    try:
        hf = tokenizers.Tokenizer.from_file(str(hf_json(data, encoding, workdir)))
    except Exception as e:
        return failed("HF tokenizers", e)
    return Encoder(
        "HF tokenizers",
        encode=lambda text: hf.encode(text, add_special_tokens=False).ids,
        encode_call="encode(text).ids",
        batch=lambda texts: [e.ids for e in hf.encode_batch_fast(texts, add_special_tokens=False)],
        batch_call="encode_batch_fast(texts)",
        note="Tokenizer.from_file of the tokenizer.json written by `bytepair convert`",
        keep=[hf],
    )


def bpe_openai_encoder(encoding: str) -> Encoder:
    if optional_import("bpe_openai") is None:
        return absent("bpe-openai", "bpe-openai")
    try:
        from bpe_openai import _bindings

        backend = _bindings.tokenizer_for_encoding(encoding)
    except Exception as e:
        return failed("bpe-openai", e)
    return Encoder(
        "bpe-openai",
        encode=backend.encode,
        encode_call="_bindings.tokenizer_for_encoding(name).encode(text)",
        note=(
            "vocabulary bundled in the wheel (it cannot read a .tiktoken file; nothing is "
            "downloaded); the raw binding, because its tiktoken-like wrapper refuses texts of "
            "≥ 1,000,000 characters; no native batch call"
        ),
        keep=[backend],
    )


def tokendagger_encoder(data: Path, encoding: str) -> Encoder:
    if optional_import("tokendagger") is None:
        return absent("tokendagger", "tokendagger")
    try:
        import tokendagger

        spec = tiktoken_spec(data, encoding)
        td = tokendagger.Encoding(
            spec["name"],
            pat_str=spec["pat_str"],
            mergeable_ranks=spec["mergeable_ranks"],
            special_tokens=spec["special_tokens"],
        )
    except Exception as e:
        return failed("tokendagger", e)
    threads = nproc()
    return Encoder(
        "tokendagger",
        encode=td.encode_ordinary,
        encode_call="encode_ordinary(text)",
        batch=functools.partial(td.encode_batch, num_threads=threads),
        batch_call=f"encode_batch(texts, num_threads={threads})",
        decode=td.decode_bytes,
        decode_call="decode_bytes(ids)",
        note="tokendagger.Encoding(tiktoken's pat_str, ranks from the shared data)",
        keep=[td],
    )


def tokie_encoder(data: Path, encoding: str, workdir: Path) -> tuple[Encoder, Encoder]:
    """tokie's list calls and its numpy call (``encode_batch_flat``: one flat uint32 array
    and the length of each text's ids), so that bytepair's numpy path meets a numpy peer."""
    tokie = optional_import("tokie")
    if tokie is None:
        return absent("tokie", "tokie"), absent("tokie (numpy)", "tokie")
    try:
        tt = tokie.Tokenizer.from_json(str(hf_json(data, encoding, workdir)))
    except Exception as e:
        return failed("tokie", e), failed("tokie (numpy)", e)
    note = "Tokenizer.from_json of the tokenizer.json written by `bytepair convert`"
    lists = Encoder(
        "tokie",
        encode=lambda text: tt.encode(text, add_special_tokens=False).ids,
        encode_call="encode(text).ids",
        batch=lambda texts: [e.ids for e in tt.encode_batch(texts, add_special_tokens=False)],
        batch_call="encode_batch(texts)",
        decode=tt.decode_bytes,
        decode_call="decode_bytes(ids)",
        note=note,
        keep=[tt],
    )

    def split(result) -> list[list[int]]:
        flat, lengths = result
        flat = flat.tolist()
        out, start = [], 0
        for n in lengths.tolist():
            out.append(flat[start : start + n])
            start += n
        return out

    numpy_path = Encoder(
        "tokie (numpy)",
        encode=lambda text: tt.encode_batch_flat([text], add_special_tokens=False)[0],
        encode_call="encode_batch_flat([text])[0] -> ndarray (its only numpy call)",
        to_list=lambda a: a.tolist(),
        batch=lambda texts: tt.encode_batch_flat(texts, add_special_tokens=False),
        batch_call="encode_batch_flat(texts) -> (flat ids, lengths)",
        batch_to_lists=split,
        note=note,
        keep=[tt],
    )
    return lists, numpy_path


def kitoken_encoder(data: Path, encoding: str) -> Encoder:
    kitoken = optional_import("kitoken")
    if kitoken is None:
        return absent("kitoken", "kitoken")
    try:
        kt = kitoken.Kitoken.from_tiktoken_file(str(tiktoken_file(data, encoding)))
    except Exception as e:
        return failed("kitoken", e)
    return Encoder(
        "kitoken",
        encode=kt.encode,
        encode_call="encode(text)",
        batch=kt.encode_all,
        batch_call="encode_all(texts)",
        decode=kt.decode,
        decode_call="decode(ids)",
        note="Kitoken.from_tiktoken_file (it picks the split pattern itself)",
        keep=[kt],
    )


def build_encoders(data: Path, encoding: str, workdir: Path) -> list[Encoder]:
    """bytepair (list and numpy paths) first, then the peers (tokie: list and numpy calls)."""
    ours, ours_numpy = bytepair_encoder(data, encoding)
    return [
        ours,
        ours_numpy,
        tiktoken_encoder(data, encoding),
        hf_encoder(data, encoding, workdir),
        bpe_openai_encoder(encoding),
        tokendagger_encoder(data, encoding),
        *tokie_encoder(data, encoding, workdir),
        kitoken_encoder(data, encoding),
    ]


def versions_line() -> str:
    return ", ".join(f"{dist} {version(dist)}" for dist in ALL_DISTS)
