"""Towards Effective Evaluations and Comparisons for LLM Unlearning Methods (Wang, Han, Yang,
Zhu, Liu, Sugiyama; ICLR 2025; arXiv 2406.09179). Work in progress, not registered yet.

What exists:

- `data`: a synthetic TOFU-like corpus of fictitious authors (seeded syllable generator),
  with paraphrases, perturbed answers, refusals, and forget splits of 1/5/10 % of the authors;
- `models`: a word-level tokenizer built offline, tiny GPT-2/Llama models from `transformers`
  configs, QA encoding, batched greedy decoding;
- `metrics`: perplexity, ROUGE-L recall, exact memorisation, extraction strength (the official
  bisection, with a linear-scan check of its monotonicity assumption), the truth ratio;
- `method`: the unlearning objectives (GA, GD, KL, PO, NPO, RMU, temperature-scaled ascent and
  loss selection) in `unlearn`, model mixing and the bisection on α to a retention target;
- `training`: `finetune`, training a tiny model on QA answers until it memorises them.

What remains (issue 29): the target and retain-only models at experiment scale (two
architectures, budgets), the attacks (adversarial prefix, token noising, relearning, linear
probing), the robustness statistics (Pearson, Spearman, slope with CI over a population of
unlearned models), the experiments with claims, the PAPER card and registration, and the docs
page.
"""

from iclr25.papers.unlearn_eval.data import FORGET_PCTS, QA, Corpus, Split, make_corpus
from iclr25.papers.unlearn_eval.method import (
    METHODS,
    Calibration,
    UnlearnConfig,
    UnlearnRun,
    calibrate_alpha,
    calibrate_mixing,
    mix_models,
    mix_state,
    npo_loss,
    unlearn,
)
from iclr25.papers.unlearn_eval.metrics import (
    ESResult,
    bisect_prefix,
    check_bisection,
    es_bisection_check,
    exact_memorization,
    extraction_strength,
    perplexity,
    rouge_l,
    rouge_l_recall,
    truth_ratio,
    truth_ratio_score,
)
from iclr25.papers.unlearn_eval.models import build_tokenizer, encode_qa, tiny_causal_lm
from iclr25.papers.unlearn_eval.training import FinetuneConfig, finetune

__all__ = [
    "FORGET_PCTS",
    "METHODS",
    "QA",
    "Calibration",
    "Corpus",
    "ESResult",
    "FinetuneConfig",
    "Split",
    "UnlearnConfig",
    "UnlearnRun",
    "bisect_prefix",
    "build_tokenizer",
    "calibrate_alpha",
    "calibrate_mixing",
    "check_bisection",
    "encode_qa",
    "es_bisection_check",
    "exact_memorization",
    "extraction_strength",
    "finetune",
    "make_corpus",
    "mix_models",
    "mix_state",
    "npo_loss",
    "perplexity",
    "rouge_l",
    "rouge_l_recall",
    "tiny_causal_lm",
    "truth_ratio",
    "truth_ratio_score",
    "unlearn",
]
