"""Analyses of plans: budget and carbon forecasts (:mod:`.forecast`), uncertainty bands
(:mod:`.uncertainty`), energy-cost Pareto fronts (:mod:`.pareto`), one-model GPU comparisons
(:mod:`.compare`) and plan-to-plan differences (:mod:`.diff`).
"""
