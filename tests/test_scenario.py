"""Scenario files: models, cross-field rules, catalog names, one-line errors, overrides, CLI."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from typer.testing import CliRunner

from planner.cli import validate as cli_validate
from planner.paths import default_scenario, scenarios_dir
from planner.scenario.doc import field_reference
from planner.scenario.limits import (
    HOURS_PER_DAY,
    MAX_GRID_G_CO2_PER_KWH,
    MAX_PROFILE_MULTIPLIER,
    MAX_USD_PER_KWH,
)
from planner.scenario.load import load_scenario
from planner.scenario.model import Scenario
from planner.scenario.overrides import apply_override, deep_merge, parse_path
from planner.scenario.periods import periods, requests_per_s_by_period
from predictors.catalog.store import Catalog, load_catalog
from predictors.core.errors import WattgpuError

REPO = Path(__file__).resolve().parent.parent

LLM_COLUMNS = (
    "id,aliases,family,model_type,total_params_b,active_params_b,num_layers,hidden_size,"
    "num_attention_heads,num_kv_heads,head_dim,intermediate_size,moe_intermediate_size,"
    "num_experts,num_experts_per_tok,num_shared_experts,first_k_dense,kv_lora_rank,"
    "qk_rope_head_dim,vocab_size,max_position_embeddings,default_dtype,is_moe,attention_kind,"
    "sliding_window,tie_word_embeddings,source"
)
TINY = "test-org/Tiny-1B-Instruct"
SMALL = "test-org/Small-8B-Instruct"


def _llm_row(model_id: str, alias: str, params_b: float) -> str:
    cells = {c: "" for c in LLM_COLUMNS.split(",")}
    cells.update(
        id=model_id, aliases=alias, family="test", model_type="llama",
        total_params_b=str(params_b), active_params_b=str(params_b), num_layers="16",
        hidden_size="2048", num_attention_heads="32", num_kv_heads="8", head_dim="64",
        intermediate_size="8192", vocab_size="128256", default_dtype="bf16", is_moe="false",
        attention_kind="full", tie_word_embeddings="true", source="test fixture",
    )  # fmt: skip
    return ",".join(cells[c] for c in LLM_COLUMNS.split(","))


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user catalog overlay with two test LLMs."""
    user = tmp_path_factory.mktemp("user_catalog")
    rows = [LLM_COLUMNS, _llm_row(TINY, "tiny-1b", 1.2), _llm_row(SMALL, "small-8b", 8.0)]
    (user / "llms.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return user


@pytest.fixture(scope="module")
def catalog(user_dir: Path) -> Catalog:
    """The bundled catalogs plus the test overlay."""
    return load_catalog(user_dir)


def base() -> dict[str, Any]:
    """A small valid scenario mapping."""
    return {
        "name": "t",
        "region": "DE",
        "electricity_usd_per_kwh": 0.2,
        "gpus": {"L4": {"available": 4}, "H100-SXM5-80GB": {}},
        "models": [
            {
                "name": "chat",
                "model": SMALL,
                "load": {"requests_per_s": 1.0, "input_tokens": 512, "output_tokens": 128},
                "sla": {"itl_ms": 50},
            }
        ],
    }


def write(tmp_path: Path, data: Any, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def problems_of(path: Path, catalog: Catalog, overrides: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(WattgpuError) as info:
        load_scenario(path, overrides, catalog=catalog)
    lines = str(info.value).splitlines()
    starts = (f"{path}: ", *(f"{path} --set {item}: " for item in overrides))
    assert all(line.startswith(starts) for line in lines), lines
    return lines


def one_problem(tmp_path: Path, data: Any, catalog: Catalog, field: str) -> str:
    """Load *data*, expect exactly one problem line at *field*; return the line."""
    path = write(tmp_path, data)
    lines = problems_of(path, catalog)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{path}: {field}: "), lines
    assert " — " in lines[0]  # every message says how to fix it
    return lines[0]


# --- example scenarios -------------------------------------------------------------------------

EXAMPLES = sorted(p.name for p in scenarios_dir().glob("*.yaml"))


def test_example_set_is_complete() -> None:
    assert {
        "paper-llama8b-low-load.yaml",
        "enterprise-fleet.yaml",
        "eu-power-cap-carbon.yaml",
        "large-generated.yaml",
        "disagg-tight-sla.yaml",
    } <= set(EXAMPLES)
    assert default_scenario().name == "enterprise-fleet.yaml"


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_scenarios_load(name: str) -> None:
    scenario = load_scenario(scenarios_dir() / name)
    assert scenario.pue_value >= 1.0
    assert scenario.grid_value_g_co2_per_kwh > 0
    assert all(o.usd_per_hour is not None for o in scenario.gpu_offers.values())
    catalog = load_catalog()
    for entry in scenario.models:
        assert catalog.try_resolve_llm(entry.model) == entry.model  # canonical ids
    for gpu in scenario.gpu_offers:
        assert catalog.try_resolve_gpu(gpu) == gpu


def test_enterprise_fleet_matches_the_brief() -> None:
    s = load_scenario(default_scenario())
    assert len(s.models) >= 10
    assert set(s.gpu_offers) == {
        "A10G", "L4", "L40S", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"
    }  # fmt: skip
    assert s.objective.minimize == "weighted" and s.region == "US"
    assert periods(s) == (24, 8760 / 24)
    assert len({e.sla.itl_ms for e in s.models}) > 3


def test_paper_example_chooses_among_three_gpus() -> None:
    s = load_scenario(scenarios_dir() / "paper-llama8b-low-load.yaml")
    assert set(s.gpu_offers) == {"L4", "A30", "H100-SXM5-80GB"}
    assert s.models[0].model == "meta-llama/Llama-3.1-8B-Instruct"
    assert s.models[0].load.requests_per_s == pytest.approx(0.33)
    assert s.pue_source is not None and "on-premise" in s.pue_source


@pytest.mark.slow
def test_large_generated_is_large_and_reproducible(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "generate_large_scenario", REPO / "tools" / "generate_large_scenario.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    s = load_scenario(scenarios_dir() / "large-generated.yaml")
    assert len(s.models) >= 200
    assert set(s.gpu_offers) == set(gen.BENCHMARK_GPUS)  # fixed: timings stay comparable
    assert set(gen.BENCHMARK_GPUS) <= set(load_catalog().gpus["id"].to_list())
    out = tmp_path / "again.yaml"
    gen.main(["--output", str(out)])
    assert out.read_text() == (scenarios_dir() / "large-generated.yaml").read_text()


# --- resolution and defaults -------------------------------------------------------------------


def test_aliases_become_catalog_ids(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["region"] = "Germany"
    data["gpus"] = {"NVIDIA H100 80GB HBM3": {}, "nvidia l4": {"available": 2}}
    data["models"][0]["model"] = "small-8b"
    data["models"][0]["allowed_gpus"] = ["H100 SXM"]
    s = load_scenario(write(tmp_path, data), catalog=catalog)
    assert s.region == "DE"
    assert list(s.gpu_offers) == ["H100-SXM5-80GB", "L4"]
    assert s.models[0].model == SMALL
    assert s.models[0].allowed_gpus == ["H100-SXM5-80GB"]


def test_catalog_defaults_filled_in(tmp_path: Path, catalog: Catalog) -> None:
    s = load_scenario(write(tmp_path, base()), catalog=catalog)
    assert s.pue == pytest.approx(catalog.pue_for("on-premise"))
    assert s.grid_g_co2_per_kwh == pytest.approx(catalog.region("DE")["g_co2_per_kwh"])
    assert s.grid_year == catalog.region("DE")["year"]
    assert (
        s.gpu_offers["H100-SXM5-80GB"].usd_per_hour == catalog.gpu("H100-SXM5-80GB")["usd_per_hour"]
    )
    assert s.gpu_offers["L4"].available == 4
    assert s.gpu_offers["H100-SXM5-80GB"].available is None  # unlimited
    assert s.gpu_offers["L4"].tp_degrees == [1, 2, 4, 8]


def test_gpus_omitted_means_every_priced_catalog_gpu(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    del data["gpus"]
    s = load_scenario(write(tmp_path, data), catalog=catalog)
    priced = {r["id"] for r in catalog.gpus.to_dicts() if r["usd_per_hour"] is not None}
    assert set(s.gpu_offers) == priced
    assert all(o.available is None for o in s.gpu_offers.values())


def test_explicit_grid_figure_kept(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    del data["region"]
    data.update(grid_g_co2_per_kwh=123.0, grid_source="utility PPA 2024", grid_year=2024, pue=1.1)
    s = load_scenario(write(tmp_path, data), catalog=catalog)
    assert (s.grid_g_co2_per_kwh, s.grid_year, s.pue, s.region) == (123.0, 2024, 1.1, None)


def test_extension_keys_and_anchors(tmp_path: Path, catalog: Catalog) -> None:
    profile = ", ".join(["0.5"] * 24)
    text = f"x-profiles:\n  - &flat [{profile}]\n" + yaml.safe_dump(base(), sort_keys=False)
    text = text.replace("output_tokens: 128", "output_tokens: 128\n    daily_profile: *flat")
    path = tmp_path / "a.yaml"
    path.write_text(text, encoding="utf-8")
    s = load_scenario(path, catalog=catalog)
    assert s.models[0].load.daily_profile == [0.5] * 24


# --- periods -----------------------------------------------------------------------------------


def test_periods_and_rates(tmp_path: Path, catalog: Catalog) -> None:
    s = load_scenario(write(tmp_path, base()), catalog=catalog)
    assert periods(s) == (1, 8760.0)
    assert requests_per_s_by_period(s.models[0], 1) == [1.0]

    data = base()
    data["models"][0]["load"]["daily_profile"] = [0.5] * 12 + [1.0] * 12
    data["models"].append(copy.deepcopy(data["models"][0]) | {"name": "flat"})
    del data["models"][1]["load"]["daily_profile"]
    s = load_scenario(write(tmp_path, data), catalog=catalog)
    assert periods(s) == (24, 365.0)
    assert requests_per_s_by_period(s.models[0], 24) == [0.5] * 12 + [1.0] * 12
    assert requests_per_s_by_period(s.models[1], 24) == [1.0] * 24

    data = base()
    load = data["models"][0]["load"]
    del load["requests_per_s"]
    load["requests_per_s_by_period"] = [1.0, 2.0, 3.0]
    data["horizon_hours"] = 30
    s = load_scenario(write(tmp_path, data), catalog=catalog)
    assert periods(s) == (3, 10.0)
    assert requests_per_s_by_period(s.models[0], 3) == [1.0, 2.0, 3.0]
    with pytest.raises(WattgpuError, match="per-period rates"):
        requests_per_s_by_period(s.models[0], 24)


# --- one line per problem ----------------------------------------------------------------------


def test_unknown_gpu_did_you_mean(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["gpus"]["H100-SXM5-80G"] = data["gpus"].pop("H100-SXM5-80GB")
    line = one_problem(tmp_path, data, catalog, "gpus.H100-SXM5-80G")
    assert "unknown GPU 'H100-SXM5-80G'" in line and "did you mean: " in line
    assert "H100-SXM5-80GB" in line


def test_unknown_model(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["models"][0]["model"] = "test-org/Small-8B-Instrukt"
    line = one_problem(tmp_path, data, catalog, "models[0].model")
    assert f"did you mean: {SMALL}" in line and "import-hf" in line


def test_unknown_region(tmp_path: Path, catalog: Catalog) -> None:
    data = base() | {"region": "Germny"}
    assert "Germany" in one_problem(tmp_path, data, catalog, "region")


def test_unknown_allowed_gpu(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["models"][0]["allowed_gpus"] = ["L4", "L5"]
    assert "unknown GPU 'L5'" in one_problem(tmp_path, data, catalog, "models[0].allowed_gpus[1]")


def test_bad_profile_length(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["models"][0]["load"]["daily_profile"] = [1.0] * 23
    line = one_problem(tmp_path, data, catalog, "models[0].load.daily_profile")
    assert "has 23 values" in line and "exactly 24" in line


def test_extra_key_did_you_mean(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["models"][0]["load"]["requests_per_sec"] = data["models"][0]["load"].pop("requests_per_s")
    path = write(tmp_path, data)
    lines = problems_of(path, catalog)
    extra = [line for line in lines if "models[0].load.requests_per_sec: " in line]
    assert len(extra) == 1 and "did you mean: requests_per_s" in extra[0]
    assert "remove it" in extra[0]


def test_extra_top_level_key(tmp_path: Path, catalog: Catalog) -> None:
    line = one_problem(tmp_path, base() | {"horizon_hrs": 10}, catalog, "horizon_hrs")
    assert "did you mean: horizon_hours" in line


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("electricity_usd_per_kwh", "0.2", "expected a number, got text '0.2'"),
        ("robust", "yes", "expected true or false"),
        ("horizon_hours", -5, "out of range"),
        ("precision", "bf61", "did you mean: bf16"),
    ],
)
def test_wrong_type_or_value(
    tmp_path: Path, catalog: Catalog, field: str, value: Any, expected: str
) -> None:
    assert expected in one_problem(tmp_path, base() | {field: value}, catalog, field)


def test_missing_required_field(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    del data["models"][0]["sla"]
    assert "missing" in one_problem(tmp_path, data, catalog, "models[0].sla")


def test_integer_inventory_rejects_fraction_and_bool(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["gpus"]["L4"]["available"] = True
    assert "whole number" in one_problem(tmp_path, data, catalog, "gpus.L4.available")


def test_missing_catalog_price(tmp_path: Path, user_dir: Path) -> None:
    # A user overlay in which the A30 has neither a rental nor a list price (no TCO either): a
    # freshly loaded catalog, so no cached row of the shipped one can answer.
    import csv

    from predictors.core.paths import catalogs_dir

    with (catalogs_dir() / "gpus.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    row = next(r for r in rows if r["id"] == "A30")
    for column in ("usd_per_hour", "usd_per_hour_min", "list_price_usd", "list_price_source"):
        row[column] = ""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "llms.csv").write_bytes((user_dir / "llms.csv").read_bytes())  # the test LLMs
    with (overlay / "gpus.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    no_price = load_catalog(overlay)
    assert no_price.gpu("A30")["usd_per_hour"] is None
    assert no_price.gpu("A30")["list_price_usd"] is None
    data = base()
    data["gpus"]["A30"] = {"available": 2}
    assert "set usd_per_hour" in one_problem(tmp_path, data, no_price, "gpus.A30.usd_per_hour")


# --- cross-field rules -------------------------------------------------------------------------


def _with(**changes: Any) -> dict[str, Any]:
    data = base()
    data.update(changes)
    return data


def test_rule_unique_names(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["models"].append(copy.deepcopy(data["models"][0]))
    assert "already used by models[0]" in one_problem(tmp_path, data, catalog, "models[1].name")


def test_rule_profile_and_per_period_not_both(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    load = data["models"][0]["load"]
    load["daily_profile"] = [1.0] * 24
    load["requests_per_s_by_period"] = [1.0] * 24
    line = one_problem(tmp_path, data, catalog, "models[0].load.requests_per_s_by_period")
    assert "not both" in line


def test_rule_rate_missing(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    del data["models"][0]["load"]["requests_per_s"]
    one_problem(tmp_path, data, catalog, "models[0].load.requests_per_s")


def test_rule_allowed_and_forbidden_disjoint(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["models"][0] |= {"allowed_gpus": ["L4"], "forbidden_gpus": ["nvidia l4"]}  # alias too
    line = one_problem(tmp_path, data, catalog, "models[0].forbidden_gpus")
    assert "L4 also in allowed_gpus" in line


def test_rule_allowed_must_be_available(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["models"][0]["allowed_gpus"] = ["A100-SXM4-80GB"]
    line = one_problem(tmp_path, data, catalog, "models[0].allowed_gpus[0]")
    assert "not listed under gpus" in line


def test_rule_region_xor_grid(tmp_path: Path, catalog: Catalog) -> None:
    line = one_problem(tmp_path, _with(grid_g_co2_per_kwh=100.0), catalog, "grid_g_co2_per_kwh")
    assert "not both" in line
    data = base()
    del data["region"]
    one_problem(tmp_path, data, catalog, "region")
    one_problem(tmp_path, _with(grid_year=2020), catalog, "grid_year")


def test_rule_weights_only_with_weighted(tmp_path: Path, catalog: Catalog) -> None:
    data = _with(objective={"minimize": "cost", "weights": {"cost_usd": 1.0}})
    assert "only used with minimize: weighted" in one_problem(
        tmp_path, data, catalog, "objective.weights"
    )
    one_problem(tmp_path, _with(objective={"minimize": "weighted"}), catalog, "objective.weights")
    data = _with(objective={"minimize": "weighted", "weights": {"cost_usd": 0}})
    assert "all weights are 0" in one_problem(tmp_path, data, catalog, "objective.weights")


def test_rule_period_counts_agree(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["models"].append(copy.deepcopy(data["models"][0]) | {"name": "other"})
    data["models"][0]["load"]["daily_profile"] = [1.0] * HOURS_PER_DAY
    del data["models"][1]["load"]["requests_per_s"]
    data["models"][1]["load"]["requests_per_s_by_period"] = [1.0, 2.0]
    assert "[2, 24]" in one_problem(tmp_path, data, catalog, "models")


def test_rule_tp_degrees(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["gpus"]["L4"]["tp_degrees"] = [1, 3]
    assert "[3]" in one_problem(tmp_path, data, catalog, "gpus.L4.tp_degrees")


def test_rule_same_gpu_twice_via_alias(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["gpus"]["NVIDIA L4"] = {}
    line = one_problem(tmp_path, data, catalog, "gpus.NVIDIA L4")
    assert "same GPU as gpus.L4" in line


def test_several_problems_reported_together(tmp_path: Path, catalog: Catalog) -> None:
    data = base()
    data["region"] = "Atlantis"
    data["electricity_usd_per_kwh"] = "cheap"
    data["gpus"]["H200X"] = {}
    data["models"][0]["model"] = "nope/none"
    data["models"][0]["load"]["daily_profile"] = [1.0, 2.0]
    data["models"][0]["sla"]["itl_ms"] = 0
    data["models"].append(copy.deepcopy(data["models"][0]))
    lines = problems_of(write(tmp_path, data), catalog)
    fields = {line.split(": ")[1] for line in lines}
    assert {
        "region",
        "electricity_usd_per_kwh",
        "gpus.H200X",
        "models[0].model",
        "models[1].model",
        "models[0].load.daily_profile",
        "models[0].sla.itl_ms",
        "models[1].name",
    } <= fields
    assert len(lines) == len(set(lines))


def test_file_and_yaml_errors(tmp_path: Path, catalog: Catalog) -> None:
    with pytest.raises(WattgpuError, match="cannot read"):
        load_scenario(tmp_path / "missing.yaml", catalog=catalog)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(WattgpuError, match=r"line \d+, column \d+: YAML syntax error"):
        load_scenario(bad, catalog=catalog)
    bad.write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(WattgpuError, match="expected a mapping"):
        load_scenario(bad, catalog=catalog)


# --- overrides and overlays --------------------------------------------------------------------


def test_parse_path() -> None:
    assert parse_path("models[0].load.requests_per_s") == ["models", 0, "load", "requests_per_s"]
    assert parse_path('gpus["a.b"].available') == ["gpus", "a.b", "available"]
    with pytest.raises(WattgpuError):
        parse_path("models[x]")


def test_overrides(tmp_path: Path, catalog: Catalog) -> None:
    path = write(tmp_path, base())
    s = load_scenario(
        path,
        [
            "models[0].load.requests_per_s=5",
            "gpus.H100-SXM5-80GB.available=0",
            "gpus.A100-SXM4-80GB.available=3",
            "objective={minimize: weighted, weights: {cost_usd: 1, carbon_kg: 0.1}}",
            "region=FR",
            "models[0].sla.ttft_ms=800",
        ],
        catalog=catalog,
    )
    assert s.models[0].load.requests_per_s == 5.0
    assert s.gpu_offers["H100-SXM5-80GB"].available == 0
    assert s.gpu_offers["A100-SXM4-80GB"].available == 3
    assert s.objective.weights is not None and s.objective.weights.carbon_kg == 0.1
    assert s.region == "FR" and s.models[0].sla.ttft_ms == 800
    assert yaml.safe_load(path.read_text())["models"][0]["load"]["requests_per_s"] == 1.0


def test_bad_overrides_reported_with_the_rest(tmp_path: Path, catalog: Catalog) -> None:
    path = write(tmp_path, base())
    lines = problems_of(
        path, catalog, ("models[3].load.requests_per_s=1", "no-equals", "name.x=1", "region=Mars")
    )
    assert any(
        "--set models[3].load.requests_per_s=1: models[3] does not exist" in x for x in lines
    )
    assert any("--set no-equals: no '='" in x for x in lines)
    assert any("--set name.x=1: name is not a mapping" in x for x in lines)
    assert any(
        x.startswith(f"{path} --set region=Mars: region: unknown region 'Mars'") for x in lines
    ), lines


def test_override_does_not_touch_input() -> None:
    data = base()
    changed = apply_override(data, "models[0].name=x")
    assert data["models"][0]["name"] == "chat" and changed["models"][0]["name"] == "x"


@pytest.mark.parametrize("text", ["", "# nothing\n", "- a\n- b\n", "5\n"])
def test_an_overlay_that_is_not_a_mapping_names_the_overlay(
    tmp_path: Path, catalog: Catalog, text: str
) -> None:
    """An empty or list overlay was reported as the scenario's own top level."""
    path = write(tmp_path, base())
    overlay = tmp_path / "over.yaml"
    overlay.write_text(text, encoding="utf-8")
    with pytest.raises(WattgpuError) as info:
        load_scenario(path, catalog=catalog, overlays=[overlay])
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"{overlay}: (top level): ") and "fields to merge" in line, line


def test_an_overlay_entry_with_a_misspelled_name_says_so(tmp_path: Path, catalog: Catalog) -> None:
    """A misspelled entry name was appended as a new entry and reported as its missing model
    (``models[1].model: required``) with no did-you-mean; an entry that gives its model is still
    added."""
    path = write(tmp_path, base())
    overlay = tmp_path / "over.yaml"
    overlay.write_text("models:\n  - name: chta\n    load: {requests_per_s: 3}\n", "utf-8")
    with pytest.raises(WattgpuError) as info:
        load_scenario(path, catalog=catalog, overlays=[overlay])
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"{overlay}: models[0].name: 'chta' names no model entry"), line
    assert "did you mean: chat?" in line and "give model:" in line
    entry = base()["models"][0] | {"name": "chat-2"}
    overlay.write_text(yaml.safe_dump({"models": [entry]}), "utf-8")
    s = load_scenario(path, catalog=catalog, overlays=[overlay])
    assert [m.name for m in s.models] == ["chat", "chat-2"]


def test_overlay_merges_models_by_name(tmp_path: Path, catalog: Catalog) -> None:
    path = write(tmp_path, base())
    overlay = write(
        tmp_path,
        {
            "pue": 1.2,
            "gpus": {"L4": {"available": 10}},
            "models": [
                {"name": "chat", "load": {"requests_per_s": 7}},
                {
                    "name": "new",
                    "model": TINY,
                    "load": {"requests_per_s": 2, "input_tokens": 10, "output_tokens": 10},
                    "sla": {"itl_ms": 30},
                },
            ],
        },
        "overlay.yaml",
    )
    s = load_scenario(path, ["models[1].sla.itl_ms=25"], catalog=catalog, overlays=[overlay])
    assert s.pue == 1.2
    assert s.gpu_offers["L4"].available == 10 and "H100-SXM5-80GB" in s.gpu_offers
    assert [m.name for m in s.models] == ["chat", "new"]
    assert s.models[0].load.requests_per_s == 7 and s.models[0].load.input_tokens == 512
    assert s.models[1].sla.itl_ms == 25  # overrides apply after overlays


def test_deep_merge_replaces_other_lists() -> None:
    merged = deep_merge({"a": {"b": [1, 2], "c": 1}}, {"a": {"b": [3]}})
    assert merged == {"a": {"b": [3], "c": 1}}


# --- property tests ----------------------------------------------------------------------------

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-0123456789", min_size=1, max_size=12)
positive = st.floats(min_value=0.001, max_value=1e6, allow_nan=False)
non_negative = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)


@st.composite
def scenario_dicts(draw: st.DrawFn) -> dict[str, Any]:
    entry_names = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    use_profile = draw(st.booleans())
    models = []
    for name in entry_names:
        load: dict[str, Any] = {
            "requests_per_s": draw(non_negative),
            "input_tokens": draw(positive),
            "output_tokens": draw(st.floats(min_value=1.0, max_value=1e4)),  # at least one token
        }
        if use_profile:
            multipliers = st.floats(min_value=0.0, max_value=MAX_PROFILE_MULTIPLIER)
            load["daily_profile"] = draw(st.lists(multipliers, min_size=24, max_size=24))
        models.append(
            {
                "name": name,
                "model": draw(st.sampled_from([TINY, SMALL])),
                "load": load,
                "sla": {"itl_ms": draw(positive)},
                "min_replicas": draw(st.integers(0, 8)),
            }
        )
    gpus = draw(
        st.dictionaries(
            st.sampled_from(["L4", "H100-SXM5-80GB", "A100-SXM4-80GB"]),
            st.fixed_dictionaries({"available": st.none() | st.integers(0, 1000)}),
            min_size=1,
        )
    )
    return {
        "name": draw(names),
        "horizon_hours": draw(positive),
        "grid_g_co2_per_kwh": draw(st.floats(min_value=0.0, max_value=MAX_GRID_G_CO2_PER_KWH)),
        "pue": draw(st.floats(min_value=1.0, max_value=3.0)),
        "electricity_usd_per_kwh": draw(st.floats(min_value=0.0, max_value=MAX_USD_PER_KWH)),
        "gpus": gpus,
        "models": models,
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario_dicts())
def test_valid_scenarios_round_trip(data: dict[str, Any]) -> None:
    scenario = Scenario.model_validate(data)
    again = Scenario.model_validate(scenario.model_dump(exclude_unset=True))
    assert again == scenario
    count, hours = periods(scenario)
    assert count in (1, 24) and hours * count == pytest.approx(scenario.horizon_hours)
    for entry in scenario.models:
        assert len(requests_per_s_by_period(entry, count)) == count


@settings(max_examples=40, deadline=None)
@given(
    scenario_dicts(),
    st.sampled_from(
        [
            ("electricity_usd_per_kwh",),
            ("horizon_hours",),
            ("models", 0, "load", "requests_per_s"),
            ("models", 0, "load", "input_tokens"),
            ("models", 0, "sla", "itl_ms"),
            ("models", 0, "min_replicas"),
        ]
    ),
    st.floats(max_value=-1e-9, allow_nan=False) | st.just(float("nan")),
)
def test_invalid_numbers_rejected(
    data: dict[str, Any], where: tuple[str | int, ...], bad: float
) -> None:
    node: Any = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = bad
    with pytest.raises(ValidationError) as info:
        Scenario.model_validate(data)
    assert any(tuple(e["loc"]) == where for e in info.value.errors())


# --- docs ---------------------------------------------------------------------------------------


def test_field_reference_covers_every_field() -> None:
    text = field_reference()
    for field in Scenario.model_fields:
        assert f"| `{field}` |" in text
    assert "| `daily_profile` |" in text and "| `itl_ms` |" in text


def test_docs_reference_is_current() -> None:
    doc = (REPO / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert field_reference().strip() in doc, "regenerate: python tools/scenario_reference.py"


# --- CLI ----------------------------------------------------------------------------------------


@pytest.fixture
def validate_app() -> typer.Typer:
    app = typer.Typer()
    cli_validate.register(app)

    @app.command("noop")
    def _noop() -> None:  # a second command keeps typer in multi-command mode
        pass

    return app


def test_cli_validate_ok(tmp_path: Path, validate_app: typer.Typer, user_dir: Path) -> None:
    path = write(tmp_path, base() | {"user_catalog": str(user_dir)})
    result = CliRunner().invoke(validate_app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{path}: ok (1 model, 2 GPU types)"
    result = CliRunner().invoke(
        validate_app, ["validate", str(path), "--set", "gpus.A100-SXM4-80GB.available=1"]
    )
    assert result.output.strip() == f"{path}: ok (1 model, 3 GPU types)"


def test_cli_validate_reports_every_problem(
    tmp_path: Path, validate_app: typer.Typer, user_dir: Path
) -> None:
    data = base() | {"user_catalog": str(user_dir), "region": "Mars"}
    data["models"][0]["sla"]["itl_ms"] = -1
    path = write(tmp_path, data)
    result = CliRunner().invoke(validate_app, ["validate", str(path)])
    assert isinstance(result.exception, WattgpuError)
    lines = str(result.exception).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{path}: region: ")
    assert lines[1].startswith(f"{path}: models[0].sla.itl_ms: ")


def test_cli_main_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from planner.cli import app as cli

    with pytest.raises(SystemExit) as info:
        cli.main(["validate", str(tmp_path / "missing.yaml")])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    with pytest.raises(SystemExit) as info:
        cli.main(["validate", str(scenarios_dir() / "paper-llama8b-low-load.yaml")])
    assert info.value.code == 0
    assert capsys.readouterr().out.endswith("ok (1 model, 3 GPU types)\n")
