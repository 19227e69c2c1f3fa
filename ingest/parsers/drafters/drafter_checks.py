"""An EAGLE-3 drafter checkpoint's vocabulary mapping: reading it, judging it, comparing two.

A drafter's lm_head predicts over a draft vocabulary (usually 32,000 ids); two tensors in its
safetensors map that to the target's vocabulary (checked against the code that reads them):
- ``d2t`` (int64 ``[draft_vocab_size]``) holds **offsets**: target id = draft id + d2t[draft id].
  SpecForge writes ``d2t = used_tokens[i] - i`` (specforge/data/preprocessing.py); SGLang loads
  ``hot_token_id = d2t + arange`` (python/sglang/srt/models/llama_eagle3.py); vLLM renames it
  ``draft_id_to_target_id`` and adds the same ``arange`` when it maps logits.
- ``t2d`` (bool ``[vocab_size]``) marks the target ids the draft vocabulary holds. The engines do
  not read it at inference; training does, so a ``t2d`` that disagrees with ``d2t`` means the two
  were not made together.
With neither tensor and no ``draft_vocab_size`` the drafter predicts over the full target vocabulary
(SGLang then sets draft_vocab_size = vocab_size). SpecForge's untrained buffers are an all-zero
``d2t`` and an all-true ``t2d``: such a checkpoint maps draft id i to target id i.

``load`` reads a checkpoint (a folder, one .safetensors, or a config.json alone) touching only its
config, its safetensors headers and the two mapping tensors' bytes; ``verdicts`` judges it;
``compare`` sets two mappings side by side, position by position and as sets. Pure: no store.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ingest.errors import MalformedInput
from ingest.parsers.drafters import safetensors

CONFIG = "config.json"
INDEX = "model.safetensors.index.json"
CONFIG_HEAD = re.compile(rb'^\s*\{')
# A config.json of a drafter, not of its target: it names the draft vocabulary or an EAGLE architecture.
DRAFTER_KEYS = re.compile(rb'"draft_vocab_size"\s*:|"architectures"\s*:\s*\[[^\]]*[Ee]agle')
MAPPING_NAMES = ("d2t", "t2d")
SAMPLED_BLOCKS = 16  # 4 KiB blocks of each weights file that go into a checkpoint's fingerprint
BLOCK = 4096
OK, SUSPICIOUS, WRONG, NOT_CHECKED = "ok", "suspicious", "wrong", "not checked"
INVALID_FORM = "d2t is neither valid offsets"
SEVERITY = {WRONG: 3, SUSPICIOUS: 2, NOT_CHECKED: 1, OK: 0}


def looks_like_drafter_config(head: bytes) -> bool:
    return bool(CONFIG_HEAD.match(head)) and DRAFTER_KEYS.search(head) is not None


def config_claims_drafter(path: Path) -> bool:
    try:
        with open(path, "rb") as stream:
            return looks_like_drafter_config(stream.read(65536))
    except OSError:
        return False


def is_drafter_folder(folder: Path) -> bool:
    """A folder read as one drafter: it holds a drafter's config.json (weights or not: a folder
    without them is reported, not read file by file)."""
    return (folder / CONFIG).is_file() and config_claims_drafter(folder / CONFIG)


def unit_of(path: Path) -> Path:
    """What ``path`` is part of: a file inside a drafter folder that holds weights is that folder
    (so ingesting its config.json, a shard or the folder gives one source); otherwise ``path``."""
    if path.is_file() and is_drafter_folder(path.parent) and weights_files(path.parent):
        return path.parent
    return path


def weights_files(folder: Path) -> list[Path]:
    """The folder's safetensors: the shards its index lists, else every ``*.safetensors`` in it."""
    index = folder / INDEX
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map", {})
        except (OSError, ValueError, AttributeError, RecursionError):
            return sorted(folder.glob("*.safetensors"))
        return [folder / name for name in sorted(set(weight_map.values()) if isinstance(weight_map, dict) else ())]
    return sorted(p for p in folder.glob("*.safetensors") if p.is_file())


