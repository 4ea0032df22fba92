"""Non-stationary aliased sequences (synthetic), with the exact oracle posterior.

Six sequences of five symbols over an alphabet of eight, in three pairs. The two sequences of a
pair share their three middle symbols and differ in head and tail, so the tail depends on the
symbol four steps back; every symbol appears in at least two sequences, so first-order
statistics are ambiguous. Each episode draws one sequence (non-uniform probabilities) and ends
with an END symbol (index 8), so the alphabet the models see has nine states.

Phase B rotates the tails of one sequence of each pair and permutes the probabilities; phases
alternate A, B, A, ... (notes §4A).

Generators: deterministic (each sequence's symbols are fixed), stochastic transitions
(`jump > 0`: before each of the symbols 2-5 the episode's sequence is, with probability `jump`,
redrawn from the phase's probabilities, and the episode goes on with the new sequence's symbol
at the same position: a hidden Markov chain over (sequence, position) whose emissions are
deterministic, so a clone-structured model can represent it exactly), or noisy emissions
(`noise > 0`: each of the five symbols is, independently with probability `noise`, replaced by
one drawn uniformly from the eight; END is never replaced). The oracle is exact for all three.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_SYMBOLS = 8
SEQ_LEN = 5
END = N_SYMBOLS  # index of the end-of-episode symbol
N_STATES = N_SYMBOLS + 1


@dataclass(frozen=True)
class SequenceProcess:
    """One stationary phase: the sequences (each followed by END) and their probabilities."""

    seqs: np.ndarray  # (n_seq, SEQ_LEN + 1), last column END
    probs: np.ndarray  # (n_seq,)
    noise: float = 0.0
    """Probability that a symbol (not END) is replaced by a uniformly drawn one."""
    jump: float = 0.0
    """Probability that the sequence is redrawn before each of the symbols 2..SEQ_LEN."""

    def _transition(self, t: int) -> np.ndarray:
        """p(sequence at t | sequence at t-1), shape (n_seq, n_seq): a redraw with probability
        `jump` before the symbols 1..SEQ_LEN-1 (0-based), never before END."""
        n = len(self.probs)
        if self.jump == 0 or t >= self.seqs.shape[1] - 1:
            return np.eye(n)
        return (1 - self.jump) * np.eye(n) + self.jump * self.probs[None, :]

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One episode: the symbols of one sequence (with redraws if `jump > 0`, noisy if
        `noise > 0`), then END."""
        s = rng.choice(len(self.probs), p=self.probs)
        if self.jump > 0:
            path = [s]
            for _ in range(1, self.seqs.shape[1] - 1):
                if rng.random() < self.jump:
                    s = rng.choice(len(self.probs), p=self.probs)
                path.append(s)
            path.append(s)
            episode = self.seqs[path, np.arange(self.seqs.shape[1])]
        else:
            episode = self.seqs[s]
        if self.noise > 0:
            episode = episode.copy()
            hit = rng.random(episode.shape[0] - 1) < self.noise
            episode[:-1][hit] = rng.integers(N_SYMBOLS, size=int(hit.sum()))
        return episode

    def _emission(self, t: int) -> np.ndarray:
        """p(o_t | sequence), shape (n_seq, N_STATES)."""
        e = np.zeros((len(self.probs), N_STATES))
        e[np.arange(len(self.probs)), self.seqs[:, t]] = 1.0
        if self.noise > 0 and self.seqs[0, t] != END:
            e = (1 - self.noise) * e
            e[:, :N_SYMBOLS] += self.noise / N_SYMBOLS
        return e

    def oracle(self, episode: np.ndarray, gamma: float, horizon: int):
        """Exact predictions along `episode`.

        Returns (pred, sf): pred[t] = p(o_{t+1} | o_{<=t}) for t = 0..len-2, shape
        (len-1, N_STATES); sf[t] = Σ_{k<horizon} γ^k p(o_{t+k+1} | o_{<=t}), shape
        (len, N_STATES) (zero after END).
        """
        length = episode.shape[0]
        emit = [self._emission(t) for t in range(length)]
        w = self.probs.copy()
        pred = np.zeros((length - 1, N_STATES))
        sf = np.zeros((length, N_STATES))
        trans = [self._transition(t) for t in range(length)]
        for t in range(length):
            if t > 0:
                w = w @ trans[t]
            w = w * emit[t][:, episode[t]]
            post = w / w.sum()
            ahead = post
            for k in range(min(horizon, length - 1 - t)):
                ahead = ahead @ trans[t + k + 1]
                sf[t] += gamma**k * (ahead @ emit[t + k + 1])
                if k == 0:
                    pred[t] = ahead @ emit[t + 1]
        return pred, sf


def _valid(seqs: np.ndarray) -> bool:
    counts = np.zeros(N_SYMBOLS, int)
    for s in seqs:
        counts[np.unique(s)] += 1
    if counts.min() < 2:
        return False
    if len({tuple(s) for s in seqs}) < len(seqs):
        return False
    for p in range(0, len(seqs), 2):  # within a pair: distinct heads and tails
        a, b = seqs[p], seqs[p + 1]
        if a[0] == b[0] or a[-1] == b[-1]:
            return False
    return True


def make_phases(
    rng: np.random.Generator, noise: float = 0.0, jump: float = 0.0
) -> tuple[SequenceProcess, SequenceProcess]:
    """Phases A and B of the aliased-sequence task (rejection sampling of valid layouts);
    `jump` > 0 gives stochastic transitions, `noise` > 0 noisy emissions."""
    for name, v in (("noise", noise), ("jump", jump)):
        if not 0 <= v < 1:
            raise ValueError(f"{name}={v!r} is not allowed: must be in [0, 1)")
    while True:
        seqs = np.zeros((6, SEQ_LEN), np.int64)
        for p in range(3):
            middle = rng.choice(N_SYMBOLS, 3, replace=False)
            heads = rng.choice(N_SYMBOLS, 2, replace=False)
            tails = rng.choice(N_SYMBOLS, 2, replace=False)
            for i in range(2):
                seqs[2 * p + i] = [heads[i], *middle, tails[i]]
        swapped = seqs.copy()
        first = [0, 2, 4]  # one sequence of each pair: rotate their tails
        swapped[first, -1] = seqs[np.roll(first, 1), -1]
        if _valid(seqs) and _valid(swapped) and not np.array_equal(seqs, swapped):
            break
    weights = np.arange(1.0, 7.0)
    probs_a = rng.permutation(weights) / weights.sum()
    probs_b = rng.permutation(weights) / weights.sum()
    end = np.full((6, 1), END)
    return (
        SequenceProcess(np.hstack([seqs, end]), probs_a, noise, jump),
        SequenceProcess(np.hstack([swapped, end]), probs_b, noise, jump),
    )
