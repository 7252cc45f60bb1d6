"""Physical quantities of an (LLM, GPU, workload) row, as polars expressions.

Everything here is a pure function of catalog facts and workload columns, so the same
expressions feed the predictors' features, the roofline baseline and the planner's memory check.

Conventions (see docs/method.md):

* ``precision`` is the weight precision; bytes per parameter from :data:`BYTES_PER_PARAM`.
* The KV cache is stored in 16-bit unless the weights are 8-bit or narrower, in which case 8-bit
  KV (``fp8`` KV cache) is assumed; fp32 weights keep a 32-bit cache.
* Peak dense tensor FLOPS for a precision: fp8/int8/fp4 use their own rate where the GPU has one,
  else fall back to the 16-bit rate (weight-only quantisation computes in 16-bit), and never less
  than the 16-bit rate (an engine computes a narrower format in 16-bit where its own tensor rate
  is slower: Blackwell Ultra's INT8, 157.5 against 2,250 TFLOPS on B300); fp32 uses half the
  16-bit tensor rate (TF32).
* Decode step of a batch of ``b`` sequences with mean context ``c`` tokens on ``n`` GPUs (tensor
  parallel): bytes moved = weights read + the batch's KV at mean context ``c``
  (:func:`predictors.kv_physics.kv_read_bytes_per_step`, window- and state-aware); FLOPs =
  ``2 · active params · b``. Roofline step time = max(bytes / (n · bandwidth), FLOPs / (n · peak
  FLOPS)).
* For mixture-of-experts models the weights read per step are the shared (non-expert) weights plus
  the experts touched by the batch: each of ``E`` experts is touched with probability
  ``1 − (1 − k/E)^b`` for ``k`` experts per token.
* Parallel layout (columns ``tensor_parallel``, ``pipeline_parallel``, ``data_parallel``; see
  :mod:`predictors.catalog.validity`): ``gpu_count = TP · PP · DP``. Per token cycle (the ITL) a
  sequence's micro-batch of ``b / PP`` sequences passes every stage, so each stage re-reads its
  weights once per micro-batch; attention-DP ranks each hold their own copy of the weights
  their engine copies (:func:`dp_copied_weight_bytes`) and ``1 / DP`` of the sequences; routed
  experts are spread over the ``TP · DP`` GPUs of a stage. Quantities below are
  "replica-equivalent": per-GPU bytes times ``gpu_count``, so the pure tensor-parallel formulas
  are the special case PP = DP = 1 (exactly: every layout factor is then 1).
"""

from __future__ import annotations

from functools import cache

import polars as pl

from predictors.core.vocab import BYTES_PER_PARAM as BYTES_PER_PARAM
from predictors.core.vocab import ENGINES as ENGINES
from predictors.core.vocab import LAYER_SPLIT_ENGINES
from predictors.core.vocab import PRECISIONS as PRECISIONS
from predictors.kv_physics import bytes_per_param as bytes_per_param
from predictors.kv_physics import kv_bytes_per_element as kv_bytes_per_element
from predictors.kv_physics import kv_bytes_per_layer_token as kv_bytes_per_layer_token
from predictors.kv_physics import kv_bytes_per_sequence as kv_bytes_per_sequence
from predictors.kv_physics import kv_bytes_per_token as kv_bytes_per_token
from predictors.kv_physics import kv_read_bytes_per_step as kv_read_bytes_per_step
from predictors.kv_physics import kv_replication as kv_replication
from predictors.kv_physics import mean_context_tokens as mean_context_tokens

#: Fraction of GPU memory an engine may use (vLLM's default gpu_memory_utilization).
MEMORY_UTILISATION = 0.9
#: Runtime reserve per GPU (activations, CUDA graphs, allocator slack), in GB.
RUNTIME_RESERVE_GB_PER_GPU = 1.5
#: Bytes per catalog ``memory_gb``: GPU memory is marketed in binary units (an "80 GB" H100 has
#: 80 GiB, nvidia-smi shows 81,559 MiB; an "A100 40GB" 40,960 MiB), so a catalog GB of memory is
#: 2**30 bytes. Weights, KV and the runtime reserve are counted in bytes (1e9 per GB).
MEMORY_BYTES_PER_CATALOG_GB = float(2**30)

