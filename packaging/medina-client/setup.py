"""Compiles the environments' tensors (medina_envs._tensors) where a C compiler is found;
without one the build goes on and medina_envs uses the pure-Python equivalents (same
tensors, slower)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("medina_envs._tensors", ["src/medina_envs/_tensors.c"], optional=True),
    ]
)
