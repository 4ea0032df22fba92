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
and `train_chroknow_lm` (core/lm's `train_tiny_lm`, loss on every token); probe-shaped
examples (`probe_examples`) and `train_probe_lm` (the loss on each example's answer only);
`tune.py`, the training grid on bench seeds disjoint from the claim seeds;
`experiments/elicitation.py` and `experiments/prompting.py` (config, presets, claims, metric
glossary, `run`; smoke presets run in about 2 s).

What remains (issue 24), exactly:

1. Recall and the arms (session 27, idle machine unless stated). Probe-shaped training
   (`training.probe_examples`, `train_probe_lm`: each copy of a fact is the check's own
   prompt, 4 pool exemplars of the same relation and year then the item's question, the loss
   on the answer only) gives the structured arm recall; document training (loss on every
   token, `build_corpus` + `train_chroknow_lm`) gave Known 0 (the model copied the previous
   exemplar's object). The earlier prose arm wrote each fact object-first and never saw the
   check's Q/A format, so its Unknown 1.0 was by construction. Now: "prose" is subject-first
   (the probe's order), the object-first arm is kept as "prose_reversed" (a reversal
   control), and every arm trains on the same bridges (`training.bridge_examples`: each pool
   fact up to the cut-off as a bare Q/A pair and as a subject-first sentence). The grid
   (`tune.py`, 5 learning rates 3.75e-4..6e-3 x 2 tuning seeds x 3 arms, quick sizes;
   benchmarks/results/chroknow_tuning.json, clean clone of 4203fc2, 287 s at --jobs 2, load
   0.41 before): structured 1.5e-3 (Known 0.53 mean; 0.47 / 0.50 / 0.53 / 0.50 / 0.41 over
   the grid), both prose arms Known 0 at every rate (a few Partial / Cut-off items), so their
   choice is the lowest loss (3e-3 each); every choice interior. So even with the bridges the
   tiny LM does not carry facts learnt in prose into the Q/A probe. It does know them: the
   metric `<arm>/own_recall` (`training.own_format_recall`: the training context, then the
   statement up to its object, greedy) is 0.97-0.98 for the prose arm on quick seeds 0-1
   (structured 0.80-0.94), while the prose arm answers 0 of its pre-cut-off item-years in
   the check: a format gap, no longer one by construction.
2. Presets. Three arms at the old quick sizes (8 items, max_reps 4, batch 8, 30 epochs,
   n_sets 3) took 63 s a seed (66 s wall for 2 seeds at 2 jobs, load 0.86 before): too slow
   for quick. Quick is now 8 items, the structured and prose arms only (`formats`), 15 epochs
   (the grid ran at 30, the full preset's epochs), n_sets 2: 20.6-22.6 s a seed, 44.8 s wall
   for 3 seeds at 2 jobs (load 0.60 before). It gave, seeds 0-2: structured Known 0.44-0.50
   (static 0.88-1.0, dynamic 0; dynamic pre-cut-off years correct 0.06-0.56, post 0-0.06),
   prose Known 0 on every seed (own recall 0.67-0.80, so it knows its facts), structured own
   recall 0.50-0.77. To do: run quick and full (16 items, n_sets 5, three arms, 10 seeds;
   time it: about 60-70 s a seed, so about 6 minutes at 2 jobs) from a clean clone and write
   each claim's `expect`.
   `experiments/prompting.py` still trains on documents (`build_corpus`, loss on every token)
   and so still has Known 0: move it to probe-shaped training, with ChroKnowPrompt-format
   examples of the pool's items (loss on the answer only) so the model knows that format, and
   keep the control prompt; then size and run it the same way.
3. `experiments/templates.py`: generation vs MCQA vs TF, debiased and `debias=False`, with
   constant always-"(d)" / always-"true" responders beside the tiny LM (the training then
   needs MCQA/TF examples of the pool's items).
4. The SmolLM2 observation on `real_facts()` through hf (optional; offline only).
5. Registration: `PAPER` card here, the `PAPERS` row ("chroknow", experiments
   ("elicitation", "prompting", "templates"), extras ("chroknow",)), docs/papers/chroknow.md
   per the template (synthetic and scaled-down parts; the differences from
   dmis-lab/ChroKnowledge: every `# DEVIATION:` in data.py, method.py, training.py and the
   experiments, including probe-shaped training with the answer-only loss), full results from
   a clean clone.

Needs the `chroknow` extra (rapidfuzz).
"""

from iclr25.core.experiment import PaperInfo
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
    title="ChroKnowledge: Unveiling Chronological Knowledge of Language Models in Multiple "
    "Domains",
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
