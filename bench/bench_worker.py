"""Subprocess side of the benchmark (run by bench.py, not by hand).

``bench_worker.py worst TOOL ENCODING JSON_PATH`` loads one encoder, says
``{"ready": ...}``, then answers one JSON job per stdin line (a worst-case
input kind and size, and optionally a smaller size to time in the same
rounds) with one JSON line: the times of its rounds, a hash of the ids, a
hash of the input. The parent kills it when a job runs past its
time limit, so a peer that hangs costs the limit, not the benchmark.

``bench_worker.py train JOB_JSON`` trains one tool once in this fresh
process and prints one JSON line: reading and training seconds, resident
memory after reading and the peak during training (VmHWM, reset after
reading), and writes the merged tokens to a file for the agreement notes.
"""

from __future__ import annotations

import gc
import gzip
import hashlib
import json
import random
import re
import resource
import sys
import time
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# ---------------------------------------------------------------------------
# Worst-case inputs
# ---------------------------------------------------------------------------

KINDS = {
    "a": '"a" * n',
    "letters": "random ASCII letters",
    "cjk": 'one CJK character repeated ("中" * n/3)',
    "digits": "random digits",
    "caret": '"^" * n',
    "spaces": '" " * n (one whitespace run)',
    "whitespace": "random whitespace (space, tab, LF, CR)",
    "vocab": "random long tokens of the vocabulary, no spaces",
}

_long_tokens: dict[str, list[str]] = {}


def long_tokens(rank_file: str) -> list[str]:
    """Tokens of a .tiktoken file of at least 8 bytes that are UTF-8 text without whitespace."""
    if rank_file not in _long_tokens:
        import base64

        out = []
        with open(rank_file, "rb") as f:
            for line in f:
                b64 = line.split()[0] if line.strip() else b""
                token = base64.b64decode(b64)
                if len(token) < 8:
                    continue
                try:
                    text = token.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                if any(c.isspace() for c in text):
                    continue
                out.append(text)
        _long_tokens[rank_file] = sorted(out)
    return _long_tokens[rank_file]


