"""Tree outputs evaluated once per distinct feature row, and remembered across calls.

A tree ensemble's output for a row depends on that row's feature values only. Trees that see
no GPU input (the ITL residual trees) give the same output for a row on every GPU, so a sweep or
a large batch predicted in chunks meets the same feature rows again and again. Each booster gets
a memo of the rows it has evaluated, keyed by a 64-bit hash of the row. A hash match counts only
when the row's bits equal the remembered row's bits (NaN patterns included), so a collision
never hands one row another's output: results are exactly those of evaluating every row.

The memo pays for itself only when rows repeat. A call of at least :data:`JUDGED_ROWS` rows,
with a memo to consult, in which the trees still had to evaluate more than
:data:`WORTH_KEEPING_SHARE` of the rows (trees on GPU-dependent inputs, random inputs) drops its
booster's memo for good, so that booster's later calls cost neither memory nor lookups. A memo
holds at most :data:`MEMO_ROWS_MAX` rows (about 90 bytes each); it lives as long as its booster
(a weak reference), and its table is replaced whole under a lock, so threads sharing a
predictor see the old or the new table, never a torn one.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Most rows one booster's memo holds (about 24 MB for 19 float32 features).
MEMO_ROWS_MAX = 1 << 18
#: A call of at least this many rows judges whether its booster's memo is worth keeping.
JUDGED_ROWS = 10_000
#: Share of a judged call's rows the trees may still evaluate for the memo to be kept.
WORTH_KEEPING_SHARE = 0.5

Evaluate = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class _Table:
    """Remembered rows sorted by hash: hashes, the rows' bits, the outputs."""

    keys: np.ndarray
    bits: np.ndarray
    out: np.ndarray


@dataclass
class _Memo:
    table: _Table | None = None
    active: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)


_MEMOS: weakref.WeakKeyDictionary[Any, _Memo] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def _memo_for(booster: Any) -> _Memo | None:
    """The memo of *booster* (created on first use); None once dropped, or when *booster*
    cannot be weakly referenced."""
    with _REGISTRY_LOCK:
        try:
            memo = _MEMOS.get(booster)
            if memo is None:
                memo = _MEMOS[booster] = _Memo()
        except TypeError:
            return None
    return memo if memo.active else None


def remembers(booster: Any) -> bool:
    """Whether *booster* still has a memo (dropped: evaluate every row directly, no hashing)."""
    with _REGISTRY_LOCK:
        try:
            memo = _MEMOS.get(booster)
        except TypeError:
            return False
    return memo is None or memo.active


def memoised_outputs(
    booster: Any, x: np.ndarray, hashes: np.ndarray, evaluate: Evaluate
) -> np.ndarray:
    """*evaluate*'s outputs (float64, one per row of a float32 matrix) for every row of *x*,
    evaluated only on the rows *booster*'s memo does not hold, once per distinct row. *hashes*
    are the rows' 64-bit hashes (equal rows have equal hashes)."""
    x = np.ascontiguousarray(x)
    bits = x.view(np.uint32).reshape(x.shape[0], -1)
    memo = _memo_for(booster)
    table = memo.table if memo is not None else None
    out = np.empty(x.shape[0], dtype=np.float64)
    miss = np.arange(x.shape[0])
    clashing = np.empty(0, dtype=np.uint64)
    if table is not None:
        at = np.minimum(np.searchsorted(table.keys, hashes), table.keys.size - 1)
        candidate = np.flatnonzero(table.keys[at] == hashes)
        equal = (table.bits[at[candidate]] == bits[candidate]).all(axis=1)
        found = candidate[equal]
        out[found] = table.out[at[found]]
        known = np.zeros(x.shape[0], dtype=bool)
        known[found] = True
        miss = np.flatnonzero(~known)
        clashing = hashes[candidate[~equal]]  # a remembered hash with other bits
    evaluated = 0
    if miss.size:
        keys, first, inverse = np.unique(hashes[miss], return_index=True, return_inverse=True)
        reps = miss[first]
        if bool((bits[reps][inverse] == bits[miss]).all()):
            values = np.asarray(evaluate(x[reps]), dtype=np.float64)
            out[miss] = values[inverse]
            evaluated = reps.size
            if memo is not None:
                fresh = ~np.isin(keys, clashing) if clashing.size else slice(None)
                _remember(memo, keys[fresh], bits[reps][fresh], values[fresh])
        else:  # two different rows share a hash: evaluate every missing row, remember none
            out[miss] = np.asarray(evaluate(x[miss]), dtype=np.float64)
            evaluated = miss.size
    if memo is not None and table is not None and x.shape[0] >= JUDGED_ROWS:
        if evaluated > WORTH_KEEPING_SHARE * x.shape[0]:
            with memo.lock:
                memo.active, memo.table = False, None
    return out


def _remember(memo: _Memo, keys: np.ndarray, bits: np.ndarray, values: np.ndarray) -> None:
    """Add rows (*keys* sorted, unique and not in *memo*) to *memo*, up to
    :data:`MEMO_ROWS_MAX` rows in all."""
    with memo.lock:
        old = memo.table
        size = 0 if old is None else old.keys.size
        room = MEMO_ROWS_MAX - size
        if not memo.active or room <= 0 or not keys.size:
            return
        keys, bits, values = keys[:room], bits[:room], values[:room]
        if old is None:
            memo.table = _Table(keys.copy(), bits.copy(), values.copy())
            return
        # both sorted, no key in both: insert the new rows at their places (no sort, no gather)
        at = np.searchsorted(old.keys, keys)
        memo.table = _Table(
            np.insert(old.keys, at, keys),
            np.insert(old.bits, at, bits, axis=0),
            np.insert(old.out, at, values),
        )
