"""Classification rules for profiler traces, declared as data.

Two questions are answered here and nowhere else:

* **Which kind of work is a GPU kernel?** ``KERNEL_CLASS_RULES``: the first
  pattern (a case-insensitive regex searched in the kernel name) that matches
  decides; a name no pattern claims is ``elementwise/other``. Memory copies and
  sets are recognised by their event category (``CATEGORY_CLASSES``), not by name.
* **Which speculative phase was the CPU in?** ``PHASE_RULES``: a CPU range event
  (``user_annotation`` from ``record_function``, ``python_function`` from
  ``with_stack``, ``gpu_user_annotation`` as the GPU-side envelope) whose name
  matches a rule is a *phase marker*. A kernel gets its phase from the markers
  around its launch (see ``ingest/derive/breakdown.py``): the highest priority present
  decides, and within one priority the outermost marker. Priorities rank how
  much a marker knows: an explicit ``step[...]`` span names the forward it wraps
  (``EXPLICIT``), a speculative-worker function names the phase the code is in
  (``SPECIFIC``), a ``model_runner`` function runs in every phase (``GENERIC``).
  Outermost because worker functions call helpers whose names say another phase:
  ``draft_forward`` called from ``forward_draft_extend_after_decode`` is
  draft-extend work.

A user rules file (JSON or TOML) adds patterns ahead of the built-in ones, so a
team can teach specdash its own kernels and functions without editing code.
``docs/breakdown.md`` documents every rule and the rules-file format.
"""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.errors import MalformedInput

COMMUNICATION = "communication"
ATTENTION = "attention"
GEMM = "gemm"
MOE = "moe"
MEMCPY = "memcpy"
OTHER_KERNEL = "elementwise/other"
KERNEL_CLASSES = (COMMUNICATION, ATTENTION, MOE, GEMM, MEMCPY, OTHER_KERNEL)  # also the overlap priority order

DRAFT = "draft"
VERIFY = "verify"
DRAFT_EXTEND = "draft_extend"
TARGET_PREFILL = "target_prefill"
DECODE = "decode"
OTHER_PHASE = "other"
PHASES = (VERIFY, DRAFT, DRAFT_EXTEND, DECODE, TARGET_PREFILL, OTHER_PHASE)  # also the overlap priority order
UNATTRIBUTED = "unattributed"  # time no rule claims: shown, never hidden
IDLE = "idle"  # the GPU did nothing inside a cycle

STEP_ANNOTATION = "step_annotation"
PYTHON_STACK = "python_stack"
USER_RULE = "user_rule"

CPU_RANGE_CATEGORIES = ("user_annotation", "python_function")
GPU_RANGE_CATEGORIES = ("gpu_user_annotation",)

EXPLICIT = 3  # step[...] spans: they name the forward they wrap, whatever Python function runs inside
SPECIFIC = 2  # speculative-worker functions (with_stack): the phase the worker is in
GENERIC = 1  # model-runner functions that every forward passes through
USER_DEFAULT = EXPLICIT + 1  # a rules-file pattern beats every built-in unless it says otherwise


@dataclass(frozen=True)
class KernelClassRule:
    kernel_class: str
    pattern: str
    why: str = ""


@dataclass(frozen=True)
class PhaseRule:
    phase: str
    pattern: str
    source: str
    priority: int = SPECIFIC
    categories: tuple[str, ...] = CPU_RANGE_CATEGORIES + GPU_RANGE_CATEGORIES
    why: str = ""


CATEGORY_CLASSES: dict[str, str] = {"gpu_memcpy": MEMCPY, "gpu_memset": MEMCPY}

KERNEL_CLASS_RULES: tuple[KernelClassRule, ...] = (
    KernelClassRule(COMMUNICATION, r"^\s*(void\s+)?nccl", "NCCL: ncclKernel_*, ncclDevKernel_* (the suffix is not reliable)"),
    KernelClassRule(COMMUNICATION, r"cross_device_reduce_[12]stage", "SGLang/vLLM custom all-reduce"),
    KernelClassRule(COMMUNICATION, r"(one|two)_?shot\w*all_?reduce|all_?reduce\w*(one|two)_?shot", "one-shot/two-shot all-reduce"),
    KernelClassRule(COMMUNICATION, r"all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|mscclpp|deep_?ep", "other collectives"),
    KernelClassRule(MOE, r"moe|fused_experts|expert|topk_softmax|grouped_?gemm|group_gemm|m_grouped", "mixture-of-experts"),
    KernelClassRule(
        ATTENTION,
        r"flash_?attn|flash_fwd|flash_bwd|flash::|flashmla|fmha|attention|attn|(?<![a-z])mla(?![a-z])"
        r"|batch_?decode|batch_?prefill|single_?prefill|single_?decode|merge_?state",
        "attention (flashinfer's sampling/norm kernels are not attention, so not a bare 'flash')",
    ),
    KernelClassRule(
        GEMM,
        r"(?<!fb)gemm|gemv|matmul|cublas|cutlass|xmma|nvjet|addmm|(?<![a-z])b?mm(?![a-z])|splitk|convolv|conv[123]d|winograd",
        "dense matmul and convolution",
    ),
)

