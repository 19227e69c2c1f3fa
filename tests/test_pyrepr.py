"""Reading the Python reprs servers print as their configuration — safely, never with eval."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import gen_log
from ingest.parsers.logs import pyrepr
from ingest.parsers.logs.pyrepr import (
    ReprError,
    ast_call_repr,
    ast_dict_repr,
    config_json_text,
    parse_call_repr,
    parse_dict_repr,
    parse_keyword_list,
    parse_repr,
    read_config,
)


def test_dataclass_repr_with_the_usual_value_kinds() -> None:
    name, values = parse_call_repr(
        "ServerArgs(model_path='moonshotai/Kimi-K2.5', tp_size=8, mem_fraction_static=0.85, "
        "speculative_algorithm=None, trust_remote_code=True, disable_cuda_graph=False, "
        "cuda_graph_bs=[1, 2, 4], json_model_override_args='{}', lora_paths={'a': [1, {'b': None}]})"
    )
    assert name == "ServerArgs"
    assert values == {
        "model_path": "moonshotai/Kimi-K2.5",
        "tp_size": 8,
        "mem_fraction_static": 0.85,
        "speculative_algorithm": None,
        "trust_remote_code": True,
        "disable_cuda_graph": False,
        "cuda_graph_bs": [1, 2, 4],
        "json_model_override_args": "{}",
        "lora_paths": {"a": [1, {"b": None}]},
    }


def test_quotes_and_escapes_inside_strings() -> None:
    _, values = parse_call_repr(
        """ServerArgs(chat_template='{% if m["role"] == "user" %}it\\'s, fine{% endif %}', sep="a, b=c", path='x')"""
    )
    assert values["chat_template"] == '{% if m["role"] == "user" %}it\'s, fine{% endif %}'
    assert values["sep"] == "a, b=c"
    assert values["path"] == "x"


def test_inf_and_nan_written_as_names_are_floats() -> None:
    _, values = parse_call_repr("ServerArgs(max_time=inf, floor=-inf, ratio=nan, n=-3)")
    assert values["max_time"] == math.inf and values["floor"] == -math.inf and math.isnan(values["ratio"])
    assert values["n"] == -3


def test_unknown_callables_and_enums_stay_as_their_source_text() -> None:
    _, values = parse_call_repr(
        "ServerArgs(device=device(type='cuda'), dtype=torch.bfloat16, algo=SpeculativeAlgorithm.EAGLE3, "
        "nested=[Foo(x=1), 2])"
    )
    assert values["device"] == "device(type='cuda')"
    assert values["dtype"] == "torch.bfloat16"
    assert values["algo"] == "SpeculativeAlgorithm.EAGLE3"
    assert values["nested"] == ["Foo(x=1)", 2]


def test_object_reprs_that_are_not_python_fall_back_to_the_tolerant_reader() -> None:
    _, values = parse_call_repr("ServerArgs(load_format=<LoadFormat.AUTO: 'auto'>, tp_size=2, fn=<function f at 0x7f>)")
    assert values == {"load_format": "<LoadFormat.AUTO: 'auto'>", "tp_size": 2, "fn": "<function f at 0x7f>"}


def test_a_line_cut_short_keeps_what_it_has() -> None:
    _, values = parse_call_repr("ServerArgs(model_path='m', tp_size=8, speculative_algorithm='EAGLE3', chat_templ")
    assert values == {"model_path": "m", "tp_size": 8, "speculative_algorithm": "EAGLE3"}


def test_dict_repr_and_non_string_keys() -> None:
    assert parse_dict_repr("{'model_path': 'm', 'speculative_num_draft_tokens': 3, 1: 'one', 'x': (1, 2)}") == {
        "model_path": "m",
        "speculative_num_draft_tokens": 3,
        "1": "one",
        "x": [1, 2],
    }
    assert parse_repr("{'a': None}") == (None, {"a": None})


def test_a_large_dict_repr(tmp_path: Path) -> None:
    # recent SGLang prints ~18 KB of server_args on one line
    items = ", ".join(f"'key_{index}': {index if index % 2 else repr('v' * 40)}" for index in range(600))
    text = "{" + items + ", 'speculative_algorithm': 'EAGLE3'}"
    assert len(text) > 18_000
    values = parse_dict_repr(text)
    assert len(values) == 601 and values["key_599"] == 599 and values["speculative_algorithm"] == "EAGLE3"


