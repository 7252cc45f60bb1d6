"""Hostile inputs found in the fourth review (2026-12-04, evening): each gets one clean line and
exit 1, or the right answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

from planner.scenario.tco import Tco, tco_price
from predictors.core.errors import WattgpuError
from predictors.core.safe_read import duplicate_csv_columns

PAPER = "paper-llama8b-low-load"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize("fmt", ["json", "spdx", "cyclonedx"])
def test_a_sweep_is_refused_for_the_json_report_formats(tmp_path: Path, fmt: str) -> None:
    # spdx and cyclonedx once got the sweep's Markdown appended after their JSON (exit 0)
    out = tmp_path / "k.out"
    out.write_text("kept", encoding="utf-8")
    sweep = tmp_path / "sweep.json"
    sweep.write_text("{}", encoding="utf-8")
    result = run_cli("report", PAPER, "--sweep", str(sweep), "-f", fmt, "-o", str(out))
    assert result.code == 1, result.err
    assert result.errors == [result.err.strip()]
    assert f"--sweep: not with --format {fmt}" in result.err
    assert out.read_text(encoding="utf-8") == "kept"


@pytest.mark.parametrize("where", ["scenario", "output", "input", "user_catalog"])
def test_a_path_component_too_long_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    long = tmp_path / ("y" * 300)
    args = {
        "scenario": ("validate", f"{long}.yaml"),
        "output": ("plan", PAPER, "-f", "json", "-o", f"{long}.json"),
        "input": ("predict", "--input", f"{long}.csv"),
        "user_catalog": ("catalog", "gpus"),
    }[where]
    if where == "user_catalog":
        monkeypatch.setenv("WATTGPU_USER_CATALOG", str(long))
    result = run_cli(*args)
    assert result.code == 1, result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert "file name too long" in result.err and " characters): " in result.err
    assert "internal error" not in result.err


def test_a_repeated_csv_column_is_refused(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(f"model,gpu,batch_size,gpu,batch_size\n{LLAMA},A30,1,L4,8\n", encoding="utf-8")
    assert duplicate_csv_columns(rows) == ["gpu", "batch_size"]
    result = run_cli("predict", "--input", str(rows))
    assert result.code == 1
    assert result.errors == [
        f"error: --input: {rows}: column(s) 'gpu', 'batch_size' appear more than once in the "
        "header; keep one of each"
    ]


def test_a_header_with_a_bom_and_crlf_is_not_a_repeat(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_bytes(f"\ufeffmodel,gpu\r\n{LLAMA},A30\r\n".encode())
    assert duplicate_csv_columns(rows) == []
    assert run_cli("predict", "--input", str(rows)).code == 0


def test_tco_amortisation_below_a_quarter_is_refused() -> None:
    result = run_cli(
        "plan", PAPER, "--set", "price_basis=tco", "--set", "tco.amortisation_years=1e-5"
    )
    assert result.code == 1
    assert "tco.amortisation_years" in result.err and "0.25" in result.err


def test_a_tco_price_above_the_bound_is_refused_not_capped() -> None:
    row = {"id": "X", "tdp_w": 700.0, "list_price_usd": 1e9, "list_price_source": "test"}
    with pytest.raises(WattgpuError, match=r"gpus\.X: its TCO GPU-hour is 2\.283e\+04 \$/h"):
        tco_price(row, None, Tco(amortisation_years=5.0))
    price = tco_price({**row, "list_price_usd": 30_000.0}, None, Tco(amortisation_years=5.0))
    assert price is not None and price.usd_per_hour == pytest.approx(30_000.0 / (5 * 8760))


@pytest.mark.slow
def test_a_listener_that_is_no_dask_scheduler_is_one_line() -> None:
    # a real TCP listener that greets like an SSH server: dask read the banner as a frame length
    # and asked for exabytes (internal error MemoryError, exit 2)
    pytest.importorskip("distributed")
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    stop = threading.Event()

    def greet() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    thread = threading.Thread(target=greet, daemon=True)
    thread.start()
    try:
        result = run_cli(
            "sweep", PAPER, "--draws", "2", "--engine", "dask",
            "--address", f"tcp://127.0.0.1:{port}",
        )  # fmt: skip
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()
    assert result.code == 1, result.err
    assert len(result.errors) == 1, result.err
    assert "not as a dask scheduler" in result.errors[0]
    assert "internal error" not in result.err


def test_an_unquoted_date_is_text_as_in_yaml_1_2(tmp_path: Path) -> None:
    # YAML 1.1 timestamps once made 2026-01-01 a datetime.date (refused as 'expected text') and
    # 2026-02-30 an internal ValueError
    from planner.scenario.yaml12 import load_yaml_text

    assert load_yaml_text("d: 2026-01-01\nt: 2026-01-01T00:00:00+99:00\n") == {
        "d": "2026-01-01",
        "t": "2026-01-01T00:00:00+99:00",
    }
    base = Path(__file__).resolve().parents[1] / "scenarios" / f"{PAPER}.yaml"
    for value, code in (("2026-01-01", 0), ("2026-02-30", 1), ("2026-01-01T00:00:00+99:00", 1)):
        scenario = tmp_path / f"s{code}.yaml"
        text = base.read_text(encoding="utf-8") + f"disclosure:\n  reporting_start: {value}\n"
        scenario.write_text(text, encoding="utf-8")
        result = run_cli("validate", str(scenario))
        assert result.code == code, result.err
        if code:
            assert result.errors == [result.err.strip()]
            assert "disclosure.reporting_start" in result.err and "is not an ISO date" in result.err
        override = run_cli("validate", PAPER, "--set", f"disclosure.reporting_start={value}")
        assert override.code == code, override.err