# SGLang names its forward spans ``step[<ForwardMode> bs=N ...]`` (2026-04 on);
# draft forwards may carry a ``draft `` prefix. The brief's shorter spellings
# (``step[VERIFY``, ``step[DRAFT``) are accepted too. Case does not matter.
_STEP = r"^\s*step\[\s*"
_DRAFT_STEP = r"^\s*draft\s+step\[\s*"
# Python stack events read ``path/file.py(123): function``.
_SPEC_WORKER = r"(eagle|spec|mtp|standalone|multi_layer)\w*\.py\(\d+\):\s*"
_MODEL_RUNNER = r"model_runner\.py\(\d+\):\s*"

PHASE_RULES: tuple[PhaseRule, ...] = (
    PhaseRule(DRAFT_EXTEND, _DRAFT_STEP + r"(draft_extend\w*|extend)\b", STEP_ANNOTATION, EXPLICIT, why="drafter's extend pass"),
    PhaseRule(DRAFT, _DRAFT_STEP, STEP_ANNOTATION, EXPLICIT, why="any other drafter forward"),
    PhaseRule(DRAFT_EXTEND, _STEP + r"draft_extend", STEP_ANNOTATION, EXPLICIT, why="DRAFT_EXTEND, DRAFT_EXTEND_V2"),
    PhaseRule(VERIFY, _STEP + r"(target_)?verify\b", STEP_ANNOTATION, EXPLICIT, why="TARGET_VERIFY"),
    PhaseRule(DRAFT, _STEP + r"draft\b", STEP_ANNOTATION, EXPLICIT),
    PhaseRule(DECODE, _STEP + r"decode\b", STEP_ANNOTATION, EXPLICIT, why="in a trace with verify steps this is a draft forward"),
    PhaseRule(TARGET_PREFILL, _STEP + r"(extend|prefill|mixed|split_prefill)\b", STEP_ANNOTATION, EXPLICIT),
    PhaseRule(OTHER_PHASE, _STEP, STEP_ANNOTATION, EXPLICIT, why="IDLE, DUMMY_FIRST and future modes"),
    PhaseRule(DRAFT_EXTEND, _SPEC_WORKER + r"(forward_draft_extend\w*|_?draft_extend\w*)$", PYTHON_STACK),
    PhaseRule(DRAFT, _SPEC_WORKER + r"(draft|draft_forward|_draft_\w+)$", PYTHON_STACK),
    PhaseRule(VERIFY, _SPEC_WORKER + r"(verify|_verify\w*)$", PYTHON_STACK),
    PhaseRule(TARGET_PREFILL, _SPEC_WORKER + r"forward_target_extend$", PYTHON_STACK),
    PhaseRule(DECODE, _MODEL_RUNNER + r"forward_decode$", PYTHON_STACK, GENERIC),
    PhaseRule(TARGET_PREFILL, _MODEL_RUNNER + r"forward_extend$", PYTHON_STACK, GENERIC),
    PhaseRule(DECODE, r"cuda_graph_runner\.py\(\d+\):\s*replay$", PYTHON_STACK, GENERIC, why="graphs replay decode steps"),
)


class TraceRules:
    """Compiled rules with per-name caches (kernel and function names repeat millions of times)."""

    def __init__(
        self,
        kernel_rules: tuple[KernelClassRule, ...] = KERNEL_CLASS_RULES,
        phase_rules: tuple[PhaseRule, ...] = PHASE_RULES,
        origin: str = "built-in",
    ) -> None:
        self.kernel_rules = kernel_rules
        self.phase_rules = phase_rules
        self.origin = origin
        self._kernel_patterns = [(rule, re.compile(rule.pattern, re.IGNORECASE)) for rule in kernel_rules]
        self._phase_patterns = [(rule, re.compile(rule.pattern, re.IGNORECASE)) for rule in phase_rules]
        self._class_cache: dict[tuple[str, str], str] = {}
        self._phase_cache: dict[tuple[str, str], PhaseRule | None] = {}

    def kernel_class(self, name: str, category: str = "kernel") -> str:
        key = (name, category)
        found = self._class_cache.get(key)
        if found is None:
            found = CATEGORY_CLASSES.get(category) or next(
                (rule.kernel_class for rule, pattern in self._kernel_patterns if pattern.search(name)), OTHER_KERNEL
            )
            self._class_cache[key] = found
        return found

    def phase_marker(self, name: str, category: str) -> PhaseRule | None:
        """The rule that makes this range event a phase marker, or None."""
        key = (name, category)
        if key in self._phase_cache:
            return self._phase_cache[key]
        found = next(
            (rule for rule, pattern in self._phase_patterns if category in rule.categories and pattern.search(name)),
            None,
        )
        self._phase_cache[key] = found
        return found

    def with_user_rules(self, path: Path) -> TraceRules:
        kernel_rules, phase_rules = load_user_rules(path)
        return TraceRules(kernel_rules + self.kernel_rules, phase_rules + self.phase_rules, origin=f"built-in + {path}")


