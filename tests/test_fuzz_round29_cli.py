"""Fuzz round 29 (command line): ``predict --requests-per-s`` declares the range its check
keeps (above 0): its help showed no range and its NaN message said "give a number", and 0 was
refused by the row check as "must be a positive number (or empty)"."""

from __future__ import annotations

import pytest

from tests.cli_runner import run_cli

BASE = ["predict", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "A30"]


@pytest.mark.parametrize(("value", "why"), [("0", "no arrival rate"), ("-1", "out of range")])
def test_a_rate_of_zero_or_below_is_refused_with_the_range(value: str, why: str) -> None:
    result = run_cli(*BASE, f"--requests-per-s={value}")
    assert result.code == 2
    text = " ".join((result.out + result.err).replace("│", " ").split())  # the boxed usage error
    assert why in text and "give a number above 0" in text


def test_a_non_finite_rate_names_the_range() -> None:
    result = run_cli(*BASE, "--requests-per-s=nan")
    assert result.code != 0
    assert "give a number above 0" in result.err
