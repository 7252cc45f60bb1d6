"""Fuzz round 29 (reports): the text form keeps a figure and its unit on one line.

``wattgpu report -f text`` wrapped '… its GPU mix in 37.5 %.' as '37.5' and '%.' on two lines
(:func:`textwrap.wrap` breaks at every space).
"""

from __future__ import annotations

import pytest

from planner.report.blocks import Bullets, Para, Part
from planner.report.render import TEXT_WIDTH, parts_to_text


@pytest.mark.parametrize("shift", range(0, 12))
def test_a_percentage_is_never_wrapped_apart_from_its_number(shift: int) -> None:
    filler = "x" * (TEXT_WIDTH - 8 - shift)
    text = f"{filler} in 37.5 % of draws, its GPU mix in 37.5 %."
    out = parts_to_text([Part("T", (Para(text), Bullets((text,))))])
    lines = out.splitlines()
    assert not any(line.lstrip().startswith("%") for line in lines), out
    assert all(len(line) <= TEXT_WIDTH for line in lines)
    words = " ".join(line.strip().removeprefix("- ") for line in lines[3:] if line.strip())
    assert words.count("37.5 %") == 4  # the words come back whole, with their own spaces


def test_a_no_break_space_of_the_text_itself_is_kept() -> None:
    text = "name\u00a0%odd " + "y " * 60
    out = parts_to_text([Part("T", (Para(text),))])
    assert "name\u00a0%odd" in out
