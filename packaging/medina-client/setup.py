"""Compiles the environments' canvas (medina_envs._canvas) where a C compiler is found;
without one the build goes on and medina_envs uses its pure-Python join (same tensors)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("medina_envs._canvas", ["src/medina_envs/_canvas.c"], optional=True),
    ]
)
