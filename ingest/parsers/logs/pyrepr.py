"""Safe reading of the Python reprs that servers print as their configuration.

SGLang logs ``server_args=ServerArgs(model_path='...', tp_size=8, ...)`` (a
dataclass repr) and, in recent builds, ``server_args={'model_path': ..., ...}``
(a dict repr, ~18 KB on one line); vLLM logs ``with config: model='...',
speculative_config=SpeculativeConfig(...), ...``. They are Python source
*text*: we read them with ``ast`` (``ast.parse`` then ``ast.literal_eval`` per
value) and never evaluate them.

Values that are not literals (``SomeEnum.X``, ``device(type='cuda')``,
``torch.bfloat16``) are kept as their source text. ``inf``/``nan`` written as
bare names become floats. When the text is not valid Python at all (a line cut
short, ``<LoadFormat.AUTO: 'auto'>`` object reprs, vLLM's unquoted
``served_model_name=org/model``), a tolerant splitter still recovers every
``key=value`` it can, each value literal-evaluated when possible and kept as
text otherwise.
"""
from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

NAMED_CONSTANTS: dict[str, Any] = {
    "None": None,
    "True": True,
    "False": False,
    "inf": math.inf,
    "nan": math.nan,
    "Infinity": math.inf,
    "NaN": math.nan,
}

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")", "]", "}"}
QUOTES = {"'", '"'}


class ReprError(ValueError):
    """The text is not a call repr or dict repr we can read."""


def parse_repr(text: str) -> tuple[str | None, dict[str, Any]]:
    """``Name(k=v, ...)`` → ("Name", {...}); ``{'k': v, ...}`` → (None, {...}).

    Raises ``ReprError`` when nothing at all can be recovered.
    """
    text = text.strip()
    if text.startswith("{"):
        return None, parse_dict_repr(text)
    return parse_call_repr(text)


def parse_call_repr(text: str) -> tuple[str | None, dict[str, Any]]:
    """A dataclass-style repr ``Name(key=value, ...)``: its name and keyword values."""
    text = text.strip()
    return _fast_call(text) or ast_call_repr(text)


