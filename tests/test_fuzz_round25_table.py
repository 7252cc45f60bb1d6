"""Fuzz round 25 (scenarios, finding B2): the compact plan table's note said its capacity ITL was a
mean ITL; at capacity the table shows the ITL at the SLA's percentile (a p90 SLA of 40 ms: 39.5 ms
at capacity, where the mean there is 35.0 ms), as ``--wide`` and ``-f md`` say."""

from __future__ import annotations

import pytest

from planner.report.plan_view import _COMPACT_ALLOCATION_NOTE, _WIDE_ITL_NOTE
from tests.cli_runner import run_cli


@pytest.mark.slow
def test_the_compact_note_names_the_capacity_itl_at_the_slas_percentile() -> None:
    result = run_cli("plan", "paper-llama8b-low-load")
    assert result.code == 0, result.err
    words = " ".join(result.out.split())
    assert "/ ITL at capacity, at the SLA's percentile" in words
    assert "mean ITL (ms) at the load served in the busiest period / at capacity" not in words
    # the compact and the wide note say the same of the capacity ITL
    assert "at the SLA percentile" in _WIDE_ITL_NOTE
    assert "at the SLA's percentile" in _COMPACT_ALLOCATION_NOTE
