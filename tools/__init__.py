"""Maintainer tools run from the checkout (`python -m tools.<name>`): not installed with tritoninspect."""
