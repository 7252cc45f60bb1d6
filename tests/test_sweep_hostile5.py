"""Hostile sweep inputs, round 5: a ``--address`` listener that accepts and stays silent (dask
and Ray once hung forever in their handshake), a grid range beyond its axis's bounds (once
planned with 1e308 load growth or 1e6 $/kWh), and the errors found after loading name their
file and field (``sweep.grid.gpu_available``, ``model_load``, ``sweep.draws``).

Real sockets, real dask, real scenario files: nothing is mocked. The fast tests shorten
:data:`planner.sweep.address.HANDSHAKE_TIMEOUT_S` to 1 s; the slow ones run at the real bound.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from planner.scenario.sweep_block import AxisRange, SweepGrid
from planner.sweep import address as address_mod
from predictors.core.errors import WattgpuError
from tests.cli_runner import Result, run_cli

pytestmark = pytest.mark.usefixtures("cached_predictor")
PAPER = "paper-llama8b-low-load"
REPO = Path(__file__).resolve().parent.parent


@contextmanager
def listener(answer: Callable[[socket.socket], None] | None = None) -> Iterator[int]:
    """A real TCP listener on 127.0.0.1 (its port): each connection gets *answer* (None: it is
    held open and never written to, like a server waiting for a request)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            if answer is None:
                held.append(conn)
            else:
                with conn:
                    answer(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()


def _sweep_at(engine: str, port: int, prefix: str = "") -> tuple[Result, float]:
    start = time.monotonic()
    result = run_cli(
        "sweep", PAPER, "--draws", "2", "--engine", engine, "--address", f"{prefix}127.0.0.1:{port}"
    )
    return result, time.monotonic() - start


def _one_line(result: Result) -> str:
    """The one ``error:`` line of a command that exits 1."""
    assert result.code == 1, result.err
    assert len(result.errors) == 1, result.err
    assert "internal error" not in result.err and "Traceback" not in result.err
    return result.errors[0]


# --- a silent listener ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "prefix", "name"),
    [("dask", "tcp://", "a dask scheduler"), ("ray", "", "a Ray cluster")],
)
@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_a_silent_listener_is_one_line_within_the_bound(
    monkeypatch: pytest.MonkeyPatch, engine: str, prefix: str, name: str
) -> None:
    pytest.importorskip("distributed" if engine == "dask" else "ray")
    monkeypatch.setattr(address_mod, "HANDSHAKE_TIMEOUT_S", 1.0)
    with listener() as port:
        result, took = _sweep_at(engine, port, prefix)
    line = _one_line(result)
    assert f"--address: {prefix}127.0.0.1:{port} accepted the connection" in line
    assert f"did not answer as {name} within 1 s" in line
    assert "check that it is" in line
    assert took < 10, took


