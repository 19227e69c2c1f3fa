"""Reading the Python reprs servers print as their configuration — safely, never with eval."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from ingest.parsers.pyrepr import (
    ReprError,
    parse_call_repr,
    parse_dict_repr,
    parse_keyword_list,
    parse_repr,
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
