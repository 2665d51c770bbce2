"""Compliance suites: the contract any implementation of one of the package's seams must meet."""
