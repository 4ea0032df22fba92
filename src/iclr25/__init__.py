"""iclr25: faithful CPU implementations of 19 ICLR 2025 papers, with laptop-scale reproductions.

Importing the package imports nothing heavy (no torch, no paper): `iclr25 list` stays fast.
Papers live in `iclr25.papers.<slug>`; the shared runner, claims and report in `iclr25.core`.
"""

__version__ = "0.1.0"
