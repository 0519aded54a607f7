"""Shared compiler options for Rondo's targets."""

RONDO_COPTS = ["-Wall", "-Wextra", "-Wno-unused-parameter"]