_BYTES = bytes_per_param()


@cache
def weight_bytes() -> pl.Expr:
    """Bytes of all weights (total parameters) at the row's precision."""
    return pl.col("total_params_b") * 1e9 * _BYTES


_TP, _PP, _DP = pl.col("tensor_parallel"), pl.col("pipeline_parallel"), pl.col("data_parallel")


@cache
def tp_domain_gpus() -> pl.Expr:
    """GPUs that reach each other at ``interconnect_gb_s``: the NVLink domain, at least the node
    (:func:`predictors.catalog.validity.tp_domain_gpus`)."""
    return pl.max_horizontal(
        pl.col("nvlink_domain_gpus").fill_null(1), pl.col("node_gpus").fill_null(8)
    ).cast(pl.Float64)


def default_layout(with_engine: bool = True) -> list[pl.Expr]:
    """Fill empty ``pipeline_parallel`` / ``data_parallel`` / ``tensor_parallel`` with the
    engines' usual layout (the rule of :func:`predictors.catalog.validity.resolve_layout`): DP 1;
    PP 1 while ``gpu_count / DP`` fits one domain, else PP across whole domains; for an engine
    of :data:`~predictors.core.vocab.LAYER_SPLIT_ENGINES` (read from the ``engine`` column when
    *with_engine*) PP over every GPU, TP 1."""
    n = pl.col("gpu_count").cast(pl.Float64)
    dp = _DP.cast(pl.Float64).fill_null(1.0)
    per_rank, domain = n / dp, tp_domain_gpus()
    whole = (per_rank > domain) & ((per_rank % domain) == 0)
    usual = pl.when(whole).then(per_rank / domain).otherwise(1.0)
    if with_engine:
        split = pl.col("engine").cast(pl.String).is_in(LAYER_SPLIT_ENGINES).fill_null(False)
        usual = pl.when(split).then(per_rank).otherwise(usual)
    pp = _PP.cast(pl.Float64).fill_null(usual)
    return [
        dp.alias("data_parallel"),
        pp.alias("pipeline_parallel"),
        _TP.cast(pl.Float64).fill_null(n / (pp * dp)).alias("tensor_parallel"),
    ]


@cache
def _routed_params_b() -> pl.Expr:
    """Routed-expert parameters (billions): with shared params S and routed R, S + R = total and
    S + R·k/E = active (0 for dense models)."""
    k = pl.col("num_experts_per_tok").cast(pl.Float64)
    e = pl.col("num_experts").cast(pl.Float64)
    routed = ((pl.col("total_params_b") - pl.col("active_params_b")) / (1.0 - k / e)).clip(
        lower_bound=0.0
    )
    # every expert active (k = E): each token reads all of them, as a dense model's weights
    moe = pl.col("is_moe") & e.is_not_null() & (e > 0) & (k < e).fill_null(True)
    return pl.when(moe).then(routed.fill_null(0.0)).otherwise(0.0)


@cache
def _shared_params_b() -> pl.Expr:
    """Parameters (billions) of everything but the routed experts (all of a dense model)."""
    return (pl.col("total_params_b") - _routed_params_b()).clip(lower_bound=0.0)


#: Engines whose attention-DP ranks copy only the attention layers and the token embedding: the
#: dense MLPs, shared experts and LM head stay tensor-parallel over the whole worker (SGLang's DP
#: attention defaults, ``moe_dense_tp_size`` = TP and ``enable_dp_lm_head`` off). vLLM's data
#: parallel ranks and TensorRT-LLM's attention DP copy every non-routed weight.
ATTENTION_ONLY_DP_ENGINES: tuple[str, ...] = ("sglang",)


