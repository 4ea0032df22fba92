"""Plot the surprise curves saved by stochastic.py --save (args: [--out=PNG] "title=file.npz" ...;
default PNG /tmp/dhtm_stochastic_surprise.png) and print the windowed excess at checkpoints."""

import matplotlib
import numpy as np

matplotlib.use("Agg")
import sys

import matplotlib.pyplot as plt

from iclr25.papers.dhtm.training import windowed

args = sys.argv[1:]
out = next((a.split("=", 1)[1] for a in args if a.startswith("--out=")), None)
runs = dict(a.split("=", 1) for a in args if not a.startswith("--out=")) or {
    "lr_f 0.2 (tuned)": "/tmp/st_lr02.npz",
    "lr_f 0.1 (paper)": "/tmp/st_lr01.npz",
    "lr_f 0.05": "/tmp/st_lr005.npz",
}
fig, axes = plt.subplots(1, len(runs), figsize=(16, 4), sharey=True)
rows = []
for ax, (title, f) in zip(axes, runs.items()):
    d = np.load(f)
    variants = sorted({k.split("/")[0] for k in d.files})
    orc = np.mean([d[k][1] for k in d.files], axis=0)
    ax.plot(windowed(orc, 20), "k", lw=2, label="oracle")
    for v in variants:
        raw = np.mean([d[k][0] for k in d.files if k.startswith(v + "/")], axis=0)
        ex = np.mean([d[k][0] - d[k][1] for k in d.files if k.startswith(v + "/")], axis=0)
        ax.plot(windowed(raw, 20), label=v)
        cps = [
            (280, 300),
            (300, 320),
            (320, 340),
            (340, 360),
            (380, 400),
            (580, 600),
            (600, 620),
            (640, 660),
            (880, 900),
        ]
        rows.append((title, v, [ex[a:b].mean() for a, b in cps]))
    for x in (300, 600):
        ax.axvline(x, color="grey", ls=":")
    ax.set_title(f"DHTM, stochastic transitions, {title}\n(mean of tuning seeds 100-104)")
    ax.set_xlabel("episode")
    ax.legend(fontsize=7)
axes[0].set_ylabel("surprise (nats/step, 20-ep. window)")
axes[0].set_ylim(0, 1.5)  # the first episodes (up to 3.6) are cut
fig.tight_layout()
fig.savefig(out or "/tmp/dhtm_stochastic_surprise.png", dpi=90)
print("episodes:", cps)
for t, v, xs in rows:
    print(f"{t:18s} {v:18s} " + " ".join(f"{x:6.3f}" for x in xs))
d = np.load(next(iter(runs.values())))
orc = np.mean([d[k][1] for k in d.files], axis=0)
print("oracle raw surprise", " ".join(f"{orc[a:b].mean():6.3f}" for a, b in cps))
