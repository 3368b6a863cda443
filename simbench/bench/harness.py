"""The one timer of every benchmark suite: interleaved rounds, median per contender.

A *contender* is a callable doing a fixed piece of work (``configs`` configurations per call),
called ``calls`` times per round. Every round runs every contender once, in an order reversed
on every other round, so that load from other processes on a shared machine falls on all of
them alike; the median over rounds, in microseconds per configuration, is what is reported,
and ratios are taken between medians of the same run. Batched contenders (several
configurations per call: numba runs them on threads) are timed by the wall clock; single calls
by this process's CPU time, which does not count the time other processes hold the core.

    timings = interleaved([Contender("ours", f, configs=1000), Contender("pinocchio loop", g,
                           configs=1000)], rounds=7)
    timings["ours"].us          # median microseconds per configuration
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: clock name -> function of seconds
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


@dataclass(frozen=True)
class Contender:
    """One thing to time. ``fn()`` handles ``configs`` configurations per call and is called
    ``calls`` times per round. ``clock``: ``"wall"``, ``"cpu"``, ``"auto"`` (wall for batches,
    CPU time for single calls) or ``"reported"`` (``fn`` returns the seconds it measured itself,
    e.g. a run in a fresh process that leaves out its start-up). ``warmup``: call once before
    the rounds (numba's compile or cache load, jax's jit)."""

    name: str
    fn: Callable[[], Any]
    configs: int = 1
    calls: int = 1
    clock: str = "auto"
    warmup: bool = True

    def clock_fn(self) -> Callable[[], float]:
        if self.clock == "auto":
            return CLOCKS["wall" if self.configs > 1 else "cpu"]
        return CLOCKS[self.clock]


@dataclass(frozen=True)
class Timing:
    """Medians of one contender: ``us`` (median microseconds per configuration over the
    rounds), ``best_us``, the per-round samples and the configurations per call."""

    name: str
    us: float
    best_us: float
    samples: tuple[float, ...]
    configs: int


def interleaved(contenders: Sequence[Contender], rounds: int) -> dict[str, Timing]:
    """Time ``contenders`` in ``rounds`` interleaved rounds (order reversed every other round)
    after one warm-up call each; name -> :class:`Timing`."""
    if rounds < 1:
        raise ValueError(f"rounds = {rounds}; expected a positive integer")
    names = [c.name for c in contenders]
    if len(set(names)) != len(names):
        raise ValueError(f"contender names repeat: {names}")
    for c in contenders:
        if c.warmup:
            c.fn()
    samples: dict[str, list[float]] = {c.name: [] for c in contenders}
    for r in range(rounds):
        for c in (contenders if r % 2 == 0 else contenders[::-1]):
            fn = c.fn
            if c.clock == "reported":
                seconds = sum(float(fn()) for _ in range(c.calls))
            else:
                clock = c.clock_fn()
                t0 = clock()
                for _ in range(c.calls):
                    fn()
                seconds = clock() - t0
            samples[c.name].append(seconds / (c.calls * c.configs) * 1e6)
    return {c.name: Timing(c.name, statistics.median(samples[c.name]), min(samples[c.name]),
                           tuple(samples[c.name]), c.configs) for c in contenders}


def once(fn: Callable[[], Any]) -> float:
    """Microseconds of one call (a compile, a derivation, a start-up): one-off costs that no
    median describes."""
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e6


__all__ = ["Contender", "Timing", "interleaved", "once", "CLOCKS"]
