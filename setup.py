"""The optional C extension sdylog.datalog._native (Datalog evaluation in C,
sdylog/datalog/native/). `optional=True`: where no C compiler
exists the install still succeeds and the engine runs in Python."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("sdylog.datalog._native", ["sdylog/datalog/native/ranked.c", "sdylog/datalog/native/db.c"],
                             depends=["sdylog/datalog/native/table.h", "sdylog/datalog/native/interp.h",
                                      "sdylog/datalog/native/db.h"],
                             extra_compile_args=["-O2", "-std=gnu11"], optional=True)])