@dataclass
class Checkpoint:
    """What ``load`` read: the config, which files held weights, the mapping tensors (or None)."""

    path: Path
    name: str
    config: dict[str, Any] | None
    weights: list[Path] = field(default_factory=list)
    tensor_count: int = 0
    d2t: np.ndarray | None = None
    t2d: np.ndarray | None = None
    lm_head_rows: int | None = None
    bytes_read: int = 0
    fingerprint_parts: list[bytes] = field(default_factory=list, repr=False)

    @property
    def vocab_size(self) -> int | None:
        return _int(self.config, "vocab_size")

    @property
    def draft_vocab_size(self) -> int | None:
        return _int(self.config, "draft_vocab_size")

    @property
    def architecture(self) -> str | None:
        names = (self.config or {}).get("architectures")
        return ", ".join(map(str, names)) if isinstance(names, list) and names else None

    @property
    def hidden_size(self) -> int | None:
        return _int(self.config, "hidden_size")

    def target_ids(self) -> np.ndarray | None:
        """Draft id → target id as the engines load it (draft id + offset); None without ``d2t``."""
        if self.d2t is None:
            return None
        return self.d2t.astype(np.int64) + np.arange(len(self.d2t), dtype=np.int64)

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for part in self.fingerprint_parts:
            digest.update(len(part).to_bytes(8, "little") + part)
        return digest.hexdigest()


