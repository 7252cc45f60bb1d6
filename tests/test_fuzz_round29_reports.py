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


# --- the planner's automatic layouts of an engine that splits the layers ---------------------


def test_the_automatic_ladder_gives_a_layer_split_engine_its_layer_split() -> None:
    """llama.cpp and hf-transformers split the layers over every GPU (TP 1, a stage per GPU;
    docs/contracts.md): the planner's ladder planned Qwen2.5-7B (28 heads) on 8 L4 at TP 4 × PP 2
    with llama.cpp (fuzz round 29), a layout the engine does not run."""
    from planner.layouts import ladder
    from predictors.catalog.store import load_catalog
    from predictors.core.vocab import LAYER_SPLIT_ENGINES

    catalog = load_catalog()
    llm, gpu = catalog.llm("Qwen/Qwen2.5-7B-Instruct"), catalog.gpu("L4")
    for engine in LAYER_SPLIT_ENGINES:
        shapes = [s for group in ladder(llm, gpu, [8], None, engine) for s in group]
        assert shapes, engine
        assert all(s.tp == 1 and s.pp == s.tp * s.pp * s.dp for s in shapes), (engine, shapes)
    shapes = [s for group in ladder(llm, gpu, [8], None, "vllm") for s in group]
    assert any(s.tp > 1 for s in shapes)  # a head-sharding engine keeps its TP layouts
