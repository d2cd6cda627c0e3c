"""Packages and their data, and the optional C extension.

- The rules stay at the top of the repository (rules/) and install as the
  package sdylog.rules (its .dl files package data, read through
  the package's import spec: sdylog/__init__.py).
- sdylog.datalog._native: Datalog evaluation in C (sdylog/datalog/native/).
  `optional=True`: where no C compiler exists the install still succeeds and
  the engine runs in Python."""
from setuptools import Extension, find_namespace_packages, setup

setup(packages=(find_namespace_packages(include=["sdylog", "sdylog.*"])
                + ["sdylog.rules"] + [f"sdylog.rules.{p}" for p in find_namespace_packages(where="rules")]),
      package_dir={"sdylog.rules": "rules"},
      package_data={"": ["*.dl"]},
      ext_modules=[Extension("sdylog.datalog._native", ["sdylog/datalog/native/ranked.c", "sdylog/datalog/native/db.c"],
                             depends=["sdylog/datalog/native/table.h", "sdylog/datalog/native/interp.h",
                                      "sdylog/datalog/native/db.h"],
                             extra_compile_args=["-O3", "-std=gnu11"], optional=True)])