def make_input(kind: str, n: int, rank_file: str, seed: int = 4) -> str:
    """About ``n`` UTF-8 bytes of the worst-case input ``kind`` (deterministic)."""
    rng = random.Random(f"{kind}:{n}:{seed}")
    if kind == "a":
        return "a" * n
    if kind == "letters":
        letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        return "".join(rng.choices(letters, k=n))
    if kind == "cjk":
        return "中" * (n // 3)
    if kind == "digits":
        return "".join(rng.choices("0123456789", k=n))
    if kind == "caret":
        return "^" * n
    if kind == "spaces":
        return " " * n
    if kind == "whitespace":
        return "".join(rng.choices(" \t\n\r", k=n))
    if kind == "vocab":
        tokens = long_tokens(rank_file)
        parts, size = [], 0
        while size < n:
            t = rng.choice(tokens)
            parts.append(t)
            size += len(t.encode("utf-8"))
        return "".join(parts)
    raise ValueError(f"unknown input kind {kind!r}")


def ids_hash(ids) -> str:
    return hashlib.sha256(array("I", ids).tobytes()).hexdigest()[:16]


def worst_main(tool: str, encoding: str, setup_path: str) -> None:
    setup = json.loads(Path(setup_path).read_text())
    rank_file = setup["rank_file"]
    started = time.perf_counter()
    decode = None
    before_round = None
    if tool == "bytepair":
        import bytepair

        tok = bytepair.load_tiktoken(rank_file)
        encode, decode = tok.encode_ordinary, tok.decode_bytes
        # Each round encodes text new to the tokenizer (it remembers words between calls).
        before_round = tok.clear_cache
    elif tool == "tiktoken":
        from bench_peers import tiktoken_encoding

        enc = tiktoken_encoding(Path(setup["data"]), encoding)
        encode = enc.encode_ordinary
    elif tool == "HF tokenizers":
        import tokenizers

        hf = tokenizers.Tokenizer.from_file(setup["hf_json"])

        def encode(text):
            return hf.encode(text, add_special_tokens=False).ids

    else:
        raise SystemExit(f"unknown tool {tool}")
    print(json.dumps({"ready": True, "load_s": time.perf_counter() - started}), flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        text = make_input(job["kind"], job["n"], rank_file)
        # With "pair" (a smaller size), each timed round first encodes the input of that
        # size, then this one: the two times of a round are taken under the same conditions.
        paired = make_input(job["kind"], job["pair"], rank_file) if job.get("pair") else None
        reply = {
            "input": hashlib.sha256(text.encode("utf-8")).hexdigest()[:16],
            "n_bytes": len(text.encode("utf-8")),
        }
        try:
            gc.collect()
            t0 = time.perf_counter()
            ids = encode(text)
            first = time.perf_counter() - t0
            reply.update(first=first, hash=ids_hash(ids), ntokens=len(ids))
            if decode is not None:
                reply["roundtrip"] = decode(ids) == text.encode("utf-8")
            del ids
            times, pair_times = [], []
            spent = first
            budget = job["budget"]
            while len(times) < job["rounds"] and spent + 1.5 * max(times or [first]) < 0.8 * budget:
                for each, into in ((paired, pair_times), (text, times)):
                    if each is None:
                        continue
                    if before_round is not None:
                        before_round()
                    gc.collect()
                    gc.disable()
                    t0 = time.perf_counter()
                    encode(each)
                    dt = time.perf_counter() - t0
                    gc.enable()
                    into.append(dt)
                    spent += dt
            reply["times"] = times
            if paired is not None:
                reply["pair_times"] = pair_times
        except BaseException as e:  # noqa: BLE001 - a peer's failure is data
            reply["error"] = f"{type(e).__name__}: {e}"[:300]
        print(json.dumps(reply), flush=True)


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


def status_kb(field: str) -> int:
    text = Path("/proc/self/status").read_text()
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(match.group(1)) if match else -1


def reset_peak() -> bool:
    """Resets VmHWM to the current RSS (Linux ≥ 4.0); False when not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def read_docs(data: Path, name: str, n_bytes: int) -> list[str]:
    """The documents of the first ``n_bytes`` of ``large_<name>.txt.gz``, read as a
    stream (document by document, as the manifest gives them) so that reading
    never holds more than the documents themselves. The last document is cut
    back to a line end."""
    from bench_harness import cut_back, read_manifest

    path = data / "corpus" / f"large_{name}.txt.gz"
    docs = []
    position = 0
    with gzip.open(path, "rb") as f:
        for offset, length, _ in read_manifest(path.with_name(f"large_{name}.manifest.tsv")):
            if offset >= n_bytes:
                break
            f.read(offset - position)  # the separator between documents
            end = min(offset + length, n_bytes)
            piece = f.read(end - offset)
            position = offset + len(piece)
            if end < offset + length:
                piece = cut_back(piece)
            if piece:
                docs.append(piece.decode("utf-8"))
    return docs


def merged_hex(tokens: list[bytes]) -> list[str]:
    return [t.hex() for t in tokens]


def train_main(job: dict) -> None:
    tool, pretok, vocab = job["tool"], job["pretokenizer"], job["vocab"]
    t0 = time.perf_counter()
    docs = read_docs(Path(job["data"]), "en", job["n_bytes"])
    read_s = time.perf_counter() - t0
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    gc.collect()
    peak_reset = reset_peak()
    base_kb = status_kb("VmRSS")
    result: dict = {"read_s": read_s, "n_bytes": n_bytes, "n_docs": len(docs)}
    merged: list[bytes] = []

    if tool == "bytepair":
        import bytepair

        t0 = time.perf_counter()
        tok = bytepair.train(docs, vocab, pretokenizer=pretok, progress=False)
        result["train_s"] = time.perf_counter() - t0
        result["distinct_pretokens"] = tok.training.distinct_pretokens
        result["stop_reason"] = tok.training.stop_reason
        merged = [left + right for left, right in tok.merges]
    elif tool == "bytepair phases":
        from bytepair import _native
        from bytepair.pretokenizers import resolve
        from bytepair.training.corpus import BATCH_CHARS

        pre = resolve(pretok)
        t0 = time.perf_counter()
        counter = _native.PretokenCounter(
            [], pre.kind, pre.pattern if pre.kind == "regex" else None
        )
        batch, chars = [], 0
        for d in docs:
            batch.append(d)
            chars += len(d)
            if chars >= BATCH_CHARS:
                counter.add_texts(batch)
                batch, chars = [], 0
        if batch:
            counter.add_texts(batch)
        result["count_s"] = time.perf_counter() - t0
        result["distinct_pretokens"] = len(counter)
        t0 = time.perf_counter()
        settings = {
            "vocab_size": vocab,
            "special_tokens": [],
            "min_frequency": 1,
            "max_token_length": None,
            "checkpoint": None,
        }
        tokens = _native.train_bpe(counter, settings).tokens
        result["merge_s"] = time.perf_counter() - t0
        result["train_s"] = result["count_s"] + result["merge_s"]
        merged = [bytes(tokens[i]) for i in range(256, len(tokens))]
    elif tool == "HF tokenizers":
        import tokenizers
        from tokenizers import Regex, models, pre_tokenizers, trainers

        from bytepair.formats.byte_level import unicode_text_to_bytes

        tok = tokenizers.Tokenizer(models.BPE())
        if job.get("hf_split_pattern"):
            tok.pre_tokenizer = pre_tokenizers.Sequence(
                [
                    pre_tokenizers.Split(Regex(job["hf_split_pattern"]), behavior="isolated"),
                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
                ]
            )
        else:
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab,
            min_frequency=1,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        t0 = time.perf_counter()
        tok.train_from_iterator(docs, trainer=trainer, length=len(docs))
        result["train_s"] = time.perf_counter() - t0
        for merge in json.loads(tok.to_str())["model"]["merges"]:
            left, right = merge if isinstance(merge, list) else merge.split(" ", 1)
            merged.append(unicode_text_to_bytes(left) + unicode_text_to_bytes(right))
    elif tool == "rustbpe":
        import rustbpe

        tok = rustbpe.Tokenizer()
        t0 = time.perf_counter()
        tok.train_from_iterator(iter(docs), vocab, pattern=job["pattern"])
        result["train_s"] = time.perf_counter() - t0
        ranks = sorted(tok.get_mergeable_ranks(), key=lambda item: item[1])
        merged = [bytes(token) for token, rank in ranks if rank >= 256]
    else:
        raise SystemExit(f"unknown tool {tool}")

    result["peak_kb"] = status_kb("VmHWM") if peak_reset else -1
    result["base_kb"] = base_kb
    result["maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result["n_merges"] = len(merged)
    if job.get("merges_out"):
        Path(job["merges_out"]).write_text(json.dumps(merged_hex(merged)))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "worst":
        worst_main(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "train":
        train_main(json.loads(sys.argv[2]))
    else:
        raise SystemExit(__doc__)
