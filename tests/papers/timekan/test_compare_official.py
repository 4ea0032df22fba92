"""benchmarks/compare_timekan_official.py without the official code (which is never vendored):
the parameter-name map and the error for a path that is not a checkout."""

import pytest

from iclr25.papers.timekan import TimeKAN


@pytest.fixture(scope="module")
def compare(benchmark_script):
    return benchmark_script("compare_timekan_official")


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_every_parameter_has_one_official_name(compare, k):
    model = TimeKAN(96, 24, 3, d_model=8, e_layers=2, down_sampling_layers=k, begin_order=1)
    names = [compare.official_name(n, k + 1) for n, _ in model.named_parameters()]
    assert len(set(names)) == len(names)
    # the official model: add_blocks[b].front_block is the coarsest band (lowest order),
    # front_blocks[i] the (i+1)-th coarsest; ours lists the bands finest first
    orders = {}
    for (ours, p), theirs in zip(model.named_parameters(), names):
        if ours.endswith("mixer.coeffs"):
            orders[theirs.split(".channel_mixer")[0]] = p.shape[-1] - 1
    for b in range(2):
        assert orders[f"add_blocks.{b}.front_block"] == 1
        for i in range(k):
            assert orders[f"add_blocks.{b}.front_blocks.{i}"] == 2 + i
    assert "normalize_layers.0.affine_weight" in names and "predict_layer.weight" in names


def test_a_path_that_is_not_a_checkout_is_refused(compare, tmp_path):
    with pytest.raises(SystemExit, match=r"is not a checkout of github.com/huangst21/TimeKAN"):
        compare.load_official(str(tmp_path))
