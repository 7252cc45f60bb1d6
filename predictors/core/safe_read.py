"""Read input files defensively: size and nesting limits checked before parsing, clean errors.

Every file a user hands to wattgpu (scenario and overlay YAML, user catalog CSV, Hugging Face
``config.json``, plan JSON for ``diff``, the ``predict --input`` CSV) is read through
:func:`read_text`, which refuses files over a size limit *before* reading them (``/dev/zero``
included), and decodes UTF-8 with an error naming the file and the byte offset. JSON goes through
:func:`load_json`, which checks the nesting depth on the raw bytes in one streaming pass before
parsing (so no ``RecursionError``, and memory that does not grow with a long string), parses
with :func:`parse_json` and rejects ``NaN``/``Infinity``, integers too long to convert and an
object that states a key twice (a parser keeps the last one: a value silently ignored).
:func:`check_depth` bounds the depth of already-built data (after overlays and ``--set``);
:func:`collector_paused` keeps the garbage collector out of reading a large file. The checks of
a CSV's text (encoding, line ends, control characters, a repeated column) are in
:mod:`predictors.core.csv_text`.
"""

from __future__ import annotations

import gc
import json
import os
import stat
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import compress
from pathlib import Path
from typing import Any

from predictors.core.csv_text import HEADER_BYTES_MAX as HEADER_BYTES_MAX
from predictors.core.csv_text import duplicate_csv_columns as duplicate_csv_columns
from predictors.core.csv_text import wide_problem
from predictors.core.errors import WattgpuError

MIB = 1024 * 1024
#: Largest scenario, overlay or config file (YAML/JSON) read: the 500-entry scenario is ~0.2 MiB.
MAX_CONFIG_BYTES = 8 * MIB
#: Largest plan JSON read by ``report`` and ``diff`` (the 500-entry plan: ~18 MB by default, its
#: allocated candidates and best alternatives; ``--candidates all`` keeps every one).
MAX_PLAN_JSON_BYTES = 256 * MIB
#: Largest catalog CSV (the bundled ones are ~0.1 MiB).
MAX_CATALOG_BYTES = 16 * MIB
#: Largest ``predict --input`` CSV (1 M rows are ~80 MiB).
MAX_PREDICT_CSV_BYTES = 1024 * MIB
#: Deepest nesting of mappings/lists accepted in any YAML or JSON input (scenarios need 5).
MAX_DEPTH = 32


def not_regular_problem(path: Path) -> str | None:
    """Why *path* is not a regular file one can read (None when it is), checked before opening:
    missing, a dangling or looping symbolic link, a directory, a FIFO, a device or a socket.

    Opening a FIFO with no writer blocks forever and a device never ends, so inputs must be
    regular files (symbolic links to one are fine)."""
    import errno

    try:
        st = path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop — point it at a file"
        if path.is_symlink():
            return f"is a dangling symbolic link (to {os.readlink(path)}) — point it at a file"
        return f"cannot read ({exc.strerror}) — check the path"
    mode = st.st_mode
    kinds = (
        (stat.S_ISDIR, "is a directory — give a file"),
        (stat.S_ISFIFO, "is a FIFO (named pipe), not a regular file — give a file"),
        (stat.S_ISCHR, "is a device, not a regular file — give a file"),
        (stat.S_ISBLK, "is a device, not a regular file — give a file"),
        (stat.S_ISSOCK, "is a socket, not a regular file — give a file"),
    )
    if stat.S_ISDIR(mode) and str(path) == ".":  # what an empty path argument ('') becomes
        return "is the current directory (an empty path names it) — give a file"
    for check, why in kinds:
        if check(mode):
            return why
    return None if stat.S_ISREG(mode) else "is not a regular file — give a file"


def file_size_problem(path: Path, max_bytes: int) -> str | None:
    """Why *path* cannot be read as an input of at most *max_bytes* (None when it can): see
    :func:`not_regular_problem`, or too large."""
    problem = not_regular_problem(path)
    if problem is not None:
        return problem
    if path.stat().st_size > max_bytes:
        return _too_large(max_bytes)
    return None


