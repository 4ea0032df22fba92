"""One number per metric for a model on a set of QA items (the unit of the robustness study).

`summarize(model, tokenizer, items, metrics)` returns, for each candidate metric of the paper,
its mean over the items, oriented so that higher means more knowledge:

- "ppl": minus the mean log-perplexity of the answers (minus the mean answer NLL per token);
- "rouge": mean ROUGE-L recall of the greedy answers;
- "em": mean exact memorisation;
- "es": mean extraction strength (the official bisection, its prefixes decided by one
  teacher-forced pass: the same values as greedy generation with this tokenizer, see
  `metrics.extraction_strength`);
- "tr": mean max(0, 1 - R) of the truth ratio R (TOFU's retain-side summary).

`questions` may differ from the items' own (attacked questions); the answers are the items'.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from iclr25.core.checks import check_choice
from iclr25.papers.unlearn_eval import metrics as M
from iclr25.papers.unlearn_eval.data import QA

METRIC_NAMES = ("ppl", "rouge", "em", "es", "tr")
"""The candidate metrics, in the paper's order (truth ratio last: added in the rebuttal)."""


def summarize(
    model,
    tokenizer,
    items: Sequence[QA],
    metrics: Sequence[str] = METRIC_NAMES,
    questions: Sequence[str] | None = None,
    max_length: int = 200,
) -> dict[str, float]:
    """Mean of each metric in `metrics` over `items` (higher = more knowledge).

    Args:
        model: A causal LM, `model(input_ids).logits` (B, T, V).
        tokenizer: The word-level tokenizer of `models.build_tokenizer`.
        items: N QA items.
        metrics: Names from METRIC_NAMES.
        questions: N questions to ask instead of the items' own (an attacked prompt).
        max_length: Generation cap of ROUGE and ES, in tokens.

    Returns:
        metric name -> mean over the items.

    Raises:
        ValueError: an unknown metric, no items, or a questions list of another length.
    """
    # DEVIATION: perplexity enters as minus its logarithm (the mean answer NLL) so that every
    # metric grows with knowledge and heavy perplexity tails do not dominate Pearson's
    # correlation; the truth ratio as TOFU's retain-side summary max(0, 1 - R) for both sets.
    for m in metrics:
        check_choice("metric", m, METRIC_NAMES)
    if not items:
        raise ValueError("need at least one item")
    qs = [q.question for q in items] if questions is None else list(questions)
    if len(qs) != len(items):
        raise ValueError(f"need one question per item: {len(items)} items, {len(qs)} questions")
    ans = [q.answer for q in items]
    out: dict[str, float] = {}
    if "ppl" in metrics:
        out["ppl"] = -float(np.mean(np.log(M.perplexity(model, tokenizer, qs, ans))))
    if "rouge" in metrics:
        out["rouge"] = float(np.mean(M.rouge_l_recall(model, tokenizer, qs, ans, max_length)))
    if "em" in metrics:
        out["em"] = float(np.mean(M.exact_memorization(model, tokenizer, qs, ans)))
    if "es" in metrics:
        es = M.extraction_strength(model, tokenizer, qs, ans, max_length, mode="teacher_forced").es
        out["es"] = float(np.mean(es))
    if "tr" in metrics:
        para = [q.paraphrased_answer for q in items]
        pert = [q.perturbed_answers for q in items]
        ratio = M.truth_ratio(model, tokenizer, qs, para, pert)
        out["tr"] = M.truth_ratio_score(ratio, "retain")
    return {m: out[m] for m in metrics}
