"""Operating point of one replica under Poisson arrivals: the serving model (numpy core).

Every row is one replica (model, GPU, TP, engine, precision, workload) described by its
:class:`ServingCurves`: the predictors' decode step time ``itl(k)`` and power per GPU ``P(k)``
on a shared batch grid, plus a few physics scalars (:mod:`predictors.serving.grid` builds them).
The model is parametrised by the mean number ``b`` of sequences *decoding* (continuous):

* step time (chunked prefill; every step also carries the prompt tokens of the requests that
  arrived during it, ``λ·τ·I`` tokens, each costing ``c_p / I`` seconds, their TP all-reduce
  included; the decode step's own all-reduce is in the predictors' ITL)::

      τ(b) = itl(max(b, 1)) + λ·τ·c_p,    λ = b / (O·τ)
           = itl(max(b, 1)) + b · c_p / O

* arrival rate that keeps ``b`` sequences decoding (Little's law on the decode phase)::

      λ(b) = b / (O · τ(b))

* TTFT (the prompt's own prefill, one step to emit the first token)::  TTFT(b) = t_p + τ(b)

* mean number in the system (Little's law on the whole request)::  n(b) = b + λ(b) · TTFT(b)

* mean power per GPU: the number K of requests in the system of an engine that serves all of
  them at once behaves like an M/G/∞ queue, whose stationary law is Poisson(n) for Poisson
  arrivals and any service-time law; we use it with the fixed-point mean ``n(b)``::

      P̄(b) = E[P(K)],  K ~ Poisson(n(b)),  P(0) = idle

* ITL at percentile p: a token of a tagged sequence sees the others of a Poisson(b)
  population (PASTA), so ITL_p = τ(1 + F⁻¹_Poisson(b)(p)); the mean ITL is τ(b).

Given a per-replica rate λ the operating point is ``b`` with ``λ(b) = λ`` (λ(b) is increasing,
found by bisection). Capacity = the largest λ whose ITL (at the SLA percentile, mean when
absent) and TTFT meet the SLA and whose 99th percentile of K fits the memory/engine batch
limit. Power ``P`` is made non-decreasing and kept in [idle, TDP]; ``itl`` non-decreasing.
All functions are vectorised over rows (and, where noted, over several points per row).

Modules: :mod:`~predictors.serving.curves` (inputs and Little's-law quantities),
:mod:`~predictors.serving.poisson` (quantiles, E[P(K)]), :mod:`~predictors.serving.operating`
(operating point, capacity), :mod:`~predictors.serving.grid` (the curves from the predictors) and
:mod:`~predictors.serving.at_load` (the ``requests_per_s`` rows of the batch contract).
"""
