"""Replace a directory's files as one change: a staged copy swapped in by renames.

:func:`replace_directory` writes the new files into a staging directory beside the target
(``.NAME.staging-*``), copies there every other file the target already holds (so a model
directory keeps its ``evaluation_summary.json``), then swaps: the target is renamed aside, the
staging directory renamed into its place, and the old one removed. A failure or a kill before the
swap leaves the target exactly as it was (the staging directory is removed on an error); an
error or a Ctrl-C between the two renames puts the old directory back, and a SIGKILL there
leaves it complete beside the target as ``.NAME.old-*``. Readers
never see a mix of old and new files, which writing the files one by one into the live
directory allowed (fuzz round 17: a train killed after its first booster left new ITL trees
under the old card).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from predictors.core.errors import WattgpuError
from predictors.core.output import atomic_write, current_umask, shielded


def replace_directory(
    directory: Path, files: dict[str, bytes], drop: Callable[[str], bool] = lambda _: False
) -> None:
    """Make *directory* hold *files* (name → bytes) plus the other files it held, except those
    *drop* names (e.g. a stale booster), all at once (module doc)."""
    target = directory.resolve()
    if target.is_dir():  # the swap keeps plain files only: never delete anything else
        kept = [e for e in target.iterdir() if e.is_symlink() or not e.is_file()]
        if kept:
            raise WattgpuError(
                f"{directory}: holds {kept[0].name!r}, which is not a plain file; replacing the "
                "directory would delete it — move it out first"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-", dir=target.parent))
    try:
        if target.is_dir():
            for old in sorted(target.iterdir()):
                if old.is_file() and old.name not in files and not drop(old.name):
                    shutil.copy2(old, staging / old.name)
        for name, data in files.items():
            atomic_write(staging / name, data)
        os.chmod(staging, 0o777 & ~current_umask())
        if target.is_dir():
            aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            aside.rmdir()
            os.rename(target, aside)
            try:
                os.rename(staging, target)
            finally:  # a Ctrl-C between the renames: the old directory goes back in place
                shielded(lambda: _settle(target, aside))
        else:
            os.rename(staging, target)
    except BaseException:
        shielded(lambda: shutil.rmtree(staging, ignore_errors=True))
        raise


def _settle(target: Path, aside: Path) -> None:
    """After the swap, or an interrupted one (idempotent): the old directory is removed when the
    new one is in place, else renamed back into place."""
    if target.exists():
        shutil.rmtree(aside, ignore_errors=True)
    elif aside.exists():
        os.rename(aside, target)