def test_vllm_keyword_list_with_unquoted_values() -> None:
    values = parse_keyword_list(
        "model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=SpeculativeConfig(method='eagle3', "
        "model='yuhuili/EAGLE3', num_spec_tokens=3), tokenizer_mode=auto, served_model_name=meta-llama/Llama-3.1-8B, "
        'seed=0, compilation_config={"level":3,"cudagraph_capture_sizes":[512,504]}'
    )
    assert values["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert values["speculative_config"] == "SpeculativeConfig(method='eagle3', model='yuhuili/EAGLE3', num_spec_tokens=3)"
    assert values["tokenizer_mode"] == "auto"
    assert values["served_model_name"] == "meta-llama/Llama-3.1-8B"
    assert values["compilation_config"] == {"level": 3, "cudagraph_capture_sizes": [512, 504]}


def test_code_in_a_repr_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _, values = parse_call_repr(f"ServerArgs(x=__import__('os').system('touch {marker}'), y=(lambda: 1)())")
    assert not marker.exists()
    assert values["x"] == f"__import__('os').system('touch {marker}')"


@pytest.mark.parametrize("text", ["", "not a repr at all", "42", "ServerArgs", "[1, 2]"])
def test_text_that_is_no_repr_is_an_error(text: str) -> None:
    with pytest.raises(ReprError):
        parse_repr(text)


# --- the fast path reads what ast reads -------------------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures"


def both_paths(text: str) -> tuple[object, object]:
    if text.lstrip().startswith("{"):
        return parse_dict_repr(text), ast_dict_repr(text.strip())
    return parse_call_repr(text), ast_call_repr(text.strip())


def fixture_dumps() -> list[str]:
    dumps = []
    for path in sorted(FIXTURES.rglob("*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if "server_args=" in line:
                dumps.append(line.split("server_args=", 1)[1])
    return dumps


def test_the_fast_path_reads_every_fixture_dump_as_ast_does() -> None:
    dumps = fixture_dumps()
    assert len(dumps) >= 10
    for dump in dumps:
        fast, reference = both_paths(dump)
        assert fast == reference, dump[:120]


def test_the_fast_path_reads_the_benchmark_dumps_as_ast_does() -> None:
    rng = np.random.default_rng(7)
    for era in gen_log.ERAS:
        dump = gen_log.server_args(era, rng).split("server_args=", 1)[1]
        fast, reference = both_paths(dump)
        assert fast == reference


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
                      | st.tuples(inner, inner), max_leaves=8)
keys = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)


def call_repr(config: dict[str, object]) -> str:
    return "ServerArgs(" + ", ".join(f"{key}={value!r}" for key, value in config.items()) + ")"


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=8))
def test_any_dataclass_or_dict_repr_reads_the_same_on_both_paths(config: dict[str, object]) -> None:
    call = call_repr(config)
    assert both_paths(call)[0] == both_paths(call)[1]
    assert both_paths(repr(config))[0] == both_paths(repr(config))[1]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=8))
def test_a_config_read_with_its_json_text_is_what_the_store_would_write(config: dict[str, object]) -> None:
    for text in (call_repr(config), repr(config)):
        values, json_text = read_config(text)
        assert values == parse_repr(text)[1]
        assert json_text == config_json_text(values)


@pytest.mark.parametrize("text", [
    "ServerArgs(a=1, a=2)",  # repeated keyword: ast refuses the call, the tolerant path keeps the last
    "ServerArgs(load_format=<LoadFormat.AUTO: 'auto'>, tp_size=8)",
    "ServerArgs(x=inf, y=-1e-05, z=007, w=1_000, v=0x10, u=1.)",
    "ServerArgs(path='a\\\\b', quote=\"it's\", t=(1, 2), d=device(type='cuda'))",
    "{'a': 1, 'b': [1, 'x, y'], 'c': {'d': None}}",
    "ServerArgs(model='m', cut_short=[1, 2",
])
def test_edge_cases_read_the_same_on_both_paths(text: str) -> None:
    fast, reference = both_paths(text)
    assert fast == reference


# --- the JSON path: plain dumps are read by json.loads ------------------------------------------


def ast_values(text: str) -> object:
    return ast_dict_repr(text) if text.startswith("{") else ast_call_repr(text)[1]


def plain_dump(text: str) -> pyrepr.JsonDump | None:
    if text.startswith("{"):
        return pyrepr._json_dump(text, 1, len(text) - 1, pyrepr.JSON_DICT)
    head = text.index("(") + 1
    return pyrepr._json_dump(text, head, len(text) - 1, pyrepr.JSON_CALL)


def test_the_benchmark_dumps_take_the_json_path_and_keep_their_text() -> None:
    rng = np.random.default_rng(7)
    for era in gen_log.ERAS:
        dump = gen_log.server_args(era, rng).split("server_args=", 1)[1].strip()
        plain = plain_dump(dump)
        assert plain is not None and plain.text is not None, era.name
        assert plain.values == ast_values(dump) and plain.text == config_json_text(plain.values)


@pytest.mark.parametrize("text", [
    "ServerArgs(a='None', b='x, c=1', c='True=False', None_x=None, x_True=True, e=[None, 'False'], f={'g': False})",
    "{'a': 'None, b=1', 'b': [True, 'x: y'], 'None': None, 'd': {'e': 'f=g'}}",
    "ServerArgs(a='ü – 中文', b=-0.0, c=1e-05, d=-12, e=0, f=1.5e+20)",
])
def test_words_and_signs_inside_strings_survive_the_json_path(text: str) -> None:
    plain = plain_dump(text)
    assert plain is not None and plain.text is not None
    assert plain.values == ast_values(text)
    assert plain.text == config_json_text(plain.values)


@pytest.mark.parametrize("text", [
    "ServerArgs(a=1.50, b=1)",  # json.dumps writes 1.5
    "ServerArgs(a=1E5, b=1e999)",  # 100000.0, and inf, which the store spells "inf"
    "{'a': 1, 'a': 2}",  # a repeated key: the text holds both
    "ServerArgs(a={'k': 1, 'k': 2})",
])
def test_a_dump_json_would_spell_otherwise_is_written_again(text: str) -> None:
    plain = plain_dump(text)
    assert plain is not None and plain.text is None
    values, json_text = read_config(text)
    assert values == ast_values(text) and json_text == config_json_text(values)


@pytest.mark.parametrize("text", [
    "ServerArgs(a=-0, b=1)",  # the integer -0: json.dumps writes 0
    "ServerArgs(a=\"it's\", b=1)",  # a quote inside a string
    "ServerArgs(a='tab\there', b=1)",  # a raw control character
    "ServerArgs(None=1, b=2)",
    "ServerArgs(a=[[1]], b=1)",  # nested: not flat
    "ServerArgs(a=device(type='cuda'))",
])
def test_other_dumps_leave_the_json_path_and_read_as_before(text: str) -> None:
    assert plain_dump(text) is None
    values, json_text = read_config(text)
    assert values == ast_values(text) and json_text == config_json_text(values)