def default_rules() -> TraceRules:
    return TraceRules()


def rules_for(options_extra: dict[str, str]) -> TraceRules:
    """Built-in rules, plus the file named by ``ParseOptions.extra['trace_rules']`` when given."""
    user_file = options_extra.get("trace_rules")
    return default_rules().with_user_rules(Path(user_file)) if user_file else default_rules()


# --- the user rules file ------------------------------------------------------------------------

RULES_FILE_HINT = (
    'expected e.g. {"kernel_class": [{"class": "communication", "pattern": "^my_allreduce"}], '
    '"phase": [{"phase": "verify", "pattern": "my_verify_fn"}]} (JSON) or the same as TOML arrays of tables'
)


def load_user_rules(path: Path) -> tuple[tuple[KernelClassRule, ...], tuple[PhaseRule, ...]]:
    document = read_rules_document(path)
    kernel_rules = tuple(
        kernel_rule_from(path, index, entry) for index, entry in enumerate(list_at(path, document, "kernel_class"))
    )
    phase_rules = tuple(phase_rule_from(path, index, entry) for index, entry in enumerate(list_at(path, document, "phase")))
    unknown = set(document) - {"kernel_class", "phase"}
    if unknown:
        raise MalformedInput(path, f"unknown sections {sorted(unknown)}", key=sorted(unknown)[0], hint=RULES_FILE_HINT)
    return kernel_rules, phase_rules


def read_rules_document(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise MalformedInput(path, f"cannot read the trace rules file ({error.strerror})", hint="check the path") from error
    try:
        document = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise MalformedInput(path, f"not valid {'TOML' if path.suffix.lower() == '.toml' else 'JSON'}: {error}", hint=RULES_FILE_HINT) from error
    if not isinstance(document, dict):
        raise MalformedInput(path, "the rules file must hold an object/table at the top", hint=RULES_FILE_HINT)
    return document


def list_at(path: Path, document: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = document.get(key, [])
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise MalformedInput(path, f"{key!r} must be a list of objects", key=key, hint=RULES_FILE_HINT)
    return value


def checked_pattern(path: Path, where: str, entry: dict[str, Any]) -> str:
    pattern = entry.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise MalformedInput(path, "missing or empty 'pattern'", key=where, hint=RULES_FILE_HINT)
    try:
        re.compile(pattern)
    except re.error as error:
        raise MalformedInput(path, f"invalid regular expression {pattern!r}: {error}", key=where, hint="fix the pattern (Python re syntax)") from error
    return pattern


def kernel_rule_from(path: Path, index: int, entry: dict[str, Any]) -> KernelClassRule:
    where = f"kernel_class[{index}]"
    kernel_class = entry.get("class")
    if kernel_class not in KERNEL_CLASSES:
        raise MalformedInput(path, f"unknown class {kernel_class!r}", key=where, hint=f"use one of {', '.join(KERNEL_CLASSES)}")
    return KernelClassRule(kernel_class, checked_pattern(path, where, entry), str(entry.get("why", "user rule")))


def phase_rule_from(path: Path, index: int, entry: dict[str, Any]) -> PhaseRule:
    where = f"phase[{index}]"
    phase = entry.get("phase")
    if phase not in PHASES:
        raise MalformedInput(path, f"unknown phase {phase!r}", key=where, hint=f"use one of {', '.join(PHASES)}")
    categories = entry.get("categories", list(CPU_RANGE_CATEGORIES + GPU_RANGE_CATEGORIES))
    allowed = CPU_RANGE_CATEGORIES + GPU_RANGE_CATEGORIES
    if not isinstance(categories, list) or not set(categories) <= set(allowed):
        raise MalformedInput(path, f"'categories' must be a subset of {list(allowed)}", key=where, hint=RULES_FILE_HINT)
    priority = entry.get("priority", USER_DEFAULT)
    if not isinstance(priority, int):
        raise MalformedInput(
            path, "'priority' must be an integer", key=where,
            hint=f"higher wins when markers nest; built-ins use {GENERIC} (model runner), {SPECIFIC} (worker functions), {EXPLICIT} (step[...] spans)",
        )
    return PhaseRule(phase, checked_pattern(path, where, entry), USER_RULE, priority, tuple(categories), str(entry.get("why", "user rule")))
