"""The experiments of unlearn_eval, one module each, and what they share: the smoke corpus and
the check of the architectures and methods a preset names."""

from __future__ import annotations

import contextlib

from iclr25.core.config import check
from iclr25.papers.unlearn_eval.method import METHODS
from iclr25.papers.unlearn_eval.models import ARCHITECTURES
from iclr25.papers.unlearn_eval.training import SetupConfig

with contextlib.suppress(ImportError):
    # the model classes load with the experiments (about 4 s of CPU), not inside a timed run
    from transformers import GPT2LMHeadModel, LlamaForCausalLM  # noqa: F401

SMOKE_SETUP = SetupConfig(n_authors=10, n_facts=2, n_perturbed=1, width=32, layers=2, steps=40)
"""The smoke presets' corpus and target model: seconds of CPU, not a result."""


def check_archs_methods(archs: tuple[str, ...], methods: tuple[str, ...]) -> None:
    """Raise unless `archs` and `methods` are non-empty and name known architectures and
    methods (a config's `__post_init__`)."""
    check(bool(archs), "archs", archs, "at least one architecture")
    for a in archs:
        check(a in ARCHITECTURES, "archs", archs, f"names from {ARCHITECTURES}")
    check(bool(methods), "methods", methods, "at least one method")
    for m in methods:
        check(m in METHODS, "methods", methods, f"names from {METHODS}")
