"""wattgpu predictors: public metadata -> GPU power and inter-token latency predictions.

This package never imports :mod:`planner`.
"""

__version__ = "0.1.0"