def ast_call_repr(text: str) -> tuple[str | None, dict[str, Any]]:
    """``parse_call_repr`` by ``ast`` alone (the reference the fast path is tested against)."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return _tolerant_call(text)
    if not isinstance(node, ast.Call) or node.args and not node.keywords:
        raise ReprError(f"not a Name(key=value, ...) repr: {text[:60]!r}")
    values = {kw.arg: node_value(kw.value, text) for kw in node.keywords if kw.arg is not None}
    return _callable_name(node.func, text), values


def parse_keyword_list(text: str) -> dict[str, Any]:
    """``key=value, key=value`` without the surrounding call (vLLM's ``with config:``)."""
    return parse_call_repr(f"_({text.strip().rstrip(',')})")[1]


def parse_dict_repr(text: str) -> dict[str, Any]:
    """A plain dict repr ``{'key': value, ...}``; non-string keys are turned into text."""
    text = text.strip()
    fast = None
    if text.startswith("{") and text.endswith("}"):
        plain = _json_dump(text, 1, len(text) - 1, JSON_DICT)
        fast = plain.values if plain else _fast_items(text, 1, len(text) - 1, DICT_KEY)
    return fast if fast else ast_dict_repr(text)


def ast_dict_repr(text: str) -> dict[str, Any]:
    """``parse_dict_repr`` by ``ast`` alone (the reference the fast path is tested against)."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return _tolerant_dict(text)
    if not isinstance(node, ast.Dict):
        raise ReprError(f"not a dict repr: {text[:60]!r}")
    value = node_value(node, text)
    return {str(key): item for key, item in value.items()}


def node_value(node: ast.expr, source: str) -> Any:
    """The Python value of a literal node; the source text of anything else."""
    try:
        return _as_json_like(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Name) and node.id in NAMED_CONSTANTS:
        return NAMED_CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node_value(node.operand, source)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [node_value(element, source) for element in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _dict_key(key, source): node_value(value, source)
            for key, value in zip(node.keys, node.values, strict=True)
        }
    return ast.get_source_segment(source, node) or ast.unparse(node)


def _as_json_like(value: Any) -> Any:
    """Tuples and sets become lists, so a config reads the same once stored as JSON."""
    if isinstance(value, (tuple, list, set, frozenset)):
        return [_as_json_like(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_json_like(item) for key, item in value.items()}
    return value


def _dict_key(node: ast.expr | None, source: str) -> Any:
    if node is None:  # ``{**other}``
        return "**"
    key = node_value(node, source)
    return key if isinstance(key, (str, int, float, bool)) or key is None else str(key)


def _callable_name(func: ast.expr, source: str) -> str | None:
    return ast.get_source_segment(source, func) or None


# --- the fast path: a dump made of simple items ----------------------------------------
# ``ast.parse`` of a whole ~6-18 KB dump runs at ~5 MB/s: a log of 1,898 server restarts spent most
# of its ingest there. Items whose value is a plain literal (a string without escapes, a number,
# None/True/False, a flat list of those) are read by one regex; any other value is cut at its
# top-level end and read by ``literal_or_text``, as the tolerant path reads it. Text the scan does
# not take whole goes to ``ast`` as before (tests/test_pyrepr.py: both paths agree on every dump).

_SIMPLE = r"'[^'\\\n]*'|\"[^\"\\\n]*\"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|None|True|False"
_VALUE = rf"(?P<simple>{_SIMPLE})|(?P<list>\[(?:(?:{_SIMPLE})(?:, (?:{_SIMPLE}))*)?\])"
CALL_KEY = re.compile(rf"(?P<key>[A-Za-z_]\w*)=(?:{_VALUE})?")
DICT_KEY = re.compile(rf"'(?P<key>[^'\\\n]*)': (?:{_VALUE})?")
_ITEM_SIMPLE = re.compile(_SIMPLE)
_CALL_NAME = re.compile(r"[A-Za-z_][\w.]*\(")


def _fast_call(text: str) -> tuple[str, dict[str, Any]] | None:
    head = _CALL_NAME.match(text)
    if head is None or not text.endswith(")"):
        return None
    plain = _json_dump(text, head.end(), len(text) - 1, JSON_CALL)
    values = plain.values if plain else _fast_items(text, head.end(), len(text) - 1, CALL_KEY)
    return (head.group()[:-1], values) if values else None


def _fast_items(text: str, start: int, end: int, item: re.Pattern[str]) -> dict[str, Any] | None:
    """``key=value, ...`` (or ``'key': value, ...``) between ``start`` and ``end``; None if not that simple."""
    values: dict[str, Any] = {}
    at = start
    match = item.match
    while at < end:
        found = match(text, at, end)
        if found is None:
            return None
        key, simple, listed = found.group("key", "simple", "list")
        if simple is not None:
            values[key] = _simple_value(simple)
            at = found.end()
        elif listed is not None:
            values[key] = [_simple_value(v) for v in _ITEM_SIMPLE.findall(listed)]
            at = found.end()
        else:
            stop = _value_end(text, found.end(), end)
            if stop is None:
                return None
            values[key] = literal_or_text(text[found.end():stop])
            at = stop
        if at < end:
            if text[at:at + 2] != ", ":
                return None
            at += 2
    return values


def _simple_value(token: str) -> Any:
    first = token[0]
    if first in QUOTES:
        return token[1:-1]
    if first == "N":
        return None
    if first in "TF":
        return first == "T"
    return float(token) if "." in token or "e" in token or "E" in token else int(token)


def outside_quotes(text: str, start: int, end: int) -> Iterator[tuple[int, str, int | None]]:
    """``(index, character, depth)`` for each character of ``text[start:end]`` outside quoted strings, ``depth`` the
    bracket depth after it; ``depth`` is None for a closer that does not match its opener, and the scan stops there.
    A scan that ends inside a quote yields a last ``(end, "", None)``."""
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for index in range(start, end):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in QUOTES:
            quote = char
            continue
        if char in OPENERS:
            stack.append(OPENERS[char])
        elif char in CLOSERS and (not stack or char != stack.pop()):
            yield index, char, None
            return
        yield index, char, len(stack)
    if quote:
        yield end, "", None


def _value_end(text: str, start: int, end: int) -> int | None:
    """Where the value starting at ``start`` ends: the first top-level ``", "``, or ``end``."""
    depth: int | None = 0
    for index, char, depth in outside_quotes(text, start, end):
        if depth is None:
            return None
        if char == "," and depth == 0 and text.startswith(", ", index):
            return index
    return end if depth == 0 else None


# --- the JSON path: a dump whose every value is plain ------------------------------------------
# Most dumps hold only strings without quotes or escapes, numbers, None/True/False and flat lists or
# dicts of those. Such a dump is checked whole by one regex, spelled as JSON outside its strings and
# read by ``json.loads``: no Python runs per item, ~3x the item loop above. Anything else (a quote or
# an escape in a string, a nested or non-literal value) takes that loop.

_PLAIN_STRING = r"'[^'\"\\\n\x00]*'"  # no quote, escape or NUL inside: its text is already JSON's
# A number as JSON spells it, but the integer -0 (json.dumps writes it 0: that one takes the item loop).
_PLAIN_NUMBER = r"(?:-?[1-9]\d*|0|-0(?=[.eE]))(?:\.\d+)?(?:[eE][-+]?\d+)?"
_PLAIN = rf"{_PLAIN_STRING}|{_PLAIN_NUMBER}|None|True|False"
_PLAIN_VALUE = (
    rf"(?:{_PLAIN}|\[(?:(?:{_PLAIN})(?:, (?:{_PLAIN}))*)?\]"
    rf"|\{{(?:{_PLAIN_STRING}: (?:{_PLAIN})(?:, {_PLAIN_STRING}: (?:{_PLAIN}))*)?\}})"
)
_PLAIN_CALL_ITEM = rf"(?!(?:None|True|False)=)[A-Za-z_]\w*={_PLAIN_VALUE}"
_PLAIN_DICT_ITEM = rf"{_PLAIN_STRING}: {_PLAIN_VALUE}"


@dataclass(frozen=True)
class JsonShape:
    body: re.Pattern[str]  # the whole text between the brackets, item by item
    keyword: bool  # a call's ``key=``, spelled ``"key": `` in JSON


JSON_CALL = JsonShape(re.compile(rf"{_PLAIN_CALL_ITEM}(?:, {_PLAIN_CALL_ITEM})*"), keyword=True)
JSON_DICT = JsonShape(re.compile(rf"{_PLAIN_DICT_ITEM}(?:, {_PLAIN_DICT_ITEM})*"), keyword=False)
# Substitutions by literal text, each pattern led by a literal: both keep the scan in C (before Python
# 3.12, a template with a group runs Python per match; a pattern led by a lookbehind tries every position).
_NEXT_KEY = re.compile(r", (?=[A-Za-z_]\w*=)")
JSON_CONSTANTS = tuple((re.compile(rf"{name}(?<!\w{name})(?!\w)"), json_name) for name, json_name in
                       (("None", "null"), ("True", "true"), ("False", "false")))
_SEGMENTS = "\x00"  # joins the text between strings, so that each substitution runs once a dump


@dataclass(frozen=True)
class JsonDump:
    values: dict[str, Any]
    text: str | None  # the JSON text it was read from, when ``config_json_text(values)`` spells it the same


def _json_dump(text: str, start: int, end: int, shape: JsonShape) -> JsonDump | None:
    """The items between ``start`` and ``end`` read as JSON; None when they are not all plain."""
    if shape.body.fullmatch(text, start, end) is None:
        return None
    parts = text[start:end].split("'")  # validated: every quote opens or closes a string
    between = _SEGMENTS.join(parts[0::2])
    if shape.keyword:  # validated: each "=" ends a key, and each key starts the text or follows ", "
        between = '"' + _NEXT_KEY.sub(', "', between).replace("=", '": ')
    for constant, json_name in JSON_CONSTANTS:
        between = constant.sub(json_name, between)
    parts[0::2] = between.split(_SEGMENTS)
    json_text = "{" + '"'.join(parts) + "}"
    spelling = _Spelling()
    try:
        values = json.loads(json_text, parse_float=spelling.float, object_pairs_hook=spelling.object)
    except ValueError:  # a control character in a string, which JSON spells escaped: the item loop reads it
        return None
    return JsonDump(values, json_text if spelling.as_json_dumps else None)


class _Spelling:
    """Whether ``json.dumps`` would write a dump's JSON text back as it is: a float spelled otherwise
    (``1.50``, ``1E5``, ``1e999``) or a repeated key says no. Python prints neither."""

    def __init__(self) -> None:
        self.as_json_dumps = True

    def float(self, token: str) -> float:
        value = float(token)
        self.as_json_dumps = self.as_json_dumps and repr(value) == token
        return value

    def object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        values = dict(pairs)
        self.as_json_dumps = self.as_json_dumps and len(values) == len(pairs)
        return values


def read_config(text: str) -> tuple[dict[str, Any], str]:
    """``parse_repr``'s values and the JSON text the store keeps of them (``config_json_text``); a plain
    dump's text is the JSON it was read from, so it is neither parsed twice nor written again."""
    text = text.strip()
    plain = None
    if text.startswith("{") and text.endswith("}"):
        plain = _json_dump(text, 1, len(text) - 1, JSON_DICT)
    elif (head := _CALL_NAME.match(text)) is not None and text.endswith(")"):
        plain = _json_dump(text, head.end(), len(text) - 1, JSON_CALL)
    if plain is not None and plain.text is not None:
        return plain.values, plain.text
    values = plain.values if plain is not None else parse_repr(text)[1]
    return values, config_json_text(values)


# --- the tolerant path: for text that ast cannot parse -------------------------------


def _tolerant_call(text: str) -> tuple[str | None, dict[str, Any]]:
    name, _, body = text.partition("(")
    if not body or not re.fullmatch(r"[\w.]+", name.strip()):
        raise ReprError(f"not a Name(key=value, ...) repr: {text[:60]!r}")
    body = _strip_closing(body, ")")
    values: dict[str, Any] = {}
    for item in split_top_level(body):
        key, sep, value = item.partition("=")
        key = key.strip()
        if sep and key.isidentifier():
            values[key] = literal_or_text(value)
    if not values:
        raise ReprError(f"no key=value found in {text[:60]!r}")
    return name.strip(), values


def _tolerant_dict(text: str) -> dict[str, Any]:
    body = _strip_closing(text[1:], "}")
    values: dict[str, Any] = {}
    for item in split_top_level(body):
        key_text, value_text = _split_dict_item(item)
        if key_text is None:
            continue
        key = literal_or_text(key_text)
        values[str(key)] = literal_or_text(value_text)
    if not values:
        raise ReprError(f"no 'key': value found in {text[:60]!r}")
    return values


def _split_dict_item(item: str) -> tuple[str | None, str]:
    """Split ``'key': value`` at the first colon outside quotes."""
    quote = None
    escaped = False
    for index, char in enumerate(item):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in QUOTES:
            quote = char
        elif char == ":":
            return item[:index], item[index + 1 :]
    return None, item


def _strip_closing(body: str, closer: str) -> str:
    body = body.rstrip()
    return body[:-1] if body.endswith(closer) else body  # a cut-short line has no closer


def literal_or_text(text: str) -> Any:
    text = text.strip()
    if text in NAMED_CONSTANTS:
        return NAMED_CONSTANTS[text]
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return text
    return node_value(node, text)


def split_top_level(body: str) -> list[str]:
    """Split at commas that are outside quotes and brackets (``<...>`` object reprs included)."""
    items: list[str] = []
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    start = 0
    for index, char in enumerate(body):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in QUOTES:
            quote = char
        elif char in OPENERS:
            stack.append(OPENERS[char])
        elif char == "<" and body[start:index].strip().endswith(("=", ":")):
            stack.append(">")
        elif stack and char == stack[-1]:
            stack.pop()
        elif char in CLOSERS and stack:
            stack.pop()  # unbalanced closer: recover rather than give up
        elif char == "," and not stack:
            items.append(body[start:index])
            start = index + 1
    tail = body[start:]
    if tail.strip():
        items.append(tail)
    return [item for item in items if item.strip()]


# --- a parsed config as the JSON text the store keeps ---------------------------------------

def config_json_text(value: Any) -> str:
    """JSON text of a parsed config; non-finite floats become the strings "inf"/"-inf"/"nan"."""
    if _text_keys_only(value):  # the usual config: JSON as it is, unless a float is not finite
        try:
            return json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
        except ValueError:
            pass
    return json.dumps(_finite(value), ensure_ascii=False, default=str)


def _text_keys_only(value: Any) -> bool:
    """Whether every dict inside has str keys only (json.dumps would spell True/None keys unlike str())."""
    children: Iterable[Any]
    if isinstance(value, dict):
        if not set(map(type, value)) <= {str}:
            return False
        children = value.values()
    elif isinstance(value, (list, tuple)):
        children = value
    else:
        return True
    nested = [child for child in children if isinstance(child, (dict, list, tuple))]
    return all(_text_keys_only(child) for child in nested)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value
