"""Fuzz round 29, "unseen" (GPUs a user adds through their own catalog):

* F1: ``gpu_measured`` compares the specs the predictors use, an empty fabric cell as the value
  they take for it (docs/cli.md, "User catalogs"), on the row's side and the model card's: a
  measured PCIe card written with its fabric cells empty, or MI250 (measured with an empty
  interconnect) written with 64 GB/s, keeps its measured band.
* F2: the years a GPU is newer than the newest measured one widen only an unmeasured GPU's band:
  a measured GPU whose row changes only ``release_year`` keeps its band, narrower than an
  unmeasured copy's (docs/method.md §2).
* F3: a user row's architecture that equals a bundled one ignoring case is read in the bundled
  spelling, so the domain check, the intervals and the precision rule see one architecture.
"""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl
import pytest

from predictors.api import Predictor
from predictors.catalog.store import load_catalog
from predictors.core.paths import catalogs_dir
from tests.test_cli_catalog import write

LLAMA8B = "meta-llama/Llama-3.1-8B-Instruct"
FABRIC = (
    "interconnect_gb_s",
    "nvlink_domain_gpus",
    "node_gpus",
    "scale_out_gbit_s",
    "scale_out_latency_us",
)
BANDS = ("power_w_per_gpu_lo", "power_w_per_gpu_hi", "itl_s_lo", "itl_s_hi")


def _bundled(gpu: str, **changes: str) -> dict[str, str]:
    with (catalogs_dir() / "gpus.csv").open(encoding="utf-8", newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if r["id"] == gpu)
    return {**row, **changes}


def _copy(gpu: str, new_id: str, **changes: str) -> dict[str, str]:
    return _bundled(gpu, id=new_id, aliases="", assumed_aliases="", **changes)


def _predict(user: Path | None, gpus: list[str], gpu_count: int = 1) -> pl.DataFrame:
    catalog = load_catalog(user) if user else load_catalog()
    rows = pl.DataFrame(
        {
            "model": [LLAMA8B] * len(gpus),
            "gpu": gpus,
            "gpu_count": [gpu_count] * len(gpus),
            "batch_size": [64] * len(gpus),
            "precision": ["bf16"] * len(gpus),
        }
    )
    out = Predictor.load(catalog=catalog).predict(rows)
    assert out["error"].fill_null("").eq("").all(), out["error"].to_list()
    return out


def _same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    for col in ("power_w_per_gpu", "itl_s", *BANDS, "gpu_measured", "in_domain"):
        assert a[col].to_list() == b[col].to_list(), col


@pytest.mark.slow
def test_f1_a_measured_pcie_card_with_empty_fabric_cells_stays_measured(tmp_path: Path) -> None:
    gpus = ["A100-PCIE-80GB", "A40"]
    bundled = _predict(None, gpus)
    assert bundled["gpu_measured"].all()
    empty = dict.fromkeys(FABRIC, "")
    write(tmp_path / "gpus.csv", [_bundled(g, **empty) for g in gpus])
    _same(_predict(tmp_path, gpus), bundled)


@pytest.mark.slow
def test_f1_a_stated_default_matches_a_card_recorded_empty(tmp_path: Path) -> None:
    bundled = _predict(None, ["MI250"], gpu_count=8)
    assert bundled["gpu_measured"].all()
    write(tmp_path / "gpus.csv", [_bundled("MI250", interconnect_gb_s="64")])
    _same(_predict(tmp_path, ["MI250"], gpu_count=8), bundled)
    # another fabric is another GPU: unmeasured
    write(tmp_path / "gpus.csv", [_bundled("MI250", interconnect_gb_s="128")])
    faster = _predict(tmp_path, ["MI250"], gpu_count=8)
    assert not faster["gpu_measured"].any()


