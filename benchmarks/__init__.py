"""Benchmarks (not tests): `python -m benchmarks` runs every module here that has a `main()`."""
