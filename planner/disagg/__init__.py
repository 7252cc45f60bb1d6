"""Disaggregated prefill/decode units as planner candidates (docs/method.md, "Disaggregated
units in the planner"): which units are tried (:mod:`.units`), their candidates from the
disaggregated serving model (:mod:`.evaluate`), and the candidates of a scenario's entries by
their ``deployment`` (:mod:`.candidates`)."""
