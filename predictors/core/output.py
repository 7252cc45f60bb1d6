"""Write an output file the same way for every command: parent folders, no clobbering, atomic.

:func:`write_output` is what every ``--output``/``-o``/``--chart`` of the CLI goes through: it
creates missing parent directories, refuses to write onto one of the command's input files
(``wattgpu plan s.yaml -o s.yaml``), and hands the bytes to :func:`atomic_write`, the one
writer of every file wattgpu produces (outputs, copied examples, schemas, user catalogs, trained
models): a temporary file in the same directory, flushed and fsynced, then renamed over the
target (``os.replace``) and the directory fsynced, so a failed, interrupted or full-disk run
never leaves half a file and never truncates what was there. A target that is a symbolic link is
written through: the link is resolved and the file it points to replaced the same way (the
temporary file beside it), so the link stays a link; a dangling link (or a loop) is refused.
:func:`locked` serialises read-modify-write updates (the user catalog) with an advisory lock.
Errors name the option and the path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from predictors.core.errors import WattgpuError


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _is_stream(path: Path) -> bool:
    """True for a link to an open stream (``/dev/stdout`` on a pipe: ``/proc/self/fd/1`` leads
    to ``pipe:[…]``, which no path resolves to) that can be written through."""
    try:
        return path.exists() and not path.is_file() and not path.is_dir()
    except OSError:
        return False


def _resolved(path: Path) -> Path | None:
    """*path* resolved, None where it cannot be (a symbolic link loop)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop raises RuntimeError before Python 3.13
        return None


#: Files this process reads as inputs that no output may replace, whatever the command: the
#: catalog files :func:`predictors.catalog.store.load_catalog` read (a ``-o ucat/llms.csv``
#: would destroy the user catalog the scenario names). Filled by :func:`protect_inputs`: their
#: resolved paths, and the (device, inode) of those that exist (a hard link to one), so that a
#: write looks each up once however many catalogs the process has read.
_PROTECTED: set[Path] = set()
#: (device, inode) -> the protected path that had it, so that an inode the file system gave to a
#: new file after the input was deleted is not taken for the input (fuzz round 29: a long-lived
#: process refused a fresh ``out.csv`` as "the input file").
_PROTECTED_FILES: dict[tuple[int, int], Path] = {}


def protect_inputs(paths: Iterable[Path]) -> None:
    """Register *paths* (read as inputs) so that :func:`write_output` refuses to replace them."""
    for path in paths:
        resolved = _resolved(Path(path))
        if resolved is None or resolved in _PROTECTED:
            continue
        _PROTECTED.add(resolved)
        with contextlib.suppress(OSError):
            st = os.stat(resolved)
            _PROTECTED_FILES[(st.st_dev, st.st_ino)] = resolved


def _check_not_protected(target: Path, option: str) -> None:
    """WattgpuError when *target* is a registered input (:func:`protect_inputs`)."""
    resolved = _resolved(target)
    found = resolved is not None and resolved in _PROTECTED
    if not found:
        with contextlib.suppress(OSError):
            st = os.stat(target)
            key = (st.st_dev, st.st_ino)
            if key in _PROTECTED_FILES:
                held = os.stat(_PROTECTED_FILES[key])  # still that file: a hard link to it
                found = (held.st_dev, held.st_ino) == key
    if found:
        raise WattgpuError(
            f"{option} {target}: is the input file {resolved or target} — write to another path"
        )


def check_not_input(target: Path, inputs: Iterable[Path | str | None], option: str) -> None:
    """WattgpuError when *target* is one of *inputs* (same file, whatever the spelling)."""
    for item in inputs:
        if item is None:
            continue
        source = Path(item)
        same_path = _resolved(target) is not None and _resolved(target) == _resolved(source)
        if _same_file(target, source) or same_path:
            raise WattgpuError(
                f"{option} {target}: is the input file {source} — write to another path"
            )


def check_outside(target: Path, directory: Path, option: str, of: str) -> None:
    """WattgpuError when *target* lies inside *directory* (the input directory given as *of*,
    e.g. ``--data``: writing there could replace or add to what the command reads)."""
    inside, root = _resolved(target), _resolved(directory)
    if inside is not None and root is not None and inside.is_relative_to(root):
        raise WattgpuError(
            f"{option} {target}: is inside the {of} directory {directory}, whose files are "
            "this command's input — write it elsewhere"
        )


def check_output_path(
    target: Path,
    inputs: Iterable[Path | str | None] = (),
    option: str = "--output",
    *,
    updates_input: bool = False,
) -> None:
    """WattgpuError when :func:`write_output` would refuse *target* whatever it writes: an
    input, a protected input, a broken link, a directory, a path under a file. A command whose
    work is long (``sweep``) calls it before the work, so a bad path loses nothing."""
    check_not_input(target, inputs, option)
    if not updates_input:
        _check_not_protected(target, option)
    if target.is_symlink() and not _is_stream(target):
        try:
            write_target(target)
        except OSError as exc:  # a dangling link, a loop
            raise WattgpuError(
                f"{option} {target}: {exc.strerror} — fix the link or write to another path"
            ) from None
    if target.is_dir():
        raise WattgpuError(f"{option} {target}: is a directory — give a file name")
    blocker = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise WattgpuError(f"{option} {target}: {blocker} is a file, not a directory")


