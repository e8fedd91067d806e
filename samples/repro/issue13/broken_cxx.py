#!/usr/bin/env python3
"""A C++ compiler that answers `--version` but cannot build anything: what a toolchain missing its Python
headers does to inductor (the message is gcc's own wording for that case). Used by cases.py broken-cxx."""
import sys

if "--version" in sys.argv:
    print("g++ (GCC) 12.2.0")
    sys.exit(0)
sys.stderr.write("fatal error: Python.h: No such file or directory\ncompilation terminated.\n")
sys.exit(1)
