"""Estimators: the protocol, the XGBoost base and intervals, the step-time, ITL, power and TTFT
estimators, the configurations model selection chooses from, saved artifacts and the model card."""
