"""The pools of a disaggregated deployment unit: ``x`` prefill workers and ``y`` decode workers,
each pool on its own GPU type with its own parallel layout (docs/method.md, "Disaggregated
units in the planner").

A unit is one replica of its candidate: the solver counts whole units, each holding the GPUs of
both pools (:func:`gpu_use`), and failover loses whole units. :func:`pools_text` names a unit
compactly (``1× H100 TP4 → 2× H200 TP8``: prefill workers, then decode workers); it is the GPU
slot of the unit's :data:`~planner.inputs.candidate.CandidateKey`, so the key of a plan record
can be rebuilt from its ``pools`` (:func:`pool_from_record`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from planner.inputs.validation import fail, non_negative

#: How a candidate serves its requests: one engine per replica doing both phases, or separate
#: prefill and decode pools with the KV cache moved between them.
Deployment = Literal["aggregated", "disaggregated"]

PoolRole = Literal["prefill", "decode"]

#: The roles in a unit's ``pools``, in order.
POOL_ROLES: tuple[PoolRole, PoolRole] = ("prefill", "decode")

#: What joins a unit's pools in :func:`pools_text`: a key whose GPU slot holds it is a unit's.
POOLS_ARROW = " → "


def layout_text(tp: int, pp: int = 1, dp: int = 1, ep: int = 1) -> str:
    """A layout in a table's TP column: ``8`` for pure tensor parallelism 8 (as before layouts);
    ``8×PP2``, ``8×DP2 EP16``; EP is shown with attention data parallelism (otherwise it is the
    engines' usual TP × DP)."""
    text = str(tp) + (f"×PP{pp}" if pp > 1 else "") + (f"×DP{dp}" if dp > 1 else "")
    return text + (f" EP{ep}" if dp > 1 and ep > 1 else "")


def deployment_text(key: tuple[Any, ...], replicas: int) -> str:
    """One deployment of a fleet as text, ``entry GPU tpLAYOUT xREPLICAS`` (``tp8×PP2``; a
    disaggregated unit: ``entry POOLS xREPLICAS``, its pools (:func:`pools_text`, each with its
    own layout) in place of the GPU and the layout; ``in REGION`` after it with regions): the
    sweep's ``fleet`` labels and the check that a sweep's base plan is a given plan read the
    same text."""
    if POOLS_ARROW in str(key[1]):  # a unit's key holds its pools text in the GPU slot
        text = f"{key[0]} {key[1]} x{replicas}"
    else:
        text = f"{key[0]} {key[1]} tp{layout_text(*key[2:6]).replace(' ', '')} x{replicas}"
    region = key[6] if len(key) > 6 else ""
    return f"{text} in {region}" if region else text


@dataclass(frozen=True)
class Pool:
    """One pool of a disaggregated unit: its workers, each a replica-like engine of one layout."""

    role: PoolRole
    gpu: str
    """GPU type of every worker of the pool."""
    workers: int
    """Workers (engines) in the pool."""
    tp: int
    pipeline_parallel: int = 1
    data_parallel: int = 1
    expert_parallel: int = 1
    gpus_per_worker: int = 0
    """GPUs of inventory one worker takes (whole nodes when it spans nodes); 0: its
    tp × pp × dp GPUs."""
    power_w_at_capacity: float = 0.0
    """Mean GPU power of the whole pool (W, its held GPUs) at the unit's capacity."""
    idle_power_w: float = 0.0
    """GPU power of the whole pool with no load (W)."""
    power_curve_w: tuple[float, ...] = ()
    """GPU power of the whole pool at each knot of the unit's power curve (W); the pools'
    curves add up to the unit's (empty for hand-built units)."""

    def __post_init__(self) -> None:
        where = f"{self.role} pool {self.gpu}"
        if self.role not in POOL_ROLES:
            raise fail(where, f"role must be one of {', '.join(POOL_ROLES)}, got {self.role!r}")
        if min(self.workers, self.tp, self.pipeline_parallel, self.data_parallel) < 1:
            raise fail(where, "workers, tp and the layout degrees must be >= 1")
        if self.expert_parallel < 1:
            raise fail(where, "expert_parallel must be >= 1")
        if 0 < self.gpus_per_worker < self.running_gpus_per_worker:
            raise fail(where, "gpus_per_worker must hold tp × pipeline_parallel × data_parallel")
        non_negative(
            where, power_w_at_capacity=self.power_w_at_capacity, idle_power_w=self.idle_power_w
        )

    @property
    def running_gpus_per_worker(self) -> int:
        """GPUs that run one worker: tp × pp × dp."""
        return self.tp * self.pipeline_parallel * self.data_parallel

    @property
    def held_gpus_per_worker(self) -> int:
        """GPUs of inventory one worker takes."""
        return max(self.gpus_per_worker, self.running_gpus_per_worker)

    @property
    def gpus(self) -> int:
        """GPUs of inventory the whole pool takes."""
        return self.workers * self.held_gpus_per_worker

    @property
    def layout(self) -> str:
        """One worker's layout (``8``, ``8×PP2``; :func:`layout_text`)."""
        return layout_text(
            self.tp, self.pipeline_parallel, self.data_parallel, self.expert_parallel
        )

    @property
    def text(self) -> str:
        """``2× H200 TP8``: the workers, the GPU type and one worker's layout."""
        return f"{self.workers}× {self.gpu} TP{self.layout}"


def pools_text(pools: Sequence[Pool]) -> str:
    """``1× H100 TP4 → 2× H200 TP8``: the prefill pool, then the decode pool."""
    return POOLS_ARROW.join(p.text for p in pools)


def gpu_use(pools: Iterable[Pool]) -> tuple[tuple[str, int], ...]:
    """(GPU type, GPUs of inventory) the pools take together, one entry per type, in order."""
    out: dict[str, int] = {}
    for p in pools:
        out[p.gpu] = out.get(p.gpu, 0) + p.gpus
    return tuple(out.items())


def pool_from_record(record: Mapping[str, Any]) -> Pool:
    """The :class:`Pool` of a plan JSON ``pools`` entry (power figures as written)."""
    return Pool(
        role=record["role"],
        gpu=str(record["gpu"]),
        workers=int(record["workers"]),
        tp=int(record["tp"]),
        pipeline_parallel=int(record.get("pipeline_parallel") or 1),
        data_parallel=int(record.get("data_parallel") or 1),
        expert_parallel=int(record.get("expert_parallel") or 1),
        gpus_per_worker=int(record.get("gpus_per_worker") or 0),
        power_w_at_capacity=float(record.get("power_w_at_capacity") or 0.0),
        idle_power_w=float(record.get("idle_power_w") or 0.0),
        power_curve_w=tuple(float(v) for v in record.get("power_curve_w") or ()),
    )


#: The note under a table that shows a disaggregated unit (:func:`pools_layout_cell`).
UNIT_NOTE = (
    "disaggregated unit (one replica): P x×TP = x prefill workers of that TP, D y×TP = y decode "
    "workers; GPU prefill → decode type when they differ; GPUs = both pools"
)


def pools_gpu_cell(pools: Sequence[Pool]) -> str:
    """A table's GPU cell of a unit: its type, or ``B200 → H100`` (prefill → decode types)."""
    types = list(dict.fromkeys(p.gpu for p in pools))
    return " → ".join(types)


def pools_layout_cell(pools: Sequence[Pool]) -> str:
    """A table's TP cell of a unit: ``P 3×4 → D 2×8`` (3 prefill workers of TP 4, 2 decode
    workers of TP 8; other layouts as :func:`layout_text`)."""
    return " → ".join(f"{p.role[0].upper()} {p.workers}×{p.layout}" for p in pools)
