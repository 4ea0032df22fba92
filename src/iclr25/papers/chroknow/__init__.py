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

Also: `chroknow_prompt(..., control=[(record, result), ...], rng=rng)` and
`run_chroknow_prompt(..., control=True)`, the control prompt (same steps, years, system prompts
and number of shots, the shots taken from unrelated items with the model's own answers for
them); `data.real_facts()`, 24 hand-written public facts (officeholders and CEOs on 1 July,
2015-2023; CC0, `assets/README.md`); `training`, the training corpus (General facts as
structured triples or as prose sentences, Legal as filled-in prose, copies falling linearly to
1 at the cut-off and none after it, the pool's items in the probe and ChroKnowPrompt formats)
and `train_chroknow_lm` (core/lm's `train_tiny_lm`, loss on every token);
`experiments/elicitation.py` and `experiments/prompting.py` (config, presets, claims, metric
glossary, `run`; smoke presets run in about 2 s).

What remains (issue 24), exactly:

1. Make the tiny LM recall the facts under the knowledge-check prompt. Measured on bench
   seed 100 (8 General items per state, 2016-2023, cut-off 2021, max_reps 6, d_model 64, 2
   layers, lr 3e-3, batch 32, 4 pool items per relation), all at load average 7-15 on 2
   cores (other sessions' jobs): (a) facts as "triple" lines, 100 timeline documents, 40
   epochs (256 s): loss 0.34 per token; the model completes a training line with the right
   object but every Q/A probe is incorrect (Known 0, Unknown 1, both states); with 9 pool
   items per relation as bridges, 20 epochs: the same. (b) facts in the probe's own Q/A
   format ("structured" now), no timeline documents: 20 epochs (75 s), loss 0.76, Known 0,
   Partial known 0.25 on dynamic items; 60 epochs (1046 s at load 15), loss 0.29, and the
   greedy answer to a 4-shot probe copies the *previous exemplar's* object ("A. Mekanu" for
   gold "Fandrar"), i.e. in-context copying wins over recall. Next steps: pack fact lines in
   documents that share the relation and year (like the probe, so copying the neighbour is
   wrong and recall is needed), put the loss on the answers only, or train single-line
   examples; then choose the size on bench seeds disjoint from the claim seeds (seed 100 was
   used here; grids of equal size per format, committed).
2. Size the quick (<= 60 s for 3 seeds at --jobs 2) and full (<= 30 min, >= 10 seeds) presets
   of elicitation and prompting once 1. works (training at the loaded machine's speed is
   about 6k tokens/s), run them and write each claim's `expect` from what they give (the
   claims have no `expect` yet: they are NOT measured).
3. `experiments/templates.py`: generation vs MCQA vs TF, debiased and `debias=False`, with
   constant always-"(d)" / always-"true" responders beside the tiny LM (the corpus then needs
   MCQA/TF exemplars of the pool's items).
4. The SmolLM2 observation on `real_facts()` through hf (optional; offline only).
5. Registration: `PAPER` card here, the `PAPERS` row ("chroknow", experiments
   ("elicitation", "prompting", "templates"), extras ("chroknow",)), docs/papers/chroknow.md
   per the template (synthetic and scaled-down parts; the differences from
   dmis-lab/ChroKnowledge: every `# DEVIATION:` in data.py, method.py, training.py and the
   experiments), full results from a clean clone.

Needs the `chroknow` extra (rapidfuzz).
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
