"""The generation cache: hits, keys, resume across processes' instances."""

import numpy as np

from iclr25.core.lm.cache import CachedLM, GenerationCache, generation_key


class Counting:
    name = "fake:count"

    def __init__(self):
        self.calls = 0

    def generate(self, prompts, max_new_tokens=32, temperature=0.0, stop=(), seed=0):
        self.calls += len(prompts)
        return [f"{p}|{max_new_tokens}|{temperature}|{seed}" for p in prompts]

    def next_token_logits(self, prompts, token_ids):
        return np.zeros((len(prompts), len(token_ids)))


def test_cache_resumes_and_keys_on_settings(tmp_path):
    path = tmp_path / "g.sqlite"
    inner = Counting()
    lm = CachedLM(inner, path)
    first = lm.generate(["a", "b", "a"], max_new_tokens=5)
    assert inner.calls == 2 and first[0] == first[2]
    again = CachedLM(Counting(), path)  # a new run over the same file
    assert again.generate(["b", "a"], max_new_tokens=5) == [first[1], first[0]]
    assert again.lm.calls == 0 and again.hits == 2
    again.generate(["a"], max_new_tokens=6)
    again.generate(["a"], max_new_tokens=5, temperature=1.0, seed=1)
    again.generate(["a"], max_new_tokens=5, temperature=1.0, seed=2)
    assert again.lm.calls == 3 and len(GenerationCache(path)) == 5
    assert again.next_token_logits(["a"], [1, 2]).shape == (1, 2)


def test_greedy_keys_ignore_the_seed():
    k = generation_key("m", "p", 5, 0.0, (), 1)
    assert k == generation_key("m", "p", 5, 0.0, (), 2)
    assert k != generation_key("m2", "p", 5, 0.0, (), 1)
    assert generation_key("m", "p", 5, 0.5, (), 1) != generation_key("m", "p", 5, 0.5, (), 2)
