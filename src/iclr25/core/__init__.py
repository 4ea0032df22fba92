"""Paper-agnostic machinery: registry, configs, seeding, runner, results, claims, report.

Only numpy, scipy and torch are imported here, and each lazily where it is used.
"""
