"""Generates the medina.v1 protobuf code into the wheel while it builds (never committed),
and compiles the environments' tensors (medina_envs._tensors) where a C compiler is found."""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class BuildWithProtocol(build_py):
    """``build_py`` that also runs tools/genproto.py into the build directory."""

    def run(self) -> None:
        super().run()
        sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
        from genproto import generate

        generate(Path(self.build_lib))


setup(
    cmdclass={"build_py": BuildWithProtocol},
    # Optional: without a compiler the build goes on and medina_envs.tensors uses the
    # pure-Python equivalents (same tensors, slower).
    ext_modules=[
        Extension(
            "medina_envs._tensors",
            ["clients/python/medina_envs/_tensors.c"],
            optional=True,
        )
    ],
)
