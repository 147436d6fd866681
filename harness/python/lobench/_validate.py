"""Argument checks shared by lobench's Python front ends, done in Python before anything reaches the
C++ module (whose nanobind signature errors name no argument) or a JAX callback (where an exception
surfaces as an opaque runtime error). Every error names the argument, the value and what is allowed."""
from __future__ import annotations

import numbers
from typing import Optional

# The CLI's limit (harness/cli/option_checks.hpp, kMaxThreads): the API applies the same range.
MAX_THREADS = 1024
UINT64_MAX = 2**64 - 1


class MemoryLimitError(MemoryError, ValueError):
    """A step would need more memory than the limit (raised before anything is allocated). Both a
    MemoryError (what the allocation would have raised) and a ValueError (the arguments' fault)."""


def integer(value, name: str, low: int, high: int, allow_none: bool = False) -> Optional[int]:
    """value as a Python int in [low, high] (bools refused), or None when allowed."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"argument '{name}' must be an int in [{low}, {high}]"
                        f"{' or None' if allow_none else ''}, got {type(value).__name__} {value!r}")
    v = int(value)
    if not low <= v <= high:
        raise ValueError(f"argument '{name}' must be in [{low}, {high}], got {v}")
    return v


def threads(value) -> Optional[int]:
    """None (the default: OpenMP's thread count capped at every core) or an int in [1, 1024]."""
    return integer(value, "threads", 1, MAX_THREADS, allow_none=True)


def seed(value) -> int:
    return integer(value, "seed", 0, UINT64_MAX)


def sr_bits(value) -> int:
    """Random bits of stochastic rounding: None (the format's default, 0 for the C++ side) or 1..31."""
    if value is None:
        return 0
    return integer(value, "bits", 1, 31)


def choice(value, name: str, allowed) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"argument '{name}' must be one of {', '.join(repr(a) for a in allowed)}, got {value!r}")
    return value


def flag(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"argument '{name}' must be a bool, got {type(value).__name__} {value!r}")
    return value


def memory_limit(value) -> int:
    """None (memory available now minus max(1 GiB, 10 %), as the CLI's --mem-limit default) or bytes >= 1."""
    if value is None:
        return 0
    return integer(value, "mem_limit", 1, 2**50)


def raise_memory(exc: ValueError):
    """The C++ module's memory refusal ("memory: ...") as a MemoryLimitError; other errors unchanged."""
    msg = str(exc)
    if msg.startswith("memory: "):
        raise MemoryLimitError(msg[len("memory: "):]) from None
    raise exc
