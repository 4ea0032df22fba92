"""When GNNs meet symmetry in ILPs: orbit-based feature augmentation (Chen et al., ICLR 2025).

Public API (functions, a torch `nn.Module`, and a training loop):

    >>> from iclr25.papers.ilp_orbit import load_ilp, detect_symmetry, train, predict
    >>> ilp = load_ilp("model.mps")                  # MPS or LP, through HiGHS
    >>> sym = detect_symmetry(ilp)                   # nauty: orbits, linked orbits, columns
    >>> result = train(train_set, val_set, "orbit_plus", TrainSettings(), rng)
    >>> x = predict(result.model, "orbit_plus", ilp).round()

Docs, claims and results: docs/papers/ilp_orbit.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.ilp_orbit.baselines import (
    no_augmentation,
    position_augmentation,
    uniform_augmentation,
)
from iclr25.papers.ilp_orbit.data import bin_packing, generate, label, slab_assignment
from iclr25.papers.ilp_orbit.ilp import (
    ILP,
    BipartiteGraph,
    Solution,
    bipartite_features,
    load_ilp,
    solve,
    write_ilp,
)
from iclr25.papers.ilp_orbit.method import (
    BipartiteGNN,
    align_labels,
    orbit_augmentation,
    orbit_plus_augmentation,
    orbit_spread,
    sinusoidal_code,
    top_m_error,
)
from iclr25.papers.ilp_orbit.symmetry import Columns, Symmetry, detect_symmetry
from iclr25.papers.ilp_orbit.training import (
    AUGMENTATIONS,
    SCHEMES,
    Example,
    TrainResult,
    TrainSettings,
    augment,
    evaluate,
    make_example,
    predict,
    train,
)

PAPER = PaperInfo(
    slug="ilp_orbit",
    title="When GNNs meet symmetry in ILPs: an orbit-based feature augmentation approach",
    authors="Qian Chen, Lei Li, Qian Li, Jianghua Wu, Akang Wang, Ruoyu Sun, Xiaodong Luo, "
    "Tsung-Hui Chang, Qingjiang Shi",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2501.14211",
    code="NetSysOpt/GNNs_Sym_ILPs (no license file)",
    summary="A GNN cannot tell apart variables in the same orbit of an ILP's formulation "
    "symmetry group (it outputs equal values on every orbit); adding to each variable a feature "
    "sampled as a random permutation inside its orbit (Orbit), shared by orbits that move in "
    "lockstep (Orbit+), breaks the ties with the smallest feature space and trains faster and "
    "predicts better than uniform or positional noise.",
)

__all__ = [
    "AUGMENTATIONS",
    "ILP",
    "PAPER",
    "SCHEMES",
    "BipartiteGNN",
    "BipartiteGraph",
    "Columns",
    "Example",
    "Solution",
    "Symmetry",
    "TrainResult",
    "TrainSettings",
    "align_labels",
    "augment",
    "bin_packing",
    "bipartite_features",
    "detect_symmetry",
    "evaluate",
    "generate",
    "label",
    "load_ilp",
    "make_example",
    "no_augmentation",
    "orbit_augmentation",
    "orbit_plus_augmentation",
    "orbit_spread",
    "position_augmentation",
    "predict",
    "sinusoidal_code",
    "slab_assignment",
    "solve",
    "top_m_error",
    "train",
    "uniform_augmentation",
    "write_ilp",
]
