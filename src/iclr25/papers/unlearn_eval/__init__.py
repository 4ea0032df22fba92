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
architectures, budgets), the attacks (adversarial prefix, token noising, relearning, linear probing), the robustness
statistics (Pearson, Spearman, slope with CI over a population of unlearned models), the
experiments with claims, the PAPER card and registration, and the docs page.
"""
