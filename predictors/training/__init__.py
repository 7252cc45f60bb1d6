"""Training and held-out evaluation: :mod:`~predictors.training.train` (the shipped models),
:mod:`~predictors.training.evaluate` and :mod:`~predictors.training.splits` (held-out folds),
:mod:`~predictors.training.selection` (nested model choice, interval calibration),
:mod:`~predictors.training.metrics`, :mod:`~predictors.training.accuracy` and
:mod:`~predictors.training.accuracy_report` (``docs/accuracy.md``),
:mod:`~predictors.training.stability` (seed table), :mod:`~predictors.training.baselines` and
:mod:`~predictors.training.dominance` (the dominance sweep).
"""
