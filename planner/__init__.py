"""wattgpu planner: scenario YAML -> optimal GPU fleet (imports predictors, not the reverse)."""

__version__ = "0.1.0"
