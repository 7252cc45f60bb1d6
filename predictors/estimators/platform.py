"""The processor a model was trained on, recorded in its card.

The same data and library versions give the same boosters byte for byte on one processor, and
results within rounding on another: NumPy's and XGBoost's vectorised sums add in another order on
wider SIMD units (a session on an AVX-512 processor moved one fitted ITL weight by 8e-5, and the
byte-for-byte check failed on the card's library versions alone). The check in
``tests/test_reproducible_training.py`` runs where the processor is the card's.
"""

from __future__ import annotations

import contextlib


def training_platform() -> dict[str, str]:
    """The processor training ran on (model card): the same data and library versions give the
    same boosters byte for byte on it, within rounding on another (SIMD widths order sums)."""
    import platform

    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    model = ""
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), ""
            )
    simd = [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]
    return {
        "machine": platform.machine(),
        "cpu": model or platform.processor(),
        "numpy_simd": " ".join(simd) or "baseline",
    }


__all__ = ["training_platform"]
