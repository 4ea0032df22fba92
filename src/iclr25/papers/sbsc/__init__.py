"""SBSC: A Step-By-Step Coding Framework for Improving Mathematical Olympiad Performance
(Singh et al., ICLR 2025).

Public API: solve math problems over turns with any `iclr25.core.lm.LanguageModel`, running
model-written code in a confined sandbox:

    >>> from iclr25.papers.sbsc import SBSC, TIR, PAL, COT, Sandbox, self_consistency
    >>> with Sandbox() as sb:                        # forkserver + rlimits + seccomp
    ...     tr = SBSC(lm, sb, max_turns=15).solve(problem)   # a replayable Transcript
    ...     tr.answer, tr.executions, tr.program_errors, tr.sandbox_failures
    ...     votes, _ = self_consistency(PAL(lm, sb, temperature=0.7).solve_many, problems, k=5)

Docs, claims and results: docs/papers/sbsc.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.sbsc.answers import (
    extract_boxed,
    majority_vote,
    normalize,
    normalize_aime,
    normalize_amc,
)
from iclr25.papers.sbsc.baselines import COT, PAL, TIR, self_consistency
from iclr25.papers.sbsc.data import (
    Problem,
    generate_problems,
    load_champ,
    load_problems,
    make_problem,
)
from iclr25.papers.sbsc.method import (
    SBSC,
    MultiTurnSolver,
    ReplayLM,
    Transcript,
    Turn,
    format_feedback,
    last_code_block,
)
from iclr25.papers.sbsc.sandbox import (
    CachedExecutor,
    ExecResult,
    Sandbox,
    SandboxUnavailable,
)
from iclr25.papers.sbsc.simulator import NoisySolver

PAPER = PaperInfo(
    slug="sbsc",
    title="SBSC: Step-By-Step Coding for Improving Mathematical Olympiad Performance",
    authors="Kunal Singh, Ankan Biswas, Sayandeep Bhowmick, Pradeep Moturi, "
    "Siva Kishore Gollapalli",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2502.16666",
    code="none found (the paper links scripts and data without a public repository)",
    summary="A model solves a math problem over turns, each turn one sub-task and one program "
    "whose output (or error) it sees before the next; for Claude-3.5-Sonnet this beats "
    "PAL/POT and TIR-ToRA on AMC12, AIME and MathOdyssey, greedy against their "
    "self-consistency too.",
)

__all__ = [
    "COT",
    "PAL",
    "PAPER",
    "SBSC",
    "TIR",
    "CachedExecutor",
    "ExecResult",
    "MultiTurnSolver",
    "NoisySolver",
    "Problem",
    "ReplayLM",
    "Sandbox",
    "SandboxUnavailable",
    "Transcript",
    "Turn",
    "extract_boxed",
    "format_feedback",
    "generate_problems",
    "last_code_block",
    "load_champ",
    "load_problems",
    "majority_vote",
    "make_problem",
    "normalize",
    "normalize_aime",
    "normalize_amc",
    "self_consistency",
]
