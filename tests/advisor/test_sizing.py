"""Memory estimates from what people know: every figure worked out by hand next to it (GB = 10^9 bytes)."""

from decimal import Decimal as D

import pytest

from advisor import inputs, requirements, sizing
from advisor.types import ModelNeed, WorkloadSpec

LLAMA_70B = sizing.MODEL_CARDS["llama-3.1-70b"]


def test_kv_cache_follows_the_stated_formula():
    # 2 x 80 layers x 8 KV heads x 128 head size x 2 bytes x 32768 tokens = 10,737,418,240 bytes
    assert sizing.kv_cache_bytes(LLAMA_70B, 32768) == D(10737418240)


def test_inference_estimate_shows_its_arithmetic():
    estimate = sizing.inference_estimate(card=LLAMA_70B, parameters_b=None, precision="fp16", context_tokens=8192,
                                         concurrency=4)
    # weights 70.6e9 x 2 = 141.2 GB; KV 2 x 80 x 8 x 128 x 2 x 32768 = 10.7 GB; (141.2 + 10.7) / 0.9 = 168.8 GB
    assert estimate.memory_gb == D("168.8")
    text = [str(line) for line in estimate.lines]
    assert "141.2 GB" in text[0] and "10.7 GB" in text[1] and "168.8 GB" in text[2]
    assert "1, 2, 4, 8" in text[3]
    assert estimate.lines[0].source_url == "https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct/blob/main/config.json"
    assert not estimate.lower_bound


@pytest.mark.parametrize("precision, weights_gb", [("fp16", "141.2"), ("fp8", "70.6"), ("int8", "70.6"),
                                                    ("int4", "35.3")])
def test_precision_sets_the_bytes_per_parameter(precision, weights_gb):
    estimate = sizing.inference_estimate(card=LLAMA_70B, parameters_b=None, precision=precision, context_tokens=1,
                                         concurrency=1)
    assert f"= {weights_gb} GB" in str(estimate.lines[0])


def test_tensor_parallel_degrees_divide_the_attention_heads():
    assert sizing.tp_degrees_for(sizing.MODEL_CARDS["qwen2.5-7b"]) == (1, 2, 4)  # 28 heads: 8 does not divide
    assert sizing.tp_degrees_for(LLAMA_70B) == (1, 2, 4, 8)
    assert sizing.tp_degrees_for(None) == (1, 2, 4, 8)


def test_a_bare_parameter_count_is_a_lower_bound_without_kv_cache():
    estimate = sizing.inference_estimate(card=None, parameters_b=D(13), precision="int4", context_tokens=8192,
                                         concurrency=8)
    assert estimate.memory_gb == D("7.2")  # 13e9 x 0.5 = 6.5 GB / 0.9 = 7.22
    assert estimate.lower_bound


@pytest.mark.parametrize("method, optimizer, expected", [
    ("full", "adamw", "1129.6"),  # 70.6e9 x 16 bytes (ZeRO: 2 + 2 + 12)
    ("full", "adamw_8bit", "706.0"),  # 70.6e9 x 10
    ("lora", "adamw", "152.5"),  # 70.6e9 x 2 = 141.2 + 1% x 70.6e9 x 16 = 11.3
    ("qlora", "adamw", "46.6"),  # 70.6e9 x 0.5 = 35.3 + 11.3
])
def test_training_model_states_follow_the_zero_paper_and_lora_rules(method, optimizer, expected):
    estimate = sizing.training_estimate(card=LLAMA_70B, parameters_b=None, precision="fp16", optimizer=optimizer,
                                        method=method)
    assert estimate.memory_gb == D(expected)
    assert estimate.lower_bound  # activations are left out
    assert estimate.lines[-1].source_url == sizing.ZERO_PAPER_URL


def test_training_sized_from_a_model_needs_its_states_sharded_over_every_gpu():
    spec = WorkloadSpec(kind="training", model="llama-3.1-70b", gpus_per_node=8, nodes=2)
    estimate = requirements.estimate_for(spec)
    assert requirements.min_gpu_memory_gb(spec, estimate) == D("70.6")  # 1129.6 GB / 16 GPUs
    assert inputs.spec_errors(spec) == {}  # no GPU needed: the memory per GPU comes from the model


@pytest.mark.parametrize("spec, field", [
    (WorkloadSpec(kind="inference", model="llama-3.1-8b", parameters_b=D(8)), "parameters_b"),
    (WorkloadSpec(kind="inference", model="llama-3.1-8b", models=(ModelNeed(1, D(1)),)), "models"),
    (WorkloadSpec(kind="batch", model="llama-3.1-8b"), "model"),
    (WorkloadSpec(kind="training", model="llama-3.1-8b", precision="int4"), "precision"),
    (WorkloadSpec(kind="training", gpu="h100", multi_node=True), "multi_node"),
])
def test_sizing_input_rules_name_the_field(spec, field):
    assert field in inputs.spec_errors(spec)


def test_every_listed_model_cites_its_model_card():
    for card in sizing.MODEL_CARDS.values():
        assert card.source_url.startswith(f"https://huggingface.co/{card.hf_id}/")
        assert card.attention_heads % card.kv_heads == 0  # grouped-query attention: whole groups
