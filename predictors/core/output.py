"""Write an output file the same way for every command: parent folders, no clobbering, atomic.

:func:`write_output` is what every ``--output``/``-o``/``--chart`` of the CLI goes through: it
creates missing parent directories, refuses to write onto one of the command's input files
(``wattgpu plan s.yaml -o s.yaml``), and writes to a temporary file in the same directory that is
renamed over the target (``os.replace``), so a failed or interrupted run never leaves half a
file. Errors name the option and the path.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from predictors.core.errors import WattgpuError


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_not_input(target: Path, inputs: Iterable[Path | str | None], option: str) -> None:
    """WattgpuError when *target* is one of *inputs* (same file, whatever the spelling)."""
    for item in inputs:
        if item is None:
            continue
        source = Path(item)
        if _same_file(target, source) or target.resolve() == source.resolve():
            raise WattgpuError(
                f"{option} {target}: is the input file {source} — write to another path"
            )


def write_output(
    target: Path,
    content: str | bytes,
    *,
    inputs: Iterable[Path | str | None] = (),
    option: str = "--output",
) -> Path:
    """Write *content* to *target* atomically (text as UTF-8); return *target*."""
    check_not_input(target, inputs, option)
    if target.is_dir():
        raise WattgpuError(f"{option} {target}: is a directory — give a file name")
    data = content.encode("utf-8") if isinstance(content, str) else content
    if target.exists() and not target.is_file():  # /dev/stdout, a FIFO: write through
        try:
            with target.open("wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise WattgpuError(f"{option} {target}: cannot write ({exc.strerror})") from None
        return target
    tmp_name: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if target.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp_name, target.stat().st_mode & 0o777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_name, 0o666 & ~umask)
        os.replace(tmp_name, target)
        tmp_name = None
    except OSError as exc:
        raise WattgpuError(
            f"{option} {target}: cannot write ({exc.strerror or exc}) — check the path"
        ) from None
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
    return target
