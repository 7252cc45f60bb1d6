"""Piecewise-linear interpolation of many curves at once, to the last bit of :func:`numpy.interp`.

Row k of the result is ``numpy.interp(x[k], xp[k], fp[k])`` (the same arithmetic: the segment's
slope ``(fp[j+1] − fp[j]) / (xp[j+1] − xp[j])`` times ``x − xp[j]`` plus ``fp[j]``; ``fp[j]``
itself at a knot; the end values outside), with the knots of every curve padded to the same
count by repeating the last one, as :mod:`planner.solve.minorant` pads them. One call replaces
a Python loop over the candidates of a block.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def interp_rows(x: FloatArray, xp: FloatArray, fp: FloatArray) -> FloatArray:
    """Per row k, *x[k]* (T values) interpolated on the knots *xp[k]*, *fp[k]* (K × J padded,
    ascending, J >= 2)."""
    k_all, j_all = xp.shape
    j = (xp[:, None, :] <= x[:, :, None]).sum(axis=2) - 1  # the segment (K × T)
    rows = np.arange(k_all)[:, None]
    jc = np.clip(j, 0, j_all - 2)
    x0, x1 = xp[rows, jc], xp[rows, jc + 1]
    y0, y1 = fp[rows, jc], fp[rows, jc + 1]
    with np.errstate(divide="ignore", invalid="ignore"):  # zero-width padding: never chosen
        inside = (y1 - y0) / (x1 - x0) * (x - x0) + y0
    at_knot = np.where(j >= j_all - 1, fp[:, -1:], y0)
    out: FloatArray = np.where(
        j < 0, fp[:, :1], np.where((j >= j_all - 1) | (x0 == x), at_knot, inside)
    )
    return out
