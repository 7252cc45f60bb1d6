"""Hostile-input round 3, writes: nothing the user already had is truncated or lost.

* concurrent ``catalog import-hf`` runs into one user catalog keep every row (advisory lock,
  re-read inside it);
* on a full disk and in a read-only directory every writer (``--output``, ``schema -o``,
  ``scenarios --copy --force``, the user catalog, trained artifacts) fails with one clean line
  and leaves the existing file byte for byte as it was, with no temporary file left behind.

The disk tests mount a small tmpfs, which needs root (CI runs as root); elsewhere they skip with
that reason.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from predictors.core.errors import WattgpuError
from predictors.core.output import atomic_write, write_output

#: A Llama-3.1-8B-shaped Hugging Face config.json.
LLAMA_CONFIG = Path(__file__).parent / "fixtures" / "llama8b_config.json"


@pytest.mark.slow  # 8 fresh processes (~5 s)
def test_eight_concurrent_imports_keep_all_eight_rows(tmp_path: Path) -> None:
    config = LLAMA_CONFIG
    catalog = tmp_path / "uc"
    script = (
        "import sys; from planner.cli.app import main; "
        "sys.argv = ['wattgpu', 'catalog', 'import-hf', sys.argv[1], '--id', sys.argv[2], "
        "'--user-catalog', sys.argv[3]]; main()"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(config), f"acme/m{i}", str(catalog)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "WATTGPU_NO_PROGRESS": "1"},
        )
        for i in range(8)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert b"wrote acme/m" in out
    with (catalog / "llms.csv").open(encoding="utf-8") as fh:
        ids = sorted(row["id"] for row in csv.DictReader(fh))
    assert ids == sorted(f"acme/m{i}" for i in range(8))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, unmounted afterwards (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> None:
    """Fill *disk* until the next write fails with ENOSPC."""
    try:
        with (disk / f"filler-{uuid.uuid4().hex}").open("wb", buffering=0) as fh:
            while True:
                fh.write(b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == 28, exc  # ENOSPC: the disk is full


def _leftovers(directory: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


def test_atomic_write_on_a_full_disk_keeps_the_old_file(small_disk: Path) -> None:
    target = small_disk / "plan.json"
    target.write_bytes(b"old contents\n")
    _fill(small_disk)
    with pytest.raises(OSError):
        atomic_write(target, b"x" * 200_000)
    assert target.read_bytes() == b"old contents\n"
    assert not [p for p in small_disk.iterdir() if p.name.startswith(".plan.json.")]


def test_write_output_on_a_full_disk_is_one_clean_line(small_disk: Path) -> None:
    target = small_disk / "out.md"
    target.write_bytes(b"keep me")
    _fill(small_disk)
    with pytest.raises(WattgpuError, match=r"^--output .*out\.md: cannot write \(No space left"):
        write_output(target, "y" * 200_000)
    assert target.read_bytes() == b"keep me"


@pytest.mark.parametrize(
    "args",
    [
        ["schema", "plan", "-o", "{disk}/schema.json"],
        ["scenarios", "--copy", "enterprise-fleet", "{disk}", "--force"],
        ["plan", "paper-llama8b-low-load", "--format", "json", "--output", "{disk}/plan.json"],
    ],
    ids=["schema", "scenarios-copy", "plan-output"],
)
@pytest.mark.slow
def test_commands_on_a_full_disk_leave_the_existing_file_intact(
    small_disk: Path, args: list[str]
) -> None:
    names = {"schema": "schema.json", "scenarios": "enterprise-fleet.yaml", "plan": "plan.json"}
    existing = small_disk / names[args[0]]
    before = b"the user's own file\n" * 10
    existing.write_bytes(before)
    _fill(small_disk)
    fillers = {p.name for p in small_disk.iterdir()}
    result = run_cli(*(a.replace("{disk}", str(small_disk)) for a in args))
    assert result.code == 1, result.err
    assert len(result.errors) == 1 and "No space left" in result.errors[0], result.err
    assert existing.read_bytes() == before
    assert _leftovers(small_disk, fillers) == []


def test_read_only_directory_leaves_files_intact(small_disk: Path) -> None:
    existing = small_disk / "schema.json"
    existing.write_bytes(b"mine")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    result = run_cli("schema", "plan", "-o", str(existing))
    assert result.code == 1 and "Read-only file system" in result.err
    copied = run_cli("scenarios", "--copy", "enterprise-fleet", str(small_disk))
    assert copied.code == 1 and len(copied.errors) == 1, copied.err
    assert existing.read_bytes() == b"mine"
    assert sorted(p.name for p in small_disk.iterdir()) == ["schema.json"]


@pytest.mark.slow
def test_user_catalog_import_on_a_full_disk_keeps_the_catalog(small_disk: Path) -> None:
    config = LLAMA_CONFIG
    args = ["catalog", "import-hf", str(config), "--user-catalog", str(small_disk)]
    assert run_cli(*args, "--id", "acme/first").code == 0
    before = (small_disk / "llms.csv").read_bytes()
    _fill(small_disk)
    result = run_cli(*args, "--id", "acme/second")
    assert result.code == 1 and "No space left" in result.err, result.err
    assert (small_disk / "llms.csv").read_bytes() == before


def _wattgpu(*args: str, stdout: Any, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-c", "from planner.cli.app import main; main()", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env={**os.environ, "WATTGPU_NO_PROGRESS": "1", **(env or {})},
        timeout=120,
        check=False,
    )


@pytest.mark.slow  # a fresh process
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_full_stdout_is_one_clean_line() -> None:
    with open("/dev/full", "w") as full:
        done = _wattgpu("plan", "paper-llama8b-low-load", stdout=full)
    errors = [line for line in done.stderr.decode().splitlines() if line.startswith("error: ")]
    assert done.returncode == 1, done.stderr
    assert len(errors) == 1 and "cannot write the output (No space left" in errors[0]
    assert "internal error" not in done.stderr.decode()


@pytest.mark.slow  # a fresh process
def test_ascii_only_stdout_replaces_what_it_cannot_show() -> None:
    done = _wattgpu("plan", "paper-llama8b-low-load", stdout=subprocess.PIPE,
                    env={"PYTHONIOENCODING": "ascii"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("ascii")  # every byte is ASCII
    assert "status     optimal" in text and "internal error" not in done.stderr.decode()
