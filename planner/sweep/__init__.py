"""``wattgpu sweep``: re-plan a scenario under uncertainty draws and what-if grids.

Modules, in the order data flows: :mod:`.spec` (the sweep settings and the grid points),
:mod:`.draws` (error sigmas from the model card, quasi-random normal draws),
:mod:`.table` (the candidate table as arrays, rescaled per draw without the predictors),
:mod:`.evaluate` (one draw: re-optimise, re-evaluate fixed fleets), :mod:`.executors` (local
process pool, Dask, Ray behind one seam; :mod:`.address` checks a cluster's address, its
handshake bounded), :mod:`.aggregate` (percentiles, SLA probabilities,
regret, stability, robust choice) and :mod:`.run` (the whole sweep). The document it writes is
:mod:`planner.documents.sweep`.
"""