@pytest.mark.slow
def test_f2_a_measured_gpus_release_year_does_not_widen_its_band(tmp_path: Path) -> None:
    h100 = "H100-SXM5-80GB"
    write(
        tmp_path / "gpus.csv",
        [_bundled(h100, release_year="2030"), _copy(h100, "MY-H100-COPY")],
    )
    out = _predict(tmp_path, [h100, "MY-H100-COPY"])
    relabelled, copy = out.row(0, named=True), out.row(1, named=True)
    assert relabelled["gpu_measured"] and not copy["gpu_measured"]
    _same(out.head(1), _predict(None, [h100]))
    # the measured GPU's band is narrower than the unmeasured copy's of the same specs
    for lo, hi in (("power_w_per_gpu_lo", "power_w_per_gpu_hi"), ("itl_s_lo", "itl_s_hi")):
        assert copy[lo] < relabelled[lo] and relabelled[hi] < copy[hi], lo


def test_f2_an_unmeasured_gpu_of_a_later_year_still_gets_a_wider_band(tmp_path: Path) -> None:
    write(
        tmp_path / "gpus.csv",
        [
            _copy("H100-SXM5-80GB", "MY-H100-COPY"),
            _copy("H100-SXM5-80GB", "MY-H100-2030", release_year="2030"),
        ],
    )
    out = _predict(tmp_path, ["MY-H100-COPY", "MY-H100-2030"])
    now, later = out.row(0, named=True), out.row(1, named=True)
    assert later["itl_s_hi"] > now["itl_s_hi"] and later["itl_s_lo"] < now["itl_s_lo"]


def test_f3_a_known_architecture_in_another_case_reads_as_the_bundled_one(tmp_path: Path) -> None:
    write(
        tmp_path / "gpus.csv",
        [
            _copy("H100-SXM5-80GB", "MY-H100-COPY"),
            _copy("H100-SXM5-80GB", "MY-H100-LC", architecture="hopper"),
            _copy("H100-SXM5-80GB", "MY-H100-UC", architecture="HOPPER"),
            _bundled("V100-SXM2-32GB", architecture="volta"),
            _copy("H100-SXM5-80GB", "MY-NEXT", architecture="hopper next"),
        ],
    )
    gpus = load_catalog(tmp_path).gpus
    arch = dict(zip(gpus["id"].to_list(), gpus["architecture"].to_list(), strict=True))
    assert arch["MY-H100-LC"] == arch["MY-H100-UC"] == "Hopper"
    assert arch["V100-SXM2-32GB"] == "Volta"  # replacing a bundled row, spelt as the bundled rows
    assert arch["MY-NEXT"] == "hopper next"  # an architecture nobody measured: kept as written
    out = _predict(tmp_path, ["MY-H100-COPY", "MY-H100-LC", "MY-H100-UC"])
    _same(out.slice(1, 1), out.head(1))
    _same(out.slice(2, 1), out.head(1))
    assert out["in_domain"].all() and out["domain_reason"].eq("").all()


def test_an_empty_node_size_is_read_by_form_factor_in_the_physics_too(tmp_path: Path) -> None:
    """A Superchip row that leaves ``node_gpus`` empty holds 4 GPUs a node (docs/cli.md): the
    layout rules read 4, the physics read 8 (a GH200 copy at 8 GPUs, TP 4 × PP 2 either way, was
    predicted 0.2 % faster than GH200 itself)."""
    gh200 = next(
        r["id"]
        for r in load_catalog().gpus.iter_rows(named=True)
        if r["form_factor"] == "Superchip" and r["node_gpus"] == 4
    )
    write(tmp_path / "gpus.csv", [_copy(gh200, "MY-SUPERCHIP", node_gpus="")])
    assert load_catalog(tmp_path).gpu("MY-SUPERCHIP")["node_gpus"] == 4
    out = _predict(tmp_path, [gh200, "MY-SUPERCHIP"], gpu_count=8)
    for col in ("itl_s", "itl_s_hi", "power_w_per_gpu", "tensor_parallel", "pipeline_parallel"):
        assert out[col][0] == out[col][1], col
