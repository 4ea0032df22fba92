"""ChroKnowledge: Unveiling Chronological Knowledge of Language Models in Multiple Domains (Park
et al., ICLR 2025; arXiv 2410.09870; official code dmis-lab/ChroKnowledge).

- `data`: ChroKnowBench-mini, a seeded generator of fictional chronological facts in the
  official schema (General-like structured and Legal-like unstructured time-variant items,
  dynamic and static; Math and CommonSense time-invariant items; a separate few-shot pool; a
  training cut-off), reading and writing of the official file layout, and `real_facts()`, 24
  hand-written public facts (officeholders and CEOs on 1 July, 2015-2023; CC0,
  `assets/README.md`);
- `method`: the ChroKnowledge knowledge check over any `iclr25.core.lm.LanguageModel` (5
  exemplar sets per item and year, greedy and temperature 0.7, "A. " parsing, rapidfuzz
  `token_set_ratio` >= 70 plus exact match, per-year and per-item categories, the official 10 %
  downsample) with generation, MCQA and TF templates whose answer-position and yes-bias leaks
  are fixed by default (`debias=False` gives the official layouts); ChroKnowPrompt
  (`chroknow_prompt`, `run_chroknow_prompt`): the backward-then-forward traversal over the
  neighbouring years of each non-correct year of a partial-known item, with the model's own
  answers as shots, scored by the total-span and previous-span rules, and a control prompt
  (`control=...`: the same steps, years, system prompts and number of shots, the shots taken
  from unrelated items);
- `training`: the tiny LM's probe-shaped training examples (`probe_examples`, the facts in one
  of the `FORMATS`, copies falling to 1 at the cut-off and none after it; `bridge_examples`;
  `timeline_examples`, ChroKnowPrompt's format) and `train_probe_lm` (the loss on each
  example's answer only);
- `tune.py`: the training grid on bench seeds disjoint from the claim seeds.

    >>> from iclr25.papers.chroknow import make_bench, knowledge_check, summarize
    >>> bench = make_bench(seed=0)
    >>> res = knowledge_check(lm, bench.split("General", "dynamic"), bench.pool("General"),
    ...                       domain="General", template="generation")
    >>> summarize(res)["known"], summarize(res)["cut_off"]

Experiments: `chroknow.elicitation` (the headline: training format, static vs dynamic, the
cut-off), `chroknow.prompting` (ChroKnowPrompt against the check and a control prompt) and
`chroknow.templates` (generation vs MCQA vs TF, debiased and official layouts, beside the
constant responders of `baselines`). `observe` runs the check and ChroKnowPrompt of a real
model (SmolLM2 through hf by default) on the real facts: an observation, not a claim. Needs
the `chroknow` extra (rapidfuzz); `observe` the `llm` extra.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.chroknow.baselines import ConstantResponder
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

PAPER = PaperInfo(
    slug="chroknow",
    title="ChroKnowledge: Unveiling Chronological Knowledge of Language Models in Multiple Domains",
    authors="Yein Park, Chanwoong Yoon, Jungwoo Park, Donghyeon Lee, Minbyul Jeong, Jaewoo Kang",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2410.09870",
    code="dmis-lab/ChroKnowledge (no LICENSE file; read for the procedure, not copied)",
    summary="ChroKnowBench (year-stamped facts, dynamic and static, structured and "
    "unstructured), the sampling-based ChroKnowledge categorisation of what a model knows "
    "across years (Known / Partial known / Cut-off / Unknown), and ChroKnowPrompt, which "
    "elicits a year's answer by traversing the neighbouring years.",
)

__all__ = [
    "DOMAINS",
    "INVARIANT_YEARS",
    "ITEM_CATEGORIES",
    "PAPER",
    "TEMPLATES",
    "YEAR_CATEGORIES",
    "ChroKnowBench",
    "ConstantResponder",
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
