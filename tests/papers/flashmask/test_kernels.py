"""The Triton kernel in Triton's interpreter on CPU (small N: the interpreter is slow).

Triton decides between interpreter and compiler when it is first imported, so the checks run
in a fresh interpreter process with TRITON_INTERPRET=1 set by this test.
"""

import json
import os
import subprocess
import sys

import pytest

from iclr25.core.testing import needs

CHECK = r"""
import json, sys
import numpy as np, torch
from iclr25.papers.flashmask import causal, qk_sparse, stack, causal_document, flashmask_attention
from iclr25.papers.flashmask.data import make_mask
from iclr25.papers.flashmask.reference import dense_attention
seed = int(sys.argv[1])
rng = np.random.default_rng(seed)
g = torch.Generator().manual_seed(seed)
cases = {kind: make_mask(kind, 37, rng, docs=3, window=7, num_global=4) for kind in (
    "causal", "sliding_window", "causal_document", "document", "shared_question",
    "prefix_lm_document", "global_sliding_window", "qk_sparse")}
cases["per_head"] = stack([causal_document([10, 27]), qk_sparse(37, (4, 20), (30, 33))], 1)
out = {}
for name, mask in cases.items():
    for dtype in (torch.float64, torch.float32):
        q, k, v = (torch.randn(1, 2, 37, 20, generator=g, dtype=torch.float64) for _ in range(3))
        do = torch.randn(1, 2, 37, 20, generator=g, dtype=torch.float64)
        ins = [t.to(dtype).requires_grad_() for t in (q, k, v)]
        o = flashmask_attention(*ins, mask, block_m=16, block_n=16, backend="triton")
        grads = torch.autograd.grad(o, ins, do.to(dtype))
        ref_in = [t.requires_grad_() for t in (q, k, v)]
        ref = dense_attention(*ref_in, mask.to_dense())
        ref_grads = torch.autograd.grad(ref, ref_in, do)
        pairs = zip((o, *grads), (ref, *ref_grads))
        errs = [float((a.detach().double() - b).abs().max()) for a, b in pairs]
        nan = bool(o.isnan().any() or any(t.isnan().any() for t in grads))
        out[f"{name}/{str(dtype)[6:]}"] = [max(errs), nan]
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def interpreter_errors():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    seed = int(os.environ.get("ICLR25_TEST_SEED", "0"))
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, str(seed)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[len("RESULT") :])


@needs("triton")
def test_triton_kernel_is_exact_in_the_interpreter(interpreter_errors):
    """Forward and backward of the three kernels at N = 37 (not a multiple of the 16 x 16 tiles),
    causal and non-causal masks, fully masked rows (qk_sparse) and per-head masks."""
    assert len(interpreter_errors) == 18
    for name, (err, nan) in interpreter_errors.items():
        assert not nan, name
        assert err < (1e-10 if name.endswith("float64") else 1e-5), (name, err)