@cache
def _dp_copied_params_b() -> pl.Expr:
    """Parameters (billions) every attention-DP rank holds its own copy of: all but the routed
    experts, or for :data:`ATTENTION_ONLY_DP_ENGINES` on an MoE model all but the routed experts,
    the ``first_k_dense`` dense MLPs, the shared experts and an untied LM head (a model whose
    dense layers interleave without ``first_k_dense`` keeps them copied: more memory, not less)."""
    h, layers = pl.col("hidden_size").cast(pl.Float64), pl.col("num_layers").cast(pl.Float64)
    dense = pl.col("first_k_dense").cast(pl.Float64).fill_null(0.0)
    mlp = dense * 3.0 * h * pl.col("intermediate_size").cast(pl.Float64)
    experts = (layers - dense) * pl.col("num_shared_experts").cast(pl.Float64).fill_null(0.0)
    experts = experts * 3.0 * h * pl.col("moe_intermediate_size").cast(pl.Float64)
    untied = ~pl.col("tie_word_embeddings").fill_null(False)
    head = pl.when(untied).then(pl.col("vocab_size").cast(pl.Float64) * h).otherwise(0.0)
    sharded = (mlp.fill_null(0.0) + experts.fill_null(0.0) + head.fill_null(0.0)) / 1e9
    attention_only = pl.col("engine").is_in(ATTENTION_ONLY_DP_ENGINES) & (_routed_params_b() > 0)
    shared = _shared_params_b()
    return pl.when(attention_only).then((shared - sharded).clip(lower_bound=0.0)).otherwise(shared)


@cache
def dp_copied_weight_bytes() -> pl.Expr:
    """Bytes of the weights each attention-DP rank holds a copy of (:func:`_dp_copied_params_b`)."""
    return _dp_copied_params_b() * 1e9 * _BYTES


@cache
def stage_share() -> pl.Expr:
    """``PP · ceil(layers / PP) / layers``: the largest pipeline stage relative to an even split
    (1 without pipeline parallelism)."""
    layers = pl.col("num_layers").cast(pl.Float64)
    return _PP * (layers / _PP).ceil() / layers


@cache
def stage_passes() -> pl.Expr:
    """Stages a token cycle's batch passes one after another: ``PP`` for the
    :data:`~predictors.core.vocab.LAYER_SPLIT_ENGINES` (the whole batch goes through each stage
    in turn, every stage idle while another works), 1 for engines that keep ``PP``
    micro-batches in flight, every stage busy at once. The step's KV read, FLOPs and micro-batch
    follow it: a layer split reads and computes what one GPU would, never faster than it."""
    pp = _PP.cast(pl.Float64).fill_null(1.0).clip(lower_bound=1.0)
    split = pl.col("engine").cast(pl.String).is_in(LAYER_SPLIT_ENGINES).fill_null(False)
    return pl.when(split).then(pp).otherwise(1.0)


@cache
def _overlapped_stages() -> pl.Expr:
    """Stages that can work on different micro-batches at once: ``PP``, 1 for a layer split."""
    return _PP.cast(pl.Float64).fill_null(1.0).clip(lower_bound=1.0) / stage_passes()


@cache
def micro_batches() -> pl.Expr:
    """Micro-batches of one token cycle: ``min(PP, b)`` where they overlap (a micro-batch holds
    at least one sequence: a batch of ``b < PP`` sequences fills ``b`` stages), 1 for a layer
    split (:func:`stage_passes`)."""
    b = pl.col("batch_size").cast(pl.Float64).fill_null(1.0).clip(lower_bound=1.0)
    return pl.min_horizontal(_overlapped_stages(), b)


@cache
def pipeline_fill() -> pl.Expr:
    """``PP / micro-batches`` (≥ 1; 1 without pipeline parallelism, for a layer split and at
    ``b ≥ PP``): a pipeline holding fewer micro-batches than stages runs each micro-batch's
    stages one after another, so the token cycle of its sequences is the full pass through
    every stage, ``PP / m`` times what a full pipeline's share of the work would take. The
    step's KV read and FLOPs follow it (:func:`kv_read_bytes_per_cycle`, :func:`step_flops`):
    at one sequence a TP × PP replica reads and computes what TP alone would, never faster than
    it (fuzz round 26)."""
    return _overlapped_stages() / micro_batches()


@cache
def kv_read_bytes_per_cycle() -> pl.Expr:
    """Replica-equivalent KV bytes of one token cycle (:func:`kv_read_bytes_per_step` times
    :func:`stage_passes`: stages read their layers' KV one after another in a layer split, and
    times :func:`pipeline_fill`: a pipeline not full of micro-batches reads one stage's KV at
    a time)."""
    return kv_read_bytes_per_step() * stage_passes() * pipeline_fill()