def write_output(
    target: Path,
    content: str | bytes | Callable[[BinaryIO], object],
    *,
    inputs: Iterable[Path | str | None] = (),
    option: str = "--output",
    updates_input: bool = False,
) -> Path:
    """Write *content* to *target* atomically (text as UTF-8; a callable writes itself into the
    open binary file, e.g. a frame's ``write_csv``, so no copy of a large output is built in
    memory); return *target*. Neither *inputs* nor a protected input (:func:`protect_inputs`)
    is replaced, unless *updates_input* (``catalog import`` rewriting the user catalog)."""
    check_output_path(target, inputs, option, updates_input=updates_input)
    fill = _filler(content)
    if target.exists() and not target.is_file():  # /dev/stdout, a FIFO: write through
        try:
            with target.open("wb") as fh:
                fill(fh)
        except OSError as exc:
            raise WattgpuError(
                f"{option} {target}: cannot write ({_reason(exc)}) — check the path"
            ) from None
        return target
    try:
        atomic_write(target, fill)
    except OSError as exc:
        raise WattgpuError(
            f"{option} {target}: cannot write ({_reason(exc)}) — check the path"
        ) from None
    return target


def _reason(exc: OSError) -> str:
    """Why a write failed: the system's words (``No space left on device``); an ``OSError``
    raised by polars' writer has no ``strerror``, only its message (``No space left on device
    (os error 28)``)."""
    return exc.strerror or str(exc) or type(exc).__name__


def _link_text(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return "a path that cannot be read"


def write_target(target: Path) -> Path:
    """The file a write to *target* replaces: *target* itself, or where its symbolic link(s)
    lead; ``OSError`` (ENOENT) when the link is dangling, (ELOOP) when it loops."""
    if not target.is_symlink():
        return target
    try:
        real = target.resolve(strict=True)
    except RuntimeError:  # a loop, before Python 3.13
        raise OSError(errno.ELOOP, "symbolic link loop", str(target)) from None
    except FileNotFoundError:
        raise OSError(
            errno.ENOENT, f"dangling symbolic link to {_link_text(target)}", str(target)
        ) from None
    return real


def _fsync_directory(directory: Path) -> None:
    """Make a rename in *directory* durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _filler(content: str | bytes | Callable[[BinaryIO], object]) -> Callable[[BinaryIO], object]:
    if callable(content):
        return content
    data = content.encode("utf-8") if isinstance(content, str) else content
    return lambda fh: fh.write(data)


def atomic_write(target: Path, data: bytes | Callable[[BinaryIO], object]) -> None:
    """Replace *target* by *data* all at once: write a temporary file beside it, fsync, rename.

    *data* is the bytes, or a callable that writes them into the open binary file.
    A symbolic link is written through (:func:`write_target`): the file it points to is
    replaced, atomically, and the link kept. The parent directories are created. A new file
    gets the umask's permissions, an existing one keeps its own. On any ``OSError`` (a full
    disk, a read-only directory) the temporary file is removed, *target* is left exactly as it
    was and the error propagates.
    """
    tmp_name: str | None = None
    target = write_target(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            _filler(data)(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp_name, target.stat().st_mode & 0o777)
        else:
            os.chmod(tmp_name, 0o666 & ~current_umask())
        os.replace(tmp_name, target)
        tmp_name = None
        _fsync_directory(target.parent)
    finally:
        if tmp_name is not None:
            shielded(lambda: _unlink_quietly(tmp_name))


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def shielded(action: Callable[[], object]) -> None:
    """Run the idempotent clean-up *action* to its end even if Ctrl-C arrives meanwhile, then
    re-raise that interrupt: one Ctrl-C during polars' ``write_csv`` raises twice (polars' own
    KeyboardInterrupt, then Python's), and the second one, landing in a ``finally``, left the
    temporary file beside the target (fuzz round 30: 3 of about 30 interrupted predicts)."""
    pending: KeyboardInterrupt | None = None
    while True:
        try:
            action()
            break
        except KeyboardInterrupt as exc:
            pending = exc
    if pending is not None:
        raise pending


@contextlib.contextmanager
def locked(target: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock for a read-modify-write of *target* (``.NAME.lock``
    beside it, created when missing); other wattgpu processes updating *target* wait."""
    import fcntl

    with contextlib.suppress(OSError):  # the file a link leads to is what is updated
        target = write_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.with_name(f".{target.name}.lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def current_umask() -> int:
    """The process's umask (read by setting it and restoring it at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
