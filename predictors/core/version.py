"""The version string of wattgpu (both packages; written into model cards and reports)."""

from __future__ import annotations

__version__ = "0.1.0"
