"""wattgpu planner: scenario YAML -> optimal GPU fleet (imports :mod:`predictors`, never the reverse)."""

__version__ = "0.1.0"
