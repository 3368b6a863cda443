"""The one compiled part of simbench: the single-call entry of the dynamics
(simbench/dynamics/kernels/_call.c). It is optional: where no C compiler or Python headers are
found, the build goes on without it and the dynamics take their Python fast path (same numbers,
about 0.5 us more a call). Everything else is configured in pyproject.toml."""
from setuptools import Extension, setup

try:
    import numpy
except ImportError:  # a build without numpy (no build isolation): no extension
    ext_modules = []
else:
    ext_modules = [Extension("simbench.dynamics.kernels._call", ["simbench/dynamics/kernels/_call.c"],
                             include_dirs=[numpy.get_include()], optional=True)]

setup(ext_modules=ext_modules)
