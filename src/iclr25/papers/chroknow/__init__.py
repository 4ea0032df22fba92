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
`tune.py`, the training grid on a bench seed disjoint from the claim seeds;
`experiments/elicitation.py` and `experiments/prompting.py` (config, presets, claims, metric
glossary, `run`; smoke presets run in about 2 s).

What remains (issue 24), exactly:

1. Recall. DONE for the structured arm by probe-shaped training (`training.probe_examples`,
   `training.train_probe_lm`: each copy of a fact is the check's own prompt, 4 pool exemplars
   of the same relation and year then the item's question, with the loss on "A. <object>\n"
   only; `experiments/elicitation.py` uses it). Earlier document training (loss on every token,
   `build_corpus` + `train_chroknow_lm`) gave Known 0 in every try: the model copied the
   previous exemplar's object or emitted an empty line. Measured on bench seed 100 (disjoint
   from the claim seeds 0-9), d_model 64, 2 layers, 2018-2023, cut-off 2021, check with n_sets
   2-3; times are wall seconds at nice 19 on 2 cores shared with other sessions, load average
   in brackets:
   (a) 16 items per state, max_reps 6 (480 examples), batch 32, 40 epochs, lr 3e-3: train
       240 s, check 23 s [7.9]; loss 0.028; dynamic Known 0.19 / Partial known 0.12 / Cut-off
       0.69 / Unknown 0 (pre-cut-off years correct 0.94, post 0.19); static Known 1.0.
   (b) 8 items, max_reps 4 (160 examples), batch 32, 30 epochs (150 steps): 57 s [7.7], loss
       0.32, dynamic years not learnt (pre correct 0.09), static Known 1.0. The same with
       1 exemplar per training example (checked with 4): 20 s, loss 0.48, static Known 0.12, so
       fewer exemplars in training breaks recall; lr 1e-2, 15 epochs: loss 0.88, static 0.5.
   (c) 8 items, max_reps 4, batch 8, 30 epochs (600 steps), lr 3e-3 (the quick preset's
       training now): train 39.5 s, check 4.9 s [5.8]; loss 0.059; dynamic Known 0 / Partial
       0.12 / Cut-off 0.88 / Unknown 0 (pre correct 0.72, post 0.06); static Known 0.88 /
       Partial 0.12. Batch 8 with 15 epochs and lr 6e-3: 15 s, loss 0.32, dynamic pre 0.12,
       static Known 1.0; batch 8, 20 epochs, d_model 32: 22 s, loss 0.35, dynamic pre 0.22.
   (d) prose arm, 8 items, max_reps 4, batch 32, 30 epochs: 28.8 s [7.3], loss 0.29, Unknown
       1.0 on both states. The prose arm is never asked in the probe's format and its
       sentences put the object before the subject, so its Unknown is by construction (the
       extreme case of finding 1); a fairer prose arm (subject first, or pool items in both
       formats as bridges) is not built.
   Static Known > dynamic Known and a Cut-off mass after 2021 come out of (a) and (c) as the
   paper describes (post-cut-off years are never trained; dynamic items that change after
   2021 become Cut-off).
   Still to do: the training grid `tune.py` (lr x 3 per format at the quick sizes, same grid
   for both arms; `python -m iclr25.papers.chroknow.tune`) ran one point (structured lr 1.5e-3:
   Known 0.56 over both states, loss 0.17) before the machine was saturated by nice-0 jobs;
   run it to the end, commit its output in `GRID_RESULT` and set each arm's lr from it.
2. Presets. elicitation quick = 8 items per state, max_reps 4, batch 8, 30 epochs, n_sets 3;
   full = 16 items, n_sets 5. Not timed as presets: (c)+(d) suggest about 75 s per seed at
   load ~6 (structured ~40 s, prose ~20-30 s, checks ~10-15 s), i.e. an idle machine has to be
   3-4x faster for quick (3 seeds, --jobs 2) to fit 60 s. Time it on an idle machine
   (`--jobs 1`, halve); if too slow, cut max_reps to 3 or n_sets to 2 at quick. The new smoke
   (2 items, max_reps 1, 1 epoch, d_model 8) passed its test but was not timed idle. Then run
   quick and full and write each claim's `expect` from what they give (NOT measured yet).
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