@pytest.mark.slow
@pytest.mark.parametrize(("engine", "prefix"), [("dask", "tcp://"), ("ray", "")])
def test_a_silent_listener_stops_at_the_documented_bound(engine: str, prefix: str) -> None:
    pytest.importorskip("distributed" if engine == "dask" else "ray")
    with listener() as port:
        result, took = _sweep_at(engine, port, prefix)
    line = _one_line(result)
    bound = address_mod.HANDSHAKE_TIMEOUT_S
    assert f"within {bound:g} s" in line
    assert bound <= took < bound + 15, took


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_a_listener_that_is_no_ray_cluster_is_one_line() -> None:
    pytest.importorskip("ray")

    def http(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    with listener(http) as port:
        result, took = _sweep_at("ray", port)
    line = _one_line(result)
    assert "answered, but not as a Ray cluster" in line and "HTTP/1.1" in line
    assert "ray start --head" in line
    assert took < 10, took


@pytest.mark.slow
def test_a_ray_listener_that_closes_at_once_is_one_line() -> None:
    pytest.importorskip("ray")
    with listener(lambda conn: None) as port:
        result, _ = _sweep_at("ray", port)
    assert "it closed the connection" in _one_line(result)


@pytest.mark.slow  # 1.3-2 s: the default run stays under 2 minutes
def test_a_dask_listener_that_closes_at_once_is_one_line() -> None:
    pytest.importorskip("distributed")
    with listener(lambda conn: None) as port:
        result, _ = _sweep_at("dask", port, "tcp://")
    assert "answered, but not as a dask scheduler" in _one_line(result)


@pytest.mark.slow  # over 1 s: the default run stays under 2 minutes on 2 cores
def test_a_real_dask_scheduler_passes_the_check_and_its_worker_does_not() -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None
    ) as cluster:
        address_mod.check_address("dask", cluster.scheduler_address)
        address_mod.check_address("dask", cluster.scheduler_address.removeprefix("tcp://"))
        worker = next(iter(cluster.scheduler_info["workers"]))
        with pytest.raises(WattgpuError, match="not as a dask scheduler .*'Worker'"):
            address_mod.check_address("dask", worker)
        result = run_cli(
            "sweep", PAPER, "--draws", "2", "--engine", "dask",
            "--address", cluster.scheduler_address, "-f", "json",
        )  # fmt: skip
    assert result.code == 0, result.err
    assert '"draws": 2' in result.out


# --- a grid range's bounds --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axis", "start", "stop", "field", "bound"),
    [
        ("load_growth", "1.0", "1e308", "load_growth.stop", "less than or equal to 1000"),
        ("load_growth", "-1", "1.3", "load_growth.start", "greater than or equal to 0"),
        ("electricity_usd_per_kwh", "0.1", "1e6", "electricity_usd_per_kwh.stop", "to 100"),
        ("electricity_usd_per_kwh", "101", "0.1", "electricity_usd_per_kwh.start", "to 100"),
        ("grid_g_co2_per_kwh", "6000", "10", "grid_g_co2_per_kwh.start", "to 5000"),
        ("grid_g_co2_per_kwh", "10", "5001", "grid_g_co2_per_kwh.stop", "to 5000"),
        ("power_cap_kw", "0", "40", "power_cap_kw.start", "greater than 0"),
        ("power_cap_kw", "20", "1e9", "power_cap_kw.stop", "to 100000000"),
        ("budget_usd", "0", "1e5", "budget_usd.start", "greater than 0"),
        ("budget_usd", "1e5", "1e16", "budget_usd.stop", "to 1000000000000000"),
        ("model_load", "1001", "1", "model_load.chat-8b.start", "to 1000"),
        ("model_load", "1", "2000", "model_load.chat-8b.stop", "to 1000"),
        ("gpu_available", "0", "2e6", "gpu_available.L4.stop", "to 1000000"),
    ],
)
def test_a_range_beyond_its_axis_bounds_is_one_line(
    axis: str, start: str, stop: str, field: str, bound: str
) -> None:
    value = f"{{start: {start}, stop: {stop}, steps: 3}}"
    if axis == "model_load":
        value = f"{{chat-8b: {value}}}"
    elif axis == "gpu_available":
        value = f"{{L4: {value}}}"
    result = run_cli("sweep", PAPER, "--set", f"sweep.grid.{axis}={value}")
    line = _one_line(result)
    assert f": sweep.grid.{field}: " in line and "is out of range — give a value" in line, line
    assert bound in line, line
    assert ".range." not in line and "--set sweep.grid." in line


