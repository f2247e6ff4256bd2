"""What every file writer and reader of springsim shares: path names, atomic writes."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import BinaryIO

#: What springsim's file functions take as a path.
StrPath = str | os.PathLike[str]


def path_name(path: object) -> str:
    """``path`` (str or os.PathLike) as a str, else TypeError."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    return os.fsdecode(os.fspath(path))


def write_atomically(name: str, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(file)`` on a temporary file next to ``name``, then rename it to
    ``name``: an interrupted or failed write never leaves a half-written file."""
    temporary = f"{name}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:
        with open(temporary, "wb") as file:
            write(file)
        os.replace(temporary, name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def quote(text: str, limit: int = 80) -> str:
    """``repr`` of at most ``limit`` characters of ``text``, then "..." if it was cut:
    an error message never embeds a whole (possibly huge) line or entry."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."
