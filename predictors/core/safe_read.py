"""Read input files defensively: size and nesting limits checked before parsing, clean errors.

Every file a user hands to wattgpu (scenario and overlay YAML, user catalog CSV, Hugging Face
``config.json``, plan JSON for ``diff``, the ``predict --input`` CSV) is read through
:func:`read_text`, which refuses files over a size limit *before* reading them (``/dev/zero``
included), and decodes UTF-8 with an error naming the file and the byte offset. JSON goes through
:func:`load_json`, which checks the nesting depth on the raw text before ``json.loads`` (so no
``RecursionError``) and rejects ``NaN``/``Infinity`` and integers too long to convert.
:func:`check_depth` bounds the depth of already-built data (after overlays and ``--set``).
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

from predictors.core.errors import WattgpuError

MIB = 1024 * 1024
#: Largest scenario, overlay or config file (YAML/JSON) read: the 500-entry scenario is ~0.2 MiB.
MAX_CONFIG_BYTES = 8 * MIB
#: Largest plan JSON read by ``diff`` (plans carry every candidate: ~10 MiB for 500 entries).
MAX_PLAN_JSON_BYTES = 256 * MIB
#: Largest catalog CSV (the bundled ones are ~0.1 MiB).
MAX_CATALOG_BYTES = 16 * MIB
#: Largest ``predict --input`` CSV (1 M rows are ~80 MiB).
MAX_PREDICT_CSV_BYTES = 1024 * MIB
#: Deepest nesting of mappings/lists accepted in any YAML or JSON input (scenarios need 5).
MAX_DEPTH = 32


def file_size_problem(path: Path, max_bytes: int) -> str | None:
    """Why *path* cannot be read as an input of at most *max_bytes* (None when it can): missing,
    a directory, not a regular file (a device such as ``/dev/zero``), or too large."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot read ({exc.strerror}) — check the path"
    if path.is_dir():
        return "is a directory — give a file"
    if not path.is_file():
        return "is not a regular file — give a file"
    if st.st_size > max_bytes:
        return _too_large(max_bytes)
    return None


def _too_large(max_bytes: int) -> str:
    return (
        f"file is larger than the {max_bytes // MIB} MiB limit for this input — give a smaller file"
    )


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The bytes of *path*, or WattgpuError naming the file when missing or over *max_bytes*.

    Regular files are checked by size before reading; pipes (``<(cmd)``) are read in chunks and
    refused as soon as they pass the limit; devices are refused.
    """
    try:
        st = path.stat()
    except OSError as exc:
        raise WattgpuError(f"{path}: cannot read ({exc.strerror}) — check the path") from None
    if path.is_dir():
        raise WattgpuError(f"{path}: is a directory — give a file")
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        raise WattgpuError(f"{path}: is a device, not a file — give a file")
    if st.st_size > max_bytes:
        raise WattgpuError(f"{path}: {_too_large(max_bytes)}")
    chunks: list[bytes] = []
    size = 0
    try:
        with path.open("rb") as fh:
            while size <= max_bytes:
                chunk = fh.read(MIB)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except OSError as exc:
        raise WattgpuError(f"{path}: cannot read ({exc.strerror}) — check the path") from None
    if size > max_bytes:
        raise WattgpuError(f"{path}: {_too_large(max_bytes)}")
    return b"".join(chunks)


def decode_utf8(data: bytes, path: Path | str) -> str:
    """*data* as text; WattgpuError naming the file and offset when it is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WattgpuError(
            f"{path}: not UTF-8 text (invalid byte at offset {exc.start}) — save it as UTF-8"
        ) from None
    return text.removeprefix("\ufeff")


def read_text(path: Path, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """UTF-8 text of *path* (a leading BOM dropped), with the size limit checked first."""
    return decode_utf8(read_bytes(path, max_bytes), path)


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_text_depth(text: str) -> int:
    """Deepest ``[``/``{`` nesting of JSON *text*, ignoring brackets inside strings."""
    import numpy as np

    bare = _JSON_STRING.sub("", text).encode("utf-8", "replace")
    codes = np.frombuffer(bare, dtype=np.uint8)
    steps = np.zeros(codes.shape, dtype=np.int64)
    steps[(codes == ord("[")) | (codes == ord("{"))] = 1
    steps[(codes == ord("]")) | (codes == ord("}"))] = -1
    return int(np.cumsum(steps).max()) if steps.size else 0


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def load_json(path: Path, max_bytes: int = MAX_CONFIG_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse the JSON file *path* within the size and depth limits; NaN/Infinity are errors."""
    text = read_text(path, max_bytes)
    depth = json_text_depth(text)
    if depth > max_depth:
        raise WattgpuError(
            f"{path}: nested {depth} levels deep, more than the {max_depth} allowed — "
            "flatten the file"
        )
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise WattgpuError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}) — "
            "fix the JSON"
        ) from None
    except ValueError as exc:  # NaN/Infinity, or an integer with thousands of digits
        what = str(exc).splitlines()[0][:120]
        raise WattgpuError(
            f"{path}: unusable number in JSON ({what}) — give finite numbers"
        ) from None


def data_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of lists/dicts in *value* (iterative; stops counting past *limit* + 1)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict | list):
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if id(node) in seen:  # shared (YAML alias) subtrees: their depth is already counted
            continue
        seen.add(id(node))
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_depth(value: Any, source: str, limit: int = MAX_DEPTH) -> None:
    """WattgpuError naming *source* when *value* nests deeper than *limit* levels."""
    if data_depth(value, limit) > limit:
        raise WattgpuError(f"{source}: nested more than {limit} levels deep — flatten the data")