def test_a_range_in_the_file_names_the_file_and_field(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    shutil.copy(REPO / "scenarios" / f"{PAPER}.yaml", scenario)
    with scenario.open("a", encoding="utf-8") as f:
        f.write("sweep:\n  grid:\n    load_growth: {start: 1.0, stop: 1e308, steps: 4}\n")
    result = run_cli("sweep", str(scenario))
    assert result.errors == [
        f"error: {scenario}: sweep.grid.load_growth.stop: 1e+308 is out of range — give a value "
        "less than or equal to 1000"
    ]
    assert "RuntimeWarning" not in result.err and "overflow" not in result.err


def test_the_list_form_names_the_value_as_set_writes_it() -> None:
    result = run_cli("sweep", PAPER, "--set", "sweep.grid.load_growth=[1.0, 1e308]")
    assert ": sweep.grid.load_growth[1]: 1e+308 is out of range" in _one_line(result)


def test_a_range_within_the_bounds_gives_values_within_them() -> None:
    grid = SweepGrid.model_validate(
        {
            "load_growth": {"start": 0.0, "stop": 1000.0, "steps": 1000},
            "electricity_usd_per_kwh": {"start": 100.0, "stop": 0.1, "steps": 7},
            "power_cap_kw": {"start": 1e-9, "stop": 1e8, "steps": 999},
            "gpu_available": {"L4": {"start": 0, "stop": 1_000_000, "steps": 3}},
        }
    )
    for axis, low, high in (
        (grid.load_growth, 0.0, 1000.0),
        (grid.electricity_usd_per_kwh, 0.1, 100.0),
        (grid.power_cap_kw, 1e-9, 1e8),
    ):
        assert isinstance(axis, AxisRange)
        values = axis.values()
        assert (values[0], values[-1]) == (axis.start, axis.stop)
        assert all(low <= v <= high for v in values) and len(values) == axis.steps
    assert AxisRange(start=1.0, stop=1.3, steps=4).values() == (1.0, 1.1, 1.2, 1.3)
    assert AxisRange(start=0.3, stop=0.3, steps=1).values() == (0.3,)


# --- errors found after loading name the file and the field ----------------------------------


def _scenario(tmp_path: Path, block: str, name: str = "s.yaml") -> Path:
    scenario = tmp_path / name
    shutil.copy(REPO / "scenarios" / f"{PAPER}.yaml", scenario)
    with scenario.open("a", encoding="utf-8") as f:
        f.write(block)
    return scenario


def test_sweep_draws_above_the_limit_names_the_yaml_field(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path, "sweep:\n  draws: 100001\n")
    result = run_cli("sweep", str(scenario))
    line = _one_line(result)
    assert line.startswith(f"error: {scenario}: sweep.draws: 100,001 draws is above the limit")
    assert "--force" in line and "--draws:" not in line
    # --draws on the command line is still named as the option; --set names the override
    line = _one_line(run_cli("sweep", str(scenario), "--draws", "100002"))
    assert line.startswith("error: --draws: 100,002 draws")
    line = _one_line(run_cli("sweep", PAPER, "--set", "sweep.draws=100001"))
    assert "--set sweep.draws=100001: sweep.draws: 100,001 draws" in line


@pytest.mark.parametrize(
    ("block", "field", "needle"),
    [
        ("gpu_available: {L5: [1, 2]}", "sweep.grid.gpu_available.L5", "did you mean: L4?"),
        ("model_load: {chat-9b: [1, 2]}", "sweep.grid.model_load.chat-9b", "chat-8b"),
        ('model_load: {"a.b": [1, 2]}', 'sweep.grid.model_load["a.b"]', "no model entry"),
    ],
)
def test_a_grid_name_error_names_the_file_and_field(
    tmp_path: Path, block: str, field: str, needle: str
) -> None:
    scenario = _scenario(tmp_path, f"sweep:\n  grid:\n    {block}\n")
    line = _one_line(run_cli("sweep", str(scenario)))
    assert line.startswith(f"error: {scenario}: {field}: "), line
    assert needle in line


def test_a_grid_name_error_in_an_overlay_names_the_overlay(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path, "sweep:\n  grid:\n    load_growth: [1.0, 1.1]\n")
    overlay = tmp_path / "more.yaml"
    overlay.write_text("sweep:\n  grid:\n    gpu_available: {L5: [1]}\n", encoding="utf-8")
    line = _one_line(run_cli("sweep", str(scenario), "--overlay", str(overlay)))
    assert line.startswith(f"error: {overlay}: sweep.grid.gpu_available.L5: "), line
