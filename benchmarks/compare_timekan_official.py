"""The official TimeKAN model (huangst21/TimeKAN, from a checkout you give) beside ours.

Both models are built with the official ETTh1 settings of each horizon and trained by the same
TSLib loop (`iclr25.papers.timekan.fit`: MSE, Adam, OneCycle stepped per batch, 10 epochs, best
validation epoch restored) on the same standardised windows of the same split as
`timekan.forecast` (every window, 60/20/20 by rows), then scored on every test window. The script
reports, per series, horizon and seed: test MSE and MAE of each, seconds per training epoch of
each (wall-clock of each fit, sequential, so a changing machine load skews it) and the median
time of one training step with the two models taking turns on the same batches (the ratio to
read), their parameter counts, and a same-weights check: our model's weights are copied into the
official model (parameter names mapped one to one) and the two forward passes are compared in
float64 on test windows, with dropout off.

The official code is imported from the path you give and is never copied into this project:

    git clone https://github.com/huangst21/TimeKAN /tmp/TimeKAN
    python benchmarks/compare_timekan_official.py --official /tmp/TimeKAN
    python benchmarks/compare_timekan_official.py --official /tmp/TimeKAN \\
        --datasets elecdemand --horizons 96,192 --seeds 0,1,2 --epochs 10

Only the official model (`models/TimeKAN.py` and `layers/`, which need torch alone) is run:
the official training script cannot run here, because its data loader imports sktime at module
level (not a dependency of this project) and its `EarlyStopping` uses `np.Inf`, which NumPy 2
removed. Our `fit` follows its loop (see `iclr25.papers.timekan.pipeline`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import types
from pathlib import Path

import torch
from torch import nn

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows
from iclr25.core.seeding import torch_seed
from iclr25.papers.timekan.data import make_splits
from iclr25.papers.timekan.experiments.forecast import DataConfig, ForecastConfig
from iclr25.papers.timekan.method import count_parameters
from iclr25.papers.timekan.pipeline import (
    TrainSettings,
    build_timekan,
    evaluate,
    fit,
    named_hparams,
)

OUT = Path(__file__).resolve().parent / "results" / "timekan_official.json"
NEEDED = ("models/TimeKAN.py", "layers/ChebyKANLayer.py", "layers/StandardNorm.py")


def load_official(path: str):
    """`models.TimeKAN.Model` from the checkout at `path` (imported in place, not copied)."""
    root = Path(path).expanduser().resolve()
    missing = [f for f in NEEDED if not (root / f).is_file()]
    if missing:
        raise SystemExit(
            f"--official {path!r} is not a checkout of github.com/huangst21/TimeKAN: "
            f"{', '.join(missing)} not found (git clone https://github.com/huangst21/TimeKAN)"
        )
    for name in ("models", "layers"):
        mod = sys.modules.get(name)
        if mod is not None and not str(getattr(mod, "__file__", "") or "").startswith(str(root)):
            raise SystemExit(f"a module named {name!r} is already imported from elsewhere: {mod}")
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module("models.TimeKAN")
    except ImportError as err:
        raise SystemExit(
            f"the official model at {root} could not be imported ({err}); it needs torch only"
        ) from None
    return module.Model


def official_args(seq_len: int, pred_len: int, channels: int, hp) -> types.SimpleNamespace:
    """The official run.py arguments that the model reads (ETTh1 script values)."""
    return types.SimpleNamespace(
        task_name="long_term_forecast",
        seq_len=seq_len,
        label_len=0,
        pred_len=pred_len,
        enc_in=channels,
        c_out=channels,
        d_model=hp.d_model,
        d_ff=32,
        e_layers=hp.e_layers,
        down_sampling_layers=hp.down_sampling_layers,
        down_sampling_window=2,
        begin_order=hp.begin_order,
        dropout=0.1,
        embed="timeF",
        freq="h",
        moving_avg=25,
        use_norm=1,
        channel_independence=1,
        use_future_temporal_feature=0,
    )


class Official(nn.Module):
    """The official model behind our (B, L, C) -> (B, H, C) interface (no time marks)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x, None, None, None)


def official_name(ours: str, levels: int) -> str:
    """The official parameter name of our parameter `ours` (K + 1 = `levels` bands).

    Ours lists a block's bands finest first (index 0 = finest); the official code has the
    coarsest band's M-KAN as `front_block` and the finer ones as `front_blocks[i]`, i = 0 for
    the band next to the coarsest.
    """
    parts = ours.split(".")
    if parts[0] == "norms":
        return f"normalize_layers.{parts[1]}.affine_{parts[2]}"
    if ours == "embedding.conv.weight":
        return "enc_embedding.value_embedding.tokenConv.weight"
    if parts[0] in ("predict", "project"):
        head = "predict_layer" if parts[0] == "predict" else "projection_layer"
        return f"{head}.{parts[1]}"
    if parts[0] == "blocks":
        block, band = int(parts[1]), int(parts[3])
        where = "front_block" if band == levels - 1 else f"front_blocks.{levels - 2 - band}"
        leaf = "channel_mixer.0.fc1.cheby_coeffs" if parts[4] == "mixer" else "conv.conv.weight"
        return f"add_blocks.{block}.{where}.{leaf}"
    raise KeyError(f"no official counterpart for our parameter {ours!r}")


