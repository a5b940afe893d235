"""Subpackage: model.py imports its sibling relatively."""