def _int(config: dict[str, Any] | None, key: str) -> int | None:
    value = (config or {}).get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_config(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise MalformedInput(path, f"cannot be read ({error.strerror})", hint="check the path and its permissions") from error
    except UnicodeDecodeError as error:
        raise MalformedInput(path, "config.json is not UTF-8 text", hint="re-copy config.json from the checkpoint") from error
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise MalformedInput(path, f"config.json is not JSON ({error.msg} at line {error.lineno})", line=error.lineno,
                             hint="re-copy config.json from the checkpoint, or fix it by hand") from error
    except (ValueError, RecursionError) as error:  # a 5,000-digit number, lists nested 5,000 deep
        raise MalformedInput(path, f"config.json is not a config ({type(error).__name__})",
                             hint="re-copy config.json from the checkpoint") from error
    if not isinstance(config, dict):
        raise MalformedInput(path, "config.json is not a JSON object", hint="re-copy config.json from the checkpoint")
    return config


def load(path: Path) -> Checkpoint:
    """A drafter folder, one safetensors file (with the config.json beside it, if any), or a
    config.json alone (its mapping is then not checked)."""
    path = unit_of(path)
    if path.is_dir():
        if not (path / CONFIG).is_file() and not weights_files(path):
            raise MalformedInput(path, "the folder holds neither config.json nor safetensors",
                                 hint="pass the drafter's folder (config.json + model.safetensors or its shards)")
        config_path: Path | None = path / CONFIG if (path / CONFIG).is_file() else None
        files = weights_files(path)
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            raise MalformedInput(path / INDEX, f"lists shards that are not in the folder: {', '.join(missing[:3])}",
                                 hint="copy every shard the index lists beside it")
        if not files:
            raise MalformedInput(path, "the folder holds config.json but no safetensors weights",
                                 hint="copy model.safetensors (or its shards and model.safetensors.index.json) beside "
                                      "config.json, or ingest config.json by name to record the config alone")
        name = path.name
    elif safetensors.looks_like_safetensors(_head(path)) or path.suffix == ".safetensors":
        beside = path.parent / CONFIG
        config_path = beside if beside.is_file() and config_claims_drafter(beside) else None
        files = [path]
        name = path.parent.name if config_path is not None else path.name.removesuffix(".safetensors")
    else:
        config_path, files = path, []
        name = path.parent.name if path.name == CONFIG else path.name.removesuffix(".json").removesuffix(".config")
    checkpoint = Checkpoint(path=path, name=name, config=None)
    if config_path is not None:
        checkpoint.config = read_config(config_path)
        raw = config_path.read_bytes()
        checkpoint.bytes_read += len(raw)
        checkpoint.fingerprint_parts.append(raw)
    checkpoint.weights = files
    for file in files:
        _read_weights(checkpoint, file)
    return checkpoint


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as stream:
            return stream.read(16)
    except OSError as error:
        raise MalformedInput(path, f"cannot be read ({error.strerror})", hint="check the path and its permissions") from error


def _read_weights(checkpoint: Checkpoint, file: Path) -> None:
    try:
        stream = open(file, "rb")
    except OSError as error:
        raise MalformedInput(file, f"cannot be read ({error.strerror})", hint="check the path and its permissions") from error
    with stream:
        counter = safetensors.ByteCounter(stream)
        header = safetensors.read_header(file, counter)
        checkpoint.tensor_count += len(header.tensors)
        checkpoint.fingerprint_parts += [file.name.encode(), header.raw]
        for name, info in header.tensors.items():
            kind = mapping_kind(name)
            if kind is None:
                if name.endswith("lm_head.weight") and info.shape:
                    checkpoint.lm_head_rows = info.shape[0]
                continue
            _check_mapping(file, name, kind, info)
            values = header.read(name)
            checkpoint.fingerprint_parts.append(values.tobytes())
            setattr(checkpoint, kind, values)
        # Sampled blocks of the weights make two checkpoints with equal headers and mappings (a
        # fine-tuned drafter) two sources, without hashing 2 GB.
        span = max(header.file_size - header.data_start, 0)
        for k in range(SAMPLED_BLOCKS if span else 0):
            checkpoint.fingerprint_parts.append(counter.read_at(header.data_start + span * k // SAMPLED_BLOCKS, BLOCK))
        checkpoint.bytes_read += counter.bytes_read


def mapping_kind(name: str) -> str | None:
    """``d2t``/``t2d`` for a tensor of that name (bare, or under a prefix such as ``model.``)."""
    last = name.rsplit(".", 1)[-1]
    return last if last in MAPPING_NAMES else None


def _check_mapping(file: Path, name: str, kind: str, info: safetensors.TensorInfo) -> None:
    wanted = "I64" if kind == "d2t" else "BOOL"
    what = "offsets, int64 [draft_vocab_size]" if kind == "d2t" else "a mask, bool [vocab_size]"
    if info.dtype != wanted or len(info.shape) != 1:
        raise MalformedInput(
            file, f"mapping tensor {name!r} is {info.dtype} {list(info.shape)}; {kind} must be {what}", key=name,
            hint="regenerate the mapping with SpecForge (d2t = used_tokens[i] - i; t2d = the used-token mask)",
        )


# --- verdicts -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    check: str
    status: str  # ok / suspicious / wrong / not checked
    reason: str
    todo: str = ""


def mapping_form(checkpoint: Checkpoint) -> str:
    """How ``d2t`` is written: offsets, absolute ids (stored where offsets belong), identity (all
    offsets 0), invalid; or no mapping: full target vocabulary, t2d only, not checked (no weights)."""
    if not checkpoint.weights:
        return "not checked (no weights)"
    d2t, vocab = checkpoint.d2t, _vocab(checkpoint)
    if d2t is None:
        if checkpoint.t2d is not None:
            return "t2d only"
        draft = checkpoint.draft_vocab_size
        return "full target vocabulary" if draft is None or draft == vocab else "missing (config has a draft vocabulary)"
    if len(d2t) and not d2t.any() and (vocab is None or len(d2t) < vocab):
        return "identity (all offsets 0)"
    targets = d2t.astype(np.int64) + np.arange(len(d2t), dtype=np.int64)
    as_offsets, as_absolute = _valid_ids(targets, vocab), _valid_ids(d2t, vocab)
    if checkpoint.t2d is not None:  # the mask decides which reading was meant, when it matches one
        marked = np.flatnonzero(checkpoint.t2d)
        if as_offsets and np.array_equal(np.sort(targets), marked):
            return "offsets"
        if as_absolute and np.array_equal(np.sort(d2t), marked):
            return "absolute ids"
    # Both readings valid: offsets of a real mapping repeat (consecutive target ids share an
    # offset, and the most frequent tokens always hold runs such as the byte tokens); absolute
    # ids never do.
    if as_offsets and not (as_absolute and len(d2t) > 1 and len(np.unique(d2t)) == len(d2t)):
        return "offsets"
    return "absolute ids" if as_absolute else "invalid"


def _vocab(checkpoint: Checkpoint) -> int | None:
    return checkpoint.vocab_size if checkpoint.vocab_size is not None else (
        len(checkpoint.t2d) if checkpoint.t2d is not None else None)


def _valid_ids(ids: np.ndarray | None, vocab: int | None) -> bool:
    if ids is None or not len(ids):
        return False
    in_range = ids.min() >= 0 and (vocab is None or ids.max() < vocab)
    return bool(in_range and len(np.unique(ids)) == len(ids))


def verdicts(checkpoint: Checkpoint) -> list[Verdict]:
    """One verdict per integrity check, each with its reason and what to do."""
    if not checkpoint.weights:
        return [Verdict("weights", NOT_CHECKED, "no weights: mapping not checked (config.json alone)",
                        "ingest the drafter's folder (config.json + safetensors) to check its mapping")]
    form = mapping_form(checkpoint)
    draft = checkpoint.draft_vocab_size
    if checkpoint.d2t is None and checkpoint.t2d is None:
        if form == "full target vocabulary":
            return [Verdict("mapping", OK, "no mapping tensors and no smaller draft_vocab_size: the drafter predicts over the full target vocabulary"),
                    _config_sizes(checkpoint)]
        return [Verdict("mapping", WRONG, f"config.json says draft_vocab_size {draft:,} but the weights hold no d2t: "
                        f"engines would read draft ids as target ids (the first {draft:,})",
                        "add the d2t/t2d tensors the drafter was trained with"), _config_sizes(checkpoint)]
    if checkpoint.d2t is None:
        size = int(checkpoint.t2d.sum()) if checkpoint.t2d is not None else 0
        return [Verdict("mapping", WRONG, f"t2d marks {size:,} target ids but there is no d2t: SGLang and vLLM read only "
                        "d2t, so draft id i would stand for target id i", "add d2t = (sorted marked ids) − arange"),
                _config_sizes(checkpoint)]
    targets = checkpoint.target_ids()
    assert targets is not None
    vocab = _vocab(checkpoint)
    found = [_form_verdict(checkpoint, form), _range_verdict(targets, vocab), _injective_verdict(targets),
             _t2d_verdict(checkpoint, targets), _identity_verdict(checkpoint, form), _config_sizes(checkpoint)]
    return found


def _form_verdict(checkpoint: Checkpoint, form: str) -> Verdict:
    if form == "offsets":
        return Verdict("mapping form", OK, "d2t holds offsets: draft id + d2t[id] is a target id")
    if form == "absolute ids":
        d2t = checkpoint.d2t
        assert d2t is not None
        last = len(d2t) - 1
        return Verdict("mapping form", WRONG, f"d2t holds absolute target ids (d2t[{last:,}] = {int(d2t[last]):,}), but engines "
                       f"add arange to it: draft id {last:,} would land on {int(d2t[last]) + last:,}, every draft id past 0 on a wrong token",
                       "rewrite d2t as offsets: d2t[i] = target_id[i] − i")
    if form == "identity (all offsets 0)":
        return Verdict("mapping form", OK, "d2t holds offsets, all of them 0 (see 'identity')")
    return Verdict("mapping form", WRONG, f"{INVALID_FORM} nor valid absolute ids of the target vocabulary",
                   "regenerate the mapping from the training data's token counts")


def _range_verdict(targets: np.ndarray, vocab: int | None) -> Verdict:
    if vocab is None:
        return Verdict("in range", NOT_CHECKED, "no vocab_size in config.json and no t2d: the target vocabulary's size is unknown",
                       "put config.json beside the weights")
    outside = int(((targets < 0) | (targets >= vocab)).sum())
    if outside:
        return Verdict("in range", WRONG, f"{outside:,} of {len(targets):,} draft ids map outside the target vocabulary [0, {vocab:,})",
                       "regenerate d2t for this target's tokenizer")
    return Verdict("in range", OK, f"every mapped id is within the target vocabulary [0, {vocab:,})")


def _injective_verdict(targets: np.ndarray) -> Verdict:
    distinct = len(np.unique(targets))
    if distinct < len(targets):
        return Verdict("injective", WRONG, f"{len(targets) - distinct:,} draft id(s) land on a target id another draft id has "
                       f"({distinct:,} distinct targets for {len(targets):,} draft ids)", "regenerate d2t: each draft id needs its own target id")
    return Verdict("injective", OK, f"{len(targets):,} draft ids, {distinct:,} distinct target ids")


def _t2d_verdict(checkpoint: Checkpoint, targets: np.ndarray) -> Verdict:
    t2d = checkpoint.t2d
    if t2d is None:
        return Verdict("t2d consistent", NOT_CHECKED, "no t2d tensor (engines do not read it; training does)")
    marked = np.flatnonzero(t2d)
    in_mask = targets[(targets >= 0) & (targets < len(t2d))]
    same = len(marked) == len(targets) and len(in_mask) == len(targets) and bool(t2d[in_mask].all())
    if same:
        return Verdict("t2d consistent", OK, f"t2d marks the same {len(marked):,} target ids as d2t")
    shared = len(np.intersect1d(marked, targets))
    return Verdict("t2d consistent", WRONG, f"t2d marks {len(marked):,} target ids, d2t maps to {len(np.unique(targets)):,}; "
                   f"{shared:,} in both", "regenerate d2t and t2d together (they were not made from one token list)")


def _identity_verdict(checkpoint: Checkpoint, form: str) -> Verdict:
    d2t = checkpoint.d2t
    assert d2t is not None
    if form == "identity (all offsets 0)":
        return Verdict("identity", SUSPICIOUS, f"all offsets are 0: the draft vocabulary is just the first {len(d2t):,} target ids "
                       "(SpecForge's untrained default, or arange written where offsets belong)",
                       "check the mapping was generated from the training data, not left at its default")
    return Verdict("identity", OK, "not the identity: the mapping was generated")


def _config_sizes(checkpoint: Checkpoint) -> Verdict:
    if checkpoint.config is None:
        return Verdict("config sizes", NOT_CHECKED, "no config.json beside the weights", "put config.json beside the weights")
    problems = []
    draft, vocab = checkpoint.draft_vocab_size, checkpoint.vocab_size
    if checkpoint.d2t is not None and draft is not None and len(checkpoint.d2t) != draft:
        problems.append(f"d2t has {len(checkpoint.d2t):,} entries, draft_vocab_size is {draft:,}")
    if checkpoint.d2t is not None and draft is None:
        problems.append(f"d2t has {len(checkpoint.d2t):,} entries, config.json has no draft_vocab_size")
    if checkpoint.t2d is not None and vocab is not None and len(checkpoint.t2d) != vocab:
        problems.append(f"t2d has {len(checkpoint.t2d):,} entries, vocab_size is {vocab:,}")
    expected_rows = draft if draft is not None else vocab
    if checkpoint.lm_head_rows is not None and expected_rows is not None and checkpoint.lm_head_rows != expected_rows:
        problems.append(f"lm_head has {checkpoint.lm_head_rows:,} rows, the config's draft vocabulary {expected_rows:,}")
    if problems:
        return Verdict("config sizes", WRONG, "; ".join(problems), "make config.json and the weights come from one checkpoint")
    return Verdict("config sizes", OK, "draft_vocab_size and vocab_size in config.json match the tensors")


def overall(found: list[Verdict]) -> str:
    """The worst status: wrong > suspicious > not checked > ok."""
    return max((v.status for v in found), key=SEVERITY.__getitem__, default=NOT_CHECKED)


def headline(found: list[Verdict]) -> str:
    """The one line a list shows: the worst verdict's reason (or "all checks pass")."""
    # Among equally bad verdicts the most specific speaks: "3 ids out of range" over "d2t is invalid".
    # A form that is merely "invalid" yields to the check that says why.
    order = ("mapping form", "in range", "injective", "identity", "t2d consistent", "config sizes")
    ranked = sorted(found, key=lambda v: (-SEVERITY[v.status], v.reason.startswith(INVALID_FORM),
                                          order.index(v.check) if v.check in order else len(order)))
    worst = ranked[0] if ranked else None
    if worst is None or worst.status == OK:
        return "all checks pass"
    return f"{worst.check}: {worst.reason}"


def verdicts_json(found: list[Verdict]) -> str:
    return json.dumps([asdict(v) for v in found])


# --- comparison ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Comparison:
    """Two mappings side by side. Position-wise: can one drafter's lm_head rows be read with the
    other's mapping? Set-wise: how alike are the two draft vocabularies?"""

    name_a: str
    name_b: str
    draft_vocab_size_a: int
    draft_vocab_size_b: int
    positions_compared: int
    positions_differ: int
    positions_agree: int
    first_difference: int | None
    shared_target_tokens: int
    only_a: int
    only_b: int
    jaccard: float

    @property
    def draft_vocab_size(self) -> int:
        return self.positions_compared

    def record(self) -> dict[str, Any]:
        out = asdict(self)
        out["draft_vocab_size"] = self.draft_vocab_size
        return out

    def sentences(self) -> tuple[str, str]:
        """(position-wise, set-wise) in words, each saying which question it answers."""
        n = self.positions_compared
        positions = (f"Position by position, the mappings differ at {self.positions_differ:,} of {n:,} draft ids and agree at "
                     f"{self.positions_agree:,}: this says whether one drafter's predictions can be read with the other's mapping "
                     "(an lm_head row stands for a different target token wherever they differ).")
        sets = (f"As sets, the draft vocabularies share {self.shared_target_tokens:,} target tokens (Jaccard {self.jaccard:.3f}; "
                f"{self.only_a:,} only in {self.name_a}, {self.only_b:,} only in {self.name_b}): this says how alike the vocabularies "
                "are. One token added to a sorted mapping shifts every later position, so positions can differ while the sets mostly agree.")
        return positions, sets


def compare(a: np.ndarray, b: np.ndarray, name_a: str = "A", name_b: str = "B") -> Comparison:
    """Compare two draft → target id arrays (``Checkpoint.target_ids``)."""
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    set_a, set_b = np.unique(a), np.unique(b)
    shared = len(np.intersect1d(set_a, set_b, assume_unique=True))
    union = len(set_a) + len(set_b) - shared
    return Comparison(
        name_a, name_b, len(a), len(b), n, int(len(differ)), int(n - len(differ)),
        int(differ[0]) if len(differ) else None, shared, len(set_a) - shared, len(set_b) - shared,
        shared / union if union else 1.0,
    )


def divergence(a: np.ndarray, b: np.ndarray, bins: int = 64) -> list[tuple[int, int, float]]:
    """Where along the draft ids two mappings differ: (first id, last id, share differing) per bin."""
    n = min(len(a), len(b))
    if not n:
        return []
    edges = np.linspace(0, n, min(bins, n) + 1).astype(int)
    differs = a[:n] != b[:n]
    return [(int(lo), int(hi) - 1, float(differs[lo:hi].mean())) for lo, hi in zip(edges[:-1], edges[1:], strict=True) if hi > lo]
