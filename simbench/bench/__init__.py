"""``simbench bench``: every benchmark of simbench, one timer, one row type, one writer.

* :mod:`.harness`: the interleaved-median timer (every contender in every round, order reversed
  every other round; medians in microseconds per configuration);
* :mod:`.schema`: the :class:`~.schema.Row` (suite, robot, quantity, contender, n,
  us_per_config, reference, ratio, notes) and the :class:`~.schema.Report` (JSON layout with the
  machine, library versions and settings);
* :mod:`.report`: the console table, JSON and the README's Markdown;
* the suites, each a ``run(...) -> list[Row]``: :mod:`.dynamics` (with the input forms of the fast
  path, floating bases, first-use compile times, and the sympy contenders of :mod:`.symbolic`),
  :mod:`.collision`, :mod:`.sweep`, :mod:`.autodiff` (jax, optional);
* :mod:`.cli`: ``simbench bench`` and ``python -m simbench.bench``.

Ratios are always taken against a reference timed in the same run: compare ratios across
machines and runs, not microseconds.
"""
from .harness import Contender, Timing, interleaved
from .schema import Report, Row

__all__ = ["Contender", "Timing", "interleaved", "Report", "Row"]
