"""The fingerprint of a catalog: what a saved plan records of the catalogs it was made against, so
that its report can tell when they changed (``assumptions.catalog_sha256``)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path


def catalog_fingerprint(dirs: Iterable[Path], file_names: Iterable[str]) -> str:
    """SHA-256 over the catalog files of *dirs* in order (bundled, then the user overlay): each
    present file's role (its place among *dirs*, its name) and bytes."""
    names = list(file_names)
    digest = hashlib.sha256()
    for place, directory in enumerate(dirs):
        for name in names:
            path = directory / name
            if path.is_file():
                data = path.read_bytes()
                digest.update(f"{place}/{name}/{len(data)}\n".encode())
                digest.update(data)
    return digest.hexdigest()