@cache
def stage_duty() -> pl.Expr:
    """Share of a token cycle each GPU of a replica is working (the rest it idles): 1 without
    pipeline parallelism; ``min(b, PP) / PP`` for engines that keep micro-batches in flight (a
    batch of b sequences fills at most b of the PP stages at once); ``1 / PP`` for the
    :data:`~predictors.core.vocab.LAYER_SPLIT_ENGINES`, whose stages run one after another. The
    power model scales each GPU's busy utilisation by it (:mod:`predictors.estimators.power`)."""
    pp = _PP.cast(pl.Float64).fill_null(1.0).clip(lower_bound=1.0)
    b = pl.col("batch_size").cast(pl.Float64).fill_null(1.0).clip(lower_bound=1.0)
    split = pl.col("engine").cast(pl.String).is_in(LAYER_SPLIT_ENGINES).fill_null(False)
    return pl.when(split).then(1.0 / pp).otherwise(pl.min_horizontal(b, pp) / pp)


@cache
def resident_weight_bytes() -> pl.Expr:
    """Replica-equivalent weight bytes held in memory: the largest rank's weights times
    ``gpu_count`` (each attention-DP rank's copy, :func:`dp_copied_weight_bytes`; the largest
    pipeline stage)."""
    return (weight_bytes() + dp_copied_weight_bytes() * (_DP - 1.0)) * stage_share()


@cache
def peak_tflops() -> pl.Expr:
    """Peak dense tensor TFLOPS of one GPU for the row's precision (see module docstring)."""
    fp16 = pl.col("fp16_tflops_dense")

    def narrow(column: str) -> pl.Expr:  # its own rate where faster, else the 16-bit one
        return pl.max_horizontal(pl.col(column).fill_null(fp16), fp16)

    return (
        pl.when(pl.col("precision") == "fp8")
        .then(narrow("fp8_tflops_dense"))
        .when(pl.col("precision") == "int8")
        .then(narrow("int8_tops_dense"))
        .when(pl.col("precision") == "fp4")
        .then(narrow("fp4_tflops_dense"))
        .when(pl.col("precision") == "fp32")
        .then(fp16 / 2.0)
        .otherwise(fp16)
    )


def _share_touched(tokens: pl.Expr) -> pl.Expr:
    """Expected share of the routed experts that *tokens* tokens route to, each to ``k`` of
    ``E`` experts: ``1 - (1 - k/E)^tokens``."""
    k_over_e = pl.col("num_experts_per_tok").cast(pl.Float64) / pl.col("num_experts").cast(
        pl.Float64
    )
    return 1.0 - (1.0 - k_over_e).pow(tokens)


@cache
def expert_fraction_touched() -> pl.Expr:
    """Fraction of routed-expert weights read in one decode step of a micro-batch (``batch_size
    / micro_batches`` sequences, :func:`micro_batches`; 1 for dense): the expected share of
    distinct experts the batch's tokens route to, about k/E at one sequence and all of them at
    large batch."""
    touched = _share_touched((pl.col("batch_size") / micro_batches()).clip(lower_bound=1.0))
    return pl.when(pl.col("is_moe")).then(touched.fill_null(1.0)).otherwise(pl.lit(1.0))


@cache
def weight_bytes_read_per_step() -> pl.Expr:
    """Replica-equivalent weight bytes read per token cycle: each of the PP micro-batches reads
    its stage's shared weights (plus each further attention-DP rank's copy,
    :func:`dp_copied_weight_bytes`) and the routed experts touched."""
    shared, routed = _shared_params_b(), _routed_params_b()
    copies = shared + _dp_copied_params_b() * (_DP - 1.0)
    moe_read = (copies + routed * expert_fraction_touched()) * _PP * 1e9 * _BYTES
    return (
        pl.when(routed > 0)
        .then(moe_read.fill_null(weight_bytes() * _DP * _PP))
        .otherwise(weight_bytes() * _DP * _PP)
    )


@cache
def memory_time_s() -> pl.Expr:
    """Seconds to stream one decode step's bytes at full memory bandwidth of all GPUs."""
    step_bytes = weight_bytes_read_per_step() + kv_read_bytes_per_cycle()
    return step_bytes / (pl.col("memory_bandwidth_gb_s") * 1e9 * pl.col("gpu_count"))


