"""The training grid's choice rule: the most Known on average over the tuning seeds, ties to
the lower mean loss; the seeds are disjoint from the claim seeds."""

from iclr25.papers.chroknow.tune import TUNE_SEEDS, chosen


def test_chosen_maximises_mean_known_then_lowest_loss():
    rows = [
        {"format": "structured", "lr": 1e-3, "known": 0.5, "loss": 0.2},
        {"format": "structured", "lr": 1e-3, "known": 0.7, "loss": 0.2},
        {"format": "structured", "lr": 3e-3, "known": 0.6, "loss": 0.1},
        {"format": "structured", "lr": 3e-3, "known": 0.6, "loss": 0.3},  # tie at 0.6: loss 0.2
        {"format": "structured", "lr": 6e-3, "known": 0.6, "loss": 0.1},
        {"format": "structured", "lr": 6e-3, "known": 0.6, "loss": 0.2},  # 0.6, loss 0.15: wins
        {"format": "prose", "lr": 1e-3, "known": 0.0, "loss": 0.5},
        {"format": "prose", "lr": 3e-3, "known": 0.0, "loss": 0.4},
    ]
    assert chosen(rows) == {"structured": 6e-3, "prose": 3e-3}
    assert not set(TUNE_SEEDS) & set(range(10))
