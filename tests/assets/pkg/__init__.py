"""Target asset package for tests/test_target.py."""
