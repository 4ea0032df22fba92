"""End to end on a tiny model: fine-tune until it memorises, unlearn, mix back."""

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.unlearn_eval import method as U
from iclr25.papers.unlearn_eval import metrics as M

pytestmark = needs("transformers", "tokenizers")


@pytest.fixture(scope="module")
def memorised(corpus, tokenizer):
    from iclr25.papers.unlearn_eval.models import encode_qa, tiny_causal_lm
    from iclr25.papers.unlearn_eval.training import FinetuneConfig, finetune

    items = corpus.items[:8]
    qs, ans = [q.question for q in items], [q.answer for q in items]
    enc = encode_qa(tokenizer, qs, ans)
    model = tiny_causal_lm("llama", len(tokenizer), width=32, layers=2, heads=2, seed=0)
    es0 = M.extraction_strength(model, tokenizer, qs, ans).es
    losses = finetune(model, enc, FinetuneConfig(steps=80, lr=1e-2, batch_size=8))
    return model, enc, qs, ans, es0, losses


def test_finetuning_memorises(memorised, tokenizer):
    model, _, qs, ans, es0, losses = memorised
    assert losses[-1] < 0.05 * losses[0]
    assert np.all(M.exact_memorization(model, tokenizer, qs, ans) == 1.0)
    es = M.extraction_strength(model, tokenizer, qs, ans).es
    assert es.mean() > es0.mean() + 0.3 and np.all(es0 == 0.0)


def test_es_does_not_depend_on_the_batch_size_and_its_bisection_holds(memorised, tokenizer):
    model, _, qs, ans, _, _ = memorised
    one = M.extraction_strength(model, tokenizer, qs, ans, batch_size=1)
    many = M.extraction_strength(model, tokenizer, qs, ans, batch_size=5)
    assert one.m.tolist() == many.m.tolist() and len(set(one.es)) > 1
    chk = M.es_bisection_check(model, tokenizer, qs, ans)
    assert np.all(chk.agree[chk.monotone]) and np.array_equal(chk.m_bisect, one.m)


def test_unlearning_then_mixing_back(memorised, tokenizer):
    model, enc, qs, ans, _, _ = memorised
    es_orig = M.extraction_strength(model, tokenizer, qs[:2], ans[:2]).es.mean()
    cfg = U.UnlearnConfig(steps=5, lr=1e-2, batch_size=2)
    unl = U.unlearn(model, enc.subset([0, 1]), None, "ga", cfg).model
    assert M.extraction_strength(unl, tokenizer, qs[:2], ans[:2]).es.mean() < es_orig
    back = U.mix_models(model, unl, 0.0)
    assert M.extraction_strength(back, tokenizer, qs[:2], ans[:2]).es.mean() == es_orig


def test_finetune_bad_input(tokenizer):
    from iclr25.papers.unlearn_eval.models import Encoded
    from iclr25.papers.unlearn_eval.training import FinetuneConfig, finetune

    with pytest.raises(ValueError, match=r"lr=-0\.1"):
        FinetuneConfig(lr=-0.1)
    with pytest.raises(ValueError, match="empty"):
        finetune(None, Encoded((), ()))
    with pytest.raises(TypeError, match="got list and FinetuneConfig"):
        finetune(None, [1, 2, 3])
