"""GPU memory estimates from what people know about a model: pure arithmetic with its rule and source stated.

Inference: weights (parameters x bytes per parameter of the chosen precision) plus the KV cache
(2 x layers x KV heads x head size x bytes x tokens, tokens = context length x concurrent sequences), divided by the
share of GPU memory the serving engine fills (vLLM's `gpu_memory_utilization`, 0.9 by default). Training: the model
states of the ZeRO paper (mixed-precision Adam keeps 16 bytes per parameter: 2 for FP16/BF16 weights, 2 for their
gradients, 12 for the FP32 master copy, momentum and variance), or for LoRA/QLoRA a frozen base in 16, 8 or 4 bits
plus adapters trained the same 16 bytes per parameter. Activations are not estimated (they depend on batch size,
sequence length and checkpointing), so a training figure is a lower bound, and it says so.

GB here is 10^9 bytes; the GPU catalog's "80 GB" is the vendor's figure (a little more in bytes), so the comparison
errs on the safe side. Every estimate carries its arithmetic as lines of text (`Estimate.lines`) for the page and the
API.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.utils.translation import gettext_lazy as _

GB = Decimal(10) ** 9
BILLION = Decimal(10) ** 9

FP16, FP8, INT8, INT4 = "fp16", "fp8", "int8", "int4"
PRECISIONS = {
    FP16: _("FP16 / BF16 (2 bytes per parameter)"),
    FP8: _("FP8 (1 byte per parameter)"),
    INT8: _("INT8 (1 byte per parameter)"),
    INT4: _("INT4 (half a byte per parameter)"),
}
BYTES_PER_PARAMETER = {FP16: Decimal(2), FP8: Decimal(1), INT8: Decimal(1), INT4: Decimal("0.5")}
# The KV cache stays in the 16-bit compute dtype whatever the weights' quantisation: vLLM's default
# `kv_cache_dtype="auto"` uses the model's dtype (https://docs.vllm.ai/en/latest/configuration/engine_args.html).
KV_BYTES = Decimal(2)
# vLLM pre-allocates this share of each GPU's memory for weights and KV cache; the rest is CUDA context and
# activations (`gpu_memory_utilization`, default 0.9, same page).
GPU_MEMORY_UTILISATION = Decimal("0.9")
VLLM_ENGINE_ARGS_URL = "https://docs.vllm.ai/en/latest/configuration/engine_args.html"

# Training rules. ZeRO paper, section 3.1 "Model States": mixed-precision Adam holds 2 + 2 + K bytes per parameter
# with K = 12 (FP32 parameters, momentum and variance), 16 in all (https://arxiv.org/abs/1910.02054).
# 8-bit Adam keeps the two optimizer states in 1 byte each instead of 4 (Dettmers et al., "8-bit Optimizers via
# Block-wise Quantization", https://arxiv.org/abs/2110.02861): 2 + 2 + 4 + 2 = 10 bytes per parameter.
ZERO_PAPER_URL = "https://arxiv.org/abs/1910.02054"
ADAM, ADAM_8BIT = "adamw", "adamw_8bit"
OPTIMIZERS = {
    ADAM: _("Adam / AdamW, mixed precision (16 bytes per trained parameter)"),
    ADAM_8BIT: _("8-bit Adam / AdamW (10 bytes per trained parameter)"),
}
OPTIMIZER_BYTES = {ADAM: Decimal(16), ADAM_8BIT: Decimal(10)}
OPTIMIZER_SOURCES = {ADAM: ZERO_PAPER_URL, ADAM_8BIT: "https://arxiv.org/abs/2110.02861"}

FULL, LORA, QLORA = "full", "lora", "qlora"
METHODS = {
    FULL: _("Full fine-tune"),
    LORA: _("LoRA (frozen base, trained adapters)"),
    QLORA: _("QLoRA (frozen 4-bit base, trained adapters)"),
}
# QLoRA stores the frozen base in 4-bit NormalFloat, half a byte per parameter (Dettmers et al., "QLoRA",
# https://arxiv.org/abs/2305.14314).
QLORA_URL = "https://arxiv.org/abs/2305.14314"
# Adapters trained by default, as a share of the base's parameters: rank-16 adapters on all seven projections of
# Llama 3.1 8B are 16 x (4096+4096 + 2 x (4096+1024) + 4096+4096 + 3 x (4096+14336)) x 32 layers = 41.9 M, 0.52% of
# 8.03 B; 1% is an upper bound for such adapters.
DEFAULT_ADAPTER_PERCENT = Decimal(1)

TP_DEGREES = (1, 2, 4, 8)  # tensor-parallel degrees within one node (8 GPUs is the largest common node)


@dataclass(frozen=True)
class ModelCard:
    """A well-known open model's architecture, read from its Hugging Face model card's config.json."""

    slug: str
    name: str
    hf_id: str
    parameters_b: Decimal
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int

    @property
    def source_url(self) -> str:
        return f"https://huggingface.co/{self.hf_id}/blob/main/config.json"

    @property
    def card_url(self) -> str:
        return f"https://huggingface.co/{self.hf_id}"


# num_hidden_layers, num_attention_heads, num_key_value_heads and head size (hidden_size / num_attention_heads, or
# head_dim where the config sets it) as each config.json gives them; parameter counts as each model card states them.
# Checked 2026-12-01 against public copies of those configs (Llama 3.1: the Llama 3 paper's Table 3 and Oumi's
# recipe tables; Gemma 2 27B: MaxText's Hugging Face configs; Qwen2 7B's printed config for the Qwen2.5 7B layout);
# the live Hugging Face pages were not fetched from this machine.
MODEL_VERIFIED_ON = "2026-12-01"
MODEL_CARDS: dict[str, ModelCard] = {card.slug: card for card in (
    ModelCard("llama-3.1-8b", "Llama 3.1 8B", "meta-llama/Llama-3.1-8B-Instruct", Decimal("8.03"), 32, 32, 8, 128),
    ModelCard("llama-3.1-70b", "Llama 3.1 70B", "meta-llama/Llama-3.1-70B-Instruct", Decimal("70.6"), 80, 64, 8, 128),
    ModelCard("llama-3.1-405b", "Llama 3.1 405B", "meta-llama/Llama-3.1-405B-Instruct", Decimal("405.9"), 126, 128, 8,
              128),
    ModelCard("mistral-7b", "Mistral 7B v0.3", "mistralai/Mistral-7B-Instruct-v0.3", Decimal("7.25"), 32, 32, 8, 128),
    ModelCard("mixtral-8x7b", "Mixtral 8x7B", "mistralai/Mixtral-8x7B-Instruct-v0.1", Decimal("46.7"), 32, 32, 8, 128),
    ModelCard("qwen2.5-7b", "Qwen2.5 7B", "Qwen/Qwen2.5-7B-Instruct", Decimal("7.61"), 28, 28, 4, 128),
    ModelCard("qwen2.5-32b", "Qwen2.5 32B", "Qwen/Qwen2.5-32B-Instruct", Decimal("32.5"), 64, 40, 8, 128),
    ModelCard("qwen2.5-72b", "Qwen2.5 72B", "Qwen/Qwen2.5-72B-Instruct", Decimal("72.7"), 80, 64, 8, 128),
    ModelCard("gemma-2-27b", "Gemma 2 27B", "google/gemma-2-27b-it", Decimal("27.2"), 46, 32, 16, 128),
)}


@dataclass(frozen=True)
class Line:
    """One step of an estimate's arithmetic: a lazy sentence and its numbers, with the rule's source."""

    text: object
    params: dict
    source_url: str = ""

    def __str__(self) -> str:
        return str(self.text) % self.params


@dataclass(frozen=True)
class Estimate:
    memory_gb: Decimal  # GPU memory to provide: per replica (inference) or for the whole job (training)
    lines: tuple[Line, ...]
    tp_degrees: tuple[int, ...] = TP_DEGREES
    lower_bound: bool = False
    weights_gb: Decimal | None = None  # inference: the weights alone, per replica


SMALLEST_GB = Decimal("0.1")  # the estimates' precision: the least memory any model is said to need


def _gb(value: Decimal) -> Decimal:
    return (value / GB).quantize(Decimal("0.1"), ROUND_HALF_UP)


def tp_degrees_for(card: ModelCard | None) -> tuple[int, ...]:
    """Tensor-parallel degrees 1, 2, 4, 8 that divide the attention heads (each GPU holds whole heads); all four
    when the architecture is not known."""
    if card is None:
        return TP_DEGREES
    return tuple(t for t in TP_DEGREES if card.attention_heads % t == 0)


def kv_cache_bytes(card: ModelCard, tokens: int) -> Decimal:
    """2 (K and V) x layers x KV heads x head size x bytes per value x tokens."""
    return 2 * card.layers * card.kv_heads * card.head_dim * KV_BYTES * tokens


def inference_estimate(*, card: ModelCard | None, parameters_b: Decimal | None, precision: str,
                       context_tokens: int, concurrency: int) -> Estimate:
    """GPU memory one replica needs: (weights + KV cache) / 0.9. Without a listed model (parameters only) the KV
    cache cannot be computed and the figure is weights / 0.9, flagged as a lower bound."""
    params_b = card.parameters_b if card else parameters_b
    assert params_b is not None
    per = BYTES_PER_PARAMETER[precision]
    weights = params_b * BILLION * per
    lines = [Line(_("Weights: %(params)s B parameters x %(bytes)s bytes (%(precision)s) = %(gb)s GB."),
                  {"params": params_b, "bytes": per, "precision": precision.upper(), "gb": _gb(weights)},
                  card.source_url if card else "")]
    kv = Decimal(0)
    if card is not None:
        tokens = context_tokens * concurrency
        kv = kv_cache_bytes(card, tokens)
        lines.append(Line(
            _("KV cache: 2 x %(layers)s layers x %(kv_heads)s KV heads x %(head_dim)s head size x %(bytes)s bytes x "
              "%(tokens)s tokens (%(context)s context x %(concurrency)s concurrent) = %(gb)s GB."),
            {"layers": card.layers, "kv_heads": card.kv_heads, "head_dim": card.head_dim, "bytes": KV_BYTES,
             "tokens": tokens, "context": context_tokens, "concurrency": concurrency, "gb": _gb(kv)},
            card.source_url))
    else:
        lines.append(Line(_("KV cache not included: pick a listed model for its layers and heads."), {}))
    # Never 0.0 GB: a tiny model rounded down to nothing would pack without end (a division by zero).
    total = max(((weights + kv) / GPU_MEMORY_UTILISATION / GB).quantize(Decimal("0.1"), ROUND_HALF_UP), SMALLEST_GB)
    lines.append(Line(_("(%(weights)s + %(kv)s GB) / %(util)s (the share of GPU memory vLLM fills) = %(total)s GB of "
                        "GPU memory per replica."),
                      {"weights": _gb(weights), "kv": _gb(kv), "util": GPU_MEMORY_UTILISATION, "total": total},
                      VLLM_ENGINE_ARGS_URL))
    degrees = tp_degrees_for(card)
    if card is not None:
        lines.append(Line(_("Tensor-parallel degrees that divide its %(heads)s attention heads: %(degrees)s."),
                          {"heads": card.attention_heads, "degrees": ", ".join(map(str, degrees))}, card.source_url))
    return Estimate(total, tuple(lines), degrees, lower_bound=card is None, weights_gb=_gb(weights))


def training_estimate(*, card: ModelCard | None, parameters_b: Decimal | None, precision: str, optimizer: str,
                      method: str, adapter_percent: Decimal | None = None) -> Estimate:
    """Memory of the model states for the whole job (to be sharded over its GPUs), activations left out."""
    params_b = card.parameters_b if card else parameters_b
    assert params_b is not None
    params = params_b * BILLION
    per_trained = OPTIMIZER_BYTES[optimizer]
    lines: list[Line] = []
    if method == FULL:
        states = params * per_trained
        lines.append(Line(_("Full fine-tune: %(params)s B parameters x %(bytes)s bytes (weights, gradients and "
                            "optimizer states) = %(gb)s GB."),
                          {"params": params_b, "bytes": per_trained, "gb": _gb(states)}, OPTIMIZER_SOURCES[optimizer]))
    else:
        base_bytes = BYTES_PER_PARAMETER[INT4 if method == QLORA else precision]
        percent = DEFAULT_ADAPTER_PERCENT if adapter_percent is None else adapter_percent
        adapters = params * percent / 100
        base = params * base_bytes
        states = base + adapters * per_trained
        lines.append(Line(_("Frozen base: %(params)s B parameters x %(bytes)s bytes = %(gb)s GB."),
                          {"params": params_b, "bytes": base_bytes, "gb": _gb(base)},
                          QLORA_URL if method == QLORA else ""))
        lines.append(Line(_("Adapters: %(percent)s%% of the parameters x %(bytes)s bytes = %(gb)s GB."),
                          {"percent": percent, "bytes": per_trained, "gb": _gb(adapters * per_trained)},
                          OPTIMIZER_SOURCES[optimizer]))
    total = max((states / GB).quantize(Decimal("0.1"), ROUND_HALF_UP), SMALLEST_GB)
    lines.append(Line(_("Model states: %(gb)s GB for the job, sharded over its GPUs (ZeRO stage 3 / FSDP full "
                        "sharding); activations are not included, so this is a lower bound."),
                      {"gb": total}, ZERO_PAPER_URL))
    return Estimate(total, tuple(lines), tp_degrees_for(card), lower_bound=True)