@cache
def step_flops() -> pl.Expr:
    """Replica-equivalent FLOPs of one decode step: 2 · active params · batch, times
    :func:`stage_passes` and :func:`pipeline_fill`."""
    flops = 2.0 * pl.col("active_params_b") * 1e9 * pl.col("batch_size")
    return flops * stage_passes() * pipeline_fill()


@cache
def compute_time_s() -> pl.Expr:
    """Seconds for one decode step's FLOPs (:func:`step_flops`) at peak dense FLOPS."""
    return step_flops() / (peak_tflops() * 1e12 * pl.col("gpu_count"))


@cache
def roofline_itl_s() -> pl.Expr:
    """Roofline inter-token latency: the slower of the memory and compute times of one step."""
    return pl.max_horizontal(memory_time_s(), compute_time_s())


#: Model FLOPS utilisation assumed for the prefill roofline (compute-bound matrix multiplies).
PREFILL_MFU = 0.5


@cache
def prefill_compute_s(mfu: float = PREFILL_MFU) -> pl.Expr:
    """Prompt FLOPs (2 · active params · input tokens) at *mfu* of the peak of the GPUs of one
    pipeline stage (the prompt passes the stages in turn; the layers a DP rank copies,
    :func:`dp_copied_weight_bytes`, run on the TP GPUs of one rank, the rest on all TP · DP
    GPUs), s."""
    active = pl.col("active_params_b") + _dp_copied_params_b() * (_DP - 1.0)
    flops = 2.0 * active * 1e9 * pl.col("input_tokens")
    return flops / (peak_tflops() * 1e12 * (pl.col("gpu_count") / _PP) * mfu)


@cache
def prompt_expert_read_s() -> pl.Expr:
    """One read of the routed experts a prompt's own tokens touch (``1 - (1 - k/E)^I`` of them),
    at the peak bandwidth of the replica's GPUs, stage by stage, s (0 for dense models). A prompt
    sends only ``I · k / E`` tokens to each expert (about 12 for 200 tokens over 128 experts,
    top 8), too few for its expert matrix multiplies to be compute-bound, so its MoE layers cost
    what reading those experts costs, not its FLOPs."""
    touched = _share_touched(pl.col("input_tokens").clip(lower_bound=1.0))
    routed = _routed_params_b() * 1e9 * _BYTES * touched * _PP
    seconds = routed / (pl.col("memory_bandwidth_gb_s") * 1e9 * pl.col("gpu_count"))
    return pl.when(_routed_params_b() > 0).then(seconds.fill_null(0.0)).otherwise(0.0)


@cache
def prefill_peak_s() -> pl.Expr:
    """One prompt's FLOPs (2 · active params · input tokens) at the full peak of all the
    replica's GPUs, s: the least time per prompt a busy worker can average, however its ranks
    and stages share the prompts (the prefill pool's throughput floor)."""
    flops = 2.0 * pl.col("active_params_b") * 1e9 * pl.col("input_tokens")
    return flops / (peak_tflops() * 1e12 * pl.col("gpu_count"))


@cache
def weight_read_s() -> pl.Expr:
    """One read of the weights at the peak bandwidth of the replica's GPUs (stage by stage), s."""
    weights = (weight_bytes() + dp_copied_weight_bytes() * (_DP - 1.0)) * _PP
    return weights / (pl.col("memory_bandwidth_gb_s") * 1e9 * pl.col("gpu_count"))


@cache
def prefill_time_s() -> pl.Expr:
    """Prefill roofline of one prompt: its FLOPs at :data:`PREFILL_MFU` of peak FLOPS of all
    GPUs, plus one read of the weights."""
    return prefill_compute_s() + weight_read_s()


@cache
def bandwidth_latency_s() -> pl.Expr:
    """The paper's bandwidth latency: weight bytes / memory bandwidth of one GPU."""
    return weight_bytes() / (pl.col("memory_bandwidth_gb_s") * 1e9)


@cache
def compute_latency_s() -> pl.Expr:
    """The paper's compute latency: 2 · active params / peak dense FLOPS of one GPU."""
    return 2.0 * pl.col("active_params_b") * 1e9 / (peak_tflops() * 1e12)