def same_weights_gap(ours: nn.Module, official: nn.Module, x: torch.Tensor, levels: int) -> float:
    """Largest |ours - official| of the forecasts of `x` with our weights in both (float64)."""
    a, b = ours.double().eval(), official.double().eval()
    theirs = dict(b.model.named_parameters())
    with torch.no_grad():
        for name, p in a.named_parameters():
            q = theirs[official_name(name, levels)]
            if q.shape != p.shape:
                raise ValueError(f"{name} {tuple(p.shape)} vs official {tuple(q.shape)}")
            q.copy_(p)
        gap = (a(x.double()) - b(x.double())).abs().max().item()
    a.float(), b.float()
    return gap


def step_ms(models: dict[str, nn.Module], splits, batch: int, lr: float, reps: int) -> dict:
    """Median milliseconds of one training step (forward, MSE, backward, Adam) of each model,
    the models taking turns on the same batches (robust to a changing machine load)."""
    gen = torch.Generator().manual_seed(0)
    batches = [
        splits.train.batch(torch.randint(len(splits.train), (batch,), generator=gen))
        for _ in range(4)
    ]
    calls = {}
    for name, m in models.items():
        m.train()
        opt = torch.optim.Adam(m.parameters(), lr=lr)

        def call(x, y, m=m, opt=opt):
            loss = torch.mean((m(x) - y) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()

        calls[name] = call
    med = interleaved_medians(calls, reps, 2, lambda r: batches[r % len(batches)])
    return {name: 1e3 * v for name, v in med.items()}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="compare_timekan_official", description=__doc__.split("\n")[0])
    p.add_argument("--official", required=True, help="checkout of github.com/huangst21/TimeKAN")
    p.add_argument("--datasets", default="elecdemand,epf_fr_be", help="built-in series")
    p.add_argument("--horizons", default="96", help="forecast horizons H")
    p.add_argument("--seeds", default="0", help="seeds (init, shuffling, dropout)")
    p.add_argument("--epochs", type=int, default=10, help="training epochs (official: 10)")
    p.add_argument("--train-stride", type=int, default=1, help="1 = every training window")
    p.add_argument("--eval-stride", type=int, default=1, help="1 = every val./test window")
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--reps", type=int, default=20, help="interleaved timed training steps")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    args = p.parse_args(argv)
    Model = load_official(args.official)
    load_before = load_average()
    torch.set_num_threads(args.threads)
    base = ForecastConfig()
    rows = []
    for name in args.datasets.split(","):
        data = DataConfig(builtin=name)
        series, _ = data.load()
        channels = series.values.shape[1]
        borders = data.borders(base.seq_len)
        for h in (int(v) for v in args.horizons.split(",")):
            hp = named_hparams("ETTh1", h)
            splits = make_splits(
                series, base.seq_len, h, borders, args.train_stride, args.eval_stride
            )
            levels = hp.down_sampling_layers + 1
            for seed in (int(v) for v in args.seeds.split(",")):
                with torch_seed(seed):
                    ours = build_timekan(base.seq_len, h, channels, hp)
                with torch_seed(seed):
                    official = Official(Model(official_args(base.seq_len, h, channels, hp)))
                x, _ = splits.test.batch(torch.arange(0, min(64, len(splits.test))))
                gap_init = same_weights_gap(ours, official, x, levels)
                with torch_seed(seed):  # fresh initialisations (the check above overwrote one)
                    ours = build_timekan(base.seq_len, h, channels, hp)
                    official = Official(Model(official_args(base.seq_len, h, channels, hp)))
                row = {"series": name, "H": h, "seed": seed}
                for label, model in (("ours", ours), ("official", official)):
                    settings = TrainSettings(args.epochs, hp.batch_size, hp.lr)
                    t0 = time.perf_counter()
                    with torch_seed(seed):
                        res = fit(
                            model,
                            splits.train,
                            splits.val,
                            settings,
                            torch.Generator().manual_seed(seed),
                        )
                    wall = time.perf_counter() - t0
                    scores = evaluate(model, splits.test)
                    row |= {
                        f"{label}_mse": round(scores.mse, 4),
                        f"{label}_mae": round(scores.mae, 4),
                        f"{label}_s_per_epoch": round(res.train_seconds / res.epochs_run, 2),
                        f"{label}_fit_s": round(wall, 1),
                        f"{label}_best_epoch": res.best_epoch + 1,
                        f"{label}_params": count_parameters(model),
                    }
                trained_gap = same_weights_gap(ours, official, x, levels)
                row["max_abs_gap_same_weights"] = float(f"{max(gap_init, trained_gap):.2e}")
                ms = step_ms(
                    {"ours": ours, "official": official}, splits, hp.batch_size, hp.lr, args.reps
                )
                row |= {
                    "ours_ms_per_step": round(ms["ours"], 1),
                    "official_ms_per_step": round(ms["official"], 1),
                    "official_over_ours": round(ms["official"] / ms["ours"], 2),
                }
                rows.append(row)
                print(row, flush=True)
    return bench_result(
        "timekan_official_vs_ours",
        "official huangst21/TimeKAN model (models/TimeKAN.py) in the same TSLib loop, same windows",
        {
            "threads": args.threads,
            "epochs": args.epochs,
            "train_stride": args.train_stride,
            "eval_stride": args.eval_stride,
            "split": "60/20/20 by rows",
            "hparams": "official ETTh1 script per horizon",
        },
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
