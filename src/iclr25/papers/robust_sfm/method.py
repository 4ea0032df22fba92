"""RESfM's network and losses (notes §2): a sparse set-of-sets equivariant encoder over the
observed entries of the camera x track matrix, camera / point / outlier heads, the
outlier-weighted reprojection loss with the depth hinge and the per-point gradient
normalisation, and the class-balanced BCE. ESFM is the same network with `outlier_head=False`.

The paper's text was not available (the notes give no equation numbers); the numbered items
below refer to the notes' §2 ("Backbone", "Heads", "Loss").

Everything is sparse: an input is E observed entries, each with its normalised pixel
`K^-1 x` (2 numbers), its camera index and its track index; pooling is `index_add_` means, so
no dense m x n tensor is ever built.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr25.core.checks import check_float, check_int

__all__ = [
    "RESfMNet",
    "SetOfSetsLayer",
    "SfMOutput",
    "balanced_bce",
    "mean_center",
    "quaternion_to_rotation",
    "reprojection_loss",
    "resfm_loss",
    "scatter_mean",
]


def scatter_mean(x: Tensor, index: Tensor, size: int) -> Tensor:
    """Mean of the rows of `x` per group `index` (empty groups get 0).

    Shapes:
        x: (E, d), index: (E,) int64 in [0, size) -> (size, d)
    """
    s = x.new_zeros(size, x.shape[1]).index_add_(0, index, x)
    c = torch.bincount(index, minlength=size).clamp(min=1).to(x.dtype)
    return s / c[:, None]


def mean_center(x: Tensor) -> Tensor:
    """The backbone's normalisation: subtract the mean over all entries (no variance scaling).

    Shapes:
        x: (E, d) -> (E, d)
    """
    return x - x.mean(dim=0, keepdim=True)


class SetOfSetsLayer(nn.Module):
    """One exchangeable set-of-sets layer over the observed entries (notes §2, "Backbone").

    out_e = (W_1 x_e + W_2 mean_{track(e)} x + W_3 mean_{cam(e)} x + W_4 mean_all x) / 4,

    where the track mean is over the cameras that observe the track and the camera mean over
    the tracks that camera observes. Permuting cameras or tracks (relabelling the indices)
    permutes the outputs accordingly: the layer is equivariant to both.

    Shapes:
        x: (E, d_in), cam, track: (E,) -> (E, d_out)
    """

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.entry = nn.Linear(d_in, d_out)
        self.track = nn.Linear(d_in, d_out)
        self.cam = nn.Linear(d_in, d_out)
        self.all = nn.Linear(d_in, d_out)

    def forward(
        self, x: Tensor, cam: Tensor, track: Tensor, num_cameras: int, num_tracks: int
    ) -> Tensor:
        by_track = scatter_mean(x, track, num_tracks)[track]
        by_cam = scatter_mean(x, cam, num_cameras)[cam]
        glob = x.mean(dim=0, keepdim=True)
        return (self.entry(x) + self.track(by_track) + self.cam(by_cam) + self.all(glob)) / 4


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))


def quaternion_to_rotation(q: Tensor) -> Tensor:
    """Rotation matrices from (unnormalised) quaternions in (w, x, y, z) order.

    Shapes:
        q: (m, 4) -> (m, 3, 3)
    """
    q = q / q.norm(dim=-1, keepdim=True).clamp(min=1e-12)
    w, x, y, z = q.unbind(-1)
    return torch.stack(
        [
            1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
        ],
        dim=-1,
    ).reshape((*q.shape[:-1], 3, 3))  # fmt: skip


@dataclass
class SfMOutput:
    """The network's prediction for one scene.

    Attributes:
        R: world-to-camera rotations, (m, 3, 3).
        t: translations, (m, 3).
        X: 3D points, (n, 3).
        quat: the raw quaternions (w, x, y, z) before normalisation, (m, 4).
        outlier_logit: per-entry logit of P(outlier), (E,), or None (ESFM).
        features: the backbone's per-entry features, (E, d).
    """

    R: Tensor
    t: Tensor
    X: Tensor
    quat: Tensor
    outlier_logit: Tensor | None
    features: Tensor


class RESfMNet(nn.Module):
    """RESfM's network: the set-of-sets backbone and the camera, point and outlier heads.

    Defaults are the official config (notes §2 and the ground check): 256 features, 1 block
    of 3 layers, no skip connections, no positional encoding. Each layer is followed by
    mean-centring over all entries; ReLU goes between layers.

    # DEVIATION: [unverified] the notes say "ReLU between layers"; whether the official block
    # also applies a ReLU after its last layer could not be read. Here the last layer's output
    # goes to the heads without one (every head starts with a linear map).

    Heads (2-layer MLPs, hidden width `features`):
      - camera: the mean feature of each camera's entries -> quaternion (4, wxyz) + t (3);
      - point: the mean feature of each track's entries -> X (3);
      - outlier: each entry's feature -> one logit of P(outlier) (absent with
        `outlier_head=False`, which is ESFM).

    Args:
        d_in: input features per entry (2: the normalised pixel).
        features: width of the backbone and the heads.
        num_blocks, layers_per_block: the backbone has num_blocks * layers_per_block layers.
        outlier_head: False gives ESFM.

    Shapes:
        xy: (E, d_in), cam: (E,), track: (E,) -> SfMOutput with m = num_cameras,
        n = num_tracks
    """

    def __init__(
        self,
        d_in: int = 2,
        features: int = 256,
        num_blocks: int = 1,
        layers_per_block: int = 3,
        outlier_head: bool = True,
    ) -> None:
        super().__init__()
        d_in = check_int("d_in", d_in, 1)
        features = check_int("features", features, 1)
        depth = check_int("num_blocks", num_blocks, 1) * check_int(
            "layers_per_block", layers_per_block, 1
        )
        dims = [d_in] + [features] * depth
        self.layers = nn.ModuleList(SetOfSetsLayer(a, b) for a, b in itertools.pairwise(dims))
        self.camera_head = _mlp(features, features, 7)
        self.point_head = _mlp(features, features, 3)
        self.outlier_head = _mlp(features, features, 1) if outlier_head else None

    def forward(
        self,
        xy: Tensor,
        cam: Tensor,
        track: Tensor,
        num_cameras: int | None = None,
        num_tracks: int | None = None,
    ) -> SfMOutput:
        if xy.ndim != 2 or cam.shape != (len(xy),) or track.shape != (len(xy),):
            raise ValueError(
                f"xy {tuple(xy.shape)}, cam {tuple(cam.shape)}, track {tuple(track.shape)}: "
                "must be (E, d_in), (E,), (E,)"
            )
        if len(xy) == 0:
            raise ValueError("xy has no entries: needs at least one observed entry")
        m = int(cam.max()) + 1 if num_cameras is None else int(num_cameras)
        n = int(track.max()) + 1 if num_tracks is None else int(num_tracks)
        x = xy
        for i, layer in enumerate(self.layers):
            x = mean_center(layer(x, cam, track, m, n))
            if i < len(self.layers) - 1:
                x = F.relu(x)
        cam_out = self.camera_head(scatter_mean(x, cam, m))
        quat, t = cam_out[:, :4], cam_out[:, 4:]
        X = self.point_head(scatter_mean(x, track, n))
        logit = None if self.outlier_head is None else self.outlier_head(x)[:, 0]
        return SfMOutput(
            R=quaternion_to_rotation(quat), t=t, X=X, quat=quat, outlier_logit=logit, features=x
        )


def reprojection_loss(
    R: Tensor,
    t: Tensor,
    X: Tensor,
    xy: Tensor,
    cam: Tensor,
    track: Tensor,
    *,
    outlier_prob: Tensor | None = None,
    hinge: float = 1e-3,
    normalize_grad: bool = True,
) -> Tensor:
    """ESFM's reprojection loss, optionally outlier-weighted (RESfM), in normalised coordinates.

    For each entry e = (i, j): p_e = R_i X_j + t_i (the projected homogeneous point). If its
    depth p_e[2] > `hinge`, r_e = ||p_e[:2] / p_e[2] - xy_e||; otherwise the hinge
    r_e = hinge - p_e[2] replaces it (pushes points in front of the camera). The loss is
    mean_e (1 - w_e) r_e with w_e = `outlier_prob` (not detached: its gradient reaches the
    outlier head), or mean_e r_e without it.

    `normalize_grad` registers a backward hook on p (notes §2): each entry's gradient with
    respect to its projected homogeneous point is L2-normalised, then divided by the number of
    valid entries (depth > hinge). Only directions reach the network from each entry, so a
    few huge residuals (outliers) cannot dominate the step. A consequence: the (1 - w_e) factor
    rescales an entry's gradient before the hook, so it no longer down-weights that entry's
    pull on the geometry; w_e still receives its own gradient r_e.

    Shapes:
        R: (m, 3, 3), t: (m, 3), X: (n, 3), xy: (E, 2), cam, track: (E,),
        outlier_prob: (E,) or None -> scalar
    """
    hinge = check_float("hinge", hinge, 0, None, low_open=True)
    p = torch.einsum("eij,ej->ei", R[cam], X[track]) + t[cam]
    depth = p[:, 2]
    valid = depth > hinge
    if normalize_grad and p.requires_grad:
        n_valid = valid.sum().clamp(min=1).to(p.dtype)
        p.register_hook(lambda g: F.normalize(g, dim=1) / n_valid)
    safe = torch.where(valid, depth, torch.ones_like(depth))
    diff = p[:, :2] / safe[:, None] - xy
    # sqrt with a floor inside the square keeps the gradient finite at an exact fit
    sq = (diff * diff).sum(dim=1)
    r = torch.where(sq > 0, sq.clamp(min=1e-30).sqrt(), torch.zeros_like(sq))
    res = torch.where(valid, r, hinge - depth)
    if outlier_prob is not None:
        res = (1 - outlier_prob) * res
    return res.mean()


def balanced_bce(logit: Tensor, is_outlier: Tensor, outlier_ratio: float | None = None) -> Tensor:
    """Class-balanced BCE for the outlier head: outliers weighted (1 - r) / r, inliers 1.

    r is the scene's outlier ratio (from the labels unless given). With r = 0 or r = 1 the
    weight is 1 (plain BCE). The mean is over entries.

    Shapes:
        logit: (E,), is_outlier: (E,) bool -> scalar
    """
    y = is_outlier.to(logit.dtype)
    r = float(y.mean()) if outlier_ratio is None else outlier_ratio
    r = check_float("outlier_ratio", r, 0, 1)
    pos_weight = (1 - r) / r if 0 < r < 1 else 1.0
    return F.binary_cross_entropy_with_logits(
        logit, y, pos_weight=torch.tensor(pos_weight, dtype=logit.dtype)
    )


def resfm_loss(
    out: SfMOutput,
    xy: Tensor,
    cam: Tensor,
    track: Tensor,
    is_outlier: Tensor | None = None,
    *,
    w_reprojection: float = 1.0,
    w_classification: float = 0.1,
    hinge: float = 1e-3,
    normalize_grad: bool = True,
) -> tuple[Tensor, dict[str, float]]:
    """RESfM's training loss: 1.0 * mean[(1 - w) r] + 0.1 * balanced BCE(w, y) (notes §2).

    With no outlier head (ESFM) or `is_outlier=None` (unsupervised fine-tuning) it is the
    plain reprojection loss (unweighted when there is no head).

    Returns:
        The loss and its parts as floats (`reprojection`, `classification`).

    Shapes:
        xy: (E, 2), cam, track: (E,), is_outlier: (E,) bool or None -> scalar, dict
    """
    w_reprojection = check_float("w_reprojection", w_reprojection, 0)
    w_classification = check_float("w_classification", w_classification, 0)
    prob = None
    if out.outlier_logit is not None and is_outlier is not None:
        prob = torch.sigmoid(out.outlier_logit)
    rep = reprojection_loss(
        out.R, out.t, out.X, xy, cam, track,
        outlier_prob=prob, hinge=hinge, normalize_grad=normalize_grad,
    )  # fmt: skip
    loss = w_reprojection * rep
    parts = {"reprojection": float(rep.detach())}
    if prob is not None:
        cls = balanced_bce(out.outlier_logit, is_outlier)
        loss = loss + w_classification * cls
        parts["classification"] = float(cls.detach())
    return loss, parts