def _too_large(max_bytes: int) -> str:
    return (
        f"file is larger than the {max_bytes // MIB} MiB limit for this input — give a smaller file"
    )


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The bytes of *path*, or WattgpuError naming the file when it is not a regular file
    (:func:`not_regular_problem`, checked before opening) or over *max_bytes*; the size is
    checked again while reading, so a file that grows meanwhile is refused too."""
    problem = file_size_problem(path, max_bytes)
    if problem is not None:
        raise WattgpuError(f"{path}: {problem}")
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
    """*data* as text; WattgpuError naming the file and offset when it is not UTF-8, or the
    encoding when it is UTF-16 or UTF-32 (:func:`~predictors.core.csv_text.wide_problem`; ASCII
    in UTF-16 without a byte-order mark decodes, as text full of NULs)."""
    wide = wide_problem(data)
    if wide is not None:
        raise WattgpuError(f"{path}: {wide.what} — {wide.fix}")
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


#: Bytes scanned at once by :func:`json_depth` (its working memory is a few times this).
DEPTH_CHUNK_BYTES = 256 * 1024
#: What each byte is to the scan: 0 for every byte but ``"`` (1), ``\\`` (2), ``[``/``{`` (3),
#: ``]``/``}`` (4) and ``:`` (5), so one ``bytes.translate`` and ``flatnonzero`` leave only those.
_QUOTE, _BACKSLASH, _OPEN, _CLOSE, _COLON = 1, 2, 3, 4, 5
_KIND_OF = {'"': _QUOTE, "\\": _BACKSLASH, "[": _OPEN, "{": _OPEN, "]": _CLOSE, "}": _CLOSE}
_KIND_OF[":"] = _COLON
_KINDS = bytes(_KIND_OF.get(chr(b), 0) for b in range(256))


@dataclass
class _DepthScan:
    """State carried from one chunk to the next: nesting, string parity, pending backslashes;
    and the ``:`` outside strings, which in valid JSON are the members of all its objects."""

    depth: int = 0
    deepest: int = 0
    in_string: bool = False
    backslashes: int = 0
    members: int = 0

    def feed(self, chunk: bytes) -> None:
        """Advance over *chunk*: brackets inside strings do not count, ``\\"`` stays in one.

        Only the quotes, backslashes and brackets are looked at (found at C speed); everything
        else cannot change the nesting."""
        import numpy as np

        if not chunk:
            return
        kinds = np.frombuffer(chunk.translate(_KINDS), dtype=np.uint8)
        pos = np.flatnonzero(kinds)
        if pos.size == 0:
            self.backslashes = 0
            return
        kind = kinds[pos]
        slash = kind == _BACKSLASH
        # a backslash continues a run when the byte right before it is a backslash too
        joined = np.zeros(pos.size, dtype=bool)
        joined[1:] = slash[1:] & slash[:-1] & (pos[1:] == pos[:-1] + 1)
        first = np.where(slash & ~joined, np.arange(pos.size), 0)
        np.maximum.accumulate(first, out=first)
        # length of the backslash run ending at each backslash (one from the last chunk too)
        run = pos - pos[first] + 1 + np.where(pos[first] == 0, self.backslashes, 0)
        # backslashes right before each byte of interest
        before = np.zeros(pos.size, dtype=np.int64)
        after_run = slash[:-1] & (pos[1:] == pos[:-1] + 1)
        before[1:] = np.where(after_run, run[:-1], 0)
        if pos[0] == 0:
            before[0] = self.backslashes
        toggles = (kind == _QUOTE) & (before % 2 == 0)
        flips = np.cumsum(toggles, dtype=np.int64) - toggles + int(self.in_string)
        outside = flips % 2 == 0
        steps = (outside & (kind == _OPEN)).astype(np.int64)
        steps -= outside & (kind == _CLOSE)
        running = self.depth + np.cumsum(steps)
        self.members += int(np.count_nonzero(outside & (kind == _COLON)))
        self.deepest = max(self.deepest, int(running.max()))
        self.depth = int(running[-1])
        self.in_string = bool((int(toggles.sum()) + int(self.in_string)) % 2)
        ends_in_run = bool(slash[-1]) and int(pos[-1]) == len(chunk) - 1
        self.backslashes = int(run[-1]) if ends_in_run else 0


def _scan(data: bytes | str) -> _DepthScan:
    """:class:`_DepthScan` over *data*, in chunks of :data:`DEPTH_CHUNK_BYTES`: the memory used
    does not grow with the input (a 50 MB string field costs no more than a short one)."""
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    scan = _DepthScan()
    for start in range(0, len(raw), DEPTH_CHUNK_BYTES):
        scan.feed(raw[start : start + DEPTH_CHUNK_BYTES])
    return scan


def json_depth(data: bytes | str) -> int:
    """Deepest ``[``/``{`` nesting of JSON *data*, ignoring brackets inside strings."""
    return _scan(data).deepest


def json_members(data: bytes | str) -> int:
    """Members (``"key": value``) of all the objects of valid JSON *data*: its ``:`` outside
    strings."""
    return _scan(data).members


_container = frozenset((dict, list)).__contains__


def value_members(value: Any) -> int:
    """Entries of all the dicts in parsed JSON *value*, nested ones included. Equal to
    :func:`json_members` of its text exactly when no object of the text repeats a key (a
    repeat leaves one entry for two members, or drops a subtree with its members)."""
    total, stack = 0, [value] if _container(type(value)) else []
    while stack:  # at C speed but for the loop over containers (30 ms for an 18 MB plan)
        node = stack.pop()
        if type(node) is dict:
            total += len(node)
            node = node.values()
        else:
            try:  # a list that adds up holds only numbers: no object in it
                sum(node)
                continue
            except (TypeError, OverflowError):
                pass
        stack.extend(compress(node, map(_container, map(type, node))))
    return total


def _text_of(key: str) -> str:
    """*key* quoted as JSON (ASCII, escapes kept), at most about 60 characters."""
    text = json.dumps(key)
    return text if len(text) <= 60 else text[:58] + '…"'


def _step(where: str, key: str | int) -> str:
    """The JSON path *where* one step down: ``a[2]``, ``a.b``, ``a["b c"]``."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if key.isascii() and key.isidentifier() else f"{where}[{_text_of(key)}]"


def repeated_key(text: str, allow_inf_nan: bool = False) -> str | None:
    """Where JSON *text* first (objects in document order) states a key twice in one object,
    as ``key "status" appears twice in the top-level object``; None when it never does. Reads
    *text* with the standard library (slower than :func:`parse_json`: :func:`load_json` asks
    only when :func:`value_members` falls short)."""
    repeats: dict[int, tuple[dict[str, Any], str, int]] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            key, n = next((k, n) for k, n in Counter(k for k, _ in pairs).items() if n > 1)
            repeats[id(obj)] = (obj, key, n)  # the object kept alive: its id is not reused
        return obj

    constant = None if allow_inf_nan else _reject_constant
    value = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=constant)
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:  # an object dropped with a repeated key is not reached: its parent is first
        node, where = stack.pop()
        if isinstance(node, dict) and id(node) in repeats:
            _, key, n = repeats[id(node)]
            within = f"the object at {where.removeprefix('.')}" if where else "the top-level object"
            return f"key {_text_of(key)} appears {'twice' if n == 2 else f'{n} times'} in {within}"
        if isinstance(node, dict | list):
            children = node.items() if isinstance(node, dict) else enumerate(node)
            kids = [(v, _step(where, k)) for k, v in children if isinstance(v, dict | list)]
            stack.extend(reversed(kids))
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def parse_json(text: str, allow_inf_nan: bool = False) -> Any:
    """``json.loads(text)`` with ``NaN``/``Infinity`` refused (ValueError, or JSONDecodeError),
    or read as floats with *allow_inf_nan* (a caller that checks every value it reads).

    pydantic-core's parser reads it first (about 2.5 × faster on a large plan): a document it
    accepts has the same values under the standard library (``tests/test_fuzz_reads.py`` checks
    it); one it refuses (bad JSON, a lone surrogate, a huge integer, ``NaN``) is read again by
    the standard library, so what is accepted and every error stay the standard library's."""
    from pydantic_core import from_json

    try:
        return from_json(text, allow_inf_nan=allow_inf_nan)
    except ValueError:
        if allow_inf_nan:
            return json.loads(text)
        return json.loads(text, parse_constant=_reject_constant)


def load_json(
    path: Path,
    max_bytes: int = MAX_CONFIG_BYTES,
    max_depth: int = MAX_DEPTH,
    allow_inf_nan: bool = False,
) -> Any:
    """Parse the JSON file *path* within the size and depth limits; NaN/Infinity (unless
    *allow_inf_nan*: read as floats, for a caller that checks each value it reads) and a key
    stated twice in one object are errors (the fast check: :func:`value_members`)."""
    data = read_bytes(path, max_bytes)
    scan = _scan(data)
    if scan.deepest > max_depth:
        raise WattgpuError(
            f"{path}: nested {scan.deepest} levels deep, more than the {max_depth} allowed — "
            "flatten the file"
        )
    text = decode_utf8(data, path)
    try:
        value = parse_json(text, allow_inf_nan)
        if value_members(value) == scan.members:
            return value
        del value  # read again by the standard library, to say where: an error path only
        repeat = repeated_key(text, allow_inf_nan)
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
    # None cannot be: fewer entries than members means a repeated key
    raise WattgpuError(f"{path}: {repeat or 'an object repeats a key'} — keep one of them")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (switched on again after, if it was on) while
    a large input becomes objects: parsed JSON, its documents and their dumps hold no reference
    cycles, yet with a million containers alive the collector's passes take about a quarter of
    reading and checking a 500-entry plan."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
