"""The documentation shipped with wattgpu (``docs/*.md``), by name: what ``wattgpu docs`` prints.

Error messages and ``--help`` texts cite documents as ``docs/NAME.md``; an installed wheel
carries them too (``planner/_docs``, :func:`planner.paths.docs_dir`), so ``wattgpu docs NAME``
shows the cited text without the source tree or a network.
"""

from __future__ import annotations

from pathlib import Path

from planner.paths import docs_dir
from predictors.core.errors import WattgpuError, did_you_mean


def doc_names() -> list[str]:
    """The names of the shipped documents (``method`` for ``docs/method.md``), sorted."""
    return sorted(p.stem for p in docs_dir().glob("*.md") if p.is_file())


def doc_path(name: str) -> Path:
    """The file of document *name*: ``method``, ``method.md`` or ``docs/method.md``; a
    WattgpuError naming the known documents (with a did-you-mean) for any other name."""
    stem = name.strip().replace("\\", "/")
    stem = stem.removeprefix("docs/").removesuffix(".md").lower()  # the files' names are lower case
    known = doc_names()
    if stem not in known:
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise WattgpuError(
            f"docs: unknown document {shown!r}{did_you_mean(stem, known)} — give one of "
            f"{', '.join(known)}"
        )
    return docs_dir() / f"{stem}.md"


def doc_title(path: Path) -> str:
    """The first Markdown heading of *path* (its title), '' when it has none."""
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                return line.lstrip("#").strip()
    return ""


def listing() -> str:
    """One line per document: its name and title; then how to print one."""
    names = doc_names()
    width = max((len(n) for n in names), default=0)
    lines = [f"{n:<{width}}  {doc_title(docs_dir() / f'{n}.md')}" for n in names]
    lines += ["", "print one: wattgpu docs NAME   (-o FILE to write it)"]
    return "\n".join(lines) + "\n"
