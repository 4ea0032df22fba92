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
   seed 100 (disjoint from the claim seeds 0-9), d_model 64, 2 layers, lr 3e-3, batch 32, 4
   pool items per relation, all at load average 7-16 on 2 cores (other sessions' jobs):
   (a) "triple" lines, documents of 3 shuffled lines, 100 timeline documents, 40 epochs,
   2016-2023: loss 0.34/token, every probe incorrect (Known 0, Unknown 1); 9 pool items per
   relation as bridges: the same. (b) "structured" (probe Q/A lines), 3-4 lines per document:
   the model answers a bare query right ("A. Fandrar") but not as the 5th line of a probe.
   (c) now, 2018-2023, cut-off 2021, 8 items per state, pool_per_key 2, documents of 6
   lines packed by relation and year (`pack="probe"`), no timeline documents, 150 epochs
   (129 s structured, 104 s prose at load 7-9; final loss 0.23 and 0.16): structured
   dynamic Known 0 / Partial known 0.38 / Cut-off 0.12 / Unknown 0.50, static 0 / 0.25 /
   0.12 / 0.62; prose Unknown 1.0 for both. On one static item the structured model answers
   right with 0 or 1 exemplar before the query, copies the previous exemplar's object with
   2, and emits an empty line with 3-4. Suspected cause: `pack="probe"` puts the repeated
   copies of one fact (and the pool's two identical lines in the structured arm) in the
   same document, which teaches copying, and few documents teach a fixed document shape.
   (d) `pack="probe"` now groups by year only and puts each copy of a line in a different
   document (no line twice in one); same settings, 150 epochs (116 s, loss 0.21): structured
   dynamic Known 0 / Partial 0.12 / Cut-off 0.12 / Unknown 0.75, static 0 / 0.38 / 0.12 /
   0.50; the static item above still gets the previous exemplar's object ("A. Senbal").
   In-context copying of the exemplars' objects, not document shape, is what remains.
   Next: train with the probe's own exemplars (4 pool items of the same relation and year,
   then an item: the exact prompt shape) with the loss on the answers only, so copying an
   exemplar is penalised; or documents of random length 1-6; then choose the size on seeds
   disjoint from the claim seeds (grids of equal size per format, committed).
2. Size the quick (<= 60 s for 3 seeds at --jobs 2) and full (<= 30 min, >= 10 seeds) presets
   of elicitation and prompting once 1. works (the quick presets now train 150 epochs, about
   2 minutes per model at load 7-9: too slow for quick; elicitation trains two models per
   seed), run them and write each claim's `expect` from what they give (the
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
