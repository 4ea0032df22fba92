"""Real molecules from inside the rdkit wheel as `GraphSet`s (the cross-dataset, graph-level arm).

- Source (`nci_tpsa`): the NCI's "first 5K" compounds with their topological polar surface
  area (rdkit `Data/NCI/first_5k.tpsa.csv`, computed by Daylight tools; NCI data are public
  domain), labelled by TPSA bins (equal-count bins over the whole set).
- Target (`chembl2321810`): 1,017 compounds of ChEMBL assay CHEMBL2321810 with their pIC50
  (rdkit `Contrib/FreeWilson/data`, ChEMBL, CC BY-SA 3.0), labelled active at pIC50 >= 7
  (100 nM), with about 100 labelled training molecules (stratified) and the rest as test.

Both files are read from the installed package at run time, never downloaded or copied into
this repository. Molecules become graphs of heavy atoms (bonds as undirected edges) with
`ATOM_FEATURES` one-hot features.

# DEVIATION: the paper's molecule benchmarks (ZINC pre-training, MoleculeNet targets) cannot
# be downloaded here; this source/target pair is the one the ground check found inside a wheel.
# The binning of TPSA, the activity threshold and the atom features are our choices.
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import numpy as np
import torch

from iclr25.core.checks import check_float, check_int
from iclr25.papers.st_gcond.data import GraphSet

ELEMENTS = ("C", "N", "O", "S", "F", "Cl", "Br", "I", "P")
"""Elements with their own feature; every other element shares one "other" feature."""
ATOM_FEATURES = (
    [f"element={e}" for e in ELEMENTS]
    + ["element=other"]
    + [f"degree={d}" for d in range(5)]
    + ["degree>=5"]
    + [f"hydrogens={h}" for h in range(4)]
    + ["charge<0", "charge=0", "charge>0", "aromatic", "in_ring"]
)
"""The node features of a molecule graph, in order (one-hot groups and two flags)."""


def _rdkit_dir() -> Path:
    spec = importlib.util.find_spec("rdkit")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the molecule sets need rdkit: pip install 'iclr25[graph]'")
    return Path(spec.submodule_search_locations[0])


def _atom_features(atom) -> list[float]:
    f = [0.0] * len(ATOM_FEATURES)
    sym = atom.GetSymbol()
    f[ELEMENTS.index(sym) if sym in ELEMENTS else len(ELEMENTS)] = 1.0
    f[10 + min(atom.GetDegree(), 5)] = 1.0
    f[16 + min(atom.GetTotalNumHs(), 3)] = 1.0
    q = atom.GetFormalCharge()
    f[20 + (0 if q < 0 else 1 if q == 0 else 2)] = 1.0
    f[23] = float(atom.GetIsAromatic())
    f[24] = float(atom.IsInRing())
    return f


def molecule_set(
    smiles: list[str],
    labels: np.ndarray,
    num_classes: int,
    masks: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> GraphSet:
    """SMILES strings as a `GraphSet` of heavy-atom graphs with `ATOM_FEATURES`.

    Raises:
        ValueError: A SMILES string rdkit cannot parse (named), or mismatched lengths.
    """
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    if not len(smiles) == len(labels) == len(masks[0]):
        raise ValueError(f"{len(smiles)} SMILES, {len(labels)} labels: must be as many")
    xs, edges, sizes, offset = [], [], [], 0
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        if mol is None or mol.GetNumAtoms() == 0:
            raise ValueError(f"SMILES {s!r} is not allowed: rdkit cannot parse it")
        xs += [_atom_features(a) for a in mol.GetAtoms()]
        for b in mol.GetBonds():
            i, j = b.GetBeginAtomIdx() + offset, b.GetEndAtomIdx() + offset
            edges += [(i, j), (j, i)]
        sizes.append(mol.GetNumAtoms())
        offset += mol.GetNumAtoms()
    ei = torch.tensor(edges, dtype=torch.long).T if edges else torch.zeros(2, 0, dtype=torch.long)
    return GraphSet(
        x=torch.tensor(xs, dtype=torch.float32),
        edge_index=ei.contiguous(),
        ptr=torch.from_numpy(np.r_[0, np.cumsum(sizes)].astype(np.int64)),
        y=torch.from_numpy(np.asarray(labels, dtype=np.int64)),
        train_mask=torch.from_numpy(masks[0]),
        val_mask=torch.from_numpy(masks[1]),
        test_mask=torch.from_numpy(masks[2]),
        num_classes=num_classes,
    )


def _parsable(smiles: list[str], max_atoms: int) -> np.ndarray:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    keep = []
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        keep.append(mol is not None and 0 < mol.GetNumAtoms() <= max_atoms)
    return np.array(keep)


def _stratified(y: np.ndarray, counts: tuple[int, int] | None, fractions, rng):
    """Train/val/test masks per class: `counts` (train, val) molecules in all, spread over the
    classes in proportion, or `fractions` of each class."""
    n = len(y)
    masks = [np.zeros(n, bool) for _ in range(3)]
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        if counts is not None:
            share = len(idx) / n
            n_tr, n_va = (max(1, round(k * share)) if k else 0 for k in counts)
        else:
            n_tr, n_va = max(1, round(fractions[0] * len(idx))), round(fractions[1] * len(idx))
        masks[0][idx[:n_tr]] = True
        masks[1][idx[n_tr : n_tr + n_va]] = True
        masks[2][idx[n_tr + n_va :]] = True
    return masks


def nci_tpsa(
    rng: np.random.Generator,
    *,
    num_bins: int = 6,
    max_atoms: int = 60,
    limit: int | None = None,
    train_frac: float = 0.8,
    val_frac: float = 0.1,
) -> GraphSet:
    """The source set: NCI's first 5K compounds (4,991 parse; those with more than `max_atoms`
    heavy atoms are dropped), labelled by `num_bins` equal-count bins of TPSA, with stratified
    train/val/test splits. `limit` keeps the first `limit` molecules (small presets).

    Raises:
        ValueError, TypeError: An argument out of range (named).
    """
    num_bins = check_int("num_bins", num_bins, 2)
    max_atoms = check_int("max_atoms", max_atoms, 1)
    tr = check_float("train_frac", train_frac, 0, 1, low_open=True, high_open=True)
    va = check_float("val_frac", val_frac, 0, 1, high_open=True)
    path = _rdkit_dir() / "Data" / "NCI" / "first_5k.tpsa.csv"
    with open(path) as fh:
        rows = [r for r in csv.reader(fh) if r and not r[0].startswith("#")]
    if limit is not None:
        rows = rows[: check_int("limit", limit, num_bins * 4)]
    smiles = [r[0] for r in rows]
    tpsa = np.array([float(r[1]) for r in rows])
    keep = _parsable(smiles, max_atoms)
    smiles, tpsa = [s for s, k in zip(smiles, keep) if k], tpsa[keep]
    edges = np.quantile(tpsa, np.linspace(0, 1, num_bins + 1)[1:-1])
    y = np.searchsorted(edges, tpsa, side="right")
    return molecule_set(smiles, y, num_bins, _stratified(y, None, (tr, va), rng))


def chembl2321810(
    rng: np.random.Generator,
    *,
    threshold: float = 7.0,
    num_labelled: int = 100,
    limit: int | None = None,
) -> GraphSet:
    """The target set: ChEMBL assay CHEMBL2321810's 1,017 compounds, active (1) at pIC50 >=
    `threshold` (35 % at 7.0), `num_labelled` labelled training molecules (stratified), the
    rest test. `limit` keeps `limit` molecules drawn at random (small presets).

    Raises:
        ValueError, TypeError: An argument out of range (named).
    """
    threshold = check_float("threshold", threshold, 0, None)
    num_labelled = check_int("num_labelled", num_labelled, 4)
    base = _rdkit_dir() / "Contrib" / "FreeWilson" / "data"
    with open(base / "CHEMBL2321810_act.csv") as fh:
        act = {r["Name"]: float(r["Act"]) for r in csv.DictReader(fh)}
    with open(base / "CHEMBL2321810.smi") as fh:
        pairs = [line.split() for line in fh if line.strip()]
    pairs = [(s, act[name]) for s, name in pairs if name in act]
    if limit is not None:  # a random subset: the file is sorted by potency in stretches
        keep = rng.permutation(len(pairs))[: check_int("limit", limit, 2 * num_labelled)]
        pairs = [pairs[i] for i in np.sort(keep)]
    if num_labelled >= len(pairs):
        raise ValueError(f"num_labelled={num_labelled} is not allowed: must be < {len(pairs)}")
    y = np.array([p >= threshold for _, p in pairs], dtype=np.int64)
    if y.min() == y.max():
        raise ValueError(f"threshold={threshold} is not allowed: it leaves one class only")
    masks = _stratified(y, (num_labelled, 0), None, rng)
    return molecule_set([s for s, _ in pairs], y, 2, masks)
