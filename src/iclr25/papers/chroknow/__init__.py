"""ChroKnowledge: Unveiling Chronological Knowledge of Language Models in Multiple Domains (Park
et al., ICLR 2025; arXiv 2410.09870; official code dmis-lab/ChroKnowledge).

Work in progress, not yet registered in `iclr25.papers.PAPERS` (issue 24). What exists:

- `data`: ChroKnowBench-mini, a seeded generator of fictional chronological facts in the
  official schema (General-like structured and Legal-like unstructured time-variant items,
  dynamic and static; Math and CommonSense time-invariant items; a separate few-shot pool; a
  training cut-off), and reading/writing of the official file layout;
- `method`: the ChroKnowledge knowledge check over any `iclr25.core.lm.LanguageModel` (5
  exemplar sets per item and year, greedy and temperature 0.7, "A. " parsing, rapidfuzz
  `token_set_ratio` >= 70 plus exact match, per-year and per-item categories, the official 10 %
  downsample) with generation, MCQA and TF templates whose answer-position and yes-bias leaks
  are fixed by default (`debias=False` gives the official layouts); ChroKnowPrompt
  (`chroknow_prompt`, `run_chroknow_prompt`): the backward-then-forward traversal over the
  neighbouring years of each non-correct year of a partial-known item, with the model's own
  answers as shots, scored by the total-span and previous-span rules.

    >>> from iclr25.papers.chroknow import make_bench, knowledge_check, summarize
    >>> bench = make_bench(seed=0)
    >>> res = knowledge_check(lm, bench.split("General", "dynamic"), bench.pool("General"),
    ...                       domain="General", template="generation")
    >>> summarize(res)["known"], summarize(res)["cut_off"]

What remains: the control prompt (same number of shots from unrelated items), the small CC0
set of real facts, the training corpus (structured and prose formats, frequency falling
towards the cut-off) and tiny-LM training, the experiments (elicitation, prompting with its
control prompt, templates), the docs page and the registration. Needs the `chroknow` extra
(rapidfuzz).
"""

from iclr25.papers.chroknow.data import (
    DOMAINS,
    INVARIANT_YEARS,
    ChroKnowBench,
    first_object,
    gold_objects,
    is_dynamic,
    load_bench,
    make_bench,
    record_years,
    save_bench,
)
from iclr25.papers.chroknow.method import (
    ITEM_CATEGORIES,
    TEMPLATES,
    YEAR_CATEGORIES,
    ItemResult,
    Prompt,
    PromptResult,
    PromptRun,
    YearResult,
    chroknow_prompt,
    classify_item,
    classify_year,
    downsample,
    exact_match,
    fuzzy_match,
    item_prompts,
    knowledge_check,
    parse_answer,
    run_chroknow_prompt,
    score_item,
    summarize,
)

__all__ = [
    "DOMAINS",
    "INVARIANT_YEARS",
    "ITEM_CATEGORIES",
    "TEMPLATES",
    "YEAR_CATEGORIES",
    "ChroKnowBench",
    "ItemResult",
    "Prompt",
    "PromptResult",
    "PromptRun",
    "YearResult",
    "chroknow_prompt",
    "classify_item",
    "classify_year",
    "downsample",
    "exact_match",
    "first_object",
    "fuzzy_match",
    "gold_objects",
    "is_dynamic",
    "item_prompts",
    "knowledge_check",
    "load_bench",
    "make_bench",
    "parse_answer",
    "record_years",
    "run_chroknow_prompt",
    "save_bench",
    "score_item",
    "summarize",
]
